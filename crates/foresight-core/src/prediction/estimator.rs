//! The DSP predictor's estimators (docs/prediction.md, "The DSP predictor"), the prediction error
//! that ranks them (DSP step 3 in docs/prediction.md) and the back-test that picks one.

use std::fmt;

use realfft::num_complex::Complex;
use realfft::RealFftPlanner;

use super::spectrum::{Fft, SpectrumError};

/// Under-prediction below this actual value switches the error to the plain mean absolute
/// error (DSP step 3 in docs/prediction.md), since a relative error near zero is meaningless.
const PE_SMALL_ACTUAL: f64 = 1e-3;
/// FFT estimates at or below zero are replaced by this (DSP step 3 in docs/prediction.md).
const FFT_FLOOR: f64 = 0.01;

/// Why an estimator produced nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EstimateError {
    /// The period is zero samples long.
    #[error("the period is empty")]
    EmptyPeriod,
    /// Less than one whole period to learn from.
    #[error("{got} samples are less than one period of {period}")]
    TooShort {
        /// Samples given.
        got: usize,
        /// Samples per period.
        period: usize,
    },
    /// The signal is too short for a spectrum to rank.
    #[error("{0} samples leave no spectrum components to rank")]
    NoSpectrum(usize),
    /// The transform failed.
    #[error(transparent)]
    Spectrum(#[from] SpectrumError),
}

/// How the FFT estimator treats the mirror half of the spectrum when it drops components.
///
/// Crane filters the full complex spectrum bin by bin with `f_k = k·fs/N` for every `k`, so
/// a mirror bin `N − k` always has a frequency above the threshold and is judged by
/// amplitude alone (DSP step 3 in docs/prediction.md). A low-frequency component below the amplitude cut keeps
/// `X_k` but loses its conjugate `X_{N−k}`, and the real part of the inverse then carries
/// half of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MirrorBins {
    /// Foresight's default: a component is kept or dropped whole, judged by its frequency
    /// `k·fs/N` for `k ≤ N/2`. This is what the "components with frequency ≤ threshold are
    /// always kept" rule means; forecasts differ from Crane's by half of each weak
    /// low-frequency component.
    #[default]
    Symmetric,
    /// Crane's behaviour, for bit-level comparison: weak low-frequency components are halved.
    Crane,
}

/// Per phase of the period, the largest value seen at that phase, times `1 + margin`
/// (DSP step 3 in docs/prediction.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaxValueEstimator {
    /// Safety margin as a fraction.
    pub margin: f64,
}

/// A low-pass FFT reconstruction of the whole input, of which the last period is returned,
/// times `1 + margin` (DSP step 3 in docs/prediction.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FftEstimator {
    /// Safety margin as a fraction.
    pub margin: f64,
    /// Components weaker than this amplitude (`|X_k|/N`) may be dropped.
    pub low_amplitude_threshold: f64,
    /// Components at or below this frequency (Hz) are always kept.
    pub high_frequency_threshold_hz: f64,
    /// At least this many of the strongest components survive the amplitude cut.
    pub min_items: usize,
    /// At most this many survive it, unless they are above `low_amplitude_threshold`.
    pub max_items: usize,
    /// How the mirror half of the spectrum is treated.
    pub mirror: MirrorBins,
}

impl FftEstimator {
    /// Crane's per-field defaults with `margin`: lowAmp 1.0, highFreq 1/3600 Hz, 3 to 100 items.
    pub fn with_margin(margin: f64) -> Self {
        FftEstimator {
            margin,
            low_amplitude_threshold: 1.0,
            high_frequency_threshold_hz: 1.0 / 3600.0,
            min_items: 3,
            max_items: 100,
            mirror: MirrorBins::Symmetric,
        }
    }
}

/// One candidate way to turn past periods into the next one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Estimator {
    /// [`MaxValueEstimator`].
    MaxValue(MaxValueEstimator),
    /// [`FftEstimator`].
    Fft(FftEstimator),
}

impl fmt::Display for Estimator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Estimator::MaxValue(e) => write!(f, "maxValue(margin {})", e.margin),
            Estimator::Fft(e) => write!(
                f,
                "fft(margin {}, lowAmplitude {}, highFrequency {:.6} Hz, items {}..{}{})",
                e.margin,
                e.low_amplitude_threshold,
                e.high_frequency_threshold_hz,
                e.min_items,
                e.max_items,
                if e.mirror == MirrorBins::Crane {
                    ", crane mirror bins"
                } else {
                    ""
                }
            ),
        }
    }
}

