//! What `foresight recommend` decides for one workload: its autoscaler as it runs (without
//! prediction) and the same autoscaler with prediction at a few operating points (targets up
//! to `maxUtilization`), each replayed once over the whole recorded history; the recommendation is the cheapest point
//! at most as short as the current policy (`objective: {shortfall: AsReactive}`), chosen as
//! the tuner chooses (see [`crate::tuner::choose`]).
//!
//! The tuner behind `spec.objective` refits daily over a sliding replay of a few days, which
//! costs about a CPU-second per workload-day: too much for a thousand workloads. A
//! recommendation has the whole history at once, so each candidate is replayed once over all
//! of it (the predictor refitted every [`REFIT_SECONDS`], learning as it goes, as a new
//! deployment would), which is a handful of replays per workload whatever the
//! range. The replays with prediction learn from the recorded load and share its fits (one
//! [`ForecastTrack`] per workload, see [`crate::track`]): each refit is fitted once per
//! workload instead of once per candidate. Measured on the benchmark fleet's first 40
//! workloads against the replays before (`examples/recommend_fleet.rs`): a third less CPU;
//! the candidates were a little safer and dearer (+0.15% replica-hours on average), 37 rows
//! recommended the same point, and of the three others one, kept before at 67% by a quarter of
//! a minute, was not kept (`docs/cli.md` has the figures).

use foresight_core::autoscaler::Autoscaler;
use foresight_core::objective::Knobs;

use crate::config::ModelConfig;
use crate::load::LoadTrace;
use crate::runner::{run_policy, run_policy_on_track, Span};
use crate::simulation::bucket_seconds;
use crate::track::ForecastTrack;
pub use crate::tuner::at_point;
use crate::tuner::{choose, Replayed};

/// How often a recommendation's replays refit the predictor: every 8 hours of replayed time,
/// half as often as the tuner's replays ([`crate::tuner::REPLAY_REFIT_SECONDS`]; the
/// controller refits hourly, Crane every 12 hours). The refits are most of a replay with
/// prediction, and a daily or weekly forecast barely moves within hours. Measured on 16
/// synthetic 14-day workloads (`crates/foresight-sim/benches/recommend.rs`'s fleet): 28% less
/// CPU than at 4 hours; every row recommended the same target and kept or dropped prediction
/// alike, and the two rows that kept it showed a smaller saving (1.9% and 2.5% instead of 2.4%
/// and 3.5%): a staler forecast saves less, so the estimate errs low.
pub const REFIT_SECONDS: i64 = 8 * 3600;

/// The outcome of one workload's replays.
#[derive(Clone, Debug, PartialEq)]
pub struct Recommendation {
    /// The autoscaler as it runs (no prediction), over the whole history.
    pub current: Replayed,
    /// The point recommended: with prediction when that met the current shortfall for fewer
    /// replica-hours, else the current policy itself.
    pub recommended: Replayed,
    /// Every candidate replayed, the current policy first.
    pub replayed: Vec<Replayed>,
    /// Whether the recommendation predicts.
    pub prediction_kept: bool,
    /// Why prediction is kept or not, in one sentence.
    pub why: String,
}

