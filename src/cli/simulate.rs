//! `foresight simulate`: replays a load trace through a modelled cluster with one or more
//! policies, prints their scores and writes an HTML report. The model is described in
//! `docs/simulator.md`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use foresight_core::autoscaler::MetricSource;
use foresight_core::resources::ResourceName;
use foresight_core::trace::{Gap, Outlier};
use foresight_core::version::KubernetesVersion;
use foresight_sim::frontier::{frontier, most_runs, Comparison, Reach};
use foresight_sim::load::{LoadPoint, LoadTrace};
use foresight_sim::objective_frontier::{tuned_frontiers, tuned_runs, SWEPT_SHORTFALLS};
use foresight_sim::policy::{policies_from_manifest, Policy};
use foresight_sim::report::{render, ReportContext};
use foresight_sim::score::Scores;
use foresight_sim::simulation::{
    compile_policies_as, scaled_load, total_decisions, CompiledPolicy,
};
use foresight_sim::synthetic::{generate, SyntheticConfig};
use foresight_sim::verdict::{change_text, deltas};
use foresight_sim::{simulate, summary, LoadScale, ModelConfig, Outage, Recording, Simulation};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::flags::whole;
use super::input::io_error;
use super::series::{describe, SeriesArgs};

/// The bundled example's policy; its load is [`SyntheticConfig::bundled`] (see
/// `examples/simulate`).
const EXAMPLE_POLICY: &str = include_str!("../../examples/simulate/policy.yaml");

