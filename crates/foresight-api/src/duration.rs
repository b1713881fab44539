//! Durations written as Crane and Go write them: `60s`, `1m`, `1h30m`, `3d`.

use std::time::Duration;

/// Parses a duration such as `60s`, `5m`, `1h30m` or `15d`. A bare number is rejected: the
/// unit is never guessed.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return Err("must be a duration such as 60s, 5m or 3d".to_owned());
    }
    if trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{trimmed:?} has no unit; write e.g. {trimmed}s"));
    }
    humantime::parse_duration(trimmed)
        .map_err(|e| format!("{trimmed:?} is not a duration ({e}); write e.g. 60s, 5m or 3d"))
}

/// Formats a duration compactly for messages: `1d 4h`, `90s`.
pub fn format_duration(d: Duration) -> String {
    let mut secs = d.as_secs();
    if secs == 0 {
        return "0s".to_owned();
    }
    let mut parts = Vec::new();
    for (unit, len) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
        if secs >= len {
            parts.push(format!("{}{unit}", secs / len));
            secs %= len;
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_and_crane_forms() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(
            parse_duration("3d").unwrap(),
            Duration::from_secs(3 * 86_400)
        );
        assert!(parse_duration("60").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("abc").is_err());
    }

    #[test]
    fn formats_compactly() {
        assert_eq!(format_duration(Duration::from_secs(100_800)), "1d 4h");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m 30s");
    }
}
