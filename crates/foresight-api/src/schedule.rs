//! Five-field crontab schedules: the `start` and `end` of `spec.crons[]`.
//!
//! The grammar is classic cron and nothing more:
//!
//! ```text
//! schedule := minute hour day-of-month month day-of-week    (separated by whitespace)
//! field    := "*" | "?" (day-of-month and day-of-week only) | element ("," element)*
//! element  := value | value "-" value | "*/" step | value "-" value "/" step
//! value    := a number, or a name: JAN-DEC in month, SUN-SAT in day-of-week (any case)
//! ```
//!
//! Ranges: minute 0-59, hour 0-23, day-of-month 1-31, month 1-12, day-of-week 0-7 (0 and 7
//! are Sunday). When both day fields are restricted, a day matches if either matches; when one
//! of them is `*` or `?`, only the other one restricts.
//!
//! Parsing takes two passes. Our own pass checks the grammar strictly and explains every
//! rejection by field and value: croner, the parser we build on, accepts more than our contract
//! (`L`, `W`, `#`, `@daily`, `?` in any position of a day field, month names in the weekday
//! field, a `+` prefix) and its messages do not name the field. That pass also rewrites names
//! to numbers. croner then parses the normalized text and expands it into the values each
//! field matches, which we keep as bit masks so that matching a wall-clock time costs a few
//! bit tests.

use std::fmt;
use std::str::FromStr;

use croner::parser::{CronParser, Seconds, Year};
use jiff::civil::{Date, DateTime};

/// One of the five fields of a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Minute of the hour, 0-59.
    Minute,
    /// Hour of the day, 0-23.
    Hour,
    /// Day of the month, 1-31.
    DayOfMonth,
    /// Month of the year, 1-12 or JAN-DEC.
    Month,
    /// Day of the week, 0-7 (0 and 7 are Sunday) or SUN-SAT.
    DayOfWeek,
}

const MONTH_NAMES: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAY_NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

impl Field {
    const IN_ORDER: [Field; 5] = [
        Field::Minute,
        Field::Hour,
        Field::DayOfMonth,
        Field::Month,
        Field::DayOfWeek,
    ];

    /// The smallest and largest value the field accepts.
    pub fn bounds(self) -> (u32, u32) {
        match self {
            Field::Minute => (0, 59),
            Field::Hour => (0, 23),
            Field::DayOfMonth => (1, 31),
            Field::Month => (1, 12),
            Field::DayOfWeek => (0, 7),
        }
    }

    fn allows_question_mark(self) -> bool {
        matches!(self, Field::DayOfMonth | Field::DayOfWeek)
    }

    /// The value of a name such as `MAR` or `fri` in this field, if it is one.
    fn value_of_name(self, token: &str) -> Option<u32> {
        let (names, first): (&[&str], u32) = match self {
            Field::Month => (&MONTH_NAMES, 1),
            Field::DayOfWeek => (&WEEKDAY_NAMES, 0),
            _ => return None,
        };
        let index = names.iter().position(|n| n.eq_ignore_ascii_case(token))?;
        u32::try_from(index).ok().map(|i| i + first)
    }

    fn name_hint(self) -> &'static str {
        match self {
            Field::Month => " or a month name (JAN-DEC)",
            Field::DayOfWeek => " or a weekday name (SUN-SAT)",
            _ => "",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Minute => "minute",
            Field::Hour => "hour",
            Field::DayOfMonth => "day-of-month",
            Field::Month => "month",
            Field::DayOfWeek => "day-of-week",
        })
    }
}

