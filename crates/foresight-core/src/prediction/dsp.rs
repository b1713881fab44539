//! Crane's DSP predictor end to end (docs/prediction.md, "The DSP predictor"): prepare the
//! series, find a daily or weekly period, back-test the estimators on the last period, and
//! repeat the winner's estimate of one period as the forecast.

use foresight_api::duration::format_duration;
use foresight_api::prediction::DSP_HISTORY_MARGIN;

use super::config::DspConfig;
use super::estimator::{select_estimator, Estimator, Spectrum};
use super::forecast::{Algorithm, Forecast, Prediction};
use super::period::{find_period_with, whole_periods, Period, PeriodSearch};
use super::preprocess::{prepare_series, Gap, PreparedSeries};
use super::spectrum::Planners;
use super::PeriodMemo;
use crate::trace::Sample;

/// Predicts with the DSP predictor from the samples in `history` up to `now` (Unix seconds).
///
/// Ready only with at least two whole periods of usable history and a detected daily or
/// weekly period (DSP step 4 in docs/prediction.md: otherwise there is no forecast at all, as in Crane). The forecast
/// starts one interval after the last sample used and repeats the estimated period once per
/// whole period of history (DSP step 4 in docs/prediction.md), so 15 days of history with a daily period forecast 15 days.
pub fn predict_dsp(config: &DspConfig, history: &[Sample], now: i64) -> Prediction {
    predict_dsp_with(
        config,
        history,
        now,
        &mut Planners::default(),
        &mut PeriodMemo::default(),
    )
}

/// [`predict_dsp`] reusing the FFT plans in `planners` and, where `memo` allows, its last
/// period search.
pub(crate) fn predict_dsp_with(
    config: &DspConfig,
    history: &[Sample],
    now: i64,
    planners: &mut Planners,
    memo: &mut PeriodMemo,
) -> Prediction {
    let interval = config.interval_secs();
    let margin = i64::try_from(DSP_HISTORY_MARGIN.as_secs()).unwrap_or(0);
    let series = match prepare_series(history, now, interval, config.history_secs(), margin) {
        Ok(series) => series,
        Err(e) => return Prediction::not_ready(format!("history unusable: {e}")),
    };
    if series.values.is_empty() && series.cut.is_none() {
        let looked_at = config.history_secs().saturating_add(margin);
        return Prediction::not_ready(format!("no samples in the {} before now", secs(looked_at)));
    }
    if series.values.len() < 2 * Period::Day.samples(interval) {
        return Prediction::not_ready(format!(
            "history {} < 2 periods (2d){}",
            secs(series.duration_secs()),
            cut_note(series.cut)
        ));
    }
    let search = memo.search(now, || {
        find_period_with(&series.values, interval, config.seed(), planners)
    });
    let Some(period) = search.period() else {
        return Prediction::not_ready(no_period_reason(&search, &series));
    };
    let period_samples = period.samples(interval);
    let (x, whole) = whole_periods(&series.values, period_samples);
    if whole < 2 {
        // find_period only analyses windows of two or more whole periods; kept for safety.
        return Prediction::not_ready(format!(
            "history {} < 2 periods ({})",
            secs(series.duration_secs()),
            secs(period.seconds())
        ));
    }
    let Some(selection) = select_estimator(
        config.estimators(),
        x,
        period_samples,
        interval,
        &mut planners.f64,
    ) else {
        return Prediction::not_ready("no estimator could be fitted to the history");
    };
    let Some(estimator) = config.estimators().get(selection.index) else {
        return Prediction::not_ready("no estimator could be fitted to the history");
    };
    let estimate = match estimator {
        Estimator::MaxValue(m) => m.estimate(x, period_samples),
        Estimator::Fft(f) => Spectrum::of(x, &mut planners.f64)
            .and_then(|mut spectrum| f.estimate_from(&mut spectrum, period_samples, interval)),
    };
    let estimate = match estimate {
        Ok(v) if v.iter().all(|v| v.is_finite()) => v,
        Ok(_) => {
            return Prediction::not_ready(format!("{estimator} gave values that are not finite"))
        }
        Err(e) => return Prediction::not_ready(format!("{estimator} failed: {e}")),
    };
    Prediction::Ready(Forecast {
        algorithm: Algorithm::Dsp,
        period_seconds: Some(period.seconds()),
        start: series.last_ts().saturating_add(interval),
        step: interval,
        values: estimate.repeat(whole),
        estimator: estimator.to_string(),
    })
}

