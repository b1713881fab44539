//! `foresight controller`: runs the Kubernetes controller.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::ArgAction;
use foresight_api::duration::format_duration;
use foresight_core::autoscaler::ControllerConfig;
use foresight_core::version::KubernetesVersion;
use foresight_k8s::controller::{self, ControllerOptions, PrometheusSettings};
use foresight_k8s::forecasts::ForecastSettings;
use foresight_k8s::leader::LeaderOptions;
use foresight_k8s::prometheus::promql;
use foresight_k8s::prometheus::{PrometheusClient, PrometheusOptions};
use foresight_k8s::reconcile::ReconcileSettings;
use foresight_k8s::target::WorkloadKind;
use foresight_k8s::telemetry::{self, LogFormat};

/// Arguments of `foresight controller`. Every flag can also be set by its environment
/// variable, as a container spec usually does.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
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
    /// `--leader-elect` alone means true, as in Go controllers.
    #[arg(long, env = "FORESIGHT_LEADER_ELECT", default_value_t = true, action = ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", require_equals = true)]
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
    /// How long a Lease holds without renewal.
    #[arg(allow_hyphen_values = true, long, env = "FORESIGHT_LEASE_DURATION", default_value = "15s", value_name = "DURATION", value_parser = crate::cli::flags::duration)]
    pub lease_duration: Duration,
    /// Reconciles in flight at most (1 to 1000).
    #[arg(long, env = "FORESIGHT_CONCURRENCY", default_value = "64", value_parser = crate::cli::flags::whole::<1, 1000>)]
    pub concurrency: i64,
    /// Address of /metrics, /healthz and /readyz.
    #[arg(
        long,
        env = "FORESIGHT_METRICS_ADDRESS",
        default_value = "0.0.0.0:8080"
    )]
    pub metrics_address: SocketAddr,
    /// How often metric readings in status are refreshed when nothing else changed.
    #[arg(allow_hyphen_values = true, long, env = "FORESIGHT_STATUS_REFRESH_INTERVAL", default_value = "2m", value_name = "DURATION", value_parser = crate::cli::flags::duration)]
    pub status_refresh_interval: Duration,
    /// How long a namespace's PodMetrics list is shared by its autoscalers (keep it below
    /// the sync period).
    #[arg(allow_hyphen_values = true, long, env = "FORESIGHT_METRICS_MAX_AGE", default_value = "10s", value_name = "DURATION", value_parser = crate::cli::flags::duration)]
    pub metrics_max_age: Duration,
    /// Workload kinds whose scale is read from a watch instead of one GET per sync.
    #[arg(
        long,
        env = "FORESIGHT_CACHED_WORKLOADS",
        value_delimiter = ',',
        default_value = "Deployment,StatefulSet,ReplicaSet"
    )]
    pub cached_workloads: Vec<String>,
    /// Default tolerance (usage-ratio dead band) for objects that set none (0 to 10).
    #[arg(long, env = "FORESIGHT_TOLERANCE", default_value = "0.1", value_parser = tolerance)]
    pub tolerance: f64,
    /// Default time between syncs for objects that set no syncPeriodSeconds (whole seconds).
    #[arg(allow_hyphen_values = true, long, env = "FORESIGHT_SYNC_PERIOD", default_value = "15s", value_name = "DURATION", value_parser = crate::cli::flags::duration)]
    pub sync_period: Duration,
    /// Default CPU initialization period (whole seconds).
    #[arg(allow_hyphen_values = true, long, env = "FORESIGHT_CPU_INITIALIZATION_PERIOD", default_value = "5m", value_name = "DURATION", value_parser = crate::cli::flags::duration)]
    pub cpu_initialization_period: Duration,
    /// Default initial readiness delay (whole seconds).
    #[arg(allow_hyphen_values = true, long, env = "FORESIGHT_INITIAL_READINESS_DELAY", default_value = "30s", value_name = "DURATION", value_parser = crate::cli::flags::duration)]
    pub initial_readiness_delay: Duration,
    /// Default downscale stabilization window (whole seconds).
    #[arg(allow_hyphen_values = true, long, env = "FORESIGHT_DOWNSCALE_STABILIZATION", default_value = "5m", value_name = "DURATION", value_parser = crate::cli::flags::duration)]
    pub downscale_stabilization: Duration,
    /// Prometheus' base URL (Prometheus, Thanos, Mimir, ...), for `type: Prometheus` metrics
    /// and prediction history. Without it those metrics fail and prediction reports
    /// PredictionReady=False; everything else works.
    #[arg(long, env = "FORESIGHT_PROMETHEUS_URL", value_name = "URL")]
    pub prometheus_url: Option<String>,
    /// File holding a bearer token for Prometheus, read for every request so rotated tokens
    /// are picked up.
    #[arg(
        long,
        env = "FORESIGHT_PROMETHEUS_BEARER_TOKEN_FILE",
        value_name = "FILE"
    )]
    pub prometheus_bearer_token_file: Option<PathBuf>,
    /// PEM file of CA certificates to trust for Prometheus, besides the system ones.
    #[arg(long, env = "FORESIGHT_PROMETHEUS_CA_FILE", value_name = "FILE")]
    pub prometheus_ca_file: Option<PathBuf>,
    /// A header sent with every Prometheus request, NAME=VALUE (e.g. X-Scope-OrgID=team-a for
    /// a Mimir tenant); repeat the flag for more, or put one per line in the variable.
    #[arg(
        long = "prometheus-header",
        env = "FORESIGHT_PROMETHEUS_HEADERS",
        value_name = "NAME=VALUE",
        value_delimiter = '\n'
    )]
    pub prometheus_headers: Vec<String>,
    /// Timeout of one Prometheus request, connection included (e.g. 10s). A reconcile with a
    /// `type: Prometheus` metric waits at most this long for its value.
    #[arg(
        long,
        env = "FORESIGHT_PROMETHEUS_TIMEOUT",
        default_value = "30s",
        value_name = "DURATION",
        allow_hyphen_values = true,
        value_parser = crate::cli::flags::duration
    )]
    pub prometheus_timeout: Duration,
    /// How often each forecast is recomputed from fresh history (e.g. 1h, 30m; at least 1m).
    #[arg(
        long,
        env = "FORESIGHT_MODEL_UPDATE_INTERVAL",
        default_value = "1h",
        value_name = "DURATION",
        allow_hyphen_values = true,
        value_parser = crate::cli::flags::duration
    )]
    pub model_update_interval: Duration,
    /// The history query of a metric identifier for every autoscaler that sets none in
    /// spec.prediction.historyQueries, IDENTIFIER=PROMQL (e.g.
    /// resource.cpu=sum(node_namespace_pod_container:cpu_rate5m{namespace="${namespace}",pod=~"${pod_regex}"}));
    /// placeholders: ${namespace}, ${target_kind}, ${target_name}, ${pod_regex},
    /// ${metric_name}, ${label_matchers}. Repeat the flag for more, or put one per line in
    /// the variable.
    #[arg(
        long = "history-query",
        env = "FORESIGHT_HISTORY_QUERIES",
        value_name = "IDENTIFIER=PROMQL",
        value_delimiter = '\n'
    )]
    pub history_queries: Vec<String>,
    /// Decide as the HPA of this Kubernetes release (1.28 … 1.37, or a server version such
    /// as v1.37.2) instead of the API server's, which is read at start.
    #[arg(long, env = "FORESIGHT_KUBERNETES_VERSION", value_name = "VERSION")]
    pub kubernetes_version: Option<KubernetesVersion>,
}

