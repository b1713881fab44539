//! The percentile predictor (docs/prediction.md, "The percentile predictor"): a value-weighted percentile
//! of the history, times `(1 + margin) / targetUtilization`, held flat.
//!
//! Deliberate difference from Crane: Crane (through VPA's histogram) sorts values into a
//! fixed linear histogram of 0.1-wide buckets up to 100, puts everything above 100 into the
//! last bucket, and answers with the upper bound of the bucket where the cumulative weight
//! reaches the percentile. Its default therefore caps every forecast near 100, which is
//! useless for millicores, bytes or request rates. Having the whole history at hand, this
//! predictor computes the weighted percentile exactly instead — a histogram with one bucket
//! per distinct value, so it works in any unit and range. For data in `[0, 99.9)` Crane's
//! answer is ours rounded up to the next multiple of 0.1 (the upper bound of the bucket
//! holding our value).

use foresight_api::duration::format_duration;

use super::config::{PercentileConfig, MIN_SAMPLE_WEIGHT};
use super::forecast::{Algorithm, Forecast, Prediction};
use super::preprocess::resample;
use crate::trace::Sample;

/// The shortest horizon of a percentile forecast: two days, as the shortest DSP forecast
/// (two daily periods), so that a model refitted every 12 h always covers the window ahead.
/// Crane emits the constant for whatever range is asked; a forecast here is a finite series.
pub const FLAT_FORECAST_MIN_SECS: i64 = 2 * 86_400;

/// The smallest value `v` of `values` such that the samples at or below `v` carry at least
/// `q` of the total weight, each sample weighing `max(MIN_SAMPLE_WEIGHT, value)` as VPA
/// weighs CPU samples. `None` for no values, a `q` outside [0, 1], or non-finite values.
pub fn weighted_percentile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=1.0).contains(&q) || !values.iter().all(|v| v.is_finite()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let weight = |v: f64| v.max(MIN_SAMPLE_WEIGHT);
    let total: f64 = sorted.iter().map(|&v| weight(v)).sum();
    let threshold = q * total;
    let mut cumulative = 0.0;
    for &v in &sorted {
        cumulative += weight(v);
        if cumulative >= threshold {
            return Some(v);
        }
    }
    // Only reachable if rounding left the sum below q × total.
    sorted.last().copied()
}

/// Predicts with the percentile predictor from the samples in `history` up to `now`.
///
/// The history is sampled onto the grid of the last `historyLength` ending at `now` truncated
/// to the interval; ready when the samples found cover the history length
/// (`count × interval ≥ historyLength`, as Crane). The forecast holds the estimate from that
/// grid end for [`FLAT_FORECAST_MIN_SECS`] or one `historyLength`, whichever is longer.
pub fn predict_percentile(config: &PercentileConfig, history: &[Sample], now: i64) -> Prediction {
    let interval = config.interval_secs();
    let end = now.div_euclid(interval).saturating_mul(interval);
    let grid = resample(
        history,
        end.saturating_sub(config.history_secs()),
        end,
        interval,
    );
    let covered = i64::try_from(grid.len())
        .unwrap_or(i64::MAX)
        .saturating_mul(interval);
    if covered < config.history_secs() {
        return Prediction::not_ready(format!(
            "history {} < {}",
            secs(covered),
            secs(config.history_secs())
        ));
    }
    let values: Vec<f64> = grid.iter().map(|s| s.value).collect();
    let Some(p) = weighted_percentile(&values, config.percentile()) else {
        return Prediction::not_ready("no percentile of the history could be computed");
    };
    let estimate = p * (1.0 + config.margin()) / config.target_utilization();
    if !estimate.is_finite() {
        return Prediction::not_ready(format!("the estimate {estimate} is not finite"));
    }
    let horizon = config.history_secs().max(FLAT_FORECAST_MIN_SECS);
    let len = usize::try_from(horizon / interval).unwrap_or(0);
    Prediction::Ready(Forecast {
        algorithm: Algorithm::Percentile,
        period_seconds: None,
        start: end,
        step: interval,
        values: vec![estimate; len],
        estimator: format!(
            "p{} of {} (value-weighted) = {p}, margin {}, target utilization {}",
            // Rounded so that 0.99 prints as 99, not 99.00000000000001.
            (config.percentile() * 100.0 * 1e6).round() / 1e6,
            secs(config.history_secs()),
            config.margin(),
            config.target_utilization()
        ),
    })
}

