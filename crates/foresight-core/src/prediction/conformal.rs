//! The forecast's own errors, for sizing at a quantile of the peak load rather than at the
//! point forecast ("the forecast carries the headroom").
//!
//! A decision asks capacity for the load over its lead stretch (from the start-up time until
//! two syncs later): the load it sees now plus the rise the forecast foresees from now to its
//! peak over the stretch (the level correction applied). Once that stretch has been
//! observed, the error is the observed peak minus that. Anchoring at the load seen rather
//! than at the forecast's level matters: a forecast's level is off for hours at a time, so
//! margins learned from raw forecast errors had to cover the level too (measured: riskier
//! and dearer than learned headroom at every budget). The errors are kept per hour of the week and the margin for a decision is the
//! `1 − α` quantile of its hour's errors (falling back to the hour of the day, then to all
//! errors, while an hour has too few). `α` is adjusted online toward the budget `α*` as
//! adaptive conformal inference does (Gibbs & Candès, 2021): after each observed stretch,
//! `α ← α + γ(α* − miss)`, where `miss` says whether the margin then in force was exceeded.
//! So a margin that ran short too often grows, and one that was never reached shrinks.
//!
//! Everything here is learned from stretches that had ended before the moment it is used
//! at: the shells record errors at each refit, for the stretches the refit's history closed.

use std::collections::VecDeque;

use serde::Serialize;

use crate::prediction::headroom::{nearest_rank, value_in_slot};
use crate::prediction::Forecast;
use crate::trace::Sample;

/// A week, the longest period the errors are grouped by.
pub const WEEK_SECONDS: i64 = 604_800;
/// A day.
pub const DAY_SECONDS: i64 = 86_400;
/// The errors are grouped by the hour.
pub const SLOT_SECONDS: i64 = 3600;
/// Errors kept: a week and a day, so that every hour of the week is seen once.
pub const KEEP_SECONDS: i64 = WEEK_SECONDS + DAY_SECONDS;
/// The budget errors are learned at until an operating point names one.
pub const DEFAULT_ALPHA: f64 = 0.01;
/// The step of the online adjustment of `α`, per observed stretch (the paper's 0.005).
pub const GAMMA: f64 = 0.005;
/// A group needs at least this many errors, and at least `2 / α` of them, before its own
/// quantile is used: fewer cannot place a high quantile.
pub const MIN_GROUP_SAMPLES: usize = 30;

/// One observed stretch.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Error {
    /// When the decision was made (Unix seconds).
    decided: i64,
    /// Observed peak − forecast peak, in the metric's unit.
    error: f64,
}

/// The margin to add to the forecast peak, per hour of the week.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForecastMargin {
    /// Per hour from Thursday 00:00 UTC (the Unix epoch's weekday), in the metric's unit;
    /// may be negative where the forecast ran high.
    pub margins: Vec<f64>,
    /// The quantile kept (`1 − α`, as adjusted online).
    pub quantile: f64,
    /// Errors learned from.
    pub samples: u32,
}

impl ForecastMargin {
    /// The margin for a decision at `now`.
    pub fn at(&self, now: i64) -> f64 {
        value_in_slot(&self.margins, now, WEEK_SECONDS)
    }
}

/// The errors of one metric's forecasts, and the online `α`.
#[derive(Clone, Debug, PartialEq)]
pub struct ForecastErrors {
    errors: VecDeque<Error>,
    /// The budget `α*`: the share of stretches the margin may fall short in.
    target_alpha: f64,
    /// The adjusted `α`.
    alpha: f64,
    /// Decisions up to this time have been compared.
    compared_until: Option<i64>,
    /// The margin handed out last, against which new errors count as a miss or not.
    margin: Option<ForecastMargin>,
}

impl ForecastErrors {
    /// No errors yet, for a budget of `alpha` (a share, 0 < α < 1).
    pub fn new(alpha: f64) -> ForecastErrors {
        let alpha = if alpha.is_finite() {
            alpha.clamp(1e-4, 0.5)
        } else {
            0.01
        };
        ForecastErrors {
            errors: VecDeque::new(),
            target_alpha: alpha,
            alpha,
            compared_until: None,
            margin: None,
        }
    }

    /// The budget `α*`.
    pub fn target_alpha(&self) -> f64 {
        self.target_alpha
    }

    /// Moves the budget to `alpha` (an operating point chose another), starting the online
    /// adjustment anew from it; the errors are kept.
    pub fn retarget(&mut self, alpha: f64) {
        let fresh = ForecastErrors::new(alpha);
        if fresh.target_alpha != self.target_alpha {
            self.target_alpha = fresh.target_alpha;
            self.alpha = fresh.alpha;
            self.margin = None;
        }
    }

