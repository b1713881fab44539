//! Load traces: a metric's recorded values over time, as `ts,value` CSV.
//!
//! The same format feeds the predictors (`foresight backtest`) and the simulator, so the
//! parser is strict: every row must hold a whole-second Unix timestamp and a finite value,
//! timestamps must strictly increase, and every problem is reported with its 1-based line.

use std::fmt;

/// One observation of a metric.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// Unix time in whole seconds.
    pub ts: i64,
    /// The metric's value at `ts`, in the metric's own unit.
    pub value: f64,
}

impl Sample {
    /// A sample at `ts` (Unix seconds) with `value`.
    pub fn new(ts: i64, value: f64) -> Self {
        Sample { ts, value }
    }
}

/// Why a trace was rejected. Every variant names the 1-based line of the problem.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TraceError {
    /// The text holds no data rows (it is empty, blank, or only the header).
    #[error("line {line}: no data rows (expected `ts,value` lines such as `1628640000,39.7`)")]
    NoData {
        /// The line after the last one read.
        line: u64,
    },
    /// A row does not have exactly two fields.
    #[error("line {line}: expected 2 fields `ts,value`, found {found}")]
    ColumnCount {
        /// The line of the row.
        line: u64,
        /// How many fields it has.
        found: usize,
    },
    /// A field is not a number of the expected kind.
    #[error("line {line}: {column} {value:?} is not {expected}")]
    NotNumeric {
        /// The line of the row.
        line: u64,
        /// `ts` or `value`.
        column: Column,
        /// The field as written.
        value: String,
        /// What was expected instead.
        expected: &'static str,
    },
    /// The value is NaN or infinite.
    #[error("line {line}: value {value:?} is not finite")]
    NotFinite {
        /// The line of the row.
        line: u64,
        /// The field as written.
        value: String,
    },
    /// A timestamp is not after the previous one.
    #[error("line {line}: timestamp {ts} is not after the previous timestamp {previous}; timestamps must strictly increase")]
    NotIncreasing {
        /// The line of the row.
        line: u64,
        /// This row's timestamp.
        ts: i64,
        /// The previous row's timestamp.
        previous: i64,
    },
    /// A timestamp so large it can only be milliseconds (or finer).
    #[error("line {line}: timestamp {ts} is past the year 5000; timestamps are Unix seconds — if these are milliseconds, divide them by 1000")]
    NotSeconds {
        /// The line of the row.
        line: u64,
        /// The timestamp as read.
        ts: i64,
    },
    /// A whole-number timestamp too large (or too small) for any clock.
    #[error("line {line}: timestamp {value} is out of range: Unix seconds are below {FIRST_MILLISECOND_LOOKING_TS} (the year 5138); if these are milliseconds, divide them by 1000")]
    OutOfRange {
        /// The line of the row.
        line: u64,
        /// The timestamp as written.
        value: String,
    },
    /// The CSV itself is malformed (for example an unterminated quote).
    #[error("line {line}: malformed CSV: {message}")]
    Malformed {
        /// The line where the reader stopped.
        line: u64,
        /// The CSV reader's description.
        message: String,
    },
}

impl TraceError {
    /// The 1-based line the error is about.
    pub fn line(&self) -> u64 {
        match self {
            TraceError::NoData { line }
            | TraceError::ColumnCount { line, .. }
            | TraceError::NotNumeric { line, .. }
            | TraceError::NotFinite { line, .. }
            | TraceError::NotIncreasing { line, .. }
            | TraceError::NotSeconds { line, .. }
            | TraceError::OutOfRange { line, .. }
            | TraceError::Malformed { line, .. } => *line,
        }
    }
}

/// A column of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// The timestamp column.
    Ts,
    /// The value column.
    Value,
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Column::Ts => "timestamp",
            Column::Value => "value",
        })
    }
}

/// Parses a `ts,value` CSV trace: an optional `ts,value` header, then one row per sample
/// with a whole-second Unix timestamp and a finite number. Blank lines are skipped and
/// fields may be quoted or padded with spaces.
pub fn parse_csv(text: &str) -> Result<Vec<Sample>, TraceError> {
    Ok(parse_csv_lines(text)?.into_iter().map(|(_, s)| s).collect())
}

