//! What a node would do for the tests: a "kubelet" that marks every new pod Running and Ready
//! through `pods/status` (there is no scheduler or kubelet), and the test metrics server behind
//! the aggregation layer. Both run on a thread of their own with their own runtime, so that
//! any test's runtime can come and go.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::StreamExt;
use hyper_util::rt::{TokioExecutor, TokioIo};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use tokio::sync::oneshot;

use crate::cluster::{client_from, ControlPlane};
use crate::metrics_api::{self, Group, Metrics, Server};
use crate::pki::METRICS_SERVICE_HOST;
use crate::process::free_port;

/// The kubelet stand-in and the metrics server.
pub struct Node {
    /// Steers what the metrics server reports.
    pub metrics: Metrics,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The namespace of the metrics server's Service.
pub const SYSTEM_NAMESPACE: &str = "foresight-envtest";

impl Node {
    /// Starts both on their own thread and waits until the metrics APIs are Available.
    pub fn start(cp: &ControlPlane) -> anyhow::Result<Node> {
        crate::install_crypto();
        let kubeconfig = cp.admin_kubeconfig().to_owned();
        let cert = cp.pki.metrics_server.cert_pem.clone();
        let key = cp.pki.metrics_server.key_pem.clone();
        let ca = cp.pki.ca.cert_pem.clone();
        let metrics = Metrics::default();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<anyhow::Result<()>>();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let m = metrics.clone();
        let thread = std::thread::Builder::new()
            .name("envtest-node".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.into()));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let started = async {
                        let client = client_from(&kubeconfig).await?;
                        let port = free_port()?;
                        let server = Server {
                            metrics: m,
                            client: client.clone(),
                        };
                        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
                        tokio::spawn(serve(listener, tls_config(&cert, &key)?, server));
                        tokio::spawn(kubelet(client.clone()));
                        register(&client, port, &ca).await?;
                        anyhow::Ok(client)
                    };
                    let client = match started.await {
                        Ok(c) => {
                            let _ = ready_tx.send(Ok(()));
                            c
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = stop_rx.await;
                    // A dead APIService makes discovery partial: remove them while the API
                    // server is still there.
                    let _ = tokio::time::timeout(Duration::from_secs(5), unregister(&client)).await;
                });
            })?;
        let started = ready_rx
            .recv_timeout(Duration::from_secs(120))
            .context("the metrics server did not start within 120 s")?;
        let node = Node {
            metrics,
            stop: Some(stop_tx),
            thread: Some(thread),
        };
        started?;
        Ok(node)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn tls_config(cert: &str, key: &str) -> anyhow::Result<rustls::ServerConfig> {
    let certs = CertificateDer::pem_slice_iter(cert.as_bytes()).collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes())?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

async fn serve(listener: tokio::net::TcpListener, tls: rustls::ServerConfig, server: Server) {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let app = metrics_api::router(server);
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let (acceptor, app) = (acceptor.clone(), app.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

fn api_service_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiregistration.k8s.io", "v1", "APIService"),
        "apiservices",
    )
}

/// The Service (ExternalName `localhost`) and one APIService per group; waits until the
/// aggregator reports them Available.
async fn register(client: &Client, port: u16, ca_pem: &str) -> anyhow::Result<()> {
    let (service, namespace) = METRICS_SERVICE_HOST
        .trim_end_matches(".svc")
        .split_once('.')
        .context("METRICS_SERVICE_HOST is service.namespace.svc")?;
    crate::apply_json(
        client,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
    )
    .await?;
    crate::apply_json(
        client,
        &json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": service, "namespace": namespace},
            "spec": {"type": "ExternalName", "externalName": "localhost",
                     "ports": [{"name": "https", "port": port, "protocol": "TCP"}]},
        }),
    )
    .await?;
    for group in Group::ALL {
        crate::apply_json(
            client,
            &json!({
                "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                "metadata": {"name": format!("{}.{}", group.version(), group.name())},
                "spec": {
                    "group": group.name(), "version": group.version(),
                    "groupPriorityMinimum": 100, "versionPriority": 100,
                    "service": {"name": service, "namespace": namespace, "port": port},
                    "caBundle": k8s_openapi::ByteString(ca_pem.as_bytes().to_vec()),
                },
            }),
        )
        .await?;
    }
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &api_service_resource());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut waiting = Vec::new();
        for group in Group::ALL {
            let name = format!("{}.{}", group.version(), group.name());
            let available = api.get(&name).await.ok().is_some_and(|o| {
                o.data["status"]["conditions"].as_array().is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Available" && c["status"] == "True")
                })
            });
            if !available {
                waiting.push(name);
            }
        }
        if waiting.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!("APIServices not Available after 60 s: {waiting:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn unregister(client: &Client) {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &api_service_resource());
    for group in Group::ALL {
        let name = format!("{}.{}", group.version(), group.name());
        let _ = api.delete(&name, &DeleteParams::default()).await;
    }
}

/// Marks every pod that is not Ready as Running and Ready, started ten minutes ago (past
/// every initialization period, so both autoscalers count it from its first sample).
async fn kubelet(client: Client) {
    let all: Api<Pod> = Api::all(client.clone());
    let pods = watcher(all, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .boxed();
    // Several pods at a time: one status write after another cannot keep up with a
    // controller-manager creating thousands of pods.
    pods.for_each_concurrent(32, |event| {
        let client = client.clone();
        async move {
            let Ok(pod) = event else { return };
            if pod.metadata.deletion_timestamp.is_some() || is_ready(&pod) {
                return;
            }
            let (Some(ns), name) = (pod.namespace(), pod.name_any()) else {
                return;
            };
            let since = (jiff::Timestamp::now() - jiff::SignedDuration::from_mins(10))
                .round(jiff::Unit::Second)
                .map(|t| t.to_string())
                .unwrap_or_default();
            let condition = |type_: &str| json!({"type": type_, "status": "True", "lastProbeTime": null, "lastTransitionTime": since});
            let patch = json!({"status": {
                "phase": "Running",
                "startTime": since,
                "podIP": "127.0.0.1",
                "conditions": [condition("PodScheduled"), condition("Initialized"),
                               condition("ContainersReady"), condition("Ready")],
            }});
            let api: Api<Pod> = Api::namespaced(client, &ns);
            if let Err(e) = api
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                tracing::debug!(pod = %name, error = %e, "kubelet: could not mark ready");
            }
        }
    })
    .await;
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}
