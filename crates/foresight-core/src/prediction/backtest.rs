//! Back-testing a predictor on a recorded series: refit it at regular origins on the history
//! available then, and compare what it forecast with what happened until the next refit.
//!
//! This mirrors how the controller uses a model: Crane rebuilds it every
//! `--model-update-interval` (12 h by default) and, in between, each decision asks for the
//! forecast peak over the next `predictionWindowSeconds`.

use std::collections::VecDeque;

use serde::Serialize;

use super::config::PredictorConfig;
use super::forecast::{Algorithm, Forecast, Prediction};
use super::{predict_with, Workspace};
use crate::trace::Sample;

/// How to replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BacktestOptions {
    /// Seconds between refits; the first refit is this long after the first sample.
    pub refit_secs: i64,
    /// The look-ahead of the peak comparison (`predictionWindowSeconds`).
    pub window_secs: i64,
}

/// Accuracy over a set of compared points. Every ratio is `None` when nothing was compared.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Accuracy {
    /// Actual samples that had a forecast to compare with.
    pub points: usize,
    /// Mean absolute percentage error, in percent: the mean of `|forecast − actual| / |actual|`
    /// over compared points whose actual value is not 0, times 100.
    pub mape: Option<f64>,
    /// Compared points whose actual value was 0 and so are left out of `mape`.
    pub zero_actual_points: usize,
    /// The share (0–1) of compared points where the forecast was below the actual value.
    pub under_prediction_ratio: Option<f64>,
    /// Instants at which the peaks were compared: every compared point `t` whose whole
    /// window `[t, t + window]` lies within the trace and the forecast.
    pub peak_points: usize,
    /// Mean absolute peak error, in percent: the mean of `|P̂ − P| / |P|`, where `P̂` is the
    /// forecast peak over `[t, t + window]` (what the controller scales for) and `P` the actual
    /// maximum over the same window; instants with `P = 0` are left out.
    pub peak_error: Option<f64>,
    /// Mean signed peak error `(P̂ − P) / |P|` in percent: negative when the forecast peak is
    /// too low on average.
    pub peak_bias: Option<f64>,
    /// The share (0–1) of instants where the forecast peak was below the actual peak.
    pub peak_under_prediction_ratio: Option<f64>,
}

/// One refit and how its forecast did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForecastReport {
    /// When the predictor was refitted (Unix seconds); it saw the samples up to here.
    pub origin: i64,
    /// Whether it produced a forecast.
    pub ready: bool,
    /// Why not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The period it found.
    pub period_seconds: Option<i64>,
    /// The estimator it chose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimator: Option<String>,
    /// The forecast against the samples after `origin`, up to the next refit.
    #[serde(flatten)]
    pub accuracy: Accuracy,
}

/// The whole replay.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BacktestReport {
    /// The predictor.
    pub algorithm: Algorithm,
    /// The period found at the last refit, where the most history was available (`None`
    /// when not ready there or no period).
    pub period_seconds: Option<i64>,
    /// Seconds between refits.
    pub refit_seconds: i64,
    /// The peak look-ahead in seconds.
    pub window_seconds: i64,
    /// Refits that produced a forecast.
    pub ready_forecasts: usize,
    /// Samples after a ready refit that its forecast did not cover.
    pub uncovered_points: usize,
    /// Accuracy over all refits together.
    #[serde(flatten)]
    pub accuracy: Accuracy,
    /// Each refit.
    pub forecasts: Vec<ForecastReport>,
}

/// Running sums behind an [`Accuracy`].
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    points: usize,
    ape_sum: f64,
    ape_points: usize,
    under: usize,
    peak_points: usize,
    peak_abs_sum: f64,
    peak_signed_sum: f64,
    peak_under: usize,
}

impl Sums {
    fn point(&mut self, forecast: f64, actual: f64) {
        self.points += 1;
        if forecast < actual {
            self.under += 1;
        }
        if actual != 0.0 {
            self.ape_sum += (forecast - actual).abs() / actual.abs();
            self.ape_points += 1;
        }
    }

    fn peak(&mut self, forecast: f64, actual: f64) {
        if actual == 0.0 {
            return;
        }
        let relative = (forecast - actual) / actual.abs();
        self.peak_points += 1;
        self.peak_abs_sum += relative.abs();
        self.peak_signed_sum += relative;
        if forecast < actual {
            self.peak_under += 1;
        }
    }

