//! Period detection (docs/prediction.md, "The DSP predictor"): FFT peaks that stand out against
//! shuffled copies of the signal are candidate periods; a candidate is accepted where the
//! autocorrelation has a local peak, and the strongest such peak wins. Only exactly one day
//! or one week counts as periodic.
//!
//! Deliberate difference from Crane: the shuffles draw from a `ChaCha8Rng` seeded by the
//! caller, so the same input always gives the same answer (Crane seeds from the clock).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use realfft::num_complex::Complex;
use serde::Serialize;

use super::spectrum::{Fft, ForwardF32, Planners, SpectrumError};

/// One day in seconds.
pub const DAY: i64 = 86_400;
/// One week in seconds.
pub const WEEK: i64 = 604_800;
/// How many shuffled copies set the power threshold (DSP step 2 in docs/prediction.md).
pub const SHUFFLES: usize = 100;
/// The threshold is the 99th smallest of the shuffled maxima, i.e. the second largest.
const THRESHOLD_RANK: usize = 98;
/// The autocorrelation peak test looks at most this far (seconds) either side (DSP step 2 in docs/prediction.md).
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

    /// `Day` for exactly 86400, `Week` for exactly 604800, otherwise `None` (DSP step 2 in docs/prediction.md: any other
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

/// Crane's `findPeriod` (DSP step 2, docs/prediction.md): analyses the last whole weeks when there are at least two (with no
/// fall-back to days), else the last whole days when there are at least two.
pub fn find_period(values: &[f64], interval: i64, seed: u64) -> PeriodSearch {
    find_period_with(values, interval, seed, &mut Planners::default())
}

