//! Searching wall-clock time for the minutes a schedule matches.
//!
//! Wall-clock (civil) time has no time zone and no DST: it is a plain calendar. Searching it
//! first and mapping the result through the zone afterwards (see `firing`) keeps DST out of
//! the search. The search walks days, not minutes: a day is rejected with a few bit tests,
//! months that do not match are skipped whole, and inside a matching day the hour and minute
//! masks give the answer directly. A search therefore costs at most one step per day of its
//! bound, however rarely the schedule matches.

use foresight_api::schedule::Schedule;
use jiff::civil::{Date, DateTime};

/// The first minute at or after `from` (its seconds ignored), on or before `last_day`, that
/// `schedule` matches and `except`, if given, does not.
pub(crate) fn next_match(
    schedule: &Schedule,
    except: Option<&Schedule>,
    from: DateTime,
    last_day: Date,
) -> Option<DateTime> {
    let mut day = from.date();
    let mut earliest = (from.hour(), from.minute());
    while day <= last_day {
        if !schedule.matches_month(day.month()) {
            day = first_day_of_next_matching_month(schedule, day)?;
            earliest = (0, 0);
            continue;
        }
        if schedule.matches_date(day) {
            let except = except.filter(|e| e.matches_date(day));
            if let Some((hour, minute)) = first_time_in_day(schedule, except, earliest) {
                return DateTime::new(day.year(), day.month(), day.day(), hour, minute, 0, 0).ok();
            }
        }
        day = day.tomorrow().ok()?;
        earliest = (0, 0);
    }
    None
}

/// The last minute at or before `until` (its seconds ignored), on or after `first_day`, that
/// `schedule` matches.
pub(crate) fn previous_match(
    schedule: &Schedule,
    until: DateTime,
    first_day: Date,
) -> Option<DateTime> {
    let mut day = until.date();
    let mut latest = (until.hour(), until.minute());
    while day >= first_day {
        if !schedule.matches_month(day.month()) {
            day = last_day_of_previous_matching_month(schedule, day)?;
            latest = (23, 59);
            continue;
        }
        if schedule.matches_date(day) {
            if let Some((hour, minute)) = last_time_in_day(schedule, latest) {
                return DateTime::new(day.year(), day.month(), day.day(), hour, minute, 0, 0).ok();
            }
        }
        day = day.yesterday().ok()?;
        latest = (23, 59);
    }
    None
}

/// The earliest (hour, minute) at or after `earliest` that `schedule` matches and `except`
/// (already known to match this day) does not.
fn first_time_in_day(
    schedule: &Schedule,
    except: Option<&Schedule>,
    earliest: (i8, i8),
) -> Option<(i8, i8)> {
    let (first_hour, first_minute) = earliest;
    let mut hours = schedule.hour_mask() & at_or_above_32(first_hour);
    while hours != 0 {
        let hour = lowest_bit(u64::from(hours));
        hours &= hours - 1;
        let mut minutes = schedule.minute_mask();
        if let Some(except) = except {
            if except.hour_mask() & (1 << hour) != 0 {
                minutes &= !except.minute_mask();
            }
        }
        if hour == first_hour {
            minutes &= at_or_above_64(first_minute);
        }
        if minutes != 0 {
            return Some((hour, lowest_bit(minutes)));
        }
    }
    None
}

/// The latest (hour, minute) at or before `latest` that `schedule` matches.
fn last_time_in_day(schedule: &Schedule, latest: (i8, i8)) -> Option<(i8, i8)> {
    let (last_hour, last_minute) = latest;
    let mut hours = schedule.hour_mask() & at_or_below_32(last_hour);
    while hours != 0 {
        let hour = highest_bit(u64::from(hours));
        hours &= !(1 << hour);
        let mut minutes = schedule.minute_mask();
        if hour == last_hour {
            minutes &= at_or_below_64(last_minute);
        }
        if minutes != 0 {
            return Some((hour, highest_bit(minutes)));
        }
    }
    None
}

/// The first day of the first month after `day`'s month that the schedule matches; every
/// schedule matches some month, so at most twelve steps.
fn first_day_of_next_matching_month(schedule: &Schedule, day: Date) -> Option<Date> {
    let (mut year, mut month) = (day.year(), day.month());
    for _ in 0..12 {
        (year, month) = if month == 12 {
            (year.checked_add(1)?, 1)
        } else {
            (year, month + 1)
        };
        if schedule.matches_month(month) {
            return Date::new(year, month, 1).ok();
        }
    }
    None
}

/// The last day of the last month before `day`'s month that the schedule matches.
fn last_day_of_previous_matching_month(schedule: &Schedule, day: Date) -> Option<Date> {
    let (mut year, mut month) = (day.year(), day.month());
    for _ in 0..12 {
        (year, month) = if month == 1 {
            (year.checked_sub(1)?, 12)
        } else {
            (year, month - 1)
        };
        if schedule.matches_month(month) {
            return Date::new(year, month, 1).ok().map(Date::last_of_month);
        }
    }
    None
}

/// Bits `from` and up; `from` is an hour, 0-23.
fn at_or_above_32(from: i8) -> u32 {
    u32::MAX
        .checked_shl(u32::from(from.unsigned_abs()))
        .unwrap_or(0)
}

/// Bits `from` and up; `from` is a minute, 0-59.
fn at_or_above_64(from: i8) -> u64 {
    u64::MAX
        .checked_shl(u32::from(from.unsigned_abs()))
        .unwrap_or(0)
}

/// Bits 0 to `to`; `to` is an hour, 0-23.
fn at_or_below_32(to: i8) -> u32 {
    u32::MAX
        .checked_shr(31 - u32::from(to.unsigned_abs()).min(31))
        .unwrap_or(0)
}