/// Crane's eight default estimators (the DSP settings in docs/prediction.md): FFT with 3..100 items at lowAmp 1.0, then 50..100
/// items at lowAmp 0.05, each at margins 0.01, 0.10, 0.15 and 0.20.
pub fn default_estimators() -> Vec<Estimator> {
    let mut out = Vec::with_capacity(8);
    for (min_items, low_amplitude_threshold) in [(3, 1.0), (50, 0.05)] {
        for margin in [0.01, 0.10, 0.15, 0.20] {
            out.push(Estimator::Fft(FftEstimator {
                min_items,
                low_amplitude_threshold,
                ..FftEstimator::with_margin(margin)
            }));
        }
    }
    out
}

impl Estimator {
    /// One period (`period` samples) estimated from `x`, sampled every `interval` seconds.
    pub fn estimate(
        &self,
        x: &[f64],
        period: usize,
        interval: i64,
    ) -> Result<Vec<f64>, EstimateError> {
        match self {
            Estimator::MaxValue(e) => e.estimate(x, period),
            Estimator::Fft(e) => {
                check_lengths(x.len(), period)?;
                let mut spectrum = Spectrum::of(x, &mut RealFftPlanner::new())?;
                e.estimate_from(&mut spectrum, period, interval)
            }
        }
    }
}

fn check_lengths(len: usize, period: usize) -> Result<(), EstimateError> {
    if period == 0 {
        return Err(EstimateError::EmptyPeriod);
    }
    if len < period {
        return Err(EstimateError::TooShort { got: len, period });
    }
    Ok(())
}

impl MaxValueEstimator {
    /// DSP step 3 (docs/prediction.md): `est[i] = (1 + margin) · max_j x[len − period + i − j·period]` over every whole
    /// period `j` available.
    pub fn estimate(&self, x: &[f64], period: usize) -> Result<Vec<f64>, EstimateError> {
        check_lengths(x.len(), period)?;
        let last_start = x.len() - period;
        let whole = x.len() / period;
        Ok((0..period)
            .map(|i| {
                let max = (0..whole)
                    .map(|j| x[last_start + i - j * period])
                    .fold(f64::NEG_INFINITY, f64::max);
                max * (1.0 + self.margin)
            })
            .collect())
    }
}

/// A signal's spectrum, computed once and shared by every FFT estimator.
pub struct Spectrum {
    fft: Fft,
    half: Vec<Complex<f64>>,
    /// `|X_k|/N` for the half spectrum.
    amplitudes: Vec<f64>,
    /// The amplitudes `a_1 ..= a_{⌊N/2⌋−1}`, sorted descending (DSP step 3 in docs/prediction.md).
    ranked: Vec<f64>,
}

impl Spectrum {
    /// The spectrum of `x`.
    pub fn of(x: &[f64], planner: &mut RealFftPlanner<f64>) -> Result<Self, EstimateError> {
        let mut fft = Fft::new(planner, x.len())?;
        let half = fft.forward(x)?.to_vec();
        let n = x.len() as f64;
        // sqrt(re² + im²) is several times faster than hypot; hypot only where the square
        // overflows.
        let amplitudes: Vec<f64> = half
            .iter()
            .map(|c| {
                let square = c.norm_sqr();
                if square.is_finite() { square.sqrt() } else { c.norm() }
            } / n)
            .collect();
        let last = (x.len() / 2).saturating_sub(1);
        let mut ranked = amplitudes.get(1..=last).unwrap_or(&[]).to_vec();
        ranked.sort_unstable_by(|a, b| b.total_cmp(a));
        Ok(Spectrum {
            fft,
            half,
            amplitudes,
            ranked,
        })
    }

    /// The signal length `N`.
    pub fn len(&self) -> usize {
        self.fft.len()
    }

    /// Never true: an empty signal has no spectrum.
    pub fn is_empty(&self) -> bool {
        self.fft.is_empty()
    }
}

impl FftEstimator {
    /// DSP step 3 (docs/prediction.md): the amplitude cut `c = min(max(S_maxItems, la), S_minItems)`, where `S` is
    /// the ranked amplitudes and `S_i` the i-th largest (the last one when there are fewer).
    pub fn amplitude_cut(&self, ranked: &[f64]) -> Option<f64> {
        let last = *ranked.last()?;
        let mut cut = self
            .max_items
            .checked_sub(1)
            .and_then(|i| ranked.get(i))
            .copied()
            .unwrap_or(last);
        if cut < self.low_amplitude_threshold {
            cut = self.low_amplitude_threshold;
        }
        if let Some(&strongest_min) = self.min_items.checked_sub(1).and_then(|i| ranked.get(i)) {
            if strongest_min < cut {
                cut = strongest_min;
            }
        }
        Some(cut)
    }

