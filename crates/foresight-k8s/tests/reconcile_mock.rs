//! Whole reconciles against a scripted Kubernetes API (tower-test, as kube-rs tests its own
//! controllers): every request the controller makes is checked — method, path, query,
//! content type and body — against the Kubernetes wire format, and answered as the API
//! server would. A request the script does not expect fails the test, and so does one it
//! expects that never comes.
//!
//! Prometheus, where a scenario has one, is a wiremock server: the scenarios check the
//! PromQL the controller sends and the Kubernetes requests it makes around it.

use std::sync::Arc;
use std::time::Duration;

use foresight_api::EffectiveHorizontalPodAutoscaler;
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::forecasting::ForecastInput;
use foresight_core::proposals::Scale;
use foresight_k8s::autoscaler_key::{AutoscalerKey, PerAutoscaler};
use foresight_k8s::conflicts::TargetIndex;
use foresight_k8s::events::EventPublisher;
use foresight_k8s::forecasts::{CorePredictor, ForecastCache, ForecastSettings};
use foresight_k8s::pods::PodCache;
use foresight_k8s::prometheus::{PrometheusClient, PrometheusOptions};
use foresight_k8s::reconcile::{self, Memories, ReconcileContext, ReconcileSettings};
use foresight_k8s::sources::MetricSources;
use foresight_k8s::target::{ScaleClient, WorkloadCache, WorkloadKind};
use foresight_k8s::telemetry::{Call, Telemetry};
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::client::Body;
use kube::runtime::reflector;
use kube::Client;
use serde_json::{json, Value};

const NS: &str = "shop";
const T0: &str = "2026-06-01T12:00:00Z";

fn t0() -> Timestamp {
    T0.parse().unwrap()
}

fn at(offset_secs: i64) -> Timestamp {
    t0().checked_add(jiff::SignedDuration::from_secs(offset_secs))
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// The scripted API server.

/// An answer made from the request body.
type Respond = Box<dyn Fn(&Value) -> Value + Send>;

/// One expected request and the answer to it.
struct Step {
    method: Method,
    /// Path and query, exactly.
    uri: String,
    /// The Content-Type the request must carry (patches).
    content_type: Option<&'static str>,
    /// Checks the request body (parsed as JSON; `Null` when empty).
    body: Box<dyn Fn(&Value) + Send>,
    status: StatusCode,
    response: Value,
    /// Answers with what this makes of the request body instead of `response`.
    respond: Option<Respond>,
}

impl Step {
    fn new(method: Method, uri: impl Into<String>, status: StatusCode, response: Value) -> Step {
        Step {
            method,
            uri: uri.into(),
            content_type: None,
            body: Box::new(|b| assert!(b.is_null(), "unexpected body {b}")),
            status,
            response,
            respond: None,
        }
    }

    fn get(uri: impl Into<String>, response: Value) -> Step {
        Step::new(Method::GET, uri, StatusCode::OK, response)
    }

    fn merge_patch(uri: impl Into<String>, check: impl Fn(&Value) + Send + 'static) -> Step {
        let uri = uri.into();
        // The API server answers a patch with the object it stored; a status patch returns
        // the whole autoscaler, which the client reads back (it must have metadata and spec).
        let autoscaler = uri
            .strip_prefix(AUTOSCALERS)
            .and_then(|rest| rest.split('/').next());
        let response = match autoscaler {
            Some(name) => json!({
                "apiVersion": "autoscaling.foresight.dev/v1alpha1",
                "kind": "EffectiveHorizontalPodAutoscaler",
                "metadata": {"name": name, "namespace": NS},
                "spec": {},
            }),
            None => json!({}),
        };
        Step {
            content_type: Some("application/merge-patch+json"),
            body: Box::new(check),
            ..Step::new(Method::PATCH, uri, StatusCode::OK, response)
        }
    }

    /// A server-side apply of an autoscaler's status; the API server answers with the
    /// object as stored (here: nothing beyond what was applied).
    fn apply_status(uri: impl Into<String>, check: impl Fn(&Value) + Send + 'static) -> Step {
        Step {
            content_type: Some("application/apply-patch+yaml"),
            ..Step::merge_patch(uri, check)
        }
    }

    fn post(uri: impl Into<String>, check: impl Fn(&Value) + Send + 'static) -> Step {
        Step {
            content_type: Some("application/json"),
            body: Box::new(check),
            ..Step::new(Method::POST, uri, StatusCode::CREATED, json!({}))
        }
    }

    fn answer(mut self, status: StatusCode, response: Value) -> Step {
        self.status = status;
        self.response = response;
        self
    }

    fn answer_with(mut self, respond: impl Fn(&Value) -> Value + Send + 'static) -> Step {
        self.respond = Some(Box::new(respond));
        self
    }
}

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

/// Plays `steps` in order, then requires silence until every client is dropped.
async fn serve(mut handle: Handle, steps: Vec<Step>) -> Vec<Value> {
    let mut bodies = Vec::new();
    for (i, step) in steps.into_iter().enumerate() {
        let Some((req, send)) = handle.next_request().await else {
            panic!(
                "step {i}: expected {} {}, but the controller made no more requests",
                step.method, step.uri
            );
        };
        let uri = req
            .uri()
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default();
        assert_eq!(
            (req.method(), uri.as_str()),
            (&step.method, step.uri.as_str()),
            "step {i}: wrong request"
        );
        let ct = req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(expected) = step.content_type {
            assert_eq!(ct.as_deref(), Some(expected), "step {i}: content type");
        }
        let bytes = req.into_body().collect().await.unwrap().to_bytes();
        let body: Value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        (step.body)(&body);
        let response = match &step.respond {
            Some(respond) => respond(&body),
            None => step.response,
        };
        bodies.push(body);
        let resp = Response::builder()
            .status(step.status)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Body::from(serde_json::to_vec(&response).unwrap()))
            .unwrap();
        send.send_response(resp);
    }
    if let Some((req, _)) = handle.next_request().await {
        panic!("unexpected request: {} {}", req.method(), req.uri());
    }
    bodies
}

fn api_error(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

// ---------------------------------------------------------------------------------------
// The cluster around the autoscaler.

struct World {
    pods: Arc<PodCache>,
    workloads: Arc<WorkloadCache>,
}

impl World {
    fn new() -> World {
        let pods = Arc::new(PodCache::new());
        pods.mark_ready();
        let workloads = Arc::new(WorkloadCache::new(&[WorkloadKind::Deployment]));
        workloads.mark_ready(WorkloadKind::Deployment);
        World { pods, workloads }
    }

    /// A Deployment `web` at `replicas`, selecting `app=web`, with that many ready pods
    /// requesting 500m CPU each.
    fn deployment(self, replicas: i32) -> World {
        self.workloads.apply(
            WorkloadKind::Deployment,
            NS,
            "web",
            Scale {
                spec_replicas: replicas,
                status_replicas: replicas,
                selector: "app=web".into(),
            },
        );
        for i in 0..replicas {
            self.pods.apply(&pod(&format!("web-{i}")));
        }
        self
    }
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"namespace": NS, "name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}]},
        "status": {"phase": "Running", "startTime": "2026-06-01T10:00:00Z",
                   "conditions": [{"type": "Ready", "status": "True",
                                   "lastTransitionTime": "2026-06-01T10:00:30Z"}]}
    }))
    .unwrap()
}

