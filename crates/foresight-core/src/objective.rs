//! `spec.objective` compiled, and the operating point a replay of the recent history chose for
//! it. The shells run the replay (the simulator's tuner); the decision runs the autoscaler at
//! the chosen point and says so in status and in its explanation.

use foresight_api::objective::{ObjectiveSpec, Shortfall};
use foresight_api::status::OperatingPointStatus;

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
}

impl OperatingPoint {
    /// "target 82% and 5% risk budget, chosen by replay of 3 days: as safe as reactive at
    /// 75%, 11% cheaper".
    pub fn describe(&self) -> String {
        let mut knobs = Vec::new();
        if let Some(u) = self.knobs.utilization {
            knobs.push(format!("target {u}%"));
        }
        if !self.knobs.prediction {
            knobs.push("no prediction".to_owned());
        } else if let Some(b) = self.knobs.forecast_budget_percent {
            knobs.push(format!(
                "the forecast carrying the headroom at a {}% budget",
                percent(b)
            ));
        } else if let Some(b) = self.knobs.risk_budget_percent {
            knobs.push(format!("{}% risk budget", percent(b)));
        }
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
        format!(
            "{}, chosen by replay of {days:.0} days: {risk}, {cost} than {reactive}{met}",
            knobs.join(" and ")
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
        }
    }
}

impl OperatingPoint {
    /// The point a status recorded (what a controller restarted mid-day decides at until it
    /// has replayed again); `None` when the status does not read as one. `written` is the
    /// spec's first Utilization target, for the explanation.
    pub fn from_status(s: &OperatingPointStatus, written: Option<i32>) -> Option<OperatingPoint> {
        let budget = |text: &Option<String>| match text {
            Some(text) => text
                .parse::<f64>()
                .ok()
                .filter(|b| *b > 0.0 && *b < 100.0)
                .map(Some),
            None => Some(None),
        };
        let risk_budget_percent = budget(&s.risk_budget_percent)?;
        let forecast_budget_percent = budget(&s.forecast_budget_percent)?;
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
}