/// Arguments of `foresight simulate`.
#[derive(clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct SimulateArgs {
    /// A policy to compare: an EffectiveHorizontalPodAutoscaler or autoscaling/v2
    /// HorizontalPodAutoscaler manifest (repeat for several). Without it, the bundled
    /// example's reactive, predictive and predictive+cron variants are compared.
    #[arg(long = "spec", value_name = "FILE")]
    pub specs: Vec<PathBuf>,
    /// The load: --trace FILE (CSV `ts,value`, Unix seconds) or --prometheus-url with
    /// --query. Without either: the bundled workload (two generated weeks of a web service),
    /// or a synthetic trace of --days when --spec is given.
    #[command(flatten)]
    pub series: SeriesArgs,
    /// Generate the load: daily and weekly rhythm, noise and spikes (seeded by --seed).
    #[arg(long, conflicts_with_all = ["trace", "prometheus_url"])]
    pub synthetic: bool,
    /// Days of synthetic load (1 to 366).
    #[arg(long, default_value = "7", value_name = "DAYS", value_parser = whole::<1, 366>)]
    pub days: i64,
    /// Scale the trace so that its maximum is what N pods carry at the first policy's target
    /// (1 to 10000).
    #[arg(long, default_value = "20", value_name = "N", value_parser = whole::<1, 10_000>)]
    pub peak_replicas: i64,
    /// Take the trace's values as the load itself (cores for CPU metrics), unscaled.
    #[arg(long)]
    pub raw_load: bool,
    /// Time from a pod's creation until it is ready and serves load (e.g. 60s, 2m).
    #[arg(allow_hyphen_values = true, long, default_value = "60s", value_name = "DURATION", value_parser = crate::cli::flags::seconds)]
    pub startup_delay: i64,
    /// Up to this much extra start-up time per pod, drawn from a generator seeded by --seed.
    #[arg(allow_hyphen_values = true, long, default_value = "0s", value_name = "DURATION", value_parser = crate::cli::flags::seconds)]
    pub startup_jitter: i64,
    /// Mean of a long tail of extra start-up time per pod (exponential, at most ten times the
    /// mean, seeded by --seed): image pulls and slow nodes.
    #[arg(allow_hyphen_values = true, long, default_value = "0s", value_name = "DURATION", value_parser = crate::cli::flags::seconds)]
    pub startup_tail: i64,
    /// Seed of the start-up jitter and of the synthetic load.
    #[arg(long, default_value = "1", value_parser = super::flags::seed)]
    pub seed: u64,
    /// metrics-server's scrape interval.
    #[arg(allow_hyphen_values = true, long, default_value = "15s", value_name = "DURATION", value_parser = crate::cli::flags::seconds)]
    pub scrape_interval: i64,
    /// The window each CPU sample is averaged over.
    #[arg(allow_hyphen_values = true, long, default_value = "15s", value_name = "DURATION", value_parser = crate::cli::flags::seconds)]
    pub metric_window: i64,
    /// Extra delay before a scrape reaches the autoscaler.
    #[arg(allow_hyphen_values = true, long, default_value = "0s", value_name = "DURATION", value_parser = crate::cli::flags::seconds)]
    pub metric_lag: i64,
    /// Each pod's CPU request in millicores (what utilization is measured against; 1 to
    /// 1000000).
    #[arg(long, default_value = "1000", value_name = "MILLICORES", value_parser = whole::<1, 1_000_000>)]
    pub pod_cpu_request: i64,
    /// The load one ready pod can serve (cores for CPU); default: its CPU request.
    #[arg(long, value_name = "LOAD", value_parser = pod_capacity)]
    pub pod_capacity: Option<f64>,
    /// Simulated time between two refits of the predictor.
    #[arg(allow_hyphen_values = true, long, default_value = "1h", value_name = "DURATION", value_parser = crate::cli::flags::seconds)]
    pub refit_interval: i64,
    /// Directory for report.html (default ./foresight-report).
    #[arg(long, value_name = "DIR", conflicts_with = "report")]
    pub out: Option<PathBuf>,
    /// Path of the report file.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print the scores as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Skip the cost-against-risk frontier (it replays the first policy without prediction
    /// or crons at about twenty targets).
    #[arg(long, alias = "no-equal-risk")]
    pub no_frontier: bool,
    /// Skip the tuned frontier: each policy with spec.objective replayed at six shortfalls,
    /// each replay choosing its operating point daily (the dearest part of a simulation).
    #[arg(long, overrides_with = "tuned_frontier")]
    pub no_tuned_frontier: bool,
    /// Sweep the tuned frontier in the run without --spec too. The bundled example states an
    /// objective, so both its predictive variants tune daily; their frontiers are ten more
    /// such replays (minutes of CPU where the rest takes under one), so that run leaves them
    /// out unless asked.
    #[arg(long, overrides_with = "no_tuned_frontier")]
    pub tuned_frontier: bool,
    /// Points of averageUtilization between two targets of the frontier's sweep (1 to 20;
    /// other targets step twice as many percent of their value).
    #[arg(long, default_value = "5", value_name = "N", value_parser = whole::<1, 20>)]
    pub frontier_step: i64,
    /// Leave the first part of the run out of every score (e.g. 2d: the days before any
    /// predictor can be ready); the report and the scores say so.
    #[arg(allow_hyphen_values = true, long, default_value = "0s", value_name = "DURATION", value_parser = crate::cli::flags::seconds)]
    pub warm_up: i64,
    /// Make every metric read fail from START (after the first decision) for LENGTH, e.g.
    /// `--outage 3d12h,45m`, to see what `spec.fallback` does; repeat for several. The report
    /// shades them.
    #[arg(allow_hyphen_values = true, long, value_name = "START,LENGTH", value_parser = outage)]
    pub outage: Vec<Outage>,
    /// Decide as the HPA of this Kubernetes release (1.28 … 1.37, or a server version such
    /// as v1.37.2).
    #[arg(long, value_name = "VERSION", default_value_t = KubernetesVersion::default())]
    pub kubernetes_version: KubernetesVersion,
}

/// `--outage START,LENGTH`.
fn outage(text: &str) -> Result<Outage, String> {
    let (start, length) = text
        .split_once(',')
        .ok_or_else(|| format!("{text:?}: write START,LENGTH (e.g. 3d12h,45m)"))?;
    Ok(Outage {
        start_seconds: crate::cli::flags::seconds(start)?,
        length_seconds: crate::cli::flags::positive_seconds(length)?,
    })
}

/// `--pod-capacity`: the load one pod serves, more than nothing and at most a million units.
fn pod_capacity(text: &str) -> Result<f64, String> {
    match super::flags::number_between(text, 0.0, 1e6)? {
        0.0 => Err("0 is out of range: a pod must serve some load".to_owned()),
        v => Ok(v),
    }
}

/// The longest span the simulator replays: a year, with room for a leap day and a
/// trace's ragged ends; longer runs say nothing a year does not, and take minutes.
const MAX_SPAN_DAYS: i64 = 370;

