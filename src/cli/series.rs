//! The recorded series `simulate` and `backtest` replay: a `ts,value` CSV file, or a PromQL
//! range query against the user's own Prometheus (through the controller's client), checked
//! the same way: load is never negative, and a stretch without samples longer than
//! `--max-gap` is an error naming where it is, or is closed up with `--allow-gaps`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use foresight_api::duration::format_duration;
use foresight_core::trace::{gaps, parse_csv_lines, peak_outlier, Gap, Outlier, Sample};
use foresight_k8s::prometheus::{PrometheusClient, PrometheusOptions};
use jiff::Timestamp;

use super::input::read_input;

/// Where the series comes from, and how gaps in it are treated.
#[derive(clap::Args, Clone, Debug)]
pub struct SeriesArgs {
    /// The recorded series: CSV rows `ts,value` (Unix seconds, number), optional `ts,value`
    /// header; `-` reads standard input.
    #[arg(long, value_name = "FILE", conflicts_with = "prometheus_url")]
    pub trace: Option<PathBuf>,
    /// Read the series from this Prometheus (or Thanos, Mimir) instead of a file, with
    /// --query over --range up to --end.
    #[arg(long, value_name = "URL", requires = "query")]
    pub prometheus_url: Option<String>,
    /// The PromQL query; it must return one series (aggregate with `sum(...)`).
    #[arg(long, value_name = "PROMQL", requires = "prometheus_url")]
    pub query: Option<String>,
    /// How much history to read from Prometheus, ending at --end.
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", default_value = "7d", value_parser = super::flags::positive_seconds)]
    pub range: i64,
    /// The end of the range read from Prometheus: RFC 3339 (2026-11-20T00:00:00Z) or Unix
    /// seconds [default: now].
    #[arg(long, value_name = "TIME", value_parser = timestamp)]
    pub end: Option<Timestamp>,
    /// The resolution of the range query.
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", default_value = "60s", value_parser = super::flags::positive_seconds)]
    pub step: i64,
    /// A file holding a bearer token for Prometheus.
    #[arg(long, value_name = "FILE")]
    pub prometheus_bearer_token_file: Option<PathBuf>,
    /// The longest stretch without samples accepted; a longer one is an error.
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", default_value = "1h", value_parser = super::flags::positive_seconds)]
    pub max_gap: i64,
    /// Close up gaps longer than --max-gap instead of refusing the series: later samples
    /// move earlier so the replay goes on as if the gap had not been (reported in the output).
    #[arg(long)]
    pub allow_gaps: bool,
}

/// A series, read and checked.
pub struct Series {
    /// The samples, gaps closed up.
    pub samples: Vec<Sample>,
    /// Where it came from, for the output.
    pub source: String,
    /// The gaps that were closed up (`--allow-gaps`), in the original timestamps.
    pub closed_gaps: Vec<Gap>,
    /// What a gap's positions count: `line` of a file, `point` of a query's answer.
    pub unit: &'static str,
    /// The peak, when it dwarfs every other sample (at its original line or point).
    pub outlier: Option<Outlier>,
}

impl SeriesArgs {
    /// Whether a source was named (otherwise the command uses its default).
    pub fn given(&self) -> bool {
        self.trace.is_some() || self.prometheus_url.is_some()
    }

    /// Reads the series named by the flags.
    pub fn read(&self) -> anyhow::Result<Series> {
        if let Some(url) = &self.prometheus_url {
            let query = self.query.as_deref().unwrap_or_default();
            let samples = self.query_prometheus(url, query)?;
            let source = format!("{query} from {url}");
            return self.checked(samples, source, "point");
        }
        let Some(path) = &self.trace else {
            bail!("no series: pass --trace FILE or --prometheus-url URL --query PROMQL");
        };
        let name = path.display().to_string();
        let text = read_input(path).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        self.parse(&text, &name)
    }

