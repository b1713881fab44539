//! Time-axis ticks in a time zone: local midnights as major ticks labelled with the day, and
//! round hours between them as minor ticks, as dense as the chart's width allows.

use jiff::tz::TimeZone;
use jiff::Timestamp;

/// One tick on the time axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeTick {
    /// Unix seconds.
    pub time: i64,
    /// The label, when there is room for one.
    pub label: Option<String>,
    /// A day boundary.
    pub major: bool,
}

/// Minimum pixels between two minor ticks, and between two labelled ones.
const MIN_TICK_PX: f64 = 28.0;
const MIN_LABEL_PX: f64 = 46.0;
const MIN_DAY_LABEL_PX: f64 = 80.0;

/// The ticks between `t0` and `t1` (Unix seconds) on a plot `width` pixels wide.
pub fn time_ticks(t0: i64, t1: i64, tz: &TimeZone, width: f64) -> Vec<TimeTick> {
    let span = (t1 - t0).max(1) as f64;
    let px_per_second = width / span;
    let steps_minutes = [15, 30, 60, 120, 180, 360, 720];
    let minor_minutes = steps_minutes
        .iter()
        .copied()
        .find(|m| f64::from(*m) * 60.0 * px_per_second >= MIN_TICK_PX);
    let label_minor =
        minor_minutes.is_some_and(|m| f64::from(m) * 60.0 * px_per_second >= MIN_LABEL_PX);
    let day_px = 86_400.0 * px_per_second;
    // Days are labelled (and, when too close for a line each, drawn) every 1, 2 days, or
    // whole weeks and multiples, so that a long span's grid reads as weeks, not a fence.
    let needed = (MIN_DAY_LABEL_PX / day_px.max(1e-9)).ceil() as usize;
    let day_label_every = [1usize, 2, 7, 14, 28, 56, 91, 182, 364]
        .into_iter()
        .find(|d| *d >= needed)
        .unwrap_or(needed);
    let every_day_drawn = day_px >= MIN_TICK_PX;

    let Ok(start) = Timestamp::from_second(t0) else {
        return Vec::new();
    };
    let Ok(mut day) = start.to_zoned(tz.clone()).start_of_day() else {
        return Vec::new();
    };
    let mut ticks = Vec::new();
    let mut day_index = 0usize;
    // At most a few thousand days are ever drawn; the bound only guards against surprises.
    while ticks.len() < 20_000 {
        let midnight = day.timestamp().as_second();
        if midnight >= t1 {
            break;
        }
        if midnight >= t0 {
            let label = day_index
                .is_multiple_of(day_label_every)
                .then(|| day.strftime("%a %d %b").to_string());
            if every_day_drawn || label.is_some() {
                ticks.push(TimeTick {
                    time: midnight,
                    label,
                    major: true,
                });
            }
            day_index += 1;
        }
        if let Some(step) = minor_minutes {
            for minute in (step..24 * 60).step_by(step as usize) {
                let (hour, minute) = ((minute / 60) as i8, (minute % 60) as i8);
                let Ok(local) = day.date().at(hour, minute, 0, 0).to_zoned(tz.clone()) else {
                    continue;
                };
                let t = local.timestamp().as_second();
                if t > t0 && t < t1 {
                    ticks.push(TimeTick {
                        time: t,
                        label: label_minor.then(|| local.strftime("%H:%M").to_string()),
                        major: false,
                    });
                }
            }
        }
        match day.tomorrow() {
            Ok(next) => day = next,
            Err(_) => break,
        }
    }
    // A span without a midnight would show no date at all: give its first label one.
    if !ticks.iter().any(|t| t.major) {
        if let Some(first) = ticks.iter_mut().find(|t| t.label.is_some()) {
            if let Ok(at) = Timestamp::from_second(first.time) {
                first.label = Some(
                    at.to_zoned(tz.clone())
                        .strftime("%a %d %b %H:%M")
                        .to_string(),
                );
            }
        }
    }
    ticks.sort_by_key(|t| t.time);
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_major_and_hours_minor_in_the_zone() {
        // 2021-08-11 00:00 UTC to 2021-08-13 00:00 UTC, in Shanghai (UTC+8).
        let tz = TimeZone::get("Asia/Shanghai").unwrap_or(TimeZone::fixed(jiff::tz::offset(8)));
        let ticks = time_ticks(1_628_640_000, 1_628_812_800, &tz, 1000.0);
        let majors: Vec<_> = ticks.iter().filter(|t| t.major).collect();
        // Local midnights: 08-11 16:00 UTC and 08-12 16:00 UTC.
        assert_eq!(majors.len(), 2);
        assert_eq!(majors[0].time, 1_628_697_600);
        assert_eq!(majors[0].label.as_deref(), Some("Thu 12 Aug"));
        let minors = ticks.iter().filter(|t| !t.major).count();
        assert!(minors >= 8, "{ticks:?}");
    }

    #[test]
    fn long_spans_thin_out_the_labels() {
        let ticks = time_ticks(0, 60 * 86_400, &TimeZone::UTC, 1000.0);
        let labelled = ticks.iter().filter(|t| t.label.is_some()).count();
        assert!(labelled <= 13, "{labelled}");
        assert!(ticks.iter().all(|t| t.major), "no room for hours");
    }

    #[test]
    fn a_span_of_months_gets_weekly_lines_not_daily_ones() {
        let ticks = time_ticks(0, 111 * 86_400, &TimeZone::UTC, 1100.0);
        assert!(
            ticks.iter().all(|t| t.label.is_some()),
            "every line is labelled"
        );
        assert!((8..=16).contains(&ticks.len()), "{}", ticks.len());
        let gaps: Vec<i64> = ticks.windows(2).map(|w| w[1].time - w[0].time).collect();
        assert!(
            gaps.iter().all(|g| *g == gaps[0]),
            "evenly spaced: {gaps:?}"
        );
    }

    #[test]
    fn a_short_span_gets_quarter_hours_and_one_date() {
        // 09:10 to 12:10 UTC on Wed 2024-01-03.
        let t0 = 1_704_273_000;
        let ticks = time_ticks(t0, t0 + 3 * 3600, &TimeZone::UTC, 1100.0);
        let labels: Vec<&str> = ticks.iter().filter_map(|t| t.label.as_deref()).collect();
        assert_eq!(labels.first(), Some(&"Wed 03 Jan 09:15"));
        assert!(labels.contains(&"12:00"), "{labels:?}");
        assert_eq!(ticks.len(), 12);
    }
}
