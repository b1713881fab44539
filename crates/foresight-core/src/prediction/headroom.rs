//! Learned headroom: how far the load can rise, at each time of day, before capacity asked for
//! now is ready.
//!
//! A utilization target holds the same headroom all day, but most workloads are calm and
//! predictable most of the day and jumpy at known hours. From the workload's own history this
//! learns, for every hour of the day, how far the load over the lead stretch (from the start-up
//! time until the next decision's pods are ready) rose above the load when the stretch began,
//! and keeps a high quantile of that rise: `1 − riskBudget`. A decision then proposes the
//! replicas that carry the observed load plus that rise. Where the load is calm the rise is
//! about 0 and nothing is added; where it jumps, capacity for the jump is held.
//!
//! The rise is absolute (in the metric's unit), not a ratio: the spikes that make an hour risky
//! are bursts of work of their own size, and a ratio taken at a near-idle instant would ask
//! for many times the load.

use serde::Serialize;

use crate::trace::Sample;

/// The period headroom repeats over: a day.
pub const PERIOD_SECONDS: i64 = 86_400;
/// The slots a day is learned in: an hour each.
pub const SLOT_SECONDS: i64 = 3600;
/// Ratios from this many slots on either side count towards a slot's quantile too: a single
/// hour of three days is too few samples for a high quantile, and risk is rarely confined to
/// one clock hour.
pub const POOLED_SLOTS: i64 = 1;
/// A whole period of history is needed before headroom is learned: otherwise some hours of
/// the day have never been seen.
pub const MIN_HISTORY_SECONDS: i64 = PERIOD_SECONDS;
/// What was learned: one rise per hour of the day.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Headroom {
    /// Per slot of [`SLOT_SECONDS`] from midnight UTC: the `quantile` of (peak load over the
    /// lead stretch) − (load when it began), in the metric's unit, at least 0.
    pub rises: Vec<f64>,
    /// The quantile kept (1 − the risk budget).
    pub quantile: f64,
    /// The lead stretch learned for: from this many seconds after a decision...
    pub lead_from_seconds: i64,
    /// ... until this many.
    pub lead_to_seconds: i64,
    /// Rises learned from.
    pub samples: u32,
}

impl Headroom {
    /// The rise for the slot `now` (Unix seconds) falls in.
    pub fn rise_at(&self, now: i64) -> f64 {
        value_in_slot(&self.rises, now, PERIOD_SECONDS)
    }

    /// The largest rise of the day (for the explanation).
    pub fn highest(&self) -> f64 {
        self.rises.iter().copied().fold(0.0, f64::max)
    }
}

/// Learns headroom from `history` (samples `interval` seconds apart, each the mean load over
/// the interval that starts at its stamp; gaps allowed) for a lead stretch of
/// `[lead_from, lead_to]` seconds after a decision, keeping the `quantile` of each hour's
/// ratios. `Err` says why nothing can be learned yet.
pub fn learn(
    history: &[Sample],
    interval: i64,
    (lead_from, lead_to): (i64, i64),
    quantile: f64,
) -> Result<Headroom, String> {
    let interval = interval.max(1);
    let (Some(first), Some(last)) = (history.first(), history.last()) else {
        return Err("no history to learn headroom from".to_owned());
    };
    let covered = last.ts.saturating_add(interval).saturating_sub(first.ts);
    if covered < MIN_HISTORY_SECONDS {
        return Err(format!(
            "headroom needs a day of history, {} so far",
            foresight_api::duration::format_duration(std::time::Duration::from_secs(
                covered.max(0).unsigned_abs()
            ))
        ));
    }
    let (lead_from, lead_to) = (lead_from.max(0), lead_to.max(lead_from.max(0)));
    let slots = usize::try_from(PERIOD_SECONDS / SLOT_SECONDS).unwrap_or(24);
    let mut by_slot: Vec<Vec<f64>> = vec![Vec::new(); slots];
    // A decision right after sample i closed reads its load; the stretch it answers for is
    // [decided + lead_from, decided + lead_to]. Samples overlapping it give its peak. Both
    // ends move forward with i, so one pointer finds the first overlapping sample.
    let mut j = 0usize;
    for (i, now) in history.iter().enumerate() {
        if !(now.value.is_finite() && now.value >= 0.0) {
            continue;
        }
        let decided = now.ts.saturating_add(interval);
        let (from, to) = (
            decided.saturating_add(lead_from),
            decided.saturating_add(lead_to),
        );
        j = j.max(i);
        while j < history.len() && history[j].ts.saturating_add(interval) <= from {
            j += 1;
        }
        let mut peak: Option<f64> = None;
        let mut k = j;
        while k < history.len() && history[k].ts <= to {
            let v = history[k].value;
            if v.is_finite() {
                peak = Some(peak.map_or(v, |p: f64| p.max(v)));
            }
            k += 1;
        }
        // The stretch runs past the history's end (or into a gap): nothing to learn.
        let Some(peak) = peak else { continue };
        if k == history.len() && history[k - 1].ts.saturating_add(interval) < to {
            continue;
        }
        let rise = (peak - now.value).max(0.0);
        let slot = usize::try_from(decided.rem_euclid(PERIOD_SECONDS) / SLOT_SECONDS).unwrap_or(0);
        if let Some(bucket) = by_slot.get_mut(slot) {
            bucket.push(rise);
        }
    }
    let samples: usize = by_slot.iter().map(Vec::len).sum();
    if samples == 0 {
        return Err("no stretch of history long enough to learn headroom from".to_owned());
    }
    let quantile = quantile.clamp(0.0, 1.0);
    Ok(Headroom {
        rises: pooled_quantiles(&by_slot, quantile),
        quantile,
        lead_from_seconds: lead_from,
        lead_to_seconds: lead_to,
        samples: u32::try_from(samples).unwrap_or(u32::MAX),
    })
}

