//! `foresight backtest`: replay a recorded series through rolling forecasts and report how
//! accurate they were.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::bail;
use foresight_api::duration::format_duration;
use foresight_api::prediction::{DspSpec, PercentileSpec, PredictionAlgorithm};
use foresight_core::prediction::backtest::{backtest, Accuracy, BacktestOptions, BacktestReport};
use foresight_core::prediction::PredictorConfig;
use foresight_core::trace::Sample;

use super::series::{describe, SeriesArgs};

/// What each reported figure means; shown by `--help` and with the table, and included in
/// the JSON as `definitions`.
const DEFINITIONS: [(&str, &str, &str); 7] = [
    (
        "mape",
        "MAPE",
        "mean absolute percentage error: the mean of |forecast - actual| / |actual| over every sample after a \
         refit up to the next one, in percent (samples whose actual value is 0 are left out)",
    ),
    (
        "under_prediction_ratio",
        "under",
        "the share of those samples where the forecast was below the actual value",
    ),
    (
        "peak_error",
        "peak err",
        "mean absolute peak error: the mean of |P' - P| / |P| in percent, where P' is the forecast peak over \
         [t, t + window] (what the autoscaler scales for) and P the actual maximum over the same window, at \
         every sample t whose window lies inside the trace and the forecast",
    ),
    ("peak_bias", "peak bias", "the mean of (P' - P) / |P| in percent: negative when forecast peaks are too low"),
    (
        "peak_under_prediction_ratio",
        "peak under",
        "the share of those instants where the forecast peak was below the actual peak",
    ),
    (
        "period_seconds",
        "period",
        "the period the predictor found at the last refit, where the most history was available (86400, \
         604800, or none)",
    ),
    (
        "uncovered_points",
        "uncovered",
        "samples after a ready refit that its forecast did not reach (counted, not scored)",
    ),
];

/// The long help after the options: how the replay works and what every figure means.
fn after_help() -> String {
    let mut help = String::from(
        "The trace is replayed as the controller would see it: the predictor is refitted every --refit on \
         the samples up to that moment, and its forecast is compared with the samples that follow, up to \
         the next refit.\n\nMetrics:\n",
    );
    for (key, label, text) in DEFINITIONS {
        help.push_str(&format!("  {label} (JSON `{key}`): {text}\n"));
    }
    help.push_str(
        "\nWith --json: one object with these figures for all refits together, plus `algorithm`, \
         `forecasts` (one entry per refit with the same figures, `origin`, `ready`, `reason`, \
         `estimator`) and `definitions` (the texts above).",
    );
    help
}

/// Arguments of `foresight backtest`.
#[derive(clap::Args)]
#[command(after_long_help = after_help(), allow_negative_numbers = true)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["trace", "prometheus_url"]))]
pub struct BacktestArgs {
    /// The recorded series: --trace FILE (CSV `ts,value`) or --prometheus-url with --query.
    #[command(flatten)]
    series: SeriesArgs,
    /// The predictor to replay.
    #[arg(long, value_enum, default_value_t = AlgorithmArg::Dsp)]
    algorithm: AlgorithmArg,
    /// The prediction window (predictionWindowSeconds; seconds or a duration such as 1h):
    /// forecast and actual peaks are compared over [t, t + window].
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", default_value = "3600", value_parser = crate::cli::flags::positive_seconds)]
    window: i64,
    /// historyLength, e.g. 3d [default: 15d for dsp, 7d for percentile].
    #[arg(long, value_name = "DURATION")]
    history: Option<String>,
    /// sampleInterval, e.g. 1m [default: 1m].
    #[arg(long, value_name = "DURATION")]
    sample_interval: Option<String>,
    /// How often the predictor is refitted (Crane's --model-update-interval).
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", default_value = "12h", value_parser = crate::cli::flags::positive_seconds)]
    refit: i64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// `--algorithm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum AlgorithmArg {
    /// Crane's DSP predictor (daily or weekly period by FFT).
    Dsp,
    /// A value-weighted percentile of history, held flat.
    Percentile,
}

impl BacktestArgs {
    /// The predictor settings, through the same validation as a manifest.
    fn predictor(&self) -> anyhow::Result<PredictorConfig> {
        let (interval, history) = (self.sample_interval.clone(), self.history.clone());
        let spec = match self.algorithm {
            AlgorithmArg::Dsp => PredictionAlgorithm {
                algorithm_type: "dsp".to_owned(),
                dsp: Some(DspSpec {
                    sample_interval: interval,
                    history_length: history,
                    estimators: None,
                }),
                percentile: None,
            },
            AlgorithmArg::Percentile => PredictionAlgorithm {
                algorithm_type: "percentile".to_owned(),
                dsp: None,
                percentile: Some(PercentileSpec {
                    sample_interval: interval,
                    history_length: history,
                    ..Default::default()
                }),
            },
        };
        PredictorConfig::from_spec(&spec)
            .map_err(|e| anyhow::anyhow!("invalid predictor settings: {e}"))
    }
}

