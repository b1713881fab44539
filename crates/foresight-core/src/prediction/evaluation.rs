//! Self-evaluation's verdict: whether replaying the autoscaler's own recent history with
//! prediction was cheaper than without it at the same shortfall. The replay itself is the
//! replay engine's (`foresight_replay::evaluation`), run by the controller on the history it already
//! fetches and by the simulator on the history its predictor keeps; the decision only reads
//! the verdict, so prediction proposes nothing where its own replay shows a loss.

use serde::Serialize;

/// Prediction that proposes goes on while its replay saves more than this (percent).
pub const KEEP_ABOVE_PERCENT: f64 = 0.0;
/// Prediction that was off starts again once its replay saves more than this (percent): a
/// three-day replay's saving varies by ten percent and more from one day to the next on
/// workloads whose spikes do not recur, and a verdict that only just favours prediction is as
/// likely noise as not (docs/prediction.md, "Self-evaluation").
pub const START_ABOVE_PERCENT: f64 = 10.0;

/// What a replay of the recent history showed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evaluation {
    /// When it was made (Unix seconds).
    pub at: i64,
    /// Seconds of history replayed (after the part the predictor learned from).
    pub replayed_seconds: i64,
    /// With prediction: under-provisioned seconds over the replay.
    pub predictive_under_seconds: f64,
    /// With prediction: replica-hours over the replay.
    pub predictive_replica_hours: f64,
    /// Without prediction, at the target: under-provisioned seconds.
    pub reactive_under_seconds: f64,
    /// Without prediction, at the target: replica-hours.
    pub reactive_replica_hours: f64,
    /// Without prediction, at the target that is exactly as short as prediction was:
    /// replica-hours (interpolated along the reactive frontier).
    pub equal_shortfall_replica_hours: f64,
}

impl Evaluation {
    /// Prediction's saving at equal shortfall, percent of the reactive cost (negative: a
    /// loss).
    pub fn saving_percent(&self) -> f64 {
        if self.equal_shortfall_replica_hours > 0.0 {
            (self.equal_shortfall_replica_hours - self.predictive_replica_hours)
                / self.equal_shortfall_replica_hours
                * 100.0
        } else {
            0.0
        }
    }

    /// Whether prediction is kept, given whether the previous verdict kept it: it saved at
    /// equal shortfall, by more than [`START_ABOVE_PERCENT`] to start proposing again and by
    /// more than [`KEEP_ABOVE_PERCENT`] to go on. A replay where neither was ever short and
    /// prediction cost more shows no saving, so a workload whose recent history held no risk
    /// runs on its observed metrics.
    pub fn keeps_prediction(&self, was_kept: bool) -> bool {
        let above = if was_kept {
            KEEP_ABOVE_PERCENT
        } else {
            START_ABOVE_PERCENT
        };
        self.saving_percent() > above
    }

    /// The figures in words, for the condition and the explanation.
    pub fn describe(&self) -> String {
        format!(
            "replaying the last {} with prediction: {:.1} min short for {:.1} replica-h; \
             without, as short: {:.1} replica-h ({:+.1}%)",
            foresight_api::duration::format_duration(std::time::Duration::from_secs(
                self.replayed_seconds.max(0).unsigned_abs()
            )),
            self.predictive_under_seconds / 60.0,
            self.predictive_replica_hours,
            self.equal_shortfall_replica_hours,
            self.saving_percent()
        )
    }
}

/// What self-evaluation offers the decision for one metric.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum EvaluationInput {
    /// Self-evaluation is off (or prediction is): prediction proposes without one.
    #[default]
    Off,
    /// No verdict yet, and why (too little history to replay).
    Pending(String),
    /// The latest verdict.
    Done(Evaluation),
}
