//! Prediction: forecast a metric from its history, so that the decision can scale for the
//! peak ahead instead of the load now.
//!
//! Two predictors, both following Crane (docs/prediction.md):
//!
//! * **DSP** ([`dsp`]): finds a daily or weekly period with an FFT and an autocorrelation
//!   test, back-tests a set of estimators on the last period, and repeats the best one's
//!   estimate of one period.
//! * **Percentile** ([`percentile`]): a value-weighted percentile of the history, held flat.
//!
//! [`predict`] is pure: the history and the current time are passed in, and the same input
//! always gives the same forecast, bit for bit (the period detector's shuffles use a seeded
//! generator; on one build and CPU the FFTs are deterministic too).
//!
//! Deliberate differences from Crane, each explained where it is made: seeded shuffles
//! (`period.rs`), invalid settings rejected instead of replaced by defaults (`config.rs`),
//! full precision instead of integer truncation (the forecast keeps `f64` values; Crane's
//! metric adapter truncates to `int64`), conjugate-symmetric FFT filtering (`estimator.rs`),
//! and an exact weighted percentile instead of a histogram capped near 100 (`percentile.rs`).

pub mod accuracy;
pub mod backtest;
pub mod config;
pub mod conformal;
pub mod dsp;
pub mod estimator;
pub mod evaluation;
pub mod forecast;
pub mod headroom;
pub mod percentile;
pub mod period;
pub mod preprocess;
pub mod spectrum;

pub use accuracy::{Accuracy, AccuracyTracker};
pub use config::{ConfigError, DspConfig, PercentileConfig, PredictorConfig};
pub use evaluation::{Evaluation, EvaluationInput};
pub use forecast::{Algorithm, Forecast, Prediction};
pub use headroom::Headroom;
pub use period::Period;

use crate::trace::Sample;

/// Forecasts with `config` from `history` (samples of one metric; any order, non-finite
/// values are ignored) as of `now` (Unix seconds; samples after it are ignored).
pub fn predict(config: &PredictorConfig, history: &[Sample], now: i64) -> Prediction {
    predict_with(&mut Workspace::default(), config, history, now)
}

/// [`predict`] reusing the FFT plans kept in `workspace`. Planning the transforms for a
/// two-week series costs about as much as ten of them, so a caller that predicts again and
/// again (the controller, the backtest) keeps a workspace. The result does not depend on it.
pub fn predict_with(
    workspace: &mut Workspace,
    config: &PredictorConfig,
    history: &[Sample],
    now: i64,
) -> Prediction {
    match config {
        PredictorConfig::Dsp(c) => dsp::predict_dsp_with(c, history, now, &mut workspace.planners),
        PredictorConfig::Percentile(c) => percentile::predict_percentile(c, history, now),
    }
}

/// FFT plans kept between predictions (see [`predict_with`]).
#[derive(Default)]
pub struct Workspace {
    planners: spectrum::Planners,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Workspace")
    }
}

/// A series sampled every minute over `[from, to)`, valued by `f` (for the predictors' tests).
#[cfg(test)]
pub(crate) fn minutely(from: i64, to: i64, f: impl Fn(i64) -> f64) -> Vec<Sample> {
    (from / 60..to / 60)
        .map(|m| Sample {
            ts: m * 60,
            value: f(m * 60),
        })
        .collect()
}
