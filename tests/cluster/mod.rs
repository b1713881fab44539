//! Shared steps of the real-cluster suites (`tests/cluster_*.rs`): a control plane from
//! `foresight-envtest`, the CRD and RBAC as a user installs them, the controller run as its
//! service account, and ways to watch what happens.

#![allow(dead_code)] // each suite uses its own part

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use foresight_envtest::controller::ForesightController;
use foresight_envtest::{apply_json, apply_yaml, eventually, workload, Assets, Cluster, Options};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DeleteParams, ListParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client};
use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_foresight");
pub const CRD_NAME: &str = "effectivehorizontalpodautoscalers.autoscaling.foresight.dev";

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A control plane, or `None` (with one line saying how to enable it) without assets.
pub async fn start(test: &str, options: Options) -> Option<Cluster> {
    let assets = Assets::or_skip(test, options.controller_manager)?;
    let cluster = match Cluster::start(assets, options).await {
        Ok(c) => c,
        Err(e) => panic!("{test}: starting the control plane: {e:#}"),
    };
    let client = cluster.client().await.expect("an administrator's client");
    let version = client
        .apiserver_version()
        .await
        .expect("the API server says its version");
    foresight_fixtures::ran_against(test, &version.git_version);
    Some(cluster)
}

/// The resource of our kind, for dynamic access.
pub fn ehpa_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(
            "autoscaling.foresight.dev",
            "v1alpha1",
            "EffectiveHorizontalPodAutoscaler",
        ),
        "effectivehorizontalpodautoscalers",
    )
}

pub fn ehpas(client: &Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &ehpa_resource())
}

/// `foresight crd`'s output.
pub fn foresight_crd() -> String {
    let out = std::process::Command::new(BIN)
        .arg("crd")
        .output()
        .expect("foresight crd runs");
    assert!(out.status.success(), "foresight crd failed");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Waits until the CRD is Established.
pub async fn wait_established(client: &Client) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    eventually("the CRD is Established", Duration::from_secs(30), || {
        let crds = crds.clone();
        async move {
            let crd = crds.get(CRD_NAME).await?;
            let established = crd
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            Ok(established.then_some(()))
        }
    })
    .await
}

/// Deletes the CRD and waits until it is gone.
pub async fn delete_crd(client: &Client) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let _ = crds.delete(CRD_NAME, &DeleteParams::default()).await;
    eventually("the CRD is gone", Duration::from_secs(60), || {
        let crds = crds.clone();
        async move { Ok(crds.get_opt(CRD_NAME).await?.is_none().then_some(())) }
    })
    .await
}

/// Installs the CRD as `foresight crd | kubectl apply --server-side -f -` does.
pub async fn install_crd(client: &Client) -> anyhow::Result<()> {
    apply_yaml(client, &foresight_crd()).await?;
    wait_established(client).await
}

/// Installs `deploy/namespace.yaml` and `deploy/rbac.yaml`.
pub async fn install_rbac(client: &Client) -> anyhow::Result<()> {
    for file in ["deploy/namespace.yaml", "deploy/rbac.yaml"] {
        apply_yaml(client, &std::fs::read_to_string(root().join(file))?).await?;
    }
    Ok(())
}

/// A kubeconfig for the controller's service account (`deploy/rbac.yaml`'s rights only).
pub async fn service_account_kubeconfig(cluster: &Cluster) -> anyhow::Result<PathBuf> {
    let client = cluster.client().await?;
    let token = workload::token(&client, "foresight-system", "foresight-controller").await?;
    let path = cluster.control_plane.dir().join("controller.kubeconfig");
    cluster
        .control_plane
        .write_kubeconfig(&path, &token, "foresight-system")?;
    Ok(path)
}

