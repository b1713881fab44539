//! `foresight import`: native HPAs and Crane EHPAs into Foresight objects, as YAML.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use foresight_api::import::{import_document, render, ImportError};
use foresight_api::manifest::parse_documents;

/// Arguments of `foresight import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// YAML or JSON manifests holding autoscaling/v1 or v2 HorizontalPodAutoscalers or
    /// Crane (autoscaling.crane.io/v1alpha1) EffectiveHorizontalPodAutoscalers; `-` reads
    /// standard input. Several documents per file are fine; other kinds are skipped.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Runs `foresight import`: prints the converted objects on stdout (with notes about
/// differences in behaviour as comments) and their validation problems on stderr. Exits
/// non-zero when a document could not be converted or the result is invalid.
pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let mut documents_out = Vec::new();
    let mut failed = false;
    for file in &args.files {
        let name = file.display().to_string();
        let text = read(file).with_context(|| format!("reading {name}"))?;
        let docs = parse_documents(&text).with_context(|| format!("parsing {name}"))?;
        for (i, doc) in docs.iter().enumerate() {
            let at = format!("{name}, document {}", i + 1);
            match import_document(doc) {
                Ok(imported) => {
                    for problem in &imported.problems {
                        eprintln!("{at}: invalid after conversion: {problem}");
                        failed = true;
                    }
                    documents_out
                        .push(render(&imported).with_context(|| format!("{at}: writing YAML"))?);
                }
                Err(ImportError::Unsupported { api_version, kind }) => {
                    eprintln!("{at}: skipped {api_version} {kind}: not an autoscaler");
                }
                Err(e @ ImportError::Field(_)) => {
                    eprintln!("{at}: {e}");
                    failed = true;
                }
            }
        }
    }
    if documents_out.is_empty() && !failed {
        anyhow::bail!("no HorizontalPodAutoscaler or Crane EffectiveHorizontalPodAutoscaler found");
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(documents_out.join("---\n").as_bytes())?;
    stdout.flush()?;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn read(file: &PathBuf) -> std::io::Result<String> {
    if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(file)
    }
}
