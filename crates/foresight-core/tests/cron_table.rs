//! Hand-worked cron cases: for each, which crons are active at `now`, the cron proposal, and
//! the next instant the active set changes. Each expectation was derived from the contract
//! (docs/cron.md); the comment on a case shows the working where it is not obvious.
//!
//! Calendar facts used: 2026-05-01 is a Friday (so May 11 and 18 are Mondays, May 16 a
//! Saturday, May 17 a Sunday); 2026-06-01 is a Monday. DST transitions (tzdata 2025b):
//! - America/New_York: 2026-03-08 07:00Z (02:00 EST -> 03:00 EDT); 2026-11-01 06:00Z
//!   (02:00 EDT -> 01:00 EST).
//! - Europe/Berlin: 2026-03-29 01:00Z (02:00 CET -> 03:00 CEST); 2026-10-25 01:00Z
//!   (03:00 CEST -> 02:00 CET).
//! - Australia/Lord_Howe: 2026-04-04 15:00Z (02:00 +11 -> 01:30 +10:30); 2026-10-03 15:30Z
//!   (02:00 +10:30 -> 02:30 +11).
//! - America/Santiago: 2026-04-05 03:00Z (Saturday 24:00 -03 -> 23:00 -04); 2026-09-06
//!   04:00Z (00:00 -04 -> 01:00 -03).

use foresight_api::cron::CronSpec;
use foresight_core::cron::{cron_proposal, CronSet};
use jiff::tz::TimeZone;
use jiff::Timestamp;

/// (name, timezone, start, end, targetReplicas); an empty timezone is left absent.
type Cron = (&'static str, &'static str, &'static str, &'static str, i32);

struct Case {
    name: &'static str,
    crons: &'static [Cron],
    now: &'static str,
    current: i32,
    cron_only: bool,
    active: &'static [&'static str],
    proposal: Option<i32>,
    next: Option<&'static str>,
}

