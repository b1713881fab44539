//! Period detection (reference `prediction-dsp.md` §4): FFT peaks that stand out against
//! shuffled copies of the signal are candidate periods; a candidate is accepted where the
//! autocorrelation has a local peak, and the strongest such peak wins. Only exactly one day
//! or one week counts as periodic.
//!
//! Deliberate difference from Crane: the shuffles draw from a `ChaCha8Rng` seeded by the
//! caller, so the same input always gives the same answer (Crane seeds from the clock).

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use realfft::num_complex::Complex;
use realfft::RealFftPlanner;
use serde::Serialize;

use super::spectrum::{Fft, SpectrumError};

/// One day in seconds.
pub const DAY: i64 = 86_400;
/// One week in seconds.
pub const WEEK: i64 = 604_800;
/// How many shuffled copies set the power threshold (§4.2 step 1).
pub const SHUFFLES: usize = 100;
/// The threshold is the 99th smallest of the shuffled maxima, i.e. the second largest.
const THRESHOLD_RANK: usize = 98;
/// The autocorrelation peak test looks at most this far (seconds) either side (§4.2 step 4).
const PEAK_RADIUS_SECS: i64 = 4 * 3600;

/// The periods the DSP predictor accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    /// 86400 seconds.
    Day,
    /// 604800 seconds.
    Week,
}

impl Period {
    /// The period in seconds.
    pub fn seconds(self) -> i64 {
        match self {
            Period::Day => DAY,
            Period::Week => WEEK,
        }
    }

    /// `Day` for exactly 86400, `Week` for exactly 604800, otherwise `None` (§4.1: any other
    /// period, such as 12 h, counts as not periodic).
    pub fn from_seconds(seconds: i64) -> Option<Self> {
        match seconds {
            DAY => Some(Period::Day),
            WEEK => Some(Period::Week),
            _ => None,
        }
    }

    /// Samples in one period at `interval` seconds per sample, `P(d) = ⌊d / Δ⌋`; 0 for an
    /// interval that is not positive.
    pub fn samples(self, interval: i64) -> usize {
        if interval < 1 {
            return 0;
        }
        usize::try_from(self.seconds() / interval).unwrap_or(0)
    }
}

/// Crane's `Truncate(d)`: the most recent `m` whole periods of `period_samples` each, and `m`.
pub fn whole_periods(values: &[f64], period_samples: usize) -> (&[f64], usize) {
    if period_samples == 0 {
        return (&[], 0);
    }
    let m = values.len() / period_samples;
    (&values[values.len() - m * period_samples..], m)
}

/// What [`find_period`] looked at and found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PeriodSearch {
    /// The window analysed: the whole weeks when there are at least two, else the whole days
    /// when there are at least two, else none (too short).
    pub window: Option<Period>,
    /// How many samples that window holds.
    pub window_samples: usize,
    /// The period the detector returned, in seconds, whatever it is.
    pub detected_secs: Option<i64>,
}

impl PeriodSearch {
    /// The accepted period: the detected one when it is exactly a day or a week.
    pub fn period(&self) -> Option<Period> {
        self.detected_secs.and_then(Period::from_seconds)
    }
}

/// §4.1 `findPeriod`: analyses the last whole weeks when there are at least two (with no
/// fall-back to days), else the last whole days when there are at least two.
pub fn find_period(values: &[f64], interval: i64, seed: u64) -> PeriodSearch {
    find_period_with(values, interval, seed, &mut RealFftPlanner::new())
}

/// [`find_period`] with a planner that the caller reuses for later transforms.
pub(crate) fn find_period_with(
    values: &[f64],
    interval: i64,
    seed: u64,
    planner: &mut RealFftPlanner<f64>,
) -> PeriodSearch {
    for window in [Period::Week, Period::Day] {
        let (x, m) = whole_periods(values, window.samples(interval));
        if m > 1 {
            let detected_secs = detect_period_with(x, interval, seed, planner)
                .and_then(|h| i64::try_from(h).ok())
                .and_then(|h| h.checked_mul(interval));
            return PeriodSearch {
                window: Some(window),
                window_samples: x.len(),
                detected_secs,
            };
        }
    }
    PeriodSearch {
        window: None,
        window_samples: 0,
        detected_secs: None,
    }
}

/// §4.2 `FindPeriod`: the period of `x` in samples, or `None` when no candidate passes.
/// `interval` (seconds per sample) sets the 4-hour radius of the peak test. A constant
/// series, or one with non-finite values, has no period.
pub fn detect_period(x: &[f64], interval: i64, seed: u64) -> Option<usize> {
    detect_period_with(x, interval, seed, &mut RealFftPlanner::new())
}

