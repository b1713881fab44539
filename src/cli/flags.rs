//! The one duration syntax of every command-line flag: Go/kubectl durations (`90s`, `5m`,
//! `1h30m`, `1.5h`) or a bare number of seconds (`90`). docs/cli.md describes it once.

use std::time::Duration;

use foresight_api::duration::parse_duration;

/// A flag's duration: a bare number is seconds, anything else a Go/kubectl duration.
pub fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    // Duration flags take values that start with a hyphen, so that `-5s` reaches this rule
    // rather than being read as a flag; a flag given in its place (`--delay --quiet`) is
    // not a duration at all.
    if let Some(magnitude) = text.strip_prefix('-') {
        return Err(match unsigned_duration(magnitude) {
            Some(_) => format!("{text}: a duration cannot be negative"),
            None => not_a_duration(text),
        });
    }
    unsigned_duration(text).ok_or_else(|| not_a_duration(text))
}

/// A bare number of seconds or a Go/kubectl duration, without a sign.
fn unsigned_duration(text: &str) -> Option<Duration> {
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if text.starts_with(['-', '+']) {
        return None;
    }
    parse_duration(text).ok()
}

fn not_a_duration(text: &str) -> String {
    format!("{text:?} is not a duration: write seconds (90) or a duration (90s, 5m, 1h30m)")
}

/// A flag's duration in whole seconds.
pub fn seconds(text: &str) -> Result<i64, String> {
    let d = duration(text)?;
    if d.subsec_nanos() != 0 {
        return Err(format!("{}: use whole seconds", text.trim()));
    }
    i64::try_from(d.as_secs()).map_err(|_| format!("{}: too long", text.trim()))
}

/// A flag's duration in whole seconds, at least one.
pub fn positive_seconds(text: &str) -> Result<i64, String> {
    match seconds(text)? {
        0 => Err(format!("{}: must be at least 1s", text.trim())),
        s => Ok(s),
    }
}

/// A whole number from `MIN` to `MAX`, with the range said in words when it is not.
pub fn whole<const MIN: i64, const MAX: i64>(text: &str) -> Result<i64, String> {
    let text = text.trim();
    match text.parse::<i64>() {
        Ok(n) if (MIN..=MAX).contains(&n) => Ok(n),
        Ok(n) => Err(format!(
            "{n} is out of range: use a whole number from {MIN} to {MAX}"
        )),
        Err(_) if is_whole_number(text) => Err(format!(
            "{text} is out of range: use a whole number from {MIN} to {MAX}"
        )),
        Err(_) => Err(format!(
            "{text:?} is not a whole number (use one from {MIN} to {MAX})"
        )),
    }
}

/// Whether `text` is written as a whole number (digits, with an optional sign), whatever
/// its size: one too long for any integer is out of range, not "not a number".
pub fn is_whole_number(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A finite number from `min` to `max`, for flags such as `--tolerance` and `--pod-capacity`.
pub fn number_between(text: &str, min: f64, max: f64) -> Result<f64, String> {
    let text = text.trim();
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && (min..=max).contains(&v) => Ok(v),
        Ok(v) => Err(format!(
            "{v} is out of range: use a number from {min} to {max}"
        )),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}

/// A seed: any whole number from 0.
pub fn seed(text: &str) -> Result<u64, String> {
    let text = text.trim();
    text.parse::<u64>().map_err(|_| {
        if is_whole_number(text) {
            format!(
                "{text} is out of range: use a whole number from 0 to {}",
                u64::MAX
            )
        } else {
            format!("{text:?} is not a seed: use a whole number from 0")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_numbers_are_seconds_and_go_durations_are_read_the_same_everywhere() {
        for (text, want) in [
            ("90", 90),
            ("90s", 90),
            ("5m", 300),
            ("1h30m", 5400),
            ("1h", 3600),
            (" 15s ", 15),
            ("0", 0),
        ] {
            assert_eq!(seconds(text), Ok(want), "{text}");
        }
        assert!(seconds("1.5s").unwrap_err().contains("whole seconds"));
        assert!(seconds("-5s").unwrap_err().contains("negative"));
        assert!(seconds("-1h30m").unwrap_err().contains("negative"));
        assert!(seconds("--quiet")
            .unwrap_err()
            .contains("\"--quiet\" is not a duration"));
        assert!(seconds("soon").unwrap_err().contains("90s, 5m, 1h30m"));
        assert!(positive_seconds("0").unwrap_err().contains("at least 1s"));
        assert_eq!(whole::<1, 10>("7"), Ok(7));
        assert!(whole::<1, 10>("0").unwrap_err().contains("from 1 to 10"));
        assert!(whole::<1, 10>("x")
            .unwrap_err()
            .contains("not a whole number"));
        assert_eq!(
            whole::<1, 10_000>("9223372036854775808"),
            Err("9223372036854775808 is out of range: use a whole number from 1 to 10000".into())
        );
        assert!(seed("18446744073709551616")
            .unwrap_err()
            .contains("out of range: use a whole number from 0 to 18446744073709551615"));
        assert!(seed("-1").unwrap_err().contains("out of range"));
    }
}
