//! `spec.objective` compiled, and the operating point a replay of the recent history chose for
//! it. The shells run the replay (the simulator's tuner); the decision runs the autoscaler at
//! the chosen point and says so in status and in its explanation.

use foresight_api::objective::{ObjectiveSpec, Shortfall};
use foresight_api::status::{OperatingPointBlock, OperatingPointStatus};

use crate::autoscaler::{Autoscaler, Target};

/// `spec.objective`, compiled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Objective {
    /// The risk accepted.
    pub shortfall: Shortfall,
    /// The hottest a Utilization target may run, percent; `None`: as written.
    pub max_utilization: Option<i32>,
}

impl Objective {
    /// `None` when the spec's shortfall does not read (validation rejects it).
    pub fn compile(spec: &ObjectiveSpec) -> Option<Objective> {
        Some(Objective {
            shortfall: Shortfall::parse(&spec.shortfall).ok()?,
            max_utilization: spec.max_utilization,
        })
    }

    /// The shortfall in words: "as safe as reactive" or "short at most 1% of the time".
    pub fn describe(&self) -> String {
        match self.shortfall {
            Shortfall::AsReactive => "as safe as without prediction".to_owned(),
            Shortfall::Share(s) => format!("short at most {}% of the time", percent(s * 100.0)),
        }
    }
}

/// The knobs an operating point sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knobs {
    /// The first Utilization target, percent (the others move in proportion); `None` keeps
    /// the targets as written.
    pub utilization: Option<i32>,
    /// The headroom risk budget, percent; `None` keeps the spec's.
    pub risk_budget_percent: Option<f64>,
    /// Whether prediction (forecast and headroom) proposes.
    pub prediction: bool,
    /// With prediction: the forecast carries the headroom, sized for the load seen plus the
    /// rise it foresees plus the margin its own errors call for at this budget (percent of the lead stretches it may
    /// fall short in), at the pods' capacity, while the observed metrics propose at the
    /// point's target. `None`: learned headroom, as written.
    pub forecast_budget_percent: Option<f64>,
}

impl Knobs {
    /// "target 82% and 5% risk budget".
    pub fn describe(&self) -> String {
        let mut knobs = Vec::new();
        if let Some(u) = self.utilization {
            knobs.push(format!("target {u}%"));
        }
        if !self.prediction {
            knobs.push("no prediction".to_owned());
        } else if let Some(b) = self.forecast_budget_percent {
            knobs.push(format!(
                "the forecast carrying the headroom at a {}% budget",
                percent(b)
            ));
        } else if let Some(b) = self.risk_budget_percent {
            knobs.push(format!("{}% risk budget", percent(b)));
        }
        knobs.join(" and ")
    }

    /// The headroom quantile to learn at this point: its risk budget when prediction
    /// proposes and the spec learns headroom (`spec_quantile`), the spec's own otherwise.
    pub fn headroom_quantile(&self, spec_quantile: Option<f64>) -> Option<f64> {
        match (self.prediction, self.risk_budget_percent, spec_quantile) {
            (true, Some(b), Some(_)) if b > 0.0 && b < 100.0 => Some(1.0 - b / 100.0),
            _ => spec_quantile,
        }
    }
}

/// An operating point and the replay that chose it.
#[derive(Clone, Debug, PartialEq)]
pub struct OperatingPoint {
    /// The knobs.
    pub knobs: Knobs,
    /// When it was chosen (Unix seconds).
    pub chosen_at: i64,
    /// Seconds of history replayed.
    pub replayed_seconds: i64,
    /// Its replay: minutes under-provisioned, replica-hours.
    pub under_minutes: f64,
    /// Its replay's replica-hours.
    pub replica_hours: f64,
    /// The spec without prediction at its own targets, replayed: minutes under-provisioned.
    pub reactive_under_minutes: f64,
    /// ... and replica-hours.
    pub reactive_replica_hours: f64,
    /// Whether its replay met the objective.
    pub meets: bool,
    /// The targets as written, for the explanation (the first Utilization target).
    pub written_utilization: Option<i32>,
    /// A schedule over the day: the knobs of each of its equal blocks of hours (UTC, from
    /// midnight), in place of `knobs`; empty: `knobs` all day.
    pub blocks: Vec<Knobs>,
    /// Short minutes carried into this choice from the days since earlier points were chosen:
    /// what the objective allowed on each of those days less what the point in force was
    /// short in it (positive: unspent), added to this replay's allowance.
    pub carried_minutes: f64,
}