/// Why a schedule was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleProblem {
    /// Nothing but whitespace.
    #[error(
        "the schedule is empty; expected 5 fields: minute hour day-of-month month day-of-week"
    )]
    Empty,
    /// Not exactly five fields.
    #[error("{found} fields; expected 5: minute hour day-of-month month day-of-week (seconds and years are not supported)")]
    FieldCount {
        /// How many fields were given.
        found: usize,
    },
    /// `@daily` and friends.
    #[error("descriptor {0:?} is not supported; write the 5 fields instead (e.g. \"0 0 * * *\" for @daily)")]
    Descriptor(String),
    /// `TZ=…` or `CRON_TZ=…` in front of the fields.
    #[error("time zone prefix {0:?} is not supported; set the cron's timezone field instead")]
    TimeZonePrefix(String),
    /// `?` outside the two day fields.
    #[error("\"?\" is only allowed in day-of-month and day-of-week, not in the {field} field")]
    QuestionMarkNotAllowed {
        /// The field it appeared in.
        field: Field,
    },
    /// `*` or `?` combined with other text in one field.
    #[error("{field} {text:?}: \"*\" and \"?\" must stand alone (or \"*/n\" for a step)")]
    WildcardNotAlone {
        /// The field.
        field: Field,
        /// The field's text.
        text: String,
    },
    /// A list with an empty element, as in `1,,2`.
    #[error("{field} {text:?} has an empty list element")]
    EmptyElement {
        /// The field.
        field: Field,
        /// The field's text.
        text: String,
    },
    /// A value outside the field's bounds.
    #[error("{field} {value} is out of range {min}-{max}")]
    OutOfRange {
        /// The field.
        field: Field,
        /// The value as written.
        value: String,
        /// The smallest allowed value.
        min: u32,
        /// The largest allowed value.
        max: u32,
    },
    /// Neither a number nor a name the field knows.
    #[error("{field} {token:?} is not a number{hint}", hint = field.name_hint())]
    InvalidValue {
        /// The field.
        field: Field,
        /// The offending token.
        token: String,
    },
    /// `L`, `W` or `#` (Quartz extensions).
    #[error("{field} {token:?}: L, W and # are not supported")]
    Modifier {
        /// The field.
        field: Field,
        /// The offending token.
        token: String,
    },
    /// A range whose start is after its end, as in `17-9`.
    #[error("{field} range {token:?} runs backwards; its start must not be after its end")]
    ReversedRange {
        /// The field.
        field: Field,
        /// The range as written.
        token: String,
    },
    /// `*/0` or `1-5/0`.
    #[error("{field} {token:?}: the step must be at least 1")]
    ZeroStep {
        /// The field.
        field: Field,
        /// The element as written.
        token: String,
    },
    /// A step after a single value, as in `5/15` (write `5-59/15`).
    #[error(
        "{field} {token:?}: a step needs \"*\" or a range before it, e.g. \"*/15\" or \"5-59/15\""
    )]
    StepWithoutRange {
        /// The field.
        field: Field,
        /// The element as written.
        token: String,
    },
    /// The underlying parser disagreed after our checks passed; kept so that such a
    /// disagreement is a clear rejection rather than a wrong schedule.
    #[error("rejected by the cron parser: {0}")]
    Parser(String),
}

/// A schedule that could not be parsed: the text and the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{schedule:?}: {problem}")]
pub struct InvalidSchedule {
    /// The schedule as written.
    pub schedule: String,
    /// Why it was rejected.
    pub problem: ScheduleProblem,
}

/// A parsed 5-field schedule: which minutes, hours, days and months it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    text: String,
    /// Bit m set: minute m matches.
    minutes: u64,
    /// Bit h set: hour h matches.
    hours: u32,
    /// Bit d set: day of month d (1-31) matches.
    days_of_month: u32,
    /// Bit m set: month m (1-12) matches.
    months: u16,
    /// Bit w set: weekday w matches, Sunday = 0.
    days_of_week: u8,
    day_of_month_restricted: bool,
    day_of_week_restricted: bool,
}

