//! `f64::round` without the library call. Without SSE4.1 (not in the baseline x86-64 target)
//! `round` is a call into libm, and the replay rounds every pod's usage at every scrape and
//! each decision's accuracy figures: about 2% of a replay went into the calls.

/// Rounds half away from zero: the same value as [`f64::round`], bit for bit (signed zeros,
/// NaN and infinities included).
#[inline]
pub fn round(v: f64) -> f64 {
    // From 2^52 up every double is a whole number.
    const WHOLE_FROM: f64 = 4_503_599_627_370_496.0;
    if v.is_nan() || v.abs() >= WHOLE_FROM {
        return v;
    }
    // Below 2^52 the cast truncates exactly, and the fraction `v − t` is exact.
    let t = v as i64 as f64;
    let fraction = v - t;
    let rounded = if fraction >= 0.5 {
        t + 1.0
    } else if fraction <= -0.5 {
        t - 1.0
    } else {
        t
    };
    // `round` keeps the sign: -0.3 rounds to -0.0.
    rounded.copysign(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(v: f64) {
        let (ours, std) = (round(v), v.round());
        assert!(
            ours.to_bits() == std.to_bits() || (ours.is_nan() && std.is_nan()),
            "{v:e}: {ours:e} against {std:e}"
        );
    }

    #[test]
    fn equals_the_library_round_at_the_edges() {
        let half_below = 0.5 - f64::EPSILON / 4.0; // 0.49999999999999994
        let edges = [
            0.0,
            0.5,
            half_below,
            1.5,
            2.5,
            1.0 - f64::EPSILON / 2.0,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            4_503_599_627_370_497.0,
            9.223_372_036_854_776e18,
            1e300,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
        ];
        for v in edges {
            same(v);
            same(-v);
        }
    }

    #[test]
    fn equals_the_library_round_on_a_sweep() {
        // Quarter steps land on and beside every half; the odd scale lands everywhere else.
        for i in -40_000i32..40_000 {
            same(f64::from(i) / 4.0);
            same(f64::from(i) * 0.123_456_789);
            same(f64::from(i) * 1_234.567_891);
        }
        let mut v = 1e-3;
        while v < 1e17 {
            same(v);
            same(-v);
            same(v + 0.5);
            v *= 1.37;
        }
    }
}
