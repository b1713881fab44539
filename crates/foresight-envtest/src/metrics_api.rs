//! A test metrics server for the aggregation layer: `metrics.k8s.io/v1beta1` PodMetrics,
//! `custom.metrics.k8s.io/v1beta2` Pods and Object metrics, `external.metrics.k8s.io/v1beta1`
//! values. The test sets the load; the server answers with what the real servers would report
//! for the pods that exist and are ready now, so the native HPA and Foresight read the same
//! numbers through the same API server.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use serde_json::{json, Value};

/// The three aggregated API groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// `metrics.k8s.io`.
    Resource,
    /// `custom.metrics.k8s.io`.
    Custom,
    /// `external.metrics.k8s.io`.
    External,
}

impl Group {
    /// The API group.
    pub fn name(self) -> &'static str {
        match self {
            Group::Resource => "metrics.k8s.io",
            Group::Custom => "custom.metrics.k8s.io",
            Group::External => "external.metrics.k8s.io",
        }
    }

    /// The version served.
    pub fn version(self) -> &'static str {
        match self {
            Group::Custom => "v1beta2",
            _ => "v1beta1",
        }
    }

    /// Every group.
    pub const ALL: [Group; 3] = [Group::Resource, Group::Custom, Group::External];
}

/// How a metric's value is spread over the pods a rule selects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Load {
    /// The total over the selected ready pods, split evenly (a service whose traffic is shared
    /// by its replicas: more replicas, less each).
    Total(f64),
    /// The same value for every selected pod.
    PerPod(f64),
}

#[derive(Clone, Debug)]
struct Rule {
    namespace: String,
    labels: BTreeMap<String, String>,
    metric: String,
    load: Load,
}

/// What the server reports, set by the test.
#[derive(Debug, Default)]
pub struct MetricsState {
    /// Pod rules: `cpu` (millicores) for PodMetrics, any other name for custom Pods metrics.
    rules: Vec<Rule>,
    /// Object metrics: (namespace, `resource/name`, metric) → value.
    objects: HashMap<(String, String, String), f64>,
    /// External metrics: (namespace, metric) → value.
    external: HashMap<(String, String), f64>,
    /// Groups that answer every data request with this status.
    faults: HashMap<Group, u16>,
    /// Data requests served, per group.
    served: HashMap<Group, u64>,
}

/// The handle a test holds to steer the metrics server.
#[derive(Clone, Debug, Default)]
pub struct Metrics(Arc<Mutex<MetricsState>>);

impl Metrics {
    fn with<R>(&self, f: impl FnOnce(&mut MetricsState) -> R) -> R {
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Sets a pod metric for the pods of `namespace` carrying every label of `labels`
    /// (`cpu` is millicores in PodMetrics; other names are custom Pods metrics).
    pub fn set_pods(&self, namespace: &str, labels: &[(&str, &str)], metric: &str, load: Load) {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.with(|s| {
            s.rules.retain(|r| {
                !(r.namespace == namespace && r.labels == labels && r.metric == metric)
            });
            s.rules.push(Rule {
                namespace: namespace.to_owned(),
                labels,
                metric: metric.to_owned(),
                load,
            });
        });
    }

    /// Sets the CPU load (millicores) of the pods labelled `app=<app>` in `namespace`.
    pub fn set_cpu(&self, namespace: &str, app: &str, load: Load) {
        self.set_pods(namespace, &[("app", app)], "cpu", load);
    }

    /// Sets an Object metric (`object` is `resource/name`, e.g. `services/web`).
    pub fn set_object(&self, namespace: &str, object: &str, metric: &str, value: f64) {
        self.with(|s| {
            s.objects
                .insert((namespace.into(), object.into(), metric.into()), value)
        });
    }

    /// Sets an External metric.
    pub fn set_external(&self, namespace: &str, metric: &str, value: f64) {
        self.with(|s| s.external.insert((namespace.into(), metric.into()), value));
    }

    /// Makes `group` answer every data request with `status` (`None`: answer normally).
    pub fn set_fault(&self, group: Group, status: Option<u16>) {
        self.with(|s| match status {
            Some(code) => s.faults.insert(group, code),
            None => s.faults.remove(&group),
        });
    }

    /// Data requests served so far for `group`.
    pub fn served(&self, group: Group) -> u64 {
        self.with(|s| s.served.get(&group).copied().unwrap_or(0))
    }
}

/// The server's shared state.
#[derive(Clone)]
pub struct Server {
    /// What to report.
    pub metrics: Metrics,
    /// Reads pods (as the cluster administrator).
    pub client: Client,
}

fn status(code: StatusCode, message: &str) -> Response {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "code": code.as_u16(),
    });
    (code, axum::Json(body)).into_response()
}

