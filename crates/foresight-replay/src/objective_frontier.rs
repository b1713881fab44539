//! The tuned frontier: what a policy with `spec.objective` costs at each risk it could be asked
//! for. The policy is replayed with its objective's shortfall swept (as safe as reactive, then
//! shares of the minutes from a quarter of a percent to a few percent), each replay tuning its
//! operating point from its own history as the controller would. Read beside the reactive
//! frontier, it answers the migration question both ways: at the reactive policy's risk, how
//! much less it costs; at the reactive policy's cost, how much less often it is short.

use foresight_api::objective::{ObjectiveSpec, AS_REACTIVE};
use serde::Serialize;

use crate::config::{ModelConfig, Recording};
use crate::error::SimError;
use crate::frontier::envelope;
use crate::load::LoadTrace;
use crate::parallel::{parallel_map, threads_for};
use crate::policy::Policy;
use crate::runner::{run_policy, Span};
use crate::score::Scores;
use crate::simulation::bucket_seconds;

/// The shortfalls a tuned frontier replays: the migration promise, then shares of the minutes
/// spanning what reactive policies at the usual targets run at (a fraction of a percent to a
/// few percent short).
pub const SWEPT_SHORTFALLS: [&str; 6] = [AS_REACTIVE, "0.25%", "0.5%", "1%", "2%", "4%"];

/// One replay of the policy at one shortfall.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TunedPoint {
    /// The objective's `shortfall` replayed.
    pub shortfall: String,
    /// Under-provisioned minutes.
    pub under_provisioned_minutes: f64,
    /// Replica-hours.
    pub replica_hours: f64,
}

/// A policy with an objective, replayed at every swept shortfall.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TunedFrontier {
    /// The policy.
    pub policy: String,
    /// Every replay, in the order of [`SWEPT_SHORTFALLS`].
    pub points: Vec<TunedPoint>,
}

/// The tuned frontier against the reactive policy's own point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgainstReactive {
    /// The policy.
    pub policy: String,
    /// The reactive policy's under-provisioned minutes and replica-hours.
    pub reactive_under_minutes: f64,
    /// See above.
    pub reactive_replica_hours: f64,
    /// The tuned policy's replica-hours at the reactive policy's shortfall (interpolated on
    /// its frontier); `None` when no swept objective is that safe.
    pub replica_hours_at_reactive_risk: Option<f64>,
    /// The tuned policy's under-provisioned minutes at the reactive policy's replica-hours;
    /// `None` when no swept objective is that cheap.
    pub under_minutes_at_reactive_cost: Option<f64>,
}

impl AgainstReactive {
    /// Percent fewer replica-hours at the reactive policy's risk (negative: dearer).
    pub fn cost_saving_percent(&self) -> Option<f64> {
        let hours = self.replica_hours_at_reactive_risk?;
        (self.reactive_replica_hours > 0.0)
            .then(|| (self.reactive_replica_hours - hours) / self.reactive_replica_hours * 100.0)
    }

    /// Percent fewer under-provisioned minutes at the reactive policy's cost (negative: more).
    pub fn risk_saving_percent(&self) -> Option<f64> {
        let minutes = self.under_minutes_at_reactive_cost?;
        (self.reactive_under_minutes > 0.0)
            .then(|| (self.reactive_under_minutes - minutes) / self.reactive_under_minutes * 100.0)
    }

    /// `at the reactive policy's risk: 8.1% less; at its cost: 35.0% less risk`, with what
    /// could not be reached said instead of a figure.
    pub fn sentence(&self) -> String {
        let cost = match self.cost_saving_percent() {
            Some(p) if p >= 0.0 => format!("{p:.1}% less"),
            Some(p) => format!("{:.1}% more", -p),
            None => "no swept objective is that safe".to_owned(),
        };
        let risk = match self.risk_saving_percent() {
            Some(p) if p >= 0.0 => format!("{p:.1}% less risk"),
            Some(p) => format!("{:.1}% more risk", -p),
            None if self.reactive_under_minutes <= 0.0 => {
                "the reactive policy is never short".to_owned()
            }
            None => "no swept objective is that cheap".to_owned(),
        };
        format!("at the reactive policy's risk: {cost}; at its cost: {risk}")
    }
}