const CASES: &[Case] = &[
    // ---- field syntax (UTC) ----
    Case {
        name: "minute list: started 12:20, the 12:10 end is older",
        crons: &[("l", "UTC", "0,20,40 * * * *", "10,30,50 * * * *", 4)],
        now: "2026-05-12T12:25:00Z",
        current: 2,
        cron_only: false,
        active: &["l"],
        proposal: Some(4),
        next: Some("2026-05-12T12:30:00Z"),
    },
    Case {
        name: "hour list: between the 12:00 end and the 13:00 start",
        crons: &[("h", "UTC", "0 9,13 * * *", "0 12,17 * * *", 4)],
        now: "2026-05-12T12:30:00Z",
        current: 2,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-12T13:00:00Z"),
    },
    Case {
        name: "day-of-month range 10-20, ended on the 21st: next start June 10",
        crons: &[("d", "UTC", "0 0 10-20 * *", "0 0 21 * *", 4)],
        now: "2026-05-25T12:00:00Z",
        current: 2,
        cron_only: true,
        active: &[],
        proposal: Some(2),
        next: Some("2026-06-10T00:00:00Z"),
    },
    Case {
        name: "star step */15 against 5-50/15: open from :00 to :05",
        crons: &[("s", "UTC", "*/15 * * * *", "5-50/15 * * * *", 4)],
        now: "2026-05-12T12:03:00Z",
        current: 2,
        cron_only: false,
        active: &["s"],
        proposal: Some(4),
        next: Some("2026-05-12T12:05:00Z"),
    },
    Case {
        name: "star step: 12:05 end is newer than the 12:00 start",
        crons: &[("s", "UTC", "*/15 * * * *", "5-50/15 * * * *", 4)],
        now: "2026-05-12T12:07:00Z",
        current: 2,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-12T12:15:00Z"),
    },
    Case {
        name: "range step 8-18/5 (8, 13, 18) against 9-19/5 (9, 14, 19)",
        crons: &[("r", "UTC", "0 8-18/5 * * *", "0 9-19/5 * * *", 4)],
        now: "2026-05-12T13:30:00Z",
        current: 2,
        cron_only: false,
        active: &["r"],
        proposal: Some(4),
        next: Some("2026-05-12T14:00:00Z"),
    },
    Case {
        name: "range step: 11:00 is between the 9:00 end and the 13:00 start",
        crons: &[("r", "UTC", "0 8-18/5 * * *", "0 9-19/5 * * *", 4)],
        now: "2026-05-12T11:00:00Z",
        current: 2,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-12T13:00:00Z"),
    },
    Case {
        name: "month names JUN and sep: summer window in July",
        crons: &[("summer", "UTC", "0 0 1 JUN *", "0 0 1 sep *", 9)],
        now: "2026-07-15T00:00:00Z",
        current: 2,
        cron_only: false,
        active: &["summer"],
        proposal: Some(9),
        next: Some("2026-09-01T00:00:00Z"),
    },
    Case {
        name: "month range Nov-dec: the Dec 1 start is after last year's Dec 31 end",
        crons: &[("holidays", "UTC", "0 0 1 Nov-dec *", "0 0 31 DEC *", 9)],
        now: "2026-12-15T00:00:00Z",
        current: 2,
        cron_only: false,
        active: &["holidays"],
        proposal: Some(9),
        next: Some("2026-12-31T00:00:00Z"),
    },
    Case {
        name: "weekday names in mixed case: Wednesday is in MON,wed,Fri",
        crons: &[(
            "mwf",
            "UTC",
            "0 9 * * MON,wed,Fri",
            "0 17 * * mon,WED,fri",
            3,
        )],
        now: "2026-05-13T10:00:00Z",
        current: 1,
        cron_only: false,
        active: &["mwf"],
        proposal: Some(3),
        next: Some("2026-05-13T17:00:00Z"),
    },
    Case {
        name: "weekday names: Tuesday is not, next start Wednesday 09:00",
        crons: &[(
            "mwf",
            "UTC",
            "0 9 * * MON,wed,Fri",
            "0 17 * * mon,WED,fri",
            3,
        )],
        now: "2026-05-12T10:00:00Z",
        current: 1,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-13T09:00:00Z"),
    },
    Case {
        name: "day-of-week 0 is Sunday",
        crons: &[("sun0", "UTC", "0 10 * * 0", "0 12 * * 0", 5)],
        now: "2026-05-17T11:00:00Z",
        current: 1,
        cron_only: false,
        active: &["sun0"],
        proposal: Some(5),
        next: Some("2026-05-17T12:00:00Z"),
    },
    Case {
        name: "day-of-week 7 is Sunday too; on Saturday the next start is Sunday",
        crons: &[("sun7", "UTC", "0 10 * * 7", "0 12 * * 7", 5)],
        now: "2026-05-16T11:00:00Z",
        current: 1,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-17T10:00:00Z"),
    },
    Case {
        name: "? in day-of-month (Crane style) means every day",
        crons: &[("q", "UTC", "0 6 ? * *", "0 9 ? * *", 20)],
        now: "2026-05-16T07:00:00Z",
        current: 1,
        cron_only: false,
        active: &["q"],
        proposal: Some(20),
        next: Some("2026-05-16T09:00:00Z"),
    },
    Case {
        name: "? in day-of-week leaves day-of-month 15 alone to restrict",
        crons: &[("mid", "UTC", "0 0 15 * ?", "0 0 16 * ?", 7)],
        now: "2026-05-15T12:00:00Z",
        current: 1,
        cron_only: false,
        active: &["mid"],
        proposal: Some(7),
        next: Some("2026-05-16T00:00:00Z"),
    },
    Case {
        name: "OR rule: the 1st (a Friday) matches '1 * MON'",
        crons: &[("first-or-monday", "UTC", "0 9 1 * MON", "0 17 1 * MON", 6)],
        now: "2026-05-01T10:00:00Z",
        current: 1,
        cron_only: false,
        active: &["first-or-monday"],
        proposal: Some(6),
        next: Some("2026-05-01T17:00:00Z"),
    },
    Case {
        name: "OR rule: Monday the 4th matches '1 * MON'",
        crons: &[("first-or-monday", "UTC", "0 9 1 * MON", "0 17 1 * MON", 6)],
        now: "2026-05-04T10:00:00Z",
        current: 1,
        cron_only: false,
        active: &["first-or-monday"],
        proposal: Some(6),
        next: Some("2026-05-04T17:00:00Z"),
    },
    Case {
        name: "OR rule: Tuesday the 5th matches neither; next is Monday the 11th",
        crons: &[("first-or-monday", "UTC", "0 9 1 * MON", "0 17 1 * MON", 6)],
        now: "2026-05-05T10:00:00Z",
        current: 1,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-11T09:00:00Z"),
    },
    // ---- weekday, weekend and overnight windows ----
    Case {
        name: "weekday business hours on Friday evening: next start Monday",
        crons: &[("biz", "UTC", "0 9 * * 1-5", "0 17 * * 1-5", 8)],
        now: "2026-05-15T18:00:00Z",
        current: 3,
        cron_only: true,
        active: &[],
        proposal: Some(3),
        next: Some("2026-05-18T09:00:00Z"),
    },
    Case {
        name: "weekend window (Sat 00:00 to Mon 00:00) on Saturday noon",
        crons: &[("weekend", "UTC", "0 0 * * 6", "0 0 * * 1", 2)],
        now: "2026-05-16T12:00:00Z",
        current: 5,
        cron_only: false,
        active: &["weekend"],
        proposal: Some(2),
        next: Some("2026-05-18T00:00:00Z"),
    },
    Case {
        name: "weekend window at its Monday 00:00 end: closed, next Saturday",
        crons: &[("weekend", "UTC", "0 0 * * 6", "0 0 * * 1", 2)],
        now: "2026-05-18T00:00:00Z",
        current: 5,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-23T00:00:00Z"),
    },
    Case {
        name: "overnight 21:30-05:15 after midnight: opened yesterday 21:30",
        crons: &[("night", "UTC", "30 21 * * *", "15 5 * * *", 1)],
        now: "2026-05-12T02:00:00Z",
        current: 4,
        cron_only: false,
        active: &["night"],
        proposal: Some(1),
        next: Some("2026-05-12T05:15:00Z"),
    },
    Case {
        name: "overnight 21:30-05:15 at midday: closed until 21:30",
        crons: &[("night", "UTC", "30 21 * * *", "15 5 * * *", 1)],
        now: "2026-05-12T12:00:00Z",
        current: 4,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-12T21:30:00Z"),
    },
    Case {
        name: "weeknight window (Mon-Fri 22:00 to Tue-Sat 06:00) early Saturday",
        crons: &[("weeknights", "UTC", "0 22 * * 1-5", "0 6 * * 2-6", 2)],
        now: "2026-05-16T03:00:00Z",
        current: 4,
        cron_only: false,
        active: &["weeknights"],
        proposal: Some(2),
        next: Some("2026-05-16T06:00:00Z"),
    },
    Case {
        name: "weeknight window on Saturday night: no start until Monday 22:00",
        crons: &[("weeknights", "UTC", "0 22 * * 1-5", "0 6 * * 2-6", 2)],
        now: "2026-05-16T23:00:00Z",
        current: 4,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-18T22:00:00Z"),
    },
    // ---- month ends and leap days ----
    Case {
        name: "day 31 does not exist in June: next start July 31",
        crons: &[("eom", "UTC", "0 0 31 * *", "0 12 31 * *", 9)],
        now: "2026-06-15T00:00:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-07-31T00:00:00Z"),
    },
    Case {
        name: "day 30 skips February: closed since Feb 1, next start Mar 30",
        crons: &[("d30", "UTC", "0 0 30 * *", "0 0 1 * *", 9)],
        now: "2026-02-27T12:00:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-03-30T00:00:00Z"),
    },
    Case {
        name: "leap day 2028: open until March 1",
        crons: &[("leap", "UTC", "0 0 29 FEB *", "0 0 1 MAR *", 11)],
        now: "2028-02-29T12:00:00Z",
        current: 3,
        cron_only: false,
        active: &["leap"],
        proposal: Some(11),
        next: Some("2028-03-01T00:00:00Z"),
    },
    Case {
        name: "leap day from mid-2027: next start 2028-02-29, 273 days ahead",
        crons: &[("leap", "UTC", "0 0 29 FEB *", "0 0 1 MAR *", 11)],
        now: "2027-06-01T00:00:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2028-02-29T00:00:00Z"),
    },
    Case {
        name: "leap-day start more than 400 days away: no transition",
        crons: &[("leap", "UTC", "0 0 29 2 *", "0 0 31 12 *", 11)],
        now: "2026-01-01T00:00:00Z",
        current: 3,
        cron_only: true,
        active: &[],
        proposal: Some(3),
        next: None,
    },
    Case {
        name: "yearly start, leap-day end: open since Jan 1, end beyond 400 days",
        crons: &[("year", "UTC", "0 0 1 1 *", "0 0 29 2 *", 11)],
        now: "2026-06-01T00:00:00Z",
        current: 3,
        cron_only: false,
        active: &["year"],
        proposal: Some(11),
        next: None,
    },
    Case {
        name: "yearly start, daily end: open from New Year's midnight until 18:00",
        crons: &[("new-year", "UTC", "0 0 1 1 *", "0 18 * * *", 30)],
        now: "2026-01-01T12:00:00Z",
        current: 3,
        cron_only: false,
        active: &["new-year"],
        proposal: Some(30),
        next: Some("2026-01-01T18:00:00Z"),
    },
    Case {
        name: "yearly start, daily end: the next day's ends change nothing; next New Year",
        crons: &[("new-year", "UTC", "0 0 1 1 *", "0 18 * * *", 30)],
        now: "2026-01-02T12:00:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2027-01-01T00:00:00Z"),
    },
    // ---- several crons ----
    Case {
        name: "three overlapping crons: the largest target wins, the peak ends first",
        crons: &[
            ("all-day", "UTC", "0 8 * * *", "0 20 * * *", 5),
            ("peak", "UTC", "0 10 * * *", "0 12 * * *", 15),
            ("lunch", "UTC", "0 11 * * *", "0 14 * * *", 10),
        ],
        now: "2026-05-12T11:30:00Z",
        current: 3,
        cron_only: false,
        active: &["all-day", "lunch", "peak"],
        proposal: Some(15),
        next: Some("2026-05-12T12:00:00Z"),
    },
    Case {
        name: "after the peak ends the next largest active target applies",
        crons: &[
            ("all-day", "UTC", "0 8 * * *", "0 20 * * *", 5),
            ("peak", "UTC", "0 10 * * *", "0 12 * * *", 15),
            ("lunch", "UTC", "0 11 * * *", "0 14 * * *", 10),
        ],
        now: "2026-05-12T12:30:00Z",
        current: 3,
        cron_only: false,
        active: &["all-day", "lunch"],
        proposal: Some(10),
        next: Some("2026-05-12T14:00:00Z"),
    },
    Case {
        name: "handover with equal targets is still a transition",
        crons: &[
            ("a", "UTC", "0 6 * * *", "0 14 * * *", 8),
            ("b", "UTC", "0 14 * * *", "0 22 * * *", 8),
        ],
        now: "2026-05-12T14:00:00Z",
        current: 3,
        cron_only: false,
        active: &["b"],
        proposal: Some(8),
        next: Some("2026-05-12T22:00:00Z"),
    },
    Case {
        name: "Tokyo and Berlin business hours overlap at 08:00Z; Tokyo closes first",
        crons: &[
            ("tokyo", "Asia/Tokyo", "0 9 * * *", "0 18 * * *", 4),
            ("berlin", "Europe/Berlin", "0 9 * * *", "0 18 * * *", 6),
        ],
        now: "2026-05-12T08:00:00Z",
        current: 3,
        cron_only: false,
        active: &["berlin", "tokyo"],
        proposal: Some(6),
        next: Some("2026-05-12T09:00:00Z"),
    },
    // ---- cron alone vs with metrics ----
    Case {
        name: "between windows, cron alone: keep the current replicas",
        crons: &[("am", "UTC", "0 8 * * *", "0 10 * * *", 10)],
        now: "2026-05-12T11:00:00Z",
        current: 7,
        cron_only: true,
        active: &[],
        proposal: Some(7),
        next: Some("2026-05-13T08:00:00Z"),
    },
    Case {
        name: "between windows, with metrics: no cron proposal",
        crons: &[("am", "UTC", "0 8 * * *", "0 10 * * *", 10)],
        now: "2026-05-12T11:00:00Z",
        current: 7,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-05-13T08:00:00Z"),
    },
    Case {
        name: "an active target below current is proposed exactly",
        crons: &[("quiet", "UTC", "0 0 * * *", "0 6 * * *", 1)],
        now: "2026-05-12T03:00:00Z",
        current: 12,
        cron_only: true,
        active: &["quiet"],
        proposal: Some(1),
        next: Some("2026-05-12T06:00:00Z"),
    },
    Case {
        name: "an active target of 0 is a proposal of 0",
        crons: &[("off", "UTC", "0 0 * * *", "0 6 * * *", 0)],
        now: "2026-05-12T03:00:00Z",
        current: 12,
        cron_only: false,
        active: &["off"],
        proposal: Some(0),
        next: Some("2026-05-12T06:00:00Z"),
    },
    Case {
        name: "an absent timezone is UTC",
        crons: &[("utc", "", "0 9 * * *", "0 17 * * *", 6)],
        now: "2026-05-12T09:30:00Z",
        current: 3,
        cron_only: false,
        active: &["utc"],
        proposal: Some(6),
        next: Some("2026-05-12T17:00:00Z"),
    },
    // ---- DST: America/New_York ----
    Case {
        // The 02:30 start does not exist on 03-08; it fires at the gap's end, 07:00Z.
        name: "New York spring: before the gap the skipped start has not fired",
        crons: &[("ny", "America/New_York", "30 2 * * *", "0 6 * * *", 12)],
        now: "2026-03-08T06:30:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-03-08T07:00:00Z"),
    },
    Case {
        name: "New York the day before the spring gap: 02:30-05:00 EST",
        crons: &[("ny", "America/New_York", "30 2 * * *", "0 5 * * *", 12)],
        now: "2026-03-07T08:00:00Z",
        current: 3,
        cron_only: false,
        active: &["ny"],
        proposal: Some(12),
        next: Some("2026-03-07T10:00:00Z"),
    },
    Case {
        name: "New York spring: after the gap the window is open until 06:00 EDT",
        crons: &[("ny", "America/New_York", "30 2 * * *", "0 6 * * *", 12)],
        now: "2026-03-08T07:30:00Z",
        current: 3,
        cron_only: false,
        active: &["ny"],
        proposal: Some(12),
        next: Some("2026-03-08T10:00:00Z"),
    },
    Case {
        // 02:00, 02:15, 02:30 and 02:45 are all skipped: one firing at 07:00Z.
        name: "New York spring: every skipped quarter coalesces into one start at 07:00Z",
        crons: &[("ny", "America/New_York", "*/15 2 * * *", "0 4 * * *", 12)],
        now: "2026-03-08T07:00:00Z",
        current: 3,
        cron_only: false,
        active: &["ny"],
        proposal: Some(12),
        next: Some("2026-03-08T08:00:00Z"),
    },
    Case {
        name: "New York spring: an end in the gap closes at 07:00Z",
        crons: &[("ny", "America/New_York", "0 1 * * *", "15 2 * * *", 12)],
        now: "2026-03-08T06:30:00Z",
        current: 3,
        cron_only: false,
        active: &["ny"],
        proposal: Some(12),
        next: Some("2026-03-08T07:00:00Z"),
    },
    Case {
        // 01:30 fired once, at 01:30 EDT (05:30Z); the repeated 01:40 EST is inside the window.
        name: "New York fall: a start in the repeated hour fires once; open in the second pass",
        crons: &[("ny", "America/New_York", "30 1 * * *", "0 4 * * *", 12)],
        now: "2026-11-01T06:40:00Z",
        current: 3,
        cron_only: false,
        active: &["ny"],
        proposal: Some(12),
        next: Some("2026-11-01T09:00:00Z"),
    },
    Case {
        name: "New York fall: a window inside the repeated hour is open in the first pass",
        crons: &[("ny", "America/New_York", "10 1 * * *", "50 1 * * *", 12)],
        now: "2026-11-01T05:20:00Z",
        current: 3,
        cron_only: false,
        active: &["ny"],
        proposal: Some(12),
        next: Some("2026-11-01T05:50:00Z"),
    },
    Case {
        // Second pass, 01:20 EST: the 01:10 start (05:10Z) and 01:50 end (05:50Z) fired in
        // the first pass; next is 01:10 EST on 11-02.
        name: "New York fall: the same window stays closed in the second pass",
        crons: &[("ny", "America/New_York", "10 1 * * *", "50 1 * * *", 12)],
        now: "2026-11-01T06:20:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-11-02T06:10:00Z"),
    },
    // ---- DST: Europe/Berlin ----
    Case {
        name: "Berlin spring: an end skipped by the gap fires at 03:00 CEST (01:00Z)",
        crons: &[("de", "Europe/Berlin", "0 1 * * *", "30 2 * * *", 10)],
        now: "2026-03-29T00:30:00Z",
        current: 3,
        cron_only: false,
        active: &["de"],
        proposal: Some(10),
        next: Some("2026-03-29T01:00:00Z"),
    },
    Case {
        // 00:30Z on 03-30 is 02:30 CEST: the end fires now, the start (01:00 CEST = 23:00Z)
        // is earlier, so the window just closed; next start 01:00 CEST on 03-31.
        name: "Berlin the day after: at the end minute the window is closed",
        crons: &[("de", "Europe/Berlin", "0 1 * * *", "30 2 * * *", 10)],
        now: "2026-03-30T00:30:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-03-30T23:00:00Z"),
    },
    Case {
        // 02:30 occurs at 00:30Z (CEST) and 01:30Z (CET); the end fires at 00:30Z only.
        name: "Berlin fall: an end in the repeated hour fires at its first occurrence",
        crons: &[("de", "Europe/Berlin", "0 0 * * *", "30 2 * * *", 10)],
        now: "2026-10-25T01:15:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-10-25T23:00:00Z"),
    },
    Case {
        name: "Berlin fall: a start in the repeated hour opens at its first occurrence",
        crons: &[("de", "Europe/Berlin", "30 2 * * *", "0 4 * * *", 10)],
        now: "2026-10-25T00:45:00Z",
        current: 3,
        cron_only: false,
        active: &["de"],
        proposal: Some(10),
        next: Some("2026-10-25T03:00:00Z"),
    },
    // ---- DST: Australia/Lord_Howe (30-minute shift) ----
    Case {
        // 02:10 is skipped on 10-04 (02:00 -> 02:30 at 15:30Z on 10-03).
        name: "Lord Howe spring: before the half-hour gap the skipped start has not fired",
        crons: &[("lh", "Australia/Lord_Howe", "10 2 * * *", "0 4 * * *", 4)],
        now: "2026-10-03T15:20:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-10-03T15:30:00Z"),
    },
    Case {
        name: "Lord Howe spring: the skipped start fires at 02:30 +11, open until 04:00 +11",
        crons: &[("lh", "Australia/Lord_Howe", "10 2 * * *", "0 4 * * *", 4)],
        now: "2026-10-03T15:30:00Z",
        current: 3,
        cron_only: false,
        active: &["lh"],
        proposal: Some(4),
        next: Some("2026-10-03T17:00:00Z"),
    },
    Case {
        // 01:30-02:00 repeats on 04-05; 01:35 +11 is 14:35Z, 01:55 +11 is 14:55Z.
        name: "Lord Howe fall: a window inside the repeated half hour is open in the first pass",
        crons: &[("lh", "Australia/Lord_Howe", "35 1 * * *", "55 1 * * *", 4)],
        now: "2026-04-04T14:40:00Z",
        current: 3,
        cron_only: false,
        active: &["lh"],
        proposal: Some(4),
        next: Some("2026-04-04T14:55:00Z"),
    },
    Case {
        // Second pass (01:40 +10:30); next start 01:35 +10:30 on 04-06 = 15:05Z on 04-05.
        name: "Lord Howe fall: and closed in the second pass",
        crons: &[("lh", "Australia/Lord_Howe", "35 1 * * *", "55 1 * * *", 4)],
        now: "2026-04-04T15:10:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-04-05T15:05:00Z"),
    },
    // ---- DST: America/Santiago (midnight shift) ----
    Case {
        // Midnight is skipped on 09-06 (00:00 -04 -> 01:00 -03 at 04:00Z).
        name: "Santiago spring: before the gap the skipped midnight start has not fired",
        crons: &[("cl", "America/Santiago", "0 0 * * *", "0 2 * * *", 6)],
        now: "2026-09-06T03:30:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-09-06T04:00:00Z"),
    },
    Case {
        name: "Santiago spring: the skipped midnight fires at 01:00 -03, open until 02:00 -03",
        crons: &[("cl", "America/Santiago", "0 0 * * *", "0 2 * * *", 6)],
        now: "2026-09-06T04:30:00Z",
        current: 3,
        cron_only: false,
        active: &["cl"],
        proposal: Some(6),
        next: Some("2026-09-06T05:00:00Z"),
    },
    Case {
        // 23:30 on Saturday 04-04 first occurs at 02:30Z (-03); 03:45Z is 23:45 -04, the
        // second pass; the end 01:00 -04 on 04-05 is 05:00Z.
        name: "Santiago fall: a late-evening start in the repeated hour, open in the second pass",
        crons: &[("cl", "America/Santiago", "30 23 * * *", "0 1 * * *", 6)],
        now: "2026-04-05T03:45:00Z",
        current: 3,
        cron_only: false,
        active: &["cl"],
        proposal: Some(6),
        next: Some("2026-04-05T05:00:00Z"),
    },
    Case {
        // Midnight of 04-05 exists once, at 04:00Z (-04): the repeat is 23:00-24:00 of 04-04.
        name: "Santiago fall: the midnight after the repeated hour starts at 04:00Z",
        crons: &[("cl", "America/Santiago", "0 0 * * *", "0 12 * * *", 6)],
        now: "2026-04-05T03:30:00Z",
        current: 3,
        cron_only: false,
        active: &[],
        proposal: None,
        next: Some("2026-04-05T04:00:00Z"),
    },
];

