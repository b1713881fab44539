//! `foresight import`: native HPAs, Crane EHPAs and KEDA ScaledObjects into Foresight objects,
//! as YAML.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use foresight_api::import::{import_document, render, ImportError, ImportOptions};
use foresight_api::manifest::parse_documents;

use super::input::read_input;

/// Arguments of `foresight import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// YAML or JSON manifests holding autoscaling/v1 or v2 HorizontalPodAutoscalers, Crane
    /// (autoscaling.crane.io/v1alpha1) EffectiveHorizontalPodAutoscalers or KEDA
    /// (keda.sh/v1alpha1) ScaledObjects; `-` reads
    /// standard input. Several documents per file and `kind: List` (`kubectl get hpa -o
    /// yaml`) are fine; other kinds are skipped.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Emit `scaleStrategy: Preview`: the new objects decide and record without scaling,
    /// beside the autoscalers they replace.
    #[arg(long)]
    pub preview: bool,
}

/// Runs `foresight import`: prints the converted objects on stdout (with notes about
/// differences in behaviour as comments, repeated on stderr). When any document cannot be
/// converted or its result is invalid, stdout stays empty (so `import x | kubectl apply -f -`
/// applies nothing), the reasons go to stderr, and the exit code is 1.
pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let options = ImportOptions {
        preview: args.preview,
    };
    let mut documents_out = Vec::new();
    let mut failed = false;
    for file in &args.files {
        let name = file.display().to_string();
        let text = read_input(file).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let docs = parse_documents(&text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        for (i, doc) in docs.iter().enumerate() {
            let at = format!("{name}, document {}", i + 1);
            match import_document(doc, options) {
                Ok(imported) => {
                    for note in &imported.notes {
                        eprintln!("{at}: note: {note}");
                    }
                    for problem in &imported.problems {
                        eprintln!("{at}: invalid after conversion: {problem}");
                        failed = true;
                    }
                    documents_out
                        .push(render(&imported).with_context(|| format!("{at}: writing YAML"))?);
                }
                Err(ImportError::Unsupported { api_version, kind }) => {
                    eprintln!(
                        "{at}: {}",
                        super::validate::skipped_note(&api_version, &kind)
                    );
                }
                Err(e @ ImportError::Field(_)) => {
                    eprintln!("{at}: {e}");
                    failed = true;
                }
            }
        }
    }
    if failed {
        eprintln!("nothing written: fix the problems above and import again");
        return Ok(ExitCode::FAILURE);
    }
    if documents_out.is_empty() {
        anyhow::bail!("no HorizontalPodAutoscaler, Crane EffectiveHorizontalPodAutoscaler or KEDA ScaledObject found");
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(documents_out.join("---\n").as_bytes())?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}