/// The metrics.k8s.io answer: each of `n` pods `web-i` using `cpu`.
fn pod_metrics(n: i32, cpu: &str) -> Value {
    let items: Vec<Value> = (0..n)
        .map(|i| {
            json!({"metadata": {"name": format!("web-{i}"), "namespace": NS,
                                "labels": {"app": "web"}},
                   "timestamp": T0, "window": "30s",
                   "containers": [{"name": "app", "usage": {"cpu": cpu, "memory": "64Mi"}}]})
        })
        .collect();
    json!({"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {},
           "items": items})
}

const POD_METRICS: &str = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods?";
const AUTOSCALERS: &str =
    "/apis/autoscaling.foresight.dev/v1alpha1/namespaces/shop/effectivehorizontalpodautoscalers/";
const OBJECT: &str =
    "/apis/autoscaling.foresight.dev/v1alpha1/namespaces/shop/effectivehorizontalpodautoscalers/web";
const DEPLOYMENT_SCALE: &str = "/apis/apps/v1/namespaces/shop/deployments/web/scale";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/shop/events?";

/// Where `name`'s status is applied (server-side apply as `foresight`, forcing ownership).
fn status_uri_of(name: &str) -> String {
    format!("{AUTOSCALERS}{name}/status?&force=true&fieldManager=foresight")
}

fn status_uri() -> String {
    status_uri_of("web")
}

fn scale_response(replicas: i32) -> Value {
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
           "metadata": {"name": "web", "namespace": NS},
           "spec": {"replicas": replicas}, "status": {"replicas": replicas, "selector": "app=web"}})
}

fn autoscaler(
    spec: Value,
    status: Value,
    resource_version: &str,
) -> EffectiveHorizontalPodAutoscaler {
    let mut spec = spec;
    if spec.get("scaleTargetRef").is_none() {
        spec["scaleTargetRef"] =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"});
    }
    serde_json::from_value(json!({
        "apiVersion": "autoscaling.foresight.dev/v1alpha1",
        "kind": "EffectiveHorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": NS, "uid": "0000-1111",
                     "resourceVersion": resource_version, "generation": 1},
        "spec": spec,
        "status": status,
    }))
    .unwrap()
}

fn cpu_spec(extra: Value) -> Value {
    let mut spec = json!({
        "minReplicas": 1, "maxReplicas": 10,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}}]
    });
    if let (Value::Object(s), Value::Object(e)) = (&mut spec, extra) {
        s.extend(e);
    }
    spec
}

fn context(
    client: Client,
    world: &World,
    now: Timestamp,
) -> (Arc<ReconcileContext>, Arc<Telemetry>) {
    context_with(client, world, now, None)
}

/// A context whose controller reads Prometheus through `prometheus` (the client its
/// `type: Prometheus` metrics use, and the forecast cache over the same client).
fn context_with(
    client: Client,
    world: &World,
    now: Timestamp,
    prometheus: Option<(PrometheusClient, ForecastCache)>,
) -> (Arc<ReconcileContext>, Arc<Telemetry>) {
    let mut telemetry = Telemetry::default();
    if let Some((client, cache)) = &prometheus {
        telemetry.register_prometheus(client.clone(), cache.clone(), Arc::new(move || now));
    }
    let telemetry = Arc::new(telemetry);
    let scales = Arc::new(ScaleClient::new(client.clone(), world.workloads.clone()));
    let (store, _writer) = reflector::store();
    let settings = ReconcileSettings {
        // Every reconcile in these tests reads its own PodMetrics list.
        metrics_max_age: Duration::ZERO,
        ..ReconcileSettings::default()
    };
    let mut sources = MetricSources::new(client.clone(), scales.clone(), settings.metrics_max_age);
    if let Some((prometheus, _)) = &prometheus {
        sources = sources.with_prometheus(prometheus.clone());
    }
    let ctx = ReconcileContext {
        client: client.clone(),
        pods: world.pods.clone(),
        sources,
        forecasts: prometheus.map(|(_, cache)| cache),
        scales,
        settings,
        events: EventPublisher::new(client, Some("foresight-0".into())),
        telemetry: telemetry.clone(),
        memories: Memories::default(),
        targets: TargetIndex::new(),
        store,
        clock: Arc::new(move || now),
        decision_errors: Default::default(),
        reconcile_errors: Default::default(),
        permits: tokio::sync::Semaphore::new(16),
    };
    (Arc::new(ctx), telemetry)
}

/// Runs one reconcile of `obj` against `steps`; returns the request bodies.
async fn reconcile_once(
    obj: &EffectiveHorizontalPodAutoscaler,
    world: &World,
    now: Timestamp,
    steps: Vec<Step>,
) -> Vec<Value> {
    let (svc, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(serve(handle, steps));
    let client = Client::new(svc, NS);
    let (ctx, _) = context(client, world, now);
    run(obj, ctx, server).await
}

async fn run(
    obj: &EffectiveHorizontalPodAutoscaler,
    ctx: Arc<ReconcileContext>,
    server: tokio::task::JoinHandle<Vec<Value>>,
) -> Vec<Value> {
    // A guard against a hang, not a timing assertion.
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        reconcile::reconcile(Arc::new(obj.clone()), ctx.clone()),
    )
    .await
    .expect("reconcile hung");
    drop(ctx);
    let bodies = match server.await {
        Ok(b) => b,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    };
    result.expect("reconcile failed");
    bodies
}

/// What the API server stores after this manager applied `status`: exactly that.
fn stored(status: Value) -> Value {
    status
}

fn condition<'a>(status: &'a Value, type_: &str) -> &'a Value {
    status["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or_else(|| panic!("no {type_} condition in {status}"))
}

