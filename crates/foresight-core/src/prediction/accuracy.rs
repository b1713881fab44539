//! How good the forecasts were: each forecast is compared with the history that arrives after
//! it was made, one stretch per refit, and the stretches inside a rolling window are summed.
//!
//! The shells keep an [`AccuracyTracker`] next to their forecast and call
//! [`AccuracyTracker::record`] when they refit (the controller's forecast cache, the
//! simulator's forecaster), with the history they just read: the same samples a backtest
//! would use, so the controller and the simulator measure the same way.

use std::collections::VecDeque;

use serde::Serialize;

use crate::prediction::Forecast;
use crate::trace::Sample;

/// One forecast compared with what followed it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Stretch {
    /// Timestamp of the last sample compared.
    end: i64,
    /// Samples compared.
    samples: u32,
    /// Σ |forecast − observed|.
    abs_error: f64,
    /// Σ |observed|.
    observed: f64,
    /// Σ |forecast|.
    forecast: f64,
    /// Σ |forecast − observed| / |observed| over samples with a nonzero observation.
    relative_error: f64,
    /// Samples with a nonzero observation.
    relative_samples: u32,
    /// Samples where the forecast was below the observation.
    under: u32,
    /// The largest observation.
    peak_observed: f64,
    /// The largest forecast value over the same samples.
    peak_forecast: f64,
}

/// Forecast accuracy over a window.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Accuracy {
    /// Samples compared.
    pub samples: u32,
    /// Σ|forecast − observed| / Σ|observed|, percent: the error demotion looks at (it is not
    /// blown up by near-zero observations, as a mean of ratios is).
    pub error_percent: f64,
    /// Mean of |forecast − observed| / |observed|, percent (MAPE; zero observations left out).
    pub mape_percent: f64,
    /// Share of samples where the forecast was below the observation, percent.
    pub under_forecast_percent: f64,
    /// Mean over the stretches of |forecast peak − observed peak| / observed peak, percent.
    pub peak_error_percent: f64,
    /// Σ observed / Σ forecast: how much the forecasts were too high (below 1) or too low
    /// (above 1) on the whole. The lead-time proposal discounts forecasts that ran high by it.
    pub level: f64,
}

/// The stretches of one metric inside the window.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccuracyTracker {
    stretches: VecDeque<Stretch>,
    /// The last timestamp compared: samples up to it are not compared twice.
    compared_until: Option<i64>,
}

impl AccuracyTracker {
    /// Compares `forecast` (made earlier, in use until now) with the samples of `history`
    /// that it covers, after the last ones compared and before `now`; forgets stretches
    /// that ended more than `window` seconds before `now`.
    pub fn record(&mut self, forecast: &Forecast, history: &[Sample], now: i64, window: i64) {
        let after = self
            .compared_until
            .unwrap_or(i64::MIN)
            .max(forecast.start - 1);
        let mut s = Stretch::default();
        for sample in history.iter().filter(|x| x.ts > after && x.ts < now) {
            let Some(predicted) = forecast.value_at(sample.ts) else {
                continue;
            };
            let observed = sample.value;
            if !observed.is_finite() {
                continue;
            }
            let error = (predicted - observed).abs();
            s.end = sample.ts;
            s.samples += 1;
            s.abs_error += error;
            s.observed += observed.abs();
            s.forecast += predicted.abs();
            if observed != 0.0 {
                s.relative_error += error / observed.abs();
                s.relative_samples += 1;
            }
            if predicted < observed {
                s.under += 1;
            }
            s.peak_observed = s.peak_observed.max(observed);
            s.peak_forecast = s.peak_forecast.max(predicted);
        }
        if s.samples > 0 {
            self.compared_until = Some(s.end);
            self.stretches.push_back(s);
        }
        self.expire(now, window);
    }

    /// Forgets stretches that ended more than `window` seconds before `now`. The shells call
    /// it at every refit, with or without a forecast to compare: while the predictor makes
    /// none, what was measured before ages out instead of standing still.
    pub fn expire(&mut self, now: i64, window: i64) {
        let oldest = now.saturating_sub(window);
        while self.stretches.front().is_some_and(|s| s.end < oldest) {
            self.stretches.pop_front();
        }
    }