/// Replays `predictive` (the imported autoscaler with prediction and an objective) over
/// `load`: first without prediction at the written target (the current policy), then with
/// prediction at the written target and, while that is as safe, hotter targets up to
/// `objective.maxUtilization`, found by bisection (the shortfall grows with the target);
/// recommends the cheapest point as safe as the current policy. `progress` is called with the
/// decisions of each replay as it ends.
pub fn recommend(
    predictive: &Autoscaler,
    load: &LoadTrace,
    model: &ModelConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Recommendation {
    let decisions = Span::of(load).decisions(predictive.settings.sync_period_seconds);
    // The replays with prediction fit the recorded load alike wherever they served all of
    // it: one track of fits for all of them (see `foresight_replay::track`).
    let mut track = ForecastTrack::for_autoscaler(predictive, load);
    let mut run = |knobs: Knobs| {
        let r = replay_sharing(predictive, knobs, load, model, track.as_mut());
        progress(decisions);
        r
    };
    let own = predictive.first_utilization();
    let current = run(Knobs {
        forecast_budget_percent: None,
        utilization: own,
        risk_budget_percent: None,
        prediction: false,
    });
    let predicting = |utilization| Knobs {
        forecast_budget_percent: None,
        utilization,
        risk_budget_percent: None,
        prediction: true,
    };
    let mut replayed = vec![current, run(predicting(own))];
    let meets = |r: &Replayed| r.under_minutes <= current.under_minutes + 1e-6;
    if let (Some(own), Some(max), true) = (own, predictive.max_utilization(), meets(&replayed[1])) {
        // The hottest target found as safe, and the coolest found not to be.
        let (mut safe, mut unsafe_) = (own, max.saturating_add(1));
        while unsafe_ - safe > TARGET_PRECISION {
            let mid = safe + (unsafe_ - safe) / 2;
            let r = run(predicting(Some(mid)));
            if meets(&r) {
                safe = mid;
            } else {
                unsafe_ = mid;
            }
            replayed.push(r);
        }
    }
    decide(replayed)
}

/// The bisection stops when the hottest safe target is known within this many points of
/// utilization: a replay each point finer is not worth its cost.
pub const TARGET_PRECISION: i32 = 2;

/// Chooses among `replayed` (the current policy first) at the current policy's shortfall.
fn decide(replayed: Vec<Replayed>) -> Recommendation {
    let Some(current) = replayed.first().copied() else {
        return Recommendation {
            current: empty(),
            recommended: empty(),
            replayed,
            prediction_kept: false,
            why: "nothing was replayed".to_owned(),
        };
    };
    let chosen = choose(&replayed, current.under_minutes, None).map_or(0, |(i, _)| i);
    let recommended = replayed.get(chosen).copied().unwrap_or(current);
    let why = why(&current, &recommended, &replayed);
    Recommendation {
        current,
        recommended,
        prediction_kept: recommended.knobs.prediction,
        replayed,
        why,
    }
}

fn empty() -> Replayed {
    Replayed {
        knobs: Knobs {
            forecast_budget_percent: None,
            utilization: None,
            risk_budget_percent: None,
            prediction: false,
        },
        under_minutes: 0.0,
        replica_hours: 0.0,
    }
}

/// The sentence that says why prediction is kept, or why not.
fn why(current: &Replayed, recommended: &Replayed, replayed: &[Replayed]) -> String {
    let hotter = match (recommended.knobs.utilization, current.knobs.utilization) {
        (Some(r), Some(c)) if r != c => format!(", the target at {r}% instead of {c}%"),
        _ => String::new(),
    };
    if recommended.knobs.prediction {
        let budget = recommended
            .knobs
            .risk_budget_percent
            .map_or_else(String::new, |b| format!(" at a {b}% risk budget"));
        return format!(
            "prediction{budget}{hotter} is as safe ({:.0} against {:.0} min short) for fewer replica-hours",
            recommended.under_minutes, current.under_minutes
        );
    }
    if !hotter.is_empty() {
        return format!(
            "without prediction{hotter} was as safe ({:.0} against {:.0} min short) and cheapest",
            recommended.under_minutes, current.under_minutes
        );
    }
    let predicting = replayed.iter().filter(|r| r.knobs.prediction);
    let safest = predicting.min_by(|a, b| a.under_minutes.total_cmp(&b.under_minutes));
    match safest {
        None => "no candidate with prediction could be replayed".to_owned(),
        Some(p) if p.under_minutes > current.under_minutes + 1e-6 => format!(
            "with prediction the replay was short {:.0} min, more than the {:.0} min without",
            p.under_minutes, current.under_minutes
        ),
        Some(p) => format!(
            "with prediction the replay was as safe ({:.0} against {:.0} min short) but cost \
             {:.1} replica-hours against {:.1}",
            p.under_minutes, current.under_minutes, p.replica_hours, current.replica_hours
        ),
    }
}

/// `predictive` at `knobs`, replayed over `load` as written: no objective, no
/// self-evaluation (this replay is the evaluation), prediction only when the point predicts.
pub fn replay(
    predictive: &Autoscaler,
    knobs: Knobs,
    load: &LoadTrace,
    model: &ModelConfig,
) -> Replayed {
    replay_sharing(predictive, knobs, load, model, None)
}

/// [`replay`], reading the predictor's fits from `track` (the recorded load's) when given.
fn replay_sharing(
    predictive: &Autoscaler,
    knobs: Knobs,
    load: &LoadTrace,
    model: &ModelConfig,
    track: Option<&mut ForecastTrack>,
) -> Replayed {
    let autoscaler = at_point(predictive, &knobs);
    let bucket = bucket_seconds(Span::of(load));
    let outcome = match track.filter(|_| knobs.prediction) {
        Some(track) => run_policy_on_track(
            "candidate",
            &autoscaler,
            load,
            model,
            bucket,
            track,
            &|_| {},
        ),
        None => run_policy("candidate", &autoscaler, load, model, bucket, &|_| {}),
    };
    Replayed::of(knobs, &outcome.scores)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::LoadPoint;
    use crate::policy::policies_from_manifest;
    use crate::synthetic::{generate, SyntheticConfig};

    fn predictive() -> Autoscaler {
        predictive_with("{shortfall: AsReactive}")
    }

    fn predictive_with(objective: &str) -> Autoscaler {
        let text = "apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 60
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  prediction:
    predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 1m, historyLength: 7d}}
  objective: OBJECTIVE
"
        .replace("OBJECTIVE", objective);
        policies_from_manifest(&text, "web").unwrap()[0]
            .compile()
            .unwrap()
    }

    #[test]
    fn the_recommendation_is_never_less_safe_nor_dearer_than_the_current_policy() {
        let r = recommend(&predictive(), &load(), &model(), &|_| {});
        // The current policy, then prediction at the written target (no maxUtilization: no
        // hotter one is tried).
        assert_eq!(r.replayed.len(), 2);
        assert!(!r.current.knobs.prediction);
        assert!(r.recommended.under_minutes <= r.current.under_minutes + 1e-6);
        assert!(r.recommended.replica_hours <= r.current.replica_hours + 1e-9);
        assert_eq!(r.prediction_kept, r.recommended.knobs.prediction);
        assert!(!r.why.is_empty());
    }

    #[test]
    fn hotter_targets_are_bisected_within_max_utilization() {
        let r = recommend(
            &predictive_with("{shortfall: AsReactive, maxUtilization: 90}"),
            &load(),
            &model(),
            &|_| {},
        );
        let tried: Vec<i32> = r
            .replayed
            .iter()
            .filter_map(|c| c.knobs.utilization)
            .collect();
        assert!(tried.iter().all(|u| (70..=90).contains(u)), "{tried:?}");
        // Prediction at 70%, then at most five bisection steps over 70..=90.
        assert!(r.replayed.len() <= 2 + 5, "{tried:?}");
        assert!(r.recommended.under_minutes <= r.current.under_minutes + 1e-6);
        assert!(r.recommended.replica_hours <= r.current.replica_hours + 1e-9);
    }

    fn load() -> LoadTrace {
        let points: Vec<LoadPoint> = generate(&SyntheticConfig {
            days: 4,
            ..Default::default()
        })
        .into_iter()
        .map(|p| LoadPoint {
            ts: p.ts,
            value: p.value * 20.0,
        })
        .collect();
        LoadTrace::new(points).unwrap()
    }

    fn model() -> ModelConfig {
        ModelConfig {
            recording: crate::config::Recording::ScoresOnly,
            refit_interval_seconds: REFIT_SECONDS,
            ..Default::default()
        }
    }

    #[test]
    fn without_a_safe_predictive_point_the_current_policy_stays() {
        let k = |prediction: bool, under: f64, hours: f64| Replayed {
            knobs: Knobs {
                forecast_budget_percent: None,
                utilization: Some(70),
                risk_budget_percent: prediction.then_some(1.0),
                prediction,
            },
            under_minutes: under,
            replica_hours: hours,
        };
        let r = decide(vec![k(false, 10.0, 100.0), k(true, 30.0, 80.0)]);
        assert!(!r.prediction_kept);
        assert_eq!(r.recommended, r.current);
        assert!(
            r.why.contains("short 30 min, more than the 10 min"),
            "{}",
            r.why
        );
        let r = decide(vec![k(false, 10.0, 100.0), k(true, 8.0, 90.0)]);
        assert!(r.prediction_kept);
        assert_eq!(r.recommended.replica_hours, 90.0);
    }
}
