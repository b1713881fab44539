//! `foresight recommend`: every autoscaler in manifests, its history read from Prometheus,
//! replayed as it runs and with prediction at the same risk; a row per workload, the fleet's
//! totals, the recommended manifests and a fleet report.
//!
//! Workloads stream: each is imported, read, replayed and written by one worker, which keeps
//! only its row; the series are dropped as soon as the replays end, so memory holds the rows
//! and the workers' series, whatever the size of the fleet.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use foresight_api::hpa::MetricSpec;
use foresight_api::import::{import_document, render as render_yaml, ImportError, Imported};
use foresight_api::manifest::parse_documents;
use foresight_api::objective::{ObjectiveSpec, AS_REACTIVE};
use foresight_api::prediction::{DspSpec, HeadroomSpec, PredictionAlgorithm, PredictionSpec};
use foresight_api::quantity::Quantity;
use foresight_api::validation::validate_spec;
use foresight_api::EffectiveHorizontalPodAutoscalerSpec;
use foresight_core::autoscaler::Autoscaler;
use foresight_core::version::KubernetesVersion;
use foresight_k8s::prometheus::{PrometheusClient, PrometheusOptions};
use foresight_sim::evaluation::Assumptions;
use foresight_sim::load::{LoadPoint, LoadTrace};
use foresight_sim::parallel::{parallel_map, threads_for};
use foresight_sim::policy::Policy;
use foresight_sim::recommend::{at_point, recommend, Recommendation};
use foresight_sim::report::fleet::{
    render_fleet, saving_percent, saving_text, totals, FleetRow, Unreplayed,
};
use foresight_sim::report::{render, ReportContext};
use foresight_sim::simulation::CompiledPolicy;
use foresight_sim::{simulate, ModelConfig, Recording};
use jiff::Timestamp;
use serde::Serialize;

use super::input::{io_error, read_input};
use super::recommend_cluster::Listed;
use super::series::describe;
use super::simulate::Progress;

/// Arguments of `foresight recommend`.
#[derive(clap::Args)]
pub struct RecommendArgs {
    /// Manifests holding the autoscalers (HorizontalPodAutoscaler autoscaling/v2 or v1, KEDA
    /// ScaledObject, Crane EffectiveHorizontalPodAutoscaler, Foresight's own); repeat for
    /// several, `-` reads standard input. Without it, the autoscalers of the current
    /// kubeconfig context are read.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Without -f: the namespace whose autoscalers are read (default: the context's).
    #[arg(short = 'n', long, conflicts_with_all = ["files", "all_namespaces"])]
    pub namespace: Option<String>,
    /// Without -f: read the autoscalers of every namespace.
    #[arg(short = 'A', long, conflicts_with = "files")]
    pub all_namespaces: bool,
    /// Without -f: the kubeconfig file (default: KUBECONFIG, then ~/.kube/config, then
    /// in-cluster).
    #[arg(long, value_name = "FILE", conflicts_with = "files")]
    pub kubeconfig: Option<PathBuf>,
    /// Without -f: the kubeconfig context (default: the current one).
    #[arg(long, conflicts_with = "files")]
    pub context: Option<String>,
    /// The Prometheus (or Thanos, Mimir) holding the cluster's history: kube-prometheus-stack's
    /// cAdvisor and kube-state-metrics series, and the series the autoscalers' own queries read.
    #[arg(long, value_name = "URL")]
    pub prometheus_url: String,
    /// A file holding a bearer token for Prometheus.
    #[arg(long, value_name = "FILE")]
    pub prometheus_bearer_token_file: Option<PathBuf>,
    /// How much history to replay, ending at --end.
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", default_value = "14d", value_parser = super::flags::positive_seconds)]
    pub range: i64,
    /// The end of the history: RFC 3339 or Unix seconds [default: now].
    #[arg(long, value_name = "TIME", value_parser = super::series::timestamp)]
    pub end: Option<Timestamp>,
    /// The resolution the history is read at.
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", default_value = "60s", value_parser = super::flags::positive_seconds)]
    pub step: i64,
    /// Time from a pod's creation until it is ready and serves load.
    #[arg(allow_hyphen_values = true, long, default_value = "60s", value_name = "DURATION", value_parser = super::flags::seconds)]
    pub startup_delay: i64,
    /// The hottest CPU utilization target the recommendation may run at (percent of requests):
    /// prediction saves by running hotter while it covers the jumps. The manifests keep the
    /// written target (the risk is measured against it) and set `objective.maxUtilization`.
    #[arg(long, default_value = "90", value_name = "PERCENT", value_parser = super::flags::whole::<1, 1000>)]
    pub max_utilization: i64,
    /// Print the rows and totals as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write one recommended manifest per workload into this directory
    /// (`NAMESPACE_NAME.yaml`), ready for `kubectl apply`.
    #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Write the fleet report to this HTML file; each workload's charts go beside it, in a
    /// directory of the same name without `.html`.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Decide as the HPA of this Kubernetes release (1.28 … 1.37, or a server version).
    #[arg(long, value_name = "VERSION", default_value_t = KubernetesVersion::default())]
    pub kubernetes_version: KubernetesVersion,
}

