//! When a schedule fires, as instants, in a zone with DST.
//!
//! A matching wall-clock minute `c` fires at `f(c)`:
//! - at the one instant it names, when it occurs once;
//! - at its first occurrence, when a fall-back repeats it;
//! - at the end of the gap (the transition instant), when a spring-forward skips it, so every
//!   skipped match coalesces into that one firing.
//!
//! `f` never decreases as wall-clock time increases, so for any instant `t` the wall-clock
//! minutes that have fired by `t` are exactly those up to one boundary minute (see
//! [`last_minute_fired_by`]). "Last firing at or before t" is then the last match up to the
//! boundary, and "next firing after t" the first match past it: two calendar searches and
//! one zone lookup each, however far apart the firings are.

use foresight_api::schedule::Schedule;
use jiff::civil::{Date, DateTime};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp};

use super::calendar;

/// The instant at which the matching wall-clock time `wall` fires in `tz`, or `None` beyond
/// the range of representable instants.
pub(crate) fn firing_instant(tz: &TimeZone, wall: DateTime) -> Option<Timestamp> {
    match tz.to_ambiguous_timestamp(wall).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(wall).ok(),
        // The first occurrence is the one read with the offset in force before the fall-back.
        AmbiguousOffset::Fold { before, .. } => before.to_timestamp(wall).ok(),
        AmbiguousOffset::Gap { after, .. } => {
            // Read with the later offset, a skipped wall time lands before the transition; the
            // first transition after that instant is the end of this gap.
            let before_gap = after.to_timestamp(wall).ok()?;
            tz.following(before_gap)
                .next()
                .map(|transition| transition.timestamp())
        }
    }
}

/// The boundary wall-clock minute for `t`: a wall-clock minute has fired by `t` (its firing
/// instant is at or before `t`) exactly when it is at or before the returned minute.
pub(crate) fn last_minute_fired_by(tz: &TimeZone, t: Timestamp) -> Option<DateTime> {
    let wall = tz.to_datetime(t);
    if let AmbiguousOffset::Fold { before, after } = tz.to_ambiguous_timestamp(wall).offset() {
        if tz.to_offset(t) == after {
            // `t` is in the second pass of a fall-back: every repeated wall time already fired
            // during the first pass, and nothing after the repeat has fired yet. The repeat
            // ends at the wall time the first pass reached at the transition.
            let transition = tz
                .preceding(t.checked_add(SignedDuration::from_nanos(1)).ok()?)
                .next()?
                .timestamp();
            let repeat_end = before.to_datetime(transition);
            return floor_to_minute(repeat_end.checked_sub(SignedDuration::from_nanos(1)).ok()?);
        }
    }
    floor_to_minute(wall)
}

/// The last firing of `schedule` among the wall-clock minutes up to `boundary` (from
/// [`last_minute_fired_by`]), looking back no further than `first_day`.
pub(crate) fn last_firing_up_to(
    schedule: &Schedule,
    tz: &TimeZone,
    boundary: DateTime,
    first_day: Date,
) -> Option<Timestamp> {
    let wall = calendar::previous_match(schedule, boundary, first_day)?;
    firing_instant(tz, wall)
}

/// The first firing of `schedule` among the wall-clock minutes from `from` on, looking no
/// further than `last_day`.
pub(crate) fn first_firing_from(
    schedule: &Schedule,
    tz: &TimeZone,
    from: DateTime,
    last_day: Date,
) -> Option<Timestamp> {
    let wall = calendar::next_match(schedule, None, from, last_day)?;
    firing_instant(tz, wall)
}

/// The first firing of `schedule` strictly after `t`, looking no further than `last_day` in
/// wall-clock time.
pub(crate) fn next_firing_after(
    schedule: &Schedule,
    tz: &TimeZone,
    t: Timestamp,
    last_day: Date,
) -> Option<Timestamp> {
    let from = next_minute(last_minute_fired_by(tz, t)?)?;
    first_firing_from(schedule, tz, from, last_day)
}

/// The wall-clock minute after `wall`.
pub(crate) fn next_minute(wall: DateTime) -> Option<DateTime> {
    wall.checked_add(SignedDuration::from_mins(1)).ok()
}

