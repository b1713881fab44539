//! Turning recorded samples into the evenly spaced series the DSP predictor analyses
//! (docs/prediction.md, "The DSP predictor"): sampling onto a grid, the cut at long gaps,
//! linear gap filling, alignment to whole hours and extreme-outlier replacement.

use foresight_api::prediction::MAX_SERIES_SAMPLES;

use crate::trace::Sample;

/// Gaps longer than this (seconds) cut the history: only what follows the last such gap
/// is used (DSP step 1 in docs/prediction.md).
pub const MAX_GAP_SECONDS: i64 = 3600;

/// Why samples could not be turned into a series.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PreprocessError {
    /// The sample interval is not a positive number of seconds.
    #[error("sample interval {0}s is not positive")]
    Interval(i64),
    /// Two consecutive samples are not a whole, positive number of intervals apart (Crane
    /// discards such a series).
    #[error(
        "samples at {from} and {to} are not a whole positive number of {interval}s intervals apart"
    )]
    Spacing {
        /// The earlier timestamp.
        from: i64,
        /// The later timestamp.
        to: i64,
        /// The sample interval in seconds.
        interval: i64,
    },
    /// Filling the gaps would create more than [`MAX_SERIES_SAMPLES`] samples.
    #[error("the samples span {samples} intervals; at most {MAX_SERIES_SAMPLES} are supported")]
    TooLong {
        /// How many samples the filled series would hold.
        samples: u64,
    },
}

/// A gap longer than [`MAX_GAP_SECONDS`] that cut the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The last sample before the gap (Unix seconds).
    pub from: i64,
    /// The first sample after it.
    pub to: i64,
}

/// Samples on a regular grid after gap handling.
#[derive(Clone, Debug, PartialEq)]
pub struct GapFilled {
    /// The samples, `interval` apart, with no gaps.
    pub samples: Vec<Sample>,
    /// The last gap that cut the history, if any.
    pub cut: Option<Gap>,
}

/// Samples `history` onto the grid `…, end − interval, end` (the points not before `start`)
/// the way a Prometheus `query_range` with `step = interval` would: each grid point `t` takes
/// the latest finite sample in `(t − interval, t]`. Grid points without one are left out; they are gaps for
/// [`fill_gaps`]. Unlike Prometheus (5-minute lookback), a sample is used for one grid
/// point only, so a sparse source shows as gaps that the history step fills linearly instead of holding
/// a stale value. `history` need not be sorted; of two samples with the same timestamp the
/// later one in `history` wins. If the grid would exceed [`MAX_SERIES_SAMPLES`] points, only
/// the most recent ones are kept.
pub fn resample(history: &[Sample], start: i64, end: i64, interval: i64) -> Vec<Sample> {
    if interval < 1 || start > end {
        return Vec::new();
    }
    let step = i128::from(interval);
    let max_points = i128::from(MAX_SERIES_SAMPLES);
    let points = ((i128::from(end) - i128::from(start)) / step + 1).min(max_points);
    // The earliest grid point kept; `end` itself is always a grid point.
    let first = i128::from(end) - (points - 1) * step;
    let Ok(len) = usize::try_from(points) else {
        return Vec::new();
    };
    let mut slots: Vec<Option<Sample>> = vec![None; len];
    for s in history {
        if !s.value.is_finite() {
            continue;
        }
        let ts = i128::from(s.ts);
        if ts <= first - step || ts > i128::from(end) {
            continue;
        }
        // The grid point t with t - step < ts <= t.
        let k = (ts - first + step - 1).div_euclid(step);
        let Some(slot) = usize::try_from(k).ok().and_then(|k| slots.get_mut(k)) else {
            continue;
        };
        if slot.is_none_or(|old| s.ts >= old.ts) {
            *slot = Some(*s);
        }
    }
    slots
        .into_iter()
        .enumerate()
        .filter_map(|(k, slot)| {
            let value = slot?.value;
            let ts = i64::try_from(first + i128::try_from(k).ok()? * step).ok()?;
            Some(Sample { ts, value })
        })
        .collect()
}

