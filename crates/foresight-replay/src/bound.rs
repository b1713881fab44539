//! The clairvoyant bound: the fewest replica-hours any autoscaler could spend without a
//! minute of under-provisioning, given the same load, bounds and start-up time. At every
//! instant it has `ceil(load / pod capacity)` ready pods (within min/max), each started exactly
//! a start-up time before it is needed, and a pod that would be needed again within a
//! start-up time is kept rather than deleted and started anew. Every policy's cost is
//! reported as a multiple of it: how much of the gap to perfect foresight a policy leaves.

use serde::Serialize;

use crate::load::LoadTrace;
use crate::runner::Span;

/// The bound over a simulation's scored span.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClairvoyantBound {
    /// Pods (starting or ready) integrated over the scored span, in hours.
    pub replica_hours: f64,
    /// The start-up time it assumes (the model's start-up delay).
    pub startup_seconds: i64,
    /// The replica bounds it keeps to (the first policy's).
    pub min_replicas: i32,
    /// The replica bounds it keeps to (the first policy's).
    pub max_replicas: i32,
}

impl ClairvoyantBound {
    /// `cost` as a multiple of the bound (`None` when the bound is 0).
    pub fn multiple(&self, replica_hours: f64) -> Option<f64> {
        (self.replica_hours > 0.0).then(|| replica_hours / self.replica_hours)
    }
}

/// The bound for `load` from `score_from` to the end of `span`, with pods that serve
/// `capacity` each, start in `startup_seconds`, and number between `min` and `max`.
pub fn clairvoyant_bound(
    load: &LoadTrace,
    span: Span,
    score_from: i64,
    capacity: f64,
    (min, max): (i32, i32),
    startup_seconds: i64,
) -> ClairvoyantBound {
    let (min, max) = (min.max(0), max.max(min.max(0)));
    let needed = |value: f64| -> i64 {
        let pods = if capacity > 0.0 {
            (value / capacity).ceil()
        } else {
            0.0
        };
        let pods = if pods.is_finite() { pods } else { f64::MAX };
        // The cast saturates; the clamp keeps the count within the policy's bounds.
        (pods as i64).clamp(i64::from(min), i64::from(max))
    };
    // The load as segments [starts[i], starts[i + 1]) needing pods[i] pods.
    let points = load.points();
    let mut starts: Vec<i64> = points.iter().map(|p| p.ts).collect();
    starts.push(load.end());
    let pods: Vec<i64> = points.iter().map(|p| needed(p.value)).collect();
    let from = score_from.max(span.start);
    let to = span.end;
    let startup = startup_seconds.max(0);

    // At instant τ the bound has the most pods any segment overlapping [τ, τ + startup]
    // needs: segment i counts for τ in [starts[i] − startup, starts[i + 1]). Both ends grow
    // with i, so a deque of segment indices with falling need (a sliding-window maximum)
    // gives the count, and it changes only where a segment enters or leaves.
    let mut window: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut next = 0usize;
    let mut pod_seconds = 0.0f64;
    let mut tau = from;
    while tau < to {
        while next < pods.len() && starts[next].saturating_sub(startup) <= tau {
            while window.back().is_some_and(|&j| pods[j] <= pods[next]) {
                window.pop_back();
            }
            window.push_back(next);
            next += 1;
        }
        while window.front().is_some_and(|&j| starts[j + 1] <= tau) {
            window.pop_front();
        }
        let entering = starts
            .get(next)
            .map_or(i64::MAX, |s| s.saturating_sub(startup));
        let leaving = window.front().map_or(i64::MAX, |&j| starts[j + 1]);
        let until = entering.min(leaving).min(to).max(tau + 1);
        let count = window.front().map_or(i64::from(min), |&j| pods[j]);
        pod_seconds += count as f64 * (until - tau) as f64;
        tau = until;
    }
    ClairvoyantBound {
        replica_hours: (pod_seconds / 3600.0 * 1000.0).round() / 1000.0,
        startup_seconds: startup,
        min_replicas: min,
        max_replicas: max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::LoadPoint;

    fn trace(values: &[f64]) -> LoadTrace {
        LoadTrace::new(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| LoadPoint {
                    ts: i as i64 * 60,
                    value: *v,
                })
                .collect(),
        )
        .unwrap()
    }

    /// Pod-minutes (the bound is kept in hours to three decimals, hence the tests' slack).
    fn bound(values: &[f64], startup: i64, bounds: (i32, i32)) -> f64 {
        let t = trace(values);
        let span = Span::of(&t);
        clairvoyant_bound(&t, span, span.start, 1.0, bounds, startup).replica_hours * 60.0
    }

    #[test]
    fn without_start_up_it_is_the_load_rounded_up_to_pods() {
        // 1.2 → 2 pods, 3 → 3, 0.5 → 1: 6 pod-minutes.
        assert!((bound(&[1.2, 3.0, 0.5], 0, (0, 100)) - 6.0).abs() < 0.05);
    }

    #[test]
    fn pods_start_a_start_up_early_and_short_gaps_keep_them() {
        // A one-minute spike to 5 pods among 1s, start-up 2 minutes: the four extra pods
        // exist from two minutes before the spike to its end: 1 × 6 + 4 × 3 = 18.
        assert!((bound(&[1.0, 1.0, 1.0, 5.0, 1.0, 1.0], 120, (0, 100)) - 18.0).abs() < 0.05);
        // Two spikes a minute apart: the pods are kept across the gap (4 × 5), not started
        // twice (4 × 6).
        let kept = bound(&[1.0, 1.0, 1.0, 5.0, 1.0, 5.0, 1.0], 120, (0, 100));
        assert!((kept - (7.0 + 4.0 * 5.0)).abs() < 0.05, "{kept}");
    }

    #[test]
    fn bounds_hold() {
        assert!((bound(&[0.0, 0.0, 9.0], 0, (2, 4)) - 8.0).abs() < 0.05);
    }

    #[test]
    fn a_warm_up_is_not_counted() {
        let t = trace(&[5.0, 5.0, 1.0, 1.0]);
        let span = Span::of(&t);
        let b = clairvoyant_bound(&t, span, span.start + 120, 1.0, (0, 10), 0);
        assert!((b.replica_hours * 60.0 - 2.0).abs() < 0.05);
    }
}
