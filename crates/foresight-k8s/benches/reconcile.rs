//! One 15-second sync of 10,000 autoscalers in 100 namespaces, through the real reconcile
//! path, against an in-process fake Kubernetes API (a tower service behind `kube::Client`)
//! that answers every request after 5 ms.
//!
//! Reports API requests per autoscaler per sync (first sync, steady state, and steady state
//! with metric readings that move every sync), CPU time and peak RSS; criterion times the
//! steady-state sync.
//!
//! Run: `cargo bench -p foresight-k8s --bench reconcile`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use foresight_api::EffectiveHorizontalPodAutoscaler;
use foresight_core::proposals::Scale;
use foresight_k8s::conflicts::TargetIndex;
use foresight_k8s::events::EventPublisher;
use foresight_k8s::pods::PodCache;
use foresight_k8s::reconcile::{self, Memories, ReconcileContext, ReconcileSettings};
use foresight_k8s::sources::MetricSources;
use foresight_k8s::target::{ScaleClient, WorkloadCache, WorkloadKind};
use foresight_k8s::telemetry::Telemetry;
use futures::StreamExt;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::client::Body;
use kube::runtime::reflector;
use kube::Client;
use serde_json::{json, Value};

const NAMESPACES: usize = 100;
const PER_NAMESPACE: usize = 100;
const PODS_PER_WORKLOAD: usize = 3;
const LATENCY: Duration = Duration::from_millis(5);
const CONCURRENCY: usize = 64;
/// PodMetrics lists are shared this long; the bench waits it out between syncs, as 15 s of
/// a real sync period would.
const METRICS_MAX_AGE: Duration = Duration::from_millis(1500);

/// The fake API's state: what it was asked, and the statuses written to it.
#[derive(Default)]
struct FakeApi {
    requests: Mutex<HashMap<&'static str, u64>>,
    total: AtomicU64,
    /// Statuses written since the bench last looked.
    statuses: Mutex<HashMap<(String, String), Value>>,
    /// CPU usage each pod reports, in millicores.
    cpu_milli: AtomicU64,
}

impl FakeApi {
    fn count(&self, kind: &'static str) {
        self.total.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut m) = self.requests.lock() {
            *m.entry(kind).or_default() += 1;
        }
    }

    fn reset(&self) {
        self.total.store(0, Ordering::Relaxed);
        if let Ok(mut m) = self.requests.lock() {
            m.clear();
        }
    }

    fn pod_metrics(&self, ns: &str) -> Value {
        let cpu = format!("{}m", self.cpu_milli.load(Ordering::Relaxed));
        let mut items = Vec::with_capacity(PER_NAMESPACE * PODS_PER_WORKLOAD);
        for i in 0..PER_NAMESPACE {
            for k in 0..PODS_PER_WORKLOAD {
                items.push(json!({
                    "metadata": {"name": format!("app-{i}-{k}"), "namespace": ns,
                                 "labels": {"app": format!("app-{i}")}},
                    "timestamp": "2026-06-01T12:00:00Z", "window": "30s",
                    "containers": [{"name": "app", "usage": {"cpu": cpu, "memory": "64Mi"}}]
                }));
            }
        }
        json!({"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
               "metadata": {}, "items": items})
    }

    async fn handle(self: Arc<Self>, req: Request<Body>) -> Response<Body> {
        tokio::time::sleep(LATENCY).await;
        let path = req.uri().path().to_owned();
        let method = req.method().clone();
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (status, body) = match (&method, parts.as_slice()) {
            (&Method::GET, ["apis", "metrics.k8s.io", "v1beta1", "namespaces", ns, "pods"]) => {
                self.count("list_pod_metrics");
                (StatusCode::OK, self.pod_metrics(ns))
            }
            (
                &Method::PATCH,
                ["apis", "autoscaling.foresight.dev", "v1alpha1", "namespaces", ns, "effectivehorizontalpodautoscalers", name, "status"],
            ) => {
                self.count("patch_status");
                let (ns, name) = (ns.to_string(), name.to_string());
                let bytes = req
                    .into_body()
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let patch: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                // The API server answers with the object it stored.
                let answer = json!({
                    "apiVersion": "autoscaling.foresight.dev/v1alpha1",
                    "kind": "EffectiveHorizontalPodAutoscaler",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": {},
                });
                // Apply semantics: the status this manager sent is the status stored.
                if let Ok(mut m) = self.statuses.lock() {
                    m.insert((ns, name), patch["status"].clone());
                }
                (StatusCode::OK, answer)
            }
            (&Method::PATCH, [.., "scale"]) => {
                self.count("patch_scale");
                (
                    StatusCode::OK,
                    json!({"kind": "Scale", "apiVersion": "autoscaling/v1"}),
                )
            }
            (&Method::POST, [.., "events"]) => {
                self.count("create_event");
                (StatusCode::CREATED, json!({}))
            }
            _ => {
                self.count("other");
                (
                    StatusCode::NOT_FOUND,
                    json!({"kind": "Status", "code": 404, "message": path}),
                )
            }
        };
        let mut resp = Response::new(Body::from(serde_json::to_vec(&body).unwrap_or_default()));
        *resp.status_mut() = status;
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        resp
    }
}