fn event_check(
    type_: &'static str,
    reason: &'static str,
    note_part: &'static str,
) -> impl Fn(&Value) {
    move |b: &Value| {
        assert_eq!(b["apiVersion"], "events.k8s.io/v1");
        assert_eq!(b["kind"], "Event");
        assert_eq!(b["type"], type_);
        assert_eq!(b["reason"], reason);
        assert_eq!(b["reportingController"], "foresight-controller");
        assert_eq!(b["reportingInstance"], "foresight-0");
        assert_eq!(b["regarding"]["kind"], "EffectiveHorizontalPodAutoscaler");
        assert_eq!(b["regarding"]["name"], "web");
        assert_eq!(b["regarding"]["namespace"], NS);
        assert_eq!(b["metadata"]["namespace"], NS);
        let note = b["note"].as_str().unwrap_or_default();
        assert!(
            note.contains(note_part),
            "note {note:?} lacks {note_part:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Scenarios.

/// A custom resource with a scale subresource, 2 replicas at 180% of the CPU request
/// against a 60% target: resolved by discovery, read through `GET /scale`, scaled up to 4
/// (the legacy limit: at most double, or +4), with an event and a status write.
#[tokio::test]
async fn scale_up_through_discovery_and_the_scale_subresource() {
    let world = World::new();
    for i in 0..2 {
        world.pods.apply(&pod(&format!("web-{i}")));
    }
    let obj = autoscaler(
        cpu_spec(
            json!({"scaleTargetRef": {"apiVersion": "example.com/v1", "kind": "Widget", "name": "web"}}),
        ),
        Value::Null,
        "7",
    );
    let widget_scale = "/apis/example.com/v1/namespaces/shop/widgets/web/scale";
    let steps = vec![
        Step::get(
            "/apis/example.com/v1",
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "example.com/v1",
                   "resources": [
                       {"name": "widgets", "singularName": "widget", "namespaced": true,
                        "kind": "Widget", "verbs": ["get", "list", "watch", "patch"]},
                       {"name": "widgets/scale", "singularName": "", "namespaced": true,
                        "group": "autoscaling", "version": "v1", "kind": "Scale",
                        "verbs": ["get", "patch", "update"]}]}),
        ),
        Step::get(widget_scale, scale_response(2)),
        Step::get(POD_METRICS, pod_metrics(2, "900m")),
        Step::merge_patch(format!("{widget_scale}?"), |b| {
            assert_eq!(b, &json!({"spec": {"replicas": 4}}));
        })
        .answer(StatusCode::OK, scale_response(4)),
        Step::post(
            EVENTS,
            event_check(
                "Normal",
                "SuccessfulRescale",
                "New size: 4; reason: cpu resource utilization (percentage of request) above target",
            ),
        ),
        Step::apply_status(status_uri(), |b| {
            assert_eq!(b["metadata"], json!({"name": "web"}), "no version: the apply wins");
            let s = &b["status"];
            assert_eq!(s["currentReplicas"], 2);
            assert_eq!(s["desiredReplicas"], 4);
            assert_eq!(s["expectReplicas"], 4);
            assert_eq!(s["lastScaleTime"], T0);
            assert_eq!(s["observedGeneration"], 1);
            assert_eq!(s["currentMetrics"][0]["resource"]["current"]["averageUtilization"], 180);
            assert_eq!(condition(s, "AbleToScale")["reason"], "SucceededRescale");
            assert_eq!(condition(s, "ScalingActive")["status"], "True");
            assert_eq!(condition(s, "ScalingLimited")["reason"], "ScaleUpLimit");
            assert_eq!(condition(s, "Ready")["status"], "True");
            assert_eq!(condition(s, "Ready")["lastTransitionTime"], T0);
            assert_eq!(s["lastDecision"]["desiredReplicas"], 4);
            assert_eq!(s["lastDecision"]["recommendation"], 6);
            assert_eq!(s["lastDecision"]["rescale"], true);
            // The scale-up is recorded for restarts (legacy path: recommendations only).
            assert!(s["history"]["recommendations"].as_array().is_some_and(|r| !r.is_empty()));
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;
}

/// 5 replicas now at low usage, while status remembers a recommendation of 5 from a minute
/// ago: the 300 s scale-down stabilization holds at 5. The first sync writes the new
/// conditions; after that, syncs with nothing new write nothing at all.
#[tokio::test]
async fn scale_down_is_held_by_stabilization_and_steady_state_writes_nothing() {
    let world = World::new().deployment(5);
    let history = json!({"recommendations": [{"replicas": 5, "timestamp": "2026-06-01T11:59:00Z"}],
                         "scaleUpEvents": [], "scaleDownEvents": []});
    let obj = autoscaler(cpu_spec(json!({})), json!({"history": history}), "10");
    let written = Arc::new(std::sync::Mutex::new(Value::Null));
    let keep = written.clone();
    let steps = vec![
        Step::get(POD_METRICS, pod_metrics(5, "100m")),
        Step::apply_status(status_uri(), move |b| {
            let s = &b["status"];
            assert_eq!(s["currentReplicas"], 5);
            assert_eq!(s["desiredReplicas"], 5);
            assert_eq!(s["lastScaleTime"], Value::Null);
            assert_eq!(condition(s, "AbleToScale")["reason"], "ScaleDownStabilized");
            // 5 pods at 20% of request against 60%: ceil(5 * 20 / 60) = 2.
            assert_eq!(s["lastDecision"]["recommendation"], 2);
            assert_eq!(s["lastDecision"]["rescale"], false);
            let limits = s["lastDecision"]["limits"].as_array().unwrap();
            assert_eq!(limits[0]["stage"], "stabilization");
            *keep.lock().unwrap() = stored(b["status"].clone());
        }),
        // Second and third syncs: nothing to write.
        Step::get(POD_METRICS, pod_metrics(5, "100m")),
        Step::get(POD_METRICS, pod_metrics(5, "100m")),
    ];
    // One context across the syncs: the controller's memory carries over.
    let (svc, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(serve(handle, steps));
    let client = Client::new(svc, NS);
    let clock_at = Arc::new(std::sync::Mutex::new(t0()));
    let (ctx, telemetry) = context(client, &world, t0());
    let ctx = {
        let mut c = Arc::into_inner(ctx).unwrap();
        let clock = clock_at.clone();
        c.clock = Arc::new(move || *clock.lock().unwrap());
        Arc::new(c)
    };
    reconcile::reconcile(Arc::new(obj.clone()), ctx.clone())
        .await
        .unwrap();
    // The API server now holds what was written.
    let now_holds = |version: &str| {
        let status = written.lock().unwrap().clone();
        autoscaler(cpu_spec(json!({})), status, version)
    };
    *clock_at.lock().unwrap() = at(15);
    reconcile::reconcile(Arc::new(now_holds("11")), ctx.clone())
        .await
        .unwrap();
    *clock_at.lock().unwrap() = at(30);
    run(&now_holds("12"), ctx, server).await;
    assert_eq!(telemetry.requests(Call::PatchStatus), 1);
    assert_eq!(telemetry.requests(Call::ListPodMetrics), 3);
}

/// Preview computes and records, and never touches the workload; with specificReplicas it
/// holds the workload at that count.
#[tokio::test]
async fn preview_records_without_scaling_and_holds_specific_replicas() {
    let world = World::new().deployment(2);
    let obj = autoscaler(
        cpu_spec(json!({"scaleStrategy": "Preview"})),
        Value::Null,
        "3",
    );
    let steps = vec![
        Step::get(POD_METRICS, pod_metrics(2, "900m")),
        Step::apply_status(status_uri(), |b| {
            let s = &b["status"];
            assert_eq!(s["currentReplicas"], 2);
            // What Auto would do.
            assert_eq!(s["desiredReplicas"], 4);
            assert_eq!(s["lastScaleTime"], Value::Null);
            assert_eq!(s["lastDecision"]["strategy"], "Preview");
            let summary = s["lastDecision"]["summary"].as_str().unwrap();
            assert!(
                summary.starts_with("preview, not applied; would scale 2 -> 4"),
                "{summary}"
            );
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;

    let world = World::new().deployment(2);
    let obj = autoscaler(
        cpu_spec(json!({"scaleStrategy": "Preview", "specificReplicas": 5})),
        Value::Null,
        "3",
    );
    let steps = vec![
        Step::get(POD_METRICS, pod_metrics(2, "900m")),
        Step::merge_patch(format!("{DEPLOYMENT_SCALE}?"), |b| {
            assert_eq!(b, &json!({"spec": {"replicas": 5}}));
        })
        .answer(StatusCode::OK, scale_response(5)),
        Step::post(
            EVENTS,
            event_check(
                "Normal",
                "SuccessfulRescale",
                "Preview strategy holds specificReplicas",
            ),
        ),
        Step::apply_status(status_uri(), |b| {
            let s = &b["status"];
            assert_eq!(s["desiredReplicas"], 4);
            assert_eq!(s["lastScaleTime"], T0);
            let summary = s["lastDecision"]["summary"].as_str().unwrap();
            assert!(summary.contains("holding specificReplicas 5"), "{summary}");
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;
}

/// The resource metrics API fails: no scale-down on missing data, ScalingActive=False with
/// the reason, one warning event — and on the next sync, the same failure is neither
/// re-announced nor re-written.
#[tokio::test]
async fn a_failed_metrics_api_holds_and_is_reported_once() {
    let world = World::new().deployment(4);
    let obj = autoscaler(cpu_spec(json!({})), Value::Null, "20");
    let unavailable = || {
        Step::get(POD_METRICS, Value::Null).answer(
            StatusCode::SERVICE_UNAVAILABLE,
            api_error(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            ),
        )
    };
    let written = Arc::new(std::sync::Mutex::new(Value::Null));
    let keep = written.clone();
    let steps = vec![
        unavailable(),
        Step::post(
            EVENTS,
            event_check(
                "Warning",
                "FailedGetResourceMetric",
                "unable to fetch metrics from resource metrics API",
            ),
        ),
        // Kubernetes reports the failed metric, then the failed computation.
        Step::post(
            EVENTS,
            event_check(
                "Warning",
                "FailedComputeMetricsReplicas",
                "invalid metrics (1 invalid out of 1)",
            ),
        ),
        Step::apply_status(status_uri(), move |b| {
            let s = &b["status"];
            let active = condition(s, "ScalingActive");
            assert_eq!(active["status"], "False");
            assert_eq!(active["reason"], "FailedGetResourceMetric");
            assert!(active["message"]
                .as_str()
                .unwrap()
                .contains("the HPA was unable to compute the replica count"));
            assert_eq!(condition(s, "Ready")["status"], "False");
            assert_eq!(condition(s, "Ready")["reason"], "FailedGetResourceMetric");
            assert_eq!(s["currentReplicas"], 4);
            // Kubernetes keeps the previous desired count (none yet).
            assert_eq!(s["desiredReplicas"], Value::Null);
            *keep.lock().unwrap() = stored(b["status"].clone());
        }),
        // Second sync: the same failure.
        unavailable(),
    ];
    let (svc, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(serve(handle, steps));
    let (ctx, telemetry) = context(Client::new(svc, NS), &world, t0());
    reconcile::reconcile(Arc::new(obj), ctx.clone())
        .await
        .unwrap();
    let after = autoscaler(cpu_spec(json!({})), written.lock().unwrap().clone(), "21");
    run(&after, ctx, server).await;
    assert_eq!(telemetry.requests(Call::CreateEvent), 2);
    assert_eq!(telemetry.requests(Call::PatchScale), 0);
}

/// A field another manager wrote (an earlier version's merge patch) survives the apply; the
/// controller sees it in the stored object and clears exactly that field, once.
#[tokio::test]
async fn fields_left_by_another_writer_are_cleared_after_the_apply() {
    let world = World::new().deployment(2);
    let obj = autoscaler(cpu_spec(json!({})), Value::Null, "30");
    let left_over = |body: &Value| {
        let mut stored = json!({
            "apiVersion": "autoscaling.foresight.dev/v1alpha1",
            "kind": "EffectiveHorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {},
            "status": body["status"].clone(),
        });
        stored["status"]["fallback"] =
            json!({"failingSince": T0, "failedSyncs": 3, "active": true});
        stored
    };
    let steps = vec![
        Step::get(POD_METRICS, pod_metrics(2, "900m")),
        Step::merge_patch(format!("{DEPLOYMENT_SCALE}?"), |b| {
            assert_eq!(b, &json!({"spec": {"replicas": 4}}));
        })
        .answer(StatusCode::OK, scale_response(4)),
        Step::post(
            EVENTS,
            event_check("Normal", "SuccessfulRescale", "New size: 4"),
        ),
        Step::apply_status(status_uri(), |b| {
            assert_eq!(b["metadata"], json!({"name": "web"}));
            assert!(b["metadata"].get("resourceVersion").is_none());
            assert_eq!(b["status"]["desiredReplicas"], 4);
            assert!(b["status"].get("fallback").is_none());
        })
        .answer_with(left_over),
        Step::merge_patch(format!("{OBJECT}/status?"), |b| {
            assert_eq!(b, &json!({"status": {"fallback": null}}));
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;
}

/// After a restart the controller has no memory; the history in status brings back the
/// scale-up event of 30 s ago, and the 1-pod-per-60-s policy holds the count. Without that
/// history the same decision scales up.
#[tokio::test]
async fn a_restart_restores_rate_limits_from_status() {
    let behavior = json!({"behavior": {"scaleUp": {"stabilizationWindowSeconds": 0,
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}});
    let history = json!({
        "recommendations": [{"replicas": 3, "timestamp": "2026-06-01T11:59:30Z"}],
        "scaleUpEvents": [{"replicaChange": 1, "timestamp": "2026-06-01T11:59:30Z"}],
        "scaleDownEvents": []
    });
    let world = World::new().deployment(3);
    let obj = autoscaler(
        cpu_spec(behavior.clone()),
        json!({"history": history}),
        "40",
    );
    let steps = vec![
        Step::get(POD_METRICS, pod_metrics(3, "900m")),
        Step::apply_status(status_uri(), |b| {
            let s = &b["status"];
            assert_eq!(s["desiredReplicas"], 3);
            assert_eq!(condition(s, "ScalingLimited")["status"], "True");
            assert_eq!(condition(s, "ScalingLimited")["reason"], "ScaleUpLimit");
            // The event that limited us is still carried for the next restart.
            assert_eq!(s["history"]["scaleUpEvents"][0]["replicaChange"], 1);
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;

    // The control: the same object without the remembered event scales up by one.
    let world = World::new().deployment(3);
    let obj = autoscaler(cpu_spec(behavior), Value::Null, "40");
    let steps = vec![
        Step::get(POD_METRICS, pod_metrics(3, "900m")),
        Step::merge_patch(format!("{DEPLOYMENT_SCALE}?"), |b| {
            assert_eq!(b, &json!({"spec": {"replicas": 4}}));
        })
        .answer(StatusCode::OK, scale_response(4)),
        Step::post(
            EVENTS,
            event_check("Normal", "SuccessfulRescale", "New size: 4"),
        ),
        Step::apply_status(status_uri(), |b| {
            let s = &b["status"];
            assert_eq!(s["desiredReplicas"], 4);
            let up = s["history"]["scaleUpEvents"].as_array().unwrap();
            assert_eq!(up.len(), 1);
            assert_eq!(up[0]["timestamp"], T0);
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;
}

/// Two autoscalers on one Deployment both report it and neither scales.
#[tokio::test]
async fn two_autoscalers_on_one_workload_both_report_the_conflict() {
    let world = World::new().deployment(2);
    let a = autoscaler(cpu_spec(json!({})), Value::Null, "50");
    let mut b = a.clone();
    b.metadata.name = Some("web-2".into());
    let (svc, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let conflict = |name: &'static str, other: &'static str| {
        Step::apply_status(status_uri_of(name), move |body| {
            let active = condition(&body["status"], "ScalingActive");
            assert_eq!(active["status"], "False");
            assert_eq!(active["reason"], "AmbiguousSelector");
            assert!(
                active["message"].as_str().unwrap().contains(other),
                "{active}"
            );
        })
    };
    let event = |other: &'static str| {
        move |body: &Value| {
            assert_eq!(body["reason"], "AmbiguousSelector");
            assert!(body["note"].as_str().unwrap().contains(other));
        }
    };
    let failed = || {
        Step::post(EVENTS, |body: &Value| {
            assert_eq!(body["reason"], "FailedComputeMetricsReplicas");
        })
    };
    let steps = vec![
        // The first to sync sees no one else yet.
        Step::get(POD_METRICS, pod_metrics(2, "150m")),
        Step::apply_status(status_uri(), |_| {}),
        Step::post(EVENTS, event("shop/web")),
        failed(),
        conflict("web-2", "shop/web"),
        Step::post(EVENTS, event("shop/web-2")),
        failed(),
        conflict("web", "shop/web-2"),
    ];
    let server = tokio::spawn(serve(handle, steps));
    let (ctx, _) = context(Client::new(svc, NS), &world, t0());
    let ctx = {
        let mut c = Arc::into_inner(ctx).unwrap();
        let (store, mut writer) = reflector::store();
        writer.apply_watcher_event(&kube::runtime::watcher::Event::Apply(a.clone()));
        writer.apply_watcher_event(&kube::runtime::watcher::Event::Apply(b.clone()));
        c.store = store;
        Arc::new(c)
    };
    reconcile::reconcile(Arc::new(a.clone()), ctx.clone())
        .await
        .unwrap();
    reconcile::reconcile(Arc::new(b), ctx.clone())
        .await
        .unwrap();
    run(&a, ctx, server).await;
}

/// A formula metric's inputs are read from their APIs (here two External metrics) and the
/// core evaluates the formula over them: (60 + 20) / 2 = 40 over 2 replicas is 20 per replica
/// against 10, so 4 replicas, with the formula's value in status.
#[tokio::test]
async fn a_formula_metric_reads_its_inputs_and_scales_on_their_formula() {
    let world = World::new().deployment(2);
    let spec = json!({
        "minReplicas": 1, "maxReplicas": 10,
        "metrics": [{"type": "Formula", "formula": {
            "name": "composite",
            "formula": "(a + b) / 2",
            "inputs": [
                {"name": "a", "type": "External", "external": {"metric": {"name": "queue_a"}}},
                {"name": "b", "type": "External", "external": {"metric": {"name": "queue_b"}}}
            ],
            "target": {"type": "AverageValue", "averageValue": "10"}}}]
    });
    let obj = autoscaler(spec, Value::Null, "60");
    let external = |name: &str, value: &str| {
        json!({"kind": "ExternalMetricValueList", "apiVersion": "external.metrics.k8s.io/v1beta1",
               "metadata": {}, "items": [
                   {"metricName": name, "metricLabels": {}, "timestamp": T0, "value": value}]})
    };
    let steps = vec![
        Step::get(
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_a",
            external("queue_a", "60"),
        ),
        Step::get(
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_b",
            external("queue_b", "20"),
        ),
        Step::merge_patch(format!("{DEPLOYMENT_SCALE}?"), |b| {
            assert_eq!(b, &json!({"spec": {"replicas": 4}}));
        })
        .answer(StatusCode::OK, scale_response(4)),
        Step::post(
            EVENTS,
            event_check(
                "Normal",
                "SuccessfulRescale",
                "formula metric composite above target",
            ),
        ),
        Step::apply_status(status_uri(), |b| {
            let m = &b["status"]["currentMetrics"][0];
            assert_eq!(m["type"], "Formula", "{m}");
            assert_eq!(m["formula"]["name"], "composite");
            assert_eq!(m["formula"]["current"]["averageValue"], "20");
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;
}

/// Pods and Object metrics from custom.metrics.k8s.io/v1beta2 and an External metric from
/// external.metrics.k8s.io/v1beta1, requested with the paths and selectors Kubernetes'
/// metrics clients use; the largest proposal (the Pods metric's 4) wins.
#[tokio::test]
async fn custom_and_external_metrics_use_the_aggregated_api_paths() {
    let world = World::new().deployment(2);
    let spec = json!({
        "minReplicas": 1, "maxReplicas": 10,
        "metrics": [
            {"type": "Pods", "pods": {"metric": {"name": "http_requests"},
                "target": {"type": "AverageValue", "averageValue": "10"}}},
            {"type": "Object", "object": {
                "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main-route"},
                "metric": {"name": "requests_per_second"},
                "target": {"type": "Value", "value": "100"}}},
            {"type": "External", "external": {
                "metric": {"name": "queue_messages", "selector": {"matchLabels": {"queue": "jobs"}}},
                "target": {"type": "AverageValue", "averageValue": "30"}}}
        ]
    });
    let obj = autoscaler(spec, Value::Null, "60");
    let pod_value = |pod: &str, v: &str| {
        json!({"describedObject": {"kind": "Pod", "namespace": NS, "name": pod, "apiVersion": "/v1"},
               "metric": {"name": "http_requests"}, "timestamp": T0, "windowSeconds": 60, "value": v})
    };
    let steps = vec![
        Step::get(
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests?labelSelector=app%3Dweb",
            json!({"kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta2",
                   "metadata": {}, "items": [pod_value("web-0", "20"), pod_value("web-1", "20")]}),
        ),
        Step::get(
            "/apis/networking.k8s.io/v1",
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "networking.k8s.io/v1",
                   "resources": [{"name": "ingresses", "singularName": "ingress", "namespaced": true,
                                  "kind": "Ingress", "verbs": ["get", "list", "watch"]}]}),
        ),
        Step::get(
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages?labelSelector=queue%3Djobs",
            json!({"kind": "ExternalMetricValueList", "apiVersion": "external.metrics.k8s.io/v1beta1",
                   "metadata": {}, "items": [
                       {"metricName": "queue_messages", "metricLabels": {"queue": "jobs"},
                        "timestamp": T0, "value": "60"},
                       {"metricName": "queue_messages", "metricLabels": {"queue": "jobs"},
                        "timestamp": T0, "value": "30"}]}),
        ),
        Step::get(
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/ingresses.networking.k8s.io/main-route/requests_per_second",
            json!({"kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta2",
                   "metadata": {}, "items": [
                       {"describedObject": {"kind": "Ingress", "namespace": NS, "name": "main-route",
                                            "apiVersion": "networking.k8s.io/v1"},
                        "metric": {"name": "requests_per_second"}, "timestamp": T0, "value": "150"}]}),
        ),
        Step::merge_patch(format!("{DEPLOYMENT_SCALE}?"), |b| {
            assert_eq!(b, &json!({"spec": {"replicas": 4}}));
        })
        .answer(StatusCode::OK, scale_response(4)),
        Step::post(EVENTS, event_check("Normal", "SuccessfulRescale", "pods metric http_requests above target")),
        Step::apply_status(status_uri(), |b| {
            let m = &b["status"]["currentMetrics"];
            assert_eq!(m[0]["pods"]["current"]["averageValue"], "20");
            assert_eq!(m[1]["object"]["current"]["value"], "150");
            assert_eq!(m[2]["external"]["current"]["averageValue"], "45");
            let proposals = b["status"]["lastDecision"]["proposals"].as_array().unwrap();
            let replicas: Vec<&Value> = proposals.iter().map(|p| &p["replicas"]).collect();
            assert_eq!(replicas, [&json!(4), &json!(3), &json!(3)]);
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;
}

// ---------------------------------------------------------------------------------------
// Prometheus: `type: Prometheus` metrics and prediction, against a wiremock Prometheus.

const DAY: i64 = 86_400;
const RPS_QUERY: &str = r#"sum(rate(http_requests_total{namespace="shop",service="web"}[2m]))"#;
const RPS_HISTORY: &str = r#"sum(rate(http_requests_total{namespace="shop",service="web"}[5m]))"#;

/// Requests per second against 10 per replica, from Prometheus.
fn rps_spec(extra: Value) -> Value {
    let mut spec = json!({
        "minReplicas": 1, "maxReplicas": 20,
        "metrics": [{"type": "Prometheus", "prometheus": {"name": "requests",
            "query": RPS_QUERY, "historyQuery": RPS_HISTORY,
            "target": {"type": "AverageValue", "averageValue": "10"}}}]
    });
    if let (Value::Object(s), Value::Object(e)) = (&mut spec, extra) {
        s.extend(e);
    }
    spec
}

/// The same with prediction: a DSP forecast over 3 days of 1-minute history, the peak of
/// the next hour scaled for, and scale-up unlimited so the forecast shows whole.
fn predicted_rps_spec() -> Value {
    rps_spec(json!({
        "behavior": {"scaleUp": {"policies": [{"type": "Percent", "value": 1000, "periodSeconds": 15}]}},
        "prediction": {"predictionWindowSeconds": 3600, "horizon": "Window",
            "predictionAlgorithm": {"algorithmType": "dsp",
                "dsp": {"sampleInterval": "60s", "historyLength": "3d"}}}
    }))
}

/// The autoscaler as the controller compiles it, for driving the cache directly.
fn compiled(obj: &EffectiveHorizontalPodAutoscaler) -> Autoscaler {
    Autoscaler::new(NS, "web", &obj.spec, &ControllerConfig::default()).expect("a valid spec")
}

/// Prometheus' answer to an instant query: one series at `value`, evaluated at T0.
fn vector(value: &str) -> wiremock::ResponseTemplate {
    wiremock::ResponseTemplate::new(200).set_body_json(json!({
        "status": "success",
        "data": {"resultType": "vector",
                 "result": [{"metric": {}, "value": [t0().as_second(), value]}]}
    }))
}

/// The instant query of the requests metric, evaluated at T0, answered `value`; exactly once.
async fn serve_rps(server: &wiremock::MockServer, value: &str) {
    use wiremock::matchers::{method, path, query_param};
    wiremock::Mock::given(method("GET"))
        .and(path("/api/v1/query"))
        .and(query_param("query", RPS_QUERY))
        .and(query_param("time", format!("{}.000", t0().as_second())))
        .respond_with(vector(value))
        .expect(1)
        .mount(server)
        .await;
}

/// The history range query the DSP predictor asks for at T0: 3 days and its extra hour,
/// at 1-minute steps, ending at T0; exactly once.
fn history_request() -> wiremock::MockBuilder {
    use wiremock::matchers::{method, path, query_param};
    let end = t0().as_second();
    let start = end - 3 * DAY - 3600;
    wiremock::Mock::given(method("GET"))
        .and(path("/api/v1/query_range"))
        .and(query_param("query", RPS_HISTORY))
        .and(query_param("start", start.to_string()))
        .and(query_param("end", end.to_string()))
        .and(query_param("step", "60"))
}

/// Requests per second over the history: 20 all day, 80 for an hour every day starting 30
/// minutes after T0, like a daily batch; as a range-query answer.
fn daily_history() -> wiremock::ResponseTemplate {
    let end = t0().as_second();
    let start = end - 3 * DAY - 3600;
    let values: Vec<Value> = (start..=end)
        .step_by(60)
        .map(|t| {
            let phase = (t - (end + 1800)).rem_euclid(DAY);
            let rps = if phase < 3600 { 80 } else { 20 };
            json!([t, rps.to_string()])
        })
        .collect();
    wiremock::ResponseTemplate::new(200).set_body_json(json!({
        "status": "success",
        "data": {"resultType": "matrix", "result": [{"metric": {}, "values": values}]}
    }))
}

/// A client of `server` and a forecast cache over it, with the controller's predictor.
fn prometheus(server: &wiremock::MockServer) -> (PrometheusClient, ForecastCache) {
    let client = PrometheusClient::new(&server.uri(), PrometheusOptions::default())
        .expect("a Prometheus client");
    let cache = ForecastCache::new(
        client.clone(),
        Arc::new(CorePredictor),
        ForecastSettings::default(),
    );
    (client, cache)
}

/// Runs one reconcile of `obj` against `steps` with `prometheus`; returns the telemetry.
async fn reconcile_with_prometheus(
    obj: &EffectiveHorizontalPodAutoscaler,
    world: &World,
    prometheus: (PrometheusClient, ForecastCache),
    steps: Vec<Step>,
) -> Arc<Telemetry> {
    let (svc, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(serve(handle, steps));
    let (ctx, telemetry) = context_with(Client::new(svc, NS), world, t0(), Some(prometheus));
    run(obj, ctx, server).await;
    telemetry
}

/// A `type: Prometheus` metric is read with one instant query at the time of the sync: 35
/// requests/s over 2 replicas against 10 per replica scales to 4, with exactly the
/// Kubernetes requests of any scale-up (no metrics API is asked).
#[tokio::test]
async fn a_prometheus_metric_is_queried_and_scales_the_workload() {
    let prom = wiremock::MockServer::start().await;
    serve_rps(&prom, "35").await;
    let world = World::new().deployment(2);
    let obj = autoscaler(rps_spec(json!({})), Value::Null, "70");
    let steps = vec![
        Step::merge_patch(format!("{DEPLOYMENT_SCALE}?"), |b| {
            assert_eq!(b, &json!({"spec": {"replicas": 4}}));
        })
        .answer(StatusCode::OK, scale_response(4)),
        Step::post(
            EVENTS,
            event_check("Normal", "SuccessfulRescale", "New size: 4"),
        ),
        Step::apply_status(status_uri(), |b| {
            let s = &b["status"];
            assert_eq!(s["desiredReplicas"], 4);
            assert_eq!(condition(s, "ScalingActive")["status"], "True");
            let m = &s["currentMetrics"][0];
            assert_eq!(m["type"], "Prometheus");
            assert_eq!(m["prometheus"]["name"], "requests");
            // 35 requests/s over 2 replicas.
            assert_eq!(m["prometheus"]["current"]["averageValue"], "17500m");
            assert_eq!(s["lastDecision"]["recommendation"], 4);
            // Prediction is off: no PredictionReady condition.
            let conditions = s["conditions"].as_array().unwrap();
            assert!(conditions.iter().all(|c| c["type"] != "PredictionReady"));
        }),
    ];
    let (client, cache) = prometheus(&prom);
    let telemetry = reconcile_with_prometheus(&obj, &world, (client, cache.clone()), steps).await;
    prom.verify().await;
    // Prediction off: the cache tracks nothing for it.
    assert_eq!(cache.stats().entries, 0);
    let metrics = telemetry.encode();
    assert!(
        metrics.contains(r#"foresight_prometheus_requests_total{endpoint="query"} 1"#),
        "{metrics}"
    );
    assert!(
        !metrics.contains("foresight_prometheus_query_errors_total{"),
        "{metrics}"
    );
}

/// Without `--prometheus-url`: the `type: Prometheus` metric fails with how to configure it
/// (ScalingActive says so, and the Resource metric alone may not scale down), and
/// prediction is not ready for the same reason — nothing is silent.
#[tokio::test]
async fn without_prometheus_the_metric_fails_and_prediction_says_how_to_configure_it() {
    let world = World::new().deployment(4);
    let mut spec = predicted_rps_spec();
    spec["metrics"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}}));
    let obj = autoscaler(spec, Value::Null, "80");
    let steps = vec![
        // 4 pods at 20% of their request: CPU alone would scale down to 2.
        Step::get(POD_METRICS, pod_metrics(4, "100m")),
        Step::post(
            EVENTS,
            event_check(
                "Warning",
                "FailedGetPrometheusMetric",
                "start the controller with --prometheus-url",
            ),
        ),
        // As Kubernetes does: the failed metric stops the scale-down the CPU asks for.
        Step::post(
            EVENTS,
            event_check(
                "Warning",
                "FailedComputeMetricsReplicas",
                "invalid metrics (1 invalid out of 2)",
            ),
        ),
        Step::apply_status(status_uri(), |b| {
            let s = &b["status"];
            // No scale-down on partial data: the script has no scale request, and Kubernetes
            // keeps the previous desired count (none yet).
            assert_eq!(s["currentReplicas"], 4);
            assert_eq!(s["desiredReplicas"], Value::Null);
            let active = condition(s, "ScalingActive");
            assert_eq!(active["status"], "False", "{active}");
            assert_eq!(active["reason"], "FailedGetPrometheusMetric", "{active}");
            assert!(
                active["message"]
                    .as_str()
                    .unwrap()
                    .contains("start the controller with --prometheus-url"),
                "{active}"
            );
            let predicted = condition(s, "PredictionReady");
            assert_eq!(predicted["status"], "False");
            assert_eq!(predicted["reason"], "PredictNotReady");
            let message = predicted["message"].as_str().unwrap();
            assert!(
                message.contains(
                    "prometheus.requests: no Prometheus configured: start the controller with --prometheus-url"
                ),
                "{message}"
            );
        }),
    ];
    reconcile_once(&obj, &world, t0(), steps).await;
}

/// Prediction from a wiremock Prometheus: 3 days of daily-periodic requests feed the DSP
/// predictor (through the cache's awaitable refresh); the reconcile then answers from the
/// cache, reports PredictionReady=True, and scales for the peak due within the hour while
/// the observed 20 requests/s alone would keep 2 replicas. The reconcile asks Prometheus
/// nothing more than the instant query: the forecast is fresh.
#[tokio::test]
async fn a_forecast_peak_scales_up_before_the_load_arrives() {
    let prom = wiremock::MockServer::start().await;
    serve_rps(&prom, "20").await;
    history_request()
        .respond_with(daily_history())
        .expect(1)
        .mount(&prom)
        .await;
    let world = World::new().deployment(2);
    let obj = autoscaler(predicted_rps_spec(), Value::Null, "90");
    let (client, cache) = prometheus(&prom);
    let forecasts = cache.refresh(&compiled(&obj), t0()).await;
    let ForecastInput::Ready(forecast) = &forecasts[0] else {
        panic!("expected a forecast, got {forecasts:?}");
    };
    let (_, peak) = forecast
        .peak_in(t0().as_second(), t0().as_second() + 3600)
        .expect("the forecast covers the window");
    assert_eq!(forecast.period_seconds, Some(DAY), "{}", forecast.estimator);
    // The peak over 10 requests/s per replica.
    let expected = (peak / 10.0).ceil() as i64;
    assert!(expected >= 5, "peak {peak}");
    let steps = vec![
        Step::merge_patch(format!("{DEPLOYMENT_SCALE}?"), move |b| {
            assert_eq!(b, &json!({"spec": {"replicas": expected}}));
        })
        .answer(StatusCode::OK, scale_response(expected as i32)),
        Step::post(EVENTS, move |b: &Value| {
            assert_eq!(b["reason"], "SuccessfulRescale");
            let note = b["note"].as_str().unwrap_or_default();
            assert!(note.contains(&format!("New size: {expected}")), "{note}");
        }),
        Step::apply_status(status_uri(), move |b| {
            let s = &b["status"];
            let predicted = condition(s, "PredictionReady");
            assert_eq!(predicted["status"], "True", "{predicted}");
            assert_eq!(predicted["reason"], "PredictSucceed");
            assert!(
                predicted["message"]
                    .as_str()
                    .unwrap()
                    .contains("prometheus.requests (dsp, daily period)"),
                "{predicted}"
            );
            assert_eq!(s["desiredReplicas"], expected);
            let proposals = s["lastDecision"]["proposals"].as_array().unwrap();
            let by_source = |source: &str| {
                proposals
                    .iter()
                    .find(|p| p["source"] == source)
                    .unwrap_or_else(|| panic!("no {source} proposal in {proposals:?}"))
            };
            // The observed metric alone: 20 requests/s over 2 replicas is on target.
            assert_eq!(by_source("metric")["replicas"], 2);
            assert_eq!(by_source("prediction")["replicas"], expected);
        }),
    ];
    let telemetry = reconcile_with_prometheus(&obj, &world, (client, cache.clone()), steps).await;
    prom.verify().await;
    let stats = cache.stats();
    assert_eq!((stats.started, stats.succeeded, stats.failed), (1, 1, 0));
    let metrics = telemetry.encode();
    for line in [
        r#"foresight_prometheus_requests_total{endpoint="query"} 1"#,
        r#"foresight_prometheus_requests_total{endpoint="query_range"} 1"#,
        r#"foresight_forecast_refreshes_total{outcome="ready"} 1"#,
        r#"foresight_forecast_refreshes_total{outcome="failed"} 0"#,
        "foresight_forecast_refreshes_in_flight 0",
        r#"foresight_forecasts{state="ready"} 1"#,
        r#"foresight_forecasts{state="failed"} 0"#,
    ] {
        assert!(metrics.contains(line), "no {line:?} in\n{metrics}");
    }
}

/// Prometheus answers the history query with 503: PredictionReady=False with Prometheus'
/// error, and the observed metric decides alone (30 requests/s over 2 replicas: 3).
#[tokio::test]
async fn a_failing_history_demotes_prediction_and_the_observed_metric_decides() {
    let prom = wiremock::MockServer::start().await;
    serve_rps(&prom, "30").await;
    history_request()
        .respond_with(wiremock::ResponseTemplate::new(503).set_body_string("overloaded"))
        .expect(1)
        .mount(&prom)
        .await;
    let world = World::new().deployment(2);
    let obj = autoscaler(predicted_rps_spec(), Value::Null, "100");
    let (client, cache) = prometheus(&prom);
    let forecasts = cache.refresh(&compiled(&obj), t0()).await;
    assert!(
        matches!(&forecasts[0], ForecastInput::Failed(e) if e.contains("HTTP 503")),
        "{forecasts:?}"
    );
    let steps = vec![
        Step::merge_patch(format!("{DEPLOYMENT_SCALE}?"), |b| {
            assert_eq!(b, &json!({"spec": {"replicas": 3}}));
        })
        .answer(StatusCode::OK, scale_response(3)),
        Step::post(
            EVENTS,
            event_check("Normal", "SuccessfulRescale", "New size: 3"),
        ),
        Step::apply_status(status_uri(), |b| {
            let s = &b["status"];
            assert_eq!(s["desiredReplicas"], 3);
            let predicted = condition(s, "PredictionReady");
            assert_eq!(predicted["status"], "False");
            assert_eq!(predicted["reason"], "PredictFailed");
            let message = predicted["message"].as_str().unwrap();
            assert!(
                message.starts_with("no forecast in use, scaling on observed metrics: prometheus.requests: history unavailable: Prometheus at ")
                    && message.contains("answered HTTP 503: overloaded"),
                "{message}"
            );
            assert_eq!(condition(s, "ScalingActive")["status"], "True");
        }),
    ];
    let telemetry = reconcile_with_prometheus(&obj, &world, (client, cache), steps).await;
    prom.verify().await;
    let metrics = telemetry.encode();
    for line in [
        r#"foresight_prometheus_query_errors_total{endpoint="query_range",kind="http"} 1"#,
        r#"foresight_forecast_refreshes_total{outcome="failed"} 1"#,
        r#"foresight_forecasts{state="failed"} 1"#,
    ] {
        assert!(metrics.contains(line), "no {line:?} in\n{metrics}");
    }
}

/// A new autoscaler with prediction: the reconcile does not wait for the history (here
/// answered after 3 s); it decides on the observed metric with PredictionReady=False
/// ("first forecast not computed yet") while the refresh runs in the background, and the
/// refresh it started then produces the forecast.
#[tokio::test]
async fn the_reconcile_never_waits_for_a_forecast() {
    let prom = wiremock::MockServer::start().await;
    serve_rps(&prom, "20").await;
    history_request()
        .respond_with(daily_history().set_delay(Duration::from_secs(3)))
        .expect(1)
        .mount(&prom)
        .await;
    let world = World::new().deployment(2);
    let obj = autoscaler(predicted_rps_spec(), Value::Null, "110");
    let steps = vec![Step::apply_status(status_uri(), |b| {
        let s = &b["status"];
        assert_eq!(s["desiredReplicas"], 2);
        let predicted = condition(s, "PredictionReady");
        assert_eq!(predicted["status"], "False");
        assert_eq!(predicted["reason"], "PredictNotReady");
        assert!(
            predicted["message"]
                .as_str()
                .unwrap()
                .contains("first forecast not computed yet"),
            "{predicted}"
        );
    })];
    let (client, cache) = prometheus(&prom);
    let started = std::time::Instant::now();
    reconcile_with_prometheus(&obj, &world, (client, cache.clone()), steps).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the reconcile waited for the history"
    );
    assert_eq!(cache.stats().succeeded, 0);
    // `refresh` waits for the refresh the reconcile started instead of starting another.
    let forecasts = cache.refresh(&compiled(&obj), t0()).await;
    assert!(
        matches!(&forecasts[0], ForecastInput::Ready(_)),
        "{forecasts:?}"
    );
    prom.verify().await;
    assert_eq!(cache.stats().started, 1);
}

/// Prediction turned off (a new generation without it): the reconcile forgets the
/// autoscaler's forecasts, so /metrics no longer counts them, and removes PredictionReady.
#[tokio::test]
async fn turning_prediction_off_forgets_the_forecasts() {
    let prom = wiremock::MockServer::start().await;
    serve_rps(&prom, "20").await;
    history_request()
        .respond_with(daily_history())
        .expect(1)
        .mount(&prom)
        .await;
    let world = World::new().deployment(2);
    let predicted = autoscaler(predicted_rps_spec(), Value::Null, "120");
    let (client, cache) = prometheus(&prom);
    let forecasts = cache.refresh(&compiled(&predicted), t0()).await;
    assert!(
        matches!(&forecasts[0], ForecastInput::Ready(_)),
        "{forecasts:?}"
    );
    assert_eq!(cache.stats().entries, 1);
    let mut off = autoscaler(
        rps_spec(json!({})),
        json!({"observedGeneration": 1, "currentReplicas": 2, "desiredReplicas": 2,
               "conditions": [{"type": "PredictionReady", "status": "True",
                               "reason": "PredictSucceed", "message": "forecasts in use",
                               "lastTransitionTime": "2026-06-01T11:00:00Z"}]}),
        "121",
    );
    off.metadata.generation = Some(2);
    let steps = vec![Step::apply_status(status_uri(), |b| {
        let s = &b["status"];
        assert_eq!(s["observedGeneration"], 2);
        let conditions = s["conditions"].as_array().unwrap();
        assert!(
            conditions.iter().all(|c| c["type"] != "PredictionReady"),
            "{s}"
        );
    })];
    let telemetry = reconcile_with_prometheus(&off, &world, (client, cache.clone()), steps).await;
    prom.verify().await;
    assert_eq!(cache.stats().entries, 0);
    let metrics = telemetry.encode();
    assert!(
        metrics.contains(r#"foresight_forecasts{state="ready"} 0"#),
        "{metrics}"
    );
}

/// A deleted autoscaler is forgotten by every store that kept something of it: its memory,
/// its per-autoscaler series, its place in the queue; the others keep theirs.
#[tokio::test]
async fn a_deleted_autoscaler_is_forgotten_everywhere() {
    let world = World::new().deployment(5);
    let web = autoscaler(cpu_spec(json!({})), Value::Null, "10");
    let mut api = web.clone();
    api.metadata.name = Some("api".into());
    let steps = vec![
        // 5 pods at 60% of request against 60%: both hold at 5.
        Step::get(POD_METRICS, pod_metrics(5, "300m")),
        Step::apply_status(status_uri(), |_| {}),
        Step::get(POD_METRICS, pod_metrics(5, "300m")),
        Step::apply_status(status_uri_of("api"), |_| {}),
    ];
    let (svc, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(serve(handle, steps));
    let (ctx, telemetry) = context(Client::new(svc, NS), &world, t0());
    for obj in [&web, &api] {
        reconcile::reconcile(Arc::new(obj.clone()), ctx.clone())
            .await
            .unwrap();
    }
    assert_eq!(ctx.memories.len(), 2);
    assert_eq!(telemetry.autoscalers.len(), 2);
    let series = |name: &str| {
        telemetry
            .encode()
            .lines()
            .filter(|l| l.contains(&format!("name=\"{name}\"")))
            .count()
    };
    assert!(series("web") > 0);

    ctx.forget(&AutoscalerKey::new("shop", "web"));
    assert_eq!(ctx.memories.len(), 1);
    assert_eq!(telemetry.autoscalers.len(), 1);
    assert_eq!(series("web"), 0, "{}", telemetry.encode());
    assert!(series("api") > 0);

    // A full list that shows neither forgets the other too.
    ctx.retain(&|_| false);
    assert!(ctx.memories.is_empty());
    assert!(telemetry.autoscalers.is_empty());
    assert_eq!(series("api"), 0);
    drop(ctx);
    server.await.unwrap();
}