/// One autoscaler found in the manifests, imported.
struct Job {
    /// Where it was found (`fleet.yaml, document 3`).
    at: String,
    kind: String,
    imported: Imported,
}

impl Job {
    fn namespace(&self) -> &str {
        self.imported
            .object
            .metadata
            .namespace
            .as_deref()
            .unwrap_or("default")
    }

    fn workload(&self) -> String {
        let name = self.imported.object.metadata.name.as_deref().unwrap_or("");
        format!("{}/{name}", self.namespace())
    }
}

/// One workload's result, as printed and as `--json` writes it.
#[derive(Clone, Debug, Serialize)]
struct Row {
    workload: String,
    kind: String,
    /// What was replayed: the metric and the query its history came from.
    replayed: String,
    current_replica_hours: f64,
    current_under_minutes: f64,
    recommended_replica_hours: f64,
    recommended_under_minutes: f64,
    saving_percent: f64,
    prediction_kept: bool,
    risk_budget_percent: Option<f64>,
    why: String,
    /// The replica-hours kube-state-metrics recorded, when it could be read.
    recorded_replica_hours: Option<f64>,
    /// The metrics that were not read or not replayed, and why.
    not_read: Vec<String>,
    /// Every operating point replayed, the current policy first.
    candidates: Vec<Candidate>,
    manifest: Option<String>,
    report: Option<String>,
}

/// One operating point's replay.
#[derive(Clone, Debug, Serialize)]
struct Candidate {
    utilization: Option<i32>,
    prediction: bool,
    risk_budget_percent: Option<f64>,
    replica_hours: f64,
    under_minutes: f64,
}

/// An autoscaler that was not replayed, and why.
#[derive(Clone, Debug, Serialize)]
struct Skipped {
    workload: String,
    at: String,
    reason: String,
}

/// Where the outputs go, and how the history is read.
struct Run {
    client: PrometheusClient,
    runtime: tokio::runtime::Runtime,
    start: Timestamp,
    end: Timestamp,
    step: i64,
    startup_delay: i64,
    max_utilization: i32,
    kubernetes: KubernetesVersion,
    output_dir: Option<PathBuf>,
    /// The directory the workloads' pages go into, and its name relative to the fleet report.
    pages: Option<(PathBuf, String)>,
    source: String,
}