impl TunedFrontier {
    /// The replays no other beats: by shortfall, each cheaper than every safer one.
    pub fn envelope(&self) -> Vec<&TunedPoint> {
        envelope(&self.points, |p| {
            (p.under_provisioned_minutes, p.replica_hours)
        })
    }

    /// Replica-hours at `under` minutes short, interpolated between the two envelope points
    /// that bracket it; the cheapest point at least as safe when `under` lies beyond the
    /// riskiest; `None` when every point is riskier.
    pub fn cost_at_risk(&self, under: f64) -> Option<f64> {
        let envelope = self.envelope();
        let (first, last) = (envelope.first()?, envelope.last()?);
        if under < first.under_provisioned_minutes {
            return None;
        }
        if under >= last.under_provisioned_minutes {
            return Some(last.replica_hours);
        }
        envelope.windows(2).find_map(|pair| {
            let (a, b) = (pair[0], pair[1]);
            (a.under_provisioned_minutes..=b.under_provisioned_minutes)
                .contains(&under)
                .then(|| {
                    let share = (under - a.under_provisioned_minutes)
                        / (b.under_provisioned_minutes - a.under_provisioned_minutes);
                    a.replica_hours + share * (b.replica_hours - a.replica_hours)
                })
        })
    }

    /// Under-provisioned minutes at `hours` replica-hours, interpolated on the envelope; the
    /// safest point no dearer when `hours` lies beyond the dearest; `None` when every point
    /// is dearer.
    pub fn risk_at_cost(&self, hours: f64) -> Option<f64> {
        let envelope = self.envelope();
        // Along the envelope cost falls as risk rises.
        let (safest, cheapest) = (envelope.first()?, envelope.last()?);
        if hours < cheapest.replica_hours {
            return None;
        }
        if hours >= safest.replica_hours {
            return Some(safest.under_provisioned_minutes);
        }
        envelope.windows(2).find_map(|pair| {
            let (a, b) = (pair[0], pair[1]);
            (b.replica_hours..=a.replica_hours)
                .contains(&hours)
                .then(|| {
                    let share = (a.replica_hours - hours) / (a.replica_hours - b.replica_hours);
                    a.under_provisioned_minutes
                        + share * (b.under_provisioned_minutes - a.under_provisioned_minutes)
                })
        })
    }

    /// This frontier against the reactive policy's own replay.
    pub fn against(&self, reactive_under: f64, reactive_hours: f64) -> AgainstReactive {
        AgainstReactive {
            policy: self.policy.clone(),
            reactive_under_minutes: reactive_under,
            reactive_replica_hours: reactive_hours,
            replica_hours_at_reactive_risk: self.cost_at_risk(reactive_under),
            under_minutes_at_reactive_cost: self.risk_at_cost(reactive_hours),
        }
    }
}

