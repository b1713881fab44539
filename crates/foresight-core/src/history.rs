//! Scaling history across restarts. Kubernetes keeps recommendations and scale events in the
//! controller's memory and loses them on restart, so a restart forgets stabilization windows
//! and rate limits. Foresight carries them in status, in a form that changes only when a
//! decision could change: writing status every sync to refresh a timestamp would cost one API
//! write per autoscaler per sync.
//!
//! The status form keeps, per recommended value, only its latest recommendation (the window
//! tests only ask whether a value was recommended inside the window, so the latest time is all
//! that matters), and drops what no window or period can reach. It is written when that set
//! changes. The newest value's timestamp is left alone while the value keeps being
//! recommended; on restore, that value is taken to have held until the restore, which is what
//! the previous controller saw (had it changed, status would have been written).

use std::collections::BTreeMap;

use foresight_api::status::{Recommendation, ScalingHistory};
use jiff::Timestamp;

use crate::autoscaler::Autoscaler;
use crate::time::{seconds, sub};

/// How far back status keeps recommendations and events for `autoscaler`, in seconds.
pub fn horizons(autoscaler: &Autoscaler) -> (i64, i64) {
    match &autoscaler.behavior {
        Some(b) => (
            b.longest_window_seconds(),
            i64::from(b.longest_period_seconds()),
        ),
        None => (autoscaler.settings.downscale_stabilization_seconds, 0),
    }
}

/// The history as status carries it.
pub fn for_status(
    history: &ScalingHistory,
    autoscaler: &Autoscaler,
    now: Timestamp,
) -> ScalingHistory {
    let (rec_horizon, event_horizon) = horizons(autoscaler);
    let rec_cutoff = sub(now, seconds(rec_horizon));
    let mut latest: BTreeMap<i32, Timestamp> = BTreeMap::new();
    for r in &history.recommendations {
        let e = latest.entry(r.replicas).or_insert(r.timestamp);
        if r.timestamp > *e {
            *e = r.timestamp;
        }
    }
    let mut recommendations: Vec<Recommendation> = latest
        .into_iter()
        .map(|(replicas, timestamp)| Recommendation {
            replicas,
            timestamp,
        })
        .collect();
    recommendations.sort_by_key(|r| (r.timestamp, r.replicas));
    // Keep the newest recommendation even when it is older than the window: it is the value
    // still being recommended.
    let newest = recommendations.len().saturating_sub(1);
    let recommendations = recommendations
        .into_iter()
        .enumerate()
        .filter(|(i, r)| *i == newest || r.timestamp >= rec_cutoff)
        .map(|(_, r)| r)
        .collect();
    let event_cutoff = sub(now, seconds(event_horizon));
    let keep = |events: &Vec<foresight_api::status::ScaleEvent>| {
        events
            .iter()
            .filter(|e| e.timestamp > event_cutoff)
            .copied()
            .collect::<Vec<_>>()
    };
    ScalingHistory {
        recommendations,
        scale_up_events: keep(&history.scale_up_events),
        scale_down_events: keep(&history.scale_down_events),
    }
}

/// Whether `current` (a status form from [`for_status`]) differs from what status holds in a
/// way a decision after a restart could see. The newest recommendation's timestamp is ignored
/// while its value is unchanged.
pub fn needs_write(persisted: Option<&ScalingHistory>, current: &ScalingHistory) -> bool {
    let Some(persisted) = persisted else {
        return true;
    };
    if persisted.scale_up_events != current.scale_up_events
        || persisted.scale_down_events != current.scale_down_events
    {
        return true;
    }
    let (a, b) = (&persisted.recommendations, &current.recommendations);
    if a.len() != b.len() {
        return true;
    }
    let last = a.len().saturating_sub(1);
    a.iter()
        .zip(b)
        .enumerate()
        .any(|(i, (x, y))| x.replicas != y.replicas || (i != last && x.timestamp != y.timestamp))
}

/// Rebuilds the controller's memory from status at `now`: the newest recommendation is taken
/// to have held until just before now (one second before, so that the first decision after
/// the restore is the newest entry, and the status form does not change for a tie).
pub fn restore(persisted: &ScalingHistory, now: Timestamp) -> ScalingHistory {
    let mut h = persisted.clone();
    let held_until = sub(now, seconds(1));
    if let Some(newest) = h.recommendations.iter_mut().max_by_key(|r| r.timestamp) {
        if newest.timestamp < held_until {
            newest.timestamp = held_until;
        }
    }
    h
}
