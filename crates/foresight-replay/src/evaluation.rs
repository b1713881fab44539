//! Self-evaluation: before prediction proposes, the autoscaler replays its own recent history
//! through the core, with prediction and without, in the modelled cluster, and keeps
//! prediction only where the replay was cheaper at equal shortfall. This is model selection
//! by simulated cost on past data (what Google's Autopilot does for its recommenders), run by
//! the controller on the history it already fetches for its forecasts and by the simulator on
//! the history its predictor keeps: the same function in both.
//!
//! The history is split in two: the predictor and the headroom learn from the older part
//! (at least a day), and the newer part (one to three days) is replayed. Without prediction,
//! the reactive policy is walked along its frontier (its targets lowered or raised) to the
//! target that is exactly as short as prediction was, and the two costs are compared there.

use foresight_core::autoscaler::{Autoscaler, MetricSource, Target};
use foresight_core::pods::{pod_requests, Pod};
use foresight_core::prediction::Evaluation;
use foresight_core::resources::ResourceName;
use foresight_core::trace::Sample;
use foresight_core::version::KubernetesVersion;

use crate::config::{ModelConfig, Recording};
use crate::error::SimError;
use crate::frontier::{own_level, Frontier, FrontierPoint, LevelKind, Sweep};
use crate::load::{LoadPoint, LoadTrace};
use crate::runner::{run_policy_after, Span};
use crate::simulation::bucket_seconds;

/// History the predictor learns from before the replayed part, at least.
pub const MIN_TRAINING_SECONDS: i64 = 86_400;
/// The shortest replay worth judging by.
pub const MIN_REPLAY_SECONDS: i64 = 86_400;
/// The longest replay: three days judge as well as more, for less work.
pub const MAX_REPLAY_SECONDS: i64 = 3 * 86_400;
/// In a replay of usage recorded while prediction was off, pods at this share of their
/// capacity count as short: the usage cannot show more than they served, so the load held at
/// capacity is the only trace a shortfall left (without it, such a replay would never see the
/// spikes prediction could have met, and off would stay off). History recorded while
/// prediction proposed is not capped that way, and counting saturation there would flatter
/// prediction: only load above capacity counts.
pub const SATURATED: f64 = 0.99;
/// How often a verdict is renewed.
pub const EVALUATION_INTERVAL_SECONDS: i64 = 86_400;

/// What the replay assumes of the workload: what the autoscaler can know of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Assumptions {
    /// The start-up time the decisions use (measured from the pods, or the spec's).
    pub startup_seconds: i64,
    /// The pods' average CPU request, millicores (1000 when they request none).
    pub pod_cpu_request_millicores: i64,
    /// Whether prediction proposed while the history was recorded (the latest verdict kept
    /// it). If not, the recorded usage stops at what the pods could serve wherever they
    /// saturated, and the replay counts saturation as short (see [`SATURATED`]).
    pub prediction_proposed: bool,
}

impl Assumptions {
    /// What `pods` show, with the decisions' start-up time, and whether prediction proposed.
    pub fn from_pods(pods: &[Pod], startup_seconds: i64, prediction_proposed: bool) -> Assumptions {
        let request = pod_requests(pods, &ResourceName::Cpu, None, KubernetesVersion::default())
            .ok()
            .map(|r| r.into_iter().filter(|r| *r > 0).collect::<Vec<i64>>())
            .filter(|r| !r.is_empty())
            .map_or(1000, |r| r.iter().sum::<i64>() / r.len() as i64);
        Assumptions {
            startup_seconds: startup_seconds.clamp(0, 7 * 86_400),
            pod_cpu_request_millicores: request.clamp(1, 1_000_000_000),
            prediction_proposed,
        }
    }

    /// The model the replay runs in: pods that start in the decisions' start-up time and
    /// carry their request (a Utilization target) or the target (a value target), metrics
    /// scraped as metrics-server does, the predictor refitted hourly as the controller does.
    pub fn model(&self, autoscaler: &Autoscaler) -> ModelConfig {
        let request = self.pod_cpu_request_millicores;
        let capacity = match autoscaler.metrics.first().map(|m| (&m.source, m.target)) {
            Some((_, Target::AverageValue(t))) if t > 0 => t as f64 / 1000.0,
            Some((MetricSource::Resource { .. }, _)) | None => request as f64 / 1000.0,
            Some((_, Target::Value(t))) if t > 0 => t as f64 / 1000.0,
            _ => request as f64 / 1000.0,
        };
        ModelConfig {
            startup_delay_seconds: self.startup_seconds,
            pod_cpu_request_millicores: request,
            pod_capacity: capacity,
            recording: Recording::ScoresOnly,
            short_from_share: if self.prediction_proposed {
                1.0
            } else {
                SATURATED
            },
            ..ModelConfig::default()
        }
    }
}