    fn add(&mut self, other: &Sums) {
        self.points += other.points;
        self.ape_sum += other.ape_sum;
        self.ape_points += other.ape_points;
        self.under += other.under;
        self.peak_points += other.peak_points;
        self.peak_abs_sum += other.peak_abs_sum;
        self.peak_signed_sum += other.peak_signed_sum;
        self.peak_under += other.peak_under;
    }

    fn accuracy(&self) -> Accuracy {
        let ratio = |num: f64, den: usize| (den > 0).then(|| num / den as f64);
        Accuracy {
            points: self.points,
            mape: ratio(self.ape_sum * 100.0, self.ape_points),
            zero_actual_points: self.points - self.ape_points,
            under_prediction_ratio: ratio(self.under as f64, self.points),
            peak_points: self.peak_points,
            peak_error: ratio(self.peak_abs_sum * 100.0, self.peak_points),
            peak_bias: ratio(self.peak_signed_sum * 100.0, self.peak_points),
            peak_under_prediction_ratio: ratio(self.peak_under as f64, self.peak_points),
        }
    }
}

/// Replays `samples` (sorted by time, as `parse_csv` returns them; they are sorted here
/// otherwise) with `config`: refits at `first + k·refit` for every such origin before the
/// last sample, each on the samples up to its origin, and scores each forecast against the
/// samples after its origin up to the next refit.
pub fn backtest(
    config: &PredictorConfig,
    samples: &[Sample],
    options: BacktestOptions,
) -> BacktestReport {
    let mut sorted;
    let samples = if samples.windows(2).all(|w| w[0].ts < w[1].ts) {
        samples
    } else {
        sorted = samples.to_vec();
        sorted.sort_by_key(|s| s.ts);
        sorted.dedup_by_key(|s| s.ts);
        &sorted
    };
    let refit = options.refit_secs.max(1);
    let window = options.window_secs.max(0);
    let peaks = actual_peaks(samples, window);
    let mut report = BacktestReport {
        algorithm: config.algorithm(),
        period_seconds: None,
        refit_seconds: refit,
        window_seconds: window,
        ready_forecasts: 0,
        uncovered_points: 0,
        accuracy: Accuracy::default(),
        forecasts: Vec::new(),
    };
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return report;
    };
    let mut total = Sums::default();
    let mut workspace = Workspace::default();
    let mut origin = first.ts.saturating_add(refit);
    while origin < last.ts {
        let seen = samples.partition_point(|s| s.ts <= origin);
        let until = origin.saturating_add(refit);
        let upcoming = seen..samples.partition_point(|s| s.ts <= until);
        let entry = match predict_with(&mut workspace, config, &samples[..seen], origin) {
            Prediction::NotReady { reason } => ForecastReport {
                origin,
                ready: false,
                reason: Some(reason),
                period_seconds: None,
                estimator: None,
                accuracy: Accuracy::default(),
            },
            Prediction::Ready(forecast) => {
                report.ready_forecasts += 1;
                let mut sums = Sums::default();
                for i in upcoming {
                    let actual = samples[i];
                    let Some(predicted) = forecast.value_at(actual.ts) else {
                        report.uncovered_points += 1;
                        continue;
                    };
                    sums.point(predicted, actual.value);
                    if let Some((peak, predicted_peak)) =
                        peaks[i].zip(forecast_peak(&forecast, actual.ts, window))
                    {
                        sums.peak(predicted_peak, peak);
                    }
                }
                total.add(&sums);
                ForecastReport {
                    origin,
                    ready: true,
                    reason: None,
                    period_seconds: forecast.period_seconds,
                    estimator: Some(forecast.estimator),
                    accuracy: sums.accuracy(),
                }
            }
        };
        report.period_seconds = entry.period_seconds;
        report.forecasts.push(entry);
        origin = until;
    }
    report.accuracy = total.accuracy();
    report
}

/// The forecast peak over `[t, t + window]`, when the forecast covers all of it.
fn forecast_peak(forecast: &Forecast, t: i64, window: i64) -> Option<f64> {
    let to = t.checked_add(window)?;
    if to >= forecast.end() {
        return None;
    }
    forecast.peak_in(t, to).map(|(_, v)| v)
}