/// Timestamps from this value on (the year 5138 in seconds; 1973 in milliseconds) are
/// taken for milliseconds: no recorded metric is dated that far ahead.
const FIRST_MILLISECOND_LOOKING_TS: i64 = 100_000_000_000;

/// A stretch of a trace with no samples: between the samples on `line`s `before.0` and
/// `after.0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The line and timestamp of the sample before the gap.
    pub before: (u64, i64),
    /// The line and timestamp of the sample after it.
    pub after: (u64, i64),
}

impl Gap {
    /// Its length, seconds.
    pub fn seconds(&self) -> i64 {
        self.after.1.saturating_sub(self.before.1)
    }
}

/// The gaps between consecutive samples longer than `longest_seconds`.
pub fn gaps(samples: &[(u64, Sample)], longest_seconds: i64) -> Vec<Gap> {
    samples
        .windows(2)
        .filter(|w| w[1].1.ts.saturating_sub(w[0].1.ts) > longest_seconds)
        .map(|w| Gap {
            before: (w[0].0, w[0].1.ts),
            after: (w[1].0, w[1].1.ts),
        })
        .collect()
}

/// How many times the 99.9th percentile a trace's peak may be before the peak is taken for a
/// recording error rather than load: no service's busiest minute carries a hundred times the
/// load of its busiest 0.1%, but a unit mix-up, a counter reset or a sentinel such as `1e308`
/// does, and scaling a trace to its peak would then flatten every other sample to nearly 0.
pub const PEAK_OUTLIER_RATIO: f64 = 100.0;

/// A sample that dwarfs the rest of its trace (see [`PEAK_OUTLIER_RATIO`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outlier {
    /// The 1-based line (or position) of the sample.
    pub line: u64,
    /// Its timestamp.
    pub ts: i64,
    /// Its value: the trace's peak.
    pub value: f64,
    /// The trace's 99.9th percentile, the highest value once the top 0.1% of samples (at
    /// least one) are set aside.
    pub percentile: f64,
}

impl fmt::Display for Outlier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the value {} (ts {}) is more than {PEAK_OUTLIER_RATIO} times the trace's 99.9th \
             percentile ({})",
            readable(self.value),
            self.ts,
            readable(self.percentile)
        )
    }
}

/// `v` as written in a trace: plain for everyday magnitudes, `1e308` rather than 309 digits.
fn readable(v: f64) -> String {
    if v != 0.0 && !(1e-4..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// The trace's peak, when it is more than [`PEAK_OUTLIER_RATIO`] times the 99.9th percentile.
/// A trace whose 99.9th percentile is 0 (idle but for a few samples) has no such rule: any
/// peak is that many times nothing.
pub fn peak_outlier(samples: &[(u64, Sample)]) -> Option<Outlier> {
    let (line, peak) = samples
        .iter()
        .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
        .map(|(line, s)| (*line, *s))?;
    let mut values: Vec<f64> = samples.iter().map(|(_, s)| s.value).collect();
    // The lower 99.9th percentile: of 1000 samples, the second highest.
    let rank = values.len().saturating_sub(1).saturating_mul(999) / 1000;
    let (_, percentile, _) = values.select_nth_unstable_by(rank, f64::total_cmp);
    let percentile = *percentile;
    (percentile > 0.0 && peak.value > percentile * PEAK_OUTLIER_RATIO).then_some(Outlier {
        line,
        ts: peak.ts,
        value: peak.value,
        percentile,
    })
}

/// As [`parse_csv`], each sample with its 1-based line.
pub fn parse_csv_lines(text: &str) -> Result<Vec<(u64, Sample)>, TraceError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        // Column counts are checked here, so that the error names the line and the count.
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let lines = LineIndex::new(text);
    let mut samples: Vec<(u64, Sample)> = Vec::new();
    let mut record = csv::StringRecord::new();
    let mut first_row = true;
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(err) => {
                let line = err
                    .position()
                    .map_or_else(|| lines.last_line(), |p| lines.line_of(p.byte()));
                return Err(TraceError::Malformed {
                    line,
                    message: err.to_string(),
                });
            }
        }
        let line = record
            .position()
            .map_or_else(|| lines.last_line(), |p| lines.line_of(p.byte()));
        if record.iter().all(str::is_empty) {
            continue;
        }
        if record.len() != 2 {
            return Err(TraceError::ColumnCount {
                line,
                found: record.len(),
            });
        }
        let (ts_field, value_field) = (&record[0], &record[1]);
        if std::mem::take(&mut first_row)
            && ts_field.eq_ignore_ascii_case("ts")
            && value_field.eq_ignore_ascii_case("value")
        {
            continue;
        }
        let sample = parse_row(line, ts_field, value_field)?;
        if sample.ts.unsigned_abs() >= FIRST_MILLISECOND_LOOKING_TS.unsigned_abs() {
            return Err(TraceError::NotSeconds {
                line,
                ts: sample.ts,
            });
        }
        if let Some((_, prev)) = samples.last() {
            if sample.ts <= prev.ts {
                return Err(TraceError::NotIncreasing {
                    line,
                    ts: sample.ts,
                    previous: prev.ts,
                });
            }
        }
        samples.push((line, sample));
    }
    if samples.is_empty() {
        return Err(TraceError::NoData {
            line: lines.last_line().saturating_add(1),
        });
    }
    Ok(samples)
}

