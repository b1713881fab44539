//! `foresight recommend` without `-f`: the autoscalers of the current kubeconfig context (one
//! namespace, `-n`, or all, `-A`, as kubectl): native HPAs, KEDA ScaledObjects, Crane EHPAs and
//! Foresight's own, listed through the API server and imported as manifests are. A kind whose
//! API the cluster does not serve (KEDA or Crane not installed) is skipped, and said so.

use std::path::Path;

use anyhow::Context as _;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client};

/// The kinds read, as `(group, version, kind, plural)`.
const KINDS: [(&str, &str, &str, &str); 4] = [
    (
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
    ),
    ("keda.sh", "v1alpha1", "ScaledObject", "scaledobjects"),
    (
        "autoscaling.crane.io",
        "v1alpha1",
        "EffectiveHorizontalPodAutoscaler",
        "effectivehorizontalpodautoscalers",
    ),
    (
        foresight_api::spec::GROUP,
        foresight_api::spec::VERSION,
        "EffectiveHorizontalPodAutoscaler",
        "effectivehorizontalpodautoscalers",
    ),
];

/// One listed autoscaler as a manifest document (apiVersion and kind set, as list items come
/// without them), or a kind that could not be listed and why.
pub enum Listed {
    /// `(where it was found, the document)`.
    Document(String, serde_json::Value),
    /// A kind that could not be read.
    Unread(String, String),
}

/// Lists every autoscaler in `namespace` (all namespaces for `None`).
pub fn list(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    namespace: Option<&str>,
    all_namespaces: bool,
) -> anyhow::Result<Vec<Listed>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let config = super::kubeconfig::load(kubeconfig, context).await?;
        let namespace = (!all_namespaces).then(|| {
            namespace
                .map(str::to_owned)
                .unwrap_or_else(|| config.default_namespace.clone())
        });
        let client =
            foresight_k8s::client::build(config).context("building the Kubernetes client")?;
        let mut out = Vec::new();
        for (group, version, kind, plural) in KINDS {
            out.extend(
                list_kind(&client, namespace.as_deref(), group, version, kind, plural).await?,
            );
        }
        Ok(out)
    })
}

async fn list_kind(
    client: &Client,
    namespace: Option<&str>,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> anyhow::Result<Vec<Listed>> {
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let api_version = resource.api_version.clone();
    let items = match api.list(&ListParams::default()).await {
        Ok(list) => list.items,
        // The API is not served: that autoscaler is not installed.
        Err(kube::Error::Api(e)) if e.code == 404 => {
            return Ok(vec![Listed::Unread(
                format!("{kind} ({api_version})"),
                "not served by this cluster (not installed)".to_owned(),
            )])
        }
        Err(kube::Error::Api(e)) if e.code == 403 => {
            return Ok(vec![Listed::Unread(
                format!("{kind} ({api_version})"),
                format!("not allowed to list them: {}", e.message),
            )])
        }
        Err(e) => {
            return Err(e).with_context(|| format!("listing {plural}.{group}"));
        }
    };
    let mut out = Vec::new();
    for item in items {
        let at = format!(
            "cluster {kind} {}/{}",
            item.metadata.namespace.as_deref().unwrap_or(""),
            item.metadata.name.as_deref().unwrap_or("")
        );
        let mut value =
            serde_json::to_value(&item).with_context(|| format!("{at}: reading it as JSON"))?;
        if let Some(map) = value.as_object_mut() {
            map.insert("apiVersion".to_owned(), api_version.clone().into());
            map.insert("kind".to_owned(), kind.into());
        }
        out.push(Listed::Document(at, value));
    }
    Ok(out)
}