/// DSP step 1 (docs/prediction.md): drops everything before the last gap longer than [`MAX_GAP_SECONDS`], then fills the
/// remaining gaps by linear interpolation so that the samples are exactly `interval` apart.
/// Consecutive samples must be a whole positive number of intervals apart (as a grid from
/// [`resample`] is); the scan runs from the oldest sample, so such a problem before a later
/// long gap still rejects the series, as in Crane.
pub fn fill_gaps(samples: &[Sample], interval: i64) -> Result<GapFilled, PreprocessError> {
    if interval < 1 {
        return Err(PreprocessError::Interval(interval));
    }
    let mut keep_from = 0;
    let mut cut = None;
    for (i, pair) in samples.windows(2).enumerate() {
        let (a, b) = (pair[0].ts, pair[1].ts);
        let gap = i128::from(b) - i128::from(a);
        if gap > i128::from(MAX_GAP_SECONDS) {
            keep_from = i + 1;
            cut = Some(Gap { from: a, to: b });
        } else if gap <= 0 || gap % i128::from(interval) != 0 {
            return Err(PreprocessError::Spacing {
                from: a,
                to: b,
                interval,
            });
        }
    }
    let kept = &samples[keep_from..];
    let (Some(first), Some(last)) = (kept.first(), kept.last()) else {
        return Ok(GapFilled {
            samples: Vec::new(),
            cut,
        });
    };
    // Every gap in `kept` is a positive multiple of the interval, so the filled series has
    // exactly span/interval + 1 samples.
    let total = (i128::from(last.ts) - i128::from(first.ts)) / i128::from(interval) + 1;
    let total = u64::try_from(total).unwrap_or(u64::MAX);
    if total > MAX_SERIES_SAMPLES {
        return Err(PreprocessError::TooLong { samples: total });
    }
    let mut filled = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    filled.push(*first);
    for pair in kept.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        // Both fit: the gap is at most MAX_GAP_SECONDS.
        let steps = (b.ts - a.ts) / interval;
        for j in 1..steps {
            // Crane's formula, x[i-1] + j·(x[i] − x[i-1])/k.
            let value = a.value + j as f64 * (b.value - a.value) / steps as f64;
            filled.push(Sample {
                ts: a.ts + j * interval,
                value,
            });
        }
        filled.push(b);
    }
    Ok(GapFilled {
        samples: filled,
        cut,
    })
}

/// How many samples make one hour: Crane aligns the series to whole hours (DSP step 1 in docs/prediction.md).
pub fn samples_per_hour(interval: i64) -> usize {
    usize::try_from(3600 / interval.max(1)).unwrap_or(1).max(1)
}

/// Keeps the most recent `unit * floor(len / unit)` items, so that the series holds whole
/// units (whole hours in the predictor).
pub fn align_to_whole_units<T>(items: &[T], unit: usize) -> &[T] {
    let unit = unit.max(1);
    let keep = items.len() / unit * unit;
    &items[items.len() - keep..]
}

/// The percentile of `values` exactly as montanaflynn/stats v0.6.6 `Percentile` computes it
/// (DSP step 1 in docs/prediction.md): on a sorted copy `c`, with `r = percent/100 · n`, `c[r−1]` if `r` is whole, the mean
/// of `c[⌊r⌋−1]` and `c[⌊r⌋]` if `r > 1`, and no answer otherwise (which happens for small
/// percentiles of short series). Also no answer for empty input or a percent outside (0, 100].
pub fn crane_percentile(values: &[f64], percent: f64) -> Option<f64> {
    crane_percentile_in(&mut values.to_vec(), percent)
}

/// [`crane_percentile`] reordering `scratch` (a copy of the values) instead of sorting a new
/// copy: the one or two order statistics needed are found by selection, in linear time.
fn crane_percentile_in(scratch: &mut [f64], percent: f64) -> Option<f64> {
    if scratch.is_empty() || !(percent > 0.0 && percent <= 100.0) {
        return None;
    }
    let rank = percent / 100.0 * scratch.len() as f64;
    let i = rank as usize;
    if rank == rank.floor() {
        nth_smallest(scratch, i.checked_sub(1)?)
    } else if rank > 1.0 {
        Some((nth_smallest(scratch, i - 1)? + nth_smallest(scratch, i)?) / 2.0)
    } else {
        None
    }
}

