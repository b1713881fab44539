//! `docs/metrics.md` lists exactly what `/metrics` exports: every family's name, and the
//! labels of each. The telemetry is filled the way reconciles fill it (one autoscaler with a
//! metric, prediction, a cron and a limit; one request of each kind; Prometheus configured),
//! so that every family has samples whose labels can be read.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use foresight_api::hpa::{MetricStatus, MetricValueStatus, ResourceMetricStatus};
use foresight_api::status::{
    Condition, ConditionStatus, DecisionRecord, EvaluationStatus, ForecastAccuracyStatus,
    LimitRecord, OperatingPointStatus, PredictionStatus, ProposalRecord,
};
use foresight_api::EffectiveHorizontalPodAutoscalerStatus;
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_k8s::autoscaler_key::{AutoscalerKey, PerAutoscaler};
use foresight_k8s::forecasts::{CorePredictor, ForecastCache, ForecastSettings};
use foresight_k8s::prometheus::{PrometheusClient, PrometheusOptions};
use foresight_k8s::telemetry::hpa::{Action, ErrorKind, MetricComputation};
use foresight_k8s::telemetry::{Build, Call, DecisionLabels, Telemetry};

/// Family name → label names, from `docs/metrics.md`'s tables.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/metrics.md"
    ))
    .expect("docs/metrics.md");
    let mut out = BTreeMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').to_owned();
        let labels = cells[3]
            .split(',')
            .map(|l| l.trim().trim_matches('`').to_owned())
            .filter(|l| !l.is_empty())
            .collect();
        assert!(out.insert(name.clone(), labels).is_none(), "{name} twice");
    }
    out
}

/// Family name (as queried: counters with `_total`, info with `_info`) → label names seen
/// on its samples (`le` of histogram buckets left out).
fn exported(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut types = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (family, kind) = rest.split_once(' ').expect("# TYPE name kind");
            types.insert(family.to_owned(), kind.to_owned());
        }
    }
    let mut out: BTreeMap<String, BTreeSet<String>> = types
        .iter()
        .map(|(family, kind)| {
            let name = match kind.as_str() {
                "counter" => format!("{family}_total"),
                "info" => format!("{family}_info"),
                _ => family.clone(),
            };
            (name, BTreeSet::new())
        })
        .collect();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, rest)) = line.split_once('{') else {
            continue;
        };
        let family = types
            .keys()
            .filter(|f| series.starts_with(f.as_str()))
            .max_by_key(|f| f.len())
            .expect("a sample of a declared family");
        let name = match types[family].as_str() {
            "counter" => format!("{family}_total"),
            "info" => format!("{family}_info"),
            _ => family.clone(),
        };
        let labels = rest.split('}').next().unwrap_or_default();
        for pair in labels.split("\",") {
            if let Some((label, _)) = pair.split_once('=') {
                if label != "le" {
                    out.get_mut(&name).unwrap().insert(label.to_owned());
                }
            }
        }
    }
    out
}

