//! etcd, kube-apiserver and (optionally) kube-controller-manager on loopback ports chosen at
//! run time, with their own PKI, static tokens for the test's identities, and the aggregation
//! layer configured for the test metrics server.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;

use crate::assets::Assets;
use crate::pki::Pki;
use crate::process::{free_port, http_ok, Process};

/// How the control plane runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Start kube-controller-manager (deployments, replica sets, the native HPA, ...).
    pub controller_manager: bool,
    /// The native HPA's sync period (`--horizontal-pod-autoscaler-sync-period`).
    pub hpa_sync_period: Duration,
    /// The native HPA's cluster-wide downscale stabilization window.
    pub hpa_downscale_stabilization: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            controller_manager: true,
            hpa_sync_period: Duration::from_secs(15),
            hpa_downscale_stabilization: Duration::from_secs(300),
        }
    }
}

/// The token of the test's cluster administrator (group `system:masters`).
const ADMIN_TOKEN: &str = "envtest-admin-token";

/// How many times a control plane is started afresh before the start is reported as failed.
const START_ATTEMPTS: usize = 3;

/// How long etcd may take to answer `/health` (its first fsyncs wait on a disk that other
/// suites may be loading).
const ETCD_READY: Duration = Duration::from_secs(120);

/// A running control plane. Dropping it stops every process and removes its files.
pub struct ControlPlane {
    dir: tempfile::TempDir,
    assets: Assets,
    options: Options,
    /// The PKI.
    pub pki: Pki,
    etcd_port: u16,
    apiserver_port: u16,
    etcd: Option<Process>,
    apiserver: Option<Process>,
    controller_manager: Option<Process>,
    admin_kubeconfig: PathBuf,
}

impl ControlPlane {
    /// Starts etcd and kube-apiserver (and kube-controller-manager when asked), and waits
    /// until the API server is ready.
    pub async fn start(assets: Assets, options: Options) -> anyhow::Result<ControlPlane> {
        // Ports are found free and released before etcd and the API server bind them, so a
        // suite running beside this one can take one in between. A failed start is tried
        // again from scratch, on new ports in a new directory; the error names every attempt.
        let mut failures = Vec::new();
        for attempt in 1..=START_ATTEMPTS {
            match Self::start_once(assets.clone(), options.clone()).await {
                Ok(cp) => return Ok(cp),
                Err(e) => failures.push(format!("attempt {attempt} of {START_ATTEMPTS}: {e:#}")),
            }
        }
        anyhow::bail!(
            "the control plane did not start:\n{}",
            failures.join("\n\n")
        )
    }

    async fn start_once(assets: Assets, options: Options) -> anyhow::Result<ControlPlane> {
        let dir = tempfile::Builder::new()
            .prefix("foresight-envtest-")
            .tempdir()
            .context("creating the control plane's directory")?;
        let pki = Pki::create(dir.path())?;
        std::fs::write(
            dir.path().join("tokens.csv"),
            format!("{ADMIN_TOKEN},admin,admin-uid,system:masters\n"),
        )?;
        let mut cp = ControlPlane {
            admin_kubeconfig: dir.path().join("admin.kubeconfig"),
            etcd_port: free_port()?,
            apiserver_port: free_port()?,
            dir,
            assets,
            options,
            pki,
            etcd: None,
            apiserver: None,
            controller_manager: None,
        };
        cp.write_kubeconfig(&cp.admin_kubeconfig, ADMIN_TOKEN, "default")?;
        cp.start_etcd()?;
        // The API server gives etcd only 20 s before it exits; waiting here first turns a
        // slow etcd into a wait and a dead one into its own log.
        cp.wait_etcd_healthy(ETCD_READY).await?;
        cp.start_apiserver().await?;
        if cp.options.controller_manager {
            cp.start_controller_manager()?;
        }
        Ok(cp)
    }

    /// The directory holding certificates, kubeconfigs and logs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The API server's port.
    pub fn apiserver_port(&self) -> u16 {
        self.apiserver_port
    }