fn no_period_reason(search: &PeriodSearch, series: &PreparedSeries) -> String {
    let mut reason = format!(
        "no daily or weekly period found in {} of history",
        secs(series.duration_secs())
    );
    if let Some(other) = search.detected_secs {
        reason.push_str(&format!(
            " (strongest cycle: {}, neither a day nor a week)",
            secs(other)
        ));
    }
    if search.window == Some(Period::Day) {
        reason.push_str("; a weekly period needs 2 weeks");
    }
    reason.push_str(&cut_note(series.cut));
    reason
}

fn cut_note(cut: Option<Gap>) -> String {
    match cut {
        None => String::new(),
        Some(gap) => format!(
            "; samples before a {} gap ending {} are ignored",
            secs(gap.to.saturating_sub(gap.from)),
            timestamp(gap.to)
        ),
    }
}

fn secs(s: i64) -> String {
    format_duration(std::time::Duration::from_secs(
        u64::try_from(s).unwrap_or(0),
    ))
}

fn timestamp(ts: i64) -> String {
    jiff::Timestamp::from_second(ts).map_or_else(|_| format!("{ts}s"), |t| t.to_string())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::prediction::estimator::MaxValueEstimator;
    use crate::prediction::minutely;

    const DAY: i64 = 86_400;

    fn daily_sine(ts: i64) -> f64 {
        100.0 + 40.0 * (2.0 * std::f64::consts::PI * ts as f64 / DAY as f64).sin()
    }

    #[test]
    fn forecasts_a_daily_sine_within_one_percent() {
        let now = 20 * DAY;
        let history = minutely(now - 3 * DAY, now + 60, daily_sine);
        let three_days = Duration::from_secs(3 * 86_400);
        let exact = vec![Estimator::Fft(
            crate::prediction::estimator::FftEstimator::with_margin(0.0),
        )];
        let config = DspConfig::new(Duration::from_secs(60), three_days, exact).unwrap();
        let Prediction::Ready(f) = predict_dsp(&config, &history, now) else {
            panic!("not ready")
        };
        assert_eq!(f.period_seconds, Some(DAY));
        assert_eq!((f.start, f.step), (now + 60, 60));
        assert_eq!(f.values.len(), 3 * 1440);
        for (i, v) in f.values.iter().enumerate() {
            let ts = f.start + 60 * i as i64;
            let actual = daily_sine(ts);
            assert!((v - actual).abs() <= 0.01 * actual, "{ts}: {v} vs {actual}");
        }
        let (peak_ts, peak) = f.peak_in(now, now + DAY).unwrap();
        assert_eq!(peak_ts, now + DAY / 4);
        assert!((peak - 140.0).abs() <= 1.4, "{peak}");

        // Crane's defaults pick the smallest margin for a series that repeats exactly. (The
        // outlier step clips the sine's extreme 0.1 % slightly, hence the tolerance.)
        let config = DspConfig::new(Duration::from_secs(60), three_days, vec![]).unwrap();
        let Prediction::Ready(f) = predict_dsp(&config, &history, now) else {
            panic!("not ready")
        };
        assert!(
            f.estimator.starts_with("fft(margin 0.01,"),
            "{}",
            f.estimator
        );
        for (i, v) in f.values.iter().enumerate() {
            let actual = daily_sine(f.start + 60 * i as i64);
            assert!((v / actual - 1.01).abs() < 1e-3, "{i}: {v} vs {actual}");
        }
    }

    #[test]
    fn is_deterministic() {
        let now = 9 * DAY;
        let noise: Vec<f64> = {
            use rand::{Rng, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
            (0..4 * 1440).map(|_| rng.random::<f64>() * 20.0).collect()
        };
        let history = minutely(now - 4 * DAY, now, |ts| {
            daily_sine(ts) + noise[((ts - 5 * DAY) / 60) as usize]
        });
        let config = DspConfig::default();
        let a = predict_dsp(&config, &history, now);
        let b = predict_dsp(&config, &history, now);
        let (Prediction::Ready(a), Prediction::Ready(b)) = (a, b) else {
            panic!("not ready")
        };
        assert!(a
            .values
            .iter()
            .zip(&b.values)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        assert_eq!(a, b);
    }

    #[test]
    fn explains_short_history() {
        let now = 10 * DAY;
        let history = minutely(now - DAY - 4 * 3600, now + 60, daily_sine);
        let p = predict_dsp(&DspConfig::default(), &history, now);
        assert_eq!(p, Prediction::not_ready("history 1d 4h < 2 periods (2d)"));
        assert_eq!(
            predict_dsp(&DspConfig::default(), &[], now),
            Prediction::not_ready("no samples in the 15d 1h before now")
        );
    }

    #[test]
    fn explains_a_long_gap_that_cut_the_history() {
        let now = 10 * DAY;
        let mut history = minutely(now - 5 * DAY, now - DAY - 3 * 3600, daily_sine);
        history.extend(minutely(now - DAY, now + 60, daily_sine));
        let Prediction::NotReady { reason } = predict_dsp(&DspConfig::default(), &history, now)
        else {
            panic!("ready")
        };
        assert_eq!(reason, "history 1d < 2 periods (2d); samples before a 3h 1m gap ending 1970-01-10T00:00:00Z are ignored");
    }

    #[test]
    fn explains_no_period() {
        let now = 10 * DAY;
        let history = minutely(now - 3 * DAY, now + 60, |ts| {
            ((ts / 60 * 2_654_435_761) % 1000) as f64
        });
        let Prediction::NotReady { reason } = predict_dsp(&DspConfig::default(), &history, now)
        else {
            panic!("ready")
        };
        assert!(
            reason.starts_with("no daily or weekly period found in 3d of history"),
            "{reason}"
        );
        assert!(
            reason.ends_with("a weekly period needs 2 weeks"),
            "{reason}"
        );
    }

    #[test]
    fn a_constant_series_is_not_periodic() {
        let now = 10 * DAY;
        let history = minutely(now - 3 * DAY, now + 60, |_| 5.0);
        assert!(matches!(
            predict_dsp(&DspConfig::default(), &history, now),
            Prediction::NotReady { .. }
        ));
    }

    #[test]
    fn uses_the_estimator_the_back_test_picks() {
        // A daily square wave: MaxValue reproduces it exactly, the FFT estimators only smooth it.
        let now = 10 * DAY;
        let square = |ts: i64| {
            if ts.rem_euclid(DAY) < DAY / 2 {
                100.0
            } else {
                20.0
            }
        };
        let history = minutely(now - 3 * DAY, now + 60, square);
        let mut estimators = crate::prediction::estimator::default_estimators();
        estimators.push(Estimator::MaxValue(MaxValueEstimator { margin: 0.0 }));
        let config = DspConfig::new(
            Duration::from_secs(60),
            Duration::from_secs(3 * 86_400),
            estimators,
        )
        .unwrap();
        let Prediction::Ready(f) = predict_dsp(&config, &history, now) else {
            panic!("not ready")
        };
        assert_eq!(f.estimator, "maxValue(margin 0)");
        assert_eq!(f.value_at(now + 3600), Some(100.0));
        assert_eq!(f.value_at(now + DAY / 2 + 3600), Some(20.0));
    }

    #[test]
    fn never_panics_on_odd_input() {
        let now = 10 * DAY;
        let config = DspConfig::default();
        for history in [
            vec![Sample {
                ts: now,
                value: 1.0,
            }],
            vec![
                Sample {
                    ts: now,
                    value: f64::NAN,
                },
                Sample {
                    ts: now - 60,
                    value: f64::INFINITY,
                },
            ],
            minutely(now - 3 * DAY, now, |ts| {
                if ts % 7 == 0 {
                    f64::NAN
                } else {
                    1e300
                }
            }),
            minutely(now - 3 * DAY, now, |ts| -daily_sine(ts)),
        ] {
            let _ = predict_dsp(&config, &history, now);
            let _ = predict_dsp(&config, &history, i64::MIN);
            let _ = predict_dsp(&config, &history, i64::MAX);
        }
    }
}
