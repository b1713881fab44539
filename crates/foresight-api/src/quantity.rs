//! Kubernetes resource quantities (`"500m"`, `"2Gi"`, `"1e3"`).
//!
//! The decision core works on milli-values, exactly as Kubernetes' `Quantity::MilliValue()`
//! does: the value times one thousand, rounded away from zero to an integer. Values beyond
//! the range of `i64` saturate instead of wrapping (Kubernetes wraps; no real metric gets
//! there, and a saturated value keeps the arithmetic downstream well defined).

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A quantity as written by the user, kept verbatim so that a manifest round-trips unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Quantity(pub String);

/// Why a quantity string was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)]
pub struct QuantityError;

impl Quantity {
    /// A quantity of `milli` thousandths, in Kubernetes' canonical decimal form.
    pub fn from_milli(milli: i64) -> Self {
        Quantity(format_milli(milli))
    }

    /// A quantity of `milli` thousandths in Kubernetes' canonical binary form (`BinarySI`:
    /// `100Mi`, `1536Ki`), as Kubernetes 1.34+ writes memory in status. Like Kubernetes, a
    /// value under 1024 or with a fraction is written in the decimal form instead.
    pub fn from_milli_binary(milli: i64) -> Self {
        Quantity(format_milli_binary(milli))
    }

    /// The value in thousandths, rounded away from zero (Kubernetes `MilliValue()`).
    pub fn milli_value(&self) -> Result<i64, QuantityError> {
        parse(&self.0).map(|p| p.scaled(3))
    }

    /// The value as a float, for knobs such as tolerance (Kubernetes `AsApproximateFloat64()`).
    pub fn as_f64(&self) -> Result<f64, QuantityError> {
        parse(&self.0).map(|p| p.approximate())
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Quantity {
    fn from(s: &str) -> Self {
        Quantity(s.to_owned())
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Kubernetes accepts `averageValue: 100` as well as `averageValue: "100"`.
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a quantity (string or number)")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity(v.to_owned()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The schema of an int-or-string quantity: the marker alone, the form the API server
/// documents (a `type` or an `anyOf` beside it is not needed, and not every reader accepts it).
impl JsonSchema for Quantity {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Quantity".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A Kubernetes quantity, e.g. \"500m\", \"2\", \"1Gi\".",
            "x-kubernetes-int-or-string": true
        })
    }
}

/// A parsed quantity: `sign * mantissa * 10^exp10 * 1024^pow1024`.
#[derive(Debug, Clone, Copy)]
struct Parsed {
    negative: bool,
    mantissa: u128,
    exp10: i32,
    pow1024: u32,
    /// Digits dropped because the mantissa would not fit; they only matter for rounding.
    truncated: bool,
}

impl Parsed {
    /// `value * 10^scale`, rounded away from zero, saturated to `i64`.
    fn scaled(&self, scale: i32) -> i64 {
        let mut num: u128 = self.mantissa;
        let mut inexact = self.truncated;
        let mut saturated = false;
        for _ in 0..self.pow1024 {
            match num.checked_mul(1024) {
                Some(v) => num = v,
                None => saturated = true,
            }
        }
        let exp = self.exp10.saturating_add(scale);
        if exp >= 0 {
            for _ in 0..exp.min(64) {
                match num.checked_mul(10) {
                    Some(v) => num = v,
                    None => {
                        saturated = true;
                        break;
                    }
                }
            }
            if exp > 64 && num != 0 {
                saturated = true;
            }
        } else {
            for _ in 0..(-(exp as i64)).min(64) {
                if !num.is_multiple_of(10) {
                    inexact = true;
                }
                num /= 10;
            }
            if exp < -64 && num != 0 {
                inexact = true;
                num = 0;
            }
            if inexact {
                num = num.saturating_add(1);
            }
        }
        if self.mantissa == 0 && !self.truncated {
            return 0;
        }
        let magnitude = if saturated || num > i64::MAX as u128 {
            i64::MAX as u128
        } else {
            num
        };
        let v = magnitude as i64;
        if self.negative {
            -v
        } else {
            v
        }
    }

    fn approximate(&self) -> f64 {
        let m = self.mantissa as f64 * 1024f64.powi(self.pow1024 as i32) * 10f64.powi(self.exp10);
        if self.negative {
            -m
        } else {
            m
        }
    }
}

fn parse(s: &str) -> Result<Parsed, QuantityError> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        negative = b[i] == b'-';
        i += 1;
    }
    let mut mantissa: u128 = 0;
    let mut exp10: i32 = 0;
    let mut digits = 0usize;
    let mut truncated = false;
    let mut seen_dot = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            digits += 1;
            let d = (c - b'0') as u128;
            match mantissa.checked_mul(10).and_then(|m| m.checked_add(d)) {
                Some(m) if !truncated => {
                    mantissa = m;
                    if seen_dot {
                        exp10 -= 1;
                    }
                }
                _ => {
                    // Keep the magnitude; the dropped digit only affects rounding.
                    if d != 0 {
                        truncated = true;
                    }
                    if !seen_dot {
                        exp10 = exp10.saturating_add(1);
                    }
                }
            }
        } else if c == b'.' && !seen_dot {
            seen_dot = true;
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return Err(QuantityError);
    }
    let suffix = &s[i..];
    let (extra_exp, pow1024) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 1),
        "Mi" => (0, 2),
        "Gi" => (0, 3),
        "Ti" => (0, 4),
        "Pi" => (0, 5),
        "Ei" => (0, 6),
        _ => {
            let rest = suffix.strip_prefix(['e', 'E']).ok_or(QuantityError)?;
            let (neg, digits) = match rest.as_bytes().first() {
                Some(b'-') => (true, &rest[1..]),
                Some(b'+') => (false, &rest[1..]),
                _ => (false, rest),
            };
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return Err(QuantityError);
            }
            let e: i32 = digits
                .parse::<i64>()
                .map(|v| v.clamp(-10_000, 10_000) as i32)
                .unwrap_or(10_000);
            (if neg { -e } else { e }, 0)
        }
    };
    Ok(Parsed {
        negative,
        mantissa,
        exp10: exp10.saturating_add(extra_exp),
        pow1024,
        truncated,
    })
}