/// The value at index `i` of `values` sorted ascending (reorders `values`).
fn nth_smallest(values: &mut [f64], i: usize) -> Option<f64> {
    if i >= values.len() {
        return None;
    }
    Some(*values.select_nth_unstable_by(i, f64::total_cmp).1)
}

/// DSP step 1 (docs/prediction.md): every value above the 99.9th or below the 0.1th percentile (in [`crane_percentile`]'s
/// sense) is replaced by its predecessor, in order, so a run of outliers takes the last good
/// value. The first value is never checked. Nothing changes when either percentile has no
/// answer (fewer than 1000 values, in practice). Returns how many values were replaced.
pub fn remove_extreme_outliers(values: &mut [f64]) -> usize {
    let mut scratch = values.to_vec();
    let (Some(hi), Some(lo)) = (
        crane_percentile_in(&mut scratch, 99.9),
        crane_percentile_in(&mut scratch, 0.1),
    ) else {
        return 0;
    };
    let mut replaced = 0;
    for i in 1..values.len() {
        if values[i] > hi || values[i] < lo {
            values[i] = values[i - 1];
            replaced += 1;
        }
    }
    replaced
}

/// The series the DSP predictor analyses: evenly spaced, gap-free, whole hours.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedSeries {
    /// Timestamp of the first value.
    pub start: i64,
    /// Seconds between values.
    pub interval: i64,
    /// The values.
    pub values: Vec<f64>,
    /// The gap that cut older history, if any.
    pub cut: Option<Gap>,
    /// How many extreme outliers were replaced.
    pub outliers_replaced: usize,
}

impl PreparedSeries {
    /// The timestamp of the last value (`start` when empty).
    pub fn last_ts(&self) -> i64 {
        let n = i64::try_from(self.values.len()).unwrap_or(i64::MAX);
        self.start
            .saturating_add(n.saturating_sub(1).max(0).saturating_mul(self.interval))
    }

    /// The time the series covers, `len × interval` seconds.
    pub fn duration_secs(&self) -> i64 {
        i64::try_from(self.values.len())
            .unwrap_or(i64::MAX)
            .saturating_mul(self.interval)
    }
}

