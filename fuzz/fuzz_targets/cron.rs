//! Cron windows as a spec writes them: schedule expressions and time zones, compiled and
//! evaluated around an instant. Input lines: start, end, time zone (empty: none), Unix seconds.
#![no_main]

use foresight_api::cron::CronSpec;
use foresight_core::cron::CronSet;
use jiff::{tz::TimeZone, Timestamp};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let mut lines = text.split('\n');
    let start = lines.next().unwrap_or_default();
    let end = lines.next().unwrap_or_default();
    let timezone = lines.next().filter(|z| !z.is_empty()).map(str::to_owned);
    let at = lines
        .next()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(1_767_225_600);
    let _ = foresight_api::schedule::Schedule::parse(start);
    let spec = CronSpec {
        name: "w".to_owned(),
        timezone,
        start: start.to_owned(),
        end: end.to_owned(),
        target_replicas: 3,
        ..Default::default()
    };
    if let Ok(set) = CronSet::compile(&[spec], &TimeZone::UTC) {
        let at = Timestamp::from_second(at.rem_euclid(8_000_000_000)).unwrap_or_default();
        let _ = set.evaluate(at);
    }
});