fn detect_period_with(
    x: &[f64],
    interval: i64,
    seed: u64,
    planner: &mut RealFftPlanner<f64>,
) -> Option<usize> {
    let n = x.len();
    if n < 4 || interval < 1 {
        return None;
    }
    let acf_input = standardize(x)?;
    let mut fft = Fft::new(planner, n).ok()?;
    let threshold = shuffled_power_threshold(x, &mut fft, seed).ok()?;
    let hints = candidate_periods(fft.forward(x).ok()?, n, threshold);
    if hints.is_empty() {
        return None;
    }
    let acf = circular_acf_of_standardized(&acf_input, &mut fft).ok()?;
    let radius = usize::try_from(PEAK_RADIUS_SECS / interval).unwrap_or(0);
    strongest_peak(&acf, &hints, radius)
}

/// §4.2 step 1 on its own: the power threshold of `x` for `seed` (`None` for fewer than four
/// samples).
pub fn power_threshold(x: &[f64], seed: u64) -> Option<f64> {
    if x.len() < 4 {
        return None;
    }
    let mut fft = Fft::with_len(x.len()).ok()?;
    shuffled_power_threshold(x, &mut fft, seed).ok()
}

/// §4.2 step 1: shuffle a working copy [`SHUFFLES`] times (the shuffles accumulate, as in
/// Crane), record each copy's largest spectral amplitude `|X_k|` over `k = 1 ..= ⌊N/2⌋ − 1`,
/// and return the second largest of those maxima.
///
/// The shuffles dominate the predictor's run time together with the FFTs. rand's Fisher–Yates
/// draws two indices per `u32` of generator output for signals of this size; a shuffle
/// written straight into the FFT buffer (saving the copy) was measured slower, because it
/// needs a fresh `u32` per index.
fn shuffled_power_threshold(x: &[f64], fft: &mut Fft, seed: u64) -> Result<f64, SpectrumError> {
    let n = x.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut work = x.to_vec();
    let mut maxima = [0.0f64; SHUFFLES];
    for max in &mut maxima {
        work.shuffle(&mut rng);
        fft.input_mut().copy_from_slice(&work);
        *max = max_amplitude(fft.forward_input()?, n);
    }
    maxima.sort_by(f64::total_cmp);
    Ok(maxima[THRESHOLD_RANK])
}

/// The largest `|X_k|` for `k = 1 ..= ⌊N/2⌋ − 1` (0 when there is no such bin). Compares
/// squared magnitudes and takes one `hypot` at the end: the same bin, without a square
/// root per bin.
fn max_amplitude(half: &[Complex<f64>], n: usize) -> f64 {
    let last = (n / 2).saturating_sub(1);
    let bins = half.get(1..=last).unwrap_or(&[]);
    let mut best: Option<&Complex<f64>> = None;
    let mut best_sq = f64::NEG_INFINITY;
    for c in bins {
        let sq = c.norm_sqr();
        if sq > best_sq {
            best_sq = sq;
            best = Some(c);
        }
    }
    best.map_or(0.0, |c| c.norm())
}

/// §4.2 step 2: for `k = 2 ..= ⌊N/2⌋ − 1` whose amplitude `|X_k|` of the (unshuffled) signal
/// exceeds `threshold`, the candidate period `⌊N/k⌋` samples, kept only when smaller than the
/// previous candidate, so the list strictly decreases. `half` is the half spectrum of a
/// signal of `n` samples.
pub fn candidate_periods(half: &[Complex<f64>], n: usize, threshold: f64) -> Vec<usize> {
    let mut hints: Vec<usize> = Vec::new();
    let last = (n / 2).saturating_sub(1);
    for k in 2..=last {
        let Some(c) = half.get(k) else { break };
        if c.norm() > threshold {
            let h = n / k;
            if hints.last().is_none_or(|&prev| prev > h) {
                hints.push(h);
            }
        }
    }
    hints
}

/// §4.2 step 3: the circular autocorrelation of the standardized signal,
/// `r[τ] = (1/N) Σ z_n z_{(n+τ) mod N}` with `z = (x − mean)/σ` (population σ), computed as
/// `Re(IFFT(|FFT(z)|²))/N`; `r[0] = 1`. `None` for an empty, constant or non-finite signal.
pub fn circular_acf(x: &[f64]) -> Option<Vec<f64>> {
    let z = standardize(x)?;
    let mut fft = Fft::with_len(x.len()).ok()?;
    circular_acf_of_standardized(&z, &mut fft).ok()
}