/// [`find_period`] with plans that the caller reuses for later transforms.
pub(crate) fn find_period_with(
    values: &[f64],
    interval: i64,
    seed: u64,
    planners: &mut Planners,
) -> PeriodSearch {
    for window in [Period::Week, Period::Day] {
        let (x, m) = whole_periods(values, window.samples(interval));
        if m > 1 {
            let detected_secs = detect_period_with(x, interval, seed, planners)
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

/// Crane's `FindPeriod` (DSP step 2, docs/prediction.md): the period of `x` in samples, or `None` when no candidate passes.
/// `interval` (seconds per sample) sets the 4-hour radius of the peak test. A constant
/// series, or one with non-finite values, has no period.
pub fn detect_period(x: &[f64], interval: i64, seed: u64) -> Option<usize> {
    detect_period_with(x, interval, seed, &mut Planners::default())
}

/// [`detect_period`] with shared plans. The whole test runs on the standardized signal
/// `z = (x − mean)/σ`: for `k ≥ 1` its spectrum is `X_k/σ`, so comparing `|Z_k|` with the
/// threshold of shuffled `z` is Crane's comparison of `|X_k|` with the threshold of shuffled
/// `x`, scaled by `1/σ`; and `|Z|²` is what the autocorrelation needs.
fn detect_period_with(
    x: &[f64],
    interval: i64,
    seed: u64,
    planners: &mut Planners,
) -> Option<usize> {
    let n = x.len();
    if n < 4 || interval < 1 {
        return None;
    }
    let z = standardize(x)?;
    let threshold = match planners.shuffles.orders(n, seed) {
        Some(orders) => shuffled_power_threshold_from(&z, orders, &mut planners.f32).ok()?,
        None => shuffled_power_threshold(&z, &mut planners.f32, seed).ok()?,
    };
    let mut fft = Fft::new(&mut planners.f64, n).ok()?;
    let spectrum = fft.forward(&z).ok()?.to_vec();
    let hints = candidate_periods(&spectrum, n, threshold);
    if hints.is_empty() {
        return None;
    }
    let acf = acf_from_spectrum(&spectrum, &mut fft).ok()?;
    let radius = usize::try_from(PEAK_RADIUS_SECS / interval).unwrap_or(0);
    strongest_peak(&acf, &hints, radius)
}

/// DSP step 2 (docs/prediction.md), the threshold on its own: the power threshold of `x` for `seed`, in the units of `|X_k|`
/// (`None` for fewer than four samples, or a constant or non-finite signal).
pub fn power_threshold(x: &[f64], seed: u64) -> Option<f64> {
    if x.len() < 4 {
        return None;
    }
    let z = standardize(x)?;
    let threshold = shuffled_power_threshold(&z, &mut realfft::RealFftPlanner::new(), seed).ok()?;
    Some(threshold * population_sigma(x)?)
}

/// DSP step 2 (docs/prediction.md): shuffle a working copy of the standardized signal [`SHUFFLES`] times (the
/// shuffles accumulate, as in Crane), record each copy's largest spectral amplitude `|Z_k|`
/// over `k = 1 ..= ⌊N/2⌋ − 1`, and return the second largest of those maxima.
///
/// These spectra are computed in single precision. They only set a threshold that is random
/// by design: Crane's varies by a few percent from run to run with its clock seed, while
/// single precision moves it by about 1e-6 (see the test against double precision). The
/// shuffles and their FFTs are nearly all of the predictor's run time, and single precision
/// halves the FFTs' share. The signal is standardized first, so the precision does not
/// depend on the data's offset or scale (memory in bytes, say).
fn shuffled_power_threshold(
    z: &[f64],
    planner: &mut realfft::RealFftPlanner<f32>,
    seed: u64,
) -> Result<f64, SpectrumError> {
    let n = z.len();
    let mut fft = ForwardF32::new(planner, n)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut work: Vec<f32> = z.iter().map(|&v| v as f32).collect();
    let mut maxima = [0.0f64; SHUFFLES];
    for max in &mut maxima {
        shuffle(&mut work, &mut rng);
        fft.input_mut().copy_from_slice(&work);
        *max = max_amplitude(fft.transform()?, n);
    }
    maxima.sort_by(f64::total_cmp);
    Ok(maxima[THRESHOLD_RANK])
}

/// The shuffled copies' orders, at most this many positions in all (8 MB): a week of
/// one-minute samples takes about a million, and a longer or finer history is shuffled
/// directly instead. A cached series is thus at most 41,943 samples long, and its positions
/// are kept in 16 bits: gathering the copies reads the orders once per refit, 2 MB for a week
/// instead of 4.
const MAX_CACHED_POSITIONS: usize = 1 << 22;

/// The [`SHUFFLES`] accumulated shuffles of a series of one length for one seed, as orders: the
/// `k`-th shuffled copy of `z` holds `z[orders[k·n + i]]` at position `i`. Which positions a
/// shuffle swaps depends only on the generator and the length, never on the values, so a
/// predictor refitted on a history of the same length (every refit once the history is full)
/// gathers its shuffled copies from these orders instead of drawing them again: the same copies,
/// bit for bit, without the generator and the index arithmetic.
#[derive(Default)]
pub(crate) struct Shuffles {
    len: usize,
    seed: u64,
    orders: Vec<u16>,
}

impl Shuffles {
    /// The orders for `n` samples and `seed`, drawn once; `None` when they would take more than
    /// [`MAX_CACHED_POSITIONS`] or a position does not fit a `u16`.
    fn orders(&mut self, n: usize, seed: u64) -> Option<&[u16]> {
        let positions = n.checked_mul(SHUFFLES)?;
        if positions > MAX_CACHED_POSITIONS || n > usize::from(u16::MAX) + 1 {
            return None;
        }
        if self.len != n || self.seed != seed || self.orders.len() != positions {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut order: Vec<u16> = (0..n).filter_map(|i| u16::try_from(i).ok()).collect();
            self.orders.clear();
            self.orders.reserve(positions);
            for _ in 0..SHUFFLES {
                shuffle(&mut order, &mut rng);
                self.orders.extend_from_slice(&order);
            }
            self.len = n;
            self.seed = seed;
        }
        Some(&self.orders)
    }
}

/// [`shuffled_power_threshold`] with the shuffled copies gathered from `orders` (see
/// [`Shuffles`]).
fn shuffled_power_threshold_from(
    z: &[f64],
    orders: &[u16],
    planner: &mut realfft::RealFftPlanner<f32>,
) -> Result<f64, SpectrumError> {
    let n = z.len();
    let mut fft = ForwardF32::new(planner, n)?;
    let single: Vec<f32> = z.iter().map(|&v| v as f32).collect();
    let mut maxima = [0.0f64; SHUFFLES];
    for (max, order) in maxima.iter_mut().zip(orders.chunks_exact(n)) {
        for (slot, &from) in fft.input_mut().iter_mut().zip(order) {
            *slot = single.get(usize::from(from)).copied().unwrap_or(0.0);
        }
        *max = max_amplitude(fft.transform()?, n);
    }
    maxima.sort_by(f64::total_cmp);
    Ok(maxima[THRESHOLD_RANK])
}

/// Shuffles `values` uniformly at random in place (Fisher–Yates, Durstenfeld's order: position
/// `p` from the last down to 1 swaps with a `j` drawn from `[0, p]`).
///
/// The 100 shuffles and FFTs are nearly all of the predictor's run time, so the indices are
/// drawn in batches: one `u64` of generator output gives the indices of four consecutive
/// positions (for series under 65,536 samples), by Lemire's multiply-and-reject on the product
/// of their ranges, with no division (`batched_indices` explains why it is exact). rand's
/// `SliceRandom::shuffle` divides twice per index and measured about 1.8 times slower on
/// the 100 shuffles of an 8-day series.
pub fn shuffle<T>(values: &mut [T], rng: &mut ChaCha8Rng) {
    let mut bounds = [0u64; 3];
    let mut picks = [0u64; 3];
    let mut p = values.len();
    // Positions p−1, p−2, … pick from ranges of p, p−1, …; as many as fit one draw.
    while p > 1 {
        if (5..=65_535).contains(&p) {
            let [a, b, c, d] = four_indices(rng, p as u64);
            values.swap(p - 1, a);
            values.swap(p - 2, b);
            values.swap(p - 3, c);
            values.swap(p - 4, d);
            p -= 4;
            continue;
        }
        let top = p as u64;
        let k = match top {
            0..=2_097_151 => 3,
            2_097_152..=4_294_967_295 => 2,
            _ => 1,
        }
        .min(p - 1);
        for (t, bound) in bounds[..k].iter_mut().enumerate() {
            *bound = top - t as u64;
        }
        batched_indices(rng, &bounds[..k], &mut picks[..k]);
        for (t, &j) in picks[..k].iter().enumerate() {
            values.swap(p - 1 - t, j as usize);
        }
        p -= k;
    }
}

/// [`batched_indices`] for the four ranges `top, top − 1, top − 2, top − 3` (`5 ≤ top < 2^16`,
/// so their product fits in a `u64`), written out: the hot loop of [`shuffle`].
#[inline]
fn four_indices(rng: &mut ChaCha8Rng, top: u64) -> [usize; 4] {
    let bounds = [top, top - 1, top - 2, top - 3];
    let product = bounds[0] * bounds[1] * bounds[2] * bounds[3];
    loop {
        let m0 = u128::from(rng.next_u64()) * u128::from(bounds[0]);
        let m1 = u128::from(m0 as u64) * u128::from(bounds[1]);
        let m2 = u128::from(m1 as u64) * u128::from(bounds[2]);
        let m3 = u128::from(m2 as u64) * u128::from(bounds[3]);
        let rest = m3 as u64;
        if rest >= product || rest >= product.wrapping_neg() % product {
            return [m0, m1, m2, m3].map(|m| (m >> 64) as usize);
        }
    }
}

/// Uniform, independent `picks[t]` in `[0, bounds[t])` from one `u64` draw (rarely more). The
/// successive multiplications `r·b₁ = j₁·2⁶⁴ + r₁`, `r₁·b₂ = j₂·2⁶⁴ + r₂`, … give
/// `r·P = J·2⁶⁴ + r_k` with `P = b₁b₂…b_k` and `J = (…(j₁·b₂ + j₂)…)·b_k + j_k`: exactly
/// Lemire's multiply-and-reject for one integer in `[0, P)`, read as mixed-radix digits
/// (Brackett-Rozinsky & Lemire, "Batched ranged random integer generation", 2024). Rejecting
/// the draw when `r_k < 2⁶⁴ mod P` makes `J`, and so every digit, exactly uniform; the modulo
/// is only computed when `r_k < P`. The product must fit in a `u64`.
fn batched_indices(rng: &mut ChaCha8Rng, bounds: &[u64], picks: &mut [u64]) {
    let product = bounds.iter().fold(1u64, |p, &b| p.wrapping_mul(b));
    loop {
        let mut r = rng.next_u64();
        for (&bound, pick) in bounds.iter().zip(picks.iter_mut()) {
            let m = u128::from(r) * u128::from(bound);
            *pick = (m >> 64) as u64;
            r = m as u64;
        }
        if product == 0 || r >= product || r >= product.wrapping_neg() % product {
            return;
        }
    }
}

/// The largest `|X_k|` for `k = 1 ..= ⌊N/2⌋ − 1` (0 when there is no such bin), as the square
/// root of the largest `re² + im²`: one square root per spectrum instead of one per bin. Four
/// running maxima let the comparisons of neighbouring bins overlap.
fn max_amplitude(half: &[Complex<f32>], n: usize) -> f64 {
    let last = (n / 2).saturating_sub(1);
    let bins = half.get(1..=last).unwrap_or(&[]);
    let mut lanes = [0.0f32; 4];
    let chunks = bins.chunks_exact(4);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, c) in lanes.iter_mut().zip(chunk) {
            let square = c.norm_sqr();
            if square > *lane {
                *lane = square;
            }
        }
    }
    for c in rest {
        let square = c.norm_sqr();
        if square > lanes[0] {
            lanes[0] = square;
        }
    }
    f64::from(lanes.into_iter().fold(0.0, f32::max)).sqrt()
}

/// DSP step 2 (docs/prediction.md): for `k = 2 ..= ⌊N/2⌋ − 1` whose amplitude `|X_k|` of the (unshuffled) signal
/// exceeds `threshold`, the candidate period `⌊N/k⌋` samples, kept only when smaller than the
/// previous candidate, so the list strictly decreases. `half` is the half spectrum of a
/// signal of `n` samples. Amplitudes are `sqrt(re² + im²)`, as for the threshold, so the
/// comparison is like for like.
pub fn candidate_periods(half: &[Complex<f64>], n: usize, threshold: f64) -> Vec<usize> {
    let mut hints: Vec<usize> = Vec::new();
    let last = (n / 2).saturating_sub(1);
    for k in 2..=last {
        let Some(c) = half.get(k) else { break };
        if c.norm_sqr().sqrt() > threshold {
            let h = n / k;
            if hints.last().is_none_or(|&prev| prev > h) {
                hints.push(h);
            }
        }
    }
    hints
}

/// DSP step 2 (docs/prediction.md): the circular autocorrelation of the standardized signal,
/// `r[τ] = (1/N) Σ z_n z_{(n+τ) mod N}` with `z = (x − mean)/σ` (population σ), computed as
/// `Re(IFFT(|FFT(z)|²))/N`; `r[0] = 1`. `None` for an empty, constant or non-finite signal.
pub fn circular_acf(x: &[f64]) -> Option<Vec<f64>> {
    let z = standardize(x)?;
    let mut fft = Fft::with_len(x.len()).ok()?;
    let spectrum = fft.forward(&z).ok()?.to_vec();
    acf_from_spectrum(&spectrum, &mut fft).ok()
}

/// The circular autocorrelation from the half spectrum of the standardized signal.
fn acf_from_spectrum(spectrum: &[Complex<f64>], fft: &mut Fft) -> Result<Vec<f64>, SpectrumError> {
    let power: Vec<Complex<f64>> = spectrum
        .iter()
        .map(|c| Complex::new(c.norm_sqr(), 0.0))
        .collect();
    let n = fft.len() as f64;
    Ok(fft.inverse(&power)?.iter().map(|v| v / n).collect())
}

/// `(x − mean)/σ` with the population standard deviation; `None` when σ is zero or anything
/// is not finite.
fn standardize(x: &[f64]) -> Option<Vec<f64>> {
    let sigma = population_sigma(x)?;
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    Some(x.iter().map(|v| (v - mean) / sigma).collect())
}

/// The population standard deviation, when it is positive and finite.
fn population_sigma(x: &[f64]) -> Option<f64> {
    if x.is_empty() || !x.iter().all(|v| v.is_finite()) {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let sigma = (x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt();
    (sigma > 0.0 && sigma.is_finite()).then_some(sigma)
}

/// DSP step 2 (docs/prediction.md): among the candidates at which the autocorrelation peaks, the one with the
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

/// Crane's `isPeak` (DSP step 2, docs/prediction.md): the least-squares line through `(j, acf[j])` for
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
    fn shuffle_is_a_uniform_permutation() {
        // All 24 orders of four values, drawn 24,000 times: each about 1000 times.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..24_000 {
            let mut v = [0.0, 1.0, 2.0, 3.0];
            shuffle(&mut v, &mut rng);
            *counts.entry(v.map(|x| x as u8)).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 24);
        assert!(
            counts.values().all(|&c| (850..=1150).contains(&c)),
            "{counts:?}"
        );
        // Long inputs stay permutations, across the batch sizes.
        let mut long: Vec<f64> = (0..70_000).map(f64::from).collect();
        shuffle(&mut long, &mut rng);
        assert_ne!(
            long[..10],
            [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
        );
        long.sort_by(f64::total_cmp);
        assert!(long.iter().enumerate().all(|(i, &v)| v == i as f64));
        shuffle::<f64>(&mut [], &mut rng);
        shuffle(&mut [1.0], &mut rng);
    }

    #[test]
    fn batched_indices_are_uniform_digits() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let mut counts = [[0u32; 7]; 3];
        let mut picks = [0u64; 3];
        for _ in 0..21_000 {
            batched_indices(&mut rng, &[3, 5, 7], &mut picks);
            for (t, &p) in picks.iter().enumerate() {
                counts[t][p as usize] += 1;
            }
        }
        for (t, bound) in [3usize, 5, 7].into_iter().enumerate() {
            let expected = 21_000 / bound as u32;
            assert!(
                counts[t][..bound]
                    .iter()
                    .all(|&c| c.abs_diff(expected) < expected / 10),
                "{counts:?}"
            );
            assert!(counts[t][bound..].iter().all(|&c| c == 0), "{counts:?}");
        }
    }

    #[test]
    fn single_precision_threshold_matches_double_precision() {
        // The same shuffles in double precision, max |Z_k| by hypot, as Crane computes it.
        let z = standardize(&sine(3, 86_400.0, 25.0, 21)).unwrap();
        let mut fft = Fft::with_len(z.len()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut work = z.clone();
        let mut maxima: Vec<f64> = (0..SHUFFLES)
            .map(|_| {
                shuffle(&mut work, &mut rng);
                let half = fft.forward(&work).unwrap();
                half[1..z.len() / 2]
                    .iter()
                    .map(|c| c.norm())
                    .fold(0.0, f64::max)
            })
            .collect();
        maxima.sort_by(f64::total_cmp);
        let exact = maxima[THRESHOLD_RANK];
        let single = shuffled_power_threshold(&z, &mut realfft::RealFftPlanner::new(), 8).unwrap();
        assert!(
            ((single - exact) / exact).abs() < 1e-5,
            "{single} vs {exact}"
        );
    }

    #[test]
    fn shuffles_gathered_from_cached_orders_give_the_threshold_drawn_directly() {
        let x = sine(3, 86_400.0, 10.0, 4);
        let z = standardize(&x).unwrap();
        let mut planner = realfft::RealFftPlanner::new();
        let mut cache = Shuffles::default();
        for seed in [5, 6, 5] {
            let direct = shuffled_power_threshold(&z, &mut planner, seed).unwrap();
            let orders = cache.orders(z.len(), seed).unwrap();
            let gathered = shuffled_power_threshold_from(&z, orders, &mut planner).unwrap();
            assert_eq!(gathered.to_bits(), direct.to_bits(), "seed {seed}");
        }
        // Another length draws its own orders.
        let shorter = &z[..z.len() - 7];
        let direct = shuffled_power_threshold(shorter, &mut planner, 5).unwrap();
        let orders = cache.orders(shorter.len(), 5).unwrap();
        let gathered = shuffled_power_threshold_from(shorter, orders, &mut planner).unwrap();
        assert_eq!(gathered.to_bits(), direct.to_bits());
        // Too long a series to cache is shuffled directly.
        assert!(cache.orders(MAX_CACHED_POSITIONS, 5).is_none());
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
