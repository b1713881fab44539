//! Property tests for the cron source:
//! - parsing never panics, whatever the text;
//! - evaluation never panics and its answer is self-consistent for any valid crons, zones and
//!   instants in 1970-2100 (the active set holds until `next_transition` and changes there);
//! - around real DST transitions, evaluation agrees with a brute-force reading of the
//!   contract that walks every UTC minute and matches wall-clock times with croner directly.

use foresight_api::cron::CronSpec;
use foresight_api::schedule::Schedule;
use foresight_core::cron::{CronSet, CronState, TRANSITION_HORIZON};
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

const ZONES: &[&str] = &[
    "UTC",
    "America/New_York",
    "Europe/Berlin",
    "Australia/Lord_Howe",
    "America/Santiago",
    "Pacific/Chatham",
    "Asia/Kolkata",
    "America/St_Johns",
    "Europe/Dublin",
    "Africa/Casablanca",
    "America/Havana",
    "Asia/Tokyo",
    "Pacific/Kiritimati",
    "America/Sao_Paulo",
];

fn zone(name: &str) -> TimeZone {
    TimeZone::get(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn join(values: &[u32]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Any valid element syntax for a numeric field with bounds `lo..=hi`.
fn numeric_field(lo: u32, hi: u32) -> BoxedStrategy<String> {
    prop_oneof![
        Just("*".to_owned()),
        (lo..=hi).prop_map(|v| v.to_string()),
        (lo..=hi, lo..=hi).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        (1..=hi + 1).prop_map(|s| format!("*/{s}")),
        (lo..=hi, lo..=hi, 1..=hi + 1).prop_map(|(a, b, s)| format!(
            "{}-{}/{s}",
            a.min(b),
            a.max(b)
        )),
        prop::collection::vec(lo..=hi, 1..4).prop_map(|v| join(&v)),
    ]
    .boxed()
}

/// A name field (months or weekdays), written in a random case.
fn named_field(names: &'static [&'static str]) -> BoxedStrategy<String> {
    let n = names.len();
    let cased = move |i: usize, upper: bool| {
        let name = names[i % n];
        if upper {
            name.to_owned()
        } else {
            name.to_ascii_lowercase()
        }
    };
    prop_oneof![
        (0..n, any::<bool>()).prop_map(move |(i, up)| cased(i, up)),
        (0..n, 0..n, any::<bool>()).prop_map(move |(a, b, up)| format!(
            "{}-{}",
            cased(a.min(b), up),
            cased(a.max(b), up)
        )),
        prop::collection::vec((0..n, any::<bool>()), 1..4).prop_map(move |v| v
            .into_iter()
            .map(|(i, up)| cased(i, up))
            .collect::<Vec<_>>()
            .join(",")),
    ]
    .boxed()
}

const MONTHS: &[&str] = &[
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: &[&str] = &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// Any schedule in the grammar.
fn any_schedule() -> impl Strategy<Value = String> {
    (
        numeric_field(0, 59),
        numeric_field(0, 23),
        prop_oneof![Just("?".to_owned()), numeric_field(1, 31)],
        prop_oneof![numeric_field(1, 12), named_field(MONTHS)],
        prop_oneof![
            Just("?".to_owned()),
            numeric_field(0, 7),
            named_field(WEEKDAYS)
        ],
    )
        .prop_map(|(mi, h, dom, mo, dow)| format!("{mi} {h} {dom} {mo} {dow}"))
}

/// A schedule in the grammar that fires at least once a week: every month, and either both
/// day fields unrestricted or the weekday field restricted.
fn weekly_schedule() -> impl Strategy<Value = String> {
    let hours = prop_oneof![
        numeric_field(0, 23),
        // The hours where DST transitions happen, more often than chance would give them.
        prop::sample::select(vec![0u32, 1, 2, 3, 23]).prop_map(|h| h.to_string()),
    ];
    let unrestricted = prop::sample::select(vec![("*", "*"), ("?", "*"), ("*", "?")])
        .prop_map(|(dom, dow)| (dom.to_owned(), dow.to_owned()));
    let weekday_restricted = (
        prop_oneof![
            Just("*".to_owned()),
            Just("?".to_owned()),
            numeric_field(1, 31)
        ],
        numeric_field(0, 7).prop_filter("weekday must restrict", |dow| dow != "*"),
    );
    let days = prop_oneof![unrestricted, weekday_restricted];
    (numeric_field(0, 59), hours, days)
        .prop_map(|(mi, h, (dom, dow))| format!("{mi} {h} {dom} * {dow}"))
}

fn spec(name: String, timezone: &str, start: String, end: String, target: i32) -> CronSpec {
    CronSpec {
        name,
        description: None,
        timezone: Some(timezone.to_owned()),
        start,
        end,
        target_replicas: target,
    }
}

fn names(state: &CronState) -> Vec<String> {
    state.active.iter().map(|a| a.name.clone()).collect()
}

/// An instant from 1970 to 2100, with sub-minute parts.
fn instant_1970_2100() -> impl Strategy<Value = Timestamp> {
    (0i64..4_133_980_800, 0i32..1_000_000_000)
        .prop_map(|(s, ns)| Timestamp::new(s, ns).unwrap_or(Timestamp::UNIX_EPOCH))
}

proptest! {
    #[test]
    fn parsing_any_text_never_panics(text in ".{0,60}") {
        let _ = Schedule::parse(&text);
    }

    #[test]
    fn parsing_cron_like_tokens_never_panics(
        tokens in prop::collection::vec("[0-9*/,?#LW@A-Za-z=+-]{0,7}", 0..8)
    ) {
        let text = tokens.join(" ");
        if let Ok(schedule) = Schedule::parse(&text) {
            // Whatever is accepted matches something.
            prop_assert!(schedule.minute_mask() != 0 && schedule.hour_mask() != 0);
        }
    }

    #[test]
    fn every_schedule_in_the_grammar_parses(text in any_schedule()) {
        prop_assert!(Schedule::parse(&text).is_ok(), "{:?} was rejected: {:?}", text, Schedule::parse(&text).err());
    }

    #[test]
    fn evaluation_never_panics_and_is_self_consistent(
        crons in prop::collection::vec(
            (any_schedule(), any_schedule(), prop::sample::select(ZONES), -1i32..200),
            1..4,
        ),
        local in prop::sample::select(ZONES),
        use_local in any::<bool>(),
        now in instant_1970_2100(),
        fraction in 0.0f64..1.0,
    ) {
        let specs: Vec<CronSpec> = crons
            .into_iter()
            .enumerate()
            .filter(|(_, (start, end, _, _))| start != end)
            .map(|(i, (start, end, tz, target))| {
                let tz = if use_local && i == 0 { "Local" } else { tz };
                spec(format!("c{i}"), tz, start, end, target.max(0))
            })
            .collect();
        let set = match CronSet::compile(&specs, &zone(local)) {
            Ok(set) => set,
            Err(errs) => return Err(TestCaseError::fail(format!("valid crons rejected: {errs:?}"))),
        };
        let state = set.evaluate(now);
        let active = names(&state);
        let mut sorted = active.clone();
        sorted.sort_unstable();
        prop_assert_eq!(&active, &sorted);
        prop_assert_eq!(state.target, state.active.iter().map(|a| a.target_replicas).max());
        let horizon = now.saturating_add(TRANSITION_HORIZON).unwrap_or(Timestamp::MAX);
        match state.next_transition {
            Some(next) => {
                prop_assert!(next > now && next <= horizon, "next {} outside ({}, {}]", next, now, horizon);
                // Unchanged until the transition, changed at it.
                let gap = next.duration_since(now);
                let between = now.saturating_add(gap.mul_f64(fraction)).unwrap_or(now);
                prop_assert_eq!(names(&set.evaluate(between)), active.clone(), "changed at {} before {}", between, next);
                prop_assert_ne!(names(&set.evaluate(next)), active, "no change at {}", next);
            }
            None => {
                let between = now.saturating_add(TRANSITION_HORIZON.mul_f64(fraction)).unwrap_or(now);
                prop_assert_eq!(names(&set.evaluate(between)), active.clone());
                prop_assert_eq!(names(&set.evaluate(horizon)), active);
            }
        }
    }
}

// ---- brute force ----

const MINUTE: SignedDuration = SignedDuration::from_mins(1);
const WINDOW: SignedDuration = SignedDuration::from_hours(8 * 24);

fn croner_matches(cron: &croner::Cron, wall: DateTime) -> bool {
    cron.is_time_matching(&wall).unwrap_or(false)
}

/// Whether the schedule fires at the UTC minute `u`, read straight from the contract: the
/// wall-clock time at `u` matches and this is its first occurrence, or `u` ends a gap that
/// skipped a matching wall-clock time.
fn fires_at(cron: &croner::Cron, tz: &TimeZone, u: Timestamp) -> bool {
    let wall = tz.to_datetime(u);
    let first_occurrence = match tz.to_ambiguous_timestamp(wall).offset() {
        AmbiguousOffset::Unambiguous { .. } => true,
        AmbiguousOffset::Fold { before, .. } => tz.to_offset(u) == before,
        AmbiguousOffset::Gap { .. } => false,
    };
    if first_occurrence && croner_matches(cron, wall) {
        return true;
    }
    let (before, after) = (tz.to_offset(u - MINUTE), tz.to_offset(u));
    if after > before {
        // The wall clock jumped from `u + before` to `u + after`: those minutes were skipped.
        let (mut skipped, end) = (before.to_datetime(u), after.to_datetime(u));
        while skipped < end {
            if croner_matches(cron, skipped) {
                return true;
            }
            skipped = skipped.saturating_add(MINUTE);
        }
    }
    false
}

/// Minute by minute from `now - WINDOW` to `now + WINDOW`: whether the window is open at
/// `now` (None if no start or end fired in the look-back, so the answer is unknown here) and
/// the first minute after `now` at which that flips.
fn brute_force(
    start: &croner::Cron,
    end: &croner::Cron,
    tz: &TimeZone,
    now: Timestamp,
) -> Option<(bool, Option<Timestamp>)> {
    let (mut last_start, mut last_end) = (None, None);
    let mut u = now - WINDOW;
    while u <= now {
        if fires_at(start, tz, u) {
            last_start = Some(u);
        }
        if fires_at(end, tz, u) {
            last_end = Some(u);
        }
        u += MINUTE;
    }
    let active_now = last_start? > last_end?;
    let mut active = active_now;
    while u <= now + WINDOW {
        let (s, e) = (fires_at(start, tz, u), fires_at(end, tz, u));
        // With both firing at once the window is closed; otherwise the one that fired decides.
        if s || e {
            active = s && !e;
        }
        if active != active_now {
            return Some((active_now, Some(u)));
        }
        u += MINUTE;
    }
    Some((active_now, None))
}

/// An instant within three days of one of the zone's transitions between 2020 and 2030.
fn near_transition(tz: &TimeZone, pick: usize, offset_minutes: i64) -> Timestamp {
    let from = Timestamp::from_second(1_577_836_800).unwrap_or(Timestamp::UNIX_EPOCH); // 2020-01-01
    let transitions: Vec<Timestamp> = tz.following(from).take(20).map(|t| t.timestamp()).collect();
    let base = if transitions.is_empty() {
        from
    } else {
        transitions[pick % transitions.len()]
    };
    base.saturating_add(SignedDuration::from_mins(offset_minutes))
        .unwrap_or(base)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_minute_by_minute_brute_force_around_dst(
        start in weekly_schedule(),
        end in weekly_schedule(),
        tz_name in prop::sample::select(ZONES),
        pick in 0usize..20,
        offset_minutes in -3 * 1440i64..3 * 1440,
    ) {
        prop_assume!(start != end);
        let tz = zone(tz_name);
        let now = near_transition(&tz, pick, offset_minutes);
        let parse = |text: &str| {
            croner::parser::CronParser::builder()
                .seconds(croner::parser::Seconds::Disallowed)
                .build()
                .parse(text)
                .map_err(|e| TestCaseError::fail(format!("croner rejected {text:?}: {e}")))
        };
        let (start_cron, end_cron) = (parse(&start)?, parse(&end)?);
        let Some((active, next)) = brute_force(&start_cron, &end_cron, &tz, now) else {
            return Err(TestCaseError::reject("no start or end in the look-back window"));
        };
        let set = CronSet::compile(&[spec("w".into(), tz_name, start.clone(), end.clone(), 1)], &TimeZone::UTC)
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let state = set.evaluate(now);
        prop_assert_eq!(!state.active.is_empty(), active, "active at {} ({})", now, tz_name);
        match next {
            Some(next) => prop_assert_eq!(state.next_transition, Some(next)),
            None => prop_assert!(
                state.next_transition.is_none_or(|t| t > now + WINDOW),
                "found {:?} where brute force saw no change within 8 days", state.next_transition
            ),
        }
    }
}