impl Schedule {
    /// Parses a 5-field crontab schedule, rejecting anything outside the grammar in the
    /// module documentation with a message that names the field and the value.
    pub fn parse(text: &str) -> Result<Schedule, InvalidSchedule> {
        let invalid = |problem| InvalidSchedule {
            schedule: text.to_owned(),
            problem,
        };
        let normalized = normalize(text).map_err(invalid)?;
        // Seconds and years disallowed: croner then takes exactly our five fields.
        let parser = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build();
        let cron = parser
            .parse(&normalized)
            .map_err(|e| invalid(ScheduleProblem::Parser(e.to_string())))?;
        let pattern = &cron.pattern;
        let minutes = mask_of(&pattern.minutes.values()) as u64;
        let hours = mask_of(&pattern.hours.values()) as u32;
        let days_of_month = mask_of(&pattern.days.values()) as u32;
        let months = mask_of(&pattern.months.values()) as u16;
        // croner folds 7 into 0 already; folding again keeps Sunday right whatever it does.
        let weekdays = mask_of(&pattern.days_of_week.values());
        let days_of_week = ((weekdays | (weekdays >> 7)) & 0x7f) as u8;
        let schedule = Schedule {
            text: text.to_owned(),
            minutes,
            hours,
            days_of_month,
            months,
            days_of_week,
            day_of_month_restricted: !pattern.is_dom_wildcard(),
            day_of_week_restricted: !pattern.is_dow_wildcard(),
        };
        if minutes == 0 || hours == 0 || days_of_month == 0 || months == 0 || days_of_week == 0 {
            return Err(invalid(ScheduleProblem::Parser(format!(
                "a field matches nothing: {normalized:?}"
            ))));
        }
        Ok(schedule)
    }

    /// The schedule as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The minutes of the hour that match: bit m set means minute m.
    pub fn minute_mask(&self) -> u64 {
        self.minutes
    }

    /// The hours of the day that match: bit h set means hour h.
    pub fn hour_mask(&self) -> u32 {
        self.hours
    }

    /// Whether month `month` (1-12) matches.
    pub fn matches_month(&self, month: i8) -> bool {
        (1..=12).contains(&month) && self.months & (1 << month) != 0
    }

    /// Whether the schedule matches some minute of `date`: its month matches and its day
    /// matches by the classic rule (either day field when both are restricted, otherwise the
    /// restricted one).
    pub fn matches_date(&self, date: Date) -> bool {
        if !self.matches_month(date.month()) {
            return false;
        }
        let day_of_month = self.days_of_month & (1 << date.day()) != 0;
        let day_of_week = self.days_of_week & (1 << date.weekday().to_sunday_zero_offset()) != 0;
        if self.day_of_month_restricted && self.day_of_week_restricted {
            day_of_month || day_of_week
        } else {
            // The unrestricted field matches every day, so this is the restricted one alone.
            day_of_month && day_of_week
        }
    }

    /// Whether the wall-clock time `dt` matches (its seconds are ignored).
    pub fn matches(&self, dt: DateTime) -> bool {
        self.minutes & (1 << dt.minute()) != 0
            && self.hours & (1 << dt.hour()) != 0
            && self.matches_date(dt.date())
    }

