//! `foresight validate FILE...`: checks EffectiveHorizontalPodAutoscaler (and native HPA)
//! manifests as strictly as `kubectl apply` with strict field validation would, and prints
//! every problem with its field path.

use std::path::PathBuf;
use std::process::ExitCode;

use foresight_api::defaults::default_hpa_spec;
use foresight_api::manifest::{classify, missing_required, parse_documents, served, Document};
use foresight_api::unknown_fields;
use foresight_api::validation::{validate_hpa_spec, validate_spec, FieldError, ValidationOptions};
use foresight_api::warnings::{cron_warnings, metric_selector_warnings, Warning};
use foresight_core::pause::Pause;
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
    /// Values Kubernetes accepts that will not work as written (they do not make the
    /// document invalid).
    warnings: Vec<Warning>,
}

/// The whole run, as `-o json` prints it.
#[derive(Serialize)]
struct Report {
    valid: bool,
    documents: Vec<Checked>,
    /// Problems that belong to no document (an unreadable or malformed file).
    errors: Vec<String>,
}

/// What is wrong with one document, and what Kubernetes accepts that will not work.
struct Findings {
    errors: Vec<FieldError>,
    warnings: Vec<Warning>,
}

/// The findings of one document, or `None` when it is of a kind this command does not check.
fn check_document(value: &serde_json::Value, strict_kinds: bool) -> Option<Findings> {
    let errors = check_errors(value, strict_kinds)?;
    let warnings = match classify(value) {
        Ok(Document::Foresight(ehpa)) => {
            let mut found = metric_selector_warnings("spec.metrics", &ehpa.spec.metrics);
            found.extend(cron_warnings("spec.crons", &ehpa.spec.crons));
            found.extend(pause_warnings(ehpa.metadata.annotations.as_ref()));
            found
        }
        Ok(Document::Hpa(hpa)) => metric_selector_warnings(
            "spec.metrics",
            hpa.spec.metrics.as_deref().unwrap_or_default(),
        ),
        _ => Vec::new(),
    };
    Some(Findings { errors, warnings })
}

/// Pause annotations whose values the controller cannot read: any annotation value is
/// stored, and the controller then pauses at the current size (the decision core says so,
/// in the words used here).
fn pause_warnings(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
) -> Vec<Warning> {
    let pause = Pause::from_annotations(
        annotations
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    );
    pause
        .problems
        .into_iter()
        .map(|problem| {
            // "metadata.annotations[NAME]: Invalid value: VALUE: RULE; WHAT HAPPENS"
            let (field, detail) = problem
                .split_once("]: ")
                .map_or((String::new(), problem.clone()), |(f, d)| {
                    (format!("{f}]"), d.to_owned())
                });
            Warning {
                field,
                value: None,
                detail,
            }
        })
        .collect()
}

/// The errors of one document, or `None` when it is of a kind this command does not check.
fn check_errors(value: &serde_json::Value, strict_kinds: bool) -> Option<Vec<FieldError>> {
    let document = match classify(value) {
        Ok(d) => d,
        Err(e) => return Some(vec![e]),
    };
    let missing = missing_required(value);
    // A missing field is said once, as missing, not again as the 0 it reads as.
    let not_missing = |e: &FieldError| !missing.iter().any(|m| m.field == e.field);
    Some(match document {
        Document::Foresight(ehpa) => {
            let mut errors = unknown_fields::in_spec_of(value);
            errors.extend(missing.iter().cloned());
            errors.extend(validate_spec(&ehpa.spec).into_iter().filter(not_missing));
            errors
        }
        Document::Hpa(hpa) => {
            let mut errors: Vec<FieldError> = served(&hpa.api_version, &hpa.kind)
                .err()
                .into_iter()
                .collect();
            errors.extend(unknown_fields::in_spec_of(value));
            errors.extend(missing.iter().cloned());
            // The API server defaults before it validates.
            let mut spec = hpa.spec.clone();
            default_hpa_spec(&mut spec);
            errors.extend(
                validate_hpa_spec(&spec, ValidationOptions::default())
                    .into_iter()
                    .filter(not_missing),
            );
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
            let findings = check_document(doc, args.strict_kinds);
            let skipped = findings.is_none();
            let Findings { errors, warnings } = findings.unwrap_or(Findings {
                errors: Vec::new(),
                warnings: Vec::new(),
            });
            report.documents.push(Checked {
                file: file.clone(),
                document: i + 1,
                api_version: text_of(doc, "/apiVersion"),
                kind: text_of(doc, "/kind"),
                name: text_of(doc, "/metadata/name"),
                skipped,
                errors,
                warnings,
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

/// The note for a skipped document: `skipped v1 Service: not an autoscaler`, naming only
/// what the document says it is.
pub fn skipped_note(api_version: &str, kind: &str) -> String {
    let what: Vec<&str> = [api_version, kind]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect();
    match what.as_slice() {
        [] => "skipped: not an autoscaler (it has no apiVersion or kind)".to_owned(),
        what => format!("skipped {}: not an autoscaler", what.join(" ")),
    }
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
            eprintln!("{at}: {}", skipped_note(&d.api_version, &d.kind));
        }
        for e in &d.errors {
            println!("{at}: {e}");
        }
        for w in &d.warnings {
            println!("{at}: warning: {w}");
        }
    }
    let warnings: usize = report.documents.iter().map(|d| d.warnings.len()).sum();
    if report.valid && warnings > 0 {
        println!("{checked} document(s) valid, with {warnings} warning(s)");
    } else if report.valid {
        println!("{checked} document(s) valid");
    } else {
        println!("{problems} problem(s) in {checked} document(s)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_note_names_what_there_is_with_single_spaces() {
        assert_eq!(
            skipped_note("v1", "Service"),
            "skipped v1 Service: not an autoscaler"
        );
        assert_eq!(
            skipped_note("", "Service"),
            "skipped Service: not an autoscaler"
        );
        assert_eq!(
            skipped_note("", ""),
            "skipped: not an autoscaler (it has no apiVersion or kind)"
        );
    }
}
