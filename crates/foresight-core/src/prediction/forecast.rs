//! What a predictor hands back: a forecast on a regular time grid, or why there is none.

use std::fmt;

use serde::Serialize;

use crate::wide;

/// The predictor that made a forecast.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// Crane's DSP predictor: a periodic forecast by FFT.
    Dsp,
    /// A percentile of history, held flat.
    Percentile,
}

impl Algorithm {
    /// The name used in the API's `algorithmType`.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Dsp => "dsp",
            Algorithm::Percentile => "percentile",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A forecast: `values[i]` is the predicted value at `start + i * step` (Unix seconds).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Forecast {
    /// The predictor that made it.
    pub algorithm: Algorithm,
    /// The detected period (86400 or 604800 seconds) for DSP; `None` for a flat forecast.
    pub period_seconds: Option<i64>,
    /// Timestamp of the first value, Unix seconds.
    pub start: i64,
    /// Spacing of the values in seconds (the sample interval); always at least 1.
    pub step: i64,
    /// The predicted values, all finite.
    pub values: Vec<f64>,
    /// Which estimator produced the values, for the explanation.
    pub estimator: String,
}

impl Forecast {
    /// The timestamp one step after the last value: the forecast covers `[start, end)`.
    pub fn end(&self) -> i64 {
        let len = i64::try_from(self.values.len()).unwrap_or(i64::MAX);
        self.start.saturating_add(len.saturating_mul(self.step))
    }

    /// The largest forecast value whose timestamp lies in `[from, to]` (both inclusive), with
    /// that timestamp; the earliest one when several are equal. `None` when no forecast
    /// point falls in the range.
    pub fn peak_in(&self, from: i64, to: i64) -> Option<(i64, f64)> {
        let (first, last) = self.index_range(from, to)?;
        let mut best: Option<(usize, f64)> = None;
        for (i, &v) in self
            .values
            .iter()
            .enumerate()
            .take(last.saturating_add(1))
            .skip(first)
        {
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((i, v));
            }
        }
        best.map(|(i, v)| (self.timestamp(i), v))
    }

    /// The forecast for `ts`: the value of the latest forecast point at or before `ts`, which
    /// holds until the next point. `None` before `start` and from `end()` on.
    pub fn value_at(&self, ts: i64) -> Option<f64> {
        if self.step < 1 || ts < self.start {
            return None;
        }
        let offset = i128::from(ts) - i128::from(self.start);
        let index = usize::try_from(wide::div(offset, i128::from(self.step))).ok()?;
        self.values.get(index).copied()
    }

    /// The timestamp of value `i`.
    fn timestamp(&self, i: usize) -> i64 {
        let i = i64::try_from(i).unwrap_or(i64::MAX);
        self.start.saturating_add(i.saturating_mul(self.step))
    }

    /// The indices of the first and last values whose timestamps lie in `[from, to]`.
    fn index_range(&self, from: i64, to: i64) -> Option<(usize, usize)> {
        if self.step < 1 || from > to || self.values.is_empty() {
            return None;
        }
        let step = i128::from(self.step);
        let start = i128::from(self.start);
        // First index with start + i*step >= from; last with start + i*step <= to.
        let first = wide::div_euclid(i128::from(from) - start + step - 1, step).max(0);
        let last = wide::div_euclid(i128::from(to) - start, step);
        let max_index = i128::try_from(self.values.len()).ok()?.checked_sub(1)?;
        let last = last.min(max_index);
        if last < first {
            return None;
        }
        Some((usize::try_from(first).ok()?, usize::try_from(last).ok()?))
    }
}

/// A predictor's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Prediction {
    /// The predictor is ready and forecasts this.
    Ready(Forecast),
    /// No forecast, and a human reason, e.g. `history 1d 4h < 2 periods (2d)`.
    NotReady {
        /// Why there is no forecast.
        reason: String,
    },
}

