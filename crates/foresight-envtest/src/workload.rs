//! Objects the tests create: namespaces, Deployments, service-account tokens.

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::PostParams;
use kube::{Api, Client};
use serde_json::json;

use crate::apply_json;

/// Creates `name` and its `default` ServiceAccount (which pods need; the serviceaccount
/// controller would make it too, but only eventually).
pub async fn namespace(client: &Client, name: &str) -> anyhow::Result<()> {
    apply_json(
        client,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    )
    .await?;
    let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), name);
    let default = serde_json::from_value(json!({"metadata": {"name": "default"}}))?;
    match sa.create(&PostParams::default(), &default).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A Deployment `name` of `replicas` pods labelled `app=<name>`, each requesting `cpu_millis`
/// millicores of CPU in one container.
pub async fn deployment(
    client: &Client,
    namespace: &str,
    name: &str,
    replicas: i32,
    cpu_millis: u32,
) -> anyhow::Result<()> {
    apply_json(
        client,
        &json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{
                        "name": "app", "image": "registry.k8s.io/pause:3.9",
                        "resources": {"requests": {"cpu": format!("{cpu_millis}m"), "memory": "16Mi"}},
                    }]},
                },
            },
        }),
    )
    .await
}

/// A Deployment as [`deployment`] makes it, whose pods also run a sidecar (an init container
/// with `restartPolicy: Always`) requesting `sidecar_cpu_millis`: Kubernetes 1.29+ counts the
/// sidecar's request in the pod's.
pub async fn deployment_with_sidecar(
    client: &Client,
    namespace: &str,
    name: &str,
    replicas: i32,
    cpu_millis: u32,
    sidecar_cpu_millis: u32,
) -> anyhow::Result<()> {
    apply_json(
        client,
        &json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "initContainers": [{
                            "name": "proxy", "image": "registry.k8s.io/pause:3.9",
                            "restartPolicy": "Always",
                            "resources": {"requests": {"cpu": format!("{sidecar_cpu_millis}m"), "memory": "16Mi"}},
                        }],
                        "containers": [{
                            "name": "app", "image": "registry.k8s.io/pause:3.9",
                            "resources": {"requests": {"cpu": format!("{cpu_millis}m"), "memory": "16Mi"}},
                        }],
                    },
                },
            },
        }),
    )
    .await
}

/// The Deployment's `spec.replicas`.
pub async fn replicas(client: &Client, namespace: &str, name: &str) -> anyhow::Result<i32> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let d = api
        .get(name)
        .await
        .with_context(|| format!("getting deployment {name}"))?;
    Ok(d.spec.and_then(|s| s.replicas).unwrap_or(1))
}

/// A token of the ServiceAccount `namespace/name`, valid for an hour.
pub async fn token(client: &Client, namespace: &str, name: &str) -> anyhow::Result<String> {
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let request: TokenRequest = serde_json::from_value(json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }))?;
    let answer: TokenRequest = api
        .create_subresource("token", name, &PostParams::default(), &request)
        .await
        .with_context(|| format!("requesting a token of {namespace}/{name}"))?;
    answer
        .status
        .map(|s| s.token)
        .context("a TokenRequest without a token")
}
