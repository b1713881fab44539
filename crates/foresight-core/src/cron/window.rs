//! One cron's window: whether it is open at an instant, and when that next changes.
//!
//! The window is open at `t` when the last `start` firing at or before `t` is strictly later
//! than the last `end` firing at or before `t`: it opens at a start and closes at the next end,
//! and a start and an end at the same instant leave it closed.

use foresight_api::cron::CheckedCron;
use foresight_api::schedule::Schedule;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use super::{calendar, firing};

/// How far back the last firing is looked for. A schedule that can fire at all fires at least
/// once in eight years: the rarest is 29 February, which skips eight years around a century
/// that is not a leap year (2096 to 2104).
const LOOK_BACK: SignedDuration = SignedDuration::from_hours(24 * (8 * 366 + 1));

/// How far ahead the next transition is looked for (400 days).
pub const TRANSITION_HORIZON: SignedDuration = SignedDuration::from_hours(24 * 400);

/// A cron ready to evaluate.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    pub(crate) name: String,
    pub(crate) target_replicas: i32,
    tz: TimeZone,
    start: Schedule,
    end: Schedule,
    /// Whether `start` matches any date at all; if not, the window never opens.
    start_can_fire: bool,
}

/// A window's state at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WindowState {
    /// Whether the window is open.
    pub(crate) active: bool,
    /// The first instant after now at which `active` flips, if within the horizon.
    pub(crate) next_change: Option<Timestamp>,
}

impl Window {
    /// The zone the cron runs in.
    pub(crate) fn time_zone(&self) -> &TimeZone {
        &self.tz
    }

    pub(crate) fn new(cron: CheckedCron) -> Window {
        let start_can_fire = cron.start.matches_some_date();
        Window {
            name: cron.name,
            target_replicas: cron.target_replicas,
            tz: cron.time_zone,
            start: cron.start,
            end: cron.end,
            start_can_fire,
        }
    }

    /// The window's state at `now`.
    pub(crate) fn state_at(&self, now: Timestamp) -> WindowState {
        let closed_for_good = WindowState {
            active: false,
            next_change: None,
        };
        if !self.start_can_fire {
            return closed_for_good;
        }
        let Some(boundary) = firing::last_minute_fired_by(&self.tz, now) else {
            return closed_for_good;
        };
        let first_day = boundary.date().saturating_sub(LOOK_BACK);
        let last_start = firing::last_firing_up_to(&self.start, &self.tz, boundary, first_day);
        let last_end = firing::last_firing_up_to(&self.end, &self.tz, boundary, first_day);
        let active = match (last_start, last_end) {
            (Some(start), Some(end)) => start > end,
            // No end within the look-back: the start has not been closed.
            (Some(_), None) => true,
            (None, _) => false,
        };
        let horizon = now
            .saturating_add(TRANSITION_HORIZON)
            .unwrap_or(Timestamp::MAX);
        // A day of slack on the wall-clock bound covers any UTC offset; the instant bound
        // below is the exact one.
        let last_day = self
            .tz
            .to_datetime(horizon)
            .date()
            .tomorrow()
            .unwrap_or(Date::MAX);
        // The first wall-clock minute that has not fired by `now`; none at the end of time.
        let next_change = firing::next_minute(boundary).and_then(|from| {
            if active {
                // Every end closes the window; starts before it change nothing.
                firing::first_firing_from(&self.end, &self.tz, from, last_day)
            } else {
                self.next_opening_from(from, last_day)
            }
        });
        WindowState {
            active,
            next_change: next_change.filter(|t| *t <= horizon),
        }
    }