/// Runs `foresight simulate`.
pub fn run(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    let model = ModelConfig {
        startup_delay_seconds: args.startup_delay,
        startup_jitter_seconds: args.startup_jitter,
        startup_tail_seconds: args.startup_tail,
        seed: args.seed,
        scrape_interval_seconds: args.scrape_interval,
        metric_window_seconds: args.metric_window,
        metric_lag_seconds: args.metric_lag,
        pod_cpu_request_millicores: args.pod_cpu_request,
        pod_capacity: args
            .pod_capacity
            .unwrap_or(args.pod_cpu_request as f64 / 1000.0),
        refit_interval_seconds: args.refit_interval,
        // The policies' own refits search for the period every time, as the controller's
        // do; only the tuner's replays reuse a search (see tuner::REPLAY_PERIOD_REUSE_SECONDS).
        period_reuse_seconds: 0,
        warm_up_seconds: args.warm_up,
        short_from_share: 1.0,
        outages: args.outage.clone(),
        kubernetes: args.kubernetes_version,
        recording: Recording::Full,
    };
    model.validate()?;
    let report_path = report_path(&args)?;
    let sources = load_policies(&args.specs)?;
    let policies = compile_policies_as(&sources, model.kubernetes)?;
    let Loaded {
        trace,
        source,
        closed_gaps,
        gap_unit,
        outlier,
    } = load_trace(&args)?;
    let days = (trace.end() - trace.start()) / 86_400;
    if days > MAX_SPAN_DAYS {
        anyhow::bail!(
            "{source}: the trace spans {}; the simulator replays at most {MAX_SPAN_DAYS} days \
             (cut the trace, or close up its gaps with --allow-gaps)",
            describe(trace.end() - trace.start())
        );
    }
    let scale = if args.raw_load {
        LoadScale::AsIs
    } else {
        LoadScale::PeakReplicas(u32::try_from(args.peak_replicas)?)
    };
    if let (Some(outlier), LoadScale::PeakReplicas(n)) = (outlier, scale) {
        anyhow::bail!("{source}: {}", refused_outlier(&outlier, gap_unit, n));
    }
    let load = scaled_load(&trace, scale, &policies, &model);
    let scaling = describe_scaling(&trace, &load, scale, load_unit(&policies));
    if args.warm_up > 0 && trace.start().saturating_add(args.warm_up) >= trace.end() {
        anyhow::bail!(
            "--warm-up {} leaves nothing to score: the trace spans {}",
            describe(args.warm_up),
            describe(trace.end() - trace.start())
        );
    }

    // The no-argument run (the bundled example) sweeps tuned frontiers only when asked.
    let sweep_tuned = if args.specs.is_empty() {
        args.tuned_frontier
    } else {
        !args.no_tuned_frontier
    };
    let simulation_decisions = total_decisions(&load, &policies);
    let frontier_decisions = if args.no_frontier {
        0
    } else {
        let baseline = policies
            .first()
            .map_or(0, |p| total_decisions(&load, std::slice::from_ref(p)));
        let tuned = if sweep_tuned { tuned_runs(&sources) } else { 0 };
        baseline * (most_runs(policies.len(), args.frontier_step as u32) + tuned)
    };
    let progress = Progress::new(simulation_decisions + frontier_decisions, !args.quiet);
    let simulation = simulate(&load, &policies, &model, &|n| progress.advance(n))?;
    let comparison = if args.no_frontier {
        None
    } else {
        let scores: Vec<&Scores> = simulation.policies.iter().map(|p| &p.scores).collect();
        let first = &sources[0];
        let reactive = if first.spec.prediction.is_none() && first.spec.crons.is_empty() {
            first.clone()
        } else {
            first.reactive(&format!("{} without prediction", first.name))
        };
        let comparison = frontier(
            &reactive,
            &scores,
            &load,
            &model,
            u32::try_from(args.frontier_step)?,
            &|n| progress.advance(n),
        )?;
        if !sweep_tuned {
            Some(comparison)
        } else {
            let tuned =
                tuned_frontiers(&sources, &scores, &load, &model, &|n| progress.advance(n))?;
            Some(comparison.with_tuned(tuned))
        }
    };
    progress.finish();

    let unit = load_unit(&policies);
    let html = render(
        &simulation,
        &ReportContext {
            source: &source,
            model: &model,
            unit,
            time_zone: report_time_zone(&policies),
            frontier: comparison.as_ref(),
            closed_gaps: &closed_gaps,
        },
    );
    write_report(&report_path, &html)?;

    if args.json {
        print!(
            "{}",
            summary::to_json(&simulation, &source, &model, comparison.as_ref())
        );
        eprintln!("report: {}", report_path.display());
    } else {
        print_table(&simulation, &source, &scaling, unit, args.warm_up);
        // Say what the bundled run left out, and how to get it.
        let unswept = args.specs.is_empty()
            && !sweep_tuned
            && comparison.is_some()
            && sources.iter().any(|p| p.spec.objective.is_some());
        print_verdict(&simulation, comparison.as_ref(), unswept);
        for gap in &closed_gaps {
            println!(
                "closed up: no samples for {} between {gap_unit} {} and {gap_unit} {} (--allow-gaps)",
                describe(gap.seconds()),
                gap.before.0,
                gap.after.0
            );
        }
        println!("report: {}", report_path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Each policy against the first, each against the frontier, and how prediction fared.
/// `unswept`: policies with an objective whose tuned frontier was left out (the bundled run).
fn print_verdict(simulation: &Simulation, comparison: Option<&Comparison>, unswept: bool) {
    let scores: Vec<&Scores> = simulation.policies.iter().map(|p| &p.scores).collect();
    let deltas = deltas(&scores);
    if let Some(first) = deltas.first() {
        println!();
        println!("against {} (the first policy):", first.baseline);
    }
    for d in &deltas {
        println!(
            "  {:<22} under-provisioned {}; replica-hours {}",
            d.policy,
            change_text(d.under_minutes, " min"),
            change_text(d.replica_hours, "")
        );
    }
    if let Some(c) = comparison {
        let f = &c.frontier;
        println!();
        println!(
            "at equal shortfall ({} replayed at {} targets, {} to {}):",
            f.baseline,
            f.points.len(),
            f.points.first().map_or("", |p| p.target.as_str()),
            f.points.last().map_or("", |p| p.target.as_str()),
        );
        for e in &c.policies {
            println!("  {:<22} {}", e.policy, equal_shortfall_sentence(e));
        }
        if let Some(a) = c.tuned_against_reactive.first() {
            println!();
            println!(
                "tuned by objective (its shortfall swept: {}), against {} at its own target \
                 ({:.1} min, {:.1} replica-h):",
                SWEPT_SHORTFALLS.join(", "),
                f.baseline,
                a.reactive_under_minutes,
                a.reactive_replica_hours
            );
        }
        for a in &c.tuned_against_reactive {
            println!("  {:<22} {}", a.policy, a.sentence());
        }
        if unswept {
            println!();
            println!(
                "tuned by objective: not swept in the run without --spec (ten more tuned \
                 replays); --tuned-frontier sweeps it"
            );
        }
    }
    let predicting: Vec<_> = simulation
        .policies
        .iter()
        .filter_map(|p| Some((&p.scores.name, p.prediction.as_ref()?)))
        .collect();
    if !predicting.is_empty() {
        println!();
        println!("prediction:");
        for (name, summary) in predicting {
            println!("  {name:<22} {}", summary.describe(simulation.span.start));
        }
    }
}

/// A policy against the reactive policy as safe as it, in one sentence.
fn equal_shortfall_sentence(e: &foresight_sim::frontier::EqualShortfall) -> String {
    let reactive = match e.reach {
        Reach::SaferThanAll => format!(
            "{}: {:.1} replica-h at its safest",
            e.reactive_text(),
            e.reactive_replica_hours
        ),
        Reach::Within => format!(
            "reactive as safe ({}) {:.1} replica-h",
            e.reactive_text(),
            e.reactive_replica_hours
        ),
    };
    format!(
        "{:.1} min for {:.1} replica-h; {reactive}: {}",
        e.under_minutes,
        e.replica_hours,
        e.verdict()
    )
}

/// The policies to compare: from the files given, or the bundled example's three variants.
fn load_policies(specs: &[PathBuf]) -> anyhow::Result<Vec<Policy>> {
    if specs.is_empty() {
        let example = policies_from_manifest(EXAMPLE_POLICY, "web")
            .map_err(|e| anyhow::anyhow!("the bundled example policy: {e}"))?;
        let full = example
            .into_iter()
            .next()
            .context("the bundled example holds no policy")?;
        return Ok(vec![
            full.reactive("reactive"),
            full.without_crons("predictive"),
            Policy {
                name: "predictive+cron".to_owned(),
                spec: full.spec,
            },
        ]);
    }
    let mut policies: Vec<Policy> = Vec::new();
    for path in specs {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let stem = path
            .file_stem()
            .map_or_else(|| "policy".to_owned(), |s| s.to_string_lossy().into_owned());
        let found = policies_from_manifest(&text, &stem)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        for mut policy in found {
            // Two files may name their autoscaler alike; keep the names apart.
            if policies.iter().any(|p| p.name == policy.name) {
                policy.name = format!("{} ({})", policy.name, path.display());
            }
            let base = policy.name.clone();
            let mut n = 2;
            while policies.iter().any(|p| p.name == policy.name) {
                policy.name = format!("{base} #{n}");
                n += 1;
            }
            policies.push(policy);
        }
    }
    Ok(policies)
}

/// The load trace, a description of where it came from, and the gaps closed up in it.
/// The trace to replay, where it came from, and what was found in it.
struct Loaded {
    trace: LoadTrace,
    source: String,
    closed_gaps: Vec<Gap>,
    /// What the positions in `closed_gaps` and `outlier` count (`line`, `point`).
    gap_unit: &'static str,
    outlier: Option<Outlier>,
}

fn load_trace(args: &SimulateArgs) -> anyhow::Result<Loaded> {
    let series = if args.series.given() {
        args.series.read()?
    } else {
        let config = if args.synthetic || !args.specs.is_empty() {
            SyntheticConfig {
                days: u32::try_from(args.days)?,
                seed: args.seed,
                ..Default::default()
            }
        } else {
            SyntheticConfig::bundled()
        };
        let trace = LoadTrace::new(generate(&config))?;
        return Ok(Loaded {
            trace,
            source: config.describe(),
            closed_gaps: Vec::new(),
            gap_unit: "line",
            outlier: None,
        });
    };
    let points = series
        .samples
        .into_iter()
        .map(|s| LoadPoint {
            ts: s.ts,
            value: s.value,
        })
        .collect();
    let trace = LoadTrace::new(points).map_err(|e| anyhow::anyhow!("{}: {e}", series.source))?;
    Ok(Loaded {
        trace,
        source: series.source,
        closed_gaps: series.closed_gaps,
        gap_unit: series.unit,
        outlier: series.outlier,
    })
}

/// Why a trace whose peak dwarfs the rest is not scaled to that peak: every other sample
/// would shrink to nearly nothing, and the scores would be a confident answer about no load.
fn refused_outlier(outlier: &Outlier, unit: &str, peak_replicas: u32) -> String {
    format!(
        "{unit} {}: {outlier}; scaling the trace so that this peak is what {peak_replicas} \
         pods carry (--peak-replicas) would shrink every other sample to {:.1e} of it, nearly \
         no load. Correct or remove that sample; if it is real load, pass --raw-load to replay \
         the values as recorded",
        outlier.line,
        outlier.percentile / outlier.value
    )
}

/// What peak scaling did to the trace, in one line for the output.
fn describe_scaling(trace: &LoadTrace, load: &LoadTrace, scale: LoadScale, unit: &str) -> String {
    match scale {
        LoadScale::AsIs => format!("replayed as recorded (--raw-load), in {unit}"),
        LoadScale::PeakReplicas(n) => {
            let (peak, scaled) = (trace.peak(), load.peak());
            if peak > 0.0 {
                format!(
                    "scaled: every value x {}, so that the peak ({}) is what {n} pods carry at the \
                     first policy's target ({} {unit}; --peak-replicas, or --raw-load to replay \
                     the values as recorded)",
                    significant(scaled / peak),
                    significant(peak),
                    significant(scaled)
                )
            } else {
                "scaled: the trace is 0 throughout, and stays 0".to_owned()
            }
        }
    }
}

/// `v` with four significant digits, in plain notation where that is short.
fn significant(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e6).contains(&v.abs()) {
        format!("{v:.3e}")
    } else {
        let text = format!("{v:.4}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        text.to_owned()
    }
}

/// Where the report goes. `--out DIR` is created when missing (once the run has succeeded);
/// the directory of `--report FILE` must exist: a mistyped path is an error, not a new
/// directory tree, and it is found before the run rather than after.
fn report_path(args: &SimulateArgs) -> anyhow::Result<PathBuf> {
    match (&args.report, &args.out) {
        (Some(file), _) => {
            let dir = file
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !dir.is_dir() {
                anyhow::bail!(
                    "--report {}: the directory {} does not exist",
                    file.display(),
                    dir.display()
                );
            }
            Ok(file.clone())
        }
        (None, Some(dir)) => Ok(dir.join("report.html")),
        (None, None) => Ok(Path::new("foresight-report").join("report.html")),
    }
}

/// Writes the report, creating the `--out` directory when missing.
fn write_report(path: &Path, html: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot create the report directory {}: {}",
                dir.display(),
                io_error(&e)
            )
        })?;
    }
    std::fs::write(path, html).map_err(|e| {
        anyhow::anyhow!(
            "cannot write the report {}: {}",
            path.display(),
            io_error(&e)
        )
    })
}