/// How much of `covered` seconds of history is replayed: half of what is left after a day
/// of training, in whole days, between one and three.
pub(crate) fn replay_seconds(covered: i64) -> i64 {
    let half = (covered - MIN_TRAINING_SECONDS) / 2;
    (half - half.rem_euclid(86_400)).clamp(MIN_REPLAY_SECONDS, MAX_REPLAY_SECONDS)
}

/// `autoscaler` with every metric's target at `level` (given its own is at `own`).
fn at_level(autoscaler: &Autoscaler, level: u32, own: u32) -> Autoscaler {
    let factor = f64::from(level) / f64::from(own.max(1));
    let mut a = autoscaler.clone();
    for m in &mut a.metrics {
        m.target = match m.target {
            Target::Utilization(u) => {
                Target::Utilization(((f64::from(u) * factor).round() as i32).clamp(1, i32::MAX))
            }
            Target::AverageValue(v) => {
                Target::AverageValue(((v as f64 * factor).round() as i64).max(1))
            }
            Target::Value(v) => Target::Value(((v as f64 * factor).round() as i64).max(1)),
            other => other,
        };
    }
    a
}

/// Replays the newer part of `history` (samples `interval` seconds apart, the metric's load)
/// with `autoscaler`'s prediction and without, and judges prediction at equal shortfall.
/// `Err` says why there is no verdict yet (too little history).
pub fn evaluate(
    autoscaler: &Autoscaler,
    history: &[Sample],
    interval: i64,
    now: i64,
    assumptions: Assumptions,
) -> Result<Evaluation, String> {
    let (Some(first), Some(last)) = (history.first(), history.last()) else {
        return Err("no history to replay".to_owned());
    };
    let covered = last.ts.saturating_add(interval).saturating_sub(first.ts);
    let needed = MIN_TRAINING_SECONDS + MIN_REPLAY_SECONDS;
    if covered < needed {
        return Err(format!(
            "replaying needs {} of history, {} so far",
            days(needed),
            days(covered)
        ));
    }
    let replayed = replay_seconds(covered);
    let (training, load) = split_for_replay(history, last.ts, interval, replayed)?;
    let judged = judge(autoscaler, training, &load, assumptions).map_err(|e| e.to_string())?;
    Ok(Evaluation {
        at: now,
        replayed_seconds: replayed,
        ..judged
    })
}

/// The replays and the verdict's figures (its `at` and `replayed_seconds` left at 0).
fn judge(
    autoscaler: &Autoscaler,
    training: &[Sample],
    load: &LoadTrace,
    assumptions: Assumptions,
) -> Result<Evaluation, SimError> {
    let model = assumptions.model(autoscaler);
    let bucket = bucket_seconds(Span::of(load));
    let quiet = |_| {};
    let mut predictive = autoscaler.clone();
    if let Some(p) = predictive.prediction.as_mut() {
        // The replay judges prediction; it must not judge itself again.
        p.self_evaluation = false;
    }
    let with = run_policy_after(
        "predictive",
        &predictive,
        load,
        &model,
        bucket,
        training,
        &quiet,
    )
    .scores;
    let mut reactive = autoscaler.clone();
    reactive.prediction = None;
    let (kind, own) = own_level(&reactive);
    let (step, range) = match kind {
        LevelKind::Utilization => (5, 1..=100),
        LevelKind::ShareOfTarget => (10, 10..=200),
    };
    let mut sweep = Sweep::new(own, |level| {
        let scores = run_policy_after(
            "reactive",
            &at_level(&reactive, level, own),
            load,
            &model,
            bucket,
            &[],
            &quiet,
        )
        .scores;
        Ok(FrontierPoint {
            level,
            target: level.to_string(),
            under_provisioned_minutes: scores.under_provisioned_minutes,
            replica_hours: scores.replica_hours,
        })
    });
    sweep.walk(with.under_provisioned_minutes, step, range)?;
    let frontier = Frontier {
        baseline: "reactive".to_owned(),
        level_kind: kind,
        baseline_level: own,
        points: sweep.into_points(),
    };
    let own_point = frontier
        .points
        .iter()
        .find(|p| p.level == own)
        .cloned()
        .unwrap_or(FrontierPoint {
            level: own,
            target: String::new(),
            under_provisioned_minutes: 0.0,
            replica_hours: 0.0,
        });
    let equal = frontier.judge(&with);
    Ok(Evaluation {
        at: 0,
        replayed_seconds: 0,
        predictive_under_seconds: with.under_provisioned_minutes * 60.0,
        predictive_replica_hours: with.replica_hours,
        reactive_under_seconds: own_point.under_provisioned_minutes * 60.0,
        reactive_replica_hours: own_point.replica_hours,
        equal_shortfall_replica_hours: equal.reactive_replica_hours,
    })
}