fn circular_acf_of_standardized(z: &[f64], fft: &mut Fft) -> Result<Vec<f64>, SpectrumError> {
    let power: Vec<Complex<f64>> = fft
        .forward(z)?
        .iter()
        .map(|c| Complex::new(c.norm_sqr(), 0.0))
        .collect();
    let n = z.len() as f64;
    Ok(fft.inverse(&power)?.iter().map(|v| v / n).collect())
}

/// `(x − mean)/σ` with the population standard deviation; `None` when σ is zero or anything
/// is not finite.
fn standardize(x: &[f64]) -> Option<Vec<f64>> {
    if x.is_empty() || !x.iter().all(|v| v.is_finite()) {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let variance = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let sigma = variance.sqrt();
    if !(sigma > 0.0 && sigma.is_finite()) {
        return None;
    }
    Some(x.iter().map(|v| (v - mean) / sigma).collect())
}

/// §4.2 steps 4–5: among the candidates at which the autocorrelation peaks, the one with the
/// largest `r[h]`, which must be positive; the earliest wins ties.
fn strongest_peak(acf: &[f64], hints: &[usize], radius: usize) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut best_r = 0.0;
    for &h in hints {
        let r = radius.min(h / 2);
        if is_peak(acf, h, r) {
            if let Some(&value) = acf.get(h) {
                if value > best_r {
                    best_r = value;
                    best = Some(h);
                }
            }
        }
    }
    best
}

/// §4.2 step 4 `isPeak`: the least-squares line through `(j, acf[j])` for
/// `j ∈ [h − radius, h]` rises and the one for `j ∈ [h, h + radius]` falls (both clipped to
/// the series). False for `h < 1`, `h > N − 1`, or a side with fewer than two points.
pub fn is_peak(acf: &[f64], h: usize, radius: usize) -> bool {
    let n = acf.len();
    if h < 1 || h + 1 > n {
        return false;
    }
    let left = h.saturating_sub(radius)..=h;
    let right = h..=h.saturating_add(radius).min(n - 1);
    let rising = ols_slope(left.map(|j| (j as f64, acf[j]))).is_some_and(|a| a > 0.0);
    rising && ols_slope(right.map(|j| (j as f64, acf[j]))).is_some_and(|a| a < 0.0)
}

