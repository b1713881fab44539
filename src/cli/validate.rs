//! `foresight validate FILE...`: checks EffectiveHorizontalPodAutoscaler (and native HPA)
//! manifests as strictly as `kubectl apply` with strict field validation would, and prints
//! every problem with its field path.

use std::path::PathBuf;
use std::process::ExitCode;

use foresight_api::defaults::default_hpa_spec;
use foresight_api::manifest::{classify, parse_documents, served, Document};
use foresight_api::unknown_fields;
use foresight_api::validation::{validate_hpa_spec, validate_spec, FieldError, ValidationOptions};
use serde::Serialize;

use super::input::read_input;

/// Arguments of `foresight validate`.
#[derive(clap::Args)]
pub struct ValidateArgs {
    /// YAML or JSON files (`-` reads standard input); each may hold several documents or a
    /// `kind: List`.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Refuse documents of other kinds instead of skipping them.
    #[arg(long)]
    pub strict_kinds: bool,
    /// `text` (one line per problem) or `json` (one object for tools).
    #[arg(short, long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// How `validate` reports.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// Lines for people.
    Text,
    /// One JSON object.
    Json,
}

/// What was found in one document.
#[derive(Serialize)]
struct Checked {
    file: String,
    /// 1-based, in the order documents (and List items) appear.
    document: usize,
    #[serde(rename = "apiVersion")]
    api_version: String,
    kind: String,
    name: String,
    /// Another kind, not checked.
    skipped: bool,
    errors: Vec<FieldError>,
}

/// The whole run, as `-o json` prints it.
#[derive(Serialize)]
struct Report {
    valid: bool,
    documents: Vec<Checked>,
    /// Problems that belong to no document (an unreadable or malformed file).
    errors: Vec<String>,
}

/// The problems of one document, or `None` when it is of a kind this command does not check.
fn check_document(value: &serde_json::Value, strict_kinds: bool) -> Option<Vec<FieldError>> {
    let document = match classify(value) {
        Ok(d) => d,
        Err(e) => return Some(vec![e]),
    };
    Some(match document {
        Document::Foresight(ehpa) => {
            let mut errors = unknown_fields::in_spec_of(value);
            errors.extend(validate_spec(&ehpa.spec));
            errors
        }
        Document::Hpa(hpa) => {
            let mut errors: Vec<FieldError> = served(&hpa.api_version, &hpa.kind)
                .err()
                .into_iter()
                .collect();
            errors.extend(unknown_fields::in_spec_of(value));
            // The API server defaults before it validates.
            let mut spec = hpa.spec.clone();
            default_hpa_spec(&mut spec);
            errors.extend(validate_hpa_spec(&spec, ValidationOptions::default()));
            errors
        }
        Document::Crane(_) => vec![FieldError::invalid(
            "apiVersion",
            "autoscaling.crane.io/v1alpha1",
            "a Crane EffectiveHorizontalPodAutoscaler; convert it with `foresight import` first",
        )],
        Document::Keda(_) => vec![FieldError::invalid(
            "apiVersion",
            "keda.sh/v1alpha1",
            "a KEDA ScaledObject; convert it with `foresight import` first",
        )],
        Document::Other { api_version, kind } if strict_kinds => vec![FieldError::not_supported(
            "kind",
            format!("{api_version}/{kind}"),
            &[
                "autoscaling.foresight.dev/v1alpha1/EffectiveHorizontalPodAutoscaler",
                "autoscaling/v2/HorizontalPodAutoscaler",
            ],
        )],
        Document::Other { .. } => return None,
    })
}

fn text_of(document: &serde_json::Value, pointer: &str) -> String {
    document
        .pointer(pointer)
        .and_then(|n| n.as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Runs `foresight validate`.
pub fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let mut report = Report {
        valid: true,
        documents: Vec::new(),
        errors: Vec::new(),
    };
    for path in &args.files {
        let file = path.display().to_string();
        let docs = match read_input(path) {
            Ok(text) => parse_documents(&text).map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        let docs = match docs {
            Ok(d) if d.is_empty() => {
                report
                    .errors
                    .push(format!("{file}: no documents (empty input)"));
                continue;
            }
            Ok(d) => d,
            Err(e) => {
                report.errors.push(format!("{file}: {e}"));
                continue;
            }
        };
        for (i, doc) in docs.iter().enumerate() {
            let errors = check_document(doc, args.strict_kinds);
            report.documents.push(Checked {
                file: file.clone(),
                document: i + 1,
                api_version: text_of(doc, "/apiVersion"),
                kind: text_of(doc, "/kind"),
                name: text_of(doc, "/metadata/name"),
                skipped: errors.is_none(),
                errors: errors.unwrap_or_default(),
            });
        }
    }
    let checked = report.documents.iter().filter(|d| !d.skipped).count();
    if checked == 0 && report.errors.is_empty() {
        report.errors.push(
            "no EffectiveHorizontalPodAutoscaler or HorizontalPodAutoscaler to validate".into(),
        );
    }
    let problems = report.errors.len()
        + report
            .documents
            .iter()
            .map(|d| d.errors.len())
            .sum::<usize>();
    report.valid = problems == 0;
    match args.output {
        Output::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Output::Text => print_text(&report, checked, problems),
    }
    Ok(if report.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_text(report: &Report, checked: usize, problems: usize) {
    for e in &report.errors {
        println!("{e}");
    }
    for d in &report.documents {
        let name = if d.name.is_empty() {
            "unnamed"
        } else {
            &d.name
        };
        let at = format!("{}: document {} ({name})", d.file, d.document);
        if d.skipped {
            eprintln!(
                "{at}: skipped {} {}: not an autoscaler",
                d.api_version, d.kind
            );
        }
        for e in &d.errors {
            println!("{at}: {e}");
        }
    }
    if report.valid {
        println!("{checked} document(s) valid");
    } else {
        println!("{problems} problem(s) in {checked} document(s)");
    }
}