/// For each sample `i`, the largest value among the samples in `[ts_i, ts_i + window]`, or
/// `None` when that window reaches past the last sample. A monotonic deque, walking
/// backwards in time, keeps this linear in the number of samples.
fn actual_peaks(samples: &[Sample], window: i64) -> Vec<Option<f64>> {
    let mut out = vec![None; samples.len()];
    let Some(last) = samples.last().map(|s| s.ts) else {
        return out;
    };
    // Indices of candidates, latest at the front; their values increase towards the front.
    let mut deque: VecDeque<usize> = VecDeque::new();
    for i in (0..samples.len()).rev() {
        while deque
            .back()
            .is_some_and(|&j| samples[j].value <= samples[i].value)
        {
            deque.pop_back();
        }
        deque.push_back(i);
        let end = samples[i].ts.saturating_add(window);
        while deque.front().is_some_and(|&j| samples[j].ts > end) {
            deque.pop_front();
        }
        if end <= last {
            out[i] = deque.front().map(|&j| samples[j].value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prediction::config::PercentileConfig;

    #[test]
    fn actual_peaks_match_a_naive_scan() {
        let values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0];
        let samples: Vec<Sample> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| Sample {
                ts: (i as i64) * 10 + (i as i64 % 3),
                value: v,
            })
            .collect();
        for window in [0, 5, 10, 25, 40, 200] {
            let got = actual_peaks(&samples, window);
            for (i, s) in samples.iter().enumerate() {
                let end = s.ts + window;
                let expected = (end <= samples[samples.len() - 1].ts).then(|| {
                    samples
                        .iter()
                        .filter(|x| x.ts >= s.ts && x.ts <= end)
                        .map(|x| x.value)
                        .fold(f64::MIN, f64::max)
                });
                assert_eq!(got[i], expected, "window {window}, i {i}");
            }
        }
    }

    #[test]
    fn scores_a_flat_forecast_by_hand() {
        // Percentile over the last 10 minutes; values alternate 10 and 30 each minute, so the
        // value-weighted median is 30 and the forecast is 30 everywhere.
        let config = PredictorConfig::Percentile(
            PercentileConfig::new(
                std::time::Duration::from_secs(60),
                std::time::Duration::from_secs(600),
                0.5,
                0.0,
                1.0,
            )
            .unwrap(),
        );
        let samples: Vec<Sample> = (0..=60)
            .map(|m| Sample {
                ts: m * 60,
                value: if m % 2 == 0 { 10.0 } else { 30.0 },
            })
            .collect();
        let report = backtest(
            &config,
            &samples,
            BacktestOptions {
                refit_secs: 1200,
                window_secs: 60,
            },
        );
        // Origins at 20, 40 min (60 min is the last sample, not before it).
        assert_eq!(report.forecasts.len(), 2);
        assert_eq!(report.ready_forecasts, 2);
        let a = &report.accuracy;
        assert_eq!(a.points, 40);
        // Half the points are 10 (error 200 %), half 30 (0 %): MAPE 100 %; never under.
        assert_eq!(a.mape, Some(100.0));
        assert_eq!(a.under_prediction_ratio, Some(0.0));
        // Every 1-minute window holds a 30: the peak is exact. The last instant's window
        // ends past the trace.
        assert_eq!(a.peak_points, 39);
        assert_eq!(
            (a.peak_error, a.peak_bias, a.peak_under_prediction_ratio),
            (Some(0.0), Some(0.0), Some(0.0))
        );
        assert_eq!(report.period_seconds, None);
    }

    #[test]
    fn reports_not_ready_refits_and_handles_empty_input() {
        let config = PredictorConfig::Dsp(crate::prediction::config::DspConfig::default());
        let samples: Vec<Sample> = (0..=120)
            .map(|m| Sample {
                ts: m * 60,
                value: 1.0,
            })
            .collect();
        let report = backtest(
            &config,
            &samples,
            BacktestOptions {
                refit_secs: 3600,
                window_secs: 600,
            },
        );
        assert_eq!(report.forecasts.len(), 1);
        assert_eq!(
            report.forecasts[0].reason.as_deref(),
            Some("history 1h < 2 periods (2d)")
        );
        assert_eq!(report.accuracy.mape, None);
        let empty = backtest(
            &config,
            &[],
            BacktestOptions {
                refit_secs: 0,
                window_secs: -1,
            },
        );
        assert!(empty.forecasts.is_empty());
    }
}