impl OperatingPoint {
    /// The knobs in force at `t` (Unix seconds): its block's when the point is a schedule.
    pub fn knobs_at(&self, t: i64) -> Knobs {
        self.block_at(t)
            .and_then(|b| usize::try_from(b).ok())
            .and_then(|b| self.blocks.get(b))
            .copied()
            .unwrap_or(self.knobs)
    }

    /// Which of the schedule's blocks `t` (Unix seconds) falls in; `None` without a schedule.
    pub fn block_at(&self, t: i64) -> Option<i64> {
        let n = i64::try_from(self.blocks.len()).ok().filter(|n| *n > 0)?;
        t.rem_euclid(DAY_SECONDS)
            .checked_mul(n)?
            .checked_div(DAY_SECONDS)
    }

    /// When the block after the one `t` falls in begins (Unix seconds); `None` without a
    /// schedule.
    pub fn next_block_start(&self, t: i64) -> Option<i64> {
        let n = i64::try_from(self.blocks.len()).ok().filter(|n| *n > 0)?;
        let block = self.block_at(t)?;
        // The block's end from the day's start, rounded up to the whole second.
        let end = block
            .checked_add(1)?
            .checked_mul(DAY_SECONDS)?
            .checked_add(n - 1)?
            .checked_div(n)?;
        t.div_euclid(DAY_SECONDS)
            .checked_mul(DAY_SECONDS)?
            .checked_add(end)
    }

    /// "target 82% and 5% risk budget, chosen by replay of 3 days: as safe as reactive at
    /// 75%, 11% cheaper".
    pub fn describe(&self) -> String {
        let n = self.blocks.len();
        let knobs = if n == 0 {
            self.knobs.describe()
        } else {
            let blocks: Vec<String> = self
                .blocks
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let (from, to) = (block_start_hour(i, n), block_start_hour(i + 1, n));
                    format!("{from:02}-{to:02} {}", k.describe())
                })
                .collect();
            format!("by hour of the day (UTC): {}", blocks.join(", "))
        };
        let days = self.replayed_seconds as f64 / 86_400.0;
        let reactive = match self.written_utilization {
            Some(u) => format!("reactive at {u}%"),
            None => "reactive".to_owned(),
        };
        let saving = self.saving_percent();
        let cost = if saving >= 0.0 {
            format!("{saving:.0}% cheaper")
        } else {
            format!("{:.0}% dearer", -saving)
        };
        let risk = if self.under_minutes <= self.reactive_under_minutes {
            format!(
                "short {:.0} min where {reactive} was short {:.0}",
                self.under_minutes, self.reactive_under_minutes
            )
        } else {
            format!(
                "short {:.0} min, {reactive} {:.0}",
                self.under_minutes, self.reactive_under_minutes
            )
        };
        let met = if self.meets {
            ""
        } else {
            " (no candidate met the objective: the safest runs)"
        };
        // Only a whole minute carried is worth a word.
        let carried = if self.carried_minutes >= 0.5 {
            format!(
                "; allowed {:.0} min more, unspent on earlier days",
                self.carried_minutes
            )
        } else if self.carried_minutes <= -0.5 {
            format!(
                "; allowed {:.0} min less, overspent on earlier days",
                -self.carried_minutes
            )
        } else {
            String::new()
        };
        format!(
            "{knobs}, chosen by replay of {days:.0} days: {risk}, {cost} than {reactive}{met}{carried}"
        )
    }

    /// How much cheaper than the spec without prediction its replay was, percent (negative:
    /// dearer); 0 when that replay cost nothing.
    pub fn saving_percent(&self) -> f64 {
        if self.reactive_replica_hours > 0.0 {
            (self.reactive_replica_hours - self.replica_hours) / self.reactive_replica_hours * 100.0
        } else {
            0.0
        }
    }

    /// As status shows it.
    pub fn status(&self) -> OperatingPointStatus {
        let whole = |v: f64| v.round().clamp(-1e12, 1e12) as i64;
        OperatingPointStatus {
            chosen_at: jiff::Timestamp::from_second(self.chosen_at).unwrap_or_default(),
            replayed_seconds: self.replayed_seconds,
            target_utilization: self.knobs.utilization,
            risk_budget_percent: self
                .knobs
                .risk_budget_percent
                .filter(|_| self.knobs.prediction)
                .map(percent),
            forecast_budget_percent: self
                .knobs
                .forecast_budget_percent
                .filter(|_| self.knobs.prediction)
                .map(percent),
            prediction: self.knobs.prediction,
            meets_objective: self.meets,
            under_seconds: whole(self.under_minutes * 60.0),
            replica_hours: whole(self.replica_hours),
            reactive_under_seconds: whole(self.reactive_under_minutes * 60.0),
            reactive_replica_hours: whole(self.reactive_replica_hours),
            description: self.describe(),
            carried_under_seconds: whole(self.carried_minutes * 60.0),
            blocks: self.block_statuses(),
        }
    }

    /// The schedule's blocks as status shows them (empty without one).
    fn block_statuses(&self) -> Vec<OperatingPointBlock> {
        let n = self.blocks.len();
        self.blocks
            .iter()
            .enumerate()
            .map(|(i, k)| OperatingPointBlock {
                from_hour: block_start_hour(i, n),
                target_utilization: k.utilization,
                risk_budget_percent: k.risk_budget_percent.filter(|_| k.prediction).map(percent),
                forecast_budget_percent: k
                    .forecast_budget_percent
                    .filter(|_| k.prediction)
                    .map(percent),
                prediction: k.prediction,
            })
            .collect()
    }
}

