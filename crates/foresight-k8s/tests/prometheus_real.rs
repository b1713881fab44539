//! Against a real Prometheus: the test starts its own server on 127.0.0.1 (a free port, a
//! temporary data directory), backfilled with `promtool tsdb create-blocks-from openmetrics`
//! from OpenMetrics text it generates, and checks that
//! (a) a `type: Prometheus` metric drives a decision;
//! (b) multi-day history feeds the predictor, and the decision uses the forecast;
//! (c) when Prometheus stops mid-run, prediction is demoted and the observed metric still scales;
//! (d) with `spec.objective`, the history chooses an operating point the decision runs at.
//!
//! Needs Debian's `prometheus` package (which also provides `promtool`); the tests fail, not
//! skip, without it.

use std::sync::Arc;
use std::time::Duration;

use foresight_api::status::{
    ConditionStatus, EffectiveHorizontalPodAutoscalerStatus, ScalingHistory,
};
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::conditions::PREDICTION_READY;
use foresight_core::decision::{decide, Decision, MetricObservation, Observation, ScaleOutcome};
use foresight_core::forecasting::ForecastInput;
use foresight_core::metrics::{ContainerUsage, MetricData, PodResourceSample, ValueSample};
use foresight_core::pods::{Container, Pod, PodPhase, ReadyCondition};
use foresight_core::proposals::Scale;
use foresight_core::resources::ResourceList;
use foresight_envtest::prometheus::{counter, PrometheusServer};
use foresight_k8s::forecasts::{CorePredictor, ForecastCache, ForecastSettings};
use foresight_k8s::prometheus::{PrometheusClient, PrometheusOptions};
use foresight_k8s::sources::prometheus::read_prometheus_metrics;
use jiff::{SignedDuration, Timestamp};

const DAY: i64 = 86_400;
const STEP: i64 = 60;

/// The test's "now": the last sample of the generated history, on a whole minute.
fn now() -> Timestamp {
    let s = Timestamp::now().as_second();
    Timestamp::from_second(s - s.rem_euclid(STEP)).expect("a valid timestamp")
}

/// The workload's CPU (cores, both pods together): 0.4 all day, 1.6 for an hour every day
/// starting 30 minutes after `now`, like a daily batch.
fn cpu_cores(t: i64, now: i64) -> f64 {
    let phase = (t - (now + 1800)).rem_euclid(DAY);
    if phase < 3600 {
        1.6
    } else {
        0.4
    }
}

const POD_A: &str = "web-7d9f8b6c5d-abcde";
const POD_B: &str = "web-7d9f8b6c5d-fghij";