    /// DSP step 3 (docs/prediction.md): keeps the components at or below the frequency threshold and those at or above
    /// the amplitude cut, inverts, and returns the last `period` values, each at most 0
    /// replaced by 0.01, times `1 + margin`.
    pub fn estimate_from(
        &self,
        spectrum: &mut Spectrum,
        period: usize,
        interval: i64,
    ) -> Result<Vec<f64>, EstimateError> {
        let n = spectrum.len();
        check_lengths(n, period)?;
        let cut = self
            .amplitude_cut(&spectrum.ranked)
            .ok_or(EstimateError::NoSpectrum(n))?;
        let fs = 1.0 / interval.max(1) as f64;
        let frequency = |k: usize| k as f64 * fs / n as f64;
        let amplitudes = &spectrum.amplitudes;
        let kept = |k: usize, f: f64| amplitudes[k] >= cut || f <= self.high_frequency_threshold_hz;
        let filtered: Vec<Complex<f64>> = spectrum
            .half
            .iter()
            .enumerate()
            .map(|(k, &x)| {
                let keep = f64::from(u8::from(kept(k, frequency(k))));
                // A bin is its own mirror at k = 0 and, for even N, at k = N/2.
                let self_mirrored = k == 0 || 2 * k == n;
                if self_mirrored || self.mirror == MirrorBins::Symmetric {
                    return x * keep;
                }
                // Crane: Re(IFFT) of a spectrum that is not Hermitian is the inverse of its
                // Hermitian part, (X_k + conj(X_{N−k}))/2 in bin k, so a bin whose mirror
                // (judged at frequency (N−k)·fs/N) was dropped counts half.
                let keep_mirror = f64::from(u8::from(kept(k, frequency(n - k))));
                x * ((keep + keep_mirror) / 2.0)
            })
            .collect();
        let y = spectrum.fft.inverse(&filtered)?;
        Ok(y[n - period..]
            .iter()
            .map(|&v| if v <= 0.0 { FFT_FLOOR } else { v } * (1.0 + self.margin))
            .collect())
    }
}

/// DSP step 3 (docs/prediction.md): the asymmetric prediction error of `predicted` against `actual`. When any actual value is
/// below 0.001 it is the mean absolute error; otherwise the mean of the relative errors,
/// where under-prediction by the fraction `u` counts `−ln(1 − u)/ln 1.25` (0.47 for 10 %,
/// 3.1 for 50 %) and over-prediction counts linearly. Mismatched or empty inputs, and
/// anything that is not a number, rank last (`+∞`).
pub fn prediction_error(actual: &[f64], predicted: &[f64]) -> f64 {
    if actual.is_empty() || actual.len() != predicted.len() {
        return f64::INFINITY;
    }
    let n = actual.len() as f64;
    let error = if actual.iter().any(|&a| a < PE_SMALL_ACTUAL) {
        actual
            .iter()
            .zip(predicted)
            .map(|(a, p)| (a - p).abs())
            .sum::<f64>()
            / n
    } else {
        let ln_125 = 1.25f64.ln();
        actual
            .iter()
            .zip(predicted)
            .map(|(&a, &p)| {
                if p < a {
                    let u = (a - p) / a;
                    -(1.0 - u).ln() / ln_125
                } else {
                    (p - a) / a
                }
            })
            .sum::<f64>()
            / n
    };
    if error.is_nan() {
        f64::INFINITY
    } else {
        error
    }
}

/// The back-test result: which estimator to use and how each one scored.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// Index of the chosen estimator in the list given.
    pub index: usize,
    /// Each estimator's prediction error on the last period, or why it produced nothing.
    pub errors: Vec<Result<f64, EstimateError>>,
}