    /// The accuracy over the stretches kept; `None` before anything was compared.
    pub fn summary(&self) -> Option<Accuracy> {
        let samples: u32 = self.stretches.iter().map(|s| s.samples).sum();
        if samples == 0 {
            return None;
        }
        let sum = |f: fn(&Stretch) -> f64| self.stretches.iter().map(f).sum::<f64>();
        let observed = sum(|s| s.observed);
        let relative_samples: u32 = self.stretches.iter().map(|s| s.relative_samples).sum();
        let under: u32 = self.stretches.iter().map(|s| s.under).sum();
        let peaks: Vec<&Stretch> = self
            .stretches
            .iter()
            .filter(|s| s.peak_observed > 0.0)
            .collect();
        let n = peaks.len().max(1) as f64;
        let forecast = sum(|s| s.forecast);
        let level = if forecast > 0.0 && observed > 0.0 {
            observed / forecast
        } else {
            1.0
        };
        Some(Accuracy {
            level,
            samples,
            error_percent: if observed > 0.0 {
                sum(|s| s.abs_error) / observed * 100.0
            } else {
                0.0
            },
            mape_percent: if relative_samples > 0 {
                sum(|s| s.relative_error) / f64::from(relative_samples) * 100.0
            } else {
                0.0
            },
            under_forecast_percent: f64::from(under) / f64::from(samples) * 100.0,
            peak_error_percent: peaks
                .iter()
                .map(|s| (s.peak_forecast - s.peak_observed).abs() / s.peak_observed)
                .sum::<f64>()
                / n
                * 100.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prediction::Algorithm;

    fn flat(value: f64, start: i64, len: usize) -> Forecast {
        Forecast {
            algorithm: Algorithm::Percentile,
            period_seconds: None,
            start,
            step: 60,
            values: vec![value; len],
            estimator: "test".into(),
        }
    }

    fn history(values: &[f64], start: i64) -> Vec<Sample> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| Sample {
                ts: start + 60 * i as i64,
                value,
            })
            .collect()
    }

    #[test]
    fn compares_each_sample_once_and_sums_over_the_window() {
        let mut t = AccuracyTracker::default();
        let f = flat(10.0, 0, 100);
        let h = history(&[10.0, 20.0, 5.0, 10.0], 0);
        t.record(&f, &h, 240, 86_400);
        let a = t.summary().unwrap();
        assert_eq!(a.samples, 4);
        // |0| + |10| + |5| + |0| over 45 observed.
        assert!((a.error_percent - 15.0 / 45.0 * 100.0).abs() < 1e-9);
        assert!((a.mape_percent - (0.0 + 0.5 + 1.0 + 0.0) / 4.0 * 100.0).abs() < 1e-9);
        assert!((a.under_forecast_percent - 25.0).abs() < 1e-9);
        // 45 observed against 40 forecast; the peak 20 against 10 is 50% off.
        assert!((a.level - 45.0 / 40.0).abs() < 1e-9);
        assert!((a.peak_error_percent - 50.0).abs() < 1e-9);
        // The same history again compares nothing new.
        t.record(&f, &h, 240, 86_400);
        assert_eq!(t.summary().unwrap().samples, 4);
        // Without a forecast to compare, what was measured still ages out.
        let mut idle = t.clone();
        idle.expire(90_000, 86_400);
        assert_eq!(idle.summary(), None);
        // A day later the stretch has left the window.
        let later = history(&[10.0], 90_000);
        t.record(&flat(10.0, 90_000, 10), &later, 90_100, 86_400);
        assert_eq!(t.summary().unwrap().samples, 1);
    }

    #[test]
    fn a_perfect_forecast_has_no_error_and_a_level_of_one() {
        let mut t = AccuracyTracker::default();
        t.record(&flat(3.0, 0, 10), &history(&[3.0; 10], 0), 600, 86_400);
        let a = t.summary().unwrap();
        assert_eq!(a.error_percent, 0.0);
        assert_eq!(a.level, 1.0);
        assert_eq!(a.under_forecast_percent, 0.0);
    }
}