/// Formats a milli-value the way Kubernetes prints `NewMilliQuantity(v, BinarySI)`: a whole
/// number of bytes from 1024 on folds its factors of 1024 into `Ki` … `Ei`; anything else is
/// printed as [`format_milli`] prints it.
pub fn format_milli_binary(milli: i64) -> String {
    const SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    // Kubernetes' CanonicalizeBytes: small or fractional values stay decimal.
    if milli % 1000 != 0 || (-1_024_000 < milli && milli < 1_024_000) {
        return format_milli(milli);
    }
    let mut amount = milli / 1000;
    let mut exponent = 0;
    while amount % 1024 == 0 && exponent + 1 < SUFFIXES.len() {
        amount /= 1024;
        exponent += 1;
    }
    let mut buf = itoa::Buffer::new();
    let mut out = buf.format(amount).to_owned();
    out.push_str(SUFFIXES[exponent]);
    out
}

/// Formats a milli-value the way Kubernetes prints `NewMilliQuantity(v, DecimalSI)`:
/// trailing zeros are folded into the largest SI suffix that keeps the number whole.
pub fn format_milli(milli: i64) -> String {
    if milli == 0 {
        return "0".to_owned();
    }
    let negative = milli < 0;
    let mut amount = milli.unsigned_abs() as u128;
    let mut exponent: i32 = -3;
    while amount >= 10 && amount.is_multiple_of(10) {
        amount /= 10;
        exponent += 1;
    }
    match exponent.rem_euclid(3) {
        1 => {
            amount *= 10;
            exponent -= 1;
        }
        2 => {
            amount *= 100;
            exponent -= 2;
        }
        _ => {}
    }
    let suffix = match exponent {
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => return format!("{}{}e{}", if negative { "-" } else { "" }, amount, exponent),
    };
    // Runs for every metric of every decision: format without the `fmt` machinery.
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(amount);
    let mut out = String::with_capacity(digits.len() + 3);
    if negative {
        out.push('-');
    }
    out.push_str(digits);
    out.push_str(suffix);
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn binary_form_folds_powers_of_1024_and_keeps_small_or_fractional_values_decimal() {
        for (milli, text) in [
            (104_857_600_000, "100Mi"),
            (1_572_864_000, "1536Ki"),
            (1_073_741_824_000, "1Gi"),
            (1_024_000, "1Ki"),
            (1_023_000, "1023"),
            (1_500_000, "1500"),
            (104_857_600_500, "104857600500m"),
            (-2_097_152_000, "-2Mi"),
            (0, "0"),
        ] {
            assert_eq!(format_milli_binary(milli), text, "{milli}");
            assert_eq!(Quantity::from_milli_binary(milli).milli_value(), Ok(milli));
        }
    }

    use super::*;
    use proptest::prelude::*;

    fn milli(s: &str) -> i64 {
        Quantity::from(s).milli_value().unwrap()
    }

    #[test]
    fn milli_values_match_kubernetes() {
        assert_eq!(milli("1"), 1000);
        assert_eq!(milli("500m"), 500);
        assert_eq!(milli("1.5"), 1500);
        assert_eq!(milli("0.0001"), 1, "rounds up");
        assert_eq!(milli("-0.0001"), -1, "rounds away from zero");
        assert_eq!(milli("1Ki"), 1_024_000);
        assert_eq!(milli("1e3"), 1_000_000);
        assert_eq!(milli("1E-3"), 1);
        assert_eq!(milli("2k"), 2_000_000);
        assert_eq!(milli("100n"), 1);
        assert_eq!(milli("+3"), 3000);
        assert_eq!(milli(".5"), 500);
        assert_eq!(milli("5."), 5000);
        assert_eq!(milli("0"), 0);
        assert_eq!(
            milli("9999999999999999999999999999999999999999999"),
            i64::MAX
        );
        assert_eq!(
            milli("1Ei"),
            i64::MAX,
            "1Ei in milli overflows i64 and saturates"
        );
    }

    #[test]
    fn rejects_malformed() {
        for s in ["", "m", "1x", "1.2.3", "--1", "1e", "1Kii", " 1", "1 "] {
            assert!(
                Quantity::from(s).milli_value().is_err(),
                "{s:?} must be rejected"
            );
        }
    }

    #[test]
    fn formats_canonically() {
        assert_eq!(format_milli(23483), "23483m");
        assert_eq!(format_milli(20000), "20");
        assert_eq!(format_milli(2_000_000), "2k");
        assert_eq!(format_milli(1500), "1500m");
        assert_eq!(format_milli(100), "100m");
        assert_eq!(format_milli(10), "10m");
        assert_eq!(format_milli(0), "0");
        assert_eq!(format_milli(-250), "-250m");
        assert_eq!(format_milli(1_200_000), "1200");
        assert_eq!(format_milli(i64::MAX), "9223372036854775807m");
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in ".*") {
            let _ = Quantity(s).milli_value();
        }

        #[test]
        fn format_round_trips(v in any::<i64>()) {
            prop_assume!(v != i64::MIN);
            prop_assert_eq!(Quantity::from_milli(v).milli_value().unwrap(), v);
        }
    }
}
