//! The series kube-controller-manager exports for its HPA controller, with the same names,
//! labels, help texts and buckets, so that the dashboards and alerts a team already has for
//! its HPAs read Foresight's autoscalers too (docs/metrics.md says which panels read which).
//!
//! They are recorded as Kubernetes records them: one reconciliation per reconcile, whatever
//! its outcome; one metric computation per spec metric each time the metrics are computed
//! (not when the reconcile stops before, as on a failed `/scale` read).

use std::time::Duration;

use foresight_api::status::DecisionRecord;
use foresight_core::autoscaler::{Autoscaler, MetricSource};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// What a reconcile or a metric computation did to the replica count.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Action {
    /// The count went up (for a reconcile: a rescale up was written).
    ScaleUp,
    /// The count went down.
    ScaleDown,
    /// Neither, or a rescale that failed.
    None,
}

impl Action {
    /// The direction from `from` to `to`.
    pub fn between(from: i32, to: i32) -> Action {
        match to.cmp(&from) {
            std::cmp::Ordering::Greater => Action::ScaleUp,
            std::cmp::Ordering::Less => Action::ScaleDown,
            std::cmp::Ordering::Equal => Action::None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Action::ScaleUp => "scale_up",
            Action::ScaleDown => "scale_down",
            Action::None => "none",
        }
    }
}

/// What went wrong, in Kubernetes' two kinds.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum ErrorKind {
    /// Nothing.
    None,
    /// The spec cannot be acted on (it does not compile; an unknown metric type).
    Spec,
    /// Anything else: a failed read, a failed write, a metric that failed while others
    /// decided.
    Internal,
}