    /// Compares `forecast` (multiplied by `correction`, as the decisions used it, and in use
    /// from its start until `now`) with `history` (samples `interval` seconds apart, each the
    /// mean over the interval from its stamp) for every decision whose lead stretch
    /// `[decided + lead.0, decided + lead.1]` the history has closed by `now`, and adjusts
    /// `α`. Forgets errors older than [`KEEP_SECONDS`].
    pub fn record(
        &mut self,
        forecast: &Forecast,
        correction: f64,
        history: &[Sample],
        interval: i64,
        lead: (i64, i64),
        now: i64,
    ) {
        let interval = interval.max(1);
        let (lead_from, lead_to) = (lead.0.max(0), lead.1.max(lead.0.max(0)));
        let after = self
            .compared_until
            .unwrap_or(i64::MIN)
            .max(forecast.start.saturating_sub(1));
        let correction = if correction.is_finite() {
            correction.max(0.0)
        } else {
            1.0
        };
        let mut j = 0usize;
        for (i, s) in history.iter().enumerate() {
            let decided = s.ts.saturating_add(interval);
            let (from, to) = (
                decided.saturating_add(lead_from),
                decided.saturating_add(lead_to),
            );
            j = j.max(i);
            while j < history.len() && history[j].ts.saturating_add(interval) <= from {
                j += 1;
            }
            if decided <= after || to.saturating_add(interval) > now {
                continue;
            }
            let observed = history[j..]
                .iter()
                .take_while(|x| x.ts <= to)
                .map(|x| x.value)
                .filter(|v| v.is_finite())
                .fold(None, |p: Option<f64>, v| Some(p.map_or(v, |p| p.max(v))));
            let first = from.saturating_sub(forecast.step.max(1) - 1);
            let peak = forecast.peak_in(first, to).map(|(_, v)| v * correction);
            let at_now = forecast.value_at(s.ts).map(|v| v * correction);
            let (Some(observed), Some(peak), Some(at_now)) = (observed, peak, at_now) else {
                continue;
            };
            if !s.value.is_finite() {
                continue;
            }
            // Anchored at the load the decision saw: the forecast foresees the rise.
            let error = observed - (s.value + (peak - at_now).max(0.0));
            if !error.is_finite() {
                continue;
            }
            if let Some(m) = &self.margin {
                let miss = if error > m.at(decided) { 1.0 } else { 0.0 };
                self.alpha = (self.alpha + GAMMA * (self.target_alpha - miss)).clamp(1e-4, 0.5);
            }
            self.errors.push_back(Error { decided, error });
            self.compared_until = Some(decided);
        }
        let oldest = now.saturating_sub(KEEP_SECONDS);
        while self.errors.front().is_some_and(|e| e.decided < oldest) {
            self.errors.pop_front();
        }
    }

    /// The margin per hour of the week at the current `α`; `None` before any error.
    pub fn margin(&mut self) -> Option<ForecastMargin> {
        if self.errors.is_empty() {
            return None;
        }
        let quantile = 1.0 - self.alpha;
        let min = MIN_GROUP_SAMPLES.max((2.0 / self.alpha).ceil() as usize);
        let week = group(&self.errors, WEEK_SECONDS);
        let day = group(&self.errors, DAY_SECONDS);
        let mut all: Vec<f64> = self.errors.iter().map(|e| e.error).collect();
        let global = nearest_rank(&mut all, quantile).unwrap_or(0.0);
        let day_slots = day.len() as i64;
        let day_margins: Vec<f64> = (0..day_slots)
            .map(|s| pooled(&day, s, quantile, min).unwrap_or(global))
            .collect();
        let margins = (0..week.len() as i64)
            .map(|s| {
                pooled(&week, s, quantile, min).unwrap_or_else(|| {
                    let hour = usize::try_from(s.rem_euclid(day_slots.max(1))).unwrap_or(0);
                    day_margins.get(hour).copied().unwrap_or(global)
                })
            })
            .collect();
        let m = ForecastMargin {
            margins,
            quantile,
            samples: u32::try_from(self.errors.len()).unwrap_or(u32::MAX),
        };
        self.margin = Some(m.clone());
        Some(m)
    }
}

/// The errors grouped by hour of `period`.
fn group(errors: &VecDeque<Error>, period: i64) -> Vec<Vec<f64>> {
    let slots = usize::try_from(period / SLOT_SECONDS).unwrap_or(1);
    let mut by: Vec<Vec<f64>> = vec![Vec::new(); slots];
    for e in errors {
        let s = usize::try_from(e.decided.rem_euclid(period) / SLOT_SECONDS).unwrap_or(0);
        if let Some(b) = by.get_mut(s) {
            b.push(e.error);
        }
    }
    by
}