impl Prediction {
    /// The forecast, when ready.
    pub fn forecast(&self) -> Option<&Forecast> {
        match self {
            Prediction::Ready(f) => Some(f),
            Prediction::NotReady { .. } => None,
        }
    }

    /// A `NotReady` with `reason`.
    pub fn not_ready(reason: impl Into<String>) -> Self {
        Prediction::NotReady {
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn forecast(start: i64, step: i64, values: Vec<f64>) -> Forecast {
        Forecast {
            algorithm: Algorithm::Dsp,
            period_seconds: Some(86_400),
            start,
            step,
            values,
            estimator: String::new(),
        }
    }

    #[test]
    fn peak_in_is_inclusive_and_prefers_the_earliest_of_equal_peaks() {
        let f = forecast(100, 60, vec![1.0, 5.0, 3.0, 5.0, 2.0]);
        // Points at 100, 160, 220, 280, 340.
        assert_eq!(f.peak_in(100, 340), Some((160, 5.0)));
        assert_eq!(f.peak_in(161, 340), Some((280, 5.0)));
        assert_eq!(f.peak_in(220, 220), Some((220, 3.0)));
        assert_eq!(f.peak_in(221, 279), None);
        assert_eq!(f.peak_in(0, 100), Some((100, 1.0)));
        assert_eq!(f.peak_in(340, i64::MAX), Some((340, 2.0)));
        assert_eq!(f.peak_in(341, i64::MAX), None);
        assert_eq!(f.peak_in(i64::MIN, 99), None);
        assert_eq!(f.peak_in(300, 200), None);
        assert_eq!(f.peak_in(i64::MIN, i64::MAX), Some((160, 5.0)));
    }

    #[test]
    fn value_at_holds_each_point_until_the_next() {
        let f = forecast(100, 60, vec![1.0, 2.0]);
        assert_eq!(f.value_at(99), None);
        assert_eq!(f.value_at(100), Some(1.0));
        assert_eq!(f.value_at(159), Some(1.0));
        assert_eq!(f.value_at(160), Some(2.0));
        assert_eq!(f.value_at(219), Some(2.0));
        assert_eq!(f.value_at(220), None);
        assert_eq!(f.end(), 220);
        assert_eq!(f.value_at(i64::MAX), None);
        assert_eq!(f.value_at(i64::MIN), None);
    }

    #[test]
    fn empty_or_malformed_forecasts_answer_none() {
        assert_eq!(forecast(0, 60, vec![]).peak_in(i64::MIN, i64::MAX), None);
        assert_eq!(forecast(0, 0, vec![1.0]).peak_in(0, 0), None);
        assert_eq!(forecast(0, 0, vec![1.0]).value_at(0), None);
        assert_eq!(forecast(0, -1, vec![1.0]).value_at(0), None);
    }

    proptest! {
        #[test]
        fn peak_in_agrees_with_a_linear_scan(
            start in -1_000i64..1_000,
            step in 1i64..100,
            values in proptest::collection::vec(0u8..10, 0..40),
            from in -2_000i64..6_000,
            len in 0i64..6_000,
        ) {
            let values: Vec<f64> = values.into_iter().map(f64::from).collect();
            let f = forecast(start, step, values.clone());
            let to = from + len;
            let mut expected: Option<(i64, f64)> = None;
            for (i, v) in values.iter().enumerate() {
                let ts = start + i as i64 * step;
                if ts >= from && ts <= to && expected.is_none_or(|(_, b)| *v > b) {
                    expected = Some((ts, *v));
                }
            }
            prop_assert_eq!(f.peak_in(from, to), expected);
        }

        #[test]
        fn never_panics_on_extreme_arguments(start in any::<i64>(), step in any::<i64>(), from in any::<i64>(), to in any::<i64>()) {
            let f = forecast(start, step, vec![1.0, 2.0, 3.0]);
            let _ = f.peak_in(from, to);
            let _ = f.value_at(from);
            let _ = f.end();
        }
    }
}
