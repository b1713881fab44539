//! `foresight validate FILE...`: checks EffectiveHorizontalPodAutoscaler (and native HPA)
//! manifests and prints every problem with its field path.

use std::path::PathBuf;
use std::process::ExitCode;

use foresight_api::defaults::default_hpa_spec;
use foresight_api::manifest::{classify, parse_documents, Document};
use foresight_api::validation::{validate_hpa_spec, validate_spec, FieldError, Options};

/// Arguments of `foresight validate`.
#[derive(clap::Args)]
pub struct ValidateArgs {
    /// YAML or JSON files; each may hold several documents.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// The problems of one document.
fn check_document(value: &serde_json::Value) -> Result<Vec<FieldError>, FieldError> {
    Ok(match classify(value)? {
        Document::Foresight(ehpa) => validate_spec(&ehpa.spec),
        Document::Hpa(hpa) => {
            // The API server defaults before it validates.
            let mut spec = hpa.spec.clone();
            default_hpa_spec(&mut spec);
            validate_hpa_spec(&spec, Options::default())
        }
        Document::Crane(_) => vec![FieldError::invalid(
            "apiVersion",
            "autoscaling.crane.io/v1alpha1",
            "a Crane EffectiveHorizontalPodAutoscaler; convert it with `foresight import` first",
        )],
        Document::Other { api_version, kind } => vec![FieldError::invalid(
            "kind",
            format!("{api_version}/{kind}"),
            "not an EffectiveHorizontalPodAutoscaler (autoscaling.foresight.dev/v1alpha1) or HorizontalPodAutoscaler (autoscaling/v2)",
        )],
    })
}

/// Runs `foresight validate`.
pub fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let mut problems = 0usize;
    let mut documents = 0usize;
    for path in &args.files {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                println!("{}: cannot read: {e}", path.display());
                problems += 1;
                continue;
            }
        };
        let docs = match parse_documents(&text) {
            Ok(d) => d,
            Err(e) => {
                println!("{}: {e}", path.display());
                problems += 1;
                continue;
            }
        };
        for (i, doc) in docs.iter().enumerate() {
            documents += 1;
            let name = doc
                .pointer("/metadata/name")
                .and_then(|n| n.as_str())
                .unwrap_or("unnamed");
            let where_ = format!("{}: document {} ({name})", path.display(), i + 1);
            let errors = check_document(doc).unwrap_or_else(|e| vec![e]);
            for e in &errors {
                println!("{where_}: {e}");
            }
            problems += errors.len();
        }
    }
    if problems == 0 {
        println!("{documents} document(s) valid");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{problems} problem(s) in {documents} document(s)");
        Ok(ExitCode::from(1))
    }
}
