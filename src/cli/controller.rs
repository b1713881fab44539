//! `foresight controller`: runs the Kubernetes controller.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::ArgAction;
use foresight_core::autoscaler::ControllerConfig;
use foresight_k8s::controller::{self, Options};
use foresight_k8s::leader::LeaderOptions;
use foresight_k8s::reconcile::Settings;
use foresight_k8s::target::WorkloadKind;
use foresight_k8s::telemetry::{self, LogFormat};

/// Arguments of `foresight controller`. Every flag can also be set by its environment
/// variable, as a container spec usually does.
#[derive(clap::Args, Debug)]
pub struct ControllerArgs {
    /// Kubeconfig file; without it, the in-cluster service account, then ~/.kube/config.
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: Option<std::path::PathBuf>,
    /// Kubeconfig context to use (default: the current one).
    #[arg(long, env = "FORESIGHT_KUBE_CONTEXT")]
    pub context: Option<String>,
    /// Log format: json (for log collectors), human, or auto (json unless on a terminal).
    #[arg(long, env = "FORESIGHT_LOG_FORMAT", default_value = "auto", value_parser = ["auto", "json", "human"])]
    pub log_format: String,
    /// Log filter, e.g. `info` or `info,foresight_k8s=debug`.
    #[arg(long, env = "FORESIGHT_LOG", default_value = "info")]
    pub log_level: String,
    /// Elect a leader among replicas on a coordination.k8s.io Lease (turn off only for a
    /// single replica).
    #[arg(long, env = "FORESIGHT_LEADER_ELECT", default_value_t = true, action = ArgAction::Set)]
    pub leader_elect: bool,
    /// Name of the leader election Lease.
    #[arg(
        long,
        env = "FORESIGHT_LEASE_NAME",
        default_value = "foresight-controller"
    )]
    pub lease_name: String,
    /// Namespace of the Lease (default: the pod's namespace, else the kubeconfig's).
    #[arg(long, env = "POD_NAMESPACE")]
    pub lease_namespace: Option<String>,
    /// This replica's identity in the Lease and in events (default: the host name).
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,
    /// Seconds a Lease holds without renewal.
    #[arg(long, env = "FORESIGHT_LEASE_DURATION", default_value_t = 15)]
    pub lease_duration: u64,
    /// Reconciles in flight at most.
    #[arg(long, env = "FORESIGHT_CONCURRENCY", default_value_t = 16)]
    pub concurrency: u16,
    /// Address of /metrics, /healthz and /readyz.
    #[arg(
        long,
        env = "FORESIGHT_METRICS_ADDRESS",
        default_value = "0.0.0.0:8080"
    )]
    pub metrics_address: SocketAddr,
    /// Seconds between refreshes of metric readings in status when nothing else changed.
    #[arg(long, env = "FORESIGHT_STATUS_REFRESH_INTERVAL", default_value_t = 120)]
    pub status_refresh_interval: u64,
    /// Seconds a namespace's PodMetrics list is shared by its autoscalers (keep it below
    /// the sync period).
    #[arg(long, env = "FORESIGHT_METRICS_MAX_AGE", default_value_t = 10)]
    pub metrics_max_age: u64,
    /// Workload kinds whose scale is read from a watch instead of one GET per sync.
    #[arg(
        long,
        env = "FORESIGHT_CACHED_WORKLOADS",
        value_delimiter = ',',
        default_value = "Deployment,StatefulSet,ReplicaSet"
    )]
    pub cached_workloads: Vec<String>,
    /// Default tolerance (usage-ratio dead band) for objects that set none.
    #[arg(long, env = "FORESIGHT_TOLERANCE", default_value_t = 0.1)]
    pub tolerance: f64,
    /// Default seconds between syncs for objects that set no syncPeriodSeconds.
    #[arg(long, env = "FORESIGHT_SYNC_PERIOD", default_value_t = 15)]
    pub sync_period: i64,
    /// Default CPU initialization period, seconds.
    #[arg(
        long,
        env = "FORESIGHT_CPU_INITIALIZATION_PERIOD",
        default_value_t = 300
    )]
    pub cpu_initialization_period: i64,
    /// Default initial readiness delay, seconds.
    #[arg(long, env = "FORESIGHT_INITIAL_READINESS_DELAY", default_value_t = 30)]
    pub initial_readiness_delay: i64,
    /// Default downscale stabilization window, seconds.
    #[arg(long, env = "FORESIGHT_DOWNSCALE_STABILIZATION", default_value_t = 300)]
    pub downscale_stabilization: i64,
}

