//! Kind `replicas`: one metric's proposal (ReplicaCalculator plus the metrics client).

use foresight_api::hpa::MetricSpec;
use foresight_api::Quantity;
use foresight_core::autoscaler::{Metric, MetricSource};
use foresight_core::metrics::{MetricData, ValueSample};
use foresight_core::proposals::{evaluate, Scale};
use foresight_core::replicas::ReplicaContext;
use foresight_core::snapshot::{
    self, PodCustomMetricJson, PodJson, PodResourceMetricJson, ValueJson,
};
use foresight_core::version::KubernetesVersion;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::common::{self, expect_eq, same_instant};

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Metrics {
    #[serde(default)]
    pod_resource_metrics: Vec<PodResourceMetricJson>,
    #[serde(default)]
    pod_custom_metrics: Vec<PodCustomMetricJson>,
    #[serde(default)]
    object_metric: Option<ValueJson>,
    #[serde(default)]
    external_metrics: Vec<ValueJson>,
}

fn milli_of(q: Option<&Value>) -> Option<i64> {
    q.and_then(Value::as_str)
        .and_then(|s| Quantity::from(s).milli_value().ok())
}

pub fn check(input: &Value, expect: &Value, kubernetes: KubernetesVersion) -> Result<(), String> {
    let cfg = common::config(input);
    let now = common::now(input)?;
    let spec: MetricSpec = common::field(input, "metric")?;
    let metric = Metric::compile(&spec);
    let pods_json: Vec<PodJson> = common::field(input, "pods")?;
    let pods = snapshot::pods(&pods_json, "pods").map_err(|e| e.to_string())?;
    let metrics: Metrics = common::field::<Option<Metrics>>(input, "metrics")?.unwrap_or_default();
    let scale = Scale {
        spec_replicas: common::field(input, "currentReplicas")?,
        status_replicas: common::field(input, "statusReplicas")?,
        selector: "name=test-pod".to_owned(),
    };
    let resource =
        snapshot::pod_resource_metrics(&metrics.pod_resource_metrics, "podResourceMetrics")
            .map_err(|e| e.to_string())?;
    let data = match &metric.source {
        MetricSource::Pods { .. } => MetricData::PodValues(
            snapshot::pod_custom_metrics(&metrics.pod_custom_metrics, "podCustomMetrics")
                .map_err(|e| e.to_string())?,
        ),
        MetricSource::Object { .. } => match &metrics.object_metric {
            Some(v) => MetricData::Object(ValueSample {
                value: v.value.milli_value().map_err(|e| e.to_string())?,
                timestamp: v.timestamp,
            }),
            None => MetricData::Values(Vec::new()),
        },
        MetricSource::External { .. } => MetricData::Values(
            snapshot::values(&metrics.external_metrics, "externalMetrics")
                .map_err(|e| e.to_string())?,
        ),
        _ => MetricData::None,
    };
    let ctx = ReplicaContext {
        pods: &pods,
        tolerance: cfg.tolerance(kubernetes),
        readiness: cfg.readiness,
        now,
        kubernetes,
        explain: true,
        averages: &Default::default(),
    };
    let outcome = evaluate(
        &metric,
        &data,
        &Ok(resource),
        &scale,
        "test-namespace",
        &ctx,
    );
    match (expect.get("error").and_then(Value::as_str), outcome) {
        (Some(want), Err(f)) => {
            if f.message.contains(want) || f.error.contains(want) {
                Ok(())
            } else {
                Err(format!(
                    "error: expected one containing {want:?}, got {:?}",
                    f.message
                ))
            }
        }
        (Some(want), Ok(p)) => Err(format!(
            "expected error {want:?}, got {} replicas",
            p.replicas
        )),
        (None, Err(f)) => Err(format!("unexpected error: {}", f.message)),
        (None, Ok(p)) => {
            expect_eq("replicas", &expect["replicas"], &json!(p.replicas))?;
            let status = serde_json::to_value(&p.status).map_err(|e| e.to_string())?;
            let current = [
                "resource",
                "containerResource",
                "pods",
                "object",
                "external",
            ]
            .iter()
            .find_map(|k| status.get(*k))
            .and_then(|s| s.get("current"))
            .cloned()
            .unwrap_or(Value::Null);
            if let Some(u) = expect.get("utilization") {
                expect_eq(
                    "utilization",
                    u,
                    current.get("averageUtilization").unwrap_or(&Value::Null),
                )?;
            }
            if let Some(usage) = expect.get("usageMilli") {
                let actual =
                    milli_of(current.get("averageValue")).or(milli_of(current.get("value")));
                expect_eq("usageMilli", usage, &json!(actual))?;
            }
            if let Some(ts) = expect.get("timestamp") {
                let actual = json!(p.timestamp.to_string());
                if !same_instant(ts, &actual) {
                    return Err(format!("timestamp: expected {ts}, got {actual}"));
                }
            }
            Ok(())
        }
    }
}