/// Bits 0 to `to`; `to` is a minute, 0-59.
fn at_or_below_64(to: i8) -> u64 {
    u64::MAX
        .checked_shr(63 - u32::from(to.unsigned_abs()).min(63))
        .unwrap_or(0)
}

/// The index of the lowest set bit of a non-zero mask of hours or minutes (below 64).
fn lowest_bit(mask: u64) -> i8 {
    mask.trailing_zeros().min(63) as i8
}

/// The index of the highest set bit of a non-zero mask of hours or minutes (below 64).
fn highest_bit(mask: u64) -> i8 {
    (63 - mask.leading_zeros().min(63)) as i8
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn schedule(text: &str) -> Schedule {
        match Schedule::parse(text) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    fn dt(y: i16, mo: i8, d: i8, h: i8, mi: i8) -> DateTime {
        date(y, mo, d).at(h, mi, 0, 0)
    }

    #[test]
    fn next_match_is_inclusive_and_moves_across_hours_days_and_months() {
        let s = schedule("30 9,17 * * *");
        let far = date(2030, 1, 1);
        assert_eq!(
            next_match(&s, None, dt(2026, 5, 12, 9, 30), far),
            Some(dt(2026, 5, 12, 9, 30))
        );
        assert_eq!(
            next_match(&s, None, dt(2026, 5, 12, 9, 31), far),
            Some(dt(2026, 5, 12, 17, 30))
        );
        assert_eq!(
            next_match(&s, None, dt(2026, 5, 31, 17, 31), far),
            Some(dt(2026, 6, 1, 9, 30))
        );
        let leap = schedule("0 0 29 2 *");
        assert_eq!(
            next_match(&leap, None, dt(2026, 3, 1, 0, 0), far),
            Some(dt(2028, 2, 29, 0, 0))
        );
        assert_eq!(
            next_match(&leap, None, dt(2026, 3, 1, 0, 0), date(2028, 2, 28)),
            None
        );
    }

    #[test]
    fn previous_match_is_inclusive_and_moves_back_across_years() {
        let s = schedule("0 9 * * MON");
        let long_ago = date(2000, 1, 1);
        // 2026-05-18 is a Monday.
        assert_eq!(
            previous_match(&s, dt(2026, 5, 18, 9, 0), long_ago),
            Some(dt(2026, 5, 18, 9, 0))
        );
        assert_eq!(
            previous_match(&s, dt(2026, 5, 18, 8, 59), long_ago),
            Some(dt(2026, 5, 11, 9, 0))
        );
        let q1 = schedule("0 0 1 JAN *");
        assert_eq!(
            previous_match(&q1, dt(2026, 3, 15, 12, 0), long_ago),
            Some(dt(2026, 1, 1, 0, 0))
        );
        let leap = schedule("0 0 29 2 *");
        assert_eq!(
            previous_match(&leap, dt(2027, 2, 28, 23, 59), long_ago),
            Some(dt(2024, 2, 29, 0, 0))
        );
        assert_eq!(
            previous_match(&leap, dt(2027, 2, 28, 23, 59), date(2024, 3, 1)),
            None
        );
    }

    #[test]
    fn searches_stop_at_their_bound_for_schedules_that_never_match() {
        let never = schedule("0 0 31 2 *");
        assert_eq!(
            next_match(&never, None, dt(2026, 1, 1, 0, 0), date(2036, 1, 1)),
            None
        );
        assert_eq!(
            previous_match(&never, dt(2026, 1, 1, 0, 0), date(2016, 1, 1)),
            None
        );
    }

    #[test]
    fn except_skips_minutes_the_other_schedule_also_matches() {
        let start = schedule("* * * * *");
        let end = schedule("* * 1-28 * *");
        let far = date(2030, 1, 1);
        assert_eq!(
            next_match(&start, Some(&end), dt(2026, 2, 3, 4, 5), far),
            Some(dt(2026, 3, 29, 0, 0))
        );
        let start = schedule("*/10 9 * * *");
        let end = schedule("0,10,20 9 * * *");
        assert_eq!(
            next_match(&start, Some(&end), dt(2026, 2, 3, 0, 0), far),
            Some(dt(2026, 2, 3, 9, 30))
        );
        // An except that does not match the day leaves the day alone.
        let end = schedule("0,10,20 9 * * SUN");
        // 2026-02-03 is a Tuesday.
        assert_eq!(
            next_match(&start, Some(&end), dt(2026, 2, 3, 0, 0), far),
            Some(dt(2026, 2, 3, 9, 0))
        );
    }

    #[test]
    fn stops_at_the_ends_of_the_calendar_without_panicking() {
        let s = schedule("0 0 * * *");
        assert_eq!(next_match(&s, None, DateTime::MAX, Date::MAX), None);
        assert_eq!(
            previous_match(&s, DateTime::MIN, Date::MIN),
            Some(DateTime::MIN)
        );
        let one_am = schedule("0 1 * * *");
        assert_eq!(previous_match(&one_am, DateTime::MIN, Date::MIN), None);
        assert_eq!(
            next_match(&s, None, dt(9999, 12, 31, 0, 0), Date::MAX),
            Some(dt(9999, 12, 31, 0, 0))
        );
        let june = schedule("0 0 * JUN *");
        assert_eq!(
            next_match(&june, None, dt(9999, 7, 1, 0, 0), Date::MAX),
            None
        );
        assert_eq!(
            previous_match(&june, dt(-9999, 5, 1, 0, 0), Date::MIN),
            None
        );
    }
}