/// Runs `foresight backtest`.
pub fn run(args: BacktestArgs) -> anyhow::Result<ExitCode> {
    let config = args.predictor()?;
    let refit_secs = args.refit;
    let series = args.series.read()?;
    if let Some(outlier) = &series.outlier {
        // The forecasts are scored on the values as recorded, so the run goes on; but its
        // errors around that sample say more about the sample than about the predictor.
        eprintln!(
            "warning: {}: {} {}: {outlier}; forecast errors near it measure that sample, not \
             the predictor: is it a recording error?",
            series.source, series.unit, outlier.line
        );
    }
    let samples = series.samples;
    let started = Instant::now();
    let report = backtest(
        &config,
        &samples,
        BacktestOptions {
            refit_secs,
            window_secs: args.window,
        },
    );
    let elapsed = started.elapsed();
    if args.json {
        println!("{}", json(&series.source, &samples, &report)?);
    } else {
        print!(
            "{}",
            table(&series.source, &config, &samples, &report, elapsed)
        );
        for gap in &series.closed_gaps {
            println!(
                "closed up: no samples for {} between {} and {} (--allow-gaps)",
                describe(gap.seconds()),
                timestamp(gap.before.1),
                timestamp(gap.after.1)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn json(source: &str, samples: &[Sample], report: &BacktestReport) -> anyhow::Result<String> {
    let mut value = serde_json::to_value(report)?;
    let serde_json::Value::Object(map) = &mut value else {
        bail!("the report did not serialize to an object")
    };
    map.insert("trace".to_owned(), source.into());
    map.insert("samples".to_owned(), samples.len().into());
    let definitions: serde_json::Map<String, serde_json::Value> = DEFINITIONS
        .iter()
        .map(|(key, _, text)| ((*key).to_owned(), (*text).into()))
        .collect();
    map.insert("definitions".to_owned(), definitions.into());
    Ok(serde_json::to_string_pretty(&value)?)
}

fn table(
    source: &str,
    config: &PredictorConfig,
    samples: &[Sample],
    report: &BacktestReport,
    elapsed: Duration,
) -> String {
    let mut out = String::new();
    let (first, last) = (
        samples.first().map_or(0, |s| s.ts),
        samples.last().map_or(0, |s| s.ts),
    );
    out.push_str(&format!(
        "trace      {}: {} samples, {} .. {}\n",
        source,
        samples.len(),
        timestamp(first),
        timestamp(last)
    ));
    out.push_str(&format!(
        "predictor  {} (sampleInterval {}, historyLength {}), refit every {}, window {}\n\n",
        config.algorithm(),
        secs(config.interval_secs()),
        secs(config.history_secs()),
        secs(report.refit_seconds),
        secs(report.window_seconds)
    ));
    out.push_str(&format!(
        "{:<22} {:>7} {:>7} {:>8} {:>6} {:>8} {:>9} {:>10}  {}\n",
        "refit",
        "period",
        "points",
        "MAPE",
        "under",
        "peak err",
        "peak bias",
        "peak under",
        "estimator / reason"
    ));
    for f in &report.forecasts {
        let detail = match (&f.estimator, &f.reason) {
            (Some(e), _) => e.clone(),
            (None, Some(r)) => format!("not ready: {r}"),
            (None, None) => String::new(),
        };
        out.push_str(&row(
            &timestamp(f.origin),
            f.period_seconds,
            &f.accuracy,
            &detail,
        ));
    }
    out.push_str(&row("all", report.period_seconds, &report.accuracy, ""));
    out.push_str(&format!(
        "\n{} of {} refits ready; period {}; {} samples not covered by a forecast; replayed in {:.2} s\n\n",
        report.ready_forecasts,
        report.forecasts.len(),
        report.period_seconds.map_or("none".to_owned(), secs),
        report.uncovered_points,
        elapsed.as_secs_f64()
    ));
    out.push_str("Metrics:\n");
    for (_, label, text) in DEFINITIONS {
        out.push_str(&format!("  {label:<10}  {text}\n"));
    }
    out
}

fn row(label: &str, period: Option<i64>, a: &Accuracy, detail: &str) -> String {
    let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2}%"));
    let share = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.1}%", v * 100.0));
    let signed = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:+.2}%"));
    format!(
        "{:<22} {:>7} {:>7} {:>8} {:>6} {:>8} {:>9} {:>10}  {}\n",
        label,
        period.map_or("-".to_owned(), secs),
        a.points,
        pct(a.mape),
        share(a.under_prediction_ratio),
        pct(a.peak_error),
        signed(a.peak_bias),
        share(a.peak_under_prediction_ratio),
        detail
    )
}

fn secs(s: i64) -> String {
    format_duration(Duration::from_secs(u64::try_from(s).unwrap_or(0)))
}

fn timestamp(ts: i64) -> String {
    jiff::Timestamp::from_second(ts).map_or_else(|_| format!("{ts}"), |t| t.to_string())
}
