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

criterion_group!(benches, evaluate);
criterion_main!(benches);