/// DSP step 3 (docs/prediction.md): fits every estimator on all whole periods but the last, scores it against the last
/// with [`prediction_error`], and picks the smallest error (the first on ties). Estimators
/// that fail are skipped; `None` when all fail or fewer than two whole periods are given.
/// `x` must hold whole periods (see `period::whole_periods`).
pub fn select_estimator(
    estimators: &[Estimator],
    x: &[f64],
    period: usize,
    interval: i64,
    planner: &mut RealFftPlanner<f64>,
) -> Option<Selection> {
    if period == 0 || x.len() < 2 * period {
        return None;
    }
    let (history, actual) = x.split_at(x.len() - period);
    let mut spectrum: Option<Result<Spectrum, EstimateError>> = None;
    let errors: Vec<Result<f64, EstimateError>> = estimators
        .iter()
        .map(|e| {
            let estimate = match e {
                Estimator::MaxValue(m) => m.estimate(history, period),
                Estimator::Fft(f) => {
                    match spectrum.get_or_insert_with(|| Spectrum::of(history, planner)) {
                        Ok(s) => f.estimate_from(s, period, interval),
                        Err(err) => Err(err.clone()),
                    }
                }
            };
            estimate.map(|est| prediction_error(actual, &est))
        })
        .collect();
    let mut best: Option<(usize, f64)> = None;
    for (i, e) in errors.iter().enumerate() {
        if let Ok(pe) = e {
            if best.is_none_or(|(_, b)| *pe < b) {
                best = Some((i, *pe));
            }
        }
    }
    best.map(|(index, _)| Selection { index, errors })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn daily(days: usize, per_day: usize, f: impl Fn(f64) -> f64) -> Vec<f64> {
        (0..days * per_day)
            .map(|i| f((i % per_day) as f64 / per_day as f64))
            .collect()
    }

    #[test]
    fn max_value_takes_the_per_phase_maximum_with_margin() {
        let x = [1.0, 5.0, 2.0, 4.0, 3.0, 1.0, 0.0, 1.0, 7.0];
        let e = MaxValueEstimator { margin: 0.5 };
        assert_eq!(e.estimate(&x, 3).unwrap(), vec![6.0, 7.5, 10.5]);
        // A leading partial period is ignored: phases are anchored at the end.
        assert_eq!(e.estimate(&x[1..], 3).unwrap(), vec![6.0, 4.5, 10.5]);
        assert_eq!(e.estimate(&x, 0), Err(EstimateError::EmptyPeriod));
        assert_eq!(
            e.estimate(&x[..2], 3),
            Err(EstimateError::TooShort { got: 2, period: 3 })
        );
    }

    #[test]
    fn amplitude_cut_follows_crane() {
        let ranked = [10.0, 8.0, 6.0, 4.0, 2.0, 0.5];
        let e = |min_items, max_items, la| FftEstimator {
            min_items,
            max_items,
            low_amplitude_threshold: la,
            ..FftEstimator::with_margin(0.0)
        };
        // max(S_4, 1.0) = 4, min(4, S_3 = 6) = 4.
        assert_eq!(e(3, 4, 1.0).amplitude_cut(&ranked), Some(4.0));
        // Fewer than maxItems: the last (0.5), raised to la = 1.0, then min with S_3.
        assert_eq!(e(3, 100, 1.0).amplitude_cut(&ranked), Some(1.0));
        // la above S_minItems: minItems wins, keeping the 3 strongest.
        assert_eq!(e(3, 100, 7.0).amplitude_cut(&ranked), Some(6.0));
        // minItems beyond the list: no lowering.
        assert_eq!(e(50, 100, 0.05).amplitude_cut(&ranked), Some(0.5));
        assert_eq!(e(0, 0, 0.0).amplitude_cut(&ranked), Some(0.5));
        assert_eq!(e(3, 4, 1.0).amplitude_cut(&[]), None);
    }

    #[test]
    fn fft_estimate_of_a_daily_sine_is_within_one_percent() {
        let x = daily(3, 1440, |p| {
            100.0 + 40.0 * (2.0 * std::f64::consts::PI * p).sin()
        });
        for e in default_estimators() {
            let Estimator::Fft(f) = e else { continue };
            let est = e.estimate(&x, 1440, 60).unwrap();
            assert_eq!(est.len(), 1440);
            for (i, v) in est.iter().enumerate() {
                let expected = x[2 * 1440 + i] * (1.0 + f.margin);
                assert!(
                    (v - expected).abs() <= 0.01 * expected,
                    "{e}: {i}: {v} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn fft_estimate_drops_weak_high_frequencies_and_floors_at_a_hundredth() {
        // A daily sine plus a tiny 2-minute ripple: the ripple is above 1/3600 Hz and weak.
        let x = daily(2, 1440, |p| {
            10.0 * (2.0 * std::f64::consts::PI * p).sin()
                + 0.01 * (std::f64::consts::PI * p * 1440.0).cos()
        });
        let e = FftEstimator {
            low_amplitude_threshold: 0.5,
            min_items: 1,
            ..FftEstimator::with_margin(0.0)
        };
        let est = Estimator::Fft(e).estimate(&x, 1440, 60).unwrap();
        for (i, v) in est.iter().enumerate() {
            let clean = 10.0 * (2.0 * std::f64::consts::PI * i as f64 / 1440.0).sin();
            let expected = if clean <= 0.0 { 0.01 } else { clean };
            if (clean.abs()) > 1e-6 {
                assert!((v - expected).abs() < 1e-6, "{i}: {v} vs {expected}");
            }
        }
    }

    #[test]
    fn crane_mirror_mode_halves_weak_low_frequency_components() {
        // DC 50, a strong daily sine (kept by amplitude), a weak 8-hour component (below the
        // cut but under the frequency threshold, so always kept).
        let weak = |p: f64| 0.5 * (2.0 * std::f64::consts::PI * 3.0 * p).cos();
        let x = daily(2, 1440, |p| {
            50.0 + 20.0 * (2.0 * std::f64::consts::PI * p).cos() + weak(p)
        });
        let base = FftEstimator {
            low_amplitude_threshold: 1.0,
            min_items: 1,
            max_items: 1,
            ..FftEstimator::with_margin(0.0)
        };
        let symmetric = Estimator::Fft(base).estimate(&x, 1440, 60).unwrap();
        let crane = Estimator::Fft(FftEstimator {
            mirror: MirrorBins::Crane,
            ..base
        })
        .estimate(&x, 1440, 60)
        .unwrap();
        for i in (0..1440).step_by(37) {
            let p = i as f64 / 1440.0;
            let full = 50.0 + 20.0 * (2.0 * std::f64::consts::PI * p).cos();
            assert!((symmetric[i] - (full + weak(p))).abs() < 1e-9, "{i}");
            assert!((crane[i] - (full + weak(p) / 2.0)).abs() < 1e-9, "{i}");
        }
    }

    #[test]
    fn prediction_error_is_asymmetric() {
        assert_eq!(prediction_error(&[10.0, 10.0], &[10.0, 10.0]), 0.0);
        // 10 % over: 0.1. 10 % under: −ln 0.9 / ln 1.25 ≈ 0.472.
        assert!((prediction_error(&[10.0], &[11.0]) - 0.1).abs() < 1e-12);
        let under = prediction_error(&[10.0], &[9.0]);
        assert!((under - 0.472_164).abs() < 1e-6, "{under}");
        assert!((prediction_error(&[10.0], &[5.0]) - 3.106_284).abs() < 1e-6);
        // An actual below 0.001 switches to the mean absolute error.
        assert_eq!(prediction_error(&[0.0, 10.0], &[1.0, 7.0]), 2.0);
        assert_eq!(prediction_error(&[10.0], &[0.0]), f64::INFINITY);
        assert_eq!(prediction_error(&[10.0], &[-1.0]), f64::INFINITY);
        assert_eq!(prediction_error(&[], &[]), f64::INFINITY);
        assert_eq!(prediction_error(&[1.0], &[1.0, 2.0]), f64::INFINITY);
    }

    #[test]
    fn selection_prefers_the_smallest_error_and_the_first_on_ties() {
        // A steady daily shape whose last day is 10 % higher: a margin of 0.10 fits exactly.
        let mut x = daily(3, 24, |p| {
            10.0 + 5.0 * (2.0 * std::f64::consts::PI * p).sin()
        });
        for v in &mut x[48..] {
            *v *= 1.1;
        }
        let estimators = [
            Estimator::MaxValue(MaxValueEstimator { margin: 0.0 }),
            Estimator::MaxValue(MaxValueEstimator { margin: 0.1 }),
            Estimator::MaxValue(MaxValueEstimator { margin: 0.1 }),
            Estimator::MaxValue(MaxValueEstimator { margin: 0.3 }),
        ];
        let s = select_estimator(&estimators, &x, 24, 3600, &mut RealFftPlanner::new()).unwrap();
        assert_eq!(s.index, 1);
        assert_eq!(s.errors.len(), 4);
        assert!(s.errors[1].as_ref().is_ok_and(|e| *e < 1e-12));
        assert!(
            select_estimator(&estimators, &x[..47], 24, 3600, &mut RealFftPlanner::new()).is_none()
        );
        assert!(select_estimator(&[], &x, 24, 3600, &mut RealFftPlanner::new()).is_none());
    }

    #[test]
    fn defaults_are_cranes_eight() {
        let d = default_estimators();
        assert_eq!(d.len(), 8);
        let Estimator::Fft(fifth) = d[4] else {
            panic!("FFT expected")
        };
        assert_eq!(
            (
                fifth.min_items,
                fifth.max_items,
                fifth.low_amplitude_threshold,
                fifth.margin
            ),
            (50, 100, 0.05, 0.01)
        );
        assert_eq!(fifth.high_frequency_threshold_hz, 1.0 / 3600.0);
    }
}
