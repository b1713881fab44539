//! The answer to "is prediction worth it?": every policy against the first (the baseline),
//! and every predictive policy against a reactive one made exactly as safe by a lower target,
//! found by replaying the same load through the same model.
//!
//! Comparing at the same target is not enough: prediction holds capacity earlier, so it
//! costs a little more and under-provisions less. A reactive policy can also buy safety, by
//! lowering its target; what matters is which of the two is cheaper at the same safety.

use std::collections::BTreeMap;

use foresight_api::hpa::{MetricSpec, MetricTarget};
use foresight_api::quantity::Quantity;
use serde::Serialize;

use crate::config::{ModelConfig, Recording};
use crate::error::SimError;
use crate::load::LoadTrace;
use crate::policy::Policy;
use crate::runner::{run_policy, Span};
use crate::score::Scores;
use crate::simulation::bucket_seconds;

/// A policy against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delta {
    /// The policy.
    pub policy: String,
    /// The baseline.
    pub baseline: String,
    /// Under-provisioned minutes: the baseline's, then the policy's.
    pub under_minutes: (f64, f64),
    /// Replica-hours: the baseline's, then the policy's.
    pub replica_hours: (f64, f64),
}

/// `(after − before, percent of before)`; the percentage is `None` when `before` is 0.
pub fn change((before, after): (f64, f64)) -> (f64, Option<f64>) {
    let difference = after - before;
    let percent = (before.abs() > f64::EPSILON).then(|| difference / before * 100.0);
    (difference, percent)
}

/// `0.8 → 0.0 min (-0.8, -100.0%)`.
pub fn change_text(values: (f64, f64), unit: &str) -> String {
    let (difference, percent) = change(values);
    let percent = percent.map_or_else(String::new, |p| format!(", {p:+.1}%"));
    format!(
        "{:.1} → {:.1}{unit} ({difference:+.1}{percent})",
        values.0, values.1
    )
}

/// Every policy after the first against the first.
pub fn deltas(scores: &[&Scores]) -> Vec<Delta> {
    let Some((baseline, rest)) = scores.split_first() else {
        return Vec::new();
    };
    rest.iter()
        .map(|s| Delta {
            policy: s.name.clone(),
            baseline: baseline.name.clone(),
            under_minutes: (
                baseline.under_provisioned_minutes,
                s.under_provisioned_minutes,
            ),
            replica_hours: (baseline.replica_hours, s.replica_hours),
        })
        .collect()
}

/// A predictive policy against the reactive policy that is as safe as it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EqualRisk {
    /// The predictive policy.
    pub policy: String,
    /// Its under-provisioned minutes and replica-hours.
    pub under_minutes: f64,
    /// Its replica-hours.
    pub replica_hours: f64,
    /// The reactive policy's targets, as a share of the baseline's (percent).
    pub reactive_target_share: u32,
    /// The reactive policy's first target in its own terms (`averageUtilization: 48`).
    pub reactive_target: String,
    /// The reactive policy's under-provisioned minutes at that target.
    pub reactive_under_minutes: f64,
    /// The reactive policy's replica-hours at that target.
    pub reactive_replica_hours: f64,
    /// Whether the reactive policy reached the predictive one's safety at all (it may not,
    /// even at 1% of the target, when its start-up time is longer than the spikes).
    pub reached: bool,
}

impl EqualRisk {
    /// How much cheaper prediction is at equal safety, percent of the reactive cost
    /// (negative: it is dearer).
    pub fn saving_percent(&self) -> f64 {
        if self.reactive_replica_hours > 0.0 {
            (self.reactive_replica_hours - self.replica_hours) / self.reactive_replica_hours * 100.0
        } else {
            0.0
        }
    }

    /// The outcome in words: `predictive is 5.5% cheaper at equal safety`.
    pub fn verdict(&self) -> String {
        if !self.reached {
            return format!(
                "no reactive target is as safe as {}; the lowest tried is shown",
                self.policy
            );
        }
        match self.saving_percent() {
            p if p > 0.05 => format!("{} is {p:.1}% cheaper at equal safety", self.policy),
            p if p < -0.05 => format!("{} costs {:.1}% more at equal safety", self.policy, -p),
            _ => format!("{} costs the same at equal safety", self.policy),
        }
    }
}

