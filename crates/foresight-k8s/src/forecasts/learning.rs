//! What a refresh learns from the history besides the forecast: the headroom of each hour of
//! the day (`foresight_core::prediction::headroom`), and once a day either self-evaluation's
//! verdict (`foresight_replay::evaluation`) or, with `spec.objective`, the operating point
//! (`foresight_replay::tuner`): the simulator's replays, the same functions `foresight simulate`
//! runs. All are CPU work; the refresh runs them on its blocking thread.

use foresight_core::autoscaler::{Autoscaler, PredictionPolicy};
use foresight_core::forecasting::HeadroomInput;
use foresight_core::objective::{Knobs, Objective, OperatingPoint};
use foresight_core::prediction::{headroom, EvaluationInput};
use foresight_core::trace::Sample;
use foresight_replay::evaluation::{evaluate, EVALUATION_INTERVAL_SECONDS};
use foresight_replay::tuner::{tune, TUNING_INTERVAL_SECONDS};

use super::entries::{Entry, Learned, Workload};

/// What one refresh should learn, taken from its entry before the history is read.
#[derive(Clone, Debug, Default)]
pub(super) struct Lesson {
    /// The headroom quantile, when the spec asks for headroom.
    quantile: Option<f64>,
    /// The workload, once a reconcile has described it.
    workload: Option<Workload>,
    /// Whether a new self-evaluation verdict is due.
    evaluate: bool,
    /// The objective, when a new operating point is due.
    tune: Option<Objective>,
    /// The point in use (kept by the tuner's hysteresis; its risk budget sets the headroom's
    /// quantile until a new one is chosen).
    point: Option<Knobs>,
}

impl Lesson {
    /// What `entry` should learn at `now`. Headroom is learned from the first refresh on (for
    /// a start-up of 60 s until a reconcile has described the workload); a verdict or an
    /// operating point needs the workload described.
    pub(super) fn for_entry(entry: &Entry, now: i64) -> Lesson {
        let due = match &entry.evaluation {
            EvaluationInput::Done(e) => now - e.at >= EVALUATION_INTERVAL_SECONDS,
            _ => true,
        };
        let point = entry.operating_point.as_ref();
        let tuning_due = point.is_none_or(|p| now - p.chosen_at >= TUNING_INTERVAL_SECONDS);
        Lesson {
            quantile: entry.headroom_quantile,
            workload: entry.workload.clone(),
            evaluate: entry.self_evaluation && due,
            tune: entry.objective.filter(|_| tuning_due),
            point: point.map(|p| p.knobs),
        }
    }

    /// Learns from `history` (samples `interval` seconds apart) at `now`.
    pub(super) fn learn(&self, history: &[Sample], interval: i64, now: i64) -> Learned {
        let operating_point = self.choose_point(history, interval, now);
        // A new point's risk budget applies at once, as it does in the simulator.
        let point = operating_point.as_ref().map(|p| p.knobs).or(self.point);
        let quantile = match point {
            Some(knobs) => knobs.headroom_quantile(self.quantile),
            None => self.quantile,
        };
        let headroom = match quantile {
            None => HeadroomInput::Off,
            Some(q) => {
                let (startup, sync) = self.workload.as_ref().map_or(
                    (PredictionPolicy::DEFAULT_STARTUP_SECONDS, 15),
                    |w| {
                        (
                            w.assumptions.startup_seconds,
                            w.autoscaler.settings.sync_period_seconds.max(1),
                        )
                    },
                );
                match headroom::learn(history, interval, (startup, startup + 2 * sync), q) {
                    Ok(h) => HeadroomInput::Ready(h),
                    Err(reason) => HeadroomInput::NotReady(reason),
                }
            }
        };
        let evaluation = match (&self.workload, self.evaluate) {
            (Some(w), true) => Some(
                match evaluate(&narrowed(w), history, interval, now, w.assumptions) {
                    Ok(e) => EvaluationInput::Done(e),
                    Err(why) => EvaluationInput::Pending(why),
                },
            ),
            _ => None,
        };
        Learned {
            headroom,
            evaluation,
            operating_point,
        }
    }

    /// A new operating point, when one is due and the history is long enough to replay
    /// (until it is, the spec runs as written, as it does in the simulator).
    fn choose_point(&self, history: &[Sample], interval: i64, now: i64) -> Option<OperatingPoint> {
        let (Some(w), Some(objective)) = (&self.workload, &self.tune) else {
            return None;
        };
        tune(
            &narrowed(w),
            objective,
            history,
            interval,
            now,
            w.assumptions,
            self.point.as_ref(),
            // The forecast cache does not learn the forecast's errors yet, so no point where
            // the forecast carries the headroom is offered (it could not run as replayed).
            false,
        )
        .ok()
    }
}

/// The autoscaler with only the metric the history is of: a replay feeds one load, and each
/// metric is judged on its own.
fn narrowed(w: &Workload) -> Autoscaler {
    let mut a = (*w.autoscaler).clone();
    if a.metrics.len() > 1 {
        if let Some(m) = a.metrics.get(w.index).cloned() {
            a.metrics = vec![m];
        }
    }
    a
}
