//! A real Kubernetes control plane for Foresight's tests.
//!
//! [`Cluster::start`] runs etcd, kube-apiserver and kube-controller-manager (with the native
//! HPA controller) from `KUBEBUILDER_ASSETS`, which `scripts/control-plane` builds (v1.37),
//! on loopback ports chosen at run time, with a PKI made for the run, plus a [`node`] that
//! marks pods Ready and serves the metrics APIs through the real aggregation layer. Everything
//! stops when the [`Cluster`] is dropped, and dies with the test process if it is killed.
//!
//! ```no_run
//! # async fn t() -> anyhow::Result<()> {
//! let Some(assets) = foresight_envtest::Assets::or_skip("my_test", true) else { return Ok(()) };
//! let cluster = foresight_envtest::Cluster::start(assets, Default::default()).await?;
//! # Ok(()) }
//! ```

pub mod assets;
pub mod cluster;
pub mod controller;
pub mod metrics_api;
pub mod node;
pub mod pki;
pub mod process;
pub mod prometheus;
pub mod proxy;
pub mod workload;

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use kube::api::{Patch, PatchParams};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::discovery;
use kube::{Api, Client};

pub use assets::Assets;
pub use cluster::{ControlPlane, Options};
pub use metrics_api::{Group, Load, Metrics};
pub use node::Node;

/// The field manager of everything the harness applies.
pub const FIELD_MANAGER: &str = "foresight-envtest";

/// Installs rustls' ring provider for the process (once; later calls do nothing).
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A control plane with its node.
pub struct Cluster {
    /// The processes.
    pub control_plane: ControlPlane,
    /// The kubelet stand-in and the metrics server.
    pub node: Node,
}

impl Cluster {
    /// Starts the control plane and the node.
    pub async fn start(assets: Assets, options: Options) -> anyhow::Result<Cluster> {
        let control_plane = ControlPlane::start(assets, options).await?;
        let node = tokio::task::block_in_place(|| Node::start(&control_plane))?;
        Ok(Cluster {
            control_plane,
            node,
        })
    }

    /// What the metrics server reports.
    pub fn metrics(&self) -> &Metrics {
        &self.node.metrics
    }

    /// An administrator's client.
    pub async fn client(&self) -> anyhow::Result<Client> {
        self.control_plane.admin_client().await
    }
}

/// Server-side applies one object given as JSON. Its kind is looked up in its own group and
/// version only (one discovery request, not the whole API), so a CRD applied just before is
/// found as soon as it is served.
pub async fn apply_json(client: &Client, object: &serde_json::Value) -> anyhow::Result<()> {
    let obj: DynamicObject = serde_json::from_value(object.clone()).context("not an object")?;
    let types = obj
        .types
        .clone()
        .context("an object without apiVersion and kind")?;
    let gvk = GroupVersionKind::try_from(&types)?;
    let (resource, caps) = discovery::pinned_kind(client, &gvk)
        .await
        .with_context(|| format!("the API server does not serve {gvk:?}"))?;
    let name = obj
        .metadata
        .name
        .clone()
        .context("an object without a name")?;
    let api: Api<DynamicObject> = match (&caps.scope, &obj.metadata.namespace) {
        (discovery::Scope::Namespaced, Some(ns)) => {
            Api::namespaced_with(client.clone(), ns, &resource)
        }
        (discovery::Scope::Namespaced, None) => {
            Api::default_namespaced_with(client.clone(), &resource)
        }
        (discovery::Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
    };
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(object),
    )
    .await
    // The API server's reason is in the status message; kube's error shows it only in Debug.
    .map_err(|e| match e {
        kube::Error::Api(status) => {
            anyhow::anyhow!("applying {} {name}: {}", types.kind, status.message)
        }
        other => anyhow::Error::new(other).context(format!("applying {} {name}", types.kind)),
    })?;
    Ok(())
}

/// Server-side applies every document of a YAML stream, in order.
pub async fn apply_yaml(client: &Client, yaml: &str) -> anyhow::Result<()> {
    for doc in serde_saphyr::from_multiple::<serde_json::Value>(yaml)? {
        if !doc.is_null() {
            apply_json(client, &doc).await?;
        }
    }
    Ok(())
}

/// Calls `check` every 250 ms until it gives `Some`, or fails after `timeout` with `what` and
/// the last value seen.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    let deadline = Instant::now() + timeout;
    let mut last = String::from("nothing yet");
    loop {
        match check().await {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last = format!("{e:#}"),
        }
        if Instant::now() >= deadline {
            anyhow::bail!("{what}: not within {timeout:?} (last error: {last})");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
