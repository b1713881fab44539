//! Every policy against the first (the baseline), and the policy changes the frontier
//! replays ([`crate::frontier`] judges policies at equal shortfall).

use foresight_api::hpa::{MetricSpec, MetricTarget};
use foresight_api::quantity::Quantity;
use serde::Serialize;

use crate::policy::Policy;
use crate::score::Scores;

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

/// `policy` with every metric's target multiplied by `factor` (at least 1 unit).
pub fn with_targets_scaled(policy: &Policy, factor: f64) -> Policy {
    let mut scaled = policy.clone();
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
pub fn first_target(policy: &Policy) -> String {
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
    use crate::test_support::web_policy;

    fn policy(target: &str) -> Policy {
        web_policy(&format!(
            "  maxReplicas: 40
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {target}}}
"
        ))
    }

    #[test]
    fn targets_scale_in_their_own_terms() {
        let p = policy("{type: Utilization, averageUtilization: 60}");
        assert_eq!(
            first_target(&with_targets_scaled(&p, 0.5)),
            "averageUtilization: 30"
        );
        assert_eq!(
            first_target(&with_targets_scaled(&p, 0.01)),
            "averageUtilization: 1"
        );
        let p = policy("{type: AverageValue, averageValue: 500m}");
        assert_eq!(
            first_target(&with_targets_scaled(&p, 0.5)),
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