    /// Whether any calendar date matches at all. `0 0 31 2 *` or `0 0 30 2 *` never do.
    pub fn matches_some_date(&self) -> bool {
        if self.day_of_week_restricted {
            // Every month has every weekday, and with both day fields restricted either suffices.
            return true;
        }
        (1..=12i8).filter(|m| self.matches_month(*m)).any(|m| {
            let longest = match m {
                2 => 29,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            (1..=longest).any(|d: u32| self.days_of_month & (1 << d) != 0)
        })
    }
}

impl FromStr for Schedule {
    type Err = InvalidSchedule;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Schedule::parse(s)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn mask_of(values: &[u16]) -> u128 {
    values
        .iter()
        .filter(|v| **v < 128)
        .fold(0, |mask, v| mask | (1u128 << v))
}

/// Checks the grammar and returns the five fields with names replaced by numbers and `?` by
/// `*`, separated by single spaces.
fn normalize(text: &str) -> Result<String, ScheduleProblem> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let Some(first) = fields.first() else {
        return Err(ScheduleProblem::Empty);
    };
    if first.starts_with('@') {
        return Err(ScheduleProblem::Descriptor((*first).to_owned()));
    }
    let upper = first.to_ascii_uppercase();
    if upper.starts_with("TZ=") || upper.starts_with("CRON_TZ=") {
        return Err(ScheduleProblem::TimeZonePrefix((*first).to_owned()));
    }
    if fields.len() != 5 {
        return Err(ScheduleProblem::FieldCount {
            found: fields.len(),
        });
    }
    let mut normalized = Vec::with_capacity(5);
    for (field, field_text) in Field::IN_ORDER.into_iter().zip(fields) {
        normalized.push(normalize_field(field, field_text)?);
    }
    Ok(normalized.join(" "))
}

fn normalize_field(field: Field, text: &str) -> Result<String, ScheduleProblem> {
    match text {
        "*" => return Ok("*".to_owned()),
        "?" if field.allows_question_mark() => return Ok("*".to_owned()),
        _ => {}
    }
    if text.contains('?') {
        return Err(if field.allows_question_mark() {
            ScheduleProblem::WildcardNotAlone {
                field,
                text: text.to_owned(),
            }
        } else {
            ScheduleProblem::QuestionMarkNotAllowed { field }
        });
    }
    let mut elements = Vec::new();
    for element in text.split(',') {
        if element.is_empty() {
            return Err(ScheduleProblem::EmptyElement {
                field,
                text: text.to_owned(),
            });
        }
        elements.push(normalize_element(field, element)?);
    }
    Ok(elements.join(","))
}

fn normalize_element(field: Field, element: &str) -> Result<String, ScheduleProblem> {
    let (range, step) = match element.split_once('/') {
        Some((range, step)) => (range, Some(parse_step(field, element, step)?)),
        None => (element, None),
    };
    let range = if range == "*" {
        if step.is_none() {
            // A lone `*` is handled by the caller, so this one sits in a list.
            return Err(ScheduleProblem::WildcardNotAlone {
                field,
                text: element.to_owned(),
            });
        }
        "*".to_owned()
    } else if let Some((low, high)) = range.split_once('-') {
        let low_value = parse_value(field, low, false)?;
        let high_value = parse_value(field, high, low_value > 0)?;
        if low_value > high_value {
            return Err(ScheduleProblem::ReversedRange {
                field,
                token: range.to_owned(),
            });
        }
        format!("{low_value}-{high_value}")
    } else {
        if step.is_some() {
            return Err(ScheduleProblem::StepWithoutRange {
                field,
                token: element.to_owned(),
            });
        }
        parse_value(field, range, false)?.to_string()
    };
    Ok(match step {
        Some(step) => format!("{range}/{step}"),
        None => range,
    })
}

/// A step of at least 1. A step longer than the field selects only the first value of its
/// range, so any larger step is the same as the field's length; capping it keeps huge steps
/// (`*/99999999999`) valid, as in classic cron, without overflowing.
fn parse_step(field: Field, element: &str, step: &str) -> Result<u32, ScheduleProblem> {
    if step.is_empty() || !step.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ScheduleProblem::InvalidValue {
            field,
            token: step.to_owned(),
        });
    }
    let digits = step.trim_start_matches('0');
    if digits.is_empty() {
        return Err(ScheduleProblem::ZeroStep {
            field,
            token: element.to_owned(),
        });
    }
    let (min, max) = field.bounds();
    let length = max - min + 1;
    Ok(digits.parse::<u32>().map_or(length, |n| n.min(length)))
}