/// For each predictive policy (name, scores), the highest target (as a share of `reactive`'s
/// own, in whole percent) at which `reactive` under-provisions no more than it, by bisection
/// over the share: lower targets mean more replicas and, in the model, never more shortfall.
/// `progress` receives decisions made, as the simulation's does.
pub fn equal_risk(
    reactive: &Policy,
    predictive: &[&Scores],
    load: &LoadTrace,
    model: &ModelConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<EqualRisk>, SimError> {
    let model = ModelConfig {
        recording: Recording::ScoresOnly,
        ..model.clone()
    };
    let bucket = bucket_seconds(Span::of(load));
    let mut runs: BTreeMap<u32, Scores> = BTreeMap::new();
    let mut run = |share: u32| -> Result<Scores, SimError> {
        if let Some(s) = runs.get(&share) {
            return Ok(s.clone());
        }
        let policy = with_targets_scaled(reactive, share);
        let autoscaler = policy.compile()?;
        let scores = run_policy(&policy.name, &autoscaler, load, &model, bucket, progress).scores;
        runs.insert(share, scores.clone());
        Ok(scores)
    };
    let mut found = Vec::new();
    for p in predictive {
        let safe_enough =
            |s: &Scores| s.under_provisioned_minutes <= p.under_provisioned_minutes + 1e-9;
        let mut share = 100;
        let mut reached = true;
        if !safe_enough(&run(100)?) {
            if safe_enough(&run(1)?) {
                // `lo` is safe enough, `hi` is not.
                let (mut lo, mut hi) = (1, 100);
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2;
                    if safe_enough(&run(mid)?) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                share = lo;
            } else {
                share = 1;
                reached = false;
            }
        }
        let reactive_scores = run(share)?;
        found.push(EqualRisk {
            policy: p.name.clone(),
            under_minutes: p.under_provisioned_minutes,
            replica_hours: p.replica_hours,
            reactive_target_share: share,
            reactive_target: first_target(&with_targets_scaled(reactive, share)),
            reactive_under_minutes: reactive_scores.under_provisioned_minutes,
            reactive_replica_hours: reactive_scores.replica_hours,
            reached,
        });
    }
    Ok(found)
}

/// Runs the bisection of [`equal_risk`] needs at most, for a progress bar's length.
pub fn most_runs(predictive_policies: usize) -> u64 {
    if predictive_policies == 0 {
        0
    } else {
        // 100, 1, then bisection of [1, 100]: ceil(log2(99)) = 7, shared between policies
        // only when their shortfalls agree.
        2 + 7 * predictive_policies as u64
    }
}

/// `policy` with every metric's target multiplied by `share` percent (at least 1 unit).
pub fn with_targets_scaled(policy: &Policy, share: u32) -> Policy {
    let mut scaled = policy.clone();
    scaled.name = format!("{} at {share}% of its target", policy.name);
    let factor = f64::from(share) / 100.0;
    let scale_quantity = |q: &mut Option<Quantity>| {
        if let Some(milli) = q.as_ref().and_then(|q| q.milli_value().ok()) {
            let new = ((milli as f64) * factor).round().max(1.0) as i64;
            *q = Some(Quantity::from_milli(new));
        }
    };
    for metric in &mut scaled.spec.metrics {
        for target in targets_mut(metric) {
            if let Some(u) = target.average_utilization.as_mut() {
                *u = ((f64::from(*u) * factor).round() as i32).max(1);
            }
            scale_quantity(&mut target.average_value);
            scale_quantity(&mut target.value);
        }
    }
    scaled
}

/// The targets of whichever sources a metric sets.
fn targets_mut(metric: &mut MetricSpec) -> Vec<&mut MetricTarget> {
    let MetricSpec {
        object,
        pods,
        resource,
        container_resource,
        external,
        prometheus,
        ..
    } = metric;
    [
        object.as_mut().map(|s| &mut s.target),
        pods.as_mut().map(|s| &mut s.target),
        resource.as_mut().map(|s| &mut s.target),
        container_resource.as_mut().map(|s| &mut s.target),
        external.as_mut().map(|s| &mut s.target),
        prometheus.as_mut().map(|s| &mut s.target),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The first metric's target in the manifest's terms.
fn first_target(policy: &Policy) -> String {
    let mut first = policy.spec.metrics.first().cloned();
    let Some(target) = first
        .as_mut()
        .and_then(|m| targets_mut(m).into_iter().next().cloned())
    else {
        return "no target".to_owned();
    };
    match (
        target.average_utilization,
        target.average_value,
        target.value,
    ) {
        (Some(u), _, _) => format!("averageUtilization: {u}"),
        (_, Some(v), _) => format!("averageValue: {v}"),
        (_, _, Some(v)) => format!("value: {v}"),
        _ => "no target".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::policies_from_manifest;

    fn policy(target: &str) -> Policy {
        let text = format!(
            "apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {{name: web}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  maxReplicas: 40
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {target}}}
"
        );
        policies_from_manifest(&text, "web").unwrap().remove(0)
    }

    #[test]
    fn targets_scale_in_their_own_terms() {
        let p = policy("{type: Utilization, averageUtilization: 60}");
        assert_eq!(
            first_target(&with_targets_scaled(&p, 50)),
            "averageUtilization: 30"
        );
        assert_eq!(
            first_target(&with_targets_scaled(&p, 1)),
            "averageUtilization: 1"
        );
        let p = policy("{type: AverageValue, averageValue: 500m}");
        assert_eq!(
            first_target(&with_targets_scaled(&p, 50)),
            "averageValue: 250m"
        );
    }

    #[test]
    fn deltas_are_against_the_first_policy() {
        let score = |name: &str, under: f64, hours: f64| Scores {
            name: name.to_owned(),
            under_provisioned_minutes: under,
            replica_hours: hours,
            ..crate::score::ScoreKeeper::default().finish(name, 0)
        };
        let (a, b) = (
            score("reactive", 10.0, 100.0),
            score("predictive", 0.0, 110.0),
        );
        let d = deltas(&[&a, &b]);
        assert_eq!(d.len(), 1);
        assert_eq!(change(d[0].under_minutes), (-10.0, Some(-100.0)));
        let (dh, pct) = change(d[0].replica_hours);
        assert!((dh - 10.0).abs() < 1e-9 && (pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(change((0.0, 0.0)), (0.0, None));
    }
}