struct Bench {
    api: Arc<FakeApi>,
    ctx: Arc<ReconcileContext>,
    clock: Arc<Mutex<Timestamp>>,
    objects: Vec<EffectiveHorizontalPodAutoscaler>,
}

fn setup(status_refresh: Duration) -> Bench {
    let api = Arc::new(FakeApi::default());
    api.cpu_milli.store(300, Ordering::Relaxed);
    let svc_api = api.clone();
    let svc = tower::service_fn(move |req: Request<Body>| {
        let api = svc_api.clone();
        async move { Ok::<_, std::convert::Infallible>(api.handle(req).await) }
    });
    let client = Client::new(svc, "default");

    let pods = Arc::new(PodCache::new());
    let workloads = Arc::new(WorkloadCache::new(&[WorkloadKind::Deployment]));
    let mut objects = Vec::with_capacity(NAMESPACES * PER_NAMESPACE);
    for n in 0..NAMESPACES {
        let ns = format!("ns-{n}");
        for i in 0..PER_NAMESPACE {
            let app = format!("app-{i}");
            workloads.apply(
                WorkloadKind::Deployment,
                &ns,
                &app,
                Scale {
                    spec_replicas: PODS_PER_WORKLOAD as i32,
                    status_replicas: PODS_PER_WORKLOAD as i32,
                    selector: format!("app={app}"),
                },
            );
            for k in 0..PODS_PER_WORKLOAD {
                let pod: Pod = serde_json::from_value(json!({
                    "metadata": {"namespace": ns, "name": format!("{app}-{k}"), "labels": {"app": app}},
                    "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}]},
                    "status": {"phase": "Running", "startTime": "2026-06-01T10:00:00Z",
                               "conditions": [{"type": "Ready", "status": "True",
                                               "lastTransitionTime": "2026-06-01T10:00:30Z"}]}
                }))
                .expect("pod fixture");
                pods.apply(&pod);
            }
            objects.push(
                serde_json::from_value::<EffectiveHorizontalPodAutoscaler>(json!({
                    "metadata": {"name": app, "namespace": ns, "resourceVersion": "1", "generation": 1},
                    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": app},
                             "minReplicas": 1, "maxReplicas": 20,
                             "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                 "target": {"type": "Utilization", "averageUtilization": 60}}}]}
                }))
                .expect("autoscaler fixture"),
            );
        }
    }
    pods.mark_ready();
    workloads.mark_ready(WorkloadKind::Deployment);

    let clock = Arc::new(Mutex::new(
        "2026-06-01T12:00:00Z".parse::<Timestamp>().expect("time"),
    ));
    let scales = Arc::new(ScaleClient::new(client.clone(), workloads));
    let (store, _writer) = reflector::store();
    let settings = ReconcileSettings {
        status_refresh,
        metrics_max_age: METRICS_MAX_AGE,
        ..ReconcileSettings::default()
    };
    let c = clock.clone();
    let ctx = Arc::new(ReconcileContext {
        client: client.clone(),
        pods,
        sources: MetricSources::new(client.clone(), scales.clone(), settings.metrics_max_age),
        // No Prometheus: the steady-state request count is that of the Kubernetes APIs alone.
        forecasts: None,
        scales,
        settings,
        events: EventPublisher::new(client, Some("bench".into())),
        telemetry: Arc::new(Telemetry::default()),
        memories: Memories::default(),
        targets: TargetIndex::new(),
        store,
        clock: Arc::new(move || *c.lock().expect("clock")),
        decision_errors: Default::default(),
        reconcile_errors: Default::default(),
        permits: tokio::sync::Semaphore::new(CONCURRENCY),
    });
    Bench {
        api,
        ctx,
        clock,
        objects,
    }
}

