//! How well a policy did: under-provisioning, overload, cost, churn and utilization.

use serde::Serialize;

/// A policy's scores over the whole simulation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scores {
    /// The policy's name.
    pub name: String,
    /// Minutes during which the ready pods could not serve the load (ready capacity below
    /// load).
    pub under_provisioned_minutes: f64,
    /// The load that was not served, integrated over time: load units (cores for CPU) ×
    /// minutes.
    pub overload_integral: f64,
    /// Pods that existed (starting or ready), integrated over time, in hours: the cost.
    pub replica_hours: f64,
    /// Times the workload was rescaled.
    pub scale_events: u64,
    /// Of which upwards.
    pub scale_ups: u64,
    /// Pods created by scale-ups.
    pub pods_started: u64,
    /// The 95th percentile, over decision intervals, of load / ready capacity (percent; an
    /// interval without ready capacity counts as 1000%).
    pub p95_utilization: f64,
    /// Load over ready capacity across the whole run (percent).
    pub mean_utilization: f64,
    /// Decisions made.
    pub decisions: u64,
    /// The most replicas at any time.
    pub max_replicas: i32,
}

/// An interval with no ready capacity counts as this utilization (percent).
const NO_CAPACITY_UTILIZATION: f64 = 1000.0;

/// Accumulates the scores as the simulation advances.
#[derive(Clone, Debug, Default)]
pub struct ScoreKeeper {
    under_seconds: i64,
    overload: f64,
    pod_seconds: f64,
    load: f64,
    capacity: f64,
    interval_load: f64,
    interval_capacity: f64,
    interval_seconds: i64,
    interval_utilization: Vec<f32>,
    scale_events: u64,
    scale_ups: u64,
    decisions: u64,
    max_replicas: i32,
}

impl ScoreKeeper {
    /// Adds `dt` seconds of `load` against `capacity` with `replicas` pods; the pods count as
    /// short where the load is above `short_above` (the capacity, or a share of it).
    #[inline]
    pub fn segment(&mut self, dt: i64, load: f64, short_above: f64, capacity: f64, replicas: i32) {
        let dtf = dt as f64;
        if load > short_above && load > 0.0 {
            self.under_seconds += dt;
        }
        if load > capacity {
            self.overload += (load - capacity) * dtf;
        }
        self.pod_seconds += f64::from(replicas) * dtf;
        self.interval_load += load * dtf;
        self.interval_capacity += capacity * dtf;
        self.interval_seconds += dt;
    }

    /// Closes a decision interval (its utilization enters the percentile); an interval
    /// without scored time (inside the warm-up) enters nothing.
    pub fn close_interval(&mut self) {
        if self.interval_seconds == 0 {
            return;
        }
        let u = if self.interval_capacity > 0.0 {
            self.interval_load / self.interval_capacity * 100.0
        } else if self.interval_load > 0.0 {
            NO_CAPACITY_UTILIZATION
        } else {
            0.0
        };
        self.interval_utilization
            .push(u.min(NO_CAPACITY_UTILIZATION) as f32);
        self.load += self.interval_load;
        self.capacity += self.interval_capacity;
        self.interval_load = 0.0;
        self.interval_capacity = 0.0;
        self.interval_seconds = 0;
    }

    /// Counts a decision and, when it changed the count, a scale event.
    pub fn decision(&mut self, from: i32, to: Option<i32>) {
        self.decisions += 1;
        self.max_replicas = self.max_replicas.max(from);
        if let Some(to) = to.filter(|to| *to != from) {
            self.scale_events += 1;
            if to > from {
                self.scale_ups += 1;
            }
            self.max_replicas = self.max_replicas.max(to);
        }
    }

    /// Minutes short and replica-hours so far, unrounded.
    pub fn so_far(&self) -> (f64, f64) {
        (self.under_seconds as f64 / 60.0, self.pod_seconds / 3600.0)
    }

    /// The scores.
    pub fn finish(mut self, name: &str, pods_started: u64) -> Scores {
        self.close_interval();
        let p95 = percentile(&mut self.interval_utilization, 0.95);
        let mean = if self.capacity > 0.0 {
            self.load / self.capacity * 100.0
        } else {
            0.0
        };
        Scores {
            name: name.to_owned(),
            under_provisioned_minutes: round3(self.under_seconds as f64 / 60.0),
            overload_integral: round3(self.overload / 60.0),
            replica_hours: round3(self.pod_seconds / 3600.0),
            scale_events: self.scale_events,
            scale_ups: self.scale_ups,
            pods_started,
            p95_utilization: round3(p95),
            mean_utilization: round3(mean),
            decisions: self.decisions,
            max_replicas: self.max_replicas,
        }
    }
}

/// The `q` quantile by the nearest-rank method (0 for no values).
fn percentile(values: &mut [f32], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    let (_, v, _) = values.select_nth_unstable_by(rank - 1, f32::total_cmp);
    f64::from(*v)
}

/// Rounds to three decimals, so that printed and JSON figures are stable and readable.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_under_provisioning_overload_and_cost() {
        let mut k = ScoreKeeper::default();
        k.segment(60, 3.0, 4.0, 4.0, 4);
        k.close_interval();
        k.segment(120, 6.0, 4.0, 4.0, 5);
        k.close_interval();
        k.decision(4, Some(5));
        k.decision(5, None);
        k.decision(5, Some(5));
        let s = k.finish("p", 1);
        assert_eq!(s.under_provisioned_minutes, 2.0);
        // 2 cores short for 2 minutes.
        assert_eq!(s.overload_integral, 4.0);
        // 4 pods × 60 s + 5 pods × 120 s = 840 pod-seconds.
        assert_eq!(s.replica_hours, round3(840.0 / 3600.0));
        assert_eq!((s.scale_events, s.scale_ups, s.decisions), (1, 1, 3));
        assert_eq!(s.p95_utilization, 150.0);
        assert_eq!(s.max_replicas, 5);
    }

    #[test]
    fn nearest_rank_percentile() {
        let mut v: Vec<f32> = (1..=100).map(|x| x as f32).collect();
        assert_eq!(percentile(&mut v, 0.95), 95.0);
        assert_eq!(percentile(&mut [], 0.95), 0.0);
        assert_eq!(percentile(&mut [7.0], 0.95), 7.0);
    }
}