fn floor_to_minute(wall: DateTime) -> Option<DateTime> {
    DateTime::new(
        wall.year(),
        wall.month(),
        wall.day(),
        wall.hour(),
        wall.minute(),
        0,
        0,
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn zone(name: &str) -> TimeZone {
        match TimeZone::get(name) {
            Ok(tz) => tz,
            Err(e) => panic!("{name}: {e}"),
        }
    }

    fn ts(text: &str) -> Timestamp {
        match text.parse() {
            Ok(t) => t,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn wall(y: i16, mo: i8, d: i8, h: i8, mi: i8) -> DateTime {
        date(y, mo, d).at(h, mi, 0, 0)
    }

    #[test]
    fn ordinary_wall_times_fire_at_the_instant_they_name() {
        let ny = zone("America/New_York");
        assert_eq!(
            firing_instant(&ny, wall(2026, 5, 12, 9, 0)),
            Some(ts("2026-05-12T13:00:00Z"))
        );
        assert_eq!(
            firing_instant(&TimeZone::UTC, wall(2026, 5, 12, 9, 0)),
            Some(ts("2026-05-12T09:00:00Z"))
        );
    }

    #[test]
    fn skipped_wall_times_fire_at_the_end_of_the_gap() {
        // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT at 07:00Z.
        let ny = zone("America/New_York");
        for minute in [0, 1, 30, 59] {
            assert_eq!(
                firing_instant(&ny, wall(2026, 3, 8, 2, minute)),
                Some(ts("2026-03-08T07:00:00Z"))
            );
        }
        assert_eq!(
            firing_instant(&ny, wall(2026, 3, 8, 3, 0)),
            Some(ts("2026-03-08T07:00:00Z"))
        );
        assert_eq!(
            firing_instant(&ny, wall(2026, 3, 8, 1, 59)),
            Some(ts("2026-03-08T06:59:00Z"))
        );
        // Lord Howe, 2026-10-04: 02:00 +10:30 jumps to 02:30 +11 at 15:30Z the day before.
        let lord_howe = zone("Australia/Lord_Howe");
        assert_eq!(
            firing_instant(&lord_howe, wall(2026, 10, 4, 2, 15)),
            Some(ts("2026-10-03T15:30:00Z"))
        );
    }

    #[test]
    fn repeated_wall_times_fire_at_their_first_occurrence() {
        // New York, 2026-11-01: 02:00 EDT falls back to 01:00 EST at 06:00Z.
        let ny = zone("America/New_York");
        assert_eq!(
            firing_instant(&ny, wall(2026, 11, 1, 1, 30)),
            Some(ts("2026-11-01T05:30:00Z"))
        );
        assert_eq!(
            firing_instant(&ny, wall(2026, 11, 1, 2, 0)),
            Some(ts("2026-11-01T07:00:00Z"))
        );
    }

    #[test]
    fn boundary_in_the_second_pass_of_a_fall_back_is_the_end_of_the_repeat() {
        let ny = zone("America/New_York");
        // First pass (EDT): the boundary is the wall time itself.
        assert_eq!(
            last_minute_fired_by(&ny, ts("2026-11-01T05:30:00Z")),
            Some(wall(2026, 11, 1, 1, 30))
        );
        // Second pass (EST): every repeated minute has fired, 02:00 EST has not.
        assert_eq!(
            last_minute_fired_by(&ny, ts("2026-11-01T06:00:00Z")),
            Some(wall(2026, 11, 1, 1, 59))
        );
        assert_eq!(
            last_minute_fired_by(&ny, ts("2026-11-01T06:30:00Z")),
            Some(wall(2026, 11, 1, 1, 59))
        );
        assert_eq!(
            last_minute_fired_by(&ny, ts("2026-11-01T06:59:59Z")),
            Some(wall(2026, 11, 1, 1, 59))
        );
        assert_eq!(
            last_minute_fired_by(&ny, ts("2026-11-01T07:00:00Z")),
            Some(wall(2026, 11, 1, 2, 0))
        );
        // Seconds are dropped: 12:00:30 has seen 12:00 fire, not 12:01.
        assert_eq!(
            last_minute_fired_by(&TimeZone::UTC, ts("2026-05-12T12:00:30Z")),
            Some(wall(2026, 5, 12, 12, 0))
        );
    }

    #[test]
    fn next_and_last_firings_follow_the_dst_rules() {
        let ny = zone("America/New_York");
        let far = date(2030, 1, 1);
        let long_ago = date(2020, 1, 1);
        let every_quarter = match Schedule::parse("*/15 * * * *") {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        // In the spring gap the four skipped quarters fire once, at 07:00Z, then 03:15 EDT.
        assert_eq!(
            next_firing_after(&every_quarter, &ny, ts("2026-03-08T06:45:00Z"), far),
            Some(ts("2026-03-08T07:00:00Z"))
        );
        assert_eq!(
            next_firing_after(&every_quarter, &ny, ts("2026-03-08T07:00:00Z"), far),
            Some(ts("2026-03-08T07:15:00Z"))
        );
        // In the second pass of the fall-back nothing fires until 02:00 EST.
        assert_eq!(
            next_firing_after(&every_quarter, &ny, ts("2026-11-01T05:50:00Z"), far),
            Some(ts("2026-11-01T07:00:00Z"))
        );
        let boundary = last_minute_fired_by(&ny, ts("2026-11-01T06:50:00Z"));
        assert_eq!(
            boundary.and_then(|b| last_firing_up_to(&every_quarter, &ny, b, long_ago)),
            Some(ts("2026-11-01T05:45:00Z"))
        );
    }
}
