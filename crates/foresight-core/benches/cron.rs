//! `CronSet::evaluate` for a typical object: three crons in three zones, two with DST.
//! The controller calls it every sync period (15 s by default) for every autoscaler.

use criterion::{criterion_group, criterion_main, Criterion};
use foresight_api::cron::CronSpec;
use foresight_core::cron::CronSet;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

fn cron(name: &str, timezone: &str, start: &str, end: &str, target: i32) -> CronSpec {
    CronSpec {
        name: name.to_owned(),
        description: None,
        timezone: Some(timezone.to_owned()),
        start: start.to_owned(),
        end: end.to_owned(),
        target_replicas: target,
    }
}

fn evaluate(c: &mut Criterion) {
    let crons = [
        cron(
            "paris-mornings",
            "Europe/Paris",
            "0 6 ? * 1-5",
            "0 9 ? * 1-5",
            80,
        ),
        cron(
            "ny-business",
            "America/New_York",
            "30 8 * * MON-FRI",
            "0 18 * * MON-FRI",
            40,
        ),
        cron(
            "tokyo-weekend",
            "Asia/Tokyo",
            "0 0 * * SAT",
            "0 0 * * MON",
            20,
        ),
    ];
    let set = match CronSet::compile(&crons, &TimeZone::UTC) {
        Ok(set) => set,
        Err(errs) => panic!("benchmark crons are invalid: {errs:?}"),
    };
    let start: Timestamp = match "2026-03-06T12:00:00Z".parse() {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    // Step 15 s at a time through a week that includes New York's spring-forward, so the
    // benchmark sees both open and closed windows rather than one cached-looking instant.
    let step = SignedDuration::from_secs(15);
    let week = 7 * 24 * 60 * 4;
    let mut i = 0i64;
    c.bench_function("cron_evaluate_3_crons_3_zones", |b| {
        b.iter(|| {
            i = (i + 1) % week;
            let now = start.saturating_add(step * (i as i32)).unwrap_or(start);
            std::hint::black_box(set.evaluate(std::hint::black_box(now)))
        })
    });
}

/// Crons that make the searches work hardest: starts that coincide with ends for weeks, an
/// end that never fires (the full eight-year look-back), and starts that fire together with
/// their ends forever (the full 400-day horizon).
fn evaluate_worst_case(c: &mut Criterion) {
    let crons = [
        cron("coincide-for-weeks", "UTC", "* * * * *", "* * 1-28 * *", 5),
        cron(
            "end-never-fires",
            "Australia/Lord_Howe",
            "0 0 * * 1",
            "0 0 31 4,6,9,11 *",
            5,
        ),
        cron(
            "never-opens",
            "America/Santiago",
            "*/5 * * * *",
            "0-59/5 * * * *",
            5,
        ),
    ];
    let set = match CronSet::compile(&crons, &TimeZone::UTC) {
        Ok(set) => set,
        Err(errs) => panic!("benchmark crons are invalid: {errs:?}"),
    };
    let now: Timestamp = match "2026-02-01T12:00:00Z".parse() {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    c.bench_function("cron_evaluate_worst_case", |b| {
        b.iter(|| std::hint::black_box(set.evaluate(std::hint::black_box(now))))
    });
}

criterion_group!(benches, evaluate, evaluate_worst_case);
criterion_main!(benches);
