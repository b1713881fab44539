//! Predictors as the forecast cache drives them: how much history each wants, and the
//! forecast from it.

use std::time::Duration;

use foresight_core::prediction::{predict, Prediction, PredictorConfig};
use foresight_core::trace::Sample;
use jiff::Timestamp;

use crate::prometheus::Point;

/// How much history a predictor wants, at which spacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryWindow {
    /// How far back.
    pub length: Duration,
    /// The spacing of the samples (the range query's step); whole seconds, at least 1s.
    pub step: Duration,
}

/// A forecasting algorithm as the cache drives it. The controller uses [`CorePredictor`];
/// tests may supply their own.
pub trait Predictor: Send + Sync + 'static {
    /// The history `predictor` needs.
    fn history(&self, predictor: &PredictorConfig) -> HistoryWindow;
    /// The forecast from `history` (time-ordered, finite, in the metric's unit) made at
    /// `now`. CPU-heavy: the cache runs it on a blocking thread.
    fn predict(&self, predictor: &PredictorConfig, history: &[Point], now: Timestamp)
        -> Prediction;
}

/// Prometheus points as the core's samples.
pub(super) fn samples(points: &[Point]) -> Vec<Sample> {
    points
        .iter()
        .map(|p| Sample {
            ts: p.ts,
            value: p.value,
        })
        .collect()
}

/// The predictors of `foresight-core` (DSP and percentile), as the compiled spec configures
/// them: what the controller runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct CorePredictor;

impl Predictor for CorePredictor {
    fn history(&self, predictor: &PredictorConfig) -> HistoryWindow {
        let seconds = |s: i64| Duration::from_secs(u64::try_from(s).unwrap_or(0));
        HistoryWindow {
            length: seconds(predictor.history_to_read_secs()),
            step: seconds(predictor.interval_secs().max(1)),
        }
    }

    fn predict(
        &self,
        predictor: &PredictorConfig,
        history: &[Point],
        now: Timestamp,
    ) -> Prediction {
        predict(predictor, &samples(history), now.as_second())
    }
}