    /// The first start firing among the wall-clock minutes from `from` on that opens the
    /// window: one at which the end does not fire as well.
    fn next_opening_from(&self, mut from: DateTime, last_day: Date) -> Option<Timestamp> {
        loop {
            // Wall times that both schedules match fire together and never open the window,
            // so the search skips them rather than visiting them one by one.
            let wall = calendar::next_match(&self.start, Some(&self.end), from, last_day)?;
            let start = firing::firing_instant(&self.tz, wall)?;
            // Different wall times can still fire together when a spring-forward gap folds
            // them onto its end; only then does this check find an end.
            let just_before = start.checked_sub(SignedDuration::from_nanos(1)).ok()?;
            if firing::next_firing_after(&self.end, &self.tz, just_before, last_day) != Some(start)
            {
                return Some(start);
            }
            from = firing::next_minute(wall)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use foresight_api::cron::{check_crons, CronSpec};

    fn window(timezone: &str, start: &str, end: &str) -> Window {
        let spec = CronSpec {
            name: "w".into(),
            timezone: Some(timezone.into()),
            start: start.into(),
            end: end.into(),
            target_replicas: 1,
            ..CronSpec::default()
        };
        match check_crons("crons", &[spec], &TimeZone::UTC) {
            Ok(mut checked) => match checked.pop() {
                Some(cron) => Window::new(cron),
                None => panic!("no cron"),
            },
            Err(e) => panic!("{e:?}"),
        }
    }

    fn at(text: &str) -> Timestamp {
        match text.parse() {
            Ok(t) => t,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn state(active: bool, next: Option<&str>) -> WindowState {
        WindowState {
            active,
            next_change: next.map(at),
        }
    }

    #[test]
    fn equivalent_start_and_end_never_open() {
        let w = window("UTC", "0 9 * * *", "0 9 * * 0-7");
        assert_eq!(w.state_at(at("2026-05-12T09:00:00Z")), state(false, None));
        // Every minute starts and every minute ends: still never open, found without a
        // minute-by-minute walk over 400 days.
        let w = window("UTC", "* * * * *", "*/1 * * * *");
        assert_eq!(w.state_at(at("2026-05-12T09:00:30Z")), state(false, None));
    }

    #[test]
    fn start_that_never_matches_a_date_never_opens() {
        let w = window("Europe/Berlin", "0 0 31 2 *", "0 0 1 3 *");
        assert_eq!(w.state_at(at("2026-05-12T09:00:00Z")), state(false, None));
    }

    #[test]
    fn end_that_never_fires_keeps_the_window_open() {
        let w = window("UTC", "0 0 1 1 *", "0 0 30 2 *");
        assert_eq!(w.state_at(at("2026-05-12T09:00:00Z")), state(true, None));
    }

    #[test]
    fn starts_coinciding_with_ends_are_skipped_until_one_stands_alone() {
        // Starts every minute, ends every minute of days 1-28: opens only on the 29th.
        let w = window("UTC", "* * * * *", "* * 1-28 * *");
        assert_eq!(
            w.state_at(at("2026-02-10T12:00:00Z")),
            state(false, Some("2026-03-29T00:00:00Z"))
        );
        assert_eq!(
            w.state_at(at("2026-03-29T00:00:00Z")),
            state(true, Some("2026-04-01T00:00:00Z"))
        );
    }

    #[test]
    fn start_folded_onto_a_gap_end_with_the_end_stays_closed() {
        // New York 2026-03-08: 02:30 and 03:00 both fire at 07:00Z.
        let w = window("America/New_York", "30 2 * * *", "0 3 * * *");
        assert_eq!(
            w.state_at(at("2026-03-08T06:00:00Z")),
            state(false, Some("2026-03-09T06:30:00Z"))
        );
        assert_eq!(
            w.state_at(at("2026-03-08T07:00:00Z")),
            state(false, Some("2026-03-09T06:30:00Z"))
        );
    }

    #[test]
    fn survives_the_ends_of_time() {
        let w = window("America/New_York", "0 9 * * *", "0 17 * * *");
        let _ = w.state_at(Timestamp::MIN);
        let _ = w.state_at(Timestamp::MAX);
        let late = w.state_at(at("9999-12-30T12:00:00Z"));
        assert_eq!(late.next_change, Some(at("9999-12-30T14:00:00Z")));
    }
}