/// Runs `foresight recommend`.
pub fn run(args: RecommendArgs) -> anyhow::Result<ExitCode> {
    let (jobs, mut skipped) = if args.files.is_empty() {
        read_cluster(&args)?
    } else {
        read_autoscalers(&args.files)?
    };
    if jobs.is_empty() && skipped.is_empty() {
        anyhow::bail!(
            "no HorizontalPodAutoscaler, KEDA ScaledObject, Crane EffectiveHorizontalPodAutoscaler \
             or Foresight autoscaler found"
        );
    }
    let ctx = context(&args)?;
    let progress = Progress::labelled(jobs.len() as u64, !args.quiet, "replaying");
    let results = parallel_map(&jobs, threads_for(jobs.len()), |job| {
        let result = replay_workload(job, &ctx);
        progress.advance(1);
        result
    });
    progress.finish();
    let mut rows = Vec::new();
    for (job, result) in jobs.iter().zip(results) {
        match result {
            Ok(row) => rows.push(row),
            Err(reason) => skipped.push(Skipped {
                workload: job.workload(),
                at: job.at.clone(),
                reason,
            }),
        }
    }
    if let Some(report) = &args.report {
        write_fleet_report(report, &rows, &skipped, &ctx.source)?;
    }
    if args.json {
        print_json(&rows, &skipped)?;
    } else {
        print_table(&rows, &skipped);
        if let Some(report) = &args.report {
            println!("report: {}", report.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every autoscaler in `files`, imported as `foresight import` does; the ones that cannot be
/// imported are skipped with the reason. Documents of other kinds are left out silently, as
/// `kubectl get all -o yaml` holds many.
fn read_autoscalers(files: &[PathBuf]) -> anyhow::Result<(Vec<Job>, Vec<Skipped>)> {
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let text = read_input(file).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let docs = parse_documents(&text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        for (i, doc) in docs.iter().enumerate() {
            let at = format!("{name}, document {}", i + 1);
            import_one(at, doc, &mut jobs, &mut skipped);
        }
    }
    Ok((jobs, skipped))
}

/// Every autoscaler of the current kubeconfig context, imported as manifests are.
fn read_cluster(args: &RecommendArgs) -> anyhow::Result<(Vec<Job>, Vec<Skipped>)> {
    let listed = super::recommend_cluster::list(
        args.kubeconfig.as_deref(),
        args.context.as_deref(),
        args.namespace.as_deref(),
        args.all_namespaces,
    )?;
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for item in listed {
        match item {
            Listed::Document(at, doc) => import_one(at, &doc, &mut jobs, &mut skipped),
            Listed::Unread(what, why) => skipped.push(Skipped {
                workload: what,
                at: "cluster".to_owned(),
                reason: why,
            }),
        }
    }
    Ok((jobs, skipped))
}

/// Imports `doc` (found `at`) into a job, or records why it cannot be replayed; other kinds
/// are left out.
fn import_one(
    at: String,
    doc: &serde_json::Value,
    jobs: &mut Vec<Job>,
    skipped: &mut Vec<Skipped>,
) {
    let kind = doc
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or_default()
        .to_owned();
    match import_document(doc, Default::default()) {
        Ok(imported) if imported.problems.is_empty() => jobs.push(Job { at, kind, imported }),
        Ok(imported) => skipped.push(Skipped {
            workload: workload_of(doc),
            at,
            reason: format!(
                "invalid after conversion: {}",
                imported
                    .problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }),
        Err(ImportError::Unsupported { .. }) => {}
        Err(e @ ImportError::Field(_)) => skipped.push(Skipped {
            workload: workload_of(doc),
            at,
            reason: format!("not imported: {e}"),
        }),
    }
}

/// `namespace/name` of a raw document.
fn workload_of(doc: &serde_json::Value) -> String {
    let meta = &doc["metadata"];
    format!(
        "{}/{}",
        meta["namespace"].as_str().unwrap_or("default"),
        meta["name"].as_str().unwrap_or("")
    )
}

fn context(args: &RecommendArgs) -> anyhow::Result<Run> {
    let options = PrometheusOptions {
        bearer_token_file: args.prometheus_bearer_token_file.clone(),
        ..Default::default()
    };
    let client = PrometheusClient::new(&args.prometheus_url, options)?;
    let end = args.end.unwrap_or_else(Timestamp::now);
    let end = Timestamp::from_second(end.as_second() - end.as_second().rem_euclid(args.step))?;
    let start = Timestamp::from_second(end.as_second().saturating_sub(args.range))
        .context("--range reaches before the year 0")?;
    // One runtime for every worker: they block on it in turn, sharing the client's
    // connections.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    if let Some(dir) = &args.output_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!("-o {}: cannot create it: {}", dir.display(), io_error(&e))
        })?;
    }
    let pages = match &args.report {
        Some(report) => Some(pages_dir(report)?),
        None => None,
    };
    Ok(Run {
        client,
        runtime,
        start,
        end,
        step: args.step,
        startup_delay: args.startup_delay,
        max_utilization: i32::try_from(args.max_utilization)?,
        kubernetes: args.kubernetes_version,
        output_dir: args.output_dir.clone(),
        pages,
        source: format!(
            "{} ({} to {}, {})",
            args.prometheus_url,
            start,
            end,
            describe(args.range)
        ),
    })
}

/// The directory beside `report` the workloads' pages go into (created now, so that a
/// mistyped path fails before the replays), and its name relative to the report.
fn pages_dir(report: &Path) -> anyhow::Result<(PathBuf, String)> {
    let parent = report
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        anyhow::bail!(
            "--report {}: the directory {} does not exist",
            report.display(),
            parent.display()
        );
    }
    let stem = report
        .file_stem()
        .map_or_else(|| "report".to_owned(), |s| s.to_string_lossy().into_owned());
    let name = format!("{stem}-workloads");
    let dir = parent.join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| {
        anyhow::anyhow!(
            "--report: cannot create {}: {}",
            dir.display(),
            io_error(&e)
        )
    })?;
    Ok((dir, name))
}