fn resource_list(group: Group, resources: Value) -> Response {
    axum::Json(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": format!("{}/{}", group.name(), group.version()),
        "resources": resources,
    }))
    .into_response()
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or(jiff::Timestamp::now())
        .to_string()
}

fn ready(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Each ready pod of `pods` with the value `metric` has for it, where a rule covers it.
fn pod_values(state: &MetricsState, ns: &str, metric: &str, pods: &[Pod]) -> Vec<(Pod, f64)> {
    let mut out = Vec::new();
    for rule in state
        .rules
        .iter()
        .filter(|r| r.namespace == ns && r.metric == metric)
    {
        let covered = |p: &Pod| {
            let labels = p.labels();
            rule.labels.iter().all(|(k, v)| labels.get(k) == Some(v))
        };
        let selected: Vec<&Pod> = pods.iter().filter(|p| ready(p) && covered(p)).collect();
        let each = match rule.load {
            Load::PerPod(v) => v,
            Load::Total(t) if selected.is_empty() => t,
            Load::Total(t) => t / selected.len() as f64,
        };
        out.extend(selected.into_iter().map(|p| (p.clone(), each)));
    }
    out
}

/// A quantity in milli-units, as the metrics servers write them.
fn milli(value: f64) -> String {
    format!("{}m", (value * 1000.0).round() as i64)
}

/// Answers every request of the three groups.
pub async fn handle(
    State(server): State<Server>,
    uri: Uri,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let path = uri.path().trim_end_matches('/');
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let Some(group) = Group::ALL
        .into_iter()
        .find(|g| parts.get(1) == Some(&g.name()) && parts.get(2) == Some(&g.version()))
        .filter(|_| parts.first() == Some(&"apis"))
    else {
        return status(StatusCode::NOT_FOUND, "not served here");
    };
    let rest = &parts[3..];
    if rest.is_empty() {
        return discovery(group);
    }
    let fault = server.metrics.with(|s| {
        *s.served.entry(group).or_default() += 1;
        s.faults.get(&group).copied()
    });
    if let Some(code) = fault {
        let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return status(code, "the test made this metrics API fail");
    }
    let (ns, rest) = match rest {
        ["namespaces", ns, rest @ ..] => (*ns, rest),
        _ => return status(StatusCode::NOT_FOUND, "only namespaced requests are served"),
    };
    let selector = query.get("labelSelector").cloned().unwrap_or_default();
    match (group, rest) {
        (Group::Resource, ["pods"]) => pod_metrics(&server, ns, &selector, None).await,
        (Group::Resource, ["pods", name]) => pod_metrics(&server, ns, "", Some(name)).await,
        (Group::Custom, ["pods", "*", metric]) => custom_pods(&server, ns, &selector, metric).await,
        (Group::Custom, [resource, name, metric]) => {
            let key = (
                ns.to_owned(),
                format!("{resource}/{name}"),
                (*metric).to_owned(),
            );
            match server.metrics.with(|s| s.objects.get(&key).copied()) {
                Some(v) => axum::Json(json!({
                    "kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta2",
                    "metadata": {},
                    "items": [{
                        "describedObject": {"kind": object_kind(resource), "namespace": ns, "name": name, "apiVersion": object_api_version(resource)},
                        "metric": {"name": metric},
                        "timestamp": now_rfc3339(),
                        "value": milli(v),
                    }],
                }))
                .into_response(),
                None => status(StatusCode::NOT_FOUND, &format!("no metric {metric} for {resource}/{name}")),
            }
        }
        (Group::External, [metric]) => {
            let key = (ns.to_owned(), (*metric).to_owned());
            match server.metrics.with(|s| s.external.get(&key).copied()) {
                Some(v) => axum::Json(json!({
                    "kind": "ExternalMetricValueList", "apiVersion": "external.metrics.k8s.io/v1beta1",
                    "metadata": {},
                    "items": [{"metricName": metric, "metricLabels": {}, "timestamp": now_rfc3339(), "value": milli(v)}],
                }))
                .into_response(),
                None => status(StatusCode::NOT_FOUND, &format!("no external metric {metric}")),
            }
        }
        _ => status(StatusCode::NOT_FOUND, "not served here"),
    }
}

fn object_kind(resource: &str) -> String {
    match resource.split('.').next().unwrap_or(resource) {
        "services" => "Service".into(),
        "deployments" => "Deployment".into(),
        "ingresses" => "Ingress".into(),
        other => other.trim_end_matches('s').to_owned(),
    }
}

fn object_api_version(resource: &str) -> &'static str {
    match resource.split('.').next().unwrap_or(resource) {
        "deployments" => "apps/v1",
        "ingresses" => "networking.k8s.io/v1",
        _ => "v1",
    }
}

