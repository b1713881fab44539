//! The `foresight` command line.

// unwrap and expect only in tests: the binary reports errors, it does not panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// jemalloc rather than glibc's malloc. Under tokio's worker threads glibc keeps an arena per
/// thread and returns little of what a burst (the relist of every cached object after an API
/// server restart) used; jemalloc gives freed pages back to the system after a few seconds.
/// Measured with 2,000 and 10,000 autoscalers in docs/controller.md.
///
/// The `system-allocator` feature leaves the system's malloc in place, for heap profilers.
#[cfg(all(unix, not(feature = "system-allocator")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, which it reads before `main` from this symbol (then from the
/// `_RJEM_MALLOC_CONF` environment variable, which overrides them). One arena instead of
/// eight on two cores: the cached objects one worker thread decodes and another frees stay in
/// one set of slabs. A background thread returns freed pages on time even when the thread that
/// freed them has gone quiet, and after one second instead of ten: a relist's burst then
/// leaves the RSS soon after it ends. Measured in docs/controller.md.
#[cfg(all(unix, not(feature = "system-allocator")))]
#[allow(unsafe_code)] // a symbol with a chosen name: jemalloc's weak default gives way to it
#[export_name = "_rjem_malloc_conf"]
static JEMALLOC_OPTIONS: Option<&u8> =
    Some(&b"narenas:1,background_thread:true,dirty_decay_ms:1000\0"[0]);

/// Foresight: a horizontal autoscaler for Kubernetes with HPA parity, prediction, cron,
/// and a simulator.
#[derive(Parser)]
#[command(name = "foresight", version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("FORESIGHT_REVISION"), ")"), about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explain a decision: a live autoscaler's last one (NAME, -n NAMESPACE; -A for all), or
    /// the one a snapshot file gives (--snapshot).
    Explain(cli::explain::ExplainArgs),
    /// Validate EffectiveHorizontalPodAutoscaler manifests; prints every problem.
    Validate(cli::validate::ValidateArgs),
    /// Replay a load trace through rolling forecasts and report their accuracy.
    Backtest(cli::backtest::BacktestArgs),
    /// Replay a load trace through a modelled cluster, compare policies, write a report.
    Simulate(Box<cli::simulate::SimulateArgs>),
    /// Run the Kubernetes controller.
    Controller(Box<cli::controller::ControllerArgs>),
    /// Print the EffectiveHorizontalPodAutoscaler CustomResourceDefinition (YAML).
    Crd(cli::crd::CrdArgs),
    /// Convert native HorizontalPodAutoscalers and Crane EffectiveHorizontalPodAutoscalers
    /// into Foresight objects (YAML on stdout, notes as comments, problems on stderr).
    Import(cli::import::ImportArgs),
    /// Replay every autoscaler in manifests over its history in Prometheus, as it runs and
    /// with prediction at the same risk: a row per workload, fleet totals, the recommended
    /// manifests (-o) and a fleet report (--report).
    Recommend(Box<cli::recommend::RecommendArgs>),
}

fn main() -> ExitCode {
    // One TLS crypto provider for the whole process (kube's client builds on the process
    // default); installing fails only if one is already installed, which is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Controller(_)) {
        end_quietly_on_closed_pipe();
    }
    let result = match cli.command {
        Command::Explain(args) => cli::explain::run(args),
        Command::Validate(args) => cli::validate::run(args),
        Command::Backtest(args) => cli::backtest::run(args),
        Command::Simulate(args) => cli::simulate::run(*args),
        Command::Controller(args) => cli::controller::run(*args),
        Command::Crd(args) => cli::crd::run(args),
        Command::Import(args) => cli::import::run(args),
        Command::Recommend(args) => cli::recommend::run(*args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", error_text(&err));
            ExitCode::FAILURE
        }
    }
}

/// An error and its causes on one line, each said once: libraries often repeat their
/// source's text in their own (`...: No such file or directory: No such file or directory`),
/// and Rust's `(os error 2)` means nothing to a user.
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cli::input::without_errno(&cause.to_string());
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// `foresight validate ... | head` must end as any Unix tool does when the reader goes away,
/// not panic in `println!`: Rust ignores SIGPIPE, so restore the default for the one-shot
/// commands. (The controller keeps it ignored: its sockets report EPIPE as an error.)
#[allow(unsafe_code)]
fn end_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any thread is spawned; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