/// `cores` when the first policy scales on CPU, else the metric's own unit.
fn load_unit(policies: &[CompiledPolicy]) -> &'static str {
    let cpu = policies
        .first()
        .and_then(|p| p.autoscaler.metrics.first())
        .is_some_and(
            |m| matches!(&m.source, MetricSource::Resource { resource, .. } if *resource == ResourceName::Cpu),
        );
    if cpu {
        "cores"
    } else {
        "load units"
    }
}

/// The zone of the first cron (the service's local time), else UTC.
fn report_time_zone(policies: &[CompiledPolicy]) -> jiff::tz::TimeZone {
    policies
        .iter()
        .filter_map(|p| p.autoscaler.crons.as_ref())
        .find_map(|crons| crons.time_zones().next().cloned())
        .unwrap_or(jiff::tz::TimeZone::UTC)
}

fn print_table(simulation: &Simulation, source: &str, scaling: &str, unit: &str, warm_up: i64) {
    println!("load: {source}");
    println!("{scaling}");
    if warm_up > 0 {
        println!(
            "scored after a warm-up of {} (--warm-up): nothing before it counts",
            describe(warm_up)
        );
    }
    println!(
        "{:<24} {:>12} {:>14} {:>9} {:>8} {:>12} {:>8} {:>9}",
        "policy",
        "under (min)",
        format!("overload ({})", short_unit(unit)),
        "replica-h",
        "x bound",
        "scale events",
        "started",
        "p95 util"
    );
    for p in &simulation.policies {
        let s = &p.scores;
        let multiple = simulation
            .bound
            .multiple(s.replica_hours)
            .map_or_else(String::new, |m| format!("{m:.2}"));
        println!(
            "{:<24} {:>12.1} {:>14.2} {:>9.1} {:>8} {:>12} {:>8} {:>8.1}%",
            s.name,
            s.under_provisioned_minutes,
            s.overload_integral,
            s.replica_hours,
            multiple,
            s.scale_events,
            s.pods_started,
            s.p95_utilization
        );
    }
    println!(
        "{:<24} {:>12} {:>14} {:>9.1} {:>8}",
        "clairvoyant bound", "-", "-", simulation.bound.replica_hours, "1.00"
    );
}

fn short_unit(unit: &str) -> String {
    match unit {
        "cores" => "core-min".to_owned(),
        _ => "unit-min".to_owned(),
    }
}

/// A progress bar on stderr, shown only when stderr is a terminal and the run has taken
/// longer than a second.
pub(crate) struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: AtomicBool,
    terminal: bool,
}

impl Progress {
    fn new(total: u64, wanted: bool) -> Progress {
        Progress::labelled(total, wanted, "simulating")
    }

    /// A bar of `total` steps saying what it counts (`simulating`, `replaying`).
    pub(crate) fn labelled(total: u64, wanted: bool, label: &str) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template = format!("{{spinner}} {label} {{bar:40}} {{percent:>3}}% ({{eta}} left)");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style);
        }
        Progress {
            bar,
            started: Instant::now(),
            shown: AtomicBool::new(false),
            terminal: wanted && std::io::stderr().is_terminal(),
        }
    }

    pub(crate) fn advance(&self, decisions: u64) {
        self.bar.inc(decisions);
        if self.terminal
            && !self.shown.load(Ordering::Relaxed)
            && self.started.elapsed() > Duration::from_secs(1)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