/// Maps byte offsets to 1-based line numbers. The CSV reader's own line counter is not used:
/// it reports where it started reading a record, which is before any blank lines it then
/// skipped (and, with CRLF endings, before the `\n` of the previous line).
struct LineIndex<'a> {
    text: &'a [u8],
    /// Byte offsets of every `\n`.
    newlines: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let text = text.as_bytes();
        let newlines = text
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i)
            .collect();
        LineIndex { text, newlines }
    }

    /// The line of the first character at or after `byte` that is not a line terminator.
    fn line_of(&self, byte: u64) -> u64 {
        let mut at = usize::try_from(byte)
            .unwrap_or(usize::MAX)
            .min(self.text.len());
        while at < self.text.len() && matches!(self.text[at], b'\r' | b'\n') {
            at += 1;
        }
        let before = self.newlines.partition_point(|&nl| nl < at);
        u64::try_from(before).unwrap_or(u64::MAX).saturating_add(1)
    }

    /// The number of the last line (a final line terminator does not start a new line).
    fn last_line(&self) -> u64 {
        let mut lines = self.newlines.len();
        if self.text.last().is_some_and(|b| *b != b'\n') {
            lines += 1;
        }
        u64::try_from(lines).unwrap_or(u64::MAX)
    }
}

fn parse_row(line: u64, ts_field: &str, value_field: &str) -> Result<Sample, TraceError> {
    let digits = ts_field.strip_prefix(['-', '+']).unwrap_or(ts_field);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && ts_field.parse::<i64>().is_err()
    {
        // A whole number, only too long for any clock: say so, not "not a whole number".
        return Err(TraceError::OutOfRange {
            line,
            value: ts_field.to_owned(),
        });
    }
    let ts = ts_field
        .parse::<i64>()
        .map_err(|_| TraceError::NotNumeric {
            line,
            column: Column::Ts,
            value: ts_field.to_owned(),
            expected: if line == 1 {
                "a whole number of Unix seconds (the only header accepted is `ts,value`)"
            } else {
                "a whole number of Unix seconds"
            },
        })?;
    let value = value_field
        .parse::<f64>()
        .map_err(|_| TraceError::NotNumeric {
            line,
            column: Column::Value,
            value: value_field.to_owned(),
            expected: "a number",
        })?;
    if !value.is_finite() {
        return Err(TraceError::NotFinite {
            line,
            value: value_field.to_owned(),
        });
    }
    Ok(Sample { ts, value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_with_and_without_header() {
        let with = parse_csv("ts,value\n1628640000,39.72233\n1628640060,39.82146\n").unwrap();
        let without = parse_csv("1628640000,39.72233\n1628640060,39.82146").unwrap();
        assert_eq!(with, without);
        assert_eq!(
            with,
            vec![
                Sample::new(1_628_640_000, 39.72233),
                Sample::new(1_628_640_060, 39.82146)
            ]
        );
    }

    #[test]
    fn accepts_crlf_quotes_spaces_blank_lines_and_case_insensitive_header() {
        let got = parse_csv("TS , Value\r\n\r\n\"10\",\"1.5\"\r\n 20 , -2e3 \r\n\n").unwrap();
        assert_eq!(got, vec![Sample::new(10, 1.5), Sample::new(20, -2000.0)]);
        // Blank lines still count towards the line numbers in errors.
        assert_eq!(
            parse_csv("ts,value\r\n\r\n1,2\r\nx,3").unwrap_err().line(),
            4
        );
    }

    #[test]
    fn empty_or_header_only_has_no_data() {
        assert_eq!(parse_csv(""), Err(TraceError::NoData { line: 1 }));
        assert_eq!(parse_csv("\n\n"), Err(TraceError::NoData { line: 3 }));
        assert_eq!(parse_csv("ts,value\n"), Err(TraceError::NoData { line: 2 }));
    }

    #[test]
    fn reports_line_of_non_numeric_fields() {
        let err = parse_csv("ts,value\n1,2\n3,abc\n").unwrap_err();
        assert!(
            matches!(
                err,
                TraceError::NotNumeric {
                    line: 3,
                    column: Column::Value,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "line 3: value \"abc\" is not a number");
        let err = parse_csv("1.5,2\n").unwrap_err();
        assert!(
            matches!(
                err,
                TraceError::NotNumeric {
                    line: 1,
                    column: Column::Ts,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains("only header accepted is `ts,value`"),
            "{err}"
        );
        let err = parse_csv("timestamp,cpu\n1,2\n").unwrap_err();
        assert_eq!(err.line(), 1);
    }

    #[test]
    fn a_header_is_only_accepted_on_the_first_row() {
        let err = parse_csv("1,2\nts,value\n").unwrap_err();
        assert!(
            matches!(
                err,
                TraceError::NotNumeric {
                    line: 2,
                    column: Column::Ts,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn a_timestamp_past_any_clock_is_out_of_range_not_a_non_number() {
        for big in [
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999999",
        ] {
            let err = parse_csv(&format!("1,1\n{big},2\n")).unwrap_err();
            assert_eq!(err.line(), 2, "{big}");
            assert!(
                err.to_string().contains("out of range")
                    && err.to_string().contains("100000000000"),
                "{err}"
            );
        }
    }

    fn numbered(values: &[f64]) -> Vec<(u64, Sample)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 2, Sample::new(i as i64 * 60, *v)))
            .collect()
    }

    #[test]
    fn one_sample_that_dwarfs_the_rest_is_an_outlier() {
        let mut values: Vec<f64> = (0..2880).map(|i| 10.0 + f64::from(i % 7)).collect();
        values[1500] = 1e308;
        let found = peak_outlier(&numbered(&values)).expect("1e308 dwarfs a load of 10 to 16");
        assert_eq!((found.line, found.ts, found.value), (1502, 90_000, 1e308));
        assert_eq!(found.percentile, 16.0);
        // A short trace too: of five samples, the percentile is the second highest.
        let found = peak_outlier(&numbered(&[1.0, 2.0, 1.0, 5000.0, 3.0])).unwrap();
        assert_eq!((found.value, found.percentile), (5000.0, 3.0));
    }

    #[test]
    fn spiky_and_idle_traces_have_no_outlier() {
        // A spike of 50 times the usual load is load, not an error.
        let mut values = vec![1.0; 1000];
        values[10] = 50.0;
        assert_eq!(peak_outlier(&numbered(&values)), None);
        // More than 0.1% of the samples high: the percentile is high too.
        let mut values = vec![1.0; 1000];
        values[10] = 1e9;
        values[20] = 1e9;
        values[30] = 1e9;
        assert_eq!(peak_outlier(&numbered(&values)), None);
        // Idle but for one burst: no percentile to compare with.
        let mut values = vec![0.0; 100];
        values[5] = 7.0;
        assert_eq!(peak_outlier(&numbered(&values)), None);
        assert_eq!(peak_outlier(&numbered(&[4.0])), None);
        assert_eq!(peak_outlier(&[]), None);
    }

    #[test]
    fn rejects_nan_and_infinity() {
        for bad in ["NaN", "nan", "inf", "-inf", "infinity"] {
            let err = parse_csv(&format!("1,1\n2,{bad}\n")).unwrap_err();
            assert_eq!(
                err,
                TraceError::NotFinite {
                    line: 2,
                    value: bad.to_owned()
                },
                "{bad}"
            );
        }
    }

    #[test]
    fn rejects_timestamps_that_do_not_increase() {
        assert_eq!(
            parse_csv("ts,value\n5,1\n5,2\n").unwrap_err(),
            TraceError::NotIncreasing {
                line: 3,
                ts: 5,
                previous: 5
            }
        );
        assert_eq!(
            parse_csv("5,1\n4,2\n").unwrap_err(),
            TraceError::NotIncreasing {
                line: 2,
                ts: 4,
                previous: 5
            }
        );
    }

    #[test]
    fn rejects_wrong_column_counts() {
        assert_eq!(
            parse_csv("1,2\n3\n").unwrap_err(),
            TraceError::ColumnCount { line: 2, found: 1 }
        );
        assert_eq!(
            parse_csv("1,2,3\n").unwrap_err(),
            TraceError::ColumnCount { line: 1, found: 3 }
        );
    }

    #[test]
    fn reports_malformed_csv_with_its_line() {
        // A quote that never closes swallows the rest of the text into one field.
        let err = parse_csv("1,2\n3,\"4\n5,6\n").unwrap_err();
        assert!(matches!(
            err,
            TraceError::ColumnCount { .. }
                | TraceError::NotNumeric { .. }
                | TraceError::Malformed { .. }
        ));
        assert_eq!(err.line(), 2);
    }

    proptest! {
        #[test]
        fn never_panics_on_any_text(text in "\\PC*") {
            let _ = parse_csv(&text);
        }

        #[test]
        fn never_panics_on_csv_like_text(text in "[0-9ts,valuenaif.eE+\\- \"\r\n]{0,200}") {
            if let Ok(samples) = parse_csv(&text) {
                prop_assert!(!samples.is_empty());
                prop_assert!(samples.windows(2).all(|w| w[0].ts < w[1].ts));
                prop_assert!(samples.iter().all(|s| s.value.is_finite()));
            }
        }

        #[test]
        fn names_the_line_of_a_bad_row(
            rows in proptest::collection::vec((any::<bool>(), any::<bool>()), 1..30),
            bad_at in any::<proptest::sample::Index>(),
        ) {
            // Valid rows, some preceded by a blank line, some ending in CRLF; one row is bad.
            let bad_at = bad_at.index(rows.len());
            let mut text = String::new();
            let mut line = 1u64;
            let mut bad_line = 0;
            for (i, (blank_before, crlf)) in rows.iter().enumerate() {
                let end = if *crlf { "\r\n" } else { "\n" };
                if *blank_before {
                    text.push_str(end);
                    line += 1;
                }
                if i == bad_at {
                    text.push_str(&format!("{i},oops{end}"));
                    bad_line = line;
                } else {
                    text.push_str(&format!("{i},1.5{end}"));
                }
                line += 1;
            }
            prop_assert_eq!(parse_csv(&text).unwrap_err().line(), bad_line);
        }

        #[test]
        fn round_trips_what_it_accepts(
            start in -1_000_000_000i64..2_000_000_000,
            gaps in proptest::collection::vec(1i64..10_000, 1..50),
            values in proptest::collection::vec(-1e12f64..1e12, 50),
            header in any::<bool>(),
        ) {
            let mut ts = start;
            let mut expected = Vec::new();
            for (gap, value) in gaps.iter().zip(&values) {
                ts += gap;
                expected.push(Sample::new(ts, *value));
            }
            let mut text = if header { "ts,value\n".to_owned() } else { String::new() };
            for s in &expected {
                // `{:?}` prints the shortest string that parses back to the same f64.
                text.push_str(&format!("{},{:?}\n", s.ts, s.value));
            }
            prop_assert_eq!(parse_csv(&text), Ok(expected));
        }
    }
}
