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
        PredictorConfig::Dsp(c) => dsp::predict_dsp_with(
            c,
            history,
            now,
            &mut workspace.planners,
            &mut workspace.period,
        ),
        PredictorConfig::Percentile(c) => percentile::predict_percentile(c, history, now),
    }
}

/// FFT plans kept between predictions (see [`predict_with`]), and, when asked for, the last
/// period search.
#[derive(Default)]
pub struct Workspace {
    planners: spectrum::Planners,
    period: PeriodMemo,
}

impl Workspace {
    /// A workspace whose DSP predictions reuse a period search for `seconds` after the
    /// prediction that made it (0: search at every prediction, as [`Workspace::default`]).
    /// The search (its shuffled spectra above all) is most of a prediction's work and a
    /// daily or weekly period does not change within hours, so a replay that refits hourly,
    /// as the controller does, can search every few hours for a fraction of the work. Only
    /// replays use it: with it, a forecast depends on when the period was last searched.
    pub fn reusing_period(seconds: i64) -> Workspace {
        Workspace {
            period: PeriodMemo {
                reuse_seconds: seconds.max(0),
                last: None,
            },
            ..Workspace::default()
        }
    }

    /// How long a period search is reused (see [`Workspace::reusing_period`]).
    pub fn period_reuse_seconds(&self) -> i64 {
        self.period.reuse_seconds
    }
}

/// The last period search and how long it may be reused (see [`Workspace::reusing_period`]).
#[derive(Default)]
pub(crate) struct PeriodMemo {
    reuse_seconds: i64,
    /// When the search was made (the prediction's `now`) and what it found.
    last: Option<(i64, period::PeriodSearch)>,
}

impl PeriodMemo {
    /// The search made at most `reuse_seconds` before `now` (and not after it), or a new one.
    pub(crate) fn search(
        &mut self,
        now: i64,
        search: impl FnOnce() -> period::PeriodSearch,
    ) -> period::PeriodSearch {
        if let Some((at, found)) = self.last {
            if now >= at && now.saturating_sub(at) < self.reuse_seconds {
                return found;
            }
        }
        let found = search();
        if self.reuse_seconds > 0 {
            self.last = Some((now, found));
        }
        found
    }
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