// ---------------------------------------------------------------------------------------------
// One workload: its metrics' history, the replays, the outputs.
// ---------------------------------------------------------------------------------------------

/// The metric replayed and the history read for it.
struct History {
    /// The index in `spec.metrics` of the metric replayed.
    metric: usize,
    /// The query its history came from.
    query: String,
    load: LoadTrace,
    /// The pods' mean CPU request (millicores), for a CPU metric.
    request_millicores: Option<i64>,
    not_read: Vec<String>,
}

/// Reads, replays and writes one workload; `Err` says why it was not replayed.
fn replay_workload(job: &Job, ctx: &Run) -> Result<Row, String> {
    let spec = &job.imported.object.spec;
    let history = read_history(job, ctx)?;
    let recorded = recorded_replica_hours(job, ctx);
    let mut replayed_spec = spec.clone();
    replayed_spec.metrics = vec![spec.metrics[history.metric].clone()];
    replayed_spec.prediction = Some(prediction_at(spec.prediction.as_ref(), None));
    replayed_spec.objective = Some(objective(spec, ctx.max_utilization));
    let policy = Policy {
        name: job.workload(),
        spec: replayed_spec,
    };
    let predictive = policy
        .compile_as(ctx.kubernetes)
        .map_err(|e| format!("cannot be replayed: {e}"))?;
    let model = model_for(&predictive, &history, ctx);
    let outcome = recommend(&predictive, &history.load, &model, &|_| {});
    let manifest = match &ctx.output_dir {
        Some(dir) => Some(write_manifest(job, &outcome, ctx.max_utilization, dir)?),
        None => None,
    };
    let report = match &ctx.pages {
        Some((dir, name)) => Some(write_page(
            job,
            &predictive,
            &outcome,
            &history,
            &model,
            ctx,
            dir,
            name,
        )?),
        None => None,
    };
    let mut not_read = history.not_read;
    if let Err(why) = &recorded {
        not_read.push(format!("replicas: {why}"));
    }
    Ok(Row {
        workload: job.workload(),
        kind: job.kind.clone(),
        replayed: format!("spec.metrics[{}] from {}", history.metric, history.query),
        current_replica_hours: outcome.current.replica_hours,
        current_under_minutes: outcome.current.under_minutes,
        recommended_replica_hours: outcome.recommended.replica_hours,
        recommended_under_minutes: outcome.recommended.under_minutes,
        saving_percent: saving_percent(
            outcome.current.replica_hours,
            outcome.recommended.replica_hours,
        ),
        prediction_kept: outcome.prediction_kept,
        risk_budget_percent: outcome.recommended.knobs.risk_budget_percent,
        candidates: outcome
            .replayed
            .iter()
            .map(|r| Candidate {
                utilization: r.knobs.utilization,
                prediction: r.knobs.prediction,
                risk_budget_percent: r.knobs.risk_budget_percent,
                replica_hours: r.replica_hours,
                under_minutes: r.under_minutes,
            })
            .collect(),
        why: outcome.why,
        recorded_replica_hours: recorded.ok(),
        not_read,
        manifest,
        report,
    })
}

/// The model the replays run in: pods start in `--startup-delay` and carry their request
/// (a Utilization target) or the target (a value target), usage recorded at saturation counts
/// as short, the predictor refitted every few hours (see `foresight_sim::recommend`).
fn model_for(predictive: &Autoscaler, history: &History, ctx: &Run) -> ModelConfig {
    let assumptions = Assumptions {
        startup_seconds: ctx.startup_delay,
        pod_cpu_request_millicores: history.request_millicores.unwrap_or(1000).max(1),
        prediction_proposed: false,
    };
    ModelConfig {
        refit_interval_seconds: foresight_sim::recommend::REFIT_SECONDS,
        recording: Recording::ScoresOnly,
        kubernetes: ctx.kubernetes,
        ..assumptions.model(predictive)
    }
}

