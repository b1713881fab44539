//! `foresight simulate --json --no-frontier` with the command's defaults, built from this crate
//! alone: a release build of it takes minutes where the whole binary (the controller's
//! Kubernetes crates) takes much longer, which matters when measuring tables on a shared
//! machine. `scripts/prediction-table` uses it when `FORESIGHT_BIN` names it.
//!
//! Usage: replay_json --trace FILE --spec FILE [--spec FILE...] [--startup-delay SECONDS]
//!        [--warm-up SECONDS] [--tuned-frontier yes] [--hold KNOBS [--blocks N]]
//!
//! With `--tuned-frontier yes`, every policy with `spec.objective` is also replayed at each
//! swept shortfall (as `foresight simulate` does), under the summary's key `tuned`.
//!
//! With `--hold KNOBS` the first policy (which needs `spec.objective`) runs at one operating
//! point from start to end instead of choosing one daily: `target=90` (no prediction),
//! `target=90,headroom=5` (learned headroom at a 5% risk budget) or `target=90,forecast=2`
//! (the forecast carrying the headroom at a 2% budget). `scripts/hindsight-table` replays a
//! grid of such points to find, knowing the whole trace, the cheapest point that keeps a risk:
//! what any fixed point could have done, against which the tuner's daily choice is measured.
//! With `--blocks N` as well, the summary's key `blocks` holds the held policy's figures in
//! each of N equal blocks of the day (UTC, from midnight), summed over the scored days:
//! `[[under_minutes, replica_hours], ...]`, from which the hindsight table composes
//! schedules.

use foresight_core::objective::{Knobs, OperatingPoint};
use foresight_core::trace::parse_csv;
use foresight_sim::config::{ModelConfig, Recording};
use foresight_sim::load::{LoadPoint, LoadTrace};
use foresight_sim::objective_frontier::tuned_frontiers;
use foresight_sim::policy::policies_from_manifest;
use foresight_sim::runner::{run_policy_by_day_and_block, Span};
use foresight_sim::simulation::{
    bucket_seconds, compile_policies, scaled_load, simulate, LoadScale,
};
use foresight_sim::summary::to_json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut trace = None;
    let mut specs = Vec::new();
    let (mut startup, mut warm_up) = (60i64, 0i64);
    let mut tuned = false;
    let mut hold = None;
    let mut blocks = 1usize;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--trace" => trace = Some(value),
            "--spec" => specs.push(value),
            "--startup-delay" => startup = value.trim_end_matches('s').parse()?,
            "--warm-up" => warm_up = seconds(&value)?,
            "--tuned-frontier" => tuned = value == "yes",
            "--hold" => hold = Some(knobs(&value)?),
            "--blocks" => {
                blocks = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=24).contains(n) && 24 % n == 0)
                    .ok_or(format!("--blocks {value}: not a divisor of 24 hours"))?;
            }
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let path = trace.ok_or("--trace is required")?;
    if blocks > 1 && hold.is_none() {
        return Err("--blocks reads the figures of a held point: it needs --hold".into());
    }
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
    // A held first policy is replayed apart below; its place in the simulation (which also
    // gives the bound and the scaling) is taken meanwhile by its spec without prediction,
    // a replay of seconds where its daily tuning would take minutes.
    let mut runs = compiled.clone();
    if let (Some(_), Some(first)) = (hold, runs.first_mut()) {
        first.autoscaler.prediction = None;
        first.autoscaler.objective = None;
    }
    let mut simulation = simulate(&load, &runs, &model, &|_| {})?;
    let mut by_block = None;
    if let Some(knobs) = hold {
        let first = compiled.first().ok_or("no policy")?;
        if first.autoscaler.objective.is_none() {
            return Err(
                "--hold runs the first policy at an operating point: it needs spec.objective"
                    .into(),
            );
        }
        let point = OperatingPoint {
            knobs,
            chosen_at: Span::of(&load).start,
            replayed_seconds: 0,
            under_minutes: 0.0,
            replica_hours: 0.0,
            reactive_under_minutes: 0.0,
            reactive_replica_hours: 0.0,
            meets: true,
            written_utilization: first.autoscaler.first_utilization(),
            blocks: Vec::new(),
            carried_minutes: 0.0,
        };
        let (outcome, _, figures) = run_policy_by_day_and_block(
            &first.name,
            &first.autoscaler,
            &load,
            &model,
            bucket_seconds(Span::of(&load)),
            &[],
            blocks,
            Some(point),
        );
        simulation.policies[0] = outcome;
        if blocks > 1 {
            by_block = Some(
                figures
                    .iter()
                    .map(|f| [f.under_minutes, f.replica_hours])
                    .collect::<Vec<_>>(),
            );
        }
    }
    let text = to_json(&simulation, &path, &model, None);
    if !tuned && by_block.is_none() {
        print!("{text}");
        return Ok(());
    }
    let mut summary: serde_json::Value = serde_json::from_str(&text)?;
    if let Some(b) = by_block {
        summary["blocks"] = serde_json::to_value(b)?;
    }
    if tuned {
        let own: Vec<_> = simulation.policies.iter().map(|p| &p.scores).collect();
        let frontiers = tuned_frontiers(&policies, &own, &load, &model, &|_| {})?;
        summary["tuned"] = serde_json::to_value(frontiers)?;
    }
    println!("{}", serde_json::to_string_pretty(&summary)?);
    Ok(())
}

/// `target=90`, `target=90,headroom=5` or `target=90,forecast=2` (see the module docs).
fn knobs(text: &str) -> Result<Knobs, String> {
    let mut k = Knobs {
        utilization: None,
        risk_budget_percent: None,
        prediction: false,
        forecast_budget_percent: None,
    };
    for part in text.split(',') {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("--hold: {part:?} is not key=value"))?;
        let number = |v: &str| {
            v.parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n > 0.0 && *n <= 100.0)
                .ok_or_else(|| format!("--hold: {key}={v}: not a percentage in (0, 100]"))
        };
        match key {
            "target" => k.utilization = Some(number(value)?.round() as i32),
            "headroom" => {
                k.prediction = true;
                k.risk_budget_percent = Some(number(value)?);
            }
            "forecast" => {
                k.prediction = true;
                k.forecast_budget_percent = Some(number(value)?);
            }
            other => {
                return Err(format!(
                    "--hold: unknown knob {other:?} (target, headroom, forecast)"
                ))
            }
        }
    }
    if k.risk_budget_percent.is_some() && k.forecast_budget_percent.is_some() {
        return Err("--hold: headroom and forecast are two kinds of point; name one".to_owned());
    }
    Ok(k)
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