const DAY_SECONDS: i64 = 86_400;

/// The first hour of the day (UTC) of block `i` of `n` equal blocks.
fn block_start_hour(i: usize, n: usize) -> i32 {
    i32::try_from(i.saturating_mul(24) / n.max(1)).unwrap_or(0)
}

/// A budget as status writes it: `None` for none, `Some(None)` for a budget that does not
/// read (more than 0, less than 100).
fn read_budget(text: &Option<String>) -> Option<Option<f64>> {
    match text {
        Some(text) => text
            .parse::<f64>()
            .ok()
            .filter(|b| *b > 0.0 && *b < 100.0)
            .map(Some),
        None => Some(None),
    }
}

impl OperatingPoint {
    /// The point a status recorded (what a controller restarted mid-day decides at until it
    /// has replayed again); `None` when the status does not read as one. `written` is the
    /// spec's first Utilization target, for the explanation.
    pub fn from_status(s: &OperatingPointStatus, written: Option<i32>) -> Option<OperatingPoint> {
        let risk_budget_percent = read_budget(&s.risk_budget_percent)?;
        let forecast_budget_percent = read_budget(&s.forecast_budget_percent)?;
        // The blocks read back only as the equal blocks from midnight, at most one an hour, a
        // schedule has.
        let n = s.blocks.len();
        if n > 24 {
            return None;
        }
        let blocks = s
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if b.from_hour != block_start_hour(i, n) {
                    return None;
                }
                Some(Knobs {
                    utilization: b.target_utilization,
                    risk_budget_percent: read_budget(&b.risk_budget_percent)?,
                    forecast_budget_percent: read_budget(&b.forecast_budget_percent)?,
                    prediction: b.prediction,
                })
            })
            .collect::<Option<Vec<Knobs>>>()?;
        let minutes = |seconds: i64| seconds as f64 / 60.0;
        Some(OperatingPoint {
            knobs: Knobs {
                forecast_budget_percent,
                utilization: s.target_utilization,
                risk_budget_percent,
                prediction: s.prediction,
            },
            chosen_at: s.chosen_at.as_second(),
            replayed_seconds: s.replayed_seconds,
            under_minutes: minutes(s.under_seconds),
            replica_hours: s.replica_hours as f64,
            reactive_under_minutes: minutes(s.reactive_under_seconds),
            reactive_replica_hours: s.reactive_replica_hours as f64,
            meets: s.meets_objective,
            written_utilization: written,
            blocks,
            carried_minutes: minutes(s.carried_under_seconds),
        })
    }
}