/// The first metric whose history can be read, and why each other one was not.
fn read_history(job: &Job, ctx: &Run) -> Result<History, String> {
    let spec = &job.imported.object.spec;
    let mut not_read = Vec::new();
    let mut found: Option<(usize, String, LoadTrace)> = None;
    for (i, metric) in spec.metrics.iter().enumerate() {
        let label = metric_label(i, metric);
        let query = match load_query(job, metric) {
            Ok(q) => q,
            Err(why) => {
                not_read.push(format!("{label}: {why}"));
                continue;
            }
        };
        if let Some((first, _, _)) = &found {
            not_read.push(format!(
                "{label}: not replayed: a replay follows one load signal, spec.metrics[{first}]'s ({query})"
            ));
            continue;
        }
        match read_series(ctx, &query) {
            Ok(load) => found = Some((i, query, load)),
            Err(why) => not_read.push(format!("{label}: {query}: {why}")),
        }
    }
    let Some((metric, query, load)) = found else {
        return Err(if not_read.is_empty() {
            "it has no metrics to replay".to_owned()
        } else {
            format!("no metric's history could be read: {}", not_read.join("; "))
        });
    };
    let request_millicores = match cpu_container(&spec.metrics[metric]) {
        Some(container) => {
            let query = request_query(job, container);
            let cores = mean(
                &read_series(ctx, &query)
                    .map_err(|why| format!("the pods' CPU requests ({query}): {why}"))?,
            );
            Some(((cores * 1000.0).round() as i64).max(1))
        }
        None => None,
    };
    Ok(History {
        metric,
        query,
        load,
        request_millicores,
        not_read,
    })
}

/// `spec.metrics[i] (Resource cpu)`.
fn metric_label(i: usize, m: &MetricSpec) -> String {
    let what = if let Some(r) = &m.resource {
        format!("Resource {}", r.name)
    } else if let Some(r) = &m.container_resource {
        format!("ContainerResource {} of {}", r.name, r.container)
    } else if let Some(p) = &m.pods {
        format!("Pods {}", p.metric.name)
    } else if let Some(o) = &m.object {
        format!("Object {}", o.metric.name)
    } else if let Some(e) = &m.external {
        format!("External {}", e.metric.name)
    } else if let Some(p) = &m.prometheus {
        format!("Prometheus {}", p.name)
    } else {
        m.type_.clone()
    };
    format!("spec.metrics[{i}] ({what})")
}

/// For a CPU metric, `Some(container)` (`None` inside: every container of the pod).
fn cpu_container(m: &MetricSpec) -> Option<Option<&str>> {
    if m.resource.as_ref().is_some_and(|r| r.name == "cpu") {
        return Some(None);
    }
    m.container_resource
        .as_ref()
        .filter(|r| r.name == "cpu")
        .map(|r| Some(r.container.as_str()))
}

/// The PromQL query whose answer is `metric`'s load over time, or why there is none.
fn load_query(job: &Job, metric: &MetricSpec) -> Result<String, String> {
    if let Some(p) = &metric.prometheus {
        return Ok(p.history_query.clone().unwrap_or_else(|| p.query.clone()));
    }
    if let Some(container) = cpu_container(metric) {
        let mut selector = pod_selector(job);
        match container {
            Some(c) => selector.push_str(&format!(",container=\"{}\"", label_value(c))),
            None => selector.push_str(",container!=\"\",container!=\"POD\""),
        }
        return Ok(format!(
            "sum(rate(container_cpu_usage_seconds_total{{{selector}}}[5m]))"
        ));
    }
    let memory = metric.resource.as_ref().is_some_and(|r| r.name == "memory")
        || metric
            .container_resource
            .as_ref()
            .is_some_and(|r| r.name == "memory");
    if memory {
        return Err(format!(
            "not replayed: the simulator models CPU as the resource load, not memory \
             (its history is sum(container_memory_working_set_bytes{{{}}}))",
            pod_selector(job)
        ));
    }
    if let Some(p) = &metric.pods {
        return Ok(format!("sum({}{{{}}})", p.metric.name, pod_selector(job)));
    }
    if metric.object.is_some() {
        return Err(
            "not read: no query can be derived for an Object metric (the series \
                    behind the custom metrics API is the adapter's); write it as type: \
                    Prometheus"
                .to_owned(),
        );
    }
    if metric.external.is_some() {
        return Err(
            "not read: no query can be derived for an External metric (the series \
                    behind the external metrics API is the adapter's); write it as type: \
                    Prometheus"
                .to_owned(),
        );
    }
    Err(format!("not read: metric type {:?}", metric.type_))
}

/// The target's pods, as kube-prometheus-stack labels them: the namespace, and pod names the
/// workload's controller gives (`<name>-...`).
fn pod_selector(job: &Job) -> String {
    let name = &job.imported.object.spec.scale_target_ref.name;
    format!(
        "namespace=\"{}\",pod=~\"{}-.*\"",
        label_value(job.namespace()),
        label_value(&regex_literal(name))
    )
}