/// DSP step 1 (docs/prediction.md) end to end: Crane queries `[end − history − 1h, end]` with `end = now` truncated to
/// the interval, then fills gaps, aligns to whole hours and replaces extreme outliers.
pub fn prepare_series(
    history: &[Sample],
    now: i64,
    interval: i64,
    history_secs: i64,
    margin_secs: i64,
) -> Result<PreparedSeries, PreprocessError> {
    if interval < 1 {
        return Err(PreprocessError::Interval(interval));
    }
    let end = now.div_euclid(interval).saturating_mul(interval);
    let start = end.saturating_sub(history_secs.saturating_add(margin_secs));
    let grid = resample(history, start, end, interval);
    let filled = fill_gaps(&grid, interval)?;
    let aligned = align_to_whole_units(&filled.samples, samples_per_hour(interval));
    let start = aligned.first().map_or(end, |s| s.ts);
    let mut values: Vec<f64> = aligned.iter().map(|s| s.value).collect();
    let outliers_replaced = remove_extreme_outliers(&mut values);
    Ok(PreparedSeries {
        start,
        interval,
        values,
        cut: filled.cut,
        outliers_replaced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(ts: i64, value: f64) -> Sample {
        Sample { ts, value }
    }

    /// Crane's `TestPreProcessTimeSeries`: points at −120, −119, −10, −7 and 0 minutes.
    fn crane_preprocess_input() -> Vec<Sample> {
        [(-120, 0.1), (-119, 0.8), (-10, 1.0), (-7, 1.3), (0, 2.0)]
            .iter()
            .map(|&(m, v)| s(m * 60, v))
            .collect()
    }

    #[test]
    fn crane_preprocess_scenario_cuts_the_long_gap_and_interpolates() {
        let out = fill_gaps(&crane_preprocess_input(), 60).unwrap();
        assert_eq!(
            out.cut,
            Some(Gap {
                from: -119 * 60,
                to: -600
            })
        );
        assert_eq!(out.samples.len(), 11);
        for (i, sample) in out.samples.iter().enumerate() {
            assert_eq!(sample.ts, -600 + 60 * i as i64);
            let expected = 1.0 + 0.1 * i as f64;
            assert!(
                (sample.value - expected).abs() < 1e-12,
                "{i}: {} vs {expected}",
                sample.value
            );
        }
        // With a 10-minute alignment unit, the most recent 10 samples remain.
        let aligned = align_to_whole_units(&out.samples, 10);
        assert_eq!(aligned.len(), 10);
        assert_eq!(aligned[0].ts, -540);
        // With the predictor's one-hour unit, 11 minutes are not a whole hour.
        assert!(align_to_whole_units(&out.samples, samples_per_hour(60)).is_empty());
    }

    #[test]
    fn a_gap_of_exactly_one_hour_is_filled_not_cut() {
        let out = fill_gaps(&[s(0, 0.0), s(3600, 60.0)], 60).unwrap();
        assert_eq!(out.cut, None);
        assert_eq!(out.samples.len(), 61);
        assert_eq!(out.samples[30], s(1800, 30.0));
        let out = fill_gaps(&[s(0, 0.0), s(3660, 60.0), s(3720, 1.0)], 60).unwrap();
        assert_eq!(out.samples, vec![s(3660, 60.0), s(3720, 1.0)]);
    }

    #[test]
    fn off_grid_or_unordered_samples_are_rejected() {
        assert_eq!(
            fill_gaps(&[s(0, 0.0), s(90, 1.0)], 60),
            Err(PreprocessError::Spacing {
                from: 0,
                to: 90,
                interval: 60
            })
        );
        assert_eq!(
            fill_gaps(&[s(60, 0.0), s(60, 1.0)], 60),
            Err(PreprocessError::Spacing {
                from: 60,
                to: 60,
                interval: 60
            })
        );
        // A bad pair before a later long gap still rejects the series (Crane scans in order).
        assert!(fill_gaps(&[s(0, 0.0), s(30, 0.0), s(10_000, 1.0)], 60).is_err());
        assert_eq!(
            fill_gaps(&[s(0, 0.0)], 0),
            Err(PreprocessError::Interval(0))
        );
        assert_eq!(fill_gaps(&[], 60).unwrap().samples, vec![]);
    }

    #[test]
    fn resample_takes_the_latest_sample_in_each_interval() {
        let history = [
            s(5, 1.0),
            s(50, 2.0),
            s(61, 3.0),
            s(170, f64::NAN),
            s(179, 4.0),
            s(400, 9.0),
        ];
        // Grid 60, 120, 180 over (0, 180].
        assert_eq!(
            resample(&history, 60, 180, 60),
            vec![s(60, 2.0), s(120, 3.0), s(180, 4.0)]
        );
        // Unsorted input and duplicate timestamps: the later entry wins.
        let history = [s(120, 3.0), s(60, 1.0), s(60, 2.0)];
        assert_eq!(
            resample(&history, 60, 120, 60),
            vec![s(60, 2.0), s(120, 3.0)]
        );
        assert_eq!(resample(&history, 120, 60, 60), vec![]);
        assert_eq!(resample(&history, 0, 60, 0), vec![]);
        assert_eq!(
            resample(&[s(i64::MAX, 1.0), s(i64::MIN, 1.0)], i64::MIN, i64::MAX, 1).len(),
            1
        );
    }

    #[test]
    fn crane_percentile_matches_montanaflynn() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(crane_percentile(&v, 50.0), Some(5.0)); // r = 5, whole
        assert_eq!(crane_percentile(&v, 55.0), Some(5.5)); // r = 5.5 → mean of c[4], c[5]
        assert_eq!(crane_percentile(&v, 100.0), Some(10.0));
        assert_eq!(crane_percentile(&v, 5.0), None); // r = 0.5
        assert_eq!(crane_percentile(&v, 0.0), None);
        assert_eq!(crane_percentile(&[], 50.0), None);
        // Fewer than 1000 values: the 0.1th percentile has no answer.
        assert_eq!(crane_percentile(&vec![1.0; 999], 0.1), None);
        assert_eq!(crane_percentile(&vec![1.0; 1000], 0.1), Some(1.0));
    }

    /// Crane's `TestRemoveExtremeOutliers`: 10080 uniform random values with 3.5, −1 and 1000
    /// injected at 1000, 3000 and 8000; each must equal its predecessor afterwards.
    #[test]
    fn crane_remove_extreme_outliers_scenario() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut v: Vec<f64> = (0..10_080).map(|_| rng.random::<f64>()).collect();
        v[1000] = 3.5;
        v[3000] = -1.0;
        v[8000] = 1000.0;
        let before = v.clone();
        let replaced = remove_extreme_outliers(&mut v);
        for i in [1000, 3000, 8000] {
            assert_eq!(v[i], v[i - 1], "index {i}");
            assert_eq!(
                v[i - 1],
                before[i - 1],
                "the predecessor of {i} is not an outlier"
            );
        }
        // 0.1% at each end of 10080 values: about ten values on each side are replaced.
        assert!((3..=30).contains(&replaced), "{replaced}");
    }

    #[test]
    fn outlier_runs_collapse_to_the_last_good_value_and_short_series_are_untouched() {
        let mut v = vec![1.0; 10_000];
        v[10] = 50.0;
        v[11] = 60.0;
        v[0] = 100.0;
        let replaced = remove_extreme_outliers(&mut v);
        assert_eq!((v[10], v[11], v[0]), (1.0, 1.0, 100.0));
        assert_eq!(replaced, 2);
        let mut short = vec![1.0, 100.0, 1.0];
        assert_eq!(remove_extreme_outliers(&mut short), 0);
        assert_eq!(short, vec![1.0, 100.0, 1.0]);
    }

    #[test]
    fn prepare_series_reads_history_plus_an_hour_aligned_to_whole_hours() {
        // Two days and three hours of minutes ending at `now`; history 2d, margin 1h.
        let now = 10 * 86_400 + 30;
        let history: Vec<Sample> = (0..(51 * 60 + 1))
            .map(|i| s(now - 30 - i * 60, i as f64))
            .rev()
            .collect();
        let p = prepare_series(&history, now, 60, 2 * 86_400, 3600).unwrap();
        // [end − 49h, end] is 49h + 1 grid points; aligned to whole hours: 49h.
        assert_eq!(p.values.len(), 49 * 60);
        assert_eq!(p.last_ts(), 10 * 86_400);
        assert_eq!(p.start, 10 * 86_400 - 49 * 3600 + 60);
        assert_eq!(p.duration_secs(), 49 * 3600);
        assert_eq!(p.cut, None);
    }

    proptest! {
        #[test]
        fn crane_percentile_agrees_with_the_sorted_definition(
            values in proptest::collection::vec(-1e6f64..1e6, 1..300),
            percent in 0.0f64..=100.0,
        ) {
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let rank = percent / 100.0 * sorted.len() as f64;
            let expected = if percent <= 0.0 {
                None
            } else if rank == rank.floor() {
                (rank >= 1.0).then(|| sorted[rank as usize - 1])
            } else if rank > 1.0 {
                Some((sorted[rank as usize - 1] + sorted[rank as usize]) / 2.0)
            } else {
                None
            };
            prop_assert_eq!(crane_percentile(&values, percent), expected);
        }

        #[test]
        fn prepare_series_never_panics(
            history in proptest::collection::vec((any::<i64>(), any::<f64>()), 0..50),
            now in any::<i64>(),
            interval in -5i64..4000,
        ) {
            let history: Vec<Sample> = history.into_iter().map(|(ts, value)| s(ts, value)).collect();
            if let Ok(p) = prepare_series(&history, now, interval, 2 * 86_400, 3600) {
                prop_assert!(p.values.iter().all(|v| v.is_finite()));
            }
        }

        #[test]
        fn filled_series_are_evenly_spaced(gaps in proptest::collection::vec(1i64..80, 1..40)) {
            let mut ts = 0;
            let mut samples = vec![s(0, 0.0)];
            for (i, g) in gaps.iter().enumerate() {
                ts += g * 60;
                samples.push(s(ts, i as f64));
            }
            let out = fill_gaps(&samples, 60).unwrap();
            prop_assert!(out.samples.windows(2).all(|w| w[1].ts - w[0].ts == 60));
            prop_assert_eq!(out.samples.last().map(|x| x.ts), Some(ts));
        }
    }
}