fn spec(cron: &Cron) -> CronSpec {
    let (name, timezone, start, end, target) = *cron;
    CronSpec {
        name: name.to_owned(),
        description: None,
        timezone: (!timezone.is_empty()).then(|| timezone.to_owned()),
        start: start.to_owned(),
        end: end.to_owned(),
        target_replicas: target,
    }
}

fn run(case: &Case) -> Result<(), String> {
    let crons: Vec<CronSpec> = case.crons.iter().map(spec).collect();
    let set = CronSet::compile(&crons, &TimeZone::UTC).map_err(|e| format!("invalid: {e:?}"))?;
    let now: Timestamp = case.now.parse().map_err(|e| format!("now: {e}"))?;
    let state = set.evaluate(now);
    let active: Vec<&str> = state.active.iter().map(|a| a.name.as_str()).collect();
    let proposal = cron_proposal(&state, case.current, case.cron_only);
    let next = state.next_transition.map(|t| t.to_string());
    let expected_next = case.next.map(str::to_owned);
    if active != case.active || proposal != case.proposal || next != expected_next {
        return Err(format!(
            "expected active {:?}, proposal {:?}, next {:?}; got active {active:?}, proposal {proposal:?}, next {next:?}",
            case.active, case.proposal, expected_next
        ));
    }
    Ok(())
}