/// The pods' mean CPU request in cores: kube-state-metrics' requests over the pods that have
/// one.
fn request_query(job: &Job, container: Option<&str>) -> String {
    let mut selector = pod_selector(job);
    selector.push_str(",resource=\"cpu\"");
    if let Some(c) = container {
        selector.push_str(&format!(",container=\"{}\"", label_value(c)));
    }
    format!(
        "sum(kube_pod_container_resource_requests{{{selector}}}) / \
         count(count by (pod) (kube_pod_container_resource_requests{{{selector}}}))"
    )
}

/// The replicas kube-state-metrics recorded for the target, integrated over the range.
fn recorded_replica_hours(job: &Job, ctx: &Run) -> Result<f64, String> {
    let target = &job.imported.object.spec.scale_target_ref;
    let (metric, label) = match target.kind.as_str() {
        "Deployment" => ("kube_deployment_status_replicas", "deployment"),
        "StatefulSet" => ("kube_statefulset_status_replicas", "statefulset"),
        "ReplicaSet" => ("kube_replicaset_status_replicas", "replicaset"),
        other => {
            return Err(format!(
                "kube-state-metrics records no replicas of a {other}"
            ))
        }
    };
    let query = format!(
        "sum({metric}{{namespace=\"{}\",{label}=\"{}\"}})",
        label_value(job.namespace()),
        label_value(&target.name)
    );
    let series = read_series(ctx, &query).map_err(|why| format!("{query}: {why}"))?;
    Ok(mean(&series) * (series.end() - series.start()) as f64 / 3600.0)
}

/// The mean of a series' samples.
fn mean(series: &LoadTrace) -> f64 {
    let points = series.points();
    points.iter().map(|p| p.value).sum::<f64>() / points.len().max(1) as f64
}