/// Whether `name` is an HTTP header name (RFC 9110 token characters).
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The flags' values that are not blank: a variable with one value per line may end in a
/// newline.
fn given(values: &[String]) -> impl Iterator<Item = &str> {
    values.iter().map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// `--tolerance`: a usage-ratio dead band, 0 to 10.
fn tolerance(text: &str) -> Result<f64, String> {
    crate::cli::flags::number_between(text, 0.0, 10.0)
}

impl ControllerArgs {
    /// The controller's options; `prometheus` is what [`ControllerArgs::prometheus`] gave.
    fn options(
        &self,
        default_namespace: &str,
        prometheus: Option<PrometheusSettings>,
    ) -> anyhow::Result<ControllerOptions> {
        if self.sync_period < Duration::from_secs(1) {
            anyhow::bail!("--sync-period must be at least 1s");
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
            cpu_initialization_period_seconds: whole_seconds(
                "--cpu-initialization-period",
                self.cpu_initialization_period,
            )?,
            initial_readiness_delay_seconds: whole_seconds(
                "--initial-readiness-delay",
                self.initial_readiness_delay,
            )?,
            downscale_stabilization_seconds: whole_seconds(
                "--downscale-stabilization",
                self.downscale_stabilization,
            )?,
            sync_period_seconds: whole_seconds("--sync-period", self.sync_period)?,
            local_time_zone: jiff::tz::TimeZone::system(),
            ..ControllerConfig::default()
        };
        Ok(ControllerOptions {
            settings: ReconcileSettings {
                core,
                status_refresh: self.status_refresh_interval,
                metrics_max_age: self.metrics_max_age,
                ..ReconcileSettings::default()
            },
            concurrency: u16::try_from(self.concurrency)?,
            leader: self.leader_elect.then(|| LeaderOptions {
                lease_name: self.lease_name.clone(),
                lease_namespace: self
                    .lease_namespace
                    .clone()
                    .unwrap_or_else(|| default_namespace.to_owned()),
                identity: identity.clone(),
                lease_duration: self.lease_duration,
            }),
            metrics_address: Some(self.metrics_address),
            cached_workloads: cached,
            instance: Some(identity),
            prometheus,
            build: telemetry::Build {
                version: env!("CARGO_PKG_VERSION").to_owned(),
                revision: env!("FORESIGHT_REVISION").to_owned(),
            },
            kubernetes_version: self.kubernetes_version,
        })
    }

    /// The Prometheus settings, checked as far as possible without a request (the URL, the
    /// CA file, the headers, the history queries); `None` without `--prometheus-url`.
    fn prometheus(&self) -> anyhow::Result<Option<PrometheusSettings>> {
        let timeout = self.prometheus_timeout;
        if timeout.is_zero() {
            anyhow::bail!("--prometheus-timeout must be longer than 0s");
        }
        let model_update_interval = self.model_update_interval;
        // Each refresh is a range query over days of history and an FFT.
        if model_update_interval < Duration::from_secs(60) {
            anyhow::bail!(
                "--model-update-interval must be at least 1m, got {}",
                format_duration(model_update_interval)
            );
        }
        let query_overrides = promql::parse_overrides(given(&self.history_queries))
            .map_err(|e| anyhow::anyhow!("--history-query: {e}"))?;
        let mut headers = Vec::new();
        for header in given(&self.prometheus_headers) {
            // The value may be a credential: the messages never quote it.
            match header.split_once('=') {
                Some((name, value)) if is_header_name(name.trim()) => {
                    headers.push((name.trim().to_owned(), value.trim().to_owned()));
                }
                Some((name, _)) if name.trim().is_empty() => {
                    anyhow::bail!("--prometheus-header: a header has an empty NAME")
                }
                Some(_) => anyhow::bail!(
                    "--prometheus-header: a header NAME is not an HTTP header name (letters, digits, '-')"
                ),
                None => anyhow::bail!(
                    "--prometheus-header: a header has no '=': write NAME=VALUE (e.g. X-Scope-OrgID=team-a)"
                ),
            }
        }
        let Some(url) = self.prometheus_url.as_deref().map(str::trim) else {
            // Settings for a Prometheus that is not there are a mistake worth stopping for.
            let set = [
                (
                    "--prometheus-bearer-token-file",
                    self.prometheus_bearer_token_file.is_some(),
                ),
                ("--prometheus-ca-file", self.prometheus_ca_file.is_some()),
                ("--prometheus-header", !headers.is_empty()),
                ("--history-query", !query_overrides.is_empty()),
            ];
            if let Some((flag, _)) = set.iter().find(|(_, set)| *set) {
                anyhow::bail!("{flag} needs --prometheus-url");
            }
            return Ok(None);
        };
        let ca_certificates_pem = match &self.prometheus_ca_file {
            Some(path) => Some(
                std::fs::read(path)
                    .with_context(|| format!("--prometheus-ca-file: reading {}", path.display()))?,
            ),
            None => None,
        };
        let client = PrometheusOptions {
            bearer_token_file: self.prometheus_bearer_token_file.clone(),
            headers,
            ca_certificates_pem,
            timeout,
            ..PrometheusOptions::default()
        };
        // Building the client checks the URL, the headers and the certificates now, not at
        // the first sync.
        PrometheusClient::new(url, client.clone())
            .map_err(|e| anyhow::anyhow!("--prometheus-url: {e}"))?;
        Ok(Some(PrometheusSettings {
            url: url.to_owned(),
            client,
            forecasts: ForecastSettings {
                model_update_interval,
                query_overrides,
                ..ForecastSettings::default()
            },
        }))
    }
}

/// `value` in seconds, for the settings the decision core counts in whole seconds.
fn whole_seconds(flag: &str, value: Duration) -> anyhow::Result<i64> {
    if value.subsec_nanos() != 0 {
        anyhow::bail!("{flag} must be whole seconds, got {value:?}");
    }
    i64::try_from(value.as_secs()).with_context(|| format!("{flag} is too long"))
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
    // Checked before looking for a cluster: a mistyped flag fails at once.
    let prometheus = args.prometheus()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let result = runtime.block_on(async move {
        let config =
            super::kubeconfig::load(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
        let options = args.options(&config.default_namespace, prometheus)?;
        let clients = foresight_k8s::client::Clients::build(config)
            .context("building the Kubernetes client")?;
        tracing::info!(
            concurrency = options.concurrency,
            leader_election = options.leader.is_some(),
            prometheus = options.prometheus.as_ref().map(|p| p.url.as_str()),
            "starting controller"
        );
        let (signalled_tx, signalled) = tokio::sync::oneshot::channel::<()>();
        let shutdown = async move {
            shutdown_signal().await;
            let _ = signalled_tx.send(());
        };
        // In-flight reconciles finish on their own; one stuck on an unreachable API server
        // must not keep the process alive past the grace period (Kubernetes sends SIGKILL
        // after terminationGracePeriodSeconds anyway, and a stuck process delays the standby).
        let deadline = async move {
            if signalled.await.is_ok() {
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            result = controller::run(clients, options, shutdown) => result?,
            () = deadline => tracing::warn!(
                grace = ?SHUTDOWN_GRACE,
                "reconciles still in flight after the shutdown grace period: exiting anyway"
            ),
        }
        tracing::info!("stopped");
        anyhow::Ok(())
    });
    // Blocking tasks (none of ours) must not hold the exit either.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result?;
    Ok(ExitCode::SUCCESS)
}

/// How long in-flight work may take after SIGTERM before the process exits regardless.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        args: ControllerArgs,
    }

    /// `foresight controller <flags>` parsed, then checked as `run` checks it.
    fn options(flags: &[&str]) -> anyhow::Result<ControllerOptions> {
        let args =
            Command::try_parse_from(std::iter::once("controller").chain(flags.iter().copied()))?
                .args;
        let prometheus = args.prometheus()?;
        args.options("default", prometheus)
    }

    fn error(flags: &[&str]) -> String {
        match options(flags) {
            Ok(o) => panic!("{flags:?} was accepted: {o:?}"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn without_a_prometheus_url_there_is_no_prometheus() {
        let o = options(&[]).unwrap();
        assert!(o.prometheus.is_none());
    }

    #[test]
    fn prometheus_flags_become_client_and_forecast_settings() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "t0ken").unwrap();
        let o = options(&[
            "--prometheus-url=https://thanos.example/prometheus/",
            &format!("--prometheus-bearer-token-file={}", token.display()),
            "--prometheus-timeout=10s",
            "--model-update-interval=30m",
            "--prometheus-header=X-Scope-OrgID=team-a",
            "--history-query",
            r#"resource.cpu=sum(cpu:rate5m{namespace="${namespace}",pod=~"${pod_regex}"})"#,
            "--history-query=external.jobs=sum(jobs{queue=\"a\"})",
        ])
        .unwrap();
        let p = o.prometheus.expect("Prometheus settings");
        assert_eq!(p.url, "https://thanos.example/prometheus/");
        assert_eq!(p.client.bearer_token_file.as_deref(), Some(token.as_path()));
        assert_eq!(p.client.timeout, Duration::from_secs(10));
        assert_eq!(
            p.client.headers,
            [("X-Scope-OrgID".to_owned(), "team-a".to_owned())]
        );
        assert_eq!(p.forecasts.model_update_interval, Duration::from_secs(1800));
        assert_eq!(
            p.forecasts.query_overrides.keys().collect::<Vec<_>>(),
            ["external.jobs", "resource.cpu"]
        );
        assert_eq!(
            p.forecasts.query_overrides["external.jobs"],
            r#"sum(jobs{queue="a"})"#
        );
    }

    #[test]
    fn defaults_are_thirty_seconds_and_one_hour() {
        let p = options(&["--prometheus-url=http://prometheus:9090"])
            .unwrap()
            .prometheus
            .unwrap();
        assert_eq!(p.client.timeout, Duration::from_secs(30));
        assert_eq!(p.forecasts.model_update_interval, Duration::from_secs(3600));
        assert!(p.forecasts.query_overrides.is_empty());
        assert_eq!(p.client.bearer_token_file, None);
    }

    #[test]
    fn bad_history_queries_say_what_is_wrong() {
        let url = "--prometheus-url=http://prometheus:9090";
        // The identifier forgotten: the matcher's `=` does not make the query one.
        let e = error(&[url, r#"--history-query=sum(rate(x{job="web"}[5m]))"#]);
        assert!(e.starts_with("--history-query: "), "{e}");
        assert!(e.contains("is not a metric identifier"), "{e}");
        let e = error(&[url, "--history-query=resource.cpu"]);
        assert!(e.contains("is not IDENTIFIER=PROMQL"), "{e}");
        let e = error(&[url, "--history-query=resource.cpu=sum(x{ns=\"${ns}\"})"]);
        assert!(e.contains("${ns}") && e.contains("${namespace}"), "{e}");
        let e = error(&[
            url,
            "--history-query=resource.cpu=a",
            "--history-query=resource.cpu=b",
        ]);
        assert_eq!(e, "--history-query: resource.cpu is given twice");
    }

    #[test]
    fn bad_durations_urls_and_headers_are_refused() {
        let url = "--prometheus-url=http://prometheus:9090";
        assert!(error(&[url, "--prometheus-timeout=0s"]).contains("longer than 0s"));
        let e = error(&[url, "--model-update-interval=10s"]);
        assert!(e.contains("at least 1m"), "{e}");
        let e = error(&[url, "--model-update-interval=soon"]);
        assert!(
            e.contains("--model-update-interval") && e.contains("not a duration"),
            "{e}"
        );
        let e = error(&["--prometheus-url=prometheus:9090"]);
        assert!(
            e.starts_with("--prometheus-url: ") && e.contains("http or https"),
            "{e}"
        );
        let e = error(&["--prometheus-url=not a url"]);
        assert!(e.starts_with("--prometheus-url: "), "{e}");
        let e = error(&[url, "--prometheus-header=Authorization: Basic c2VjcmV0"]);
        assert!(e.contains("no '='") && !e.contains("c2VjcmV0"), "{e}");
        let e = error(&[url, "--prometheus-header==v"]);
        assert!(e.contains("empty NAME"), "{e}");
        // A credential whose padding has a `=` is not mistaken for a name, nor printed.
        let e = error(&[url, "--prometheus-header=Authorization: Basic c2VjcmV0=="]);
        assert!(
            e.contains("not an HTTP header name") && !e.contains("c2VjcmV0"),
            "{e}"
        );
        let e = error(&[url, "--prometheus-ca-file=/nonexistent/ca.pem"]);
        assert!(
            e.contains("--prometheus-ca-file: reading /nonexistent/ca.pem"),
            "{e}"
        );
    }

    #[test]
    fn prometheus_settings_without_a_url_are_a_mistake() {
        let e = error(&["--history-query=resource.cpu=sum(x)"]);
        assert_eq!(e, "--history-query needs --prometheus-url");
        let e = error(&["--prometheus-bearer-token-file=/var/run/token"]);
        assert_eq!(e, "--prometheus-bearer-token-file needs --prometheus-url");
        // The timeout and interval have defaults, so they alone are no mistake.
        assert!(options(&["--prometheus-timeout=5s"])
            .unwrap()
            .prometheus
            .is_none());
    }

    #[test]
    fn time_flags_take_go_durations_or_bare_seconds() {
        let o = options(&[
            "--sync-period=30s",
            "--downscale-stabilization=10m",
            "--cpu-initialization-period=2m30s",
            "--initial-readiness-delay=45",
            "--status-refresh-interval=5m",
            "--metrics-max-age=5s",
            "--lease-duration=20s",
        ])
        .unwrap();
        let core = &o.settings.core;
        assert_eq!(core.sync_period_seconds, 30);
        assert_eq!(core.downscale_stabilization_seconds, 600);
        assert_eq!(core.cpu_initialization_period_seconds, 150);
        assert_eq!(core.initial_readiness_delay_seconds, 45);
        assert_eq!(o.settings.status_refresh, Duration::from_secs(300));
        assert_eq!(o.settings.metrics_max_age, Duration::from_secs(5));
        let leader = o.leader.expect("leader election is on by default");
        assert_eq!(leader.lease_duration, Duration::from_secs(20));

        let defaults = options(&[]).unwrap();
        assert_eq!(defaults.settings.core.sync_period_seconds, 15);
        assert_eq!(defaults.settings.core.downscale_stabilization_seconds, 300);
        assert_eq!(defaults.settings.status_refresh, Duration::from_secs(120));
    }

    #[test]
    fn bad_time_flags_name_the_flag() {
        let e = error(&["--sync-period=soon"]);
        assert!(
            e.contains("--sync-period") && e.contains("not a duration"),
            "{e}"
        );
        let e = error(&["--sync-period=0s"]);
        assert_eq!(e, "--sync-period must be at least 1s");
        let e = error(&["--downscale-stabilization=1500ms"]);
        assert!(
            e.starts_with("--downscale-stabilization must be whole seconds"),
            "{e}"
        );
    }
}