/// A number or a name within the field's bounds. `SUN` ending a range that starts after
/// Sunday is 7, so that `FRI-SUN` is Friday to Sunday rather than a backwards range.
fn parse_value(
    field: Field,
    token: &str,
    ends_range_after_zero: bool,
) -> Result<u32, ScheduleProblem> {
    let (min, max) = field.bounds();
    if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
        let out_of_range = || ScheduleProblem::OutOfRange {
            field,
            value: token.to_owned(),
            min,
            max,
        };
        let value = token.parse::<u32>().map_err(|_| out_of_range())?;
        return if (min..=max).contains(&value) {
            Ok(value)
        } else {
            Err(out_of_range())
        };
    }
    if let Some(value) = field.value_of_name(token) {
        return Ok(
            if field == Field::DayOfWeek && value == 0 && ends_range_after_zero {
                7
            } else {
                value
            },
        );
    }
    if looks_like_modifier(field, token) {
        return Err(ScheduleProblem::Modifier {
            field,
            token: token.to_owned(),
        });
    }
    Err(ScheduleProblem::InvalidValue {
        field,
        token: token.to_owned(),
    })
}

/// `L`, `LW`, `15W`, `5L`, `FRIL`, `5#2`: the Quartz forms other cron dialects accept.
fn looks_like_modifier(field: Field, token: &str) -> bool {
    if token.contains('#') {
        return true;
    }
    let upper = token.to_ascii_uppercase();
    let Some(rest) = upper.strip_suffix('L').or_else(|| upper.strip_suffix('W')) else {
        return false;
    };
    rest.is_empty()
        || rest == "L"
        || rest.bytes().all(|b| b.is_ascii_digit())
        || field.value_of_name(rest).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn problem(text: &str) -> ScheduleProblem {
        match Schedule::parse(text) {
            Ok(s) => panic!("{text:?} parsed as {s:?}"),
            Err(e) => e.problem,
        }
    }

    fn message(text: &str) -> String {
        match Schedule::parse(text) {
            Ok(s) => panic!("{text:?} parsed as {s:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn parse(text: &str) -> Schedule {
        match Schedule::parse(text) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    fn minutes(s: &Schedule) -> Vec<u32> {
        (0..60)
            .filter(|m| s.minute_mask() & (1 << m) != 0)
            .collect()
    }

    fn hours(s: &Schedule) -> Vec<u32> {
        (0..24).filter(|h| s.hour_mask() & (1 << h) != 0).collect()
    }

    #[test]
    fn out_of_range_message_names_field_value_and_range() {
        assert_eq!(
            message("0 6 ? * 8"),
            r#""0 6 ? * 8": day-of-week 8 is out of range 0-7"#
        );
        assert_eq!(
            message("60 9 * * *"),
            r#""60 9 * * *": minute 60 is out of range 0-59"#
        );
        assert_eq!(
            message("0 24 * * *"),
            r#""0 24 * * *": hour 24 is out of range 0-23"#
        );
        assert_eq!(
            message("0 9 0 * *"),
            r#""0 9 0 * *": day-of-month 0 is out of range 1-31"#
        );
        assert_eq!(
            message("0 9 * 13 *"),
            r#""0 9 * 13 *": month 13 is out of range 1-12"#
        );
        assert_eq!(
            message("0 9 * * 99999999999"),
            r#""0 9 * * 99999999999": day-of-week 99999999999 is out of range 0-7"#
        );
        assert_eq!(
            message("0 9-25 * * *"),
            r#""0 9-25 * * *": hour 25 is out of range 0-23"#
        );
    }

    #[test]
    fn rejects_everything_outside_the_grammar() {
        assert_eq!(problem(""), ScheduleProblem::Empty);
        assert_eq!(problem("   "), ScheduleProblem::Empty);
        assert_eq!(problem("0 9 * *"), ScheduleProblem::FieldCount { found: 4 });
        assert_eq!(
            problem("0 0 9 * * *"),
            ScheduleProblem::FieldCount { found: 6 }
        );
        assert_eq!(
            problem("0 0 9 * * * 2030"),
            ScheduleProblem::FieldCount { found: 7 }
        );
        assert_eq!(
            problem("every day at nine"),
            ScheduleProblem::FieldCount { found: 4 }
        );
        assert_eq!(
            problem("@daily"),
            ScheduleProblem::Descriptor("@daily".into())
        );
        assert_eq!(
            problem("@every 1h"),
            ScheduleProblem::Descriptor("@every".into())
        );
        assert_eq!(
            problem("TZ=Asia/Tokyo 0 9 * * *"),
            ScheduleProblem::TimeZonePrefix("TZ=Asia/Tokyo".into())
        );
        assert_eq!(
            problem("cron_tz=UTC 0 9 * * *"),
            ScheduleProblem::TimeZonePrefix("cron_tz=UTC".into())
        );
        assert_eq!(
            problem("? 9 * * *"),
            ScheduleProblem::QuestionMarkNotAllowed {
                field: Field::Minute
            }
        );
        assert_eq!(
            problem("0 ? * * *"),
            ScheduleProblem::QuestionMarkNotAllowed { field: Field::Hour }
        );
        assert_eq!(
            problem("0 9 * ? *"),
            ScheduleProblem::QuestionMarkNotAllowed {
                field: Field::Month
            }
        );
        assert!(matches!(
            problem("0 9 ?/2 * *"),
            ScheduleProblem::WildcardNotAlone { .. }
        ));
        assert!(matches!(
            problem("0 9 * * 1,?"),
            ScheduleProblem::WildcardNotAlone { .. }
        ));
        assert!(matches!(
            problem("*,5 9 * * *"),
            ScheduleProblem::WildcardNotAlone { .. }
        ));
        assert!(matches!(
            problem("*/0 9 * * *"),
            ScheduleProblem::ZeroStep { .. }
        ));
        assert!(matches!(
            problem("0 1-5/0 * * *"),
            ScheduleProblem::ZeroStep { .. }
        ));
        assert!(matches!(
            problem("5/15 9 * * *"),
            ScheduleProblem::StepWithoutRange { .. }
        ));
        assert!(matches!(
            problem("/15 9 * * *"),
            ScheduleProblem::StepWithoutRange { .. }
        ));
        assert!(matches!(
            problem("*/ 9 * * *"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("*/x 9 * * *"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("1/2/3 9 * * *"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("0 17-9 * * *"),
            ScheduleProblem::ReversedRange { .. }
        ));
        assert!(matches!(
            problem("0 9 * * FRI-MON"),
            ScheduleProblem::ReversedRange { .. }
        ));
        assert!(matches!(
            problem("0 9 * * 7-1"),
            ScheduleProblem::ReversedRange { .. }
        ));
        assert!(matches!(
            problem("0 9 1,,15 * *"),
            ScheduleProblem::EmptyElement { .. }
        ));
        assert!(matches!(
            problem("0 9 1, * *"),
            ScheduleProblem::EmptyElement { .. }
        ));
        assert!(matches!(
            problem("0 9 L * *"),
            ScheduleProblem::Modifier { .. }
        ));
        assert!(matches!(
            problem("0 9 LW * *"),
            ScheduleProblem::Modifier { .. }
        ));
        assert!(matches!(
            problem("0 9 15W * *"),
            ScheduleProblem::Modifier { .. }
        ));
        assert!(matches!(
            problem("0 9 * * 5L"),
            ScheduleProblem::Modifier { .. }
        ));
        assert!(matches!(
            problem("0 9 * * FRIL"),
            ScheduleProblem::Modifier { .. }
        ));
        assert!(matches!(
            problem("0 9 * * 5#2"),
            ScheduleProblem::Modifier { .. }
        ));
        assert!(matches!(
            problem("0 9 * * +1"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("0 9 * * -1"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("0 9 * * MON-FUN"),
            ScheduleProblem::InvalidValue { .. }
        ));
        // Names belong to their own field only.
        assert!(matches!(
            problem("0 9 * * JAN"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("0 9 * MON *"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("0 MON * * *"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("0 9 * * MONDAY"),
            ScheduleProblem::InvalidValue { .. }
        ));
        assert!(matches!(
            problem("0 9 * * ５"),
            ScheduleProblem::InvalidValue { .. }
        ));
    }

    #[test]
    fn invalid_value_messages_suggest_names_where_the_field_has_them() {
        assert_eq!(
            message("0 9 * * MON-FUN"),
            r#""0 9 * * MON-FUN": day-of-week "FUN" is not a number or a weekday name (SUN-SAT)"#
        );
        assert_eq!(
            message("0 9 * Jux *"),
            r#""0 9 * Jux *": month "Jux" is not a number or a month name (JAN-DEC)"#
        );
        assert_eq!(
            message("x 9 * * *"),
            r#""x 9 * * *": minute "x" is not a number"#
        );
    }

    #[test]
    fn lists_ranges_and_steps_expand_to_the_right_values() {
        assert_eq!(minutes(&parse("0,15,45 * * * *")), [0, 15, 45]);
        assert_eq!(minutes(&parse("*/20 * * * *")), [0, 20, 40]);
        assert_eq!(minutes(&parse("10-50/20 * * * *")), [10, 30, 50]);
        assert_eq!(minutes(&parse("5-7,58-59 * * * *")), [5, 6, 7, 58, 59]);
        assert_eq!(minutes(&parse("*/90 * * * *")), [0]);
        assert_eq!(minutes(&parse("*/99999999999999 * * * *")), [0]);
        assert_eq!(minutes(&parse("30-40/0099 * * * *")), [30]);
        assert_eq!(hours(&parse("0 */24 * * *")), [0]);
        assert!(matches!(
            problem("*/000 9 * * *"),
            ScheduleProblem::ZeroStep { .. }
        ));
        assert_eq!(minutes(&parse("07 * * * *")), [7]);
        assert_eq!(hours(&parse("0 8-18/2 * * *")), [8, 10, 12, 14, 16, 18]);
        assert_eq!(hours(&parse("0 9-17 * * *")), (9..=17).collect::<Vec<_>>());
        assert_eq!(hours(&parse("0 */6,1 * * *")), [0, 1, 6, 12, 18]);
        assert_eq!(hours(&parse("0 *\t* * *")), (0..24).collect::<Vec<_>>());
    }

    #[test]
    fn weekday_numbers_names_and_sunday_as_0_or_7() {
        // 2026-05-17 is a Sunday, 2026-05-18 a Monday, 2026-05-16 a Saturday.
        let sunday = date(2026, 5, 17);
        let monday = date(2026, 5, 18);
        let saturday = date(2026, 5, 16);
        for text in [
            "0 9 * * 0",
            "0 9 * * 7",
            "0 9 * * SUN",
            "0 9 * * sun",
            "0 9 * * Sun",
            "0 9 * * SUN-SUN",
        ] {
            let s = parse(text);
            assert!(s.matches_date(sunday), "{text}");
            assert!(!s.matches_date(monday), "{text}");
            assert!(!s.matches_date(saturday), "{text}");
        }
        for text in [
            "0 9 * * 6-7",
            "0 9 * * SAT-SUN",
            "0 9 * * 6,0",
            "0 9 * * sat,7",
        ] {
            let s = parse(text);
            assert!(
                s.matches_date(sunday) && s.matches_date(saturday) && !s.matches_date(monday),
                "{text}"
            );
        }
        for text in [
            "0 9 * * 1-5",
            "0 9 * * MON-FRI",
            "0 9 * * mon-fri",
            "0 9 * * Mon-5",
        ] {
            let s = parse(text);
            assert!(
                s.matches_date(monday) && !s.matches_date(sunday) && !s.matches_date(saturday),
                "{text}"
            );
        }
        let every_other = parse("0 9 * * */2");
        assert!(every_other.matches_date(sunday) && every_other.matches_date(date(2026, 5, 19)));
        assert!(!every_other.matches_date(monday));
        let fri_to_sun = parse("0 9 * * FRI-SUN");
        assert!(fri_to_sun.matches_date(sunday) && fri_to_sun.matches_date(date(2026, 5, 15)));
        assert!(!fri_to_sun.matches_date(monday));
    }

    #[test]
    fn month_names_any_case() {
        let s = parse("0 8 * MAR-May *");
        assert!(s.matches_month(3) && s.matches_month(4) && s.matches_month(5));
        assert!(!s.matches_month(2) && !s.matches_month(6));
        let s = parse("0 8 * jan,dec *");
        assert!(s.matches_month(1) && s.matches_month(12) && !s.matches_month(6));
    }

    #[test]
    fn day_fields_combine_with_or_only_when_both_are_restricted() {
        // 2026-05-13 is a Wednesday, 2026-05-15 a Friday, 2026-05-14 a Thursday.
        let both = parse("0 9 13 * 5");
        assert!(both.matches_date(date(2026, 5, 13)));
        assert!(both.matches_date(date(2026, 5, 15)));
        assert!(!both.matches_date(date(2026, 5, 14)));
        for text in ["0 9 13 * ?", "0 9 13 * *"] {
            let dom_only = parse(text);
            assert!(dom_only.matches_date(date(2026, 5, 13)), "{text}");
            assert!(!dom_only.matches_date(date(2026, 5, 15)), "{text}");
        }
        for text in ["0 9 ? * 5", "0 9 * * 5"] {
            let dow_only = parse(text);
            assert!(!dow_only.matches_date(date(2026, 5, 13)), "{text}");
            assert!(dow_only.matches_date(date(2026, 5, 15)), "{text}");
        }
        // A stepped day-of-month is a restriction, so the OR rule applies.
        let stepped = parse("0 9 */2 * 4");
        assert!(stepped.matches_date(date(2026, 5, 14)));
        assert!(stepped.matches_date(date(2026, 5, 13)));
        assert!(!stepped.matches_date(date(2026, 5, 12)));
    }

    #[test]
    fn matches_checks_minute_hour_and_date() {
        let s = parse("30 9 * * 1-5");
        assert!(s.matches(date(2026, 5, 18).at(9, 30, 0, 0)));
        assert!(s.matches(date(2026, 5, 18).at(9, 30, 59, 0)));
        assert!(!s.matches(date(2026, 5, 18).at(9, 31, 0, 0)));
        assert!(!s.matches(date(2026, 5, 18).at(10, 30, 0, 0)));
        assert!(!s.matches(date(2026, 5, 17).at(9, 30, 0, 0)));
    }

    #[test]
    fn knows_schedules_that_never_match_a_date() {
        assert!(!parse("0 0 31 2 *").matches_some_date());
        assert!(!parse("0 0 30 2 ?").matches_some_date());
        assert!(!parse("0 0 31 4,6,9,11 *").matches_some_date());
        assert!(parse("0 0 29 2 *").matches_some_date());
        assert!(parse("0 0 31 2 1").matches_some_date());
        assert!(parse("0 0 31 * *").matches_some_date());
    }

    #[test]
    fn keeps_the_text_as_written() {
        let s = parse("  0 6 ? * 1-5 ");
        assert_eq!(s.as_str(), "  0 6 ? * 1-5 ");
        assert_eq!(s.to_string(), "  0 6 ? * 1-5 ");
        assert_eq!(
            "0 6 ? * *".parse::<Schedule>().map(|s| s.hour_mask()),
            Ok(1 << 6)
        );
    }
}