fn discovery(group: Group) -> Response {
    let resources = match group {
        Group::Resource => json!([
            {"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": ["get", "list"]},
            {"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": ["get", "list"]},
        ]),
        Group::Custom => json!([
            {"name": "pods/*", "singularName": "", "namespaced": true, "kind": "MetricValueList", "verbs": ["get"]},
            {"name": "services/*", "singularName": "", "namespaced": true, "kind": "MetricValueList", "verbs": ["get"]},
        ]),
        Group::External => json!([
            {"name": "*", "singularName": "", "namespaced": true, "kind": "ExternalMetricValueList", "verbs": ["get"]},
        ]),
    };
    resource_list(group, resources)
}

async fn list_pods(client: &Client, ns: &str, selector: &str) -> Result<Vec<Pod>, Response> {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut lp = ListParams::default();
    if !selector.is_empty() {
        lp = lp.labels(selector);
    }
    api.list(&lp).await.map(|l| l.items).map_err(|e| {
        status(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("listing pods: {e}"),
        )
    })
}

async fn pod_metrics(server: &Server, ns: &str, selector: &str, name: Option<&str>) -> Response {
    let pods = match list_pods(&server.client, ns, selector).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let values = server.metrics.with(|s| pod_values(s, ns, "cpu", &pods));
    let items: Vec<Value> = values
        .iter()
        .filter(|(p, _)| name.is_none_or(|n| p.name_any() == n))
        .map(|(pod, millicores)| {
            let containers: Vec<Value> = pod
                .spec
                .as_ref()
                .map(|s| s.containers.iter().map(|c| c.name.clone()).collect::<Vec<_>>())
                .unwrap_or_default()
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    // The whole pod's usage is reported on its first container.
                    let cpu = if i == 0 { *millicores } else { 0.0 };
                    json!({"name": c, "usage": {"cpu": format!("{}m", cpu.round() as i64), "memory": "16Mi"}})
                })
                .collect();
            json!({
                "metadata": {"name": pod.name_any(), "namespace": ns, "labels": pod.labels()},
                "timestamp": now_rfc3339(),
                "window": "15s",
                "containers": containers,
            })
        })
        .collect();
    match name {
        Some(n) => match items.into_iter().next() {
            Some(mut item) => {
                item["kind"] = json!("PodMetrics");
                item["apiVersion"] = json!("metrics.k8s.io/v1beta1");
                axum::Json(item).into_response()
            }
            None => status(StatusCode::NOT_FOUND, &format!("podmetrics {n} not found")),
        },
        None => axum::Json(json!({
            "kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
            "metadata": {}, "items": items,
        }))
        .into_response(),
    }
}

async fn custom_pods(server: &Server, ns: &str, selector: &str, metric: &str) -> Response {
    let pods = match list_pods(&server.client, ns, selector).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let values = server.metrics.with(|s| pod_values(s, ns, metric, &pods));
    let items: Vec<Value> = values
        .iter()
        .map(|(pod, v)| {
            json!({
                "describedObject": {"kind": "Pod", "namespace": ns, "name": pod.name_any(), "apiVersion": "/v1"},
                "metric": {"name": metric},
                "timestamp": now_rfc3339(),
                "value": milli(*v),
            })
        })
        .collect();
    axum::Json(json!({
        "kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta2",
        "metadata": {}, "items": items,
    }))
    .into_response()
}

/// The router: every path goes to [`handle`].
pub fn router(server: Server) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(server)
}