/// `text` as a PromQL string literal's content.
fn label_value(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `text` matched literally by a RE2 regular expression.
fn regex_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The one series `query` returns over the range, as load.
fn read_series(ctx: &Run, query: &str) -> Result<LoadTrace, String> {
    let step = Duration::from_secs(ctx.step.unsigned_abs());
    let series = ctx
        .runtime
        .block_on(ctx.client.query_range(query, ctx.start, ctx.end, step))
        .map_err(|e| e.to_string())?;
    let one = match series.as_slice() {
        [] => return Err(format!("no series between {} and {}", ctx.start, ctx.end)),
        [one] => one,
        more => {
            return Err(format!(
                "{} series; the replay needs one (aggregate it, e.g. sum(...))",
                more.len()
            ))
        }
    };
    if let Some(p) = one.points.iter().find(|p| p.value < 0.0) {
        return Err(format!(
            "value {} at {} is negative; load cannot be below 0",
            p.value, p.ts
        ));
    }
    let points = one
        .points
        .iter()
        .map(|p| LoadPoint {
            ts: p.ts,
            value: p.value,
        })
        .collect();
    LoadTrace::new(points).map_err(|e| e.to_string())
}

/// The prediction the recommendation runs: the imported one (Crane's) or Crane's DSP on a
/// week of one-minute samples, with learned headroom at `risk_budget` percent.
fn prediction_at(imported: Option<&PredictionSpec>, risk_budget: Option<f64>) -> PredictionSpec {
    let mut p = imported.cloned().unwrap_or_else(|| PredictionSpec {
        prediction_algorithm: Some(PredictionAlgorithm {
            algorithm_type: "dsp".to_owned(),
            dsp: Some(DspSpec {
                sample_interval: Some("60s".to_owned()),
                history_length: Some("7d".to_owned()),
                estimators: None,
            }),
            percentile: None,
        }),
        ..Default::default()
    });
    if let Some(budget) = risk_budget {
        let headroom = p.headroom.get_or_insert_with(HeadroomSpec::default);
        headroom.enabled = Some(true);
        headroom.risk_budget_percent = Some(Quantity::from_milli((budget * 1000.0).round() as i64));
    }
    p
}

/// Writes the recommended manifest of `job` into `dir`: the imported object, with prediction
/// at the chosen risk budget and `objective: {shortfall: AsReactive}` when prediction is
/// kept, else as imported; notes name what could not be carried and what was chosen.
fn write_manifest(
    job: &Job,
    outcome: &Recommendation,
    max_utilization: i32,
    dir: &Path,
) -> Result<String, String> {
    let mut imported = job.imported.clone();
    let spec = &mut imported.object.spec;
    let knobs = &outcome.recommended.knobs;
    if outcome.prediction_kept {
        spec.prediction = Some(prediction_at(
            spec.prediction.as_ref(),
            knobs.risk_budget_percent,
        ));
        spec.objective = Some(objective(spec, max_utilization));
    } else if let Some(u) = knobs.utilization {
        // A hotter target alone was as safe: it is written, as there is no objective to
        // move it.
        move_utilization_targets(spec, u);
    }
    imported.notes.push(format!(
        "foresight recommend: {} ({:.1} replica-h against {:.1} now; {:.1} min under-provisioned against {:.1})",
        outcome.why,
        outcome.recommended.replica_hours,
        outcome.current.replica_hours,
        outcome.recommended.under_minutes,
        outcome.current.under_minutes
    ));
    imported.problems = validate_spec(&imported.object.spec);
    if let Some(problem) = imported.problems.first() {
        return Err(format!("the recommended manifest is invalid: {problem}"));
    }
    let yaml = render_yaml(&imported).map_err(|e| format!("writing YAML: {e}"))?;
    let path = dir.join(format!("{}.yaml", file_name(job)));
    std::fs::write(&path, yaml)
        .map_err(|e| format!("cannot write {}: {}", path.display(), io_error(&e)))?;
    Ok(path.display().to_string())
}

/// `objective: {shortfall: AsReactive}`, up to `max_utilization` when the spec has a
/// Utilization target below it: as safe as the spec without prediction at its written target.
fn objective(spec: &EffectiveHorizontalPodAutoscalerSpec, max_utilization: i32) -> ObjectiveSpec {
    let hotter = first_utilization(spec).is_some_and(|u| u < max_utilization);
    ObjectiveSpec {
        shortfall: AS_REACTIVE.to_owned(),
        max_utilization: hotter.then_some(max_utilization),
    }
}

/// The first metric's Utilization target, as written.
fn first_utilization(spec: &EffectiveHorizontalPodAutoscalerSpec) -> Option<i32> {
    spec.metrics
        .iter()
        .find_map(|m| utilization_target(m).copied())
}

fn utilization_target(m: &MetricSpec) -> Option<&i32> {
    let target = m
        .resource
        .as_ref()
        .map(|r| &r.target)
        .or(m.container_resource.as_ref().map(|r| &r.target))?;
    target.average_utilization.as_ref()
}

/// Moves every Utilization target in proportion, the first to `to` (as the tuner's
/// operating points move them).
fn move_utilization_targets(spec: &mut EffectiveHorizontalPodAutoscalerSpec, to: i32) {
    let Some(first) = first_utilization(spec).filter(|f| *f > 0 && *f != to) else {
        return;
    };
    for m in &mut spec.metrics {
        let target = match (m.resource.as_mut(), m.container_resource.as_mut()) {
            (Some(r), _) => &mut r.target,
            (None, Some(r)) => &mut r.target,
            (None, None) => continue,
        };
        if let Some(own) = target.average_utilization.as_mut() {
            let moved = (i64::from(*own) * i64::from(to) + i64::from(first) / 2) / i64::from(first);
            *own = i32::try_from(moved.max(1)).unwrap_or(*own);
        }
    }
}

/// `namespace_name`: unambiguous, as Kubernetes names hold no `_`.
fn file_name(job: &Job) -> String {
    let name = job
        .imported
        .object
        .metadata
        .name
        .as_deref()
        .unwrap_or("unnamed");
    format!("{}_{name}", job.namespace())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Replays the current policy and the recommendation again, recording what the charts draw,
/// and writes the workload's page; returns its path relative to the fleet report.
#[allow(clippy::too_many_arguments)]
fn write_page(
    job: &Job,
    predictive: &Autoscaler,
    outcome: &Recommendation,
    history: &History,
    model: &ModelConfig,
    ctx: &Run,
    dir: &Path,
    name: &str,
) -> Result<String, String> {
    let policies = [
        CompiledPolicy {
            name: "current (no prediction)".to_owned(),
            autoscaler: at_point(predictive, &outcome.current.knobs),
        },
        CompiledPolicy {
            name: "recommended".to_owned(),
            autoscaler: at_point(predictive, &outcome.recommended.knobs),
        },
    ];
    let model = ModelConfig {
        recording: Recording::Full,
        ..model.clone()
    };
    let simulation = simulate(&history.load, &policies, &model, &|_| {})
        .map_err(|e| format!("the report's replay: {e}"))?;
    let source = format!("{} ({})", history.query, ctx.source);
    let html = render(
        &simulation,
        &ReportContext {
            source: &source,
            model: &model,
            unit: if history.request_millicores.is_some() {
                "cores"
            } else {
                "load units"
            },
            time_zone: jiff::tz::TimeZone::UTC,
            frontier: None,
            closed_gaps: &[],
        },
    );
    let file = format!("{}.html", file_name(job));
    let path = dir.join(&file);
    std::fs::write(&path, html)
        .map_err(|e| format!("cannot write {}: {}", path.display(), io_error(&e)))?;
    Ok(format!("{name}/{file}"))
}

// ---------------------------------------------------------------------------------------------
// Output.
// ---------------------------------------------------------------------------------------------

fn fleet_rows(rows: &[Row]) -> Vec<FleetRow> {
    rows.iter()
        .map(|r| FleetRow {
            workload: r.workload.clone(),
            kind: r.kind.clone(),
            current: (r.current_replica_hours, r.current_under_minutes),
            recommended: (r.recommended_replica_hours, r.recommended_under_minutes),
            saving_percent: r.saving_percent,
            prediction: (r.prediction_kept, r.why.clone()),
            page: r.report.clone(),
        })
        .collect()
}

fn write_fleet_report(
    path: &Path,
    rows: &[Row],
    skipped: &[Skipped],
    source: &str,
) -> anyhow::Result<()> {
    let unreplayed: Vec<Unreplayed> = skipped
        .iter()
        .map(|s| Unreplayed {
            workload: format!("{} ({})", s.workload, s.at),
            reason: s.reason.clone(),
        })
        .collect();
    let html = render_fleet(&fleet_rows(rows), &unreplayed, source);
    std::fs::write(path, html).map_err(|e| {
        anyhow::anyhow!(
            "cannot write the report {}: {}",
            path.display(),
            io_error(&e)
        )
    })
}

#[derive(Serialize)]
struct Totals {
    workloads: usize,
    current_replica_hours: f64,
    current_under_minutes: f64,
    recommended_replica_hours: f64,
    recommended_under_minutes: f64,
    saving_percent: f64,
}

fn fleet_totals(rows: &[Row]) -> Totals {
    let (current, recommended) = totals(&fleet_rows(rows));
    Totals {
        workloads: rows.len(),
        current_replica_hours: current,
        current_under_minutes: rows.iter().map(|r| r.current_under_minutes).sum(),
        recommended_replica_hours: recommended,
        recommended_under_minutes: rows.iter().map(|r| r.recommended_under_minutes).sum(),
        saving_percent: saving_percent(current, recommended),
    }
}

fn print_json(rows: &[Row], skipped: &[Skipped]) -> anyhow::Result<()> {
    let out = serde_json::json!({
        "workloads": rows,
        "totals": fleet_totals(rows),
        "not_replayed": skipped,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

fn print_table(rows: &[Row], skipped: &[Skipped]) {
    println!(
        "{:<32} {:<24} {:>10} {:>10} {:>10} {:>10} {:>8}  prediction",
        "workload", "kind", "replica-h", "under min", "rec. rep-h", "rec. under", "saving"
    );
    for r in rows {
        println!(
            "{:<32} {:<24} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>7.1}%  {}: {}",
            r.workload,
            r.kind,
            r.current_replica_hours,
            r.current_under_minutes,
            r.recommended_replica_hours,
            r.recommended_under_minutes,
            r.saving_percent,
            if r.prediction_kept {
                "kept"
            } else {
                "not kept"
            },
            r.why
        );
    }
    let t = fleet_totals(rows);
    println!(
        "{:<32} {:<24} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>7.1}%  {}",
        format!("fleet ({} workloads)", t.workloads),
        "",
        t.current_replica_hours,
        t.current_under_minutes,
        t.recommended_replica_hours,
        t.recommended_under_minutes,
        t.saving_percent,
        saving_text(t.current_replica_hours, t.recommended_replica_hours)
    );
    let notes: Vec<(&str, &String)> = rows
        .iter()
        .flat_map(|r| r.not_read.iter().map(move |n| (r.workload.as_str(), n)))
        .collect();
    if !notes.is_empty() {
        println!();
        println!("not read:");
        for (workload, note) in notes {
            println!("  {workload}: {note}");
        }
    }
    if !skipped.is_empty() {
        println!();
        println!("not replayed:");
        for s in skipped {
            println!("  {} ({}): {}", s.workload, s.at, s.reason);
        }
    }
    for r in rows {
        if let Some(m) = &r.manifest {
            println!("manifest: {m}");
        }
    }
}