/// The `quantile` of slot `s`'s errors pooled with its two neighbours' (the period wraps),
/// or `None` when they hold fewer than `min`.
fn pooled(by: &[Vec<f64>], s: i64, quantile: f64, min: usize) -> Option<f64> {
    let n = by.len() as i64;
    let mut values = Vec::new();
    for d in -1..=1 {
        let i = usize::try_from((s + d).rem_euclid(n.max(1))).unwrap_or(0);
        values.extend_from_slice(by.get(i).map_or(&[][..], Vec::as_slice));
    }
    if values.len() < min {
        return None;
    }
    nearest_rank(&mut values, quantile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prediction::Algorithm;

    fn forecast_of(start: i64, values: Vec<f64>) -> Forecast {
        Forecast {
            algorithm: Algorithm::Dsp,
            period_seconds: Some(86_400),
            start,
            step: 60,
            values,
            estimator: "test".to_owned(),
        }
    }

    fn flat_forecast(start: i64, minutes: usize, value: f64) -> Forecast {
        forecast_of(start, vec![value; minutes])
    }

    /// `days` of minutes at 10, with a jump to 14 for a minute every ten minutes from 09:00
    /// to 10:00 UTC (all day when `all_day`).
    fn load(days: i64, all_day: bool) -> Vec<Sample> {
        (0..days * 1440)
            .map(|m| {
                let minute = m % 1440;
                let jump = (all_day || (540..600).contains(&minute)) && minute % 10 == 5;
                Sample {
                    ts: m * 60,
                    value: if jump { 14.0 } else { 10.0 },
                }
            })
            .collect()
    }

    fn history(days: i64) -> Vec<Sample> {
        load(days, false)
    }

    #[test]
    fn the_margin_covers_the_rises_a_flat_forecast_did_not_foresee() {
        let h = history(3);
        let mut e = ForecastErrors::new(0.01);
        let f = flat_forecast(0, 3 * 1440, 10.0);
        e.record(&f, 1.0, &h, 60, (60, 90), 3 * 86_400);
        let m = e.margin().unwrap();
        assert_eq!(m.margins.len(), 168);
        // 09:00 on the first Thursday (day 0), and the same hour of the day where the week
        // has too few errors of its own.
        assert_eq!(m.at(9 * 3600 + 300), 4.0);
        assert_eq!(m.at(5 * 86_400 + 9 * 3600), 4.0);
        assert_eq!(m.at(3 * 3600), 0.0);
        assert!(m.samples > 4000, "{}", m.samples);
    }

    #[test]
    fn a_forecast_that_foresees_the_jumps_needs_no_margin_for_them() {
        let h = history(2);
        let perfect = forecast_of(0, h.iter().map(|s| s.value).collect());
        let mut e = ForecastErrors::new(0.01);
        e.record(&perfect, 1.0, &h, 60, (60, 90), 2 * 86_400);
        assert_eq!(e.margin().unwrap().at(9 * 3600 + 300), 0.0);
        // The level correction the decisions applied is what the error is measured against.
        let doubled = forecast_of(0, h.iter().map(|s| 2.0 * s.value).collect());
        let mut c = ForecastErrors::new(0.01);
        c.record(&doubled, 0.5, &h, 60, (60, 90), 2 * 86_400);
        assert_eq!(c.margin().unwrap().at(9 * 3600 + 300), 0.0);
    }

    #[test]
    fn only_stretches_closed_by_now_are_compared_and_none_twice() {
        let h = history(1);
        let f = flat_forecast(0, 1440, 10.0);
        let mut e = ForecastErrors::new(0.05);
        e.record(&f, 1.0, &h, 60, (60, 90), 3600);
        let n = e.errors.len();
        assert!(e.errors.iter().all(|x| x.decided + 90 + 60 <= 3600));
        e.record(&f, 1.0, &h, 60, (60, 90), 3600);
        assert_eq!(e.errors.len(), n);
        e.record(&f, 1.0, &h, 60, (60, 90), 7200);
        assert_eq!(e.errors.len(), n + 60);
    }

    #[test]
    fn alpha_falls_and_the_quantile_rises_after_misses() {
        let f = flat_forecast(0, 2 * 1440, 10.0);
        let mut e = ForecastErrors::new(0.05);
        // A first day learns a margin of 0 outside 08:00-11:00...
        let first = history(1);
        e.record(&f, 1.0, &first, 60, (60, 90), 86_400);
        assert_eq!(e.margin().unwrap().at(3 * 3600), 0.0);
        // ...then the load jumps all day: a fifth of the stretches miss, where a twentieth
        // may, so α falls.
        let mut both = first;
        both.extend(load(1, true).into_iter().map(|s| Sample {
            ts: s.ts + 86_400,
            value: s.value,
        }));
        e.record(&f, 1.0, &both, 60, (60, 90), 2 * 86_400);
        assert!(e.alpha < 0.025, "{}", e.alpha);
        let m = e.margin().unwrap();
        assert!(m.quantile > 0.97, "{}", m.quantile);
        assert_eq!(m.at(86_400 + 3 * 3600), 4.0);
    }
}