/// CRD, RBAC and a controller running as its service account, ready.
pub async fn install_and_run(
    cluster: &Cluster,
    log_name: &str,
    extra: &[&str],
) -> anyhow::Result<ForesightController> {
    let client = cluster.client().await?;
    install_crd(&client).await?;
    install_rbac(&client).await?;
    let kubeconfig = service_account_kubeconfig(cluster).await?;
    run_controller(cluster, &kubeconfig, log_name, extra).await
}

/// Starts a controller and waits for its `/readyz`.
pub async fn run_controller(
    cluster: &Cluster,
    kubeconfig: &Path,
    log_name: &str,
    extra: &[&str],
) -> anyhow::Result<ForesightController> {
    let log = cluster.control_plane.dir().join(format!("{log_name}.log"));
    let controller = ForesightController::start(Path::new(BIN), kubeconfig, &log, extra)?;
    let ready = eventually("the controller is ready", Duration::from_secs(30), || {
        let c = &controller;
        async move { Ok(c.ready().await.then_some(())) }
    })
    .await;
    if let Err(e) = ready {
        anyhow::bail!("{e:#}\ncontroller log:\n{}", controller.log());
    }
    Ok(controller)
}

/// Creates (server-side applies) an autoscaler from YAML.
pub async fn apply_ehpa(client: &Client, ns: &str, yaml: &str) -> anyhow::Result<()> {
    let mut v: Value = serde_saphyr::from_str(yaml)?;
    v["metadata"]["namespace"] = json!(ns);
    v["apiVersion"] = json!("autoscaling.foresight.dev/v1alpha1");
    v["kind"] = json!("EffectiveHorizontalPodAutoscaler");
    apply_json(client, &v).await
}

/// Merge-patches the autoscaler's `spec` with `fields`; the new generation.
pub async fn patch_spec(
    client: &Client,
    ns: &str,
    name: &str,
    fields: Value,
) -> anyhow::Result<Option<i64>> {
    let patch = json!({ "spec": fields });
    let o = ehpas(client, ns)
        .patch(
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await?;
    Ok(o.metadata.generation)
}

/// The autoscaler's status (null before the first write).
pub async fn ehpa_status(client: &Client, ns: &str, name: &str) -> anyhow::Result<Value> {
    let o = ehpas(client, ns).get(name).await?;
    Ok(o.data.get("status").cloned().unwrap_or(Value::Null))
}

/// What deploy/rbac.yaml tells a user to add for an External metric: `list` on it.
pub async fn grant_external_metric(client: &Client, metric: &str) -> anyhow::Result<()> {
    apply_json(
        client,
        &json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "foresight-external-metrics"},
            "rules": [{"apiGroups": ["external.metrics.k8s.io"], "resources": [metric], "verbs": ["list"]}],
        }),
    )
    .await?;
    apply_json(
        client,
        &json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "foresight-external-metrics"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "foresight-external-metrics"},
            "subjects": [{"kind": "ServiceAccount", "name": "foresight-controller", "namespace": "foresight-system"}],
        }),
    )
    .await
}