/// The slope `a` of the least-squares line `y = a·x + b`, by Crane's formula
/// `(nΣxy − ΣxΣy)/(nΣx² − (Σx)²)`; `None` for fewer than two points or a vertical fit.
pub fn ols_slope(points: impl IntoIterator<Item = (f64, f64)>) -> Option<f64> {
    let (mut n, mut sx, mut sy, mut sxy, mut sxx) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (x, y) in points {
        n += 1.0;
        sx += x;
        sy += y;
        sxy += x * y;
        sxx += x * x;
    }
    let denominator = n * sxx - sx * sx;
    if n < 2.0 || denominator == 0.0 {
        return None;
    }
    Some((n * sxy - sx * sy) / denominator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    const MINUTE: i64 = 60;

    fn sine(days: usize, period_secs: f64, noise: f64, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..days * 1440)
            .map(|i| {
                let t = i as f64 * 60.0;
                100.0
                    + 40.0 * (2.0 * std::f64::consts::PI * t / period_secs).sin()
                    + noise * (rng.random::<f64>() - 0.5)
            })
            .collect()
    }

    #[test]
    fn a_daily_sine_is_daily() {
        let x = sine(4, 86_400.0, 0.0, 0);
        let search = find_period(&x, MINUTE, 1);
        assert_eq!(search.window, Some(Period::Day));
        assert_eq!(search.window_samples, 4 * 1440);
        assert_eq!(search.detected_secs, Some(DAY));
        assert_eq!(search.period(), Some(Period::Day));
    }

    #[test]
    fn a_noisy_daily_sine_is_daily_for_every_seed() {
        let x = sine(3, 86_400.0, 30.0, 9);
        for seed in 0..4 {
            assert_eq!(
                find_period(&x, MINUTE, seed).period(),
                Some(Period::Day),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn a_weekly_pattern_with_two_weeks_is_weekly() {
        // Busy weekdays, quiet weekends; no daily shape at all.
        let x: Vec<f64> = (0..14 * 1440)
            .map(|i| if (i / 1440) % 7 < 5 { 100.0 } else { 20.0 })
            .collect();
        let search = find_period(&x, MINUTE, 3);
        assert_eq!(search.window, Some(Period::Week));
        assert_eq!(search.period(), Some(Period::Week));
    }

    #[test]
    fn white_noise_is_not_periodic() {
        for seed in 0..3 {
            let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
            let x: Vec<f64> = (0..3 * 1440).map(|_| rng.random::<f64>()).collect();
            assert_eq!(find_period(&x, MINUTE, seed).period(), None, "seed {seed}");
        }
    }

    #[test]
    fn a_twelve_hour_sine_is_found_but_not_accepted() {
        let x = sine(3, 43_200.0, 0.0, 0);
        let search = find_period(&x, MINUTE, 1);
        assert_eq!(search.detected_secs, Some(43_200));
        assert_eq!(search.period(), None);
    }

    #[test]
    fn short_constant_and_degenerate_series_are_not_periodic() {
        assert_eq!(
            find_period(&[], MINUTE, 0),
            PeriodSearch {
                window: None,
                window_samples: 0,
                detected_secs: None
            }
        );
        assert_eq!(find_period(&vec![1.0; 2879], MINUTE, 0).window, None);
        assert_eq!(
            find_period(&vec![5.0; 3 * 1440], MINUTE, 0).detected_secs,
            None
        );
        assert_eq!(
            detect_period(&[1.0, f64::NAN, 2.0, 3.0, 1.0], MINUTE, 0),
            None
        );
        assert_eq!(detect_period(&[1.0, 2.0, 3.0], MINUTE, 0), None);
        assert_eq!(find_period(&[1.0; 10], 0, 0).window, None);
        assert_eq!(Period::Day.samples(0), 0);
        assert_eq!(whole_periods(&[1.0, 2.0], 0), (&[][..], 0));
    }

    #[test]
    fn whole_periods_keeps_the_most_recent_ones() {
        let x: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(whole_periods(&x, 3), (&x[1..], 3));
        assert_eq!(whole_periods(&x, 11), (&x[10..], 0));
    }

    #[test]
    fn threshold_is_deterministic_per_seed() {
        let x = sine(2, 86_400.0, 10.0, 4);
        assert_eq!(power_threshold(&x, 5), power_threshold(&x, 5));
        assert_ne!(power_threshold(&x, 5), power_threshold(&x, 6));
        assert_eq!(power_threshold(&x[..3], 5), None);
    }

    #[test]
    fn candidates_are_strictly_decreasing_periods_above_the_threshold() {
        let n = 100;
        let mut half = vec![Complex::new(0.0, 0.0); n / 2 + 1];
        for k in [1, 2, 3, 33, 34, 49, 50] {
            half[k] = Complex::new(3.0, 4.0); // |X| = 5
        }
        // k = 1 and k = N/2 are never candidates; 100/33 = 3 = 100/34 keeps one.
        assert_eq!(candidate_periods(&half, n, 4.9), vec![50, 33, 3, 2]);
        assert_eq!(candidate_periods(&half, n, 5.0), Vec::<usize>::new());
        assert_eq!(candidate_periods(&half[..2], n, 0.0), Vec::<usize>::new());
    }

    #[test]
    fn acf_of_a_sine_peaks_at_its_period() {
        let x: Vec<f64> = (0..400)
            .map(|i| (2.0 * std::f64::consts::PI * i as f64 / 50.0).sin())
            .collect();
        let r = circular_acf(&x).unwrap();
        assert!((r[0] - 1.0).abs() < 1e-12);
        assert!((r[50] - 1.0).abs() < 1e-9);
        assert!((r[25] + 1.0).abs() < 1e-9);
        assert!(is_peak(&r, 50, 10));
        assert!(!is_peak(&r, 25, 10));
        assert!(!is_peak(&r, 40, 10));
        assert!(!is_peak(&r, 0, 10));
        assert!(!is_peak(&r, 400, 10));
        assert!(!is_peak(&r, 50, 0));
        assert_eq!(circular_acf(&[2.0; 8]), None);
    }

    #[test]
    fn ols_slope_matches_hand_computation() {
        assert_eq!(ols_slope([(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]), Some(2.0));
        assert_eq!(ols_slope([(0.0, 1.0), (1.0, 0.0), (2.0, 2.0)]), Some(0.5));
        assert_eq!(ols_slope([(1.0, 1.0)]), None);
        assert_eq!(ols_slope([(1.0, 1.0), (1.0, 2.0)]), None);
    }
}