    /// Parses and checks CSV `text` (named `name` in messages).
    pub fn parse(&self, text: &str, name: &str) -> anyhow::Result<Series> {
        let samples = parse_csv_lines(text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        self.checked(samples, name.to_owned(), "line")
            .map_err(|e| anyhow::anyhow!("{name}: {e:#}"))
    }

    fn checked(
        &self,
        samples: Vec<(u64, Sample)>,
        source: String,
        unit: &'static str,
    ) -> anyhow::Result<Series> {
        if let Some((at, s)) = samples.iter().find(|(_, s)| s.value < 0.0) {
            bail!(
                "{unit} {at}: value {} is negative; load cannot be below 0",
                s.value
            );
        }
        let outlier = peak_outlier(&samples);
        let found = gaps(&samples, self.max_gap);
        if let (Some(first), false) = (found.first(), self.allow_gaps) {
            let more = match found.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            bail!(
                "no samples between {unit} {} (ts {}) and {unit} {} (ts {}): a gap of {}{more}, \
                 longer than --max-gap {}; fill it, raise --max-gap, or pass --allow-gaps to close \
                 it up",
                first.before.0,
                first.before.1,
                first.after.0,
                first.after.1,
                describe(first.seconds()),
                describe(self.max_gap)
            );
        }
        Ok(Series {
            samples: close_up(samples, &found),
            source,
            closed_gaps: found,
            unit,
            outlier,
        })
    }

    fn query_prometheus(&self, url: &str, query: &str) -> anyhow::Result<Vec<(u64, Sample)>> {
        let options = PrometheusOptions {
            bearer_token_file: self.prometheus_bearer_token_file.clone(),
            ..Default::default()
        };
        let client = PrometheusClient::new(url, options)?;
        let end = self.end.unwrap_or_else(Timestamp::now);
        let end = Timestamp::from_second(end.as_second() - end.as_second().rem_euclid(self.step))?;
        let start = Timestamp::from_second(end.as_second().saturating_sub(self.range))
            .context("--range reaches before the year 0")?;
        let step = Duration::from_secs(self.step.unsigned_abs());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let series = runtime.block_on(client.query_range(query, start, end, step))?;
        let one = match series.as_slice() {
            [] => bail!("the query returned no series between {start} and {end}"),
            [one] => one,
            [a, b, ..] => bail!(
                "the query returned {} series ({:?}, {:?}, ...); the replay needs one: \
                 aggregate it, e.g. sum(...)",
                series.len(),
                a.labels,
                b.labels
            ),
        };
        Ok(one
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u64 + 1, Sample::new(p.ts, p.value)))
            .collect())
    }
}

/// Moves the samples after each gap earlier, so that the gap lasts one usual step.
fn close_up(samples: Vec<(u64, Sample)>, found: &[Gap]) -> Vec<Sample> {
    // The usual step, from the spacings that are not gaps.
    let mut spacing: Vec<i64> = samples
        .windows(2)
        .filter(|w| !found.iter().any(|g| g.after.1 == w[1].1.ts))
        .map(|w| w[1].1.ts - w[0].1.ts)
        .collect();
    spacing.sort_unstable();
    let step = spacing.get(spacing.len() / 2).copied().unwrap_or(60);
    let mut shift = 0i64;
    let mut next_gap = found.iter().peekable();
    samples
        .into_iter()
        .map(|(_, s)| {
            if let Some(gap) = next_gap.next_if(|g| g.after.1 == s.ts) {
                shift = shift.saturating_add(gap.seconds() - step);
            }
            Sample::new(s.ts - shift, s.value)
        })
        .collect()
}

/// `90d` rather than `7776000s`; years for what no duration format reads well.
pub fn describe(seconds: i64) -> String {
    const YEAR: i64 = 31_557_600; // 365.25 days
    if seconds >= 10 * YEAR {
        return format!("{} years", seconds / YEAR);
    }
    format_duration(Duration::from_secs(seconds.max(0).unsigned_abs()))
}

/// An instant on the command line: RFC 3339 or Unix seconds.
pub(crate) fn timestamp(text: &str) -> Result<Timestamp, String> {
    let text = text.trim();
    if super::flags::is_whole_number(text) {
        return text
            .parse::<i64>()
            .ok()
            .and_then(|seconds| Timestamp::from_second(seconds).ok())
            .ok_or_else(|| {
                format!(
                    "{text} is out of range: Unix seconds go from {} to {}",
                    Timestamp::MIN.as_second(),
                    Timestamp::MAX.as_second()
                )
            });
    }
    text.parse::<Timestamp>().map_err(|_| {
        format!("{text:?} is not a time: write RFC 3339 (2026-11-20T00:00:00Z) or Unix seconds")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(points: &[(i64, f64)]) -> Vec<(u64, Sample)> {
        points
            .iter()
            .enumerate()
            .map(|(i, (ts, v))| (i as u64 + 2, Sample::new(*ts, *v)))
            .collect()
    }

    #[test]
    fn gaps_close_up_to_one_step_and_keep_their_order() {
        let samples = lines(&[
            (0, 1.0),
            (60, 2.0),
            (10_060, 3.0),
            (10_120, 4.0),
            (99_999, 5.0),
        ]);
        let found = gaps(&samples, 3600);
        assert_eq!(found.len(), 2);
        let closed: Vec<i64> = close_up(samples, &found).iter().map(|s| s.ts).collect();
        assert_eq!(closed, [0, 60, 120, 180, 240]);
    }

    #[test]
    fn an_end_past_any_clock_is_out_of_range() {
        for text in ["9223372036854775808", "99999999999999"] {
            let err = timestamp(text).unwrap_err();
            assert!(
                err.starts_with(&format!("{text} is out of range: Unix seconds go from ")),
                "{err}"
            );
        }
        assert_eq!(timestamp("1700000000").unwrap().as_second(), 1_700_000_000);
    }

    #[test]
    fn long_spans_read_in_years() {
        assert_eq!(describe(9_999_999_999), "316 years");
        assert_eq!(describe(7200), "2h");
    }
}
