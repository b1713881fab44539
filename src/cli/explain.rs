//! `foresight explain`: the decision for a snapshot (`--snapshot FILE`), or the last decision
//! of a live autoscaler read from the cluster (`-n NAMESPACE NAME`, or `-A` for a summary of
//! all of them), as a table or JSON. Installed as `kubectl-foresight`, the binary is also a
//! kubectl plugin: `kubectl foresight explain web -n shop`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use foresight_api::manifest::{from_value, parse_documents};
use foresight_core::decision::{decide, ScaleOutcome};
use foresight_core::explain::render;
use foresight_core::snapshot::Snapshot;
use foresight_core::version::KubernetesVersion;

/// Arguments of `foresight explain`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["snapshot", "name", "all_namespaces"])))]
pub struct ExplainArgs {
    /// A snapshot file (YAML or JSON): `now`, `autoscaler` (manifest with status), `scale`,
    /// `pods`, `metrics`, and optionally `history`, `forecasts`, `config`.
    #[arg(long, conflicts_with_all = ["name", "all_namespaces", "namespace"])]
    pub snapshot: Option<PathBuf>,
    /// A live autoscaler's name: its last decision, conditions and rescales, from the cluster.
    #[arg(conflicts_with = "all_namespaces")]
    pub name: Option<String>,
    /// The live autoscaler's namespace (default: the kubeconfig context's).
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// One line per autoscaler in every namespace.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Kubeconfig file (default: KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: the current one).
    #[arg(long)]
    pub context: Option<String>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// With --snapshot: decide as the HPA of this Kubernetes release (1.28 … 1.37, or a
    /// server version such as v1.37.2). Overrides the snapshot's config.kubernetes; default the
    /// newest.
    #[arg(long, value_name = "VERSION", requires = "snapshot")]
    pub kubernetes_version: Option<KubernetesVersion>,
}

/// Runs `foresight explain`.
pub fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    match &args.snapshot {
        Some(path) => explain_snapshot(path, args.json, args.kubernetes_version),
        None => super::live::explain(&args),
    }
}

/// The kind of a Kubernetes object given where a snapshot was expected: a document with
/// `apiVersion` and `kind` at the top and none of a snapshot's own fields.
fn manifest_kind(doc: &serde_json::Value) -> Option<&str> {
    let object = doc.as_object()?;
    let is_snapshot = ["now", "autoscaler", "scale"]
        .iter()
        .any(|field| object.contains_key(*field));
    let kind = object.get("kind")?.as_str()?;
    (object.contains_key("apiVersion") && !is_snapshot).then_some(kind)
}

fn explain_snapshot(
    path: &std::path::Path,
    json: bool,
    kubernetes: Option<KubernetesVersion>,
) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let docs = parse_documents(&text)
        .with_context(|| format!("{} is not valid YAML or JSON", path.display()))?;
    let [doc] = docs.as_slice() else {
        anyhow::bail!(
            "{}: expected exactly one snapshot document, found {}",
            path.display(),
            docs.len()
        );
    };
    if let Some(kind) = manifest_kind(doc) {
        anyhow::bail!(
            "{}: {} {kind} manifest, not a snapshot. A snapshot holds the manifest under \
             `autoscaler:` (with its status) beside `now`, `scale`, `pods` and `metrics`: see \
             examples/snapshots/. For an autoscaler running in a cluster, run `foresight \
             explain -n NAMESPACE NAME` instead",
            path.display(),
            if kind.starts_with(['A', 'E', 'I', 'O', 'U']) {
                "an"
            } else {
                "a"
            }
        );
    }
    let snapshot: Snapshot =
        from_value(doc, "").map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let prepared = snapshot
        .prepare_as(kubernetes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let decision = decide(
        &prepared.autoscaler,
        &prepared.observation,
        prepared.status,
        snapshot.history.clone(),
        snapshot.now,
    );
    let scale_to = decision.scale_to;
    let outcome = match (scale_to, &snapshot.scale.update_error) {
        (None, _) => ScaleOutcome::NotAttempted,
        (Some(_), Some(e)) => ScaleOutcome::Failed(e.clone()),
        (Some(_), None) => ScaleOutcome::Applied { at: snapshot.now },
    };
    let result = decision.finish(&prepared.autoscaler, outcome);
    let record = result.status.last_decision.clone().unwrap_or_default();
    if json {
        let events: Vec<serde_json::Value> = result
            .events
            .iter()
            .map(|e| serde_json::json!({"type": e.type_.as_str(), "reason": e.reason, "message": e.message}))
            .collect();
        let out = serde_json::json!({
            "scaleTo": scale_to,
            "decision": record,
            "status": result.status,
            "events": events,
            "error": result.error,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!(
            "{}",
            render(
                &prepared.autoscaler,
                &record,
                &result.status,
                &result.events,
                scale_to
            )
        );
        if let Some(e) = &result.error {
            println!("\nreconcile error: {e}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
