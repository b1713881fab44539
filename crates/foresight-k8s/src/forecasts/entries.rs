//! The cache's bookkeeping: one entry per forecast, filed by autoscaler and metric, and the
//! counters `/metrics` reads.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use std::sync::Arc;

use foresight_core::autoscaler::{Autoscaler, PredictionPolicy};
use foresight_core::forecasting::HeadroomInput;
use foresight_core::objective::{Objective, OperatingPoint};
use foresight_core::prediction::conformal::{ForecastErrors, ForecastMargin};
use foresight_core::prediction::{AccuracyTracker, EvaluationInput, Forecast, PredictorConfig};
use foresight_core::trace::Sample;
use foresight_replay::evaluation::Assumptions;
use jiff::Timestamp;

use crate::autoscaler_key::AutoscalerKey;

/// Refresh counters, for `/metrics`. All only ever grow except `entries` and `in_flight`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// Refreshes started.
    pub started: u64,
    /// Refreshes that produced a forecast.
    pub succeeded: u64,
    /// Refreshes whose predictor was not ready (too little history, no period).
    pub not_ready: u64,
    /// Refreshes that failed (Prometheus error, unusable answer).
    pub failed: u64,
    /// Forecasts currently tracked.
    pub entries: u64,
    /// Refreshes running now.
    pub in_flight: u64,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) started: AtomicU64,
    pub(super) succeeded: AtomicU64,
    pub(super) not_ready: AtomicU64,
    pub(super) failed: AtomicU64,
    pub(super) in_flight: AtomicU64,
}

/// What one refresh produced.
#[derive(Clone, Debug)]
pub(super) enum Outcome {
    /// A forecast, the history it was made from (to score the previous forecast), and what
    /// was learned from that history.
    Forecast(Forecast, Vec<Sample>, Learned),
    /// No forecast, the history read (to score the previous forecast all the same), and what
    /// was learned from it.
    NotReady(String, Vec<Sample>, Learned),
    Failed(String),
}

/// What a refresh learned from the history besides the forecast: the headroom (when the spec
/// asks for it), and a new self-evaluation verdict or operating point (when one was due).
#[derive(Clone, Debug, Default)]
pub(super) struct Learned {
    pub(super) headroom: HeadroomInput,
    pub(super) evaluation: Option<EvaluationInput>,
    /// A new operating point, when one was due (with `spec.objective`).
    pub(super) operating_point: Option<OperatingPoint>,
    /// The forecast's errors with this refresh's added (with `spec.objective`).
    pub(super) errors: Option<ForecastErrors>,
    /// The margin they call for at the operating point's budget, when the point lets the
    /// forecast carry the headroom.
    pub(super) forecast_margin: Option<ForecastMargin>,
}

/// What the cache needs to learn headroom and to judge prediction for one metric: the
/// autoscaler as it was last compiled (narrowed to the metric at evaluation), and what the
/// decisions last assumed of the workload.
#[derive(Clone, Debug)]
pub(super) struct Workload {
    pub(super) autoscaler: Arc<Autoscaler>,
    pub(super) index: usize,
    pub(super) assumptions: Assumptions,
}

/// Refreshes have been failing since `since`; `error` is the latest failure.
#[derive(Clone, Debug)]
pub(super) struct Failure {
    pub(super) error: String,
    pub(super) since: Timestamp,
}

