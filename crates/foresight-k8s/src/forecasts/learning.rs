//! What a refresh learns from the history besides the forecast: the headroom of each hour of
//! the day (`foresight_core::prediction::headroom`), and once a day self-evaluation's verdict
//! (`foresight_sim::evaluation`, the simulator's replay: the same function `foresight
//! simulate` runs). Both are CPU work; the refresh runs them on its blocking thread.

use foresight_core::autoscaler::{Autoscaler, PredictionPolicy};
use foresight_core::forecasting::HeadroomInput;
use foresight_core::prediction::{headroom, EvaluationInput};
use foresight_core::trace::Sample;
use foresight_sim::evaluation::{evaluate, EVALUATION_INTERVAL_SECONDS};

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
}

impl Lesson {
    /// What `entry` should learn at `now`. Headroom is learned from the first refresh on (for
    /// a start-up of 60 s until a reconcile has described the workload); a verdict needs the
    /// workload described.
    pub(super) fn for_entry(entry: &Entry, now: i64) -> Lesson {
        let due = match &entry.evaluation {
            EvaluationInput::Done(e) => now - e.at >= EVALUATION_INTERVAL_SECONDS,
            _ => true,
        };
        Lesson {
            quantile: entry.headroom_quantile,
            workload: entry.workload.clone(),
            evaluate: entry.self_evaluation && due,
        }
    }

    /// Learns from `history` (samples `interval` seconds apart) at `now`.
    pub(super) fn learn(&self, history: &[Sample], interval: i64, now: i64) -> Learned {
        let headroom = match self.quantile {
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
        }
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
