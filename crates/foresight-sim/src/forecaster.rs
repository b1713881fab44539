//! Prediction in the simulation: the history a controller would query (the workload's total
//! served load, one sample per predictor interval) and a predictor refitted on it every
//! refit interval of simulated time, handing the decision its forecast.

use std::collections::VecDeque;

use foresight_core::autoscaler::Autoscaler;
use foresight_core::decision::Observation;
use foresight_core::forecasting::ForecastInput;
use foresight_core::prediction::{predict, Forecast, Prediction, PredictorConfig};
use foresight_core::trace::Sample;

use crate::config::ModelConfig;
use crate::meter::Meter;

/// The predictor's settings for `autoscaler`, when prediction is on: `Ok(None)` when it is
/// off, `Err` with the reason when its settings cannot be used.
pub fn predictor_config(autoscaler: &Autoscaler) -> Result<Option<PredictorConfig>, String> {
    if autoscaler.prediction_window_seconds.is_none() {
        return Ok(None);
    }
    let Some(algorithm) = autoscaler
        .spec
        .prediction
        .as_ref()
        .and_then(|p| p.prediction_algorithm.as_ref())
    else {
        return Ok(None);
    };
    PredictorConfig::from_spec(algorithm)
        .map(Some)
        .map_err(|e| format!("spec.prediction.{e}"))
}

/// Keeps the metric's history and refits the predictor.
#[derive(Clone, Debug)]
pub struct Forecaster {
    config: Result<PredictorConfig, String>,
    interval: i64,
    history_seconds: i64,
    window: i64,
    refit_every: i64,
    next_refit: i64,
    metrics: usize,
    history: VecDeque<Sample>,
    last_boundary: Option<(i64, f64)>,
    forecast: Option<Forecast>,
}

impl Forecaster {
    /// A forecaster for `autoscaler`, or `None` when its prediction is off.
    pub fn for_autoscaler(autoscaler: &Autoscaler, model: &ModelConfig) -> Option<Forecaster> {
        let window = autoscaler.prediction_window_seconds?;
        let config = match predictor_config(autoscaler) {
            Ok(None) => return None,
            Ok(Some(c)) => Ok(c),
            Err(e) => Err(e),
        };
        let (interval, history_seconds) = match &config {
            Ok(c) => (c.interval_secs().max(1), c.history_secs().max(1)),
            Err(_) => (60, 86_400),
        };
        Some(Forecaster {
            config,
            interval,
            history_seconds,
            window,
            refit_every: model.refit_interval_seconds.max(1),
            next_refit: i64::MIN,
            metrics: autoscaler.metrics.len(),
            history: VecDeque::new(),
            last_boundary: None,
            forecast: None,
        })
    }

    /// The predictor's sample interval, seconds.
    pub fn interval_seconds(&self) -> i64 {
        self.interval
    }

    /// The forecast in use, if any.
    pub fn forecast(&self) -> Option<&Forecast> {
        self.forecast.as_ref()
    }

    /// Records a history sample when `now` closes a sample interval: the average total
    /// served load over it, stamped at its start (as a trace's value holds from its stamp).
    pub fn observe(&mut self, now: i64, meter: &Meter) {
        if now.rem_euclid(self.interval) != 0 {
            return;
        }
        let served = meter.now.served;
        if let Some((from, before)) = self.last_boundary {
            if now > from {
                self.history.push_back(Sample {
                    ts: from,
                    value: (served - before) / (now - from) as f64,
                });
            }
        }
        self.last_boundary = Some((now, served));
        let oldest = now - self.history_seconds - self.interval;
        while self.history.front().is_some_and(|s| s.ts < oldest) {
            self.history.pop_front();
        }
    }

    /// Refits when a refit is due at `now`, and hands the result to the decision through
    /// `observation.forecasts`. Returns the new forecast's peak inside the prediction
    /// window (Unix seconds, load units), when there is one.
    pub fn refit_if_due(&mut self, now: i64, observation: &mut Observation) -> Option<(i64, f64)> {
        if now < self.next_refit {
            return None;
        }
        self.next_refit = now.saturating_add(self.refit_every);
        let input = match &self.config {
            Err(e) => {
                self.forecast = None;
                ForecastInput::Failed(e.clone())
            }
            Ok(config) => match predict(config, self.history.make_contiguous(), now) {
                Prediction::Ready(f) => {
                    self.forecast = Some(f.clone());
                    ForecastInput::Ready(f)
                }
                Prediction::NotReady { reason } => {
                    self.forecast = None;
                    ForecastInput::NotReady(reason)
                }
            },
        };
        observation.forecasts = vec![input; self.metrics];
        self.forecast
            .as_ref()
            .and_then(|f| f.peak_in(now, now.saturating_add(self.window)))
    }
}