    /// The API server's URL.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.apiserver_port)
    }

    /// A kubeconfig for the cluster administrator.
    pub fn admin_kubeconfig(&self) -> &Path {
        &self.admin_kubeconfig
    }

    /// A client for the cluster administrator (build one per tokio runtime).
    pub async fn admin_client(&self) -> anyhow::Result<Client> {
        client_from(&self.admin_kubeconfig).await
    }

    /// Writes a kubeconfig that authenticates with `token`.
    pub fn write_kubeconfig(
        &self,
        path: &Path,
        token: &str,
        namespace: &str,
    ) -> anyhow::Result<()> {
        self.write_kubeconfig_via(path, &self.url(), token, namespace)
    }

    /// Writes a kubeconfig that authenticates with `token` and reaches the API server at
    /// `server` (a [`crate::proxy::Proxy`] in front of it; the certificate names 127.0.0.1).
    pub fn write_kubeconfig_via(
        &self,
        path: &Path,
        server: &str,
        token: &str,
        namespace: &str,
    ) -> anyhow::Result<()> {
        let config = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "envtest", "cluster": {
                "server": server,
                "certificate-authority": self.pki.ca.cert,
            }}],
            "users": [{"name": "user", "user": {"token": token}}],
            "contexts": [{"name": "envtest", "context": {
                "cluster": "envtest", "user": "user", "namespace": namespace,
            }}],
            "current-context": "envtest",
        });
        std::fs::write(path, serde_json::to_string_pretty(&config)?)
            .with_context(|| format!("writing {}", path.display()))
    }

    fn log(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.log"))
    }

    fn start_etcd(&mut self) -> anyhow::Result<()> {
        let peer = free_port()?;
        let client_url = format!("http://127.0.0.1:{}", self.etcd_port);
        let peer_url = format!("http://127.0.0.1:{peer}");
        let args = [
            format!("--data-dir={}", self.dir.path().join("etcd").display()),
            format!("--listen-client-urls={client_url}"),
            format!("--advertise-client-urls={client_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=default={peer_url}"),
            "--log-level=warn".into(),
        ];
        let log = self.log("etcd");
        self.etcd = Some(Process::spawn("etcd", &self.assets.etcd, &args, &log)?);
        Ok(())
    }

    async fn wait_etcd_healthy(&mut self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        let addr = format!("127.0.0.1:{}", self.etcd_port);
        loop {
            let Some(etcd) = &mut self.etcd else {
                anyhow::bail!("etcd was not started");
            };
            if !etcd.is_running() {
                anyhow::bail!("etcd exited:\n{}", tail(&etcd.log(), 30));
            }
            if http_ok(&addr, "/health") {
                return Ok(());
            }
            if Instant::now() >= deadline {
                anyhow::bail!(
                    "etcd did not answer /health on {addr} within {timeout:?}:\n{}",
                    tail(&etcd.log(), 30)
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn apiserver_args(&self) -> Vec<String> {
        let d = self.dir.path();
        let p = &self.pki;
        vec![
            format!("--etcd-servers=http://127.0.0.1:{}", self.etcd_port),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--secure-port={}", self.apiserver_port),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            format!("--tls-cert-file={}", p.apiserver.cert.display()),
            format!("--tls-private-key-file={}", p.apiserver.key.display()),
            format!("--client-ca-file={}", p.ca.cert.display()),
            format!("--token-auth-file={}", d.join("tokens.csv").display()),
            "--authorization-mode=Node,RBAC".into(),
            "--service-account-issuer=https://kubernetes.default.svc".into(),
            format!(
                "--service-account-key-file={}",
                p.service_account.cert.display()
            ),
            format!(
                "--service-account-signing-key-file={}",
                p.service_account.key.display()
            ),
            "--endpoint-reconciler-type=none".into(),
            format!(
                "--requestheader-client-ca-file={}",
                p.front_proxy_ca.cert.display()
            ),
            "--requestheader-allowed-names=front-proxy-client".into(),
            "--requestheader-username-headers=X-Remote-User".into(),
            "--requestheader-group-headers=X-Remote-Group".into(),
            "--requestheader-extra-headers-prefix=X-Remote-Extra-".into(),
            format!(
                "--proxy-client-cert-file={}",
                p.front_proxy_client.cert.display()
            ),
            format!(
                "--proxy-client-key-file={}",
                p.front_proxy_client.key.display()
            ),
            "--enable-priority-and-fairness=false".into(),
            "--v=1".into(),
        ]
    }

    /// Starts the API server (again, after [`ControlPlane::stop_apiserver`]) on the same port
    /// and waits until it is ready.
    pub async fn start_apiserver(&mut self) -> anyhow::Result<()> {
        let args = self.apiserver_args();
        let log = self.log("kube-apiserver");
        self.apiserver = Some(Process::spawn(
            "kube-apiserver",
            &self.assets.apiserver,
            &args,
            &log,
        )?);
        // Over many objects a restarted API server takes minutes to be ready (it rebuilds
        // its watch caches from etcd, on a machine the test already loads): 90 s was not
        // enough at 10,000 autoscalers.
        self.wait_ready(Duration::from_secs(300)).await
    }

    /// Stops the API server (SIGTERM, then SIGKILL); etcd keeps the data.
    pub fn stop_apiserver(&mut self) {
        if let Some(mut p) = self.apiserver.take() {
            p.terminate(Duration::from_secs(10));
        }
    }

    fn start_controller_manager(&mut self) -> anyhow::Result<()> {
        let Some(kcm) = self.assets.controller_manager.clone() else {
            anyhow::bail!("kube-controller-manager is not among the assets");
        };
        let o = &self.options;
        let args = vec![
            format!("--kubeconfig={}", self.admin_kubeconfig.display()),
            // Canonical controller names; the short ones are aliases kept for old command lines.
            "--controllers=horizontal-pod-autoscaler-controller,deployment-controller,replicaset-controller,serviceaccount-controller,namespace-controller,garbage-collector-controller".into(),
            "--leader-elect=false".into(),
            "--secure-port=0".into(),
            "--use-service-account-credentials=false".into(),
            format!(
                "--horizontal-pod-autoscaler-sync-period={}s",
                o.hpa_sync_period.as_secs()
            ),
            format!(
                "--horizontal-pod-autoscaler-downscale-stabilization={}s",
                o.hpa_downscale_stabilization.as_secs()
            ),
            "--concurrent-deployment-syncs=10".into(),
            "--concurrent-replicaset-syncs=10".into(),
            // The default client limit (20 requests/s) makes pod creation the bottleneck of any
            // test with thousands of workloads: a cluster of that size raises it too.
            "--kube-api-qps=400".into(),
            "--kube-api-burst=800".into(),
            "--v=2".into(),
        ];
        let log = self.log("kube-controller-manager");
        self.controller_manager = Some(Process::spawn(
            "kube-controller-manager",
            &kcm,
            &args,
            &log,
        )?);
        Ok(())
    }

    /// The controller manager's log (the native HPA's decisions are in it at `--v=2`).
    pub fn controller_manager_log(&self) -> String {
        self.controller_manager
            .as_ref()
            .map(Process::log)
            .unwrap_or_default()
    }

    /// The API server's log.
    pub fn apiserver_log(&self) -> String {
        std::fs::read_to_string(self.log("kube-apiserver")).unwrap_or_default()
    }

    async fn wait_ready(&mut self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        let client = self.admin_client().await?;
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Some(p) = &mut self.apiserver {
                if !p.is_running() {
                    anyhow::bail!("kube-apiserver exited:\n{}", tail(&p.log(), 30));
                }
            }
            let req = http::Request::get("/readyz").body(Vec::new())?;
            match client.request_text(req).await {
                Ok(body) if body.trim() == "ok" => return Ok(()),
                Ok(body) => last = body,
                Err(e) => last = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        anyhow::bail!(
            "kube-apiserver not ready after {timeout:?}: {last}\n{}",
            tail(&self.apiserver_log(), 30)
        )
    }
}

/// A kube client from a kubeconfig file.
pub async fn client_from(kubeconfig: &Path) -> anyhow::Result<Client> {
    crate::install_crypto();
    let kc = Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("reading {}", kubeconfig.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
    Ok(Client::try_from(config)?)
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