/// Replays each of `policies` that states an objective (others are passed over) at every
/// swept shortfall, in parallel. `own[i]` is `policies[i]` replayed as written: the shortfall
/// its objective already names is read from it rather than replayed again (the recording
/// changes no decision). `progress` receives decisions made.
pub fn tuned_frontiers(
    policies: &[Policy],
    own: &[&Scores],
    load: &LoadTrace,
    model: &ModelConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<TunedFrontier>, SimError> {
    let model = ModelConfig {
        recording: Recording::ScoresOnly,
        ..model.clone()
    };
    let bucket = bucket_seconds(Span::of(load));
    // Each job: the policy's index, the shortfall, and where its point comes from.
    enum Source<'a> {
        Replay(Box<Policy>),
        OwnReplay(&'a Scores),
    }
    let mut jobs = Vec::new();
    for (i, policy) in policies.iter().enumerate() {
        let Some(objective) = &policy.spec.objective else {
            continue;
        };
        for shortfall in SWEPT_SHORTFALLS {
            let source = match own.get(i) {
                Some(scores) if objective.shortfall == shortfall => Source::OwnReplay(scores),
                _ => {
                    let mut swept = policy.clone();
                    swept.spec.objective = Some(ObjectiveSpec {
                        shortfall: shortfall.to_owned(),
                        ..objective.clone()
                    });
                    Source::Replay(Box::new(swept))
                }
            };
            jobs.push((i, shortfall, source));
        }
    }
    let runs = parallel_map(&jobs, threads_for(jobs.len()), |(_, shortfall, source)| {
        let point = |scores: &Scores| TunedPoint {
            shortfall: (*shortfall).to_owned(),
            under_provisioned_minutes: scores.under_provisioned_minutes,
            replica_hours: scores.replica_hours,
        };
        match source {
            Source::Replay(policy) => {
                let autoscaler = policy.compile_as(model.kubernetes)?;
                let run = run_policy(&policy.name, &autoscaler, load, &model, bucket, progress);
                Ok::<_, SimError>(point(&run.scores))
            }
            Source::OwnReplay(scores) => Ok(point(scores)),
        }
    });
    let mut frontiers: Vec<TunedFrontier> = Vec::new();
    for ((i, _, _), run) in jobs.iter().zip(runs) {
        let point = run?;
        match frontiers.last_mut() {
            Some(f) if f.policy == policies[*i].name => f.points.push(point),
            _ => frontiers.push(TunedFrontier {
                policy: policies[*i].name.clone(),
                points: vec![point],
            }),
        }
    }
    Ok(frontiers)
}

/// Replays [`tuned_frontiers`] makes for `policies` (for a progress bar's length): every
/// swept shortfall but the one each objective already names.
pub fn tuned_runs(policies: &[Policy]) -> u64 {
    let runs: usize = policies
        .iter()
        .filter_map(|p| p.spec.objective.as_ref())
        .map(|o| {
            SWEPT_SHORTFALLS
                .iter()
                .filter(|s| **s != o.shortfall)
                .count()
        })
        .sum();
    runs as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(shortfall: &str, under: f64, hours: f64) -> TunedPoint {
        TunedPoint {
            shortfall: shortfall.to_owned(),
            under_provisioned_minutes: under,
            replica_hours: hours,
        }
    }

    fn frontier() -> TunedFrontier {
        TunedFrontier {
            policy: "tuned".to_owned(),
            points: vec![
                point("AsReactive", 100.0, 120.0),
                point("0.25%", 20.0, 200.0),
                point("0.5%", 50.0, 150.0),
                // Riskier and dearer than 0.5%: off the envelope.
                point("1%", 60.0, 160.0),
                point("2%", 200.0, 100.0),
            ],
        }
    }

    #[test]
    fn cost_at_a_risk_is_read_off_the_envelope() {
        let f = frontier();
        let shown: Vec<&str> = f.envelope().iter().map(|p| p.shortfall.as_str()).collect();
        assert_eq!(shown, ["0.25%", "0.5%", "AsReactive", "2%"]);
        // Between 0.5% (50 min, 150 h) and AsReactive (100 min, 120 h).
        assert_eq!(f.cost_at_risk(75.0), Some(135.0));
        assert_eq!(f.cost_at_risk(20.0), Some(200.0));
        assert_eq!(f.cost_at_risk(10.0), None, "nothing swept is that safe");
        assert_eq!(f.cost_at_risk(500.0), Some(100.0));
    }

    #[test]
    fn risk_at_a_cost_is_read_off_the_envelope() {
        let f = frontier();
        assert_eq!(f.risk_at_cost(135.0), Some(75.0));
        assert_eq!(f.risk_at_cost(110.0), Some(150.0));
        assert_eq!(f.risk_at_cost(90.0), None, "nothing swept is that cheap");
        assert_eq!(f.risk_at_cost(1000.0), Some(20.0));
    }

    #[test]
    fn against_reactive_says_both_ways() {
        // Reactive short 75 minutes for 150 replica-hours: the tuned policy as short costs
        // 135 (10% less); at 150 replica-hours it is short 50 minutes (a third less).
        let a = frontier().against(75.0, 150.0);
        assert!((a.cost_saving_percent().unwrap_or(f64::NAN) - 10.0).abs() < 1e-9);
        assert!((a.risk_saving_percent().unwrap_or(f64::NAN) - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(
            a.sentence(),
            "at the reactive policy's risk: 10.0% less; at its cost: 33.3% less risk"
        );
        let unreachable = frontier().against(5.0, 80.0);
        assert_eq!(
            unreachable.sentence(),
            "at the reactive policy's risk: no swept objective is that safe; at its cost: no \
             swept objective is that cheap"
        );
    }
}