fn filled_telemetry() -> Arc<Telemetry> {
    let client = PrometheusClient::new("http://127.0.0.1:9", PrometheusOptions::default())
        .expect("a client");
    let cache = ForecastCache::new(
        client.clone(),
        Arc::new(CorePredictor),
        ForecastSettings::default(),
    );
    let mut t = Telemetry::new(Build {
        version: "1.2.3".into(),
        revision: "abc".into(),
    });
    t.register_prometheus(client, cache, Arc::new(jiff::Timestamp::now));
    let t = Arc::new(t);
    t.set_kubernetes(Some("v1.37.2"), "1.37", "server");
    t.hpa
        .reconciled(Action::ScaleUp, ErrorKind::None, Duration::from_millis(4));
    t.hpa.computed(&MetricComputation {
        metric_type: "Resource".into(),
        action: Action::ScaleUp,
        error: ErrorKind::None,
        duration: Duration::from_millis(1),
    });

    let spec = serde_json::from_value(serde_json::json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 10,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}}],
    }))
    .unwrap();
    let autoscaler =
        Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).expect("a valid spec");
    let condition = |type_: &str| Condition {
        type_: type_.into(),
        status: ConditionStatus::True,
        last_transition_time: None,
        reason: "R".into(),
        message: String::new(),
    };
    let status = EffectiveHorizontalPodAutoscalerStatus {
        current_replicas: Some(3),
        desired_replicas: Some(4),
        current_metrics: vec![MetricStatus {
            type_: "Resource".into(),
            resource: Some(ResourceMetricStatus {
                name: "cpu".into(),
                current: MetricValueStatus {
                    average_utilization: Some(80),
                    ..Default::default()
                },
            }),
            ..Default::default()
        }],
        conditions: vec![
            condition("Ready"),
            condition("PredictionReady"),
            condition("CronActive"),
            condition("FallbackActive"),
            condition("Paused"),
            condition("Active"),
        ],
        prediction: Some(PredictionStatus {
            horizon: "LeadTime".into(),
            horizon_seconds: 90,
            startup_seconds: 60,
            startup_measured: true,
            metrics: vec![ForecastAccuracyStatus {
                metric: "resource.cpu".into(),
                samples: 120,
                error_percent: 12,
                evaluation: Some(EvaluationStatus {
                    evaluated_at: jiff::Timestamp::UNIX_EPOCH,
                    replayed_seconds: 259_200,
                    kept: true,
                    saving_percent: 8,
                    predictive_under_seconds: 60,
                    predictive_replica_hours: 92,
                    reactive_replica_hours: 100,
                }),
                ..Default::default()
            }],
        }),
        operating_point: Some(OperatingPointStatus {
            chosen_at: jiff::Timestamp::UNIX_EPOCH,
            replayed_seconds: 259_200,
            target_utilization: Some(70),
            risk_budget_percent: Some("5".into()),
            forecast_budget_percent: None,
            prediction: true,
            meets_objective: true,
            under_seconds: 600,
            replica_hours: 88,
            reactive_under_seconds: 660,
            reactive_replica_hours: 100,
            description: "target 70% and 5% risk budget".into(),
            blocks: Vec::new(),
            carried_under_seconds: 0,
        }),
        last_decision: Some(DecisionRecord {
            proposals: vec![ProposalRecord {
                source: "metric".into(),
                replicas: Some(4),
                ..Default::default()
            }],
            limits: vec![LimitRecord {
                reason: "ScaleUpLimit".into(),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    t.autoscalers.record(&autoscaler, &status);

    let calls = t.calls();
    calls.record(Call::PatchStatus);
    calls.metric_read("pods", Duration::from_millis(3), true);
    t.reconciles.inc();
    t.reconcile_failed("timeout");
    t.reconcile_duration.observe(0.01);
    t.decisions
        .get_or_create(&DecisionLabels {
            direction: "up".into(),
            reason: "Recommendation".into(),
        })
        .inc();
    t
}

#[test]
fn docs_metrics_md_lists_every_exported_series_with_its_labels() {
    let text = filled_telemetry().encode();
    let exported = exported(&text);
    let documented = documented();
    let missing: Vec<_> = exported
        .keys()
        .filter(|k| !documented.contains_key(*k))
        .collect();
    let stale: Vec<_> = documented
        .keys()
        .filter(|k| !exported.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "exported but not in docs/metrics.md: {missing:?}\n\
         in docs/metrics.md but not exported: {stale:?}\n{text}"
    );
    for (name, labels) in &exported {
        // Families without samples here (Prometheus counters before any request) show no
        // labels; the others must show exactly the documented ones.
        if !labels.is_empty() {
            assert_eq!(labels, &documented[name], "labels of {name}");
        }
    }
    assert!(
        text.contains("foresight_build_info{version=\"1.2.3\",revision=\"abc\"} 1"),
        "{text}"
    );
    assert!(
        text.contains(
            "foresight_kubernetes_info{server_version=\"v1.37.2\",decides_as=\"1.37\",source=\"server\"} 1"
        ),
        "{text}"
    );
}

#[test]
fn an_autoscalers_series_go_when_it_is_forgotten() {
    let t = filled_telemetry();
    let text = t.encode();
    assert!(text.contains("foresight_autoscaler_metric_value{namespace=\"shop\",name=\"web\",metric=\"resource.cpu\"} 80"));
    assert!(
        text.contains(
            "foresight_autoscaler_operating_point_saving_percent{namespace=\"shop\",name=\"web\"} 12"
        ),
        "{text}"
    );
    t.autoscalers.forget(&AutoscalerKey::new("shop", "web"));
    let text = t.encode();
    assert!(
        !text.lines().any(|l| l.contains("name=\"web\"")),
        "series of a forgotten autoscaler remain:\n{text}"
    );
    assert!(t.autoscalers.is_empty());
}