/// A percentage without trailing zeros: 1, 0.5, 12.5.
fn percent(v: f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

impl Autoscaler {
    /// The first Utilization target as written.
    pub fn first_utilization(&self) -> Option<i32> {
        self.metrics.iter().find_map(|m| match m.target {
            Target::Utilization(u) => Some(u),
            _ => None,
        })
    }

    /// The hottest the first Utilization target may run under the objective (the target as
    /// written without `maxUtilization`).
    pub fn max_utilization(&self) -> Option<i32> {
        let written = self.first_utilization()?;
        Some(
            self.objective
                .and_then(|o| o.max_utilization)
                .unwrap_or(written)
                .max(1),
        )
    }

    /// This autoscaler run at `knobs`: its Utilization targets moved (in proportion to the
    /// first, never above `maxUtilization` or its own target when that is unset), the
    /// headroom's risk budget set, and self-evaluation off (the replay that chose the point
    /// judged prediction already). Whether prediction proposes is the decision's to apply;
    /// with prediction, learned headroom guards the scale-down in place of its window (see
    /// `PredictionPolicy::headroom_guards_scale_down`), as every candidate was replayed.
    pub fn at_knobs(&self, knobs: &Knobs) -> Autoscaler {
        let mut a = self.clone();
        if let (Some(u), Some(first)) = (knobs.utilization, self.first_utilization()) {
            let max = self.objective.and_then(|o| o.max_utilization);
            for m in &mut a.metrics {
                if let Target::Utilization(own) = m.target {
                    let moved = (f64::from(own) * f64::from(u) / f64::from(first.max(1))).round();
                    let cap = max.unwrap_or(own).max(1);
                    let moved = if moved.is_finite() {
                        moved.clamp(1.0, f64::from(cap)) as i32
                    } else {
                        own
                    };
                    m.target = Target::Utilization(moved);
                }
            }
        }
        if let Some(p) = a.prediction.as_mut() {
            p.self_evaluation = false;
            p.headroom_guards_scale_down = knobs.prediction;
            if let Some(b) = knobs.risk_budget_percent {
                if p.headroom_quantile.is_some() && b > 0.0 && b < 100.0 {
                    p.headroom_quantile = Some(1.0 - b / 100.0);
                }
            }
            p.forecast_error_budget = knobs
                .forecast_budget_percent
                .filter(|b| knobs.prediction && *b > 0.0 && *b < 100.0)
                .map(|b| b / 100.0);
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(prediction: bool, under: f64, hours: f64, meets: bool) -> OperatingPoint {
        OperatingPoint {
            knobs: Knobs {
                forecast_budget_percent: None,
                utilization: Some(82),
                risk_budget_percent: Some(5.0),
                prediction,
            },
            chosen_at: 1_767_225_600,
            replayed_seconds: 3 * 86_400,
            under_minutes: under,
            replica_hours: hours,
            reactive_under_minutes: 14.0,
            reactive_replica_hours: 100.0,
            meets,
            written_utilization: Some(75),
            blocks: Vec::new(),
            carried_minutes: 0.0,
        }
    }

    #[test]
    fn the_choice_reads_as_one_sentence() {
        assert_eq!(
            point(true, 12.0, 89.0, true).describe(),
            "target 82% and 5% risk budget, chosen by replay of 3 days: short 12 min where \
             reactive at 75% was short 14, 11% cheaper than reactive at 75%"
        );
        let off = point(false, 20.0, 104.0, false).describe();
        assert!(off.starts_with("target 82% and no prediction,"), "{off}");
        assert!(off.contains("4% dearer"), "{off}");
        assert!(
            off.ends_with("(no candidate met the objective: the safest runs)"),
            "{off}"
        );
    }

    #[test]
    fn minutes_carried_from_earlier_days_are_said_and_read_back_from_status() {
        let unspent = OperatingPoint {
            carried_minutes: 6.25,
            ..point(true, 18.0, 85.0, true)
        };
        assert!(
            unspent
                .describe()
                .ends_with("; allowed 6 min more, unspent on earlier days"),
            "{}",
            unspent.describe()
        );
        let status = unspent.status();
        assert_eq!(status.carried_under_seconds, 375);
        let back = OperatingPoint::from_status(&status, Some(75)).unwrap();
        assert_eq!(back.carried_minutes, 6.25);
        let owed = OperatingPoint {
            carried_minutes: -3.0,
            ..unspent
        };
        assert!(owed
            .describe()
            .ends_with("allowed 3 min less, overspent on earlier days"));
        // Nothing carried: status and the sentence are as before the carry existed.
        let none = point(true, 12.0, 89.0, true);
        assert!(!none.describe().contains("allowed"));
        let json = serde_json::to_value(none.status()).unwrap();
        assert!(json.get("carriedUnderSeconds").is_none(), "{json}");
    }

    #[test]
    fn a_point_read_back_from_status_runs_at_the_same_knobs() {
        let p = point(true, 12.0, 89.0, true);
        let back = OperatingPoint::from_status(&p.status(), Some(75)).unwrap();
        assert_eq!(back.knobs, p.knobs);
        assert_eq!(back.describe(), p.describe());
        let mut garbled = p.status();
        garbled.risk_budget_percent = Some("lots".to_owned());
        assert_eq!(OperatingPoint::from_status(&garbled, Some(75)), None);
        // A point where the forecast carries the headroom comes back as one.
        let mut carried = point(true, 12.0, 89.0, true);
        carried.knobs.risk_budget_percent = None;
        carried.knobs.forecast_budget_percent = Some(0.25);
        let status = carried.status();
        assert_eq!(status.forecast_budget_percent.as_deref(), Some("0.25"));
        let back = OperatingPoint::from_status(&status, Some(75)).unwrap();
        assert_eq!(back.knobs, carried.knobs);
        assert!(back
            .describe()
            .contains("carrying the headroom at a 0.25% budget"));
    }

    #[test]
    fn status_shows_the_budget_only_with_prediction() {
        let on = point(true, 12.0, 89.0, true).status();
        assert_eq!(on.risk_budget_percent.as_deref(), Some("5"));
        assert_eq!((on.under_seconds, on.replica_hours), (720, 89));
        assert_eq!(
            point(false, 12.0, 89.0, true).status().risk_budget_percent,
            None
        );
    }

    fn knobs(utilization: i32, budget: Option<f64>) -> Knobs {
        Knobs {
            forecast_budget_percent: None,
            utilization: Some(utilization),
            risk_budget_percent: budget,
            prediction: budget.is_some(),
        }
    }

    /// 2026-01-01T00:00:00Z.
    const MIDNIGHT: i64 = 1_767_225_600;

    #[test]
    fn a_schedule_runs_each_block_at_its_knobs_and_reads_back_from_status() {
        let (hot, reactive) = (knobs(90, Some(20.0)), knobs(75, None));
        let p = OperatingPoint {
            blocks: vec![hot, hot, reactive, reactive, hot, hot],
            ..point(true, 12.0, 89.0, true)
        };
        let at = |hours: i64, seconds: i64| p.knobs_at(MIDNIGHT + hours * 3600 + seconds);
        assert_eq!(at(1, 0), hot);
        assert_eq!(at(8, 0), reactive);
        assert_eq!(at(16, -1), reactive);
        assert_eq!(at(16, 0), hot);
        assert_eq!(at(24 + 9, 0), reactive, "every day alike");
        assert_eq!(
            p.next_block_start(MIDNIGHT + 3600),
            Some(MIDNIGHT + 4 * 3600)
        );
        assert_eq!(
            p.next_block_start(MIDNIGHT + 23 * 3600),
            Some(MIDNIGHT + 86_400)
        );
        // Without a schedule: the knobs all day, and no block begins.
        let single = point(true, 12.0, 89.0, true);
        assert_eq!(single.knobs_at(MIDNIGHT + 8 * 3600), single.knobs);
        assert_eq!(single.next_block_start(MIDNIGHT), None);
        assert!(single.status().blocks.is_empty());

        let status = p.status();
        let hours: Vec<i32> = status.blocks.iter().map(|b| b.from_hour).collect();
        assert_eq!(hours, [0, 4, 8, 12, 16, 20]);
        assert_eq!(status.blocks[0].risk_budget_percent.as_deref(), Some("20"));
        assert!(!status.blocks[2].prediction);
        assert_eq!(
            OperatingPoint::from_status(&status, Some(75)),
            Some(p.clone())
        );
        assert!(
            p.describe().starts_with(
                "by hour of the day (UTC): 00-04 target 90% and 20% risk budget, 04-08 target \
                 90% and 20% risk budget, 08-12 target 75% and no prediction, "
            ),
            "{}",
            p.describe()
        );
        // Blocks that do not start where a schedule's do do not read as one.
        let mut odd = status.clone();
        odd.blocks[1].from_hour = 5;
        assert_eq!(OperatingPoint::from_status(&odd, Some(75)), None);
        // Nor more than one an hour, nor a block whose budget does not read.
        let mut many = status.clone();
        many.blocks = (0..48)
            .map(|i| OperatingPointBlock {
                from_hour: i / 2,
                ..status.blocks[0].clone()
            })
            .collect();
        assert_eq!(OperatingPoint::from_status(&many, Some(75)), None);
        let mut garbled = status;
        garbled.blocks[3].risk_budget_percent = Some("lots".to_owned());
        assert_eq!(OperatingPoint::from_status(&garbled, Some(75)), None);
        // Far from 1970 either way, the arithmetic on times holds.
        assert_eq!(
            p.knobs_at(i64::MAX),
            p.knobs_at(i64::MAX.rem_euclid(86_400))
        );
        assert_eq!(p.next_block_start(i64::MIN), None);
        assert_eq!(p.next_block_start(i64::MAX), None);
    }
}