fn history(now: Timestamp, days: i64) -> String {
    let end = now.as_second();
    let mut om = String::new();
    let pods = [
        (
            format!(r#"namespace="shop",pod="{POD_A}",container="app""#),
            0.5,
        ),
        (
            format!(r#"namespace="shop",pod="{POD_B}",container="app""#),
            0.5,
        ),
        // Another workload in the namespace, which the default query must leave out.
        (
            r#"namespace="shop",pod="web-api-0",container="app""#.to_owned(),
            3.0,
        ),
    ];
    let pods: Vec<(&str, f64)> = pods.iter().map(|(l, s)| (l.as_str(), *s)).collect();
    counter(
        &mut om,
        "container_cpu_usage_seconds",
        &pods,
        (end, days, STEP),
        |t| cpu_cores(t, end),
    );
    counter(
        &mut om,
        "http_requests",
        &[
            (r#"namespace="shop",service="web",pod="a""#, 0.5),
            (r#"namespace="shop",service="web",pod="b""#, 0.5),
        ],
        (end, days, STEP),
        |_| 100.0,
    );
    om.push_str("# EOF\n");
    om
}

fn autoscaler(spec: serde_json::Value) -> Autoscaler {
    let spec: foresight_api::EffectiveHorizontalPodAutoscalerSpec =
        serde_json::from_value(spec).expect("a well-formed spec");
    Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).expect("a valid spec")
}

fn pod(name: &str, now: Timestamp) -> Pod {
    let started = now - SignedDuration::from_hours(1);
    Pod {
        name: name.to_owned(),
        phase: PodPhase::Running,
        ready: Some(ReadyCondition {
            status: ConditionStatus::True,
            last_transition_time: started,
        }),
        start_time: Some(started),
        deletion_timestamp: None,
        containers: vec![Container {
            name: "app".to_owned(),
            requests: ResourceList::cpu(500),
        }],
        ..Default::default()
    }
}

/// Two ready pods of the workload, each using `milli_cpu`.
fn observation(now: Timestamp, milli_cpu: i64) -> Observation {
    Observation {
        scale: Ok(Scale {
            spec_replicas: 2,
            status_replicas: 2,
            selector: "app=web".to_owned(),
        }),
        pods: vec![pod(POD_A, now), pod(POD_B, now)],
        resource_metrics: Ok([POD_A, POD_B]
            .iter()
            .map(|p| PodResourceSample {
                pod: (*p).to_owned(),
                timestamp: now,
                window: SignedDuration::from_secs(60),
                containers: vec![ContainerUsage {
                    name: "app".to_owned(),
                    usage: ResourceList::cpu(milli_cpu),
                }],
            })
            .collect()),
        ..Default::default()
    }
}

fn run_decision(a: &Autoscaler, obs: &Observation, now: Timestamp) -> Decision {
    decide(
        a,
        obs,
        EffectiveHorizontalPodAutoscalerStatus::default(),
        ScalingHistory::default(),
        now,
    )
}

fn prediction_ready(d: &Decision) -> (ConditionStatus, String, String) {
    let c = d
        .conditions()
        .iter()
        .find(|c| c.type_ == PREDICTION_READY)
        .expect("a PredictionReady condition");
    (c.status, c.reason.clone(), c.message.clone())
}

#[tokio::test]
async fn a_promql_metric_drives_a_decision() {
    let now = now();
    let server = PrometheusServer::start(&history(now, 1));
    let client =
        PrometheusClient::new(server.url(), PrometheusOptions::default()).expect("a client");
    let a = autoscaler(serde_json::json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 20,
        "metrics": [{"type": "Prometheus", "prometheus": {
            "name": "requests",
            "query": r#"sum(rate(http_requests_total{namespace="shop",service="web"}[5m]))"#,
            "target": {"type": "AverageValue", "averageValue": "20"}}}]
    }));
    let data = read_prometheus_metrics(&client, &a, now).await;
    // 100 requests/s, in thousandths.
    assert_eq!(
        data,
        vec![MetricData::Values(vec![ValueSample {
            value: 100_000,
            timestamp: now
        }])]
    );
    let obs = Observation {
        metrics: data.into_iter().map(MetricObservation::from).collect(),
        ..observation(now, 200)
    };
    let d = run_decision(&a, &obs, now);
    // 100 / 20 per pod = 5 pods (the legacy scale-up limit allows max(2 × 2, 4) = 4 at once).
    assert_eq!(d.record.recommendation, Some(5), "{:?}", d.record);
    assert_eq!(d.desired_replicas, 4, "{:?}", d.record);

    // A query without `sum` returns one series per pod: an error naming the count.
    let per_pod = autoscaler(serde_json::json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 20,
        "metrics": [{"type": "Prometheus", "prometheus": {
            "name": "requests", "query": "rate(http_requests_total[5m])",
            "target": {"type": "Value", "value": "20"}}}]
    }));
    match &read_prometheus_metrics(&client, &per_pod, now).await[0] {
        MetricData::Failed(e) => assert!(e.contains("returned 2 series"), "{e}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    // A malformed query reports Prometheus' own error.
    let bad = autoscaler(serde_json::json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 20,
        "metrics": [{"type": "Prometheus", "prometheus": {
            "name": "requests", "query": "sum(rate(http_requests_total[5m])",
            "target": {"type": "Value", "value": "20"}}}]
    }));
    match &read_prometheus_metrics(&client, &bad, now).await[0] {
        MetricData::Failed(e) => assert!(e.contains("bad_data"), "{e}"),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn history_feeds_the_predictor_and_an_outage_demotes_it() {
    let now = now();
    let mut server = PrometheusServer::start(&history(now, 4));
    // Small requests, so the 3-day history is fetched in several pieces.
    let client = PrometheusClient::new(
        server.url(),
        PrometheusOptions {
            max_points_per_request: 2000,
            ..Default::default()
        },
    )
    .expect("a client");
    // The split range comes back whole: 3 days at 1 minute is 4,321 points in 3 requests.
    let cpu = r#"sum(rate(container_cpu_usage_seconds_total{namespace="shop",pod=~"web-[a-z0-9]+-[a-z0-9]{5}"}[5m]))"#;
    let range = client
        .query_range(
            cpu,
            now - SignedDuration::from_hours(72),
            now,
            Duration::from_secs(STEP as u64),
        )
        .await
        .expect("a range query");
    assert_eq!(range.len(), 1);
    let points = &range[0].points;
    assert_eq!(points.len(), 4321);
    assert!(points.windows(2).all(|w| w[1].ts - w[0].ts == STEP));
    assert_eq!(points.last().map(|p| p.ts), Some(now.as_second()));
    let settings = ForecastSettings {
        model_update_interval: Duration::from_secs(60),
        keep_forecast_after_failure: Duration::ZERO,
        ..Default::default()
    };
    let cache = ForecastCache::new(client.clone(), Arc::new(CorePredictor), settings);
    let a = autoscaler(serde_json::json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 20,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}],
        "behavior": {"scaleUp": {"policies": [{"type": "Percent", "value": 1000, "periodSeconds": 15}]}},
        "prediction": {"predictionWindowSeconds": 3600, "horizon": "Window",
            "predictionAlgorithm": {"algorithmType": "dsp",
                "dsp": {"sampleInterval": "60s", "historyLength": "3d"}}}
    }));

    // (b) The default query reads the two pods' CPU for 3 days (plus the DSP predictor's hour);
    // every day it jumps from 0.4 to 1.6 cores for an hour, next in 30 minutes.
    let forecasts = cache.refresh(&a, now).await;
    let ForecastInput::Ready(forecast) = &forecasts[0] else {
        panic!("expected a forecast, got {forecasts:?}");
    };
    let (peak_at, peak) = forecast
        .peak_in(now.as_second(), now.as_second() + 3600)
        .expect("the forecast covers the window");
    // The DSP predictor finds the daily period and rebuilds the pulse from its strongest
    // harmonics: low now, well above the observed 0.4 cores within the hour.
    assert_eq!(forecast.period_seconds, Some(DAY), "{}", forecast.estimator);
    assert!((1.3..2.3).contains(&peak), "peak {peak} at {peak_at}");
    assert!(peak_at > now.as_second() + 1800, "peak at {peak_at}");
    assert!(forecast
        .value_at(now.as_second() + STEP)
        .is_some_and(|v| v < 0.7));
    let obs = Observation {
        metrics: with_forecasts(&forecasts),
        ..observation(now, 200)
    };
    let d = run_decision(&a, &obs, now);
    let (status, reason, message) = prediction_ready(&d);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::True, "PredictSucceed"),
        "{message}"
    );
    let proposal = d
        .record
        .proposals
        .iter()
        .find(|p| p.source == "prediction")
        .expect("a prediction proposal");
    // The peak over 250m per pod (50% of 500m); the observed 2 × 200m says only 2.
    let expected = (peak * 1000.0 / 250.0).ceil() as i32;
    assert!(expected >= 6, "{expected}");
    assert_eq!(proposal.replicas, Some(expected), "{proposal:?}");
    assert_eq!(d.desired_replicas, expected, "{:?}", d.record);
    let stats = cache.stats();
    assert_eq!((stats.succeeded, stats.failed), (1, 0));

    // (c) Prometheus stops. The next refresh fails; prediction is demoted with the reason,
    // and the observed CPU (2 × 400m against 250m per pod → 4) still scales the workload.
    server.kill();
    let later = now + SignedDuration::from_secs(120);
    let forecasts = cache.refresh(&a, later).await;
    match &forecasts[0] {
        ForecastInput::Failed(e) => assert!(e.contains("unreachable"), "{e}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    let obs = Observation {
        metrics: with_forecasts(&forecasts),
        ..observation(later, 400)
    };
    let d = run_decision(&a, &obs, later);
    let (status, reason, message) = prediction_ready(&d);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "PredictFailed")
    );
    assert!(message.contains("unreachable"), "{message}");
    assert!(d
        .record
        .proposals
        .iter()
        .all(|p| p.source != "prediction" || p.replicas.is_none()));
    assert_eq!(d.desired_replicas, 4, "{:?}", d.record);
    assert_eq!(cache.stats().failed, 1);
}