fn secs(s: i64) -> String {
    format_duration(std::time::Duration::from_secs(
        u64::try_from(s).unwrap_or(0),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::prediction::minutely;

    #[test]
    fn weighted_percentile_weighs_by_value() {
        // Weights 1, 2, 3, 4 (total 10): 30 % of the weight is reached at 2, 60 % at 3.
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(weighted_percentile(&v, 0.3), Some(2.0));
        assert_eq!(weighted_percentile(&v, 0.31), Some(3.0));
        assert_eq!(weighted_percentile(&v, 0.6), Some(3.0));
        assert_eq!(weighted_percentile(&v, 1.0), Some(4.0));
        assert_eq!(weighted_percentile(&v, 0.0), Some(1.0));
        // Zero and negative values weigh MIN_SAMPLE_WEIGHT.
        assert_eq!(weighted_percentile(&[0.0, -5.0, 10.0], 0.5), Some(10.0));
        assert_eq!(weighted_percentile(&[], 0.5), None);
        assert_eq!(weighted_percentile(&[1.0], 1.5), None);
        assert_eq!(weighted_percentile(&[f64::NAN], 0.5), None);
    }

    #[test]
    fn works_far_beyond_cranes_default_histogram_range() {
        // Memory in bytes: about 2 GB with one 3 GB spike; Crane's default would say ~100.
        // The weights are nearly equal, so 99 % of the weight is reached at the 991st of
        // the 999 ordinary values (2e9 + 991, since 2e9 + 500 is the spike).
        let values: Vec<f64> = (0..1000)
            .map(|i| {
                if i == 500 {
                    3.0e9
                } else {
                    2.0e9 + f64::from(i)
                }
            })
            .collect();
        assert_eq!(weighted_percentile(&values, 0.99), Some(2.0e9 + 991.0));
        assert_eq!(weighted_percentile(&values, 1.0), Some(3.0e9));
    }

    #[test]
    fn holds_the_percentile_flat_once_the_history_is_covered() {
        let now = 30 * 86_400 + 30;
        let config = PercentileConfig::new(
            Duration::from_secs(60),
            Duration::from_secs(86_400),
            0.5,
            0.1,
            0.5,
        )
        .unwrap();
        let history = minutely(now - 2 * 86_400, now, |ts| {
            if ts % 120 == 0 {
                10.0
            } else {
                30.0
            }
        });
        let Prediction::Ready(f) = predict_percentile(&config, &history, now) else {
            panic!("not ready")
        };
        // Weights 10 and 30 in equal numbers: half the weight is reached at 30.
        let expected = 30.0 * 1.1 / 0.5;
        assert_eq!(
            (f.start, f.step, f.values.len(), f.period_seconds),
            (30 * 86_400, 60, 2 * 1440, None)
        );
        assert!(f.values.iter().all(|&v| v == expected));
        assert_eq!(f.peak_in(now, now + 3600), Some((now - 30 + 60, expected)));
    }

    #[test]
    fn explains_short_history() {
        let now = 30 * 86_400;
        let history = minutely(now - 3 * 86_400, now + 60, |_| 1.0);
        assert_eq!(
            predict_percentile(&PercentileConfig::default(), &history, now),
            Prediction::not_ready("history 3d 1m < 7d")
        );
        assert_eq!(
            predict_percentile(&PercentileConfig::default(), &[], now),
            Prediction::not_ready("history 0s < 7d")
        );
    }

    #[test]
    fn never_panics_on_odd_input() {
        let config = PercentileConfig::new(
            Duration::from_secs(60),
            Duration::from_secs(600),
            1.0,
            10.0,
            1e-300,
        )
        .unwrap();
        let history = minutely(0, 3600, |ts| if ts % 180 == 0 { f64::NAN } else { 1e300 });
        for now in [i64::MIN, -1, 0, 3600, i64::MAX] {
            let _ = predict_percentile(&config, &history, now);
        }
    }
}