/// The condition `type_` of a status, as (status, reason, message).
pub fn condition(status: &Value, type_: &str) -> Option<(String, String, String)> {
    status["conditions"].as_array()?.iter().find_map(|c| {
        (c["type"] == type_).then(|| {
            (
                c["status"].as_str().unwrap_or_default().to_owned(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
                c["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
    })
}

/// Waits until the Deployment has `want` replicas.
pub async fn wait_replicas(
    client: &Client,
    ns: &str,
    name: &str,
    want: i32,
    timeout: Duration,
) -> anyhow::Result<()> {
    eventually(
        &format!("deployment {ns}/{name} at {want} replicas"),
        timeout,
        || async move {
            let got = workload::replicas(client, ns, name).await?;
            if got == want {
                Ok(Some(()))
            } else {
                anyhow::bail!("{got} replicas")
            }
        },
    )
    .await
}

/// events.k8s.io events regarding `name` with `reason`, oldest first, as their notes.
pub async fn event_notes(
    client: &Client,
    ns: &str,
    name: &str,
    reason: &str,
) -> anyhow::Result<Vec<String>> {
    let api: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client.clone(), ns);
    let mut events: Vec<_> = api
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|e| {
            e.reason.as_deref() == Some(reason)
                && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
        })
        .collect();
    events.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
    Ok(events.into_iter().filter_map(|e| e.note).collect())
}

/// The replica counts a Deployment went through, sampled every 200 ms, with when each began
/// (seconds since `start`).
#[derive(Clone, Debug, Default)]
pub struct Timeline(pub Vec<(f64, i32)>);

impl Timeline {
    pub fn record(&mut self, start: Instant, replicas: i32) {
        if self.0.last().map(|(_, r)| *r) != Some(replicas) {
            self.0.push((start.elapsed().as_secs_f64(), replicas));
        }
    }

    pub fn sequence(&self) -> Vec<i32> {
        self.0.iter().map(|(_, r)| *r).collect()
    }
}

impl std::fmt::Display for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(t, r)| format!("{r}@{t:.1}s")).collect();
        write!(f, "{}", parts.join(" → "))
    }
}

/// Fails with the controller's log attached.
pub fn with_log<T>(result: anyhow::Result<T>, controller: &ForesightController) -> T {
    match result {
        Ok(v) => v,
        Err(e) => panic!(
            "{e:#}\n--- controller log (last 60 lines) ---\n{}",
            foresight_envtest::cluster::tail(&controller.log(), 60)
        ),
    }
}

/// The sum of every sample of `name` (any labels) in an OpenMetrics text.
pub fn total(metrics: &str, name: &str) -> f64 {
    total_where(metrics, name, &[])
}

/// The sum of the samples of `name` whose labels contain each of `labels` (e.g.
/// `verb="patch"`).
pub fn total_where(metrics: &str, name: &str, labels: &[&str]) -> f64 {
    metrics
        .lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
                && labels.iter().all(|f| l.contains(f))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// `apiserver_request_total` by verb and resource, from the API server's own `/metrics`.
pub async fn apiserver_requests(
    client: &kube::Client,
) -> std::collections::HashMap<(String, String), f64> {
    let request = http::Request::get("/metrics").body(Vec::new()).unwrap();
    let text = client.request_text(request).await.unwrap_or_default();
    let mut out = std::collections::HashMap::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
    {
        let label = |k: &str| {
            line.split(&format!("{k}=\"")[..])
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_owned()
        };
        let Some(n) = line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) else {
            continue;
        };
        *out.entry((label("verb"), label("resource"))).or_default() += n;
    }
    out
}

/// The `q` quantile of histogram `name` between two scrapes, interpolated within its bucket
/// (`le` upper bounds), as PromQL's `histogram_quantile` does.
pub fn quantile(before: &str, after: &str, name: &str, q: f64) -> Option<f64> {
    let buckets = |text: &str| -> Vec<(f64, f64)> {
        text.lines()
            .filter(|l| l.starts_with(&format!("{name}_bucket{{")))
            .filter_map(|l| {
                let le = l.split("le=\"").nth(1)?.split('"').next()?;
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().ok()?
                };
                Some((le, l.rsplit(' ').next()?.parse().ok()?))
            })
            .collect()
    };
    let (b, a) = (buckets(before), buckets(after));
    let counts: Vec<(f64, f64)> = a
        .iter()
        .map(|(le, n)| {
            (
                *le,
                n - b.iter().find(|(l, _)| l == le).map_or(0.0, |x| x.1),
            )
        })
        .collect();
    let total = counts.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let mut lower = (0.0, 0.0);
    for &(le, n) in &counts {
        if n >= rank {
            if le.is_infinite() {
                return Some(lower.0);
            }
            let share = if n > lower.1 {
                (rank - lower.1) / (n - lower.1)
            } else {
                1.0
            };
            return Some(lower.0 + (le - lower.0) * share);
        }
        lower = (le, n);
    }
    None
}