/// An observation's metrics with these forecasts and no readings.
fn with_forecasts(forecasts: &[ForecastInput]) -> Vec<MetricObservation> {
    forecasts
        .iter()
        .map(|forecast| MetricObservation {
            forecast: forecast.clone(),
            ..MetricObservation::default()
        })
        .collect()
}

/// (d) With `spec.objective`, the refreshes replay the history read from Prometheus under the
/// tuner's candidates, and the decision runs at the point chosen and says so in status.
#[tokio::test]
async fn an_objective_chooses_an_operating_point_the_decision_runs_at() {
    let now = now();
    let server = PrometheusServer::start(&history(now, 4));
    let client =
        PrometheusClient::new(server.url(), PrometheusOptions::default()).expect("a client");
    let settings = ForecastSettings {
        model_update_interval: Duration::from_secs(60),
        ..Default::default()
    };
    let cache = ForecastCache::new(client, Arc::new(CorePredictor), settings);
    let a = Arc::new(autoscaler(serde_json::json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 20,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}],
        "prediction": {"predictionWindowSeconds": 3600, "horizon": "Window",
            "predictionAlgorithm": {"algorithmType": "dsp",
                "dsp": {"sampleInterval": "60s", "historyLength": "3d"}}},
        "objective": {"shortfall": "AsReactive", "maxUtilization": 80}
    })));
    cache.refresh(&a, now).await;
    assert_eq!(
        cache.operating_point(&a),
        None,
        "no replay before a reconcile described the workload"
    );
    cache.learn_about(
        &a,
        foresight_replay::evaluation::Assumptions {
            startup_seconds: 60,
            pod_cpu_request_millicores: 500,
            prediction_proposed: true,
        },
    );
    let later = now + SignedDuration::from_secs(60);
    let forecasts = cache.refresh(&a, later).await;
    let point = cache
        .operating_point(&a)
        .expect("an operating point from three days of history");
    assert_eq!(point.chosen_at, later.as_second());
    assert!(point.replayed_seconds >= DAY, "{point:?}");
    let target = point.knobs.utilization.expect("a Utilization target");
    assert!((50..=80).contains(&target), "{}", point.describe());

    let obs = Observation {
        metrics: with_forecasts(&forecasts),
        operating_point: Some(point.clone()),
        ..observation(later, 200)
    };
    let d = run_decision(&a, &obs, later);
    let recommendation = d.record.recommendation;
    let status = d.finish(&a, ScaleOutcome::NotAttempted).status;
    let shown = status
        .operating_point
        .as_ref()
        .expect("status shows the operating point");
    assert_eq!(shown.description, point.describe());
    assert_eq!(shown.target_utilization, Some(target));
    // Until a point is chosen the spec runs as written, and status says nothing of one.
    let obs_written = Observation {
        metrics: with_forecasts(&forecasts),
        ..observation(later, 200)
    };
    let written = run_decision(&a, &obs_written, later);
    let written_recommendation = written.record.recommendation;
    let written_status = written.finish(&a, ScaleOutcome::NotAttempted).status;
    assert_eq!(written_status.operating_point, None);
    // A hotter target never asks for more than the written one.
    assert!(
        recommendation <= written_recommendation || point.knobs.prediction,
        "at the point {recommendation:?}, as written {written_recommendation:?}"
    );
}