/// Each hour's rise: the `quantile` of its rises pooled with the neighbouring hours'
/// (the day wraps around).
fn pooled_quantiles(by_slot: &[Vec<f64>], quantile: f64) -> Vec<f64> {
    let n = by_slot.len() as i64;
    let mut pooled = Vec::new();
    (0..n)
        .map(|slot| {
            pooled.clear();
            for d in -POOLED_SLOTS..=POOLED_SLOTS {
                let s = usize::try_from((slot + d).rem_euclid(n)).unwrap_or(0);
                pooled.extend_from_slice(&by_slot[s]);
            }
            nearest_rank(&mut pooled, quantile).map_or(0.0, |r| r.max(0.0))
        })
        .collect()
}

/// The value of the hour slot `now` falls in, for per-hour `values` over a cycle of
/// `period_seconds` starting at the Unix epoch; 0 where there is none. The forecast-error
/// margins (`conformal`, a week of hours) read their slots the same way.
pub(crate) fn value_in_slot(values: &[f64], now: i64, period_seconds: i64) -> f64 {
    let slot = now.rem_euclid(period_seconds) / SLOT_SECONDS;
    usize::try_from(slot)
        .ok()
        .and_then(|s| values.get(s))
        .copied()
        .unwrap_or(0.0)
}

/// The `q` quantile of `values` by the nearest-rank method; `None` for no values. The
/// forecast-error margins (`conformal`) read their quantiles the same way.
pub(crate) fn nearest_rank(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    let (_, v, _) = values.select_nth_unstable_by(rank - 1, f64::total_cmp);
    Some(*v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two days of minutes: flat at 10, and at 09:00–10:00 UTC a jump to 20 every 10 minutes
    /// that lasts a minute.
    fn history() -> Vec<Sample> {
        (0..2 * 1440)
            .map(|m| {
                let minute_of_day = m % 1440;
                let jumpy = (540..600).contains(&minute_of_day) && minute_of_day % 10 == 5;
                Sample {
                    ts: m * 60,
                    value: if jumpy { 20.0 } else { 10.0 },
                }
            })
            .collect()
    }

    #[test]
    fn jumps_that_recur_at_an_hour_raise_that_hour_and_its_neighbours_only() {
        // Hour 9 holds 12 jumps of 10 in two days; pooled with hours 8 and 10, 12 of 360
        // rises (3.3%) are 10.
        let h = learn(&history(), 60, (60, 90), 0.98).unwrap();
        assert_eq!(h.rises.len(), 24);
        assert_eq!(h.rise_at(9 * 3600 + 5), 10.0);
        assert_eq!(h.rise_at(8 * 3600), 10.0);
        assert_eq!(h.rise_at(10 * 3600), 10.0);
        assert_eq!(h.rise_at(3 * 3600), 0.0);
        assert_eq!(h.rise_at(12 * 3600), 0.0);
        assert_eq!(h.rise_at(86_400 + 9 * 3600), 10.0, "it repeats daily");
        assert_eq!(h.highest(), 10.0);
        // A larger budget tolerates jumps that rare.
        let lax = learn(&history(), 60, (60, 90), 0.9).unwrap();
        assert_eq!(lax.highest(), 0.0);
    }

    #[test]
    fn less_than_a_day_or_nothing_is_not_ready() {
        assert!(learn(&[], 60, (60, 90), 0.99).is_err());
        let err = learn(&history()[..600], 60, (60, 90), 0.99).unwrap_err();
        assert!(err.contains("a day of history"), "{err}");
    }

    #[test]
    fn rises_never_fall_below_zero_and_ignore_garbage() {
        let mut falling: Vec<Sample> = (0..1500)
            .map(|m| Sample {
                ts: m * 60,
                value: 1000.0 - m as f64 * 0.5,
            })
            .collect();
        falling[7].value = f64::NAN;
        let h = learn(&falling, 60, (60, 90), 0.99).unwrap();
        assert!(h.rises.iter().all(|r| *r == 0.0), "{:?}", h.rises);
    }
}