fn days(seconds: i64) -> String {
    foresight_api::duration::format_duration(std::time::Duration::from_secs(
        seconds.max(0).unsigned_abs(),
    ))
}

/// The history split where its last `replayed` seconds begin: the older part to train on, and
/// the newer part as the load to replay (samples that are not finite and non-negative left out).
/// Self-evaluation and the objective's tuner split alike.
pub(crate) fn split_for_replay(
    history: &[Sample],
    last_ts: i64,
    interval: i64,
    replayed: i64,
) -> Result<(&[Sample], LoadTrace), String> {
    let cut = last_ts.saturating_add(interval).saturating_sub(replayed);
    let (training, replay) = history.split_at(history.partition_point(|s| s.ts < cut));
    let load = LoadTrace::new(
        replay
            .iter()
            .filter(|s| s.value.is_finite() && s.value >= 0.0)
            .map(|s| LoadPoint {
                ts: s.ts,
                value: s.value,
            })
            .collect(),
    )
    .map_err(|e| format!("the history cannot be replayed: {e}"))?;
    Ok((training, load))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::policies_from_manifest;

    fn autoscaler() -> Autoscaler {
        let text = "apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 40
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 75}}
  prediction:
    predictionAlgorithm: {algorithmType: dsp, dsp: {sampleInterval: 1m, historyLength: 7d}}
";
        policies_from_manifest(text, "web").unwrap()[0]
            .compile()
            .unwrap()
    }

    /// `days` of minutes at 4 cores; with `bursts`, every day from 10:00 to 10:30 UTC a
    /// minute at 8.5 cores every five minutes.
    fn history(days: i64, bursts: bool) -> Vec<Sample> {
        (0..days * 1440)
            .map(|m| {
                let minute = m % 1440;
                let burst = bursts && (600..630).contains(&minute) && minute % 5 == 0;
                Sample {
                    ts: m * 60,
                    value: if burst { 8.5 } else { 4.0 },
                }
            })
            .collect()
    }

    fn assumptions() -> Assumptions {
        Assumptions {
            startup_seconds: 60,
            pod_cpu_request_millicores: 1000,
            prediction_proposed: true,
        }
    }

    #[test]
    fn bursts_at_a_known_hour_are_met_cheaper_with_prediction() {
        let e = evaluate(
            &autoscaler(),
            &history(7, true),
            60,
            7 * 86_400,
            assumptions(),
        )
        .unwrap();
        assert_eq!(e.replayed_seconds, 3 * 86_400);
        assert!(e.reactive_under_seconds > 0.0, "{e:?}");
        assert!(
            e.predictive_under_seconds < e.reactive_under_seconds,
            "{e:?}"
        );
        assert!(e.keeps_prediction(false), "{}", e.describe());
    }

    #[test]
    fn a_calm_history_keeps_prediction_off() {
        let e = evaluate(
            &autoscaler(),
            &history(4, false),
            60,
            4 * 86_400,
            assumptions(),
        )
        .unwrap();
        assert_eq!(e.reactive_under_seconds, 0.0);
        assert!(!e.keeps_prediction(true), "{}", e.describe());
    }

    #[test]
    fn too_little_history_says_how_much_is_needed() {
        let err =
            evaluate(&autoscaler(), &history(1, true), 60, 86_400, assumptions()).unwrap_err();
        assert!(
            err.contains("replaying needs 2d of history, 1d so far"),
            "{err}"
        );
    }

    #[test]
    fn replays_half_of_what_a_day_of_training_leaves_in_whole_days() {
        assert_eq!(replay_seconds(2 * 86_400), 86_400);
        assert_eq!(replay_seconds(3 * 86_400), 86_400);
        assert_eq!(replay_seconds(5 * 86_400), 2 * 86_400);
        assert_eq!(replay_seconds(15 * 86_400), 3 * 86_400);
    }
}