impl ErrorKind {
    fn label(self) -> &'static str {
        match self {
            ErrorKind::None => "none",
            ErrorKind::Spec => "spec",
            ErrorKind::Internal => "internal",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReconcileLabels {
    action: &'static str,
    error: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MetricLabels {
    action: &'static str,
    error: &'static str,
    metric_type: String,
}

/// One metric's computation in one reconcile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricComputation {
    /// The spec's `type`.
    pub metric_type: String,
    /// Its proposal against the count the previous status recorded.
    pub action: Action,
    /// Whether it could be computed.
    pub error: ErrorKind,
    /// Its reads and arithmetic.
    pub duration: Duration,
}

/// The four upstream families.
#[derive(Clone, Debug)]
pub struct HpaMetrics {
    reconciliations: Family<ReconcileLabels, Counter>,
    reconciliation_duration: Family<ReconcileLabels, Histogram>,
    computations: Family<MetricLabels, Counter>,
    computation_duration: Family<MetricLabels, Histogram>,
}

/// kube-controller-manager's buckets: 1 ms doubling fifteen times (to 16.384 s).
fn buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

const ACTION_AND_ERROR: &str = "The label 'action' should be either 'scale_down', \
     'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or \
     'none'. Note that if both spec and internal errors happen during a reconciliation, the \
     first one to occur is reported in `error` label.";

const METRIC_LABELS: &str = "The label 'action' should be either 'scale_down', 'scale_up', \
     or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'. The \
     label 'metric_type' corresponds to HPA.spec.metrics[*].type";

impl Default for HpaMetrics {
    fn default() -> Self {
        HpaMetrics {
            reconciliations: Family::default(),
            reconciliation_duration: Family::new_with_constructor(buckets),
            computations: Family::default(),
            computation_duration: Family::new_with_constructor(buckets),
        }
    }
}

impl HpaMetrics {
    /// Registers the families under their upstream names (no `foresight_` prefix).
    pub fn register(&self, registry: &mut Registry) {
        let r = registry.sub_registry_with_prefix("horizontal_pod_autoscaler_controller");
        r.register(
            "reconciliations",
            format!("[BETA] Number of reconciliations of HPA controller. {ACTION_AND_ERROR}"),
            self.reconciliations.clone(),
        );
        r.register(
            "reconciliation_duration_seconds",
            format!(
                "[BETA] The time(seconds) that the HPA controller takes to reconcile once. \
                 {ACTION_AND_ERROR}"
            ),
            self.reconciliation_duration.clone(),
        );
        r.register(
            "metric_computation",
            format!("[BETA] Number of metric computations. {METRIC_LABELS}"),
            self.computations.clone(),
        );
        r.register(
            "metric_computation_duration_seconds",
            format!(
                "[BETA] The time(seconds) that the HPA controller takes to calculate one \
                 metric. {}",
                METRIC_LABELS.replace("'none'. Also, the", "'none'. The")
            ),
            self.computation_duration.clone(),
        );
    }

    /// Records one reconcile.
    pub fn reconciled(&self, action: Action, error: ErrorKind, duration: Duration) {
        let labels = ReconcileLabels {
            action: action.label(),
            error: error.label(),
        };
        self.reconciliations.get_or_create(&labels).inc();
        self.reconciliation_duration
            .get_or_create(&labels)
            .observe(duration.as_secs_f64());
    }

    /// Records one metric computation.
    pub fn computed(&self, m: &MetricComputation) {
        let labels = MetricLabels {
            action: m.action.label(),
            error: m.error.label(),
            metric_type: m.metric_type.clone(),
        };
        self.computations.get_or_create(&labels).inc();
        self.computation_duration
            .get_or_create(&labels)
            .observe(m.duration.as_secs_f64());
    }
}

/// The spec's `type` of a compiled metric.
pub fn metric_type(source: &MetricSource) -> &str {
    match source {
        MetricSource::Resource {
            container: None, ..
        } => "Resource",
        MetricSource::Resource { .. } => "ContainerResource",
        MetricSource::Pods { .. } => "Pods",
        MetricSource::Object { .. } => "Object",
        MetricSource::External { .. } => "External",
        MetricSource::Prometheus { .. } => "Prometheus",
        MetricSource::Formula { .. } => "Formula",
        MetricSource::Unknown { type_ } => type_,
    }
}

/// Each spec metric's computation in a decision that computed them (`None` when the
/// decision stopped before its metrics): its proposal against `previous` (the count the
/// previous status recorded, as Kubernetes compares), and `durations` of its reads.
pub fn computations(
    autoscaler: &Autoscaler,
    record: &DecisionRecord,
    previous: i32,
    durations: &[Duration],
) -> Option<Vec<MetricComputation>> {
    let proposals: Vec<_> = record
        .proposals
        .iter()
        .filter(|p| p.source == "metric")
        .collect();
    if proposals.len() != autoscaler.metrics.len() {
        return None;
    }
    let computed = autoscaler
        .metrics
        .iter()
        .zip(proposals)
        .enumerate()
        .map(|(i, (metric, proposal))| {
            let (action, error) = match (proposal.replicas, &metric.source) {
                (_, MetricSource::Unknown { .. }) => (Action::None, ErrorKind::Spec),
                (Some(replicas), _) => (Action::between(previous, replicas), ErrorKind::None),
                (None, _) => (Action::None, ErrorKind::Internal),
            };
            MetricComputation {
                metric_type: metric_type(&metric.source).to_owned(),
                action,
                error,
                duration: durations.get(i).copied().unwrap_or_default(),
            }
        })
        .collect();
    Some(computed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_families_carry_the_upstream_names_labels_and_buckets() {
        let hpa = HpaMetrics::default();
        let mut registry = Registry::default();
        hpa.register(&mut registry);
        hpa.reconciled(Action::ScaleUp, ErrorKind::None, Duration::from_millis(3));
        hpa.computed(&MetricComputation {
            metric_type: "Resource".to_owned(),
            action: Action::ScaleUp,
            error: ErrorKind::None,
            duration: Duration::from_micros(500),
        });
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"scale_up\",error=\"none\"} 1",
            "horizontal_pod_autoscaler_controller_reconciliation_duration_seconds_bucket{le=\"0.004\",action=\"scale_up\",error=\"none\"} 1",
            "horizontal_pod_autoscaler_controller_reconciliation_duration_seconds_bucket{le=\"16.384\",action=\"scale_up\",error=\"none\"} 1",
            "horizontal_pod_autoscaler_controller_metric_computation_total{action=\"scale_up\",error=\"none\",metric_type=\"Resource\"} 1",
            "horizontal_pod_autoscaler_controller_metric_computation_duration_seconds_bucket{le=\"0.001\",action=\"scale_up\",error=\"none\",metric_type=\"Resource\"} 1",
            "# HELP horizontal_pod_autoscaler_controller_reconciliations [BETA] Number of reconciliations of HPA controller.",
        ] {
            assert!(text.contains(line), "{line}\nnot in\n{text}");
        }
        assert!(!text.contains("le=\"0.002\",action=\"scale_up\",error=\"none\"} 1\nhorizontal_pod_autoscaler_controller_reconciliation"));
    }

    #[test]
    fn an_action_is_the_direction_of_the_change() {
        assert_eq!(Action::between(3, 5), Action::ScaleUp);
        assert_eq!(Action::between(3, 1), Action::ScaleDown);
        assert_eq!(Action::between(3, 3), Action::None);
    }
}