impl ControllerArgs {
    fn options(&self, default_namespace: &str) -> anyhow::Result<Options> {
        if !(0.0..=10.0).contains(&self.tolerance) {
            anyhow::bail!(
                "--tolerance must be between 0 and 10, got {}",
                self.tolerance
            );
        }
        if self.sync_period < 1 {
            anyhow::bail!("--sync-period must be at least 1 second");
        }
        let mut cached = Vec::new();
        for name in &self.cached_workloads {
            let name = name.trim();
            if name.is_empty() {
                continue;
            }
            cached.push(WorkloadKind::parse(name).with_context(|| {
                format!("--cached-workloads: {name:?} is not Deployment, StatefulSet or ReplicaSet")
            })?);
        }
        let identity = self.identity.clone().unwrap_or_else(host_name);
        let core = ControllerConfig {
            tolerance: self.tolerance,
            cpu_initialization_period_seconds: self.cpu_initialization_period,
            initial_readiness_delay_seconds: self.initial_readiness_delay,
            downscale_stabilization_seconds: self.downscale_stabilization,
            sync_period_seconds: self.sync_period,
            local_time_zone: jiff::tz::TimeZone::system(),
            ..ControllerConfig::default()
        };
        Ok(Options {
            settings: Settings {
                core,
                status_refresh: Duration::from_secs(self.status_refresh_interval),
                metrics_max_age: Duration::from_secs(self.metrics_max_age),
                ..Settings::default()
            },
            concurrency: self.concurrency.max(1),
            leader: self.leader_elect.then(|| LeaderOptions {
                lease_name: self.lease_name.clone(),
                lease_namespace: self
                    .lease_namespace
                    .clone()
                    .unwrap_or_else(|| default_namespace.to_owned()),
                identity: identity.clone(),
                lease_duration: Duration::from_secs(self.lease_duration.max(1)),
                grace: Duration::from_secs(5),
            }),
            metrics_address: Some(self.metrics_address),
            cached_workloads: cached,
            instance: Some(identity),
        })
    }
}

fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "foresight-controller".to_owned())
}

/// Runs `foresight controller` until SIGINT or SIGTERM.
pub fn run(args: ControllerArgs) -> anyhow::Result<ExitCode> {
    let format = match args.log_format.as_str() {
        "json" => LogFormat::Json,
        "human" => LogFormat::Human,
        _ => LogFormat::Auto,
    };
    telemetry::init_logging(format, &args.log_level);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let config = match &args.kubeconfig {
            Some(path) => {
                let kubeconfig = kube::config::Kubeconfig::read_from(path)
                    .with_context(|| format!("reading kubeconfig {}", path.display()))?;
                let opts = kube::config::KubeConfigOptions {
                    context: args.context.clone(),
                    ..Default::default()
                };
                kube::Config::from_custom_kubeconfig(kubeconfig, &opts)
                    .await
                    .context("loading kubeconfig")?
            }
            None => kube::Config::infer()
                .await
                .context("finding cluster credentials (in-cluster or ~/.kube/config)")?,
        };
        let options = args.options(&config.default_namespace)?;
        let client = kube::Client::try_from(config).context("building the Kubernetes client")?;
        tracing::info!(
            concurrency = options.concurrency,
            leader_election = options.leader.is_some(),
            "starting controller"
        );
        controller::run(client, options, shutdown_signal()).await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
