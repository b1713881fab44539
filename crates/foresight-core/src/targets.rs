//! Each metric's current value beside its target, as `kubectl get hpa` prints them
//! (`cpu: 45%/60%, rps: 120/100`), and as numbers for the controller's per-autoscaler
//! series. Both read the same [`MetricTargets`], so the column and the series agree.

use foresight_api::hpa::{MetricStatus, MetricValueStatus};
use foresight_api::quantity::format_milli;
use foresight_api::Quantity;

use crate::autoscaler::{Metric, MetricSource, Target};

/// A metric value as Kubernetes reports it: a percentage of requests or a quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    /// Percent of the pods' requests.
    Percent(i32),
    /// A quantity, in thousandths.
    Milli(i64),
}

impl Amount {
    /// The amount as a number in its own unit (percent, or the quantity's base unit).
    pub fn as_f64(self) -> f64 {
        match self {
            Amount::Percent(p) => f64::from(p),
            Amount::Milli(m) => m as f64 / 1000.0,
        }
    }

    fn text(self) -> String {
        match self {
            Amount::Percent(p) => format!("{p}%"),
            Amount::Milli(m) => format_milli(m),
        }
    }
}

/// One metric's current value and target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricTarget<'a> {
    /// The metric (see [`Metric::identifier`]), for labels.
    pub metric: String,
    /// The short name the column shows: the resource or the metric's name.
    pub label: &'a str,
    /// The last observed value, in the target's terms; `None` when it could not be read.
    pub current: Option<Amount>,
    /// The target; `None` when the spec set none.
    pub target: Option<Amount>,
}

/// Every metric of an autoscaler, in spec order, with `statuses` (the status'
/// `currentMetrics`, which line up with the metrics by position).
pub fn metric_targets<'a>(
    metrics: &'a [Metric],
    statuses: &[MetricStatus],
) -> Vec<MetricTarget<'a>> {
    metrics
        .iter()
        .enumerate()
        .map(|(i, m)| MetricTarget {
            metric: m.identifier(),
            label: short_name(m),
            current: statuses
                .get(i)
                .and_then(current_value)
                .and_then(|v| in_terms_of(m.target, v)),
            target: match m.target {
                Target::Utilization(p) => Some(Amount::Percent(p)),
                Target::AverageValue(v) | Target::Value(v) => Some(Amount::Milli(v)),
                Target::Unset => None,
            },
        })
        .collect()
}

/// The TARGETS column: `cpu: 45%/60%, rps: 120/100`, `<unknown>` for a value not read, and
/// `<none>` for an autoscaler without metrics.
pub fn summary(targets: &[MetricTarget<'_>]) -> String {
    if targets.is_empty() {
        return "<none>".to_owned();
    }
    let unknown = || "<unknown>".to_owned();
    targets
        .iter()
        .map(|t| {
            format!(
                "{}: {}/{}",
                t.label,
                t.current.map_or_else(unknown, Amount::text),
                t.target.map_or_else(unknown, Amount::text)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn short_name(m: &Metric) -> &str {
    match &m.source {
        MetricSource::Resource { resource, .. } => resource.as_str(),
        MetricSource::Pods { metric }
        | MetricSource::Object { metric, .. }
        | MetricSource::External { metric } => &metric.name,
        MetricSource::Prometheus { name, .. } | MetricSource::Formula { name, .. } => name,
        MetricSource::Unknown { type_ } => type_,
    }
}

fn current_value(s: &MetricStatus) -> Option<&MetricValueStatus> {
    s.resource
        .as_ref()
        .map(|r| &r.current)
        .or(s.container_resource.as_ref().map(|r| &r.current))
        .or(s.pods.as_ref().map(|r| &r.current))
        .or(s.object.as_ref().map(|r| &r.current))
        .or(s.external.as_ref().map(|r| &r.current))
        .or(s.prometheus.as_ref().map(|r| &r.current))
        .or(s.formula.as_ref().map(|r| &r.current))
}

/// The value that compares with `target`: utilization for a utilization target, the
/// average for an average, the total for a total.
fn in_terms_of(target: Target, v: &MetricValueStatus) -> Option<Amount> {
    let milli = |q: &Option<Quantity>| q.as_ref().and_then(|q| q.milli_value().ok());
    match target {
        Target::Utilization(_) => v.average_utilization.map(Amount::Percent),
        Target::AverageValue(_) => milli(&v.average_value).map(Amount::Milli),
        Target::Value(_) => milli(&v.value).map(Amount::Milli),
        Target::Unset => v
            .average_utilization
            .map(Amount::Percent)
            .or(milli(&v.average_value).map(Amount::Milli))
            .or(milli(&v.value).map(Amount::Milli)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use foresight_api::hpa::{MetricSpec, PodsMetricStatus, ResourceMetricStatus};

    fn metric(json: serde_json::Value) -> Metric {
        let spec: MetricSpec = serde_json::from_value(json).unwrap();
        Metric::compile(&spec)
    }

    #[test]
    fn prints_each_metric_as_kubectl_does() {
        let metrics = [
            metric(
                serde_json::json!({"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 60}}}),
            ),
            metric(
                serde_json::json!({"type": "Pods", "pods": {"metric": {"name": "rps"},
                "target": {"type": "AverageValue", "averageValue": "100"}}}),
            ),
            metric(
                serde_json::json!({"type": "External", "external": {"metric": {"name": "queue"},
                "target": {"type": "Value", "value": "1500m"}}}),
            ),
        ];
        let statuses = [
            MetricStatus {
                type_: "Resource".into(),
                resource: Some(ResourceMetricStatus {
                    name: "cpu".into(),
                    current: MetricValueStatus {
                        average_utilization: Some(45),
                        average_value: Some(Quantity("90m".into())),
                        value: None,
                    },
                }),
                ..Default::default()
            },
            MetricStatus {
                type_: "Pods".into(),
                pods: Some(Box::new(PodsMetricStatus {
                    metric: Default::default(),
                    current: MetricValueStatus {
                        average_value: Some(Quantity("120".into())),
                        ..Default::default()
                    },
                })),
                ..Default::default()
            },
            // Not read this sync.
            MetricStatus::default(),
        ];
        let targets = metric_targets(&metrics, &statuses);
        assert_eq!(
            summary(&targets),
            "cpu: 45%/60%, rps: 120/100, queue: <unknown>/1500m"
        );
        assert_eq!(targets[0].metric, "resource.cpu");
        assert_eq!(targets[1].current.map(Amount::as_f64), Some(120.0));
        assert_eq!(targets[2].target.map(Amount::as_f64), Some(1.5));
        assert_eq!(summary(&[]), "<none>");
    }
}
