//! `foresight explain --snapshot FILE`: the decision for a snapshot, as a table or JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use foresight_api::manifest::{from_value, parse_documents};
use foresight_core::decision::{decide, ScaleOutcome};
use foresight_core::explain::render;
use foresight_core::snapshot::Snapshot;

/// Arguments of `foresight explain`.
#[derive(clap::Args)]
pub struct ExplainArgs {
    /// A snapshot file (YAML or JSON): `now`, `autoscaler` (manifest with status), `scale`,
    /// `pods`, `metrics`, and optionally `history`, `forecasts`, `config`.
    #[arg(long)]
    pub snapshot: PathBuf,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `foresight explain`.
pub fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.snapshot)
        .with_context(|| format!("cannot read {}", args.snapshot.display()))?;
    let docs = parse_documents(&text)
        .with_context(|| format!("{} is not valid YAML or JSON", args.snapshot.display()))?;
    let [doc] = docs.as_slice() else {
        anyhow::bail!(
            "{}: expected exactly one snapshot document, found {}",
            args.snapshot.display(),
            docs.len()
        );
    };
    let snapshot: Snapshot =
        from_value(doc, "").map_err(|e| anyhow::anyhow!("{}: {e}", args.snapshot.display()))?;
    let prepared = snapshot
        .prepare()
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.snapshot.display()))?;
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
    if args.json {
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
