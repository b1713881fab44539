//! `foresight simulate --json --no-frontier` with the command's defaults, built from this crate
//! alone: a release build of it takes minutes where the whole binary (the controller's
//! Kubernetes crates) takes much longer, which matters when measuring tables on a shared
//! machine. `scripts/prediction-table` uses it when `FORESIGHT_BIN` names it.
//!
//! Usage: replay_json --trace FILE --spec FILE [--spec FILE...] [--startup-delay SECONDS]
//!        [--warm-up SECONDS] [--tuned-frontier yes]
//!
//! With `--tuned-frontier yes`, every policy with `spec.objective` is also replayed at each
//! swept shortfall (as `foresight simulate` does), under the summary's key `tuned`.

use foresight_core::trace::parse_csv;
use foresight_sim::config::{ModelConfig, Recording};
use foresight_sim::load::{LoadPoint, LoadTrace};
use foresight_sim::objective_frontier::tuned_frontiers;
use foresight_sim::policy::policies_from_manifest;
use foresight_sim::simulation::{compile_policies, scaled_load, simulate, LoadScale};
use foresight_sim::summary::to_json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut trace = None;
    let mut specs = Vec::new();
    let (mut startup, mut warm_up) = (60i64, 0i64);
    let mut tuned = false;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--trace" => trace = Some(value),
            "--spec" => specs.push(value),
            "--startup-delay" => startup = value.trim_end_matches('s').parse()?,
            "--warm-up" => warm_up = seconds(&value)?,
            "--tuned-frontier" => tuned = value == "yes",
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let path = trace.ok_or("--trace is required")?;
    let samples = parse_csv(&std::fs::read_to_string(&path)?)?;
    let trace = LoadTrace::new(
        samples
            .into_iter()
            .map(|s| LoadPoint {
                ts: s.ts,
                value: s.value,
            })
            .collect(),
    )?;
    let mut policies = Vec::new();
    for spec in &specs {
        let stem = std::path::Path::new(spec)
            .file_stem()
            .map_or("policy".into(), |s| s.to_string_lossy().into_owned());
        policies.extend(policies_from_manifest(
            &std::fs::read_to_string(spec)?,
            &stem,
        )?);
    }
    let compiled = compile_policies(&policies)?;
    let model = ModelConfig {
        startup_delay_seconds: startup,
        warm_up_seconds: warm_up,
        // Scores only: the recording changes no decision, and the summary needs none.
        recording: Recording::ScoresOnly,
        ..ModelConfig::default()
    };
    let load = scaled_load(&trace, LoadScale::PeakReplicas(20), &compiled, &model);
    let simulation = simulate(&load, &compiled, &model, &|_| {})?;
    let text = to_json(&simulation, &path, &model, None);
    if !tuned {
        print!("{text}");
        return Ok(());
    }
    let mut summary: serde_json::Value = serde_json::from_str(&text)?;
    let own: Vec<_> = simulation.policies.iter().map(|p| &p.scores).collect();
    let frontiers = tuned_frontiers(&policies, &own, &load, &model, &|_| {})?;
    summary["tuned"] = serde_json::to_value(frontiers)?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    Ok(())
}

/// `2d`, `12h`, `90s` or plain seconds.
fn seconds(text: &str) -> Result<i64, String> {
    let (number, unit) = match text.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&text[..i], c),
        _ => (text, 's'),
    };
    let n: i64 = number
        .parse()
        .map_err(|_| format!("not a duration: {text}"))?;
    let unit = match unit {
        'd' => 86_400,
        'h' => 3600,
        'm' => 60,
        's' => 1,
        _ => return Err(format!("not a duration: {text}")),
    };
    Ok(n * unit)
}