impl Bench {
    /// One sync of every autoscaler at `offset` seconds; returns API requests made.
    async fn sync(&mut self, offset: i64) -> u64 {
        tokio::time::sleep(METRICS_MAX_AGE).await;
        *self.clock.lock().expect("clock") = "2026-06-01T12:00:00Z"
            .parse::<Timestamp>()
            .expect("time")
            .checked_add(jiff::SignedDuration::from_secs(offset))
            .expect("time");
        self.api.reset();
        let ctx = self.ctx.clone();
        futures::stream::iter(self.objects.iter().cloned())
            .for_each_concurrent(CONCURRENCY, |obj| {
                let ctx = ctx.clone();
                async move {
                    // A failed reconcile would time an error path, not a sync.
                    reconcile::reconcile(Arc::new(obj), ctx)
                        .await
                        .expect("a reconcile against the fake API succeeds");
                }
            })
            .await;
        self.api.total.load(Ordering::Relaxed)
    }

    /// Gives the objects what the API server now holds, as the watch would (outside the
    /// timed sync: this is the fake API's work, not the controller's).
    fn apply_written_statuses(&mut self) {
        let written = std::mem::take(&mut *self.api.statuses.lock().expect("statuses"));
        if written.is_empty() {
            return;
        }
        for obj in &mut self.objects {
            let key = (
                obj.metadata.namespace.clone().unwrap_or_default(),
                obj.metadata.name.clone().unwrap_or_default(),
            );
            if let Some(s) = written.get(&key) {
                obj.status = serde_json::from_value(s.clone()).ok();
            }
        }
    }

    fn breakdown(&self) -> String {
        let m = self.api.requests.lock().expect("requests");
        let mut v: Vec<_> = m.iter().map(|(k, n)| format!("{k}={n}")).collect();
        v.sort();
        v.join(" ")
    }
}

#[allow(unsafe_code)]
fn cpu_and_peak_rss() -> (Duration, u64) {
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    (tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_maxrss as u64)
}

fn report(runtime: &tokio::runtime::Runtime) {
    // kube's client spawns its request buffer on the current runtime.
    let _guard = runtime.enter();
    let n = (NAMESPACES * PER_NAMESPACE) as f64;
    let (cpu0, _) = cpu_and_peak_rss();
    let mut b = setup(Duration::from_secs(120));
    let (cpu_setup, rss_setup) = cpu_and_peak_rss();
    println!(
        "world: {} autoscalers in {NAMESPACES} namespaces, {} pods; fake API latency {LATENCY:?}; \
         concurrency {CONCURRENCY}; setup CPU {:.2?}, peak RSS after setup {} MiB",
        n as u64,
        b.ctx.pods.len(),
        cpu_setup - cpu0,
        rss_setup / 1024
    );
    let line = |label: &str, b: &mut Bench, offset: i64| {
        let (c0, _) = cpu_and_peak_rss();
        let wall = Instant::now();
        let requests = runtime.block_on(b.sync(offset));
        let wall = wall.elapsed().saturating_sub(METRICS_MAX_AGE);
        let (c1, rss) = cpu_and_peak_rss();
        b.apply_written_statuses();
        println!(
            "{label}: {requests} requests = {:.4} per autoscaler per sync [{}]; \
             wall {wall:.2?}; CPU {:.2?}; peak RSS {} MiB",
            requests as f64 / n,
            b.breakdown(),
            c1 - c0,
            rss / 1024
        );
    };
    line("sync 1 (first sight: every status written)", &mut b, 0);
    line("sync 2 (steady state)", &mut b, 15);
    line("sync 3 (steady state)", &mut b, 30);
    // Readings that move every sync, inside the tolerance: the decision is unchanged, and
    // the readings in status are refreshed once per --status-refresh-interval (120 s here).
    let mut moving = 0u64;
    let syncs = 8;
    for k in 0..syncs {
        b.api
            .cpu_milli
            .store(if k % 2 == 0 { 290 } else { 310 }, Ordering::Relaxed);
        moving += runtime.block_on(b.sync(45 + 15 * k));
        b.apply_written_statuses();
    }
    println!(
        "moving readings, {syncs} syncs over {} s: {moving} requests = {:.4} per autoscaler per sync",
        syncs * 15,
        moving as f64 / n / syncs as f64
    );
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    report(&runtime);
    let _guard = runtime.enter();
    let mut b = setup(Duration::from_secs(120));
    runtime.block_on(b.sync(0));
    b.apply_written_statuses();
    let mut offset = 0;
    let mut group = c.benchmark_group("reconcile");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    group.bench_function("steady-state sync of 10,000 autoscalers", |bench| {
        bench.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                offset += 15;
                let start = Instant::now();
                runtime.block_on(b.sync(offset));
                b.apply_written_statuses();
                // The wait for the shared PodMetrics list to age is not part of a sync.
                total += start.elapsed().saturating_sub(METRICS_MAX_AGE);
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
