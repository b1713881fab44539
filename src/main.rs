//! The `foresight` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Foresight: a horizontal autoscaler for Kubernetes with HPA parity, prediction, cron,
/// and a simulator.
#[derive(Parser)]
#[command(name = "foresight", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the decision for a snapshot (spec, observation, history, now) as a table.
    Explain(cli::explain::ExplainArgs),
    /// Validate EffectiveHorizontalPodAutoscaler manifests; prints every problem.
    Validate(cli::validate::ValidateArgs),
    /// Replay a load trace through rolling forecasts and report their accuracy.
    Backtest(cli::backtest::BacktestArgs),
    /// Replay a load trace through a modelled cluster, compare policies, write a report.
    Simulate(cli::simulate::SimulateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Explain(args) => cli::explain::run(args),
        Command::Validate(args) => cli::validate::run(args),
        Command::Backtest(args) => cli::backtest::run(args),
        Command::Simulate(args) => cli::simulate::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