#[test]
fn hand_worked_cases() {
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|case| run(case).err().map(|e| format!("{}: {e}", case.name)))
        .collect();
    assert!(
        CASES.len() >= 40,
        "the table should cover at least 40 cases"
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn local_means_the_zone_the_caller_passes() {
    let crons = [CronSpec {
        name: "office".into(),
        timezone: Some("Local".into()),
        start: "0 9 * * *".into(),
        end: "0 18 * * *".into(),
        target_replicas: 5,
        ..CronSpec::default()
    }];
    let tokyo = TimeZone::get("Asia/Tokyo").map_err(|e| e.to_string());
    let set = tokyo.and_then(|tz| CronSet::compile(&crons, &tz).map_err(|e| format!("{e:?}")));
    let now: Result<Timestamp, String> = "2026-05-12T01:00:00Z"
        .parse()
        .map_err(|e: jiff::Error| e.to_string());
    let state = set.and_then(|set| now.map(|now| set.evaluate(now)));
    // 01:00Z is 10:00 in Tokyo: open, closing at 18:00 JST = 09:00Z.
    let state = state.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state.target, Some(5));
    assert_eq!(
        state.next_transition.map(|t| t.to_string()).as_deref(),
        Some("2026-05-12T09:00:00Z")
    );
}

#[test]
fn compile_reports_field_paths_under_crons() {
    let mut bad = spec(&("a", "UTC", "0 9 * * *", "0 9 * * *", 1));
    let errs = match CronSet::compile(std::slice::from_ref(&bad), &TimeZone::UTC) {
        Ok(_) => panic!("start == end must be rejected"),
        Err(errs) => errs,
    };
    assert_eq!(
        errs.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
        ["crons[0].end"]
    );
    bad.end = "0 17 * * *".into();
    bad.timezone = Some("Mars/Olympus_Mons".into());
    let ok = spec(&("b", "UTC", "0 9 * * *", "0 17 * * *", 1));
    let errs = match CronSet::compile(&[ok, bad], &TimeZone::UTC) {
        Ok(_) => panic!("unknown zone must be rejected"),
        Err(errs) => errs,
    };
    assert_eq!(
        errs.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
        ["crons[1].timezone"]
    );
}

#[test]
fn no_crons_means_nothing_active_and_no_transition() {
    let set = CronSet::compile(&[], &TimeZone::UTC).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(set.is_empty());
    let state = set.evaluate(Timestamp::UNIX_EPOCH);
    assert!(state.active.is_empty());
    assert_eq!((state.target, state.next_transition), (None, None));
    assert_eq!(cron_proposal(&state, 4, true), Some(4));
}