/// One tracked forecast.
#[derive(Debug)]
pub(super) struct Entry {
    /// Query, algorithm and window it was made for; a change restarts the entry.
    pub(super) fingerprint: String,
    pub(super) query: Result<String, String>,
    pub(super) predictor: PredictorConfig,
    pub(super) window_seconds: i64,
    /// The last forecast made.
    pub(super) forecast: Option<Forecast>,
    /// How the forecasts compared with the history read after them.
    pub(super) accuracy: AccuracyTracker,
    /// How far back `accuracy` looks, seconds.
    pub(super) accuracy_window: i64,
    /// Why the predictor made none on the last successful read of history.
    pub(super) not_ready: Option<String>,
    /// Set while refreshes fail.
    pub(super) failure: Option<Failure>,
    /// When the next refresh is due.
    pub(super) due: Timestamp,
    pub(super) failures: u32,
    pub(super) running: bool,
    /// Bumped on every restart, so a refresh started for an older spec is discarded.
    pub(super) generation: u64,
    /// The headroom quantile the spec asks for (`None`: no headroom).
    pub(super) headroom_quantile: Option<f64>,
    /// Whether the spec asks for self-evaluation.
    pub(super) self_evaluation: bool,
    /// The workload, once a reconcile has told (see `ForecastCache::learn_about`).
    pub(super) workload: Option<Workload>,
    /// The headroom learned at the last refresh.
    pub(super) headroom: HeadroomInput,
    /// Self-evaluation's latest verdict.
    pub(super) evaluation: EvaluationInput,
    /// `spec.objective`, compiled: the tuner replays the history for it (instead of
    /// self-evaluation).
    pub(super) objective: Option<Objective>,
    /// The operating point the tuner's latest replay chose.
    pub(super) operating_point: Option<OperatingPoint>,
    /// With `spec.objective`: the forecast's own errors over the lead stretch, learned from
    /// the history at the first refresh (as a replay learns them from the history before
    /// it) and added to at every refresh after, for the points where the forecast carries
    /// the headroom. `None` until the first refresh with an objective.
    pub(super) errors: Option<ForecastErrors>,
    /// The margin they called for at the latest refresh, when the operating point lets the
    /// forecast carry the headroom.
    pub(super) forecast_margin: Option<ForecastMargin>,
}

impl Entry {
    pub(super) fn new(
        fingerprint: String,
        query: Result<String, String>,
        predictor: PredictorConfig,
        window_seconds: i64,
        now: Timestamp,
        generation: u64,
    ) -> Self {
        Entry {
            fingerprint,
            query,
            predictor,
            window_seconds,
            forecast: None,
            accuracy: AccuracyTracker::default(),
            accuracy_window: PredictionPolicy::DEFAULT_ACCURACY_WINDOW_SECONDS,
            not_ready: None,
            failure: None,
            due: now,
            failures: 0,
            running: false,
            generation,
            headroom_quantile: None,
            self_evaluation: false,
            workload: None,
            headroom: HeadroomInput::Off,
            evaluation: EvaluationInput::Off,
            objective: None,
            operating_point: None,
            errors: None,
            forecast_margin: None,
        }
    }
}

/// The identity of a forecast: the autoscaler and the metric identifier.
pub(super) type Key = (AutoscalerKey, String);

/// The forecasts, filed by autoscaler and then by metric, so that every lookup a reconcile
/// makes costs the same however many autoscalers the controller serves.
#[derive(Default)]
pub(super) struct Entries {
    pub(super) by_autoscaler: HashMap<AutoscalerKey, HashMap<String, Entry>>,
}

impl Entries {
    pub(super) fn get(&self, autoscaler: &AutoscalerKey, id: &str) -> Option<&Entry> {
        self.by_autoscaler.get(autoscaler)?.get(id)
    }

    pub(super) fn get_mut(&mut self, autoscaler: &AutoscalerKey, id: &str) -> Option<&mut Entry> {
        self.by_autoscaler.get_mut(autoscaler)?.get_mut(id)
    }

    /// The entries of one autoscaler, created empty if it has none.
    pub(super) fn of_autoscaler(
        &mut self,
        autoscaler: &AutoscalerKey,
    ) -> &mut HashMap<String, Entry> {
        self.by_autoscaler.entry(autoscaler.clone()).or_default()
    }

    pub(super) fn any_running(&self, autoscaler: &AutoscalerKey) -> bool {
        self.by_autoscaler
            .get(autoscaler)
            .is_some_and(|m| m.values().any(|e| e.running))
    }

    pub(super) fn remove_autoscaler(&mut self, autoscaler: &AutoscalerKey) {
        self.by_autoscaler.remove(autoscaler);
    }

    pub(super) fn retain_autoscalers(&mut self, keep: &dyn Fn(&AutoscalerKey) -> bool) {
        self.by_autoscaler.retain(|k, _| keep(k));
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &Entry> {
        self.by_autoscaler.values().flat_map(HashMap::values)
    }

    pub(super) fn len(&self) -> usize {
        self.by_autoscaler.values().map(HashMap::len).sum()
    }
}
