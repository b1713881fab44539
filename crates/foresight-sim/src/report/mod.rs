//! The HTML report: one self-contained file (inline CSS and SVG, no script, no network) with
//! the score table, charts of load, capacity and replicas per policy, under-provisioned
//! periods, cron windows, forecast peaks, and the explanation of every rescale.

pub mod fleet;
mod frontier;
mod svg;
mod time_axis;

use std::fmt::Write;

use foresight_api::status::DecisionRecord;
use jiff::tz::TimeZone;

use crate::cluster::timestamp;
use crate::config::ModelConfig;
use crate::frontier::Comparison;
use crate::objective_frontier::SWEPT_SHORTFALLS;
use crate::runner::{PolicyOutcome, Span};
use crate::simulation::Simulation;
use crate::timeline::Timeline;
use crate::verdict::{change_text, deltas};
use crate::windows::CronWindow;
use foresight_core::trace::Gap;
use svg::{escape, Chart};

pub use svg::nice_ticks;
pub use time_axis::{time_ticks, TimeTick};

/// Colours of the policies, in order (red is kept for under-provisioning).
const PALETTE: [&str; 6] = [
    "#1f6fb4", "#2a9d3a", "#8e44ad", "#e67e22", "#8c564b", "#17a2b8",
];

/// Chart width, pixels.
const WIDTH: f64 = 1180.0;

/// What the report shows besides the simulation.
pub struct ReportContext<'a> {
    /// The reactive frontier and every policy against it (absent with `--no-frontier`).
    pub frontier: Option<&'a Comparison>,
    /// Gaps in the trace that were closed up (`--allow-gaps`).
    pub closed_gaps: &'a [Gap],
    /// Where the load came from.
    pub source: &'a str,
    /// The model's settings.
    pub model: &'a ModelConfig,
    /// The load's unit (`cores` for CPU metrics).
    pub unit: &'a str,
    /// The zone times are shown in.
    pub time_zone: TimeZone,
}

fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Dash patterns of the policies' lines, in order.
const DASHES: [&str; 4] = ["none", "9 3", "3 2", "10 3 2 3"];

/// How policy `i` of `count` is drawn where all are drawn together: its colour, a dash
/// pattern of its own, and a width that shrinks with each policy drawn later, so that where
/// lines coincide the earlier ones still show on both sides of the later.
fn policy_line(i: usize, count: usize) -> String {
    let width = 1.8 + 1.0 * (count.saturating_sub(1 + i)) as f64;
    format!(
        "stroke:{};stroke-width:{width:.1};stroke-dasharray:{}",
        colour(i),
        DASHES[i % DASHES.len()]
    )
}

/// `1 core`, `2.5 cores`.
fn amount(value: f64, unit: &str) -> String {
    let unit = if value == 1.0 {
        unit.strip_suffix('s').unwrap_or(unit)
    } else {
        unit
    };
    format!("{value} {unit}")
}

/// A time as `Wed 11 Aug 14:05` in `tz`.
fn local(secs: i64, tz: &TimeZone) -> String {
    timestamp(secs)
        .to_zoned(tz.clone())
        .strftime("%a %d %b %H:%M")
        .to_string()
}

/// A decision's explanation as lines: what happened, every proposal, every limit.
pub fn explain(record: &DecisionRecord) -> Vec<String> {
    let mut lines = vec![record.summary.clone()];
    for p in &record.proposals {
        // Sources whose name already says what they are (`cron ...`) are not repeated.
        let mut line = if p.name.starts_with(p.source.as_str()) {
            format!("{}: ", p.name)
        } else {
            format!("{} {}: ", p.source, p.name)
        };
        match (p.replicas, &p.error) {
            (Some(n), _) => {
                let _ = write!(line, "{n} replicas");
                if let (Some(c), Some(t)) = (&p.current, &p.target) {
                    let _ = write!(line, " (current {c}, target {t})");
                }
            }
            (None, Some(e)) => line.push_str(e),
            (None, None) => line.push_str("no proposal"),
        }
        if let Some(d) = &p.detail {
            let _ = write!(line, "; {d}");
        }
        lines.push(line);
    }
    if let Some(r) = record.recommendation {
        lines.push(format!("recommendation: {r}"));
    }
    for l in &record.limits {
        lines.push(format!(
            "limit {}: {} -> {} ({}: {})",
            l.stage, l.from, l.to, l.reason, l.message
        ));
    }
    lines
}

/// Renders the report.
pub fn render(simulation: &Simulation, ctx: &ReportContext<'_>) -> String {
    let tz = &ctx.time_zone;
    let span = simulation.span;
    let mut html = String::with_capacity(1 << 20);
    html.push_str(concat!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        "<title>Foresight simulation</title><style>",
        include_str!("report.css"),
        "</style></head><body>"
    ));
    let _ = write!(
        html,
        "<h1>Foresight simulation</h1><p class=\"lead\">{} policies on <b>{}</b>, {} to {} ({}). \
         Peak load {:.2} {unit}; one pod carries {:.2} {unit} at the first policy's target.</p>",
        simulation.policies.len(),
        escape(ctx.source),
        escape(&local(span.start, tz)),
        escape(&local(span.end, tz)),
        escape(tz.iana_name().unwrap_or("UTC")),
        simulation.peak_load,
        simulation.load_per_pod,
        unit = escape(ctx.unit),
    );
    html.push_str(&model_text(ctx));
    score_table(&mut html, simulation, ctx.unit);
    verdict_section(&mut html, simulation, ctx);
    html.push_str(&capacity_chart(simulation, ctx));
    html.push_str(&close_up_chart(simulation, ctx));
    html.push_str(&replicas_chart(simulation, tz));
    for (i, outcome) in simulation.policies.iter().enumerate() {
        policy_section(&mut html, simulation, i, outcome, ctx);
    }
    html.push_str("</body></html>\n");
    html
}

/// The model's settings, naming only the delays that are set.
fn model_text(ctx: &ReportContext<'_>) -> String {
    let m = ctx.model;
    let mut startup = format!(
        "pods ready {}&#8239;s after creation",
        m.startup_delay_seconds
    );
    let mut extra = Vec::new();
    if m.startup_jitter_seconds > 0 {
        extra.push(format!("jitter up to {}&#8239;s", m.startup_jitter_seconds));
    }
    if m.startup_tail_seconds > 0 {
        extra.push(format!(
            "long tail of mean {}&#8239;s",
            m.startup_tail_seconds
        ));
    }
    if !extra.is_empty() {
        let _ = write!(startup, " ({}, seed {})", extra.join(", "), m.seed);
    }
    let lag = if m.metric_lag_seconds > 0 {
        format!(", {}&#8239;s extra lag", m.metric_lag_seconds)
    } else {
        String::new()
    };
    format!(
        "<p class=\"model\">Model: {startup}; metrics scraped every {}&#8239;s over a {}&#8239;s \
         window{lag}; {}m CPU request and {} capacity per pod; predictor refitted every \
         {}&#8239;s. See <code>docs/simulator.md</code>.</p>",
        m.scrape_interval_seconds,
        m.metric_window_seconds,
        m.pod_cpu_request_millicores,
        escape(&amount(m.pod_capacity, ctx.unit)),
        m.refit_interval_seconds,
    )
}

/// The answer to "is it worth it": each policy against the first, each predictive policy
/// against the reactive one as safe as it (drawn as bars), and how prediction fared.
fn verdict_section(html: &mut String, simulation: &Simulation, ctx: &ReportContext<'_>) {
    let scores: Vec<_> = simulation.policies.iter().map(|p| &p.scores).collect();
    let deltas = deltas(&scores);
    // A single policy still has its frontier (and its tuned frontier) to show.
    if deltas.is_empty() && ctx.closed_gaps.is_empty() && ctx.frontier.is_none() {
        return;
    }
    html.push_str("<h2>Verdict</h2><ul class=\"verdict\" id=\"verdict\">");
    for d in &deltas {
        let _ = write!(
            html,
            "<li><b>{}</b> against {}: under-provisioned {}; replica-hours {}.</li>",
            escape(&d.policy),
            escape(&d.baseline),
            change_text(d.under_minutes, " min"),
            change_text(d.replica_hours, "")
        );
    }
    for gap in ctx.closed_gaps {
        let _ = write!(
            html,
            "<li>No samples for {} s from {} to {}: closed up (<code>--allow-gaps</code>), so \
             the times after it are shifted earlier.</li>",
            gap.seconds(),
            escape(&local(gap.before.1, &ctx.time_zone)),
            escape(&local(gap.after.1, &ctx.time_zone))
        );
    }
    html.push_str("</ul>");
    if let Some(comparison) = ctx.frontier {
        frontier_section(html, simulation, comparison);
    }
    let predicting: Vec<_> = simulation
        .policies
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, &p.scores.name, p.prediction.as_ref()?)))
        .collect();
    if !predicting.is_empty() {
        html.push_str("<h3>Prediction</h3><ul class=\"prediction-status\">");
        for (i, name, summary) in predicting {
            let _ = write!(
                html,
                "<li id=\"prediction-status-{i}\"><b>{}</b>: {}</li>",
                escape(name),
                escape(&summary.describe(simulation.span.start))
            );
        }
        html.push_str("</ul>");
    }
}

/// Every policy against the reactive policy exactly as safe, and the chart of cost against
/// shortfall with the frontier and the clairvoyant bound.
fn frontier_section(html: &mut String, simulation: &Simulation, comparison: &Comparison) {
    let f = &comparison.frontier;
    let (first, last) = (
        f.points.first().map_or("", |p| p.target.as_str()),
        f.points.last().map_or("", |p| p.target.as_str()),
    );
    let _ = write!(
        html,
        "<h3>Cost against risk</h3><p class=\"note\">A reactive policy buys safety with a lower \
         target. <b>{}</b> was replayed at {} targets from <code>{}</code> to <code>{}</code> \
         (grey: the cheapest for each shortfall); each policy is compared with it at equal \
         under-provisioned minutes. The dashed line is the clairvoyant bound: pods exactly \
         when the load needs them, started a start-up time early, {:.1} replica-h.</p>\
         <ul class=\"verdict\" id=\"equal-shortfall\">",
        escape(&f.baseline),
        f.points.len(),
        escape(first),
        escape(last),
        simulation.bound.replica_hours,
    );
    for e in &comparison.policies {
        let _ = write!(
            html,
            "<li><b>{}</b>: {:.1} min for {:.1} replica-h; reactive as safe ({}): {:.1} \
             replica-h. <b>{}</b>.</li>",
            escape(&e.policy),
            e.under_minutes,
            e.replica_hours,
            escape(&e.reactive_text()),
            e.reactive_replica_hours,
            escape(&e.verdict()),
        );
    }
    html.push_str("</ul>");
    if !comparison.tuned_against_reactive.is_empty() {
        let _ = write!(
            html,
            "<p class=\"note\">A policy with an objective was replayed with its shortfall \
             swept ({}), each replay choosing its operating point from its own history (dashed: \
             the cheapest for each shortfall). Against <b>{}</b> at its own target:</p>\
             <ul class=\"verdict\" id=\"tuned-frontier\">",
            escape(&SWEPT_SHORTFALLS.join(", ")),
            escape(&f.baseline),
        );
        for a in &comparison.tuned_against_reactive {
            let _ = write!(
                html,
                "<li><b>{}</b>: {}.</li>",
                escape(&a.policy),
                escape(&a.sentence())
            );
        }
        html.push_str("</ul>");
    }
    html.push_str(&frontier::frontier_chart(simulation, comparison));
}

fn score_table(html: &mut String, simulation: &Simulation, unit: &str) {
    let best_under = simulation
        .policies
        .iter()
        .map(|p| p.scores.under_provisioned_minutes)
        .fold(f64::INFINITY, f64::min);
    let best_cost = simulation
        .policies
        .iter()
        .map(|p| p.scores.replica_hours)
        .fold(f64::INFINITY, f64::min);
    let _ = write!(
        html,
        "<h2>Scores</h2><table id=\"scores\" class=\"scores\"><thead><tr><th>policy</th>\
         <th title=\"minutes with ready capacity below load\">under-provisioned (min)</th>\
         <th title=\"load not served, integrated over time\">overload ({} × min)</th>\
         <th title=\"pods (starting or ready) integrated over time\">replica-hours</th>\
         <th>scale events (up)</th><th>pods started</th>\
         <th title=\"95th percentile over decision intervals of load / ready capacity\">p95 utilization</th>\
         <th>mean utilization</th><th>max replicas</th>\
         <th title=\"replica-hours as a multiple of the clairvoyant bound's\">× bound</th>\
         </tr></thead><tbody>",
        escape(unit)
    );
    for (i, p) in simulation.policies.iter().enumerate() {
        let s = &p.scores;
        let mark = |best: bool| if best { " class=\"best\"" } else { "" };
        let _ = write!(
            html,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>\
             <td{}>{:.1}</td><td>{:.2}</td><td{}>{:.1}</td><td>{} ({})</td><td>{}</td>\
             <td>{:.1}%</td><td>{:.1}%</td><td>{}</td><td>{}</td></tr>",
            colour(i),
            escape(&s.name),
            mark(s.under_provisioned_minutes == best_under),
            s.under_provisioned_minutes,
            s.overload_integral,
            mark(s.replica_hours == best_cost),
            s.replica_hours,
            s.scale_events,
            s.scale_ups,
            s.pods_started,
            s.p95_utilization,
            s.mean_utilization,
            s.max_replicas,
            simulation
                .bound
                .multiple(s.replica_hours)
                .map_or_else(String::new, |m| format!("{m:.2}×")),
        );
    }
    let b = &simulation.bound;
    let _ = write!(
        html,
        "<tr class=\"bound\" title=\"ceil(load / pod capacity) ready pods at every instant \
         within {}–{}, each started {} s before it is needed\"><td>clairvoyant bound</td>\
         <td>–</td><td>–</td><td>{:.1}</td><td></td><td></td><td></td><td></td><td></td>\
         <td>1.00×</td></tr>",
        b.min_replicas, b.max_replicas, b.startup_seconds, b.replica_hours
    );
    html.push_str("</tbody></table>");
}

fn max_capacity(simulation: &Simulation) -> f64 {
    simulation
        .policies
        .iter()
        .filter_map(|p| p.timeline.as_ref())
        .flat_map(|t| t.capacity.iter().copied())
        .fold(
            simulation.load.iter().copied().fold(0.0, f64::max),
            f64::max,
        )
}

fn capacity_chart(simulation: &Simulation, ctx: &ReportContext<'_>) -> String {
    let span = simulation.span;
    let mut chart = Chart::new(
        WIDTH,
        340.0,
        span.start,
        span.end,
        max_capacity(simulation) * 1.05,
    );
    draw_load(
        &mut chart,
        span.start,
        simulation.bucket_seconds,
        &simulation.load,
    );
    for (i, p) in simulation.policies.iter().enumerate() {
        if let Some(t) = &p.timeline {
            let style = policy_line(i, simulation.policies.len());
            chart.steps(t.start, t.bucket_seconds, &t.capacity, "capacity", &style);
            chart.legend(&format!("{} ready capacity", p.scores.name), &style, false);
        }
    }
    format!(
        "<h2>Load and ready capacity</h2><p class=\"note\">Mean per {} of the load and of each policy's ready capacity (ready pods × capacity per pod).</p>{}",
        bucket_text(simulation.bucket_seconds),
        chart.finish(
            "chart-capacity",
            "Load and ready capacity of every policy",
            &format!("load ({})", ctx.unit),
            &ctx.time_zone
        )
    )
}

/// Length of the close-up window.
const CLOSE_UP_SECONDS: i64 = 3 * 3600;

/// The window of [`CLOSE_UP_SECONDS`] holding the most under-provisioned time, summed over the
/// policies; `None` when no policy was ever under-provisioned.
fn worst_window(simulation: &Simulation) -> Option<(i64, i64)> {
    let periods: Vec<(i64, i64)> = simulation
        .policies
        .iter()
        .filter_map(|p| p.timeline.as_ref())
        .flat_map(|t| t.under_provisioned.iter().copied())
        .take(5000)
        .collect();
    let span = simulation.span;
    let length = CLOSE_UP_SECONDS.min(span.end - span.start);
    let mut best: Option<(i64, i64)> = None;
    for &(a, b) in &periods {
        let start = ((a + b) / 2 - length / 2).clamp(span.start, span.end - length);
        let end = start + length;
        let covered: i64 = periods
            .iter()
            .map(|&(x, y)| (y.min(end) - x.max(start)).max(0))
            .sum();
        if best.is_none_or(|(_, c)| covered > c) {
            best = Some((start, covered));
        }
    }
    best.map(|(start, _)| (start, start + length))
}

/// The load as a grey area, with its legend entry: the background of every load chart.
fn draw_load(chart: &mut Chart, start: i64, step: i64, values: &[f64]) {
    chart.area(start, step, values, "load");
    chart.legend("load", "fill:#c9ced6", true);
}

/// The values of a fine series (one per `tick` from `start`) inside `[from, to)`, with the
/// time of the first.
fn fine_slice(values: &[f32], start: i64, tick: i64, from: i64, to: i64) -> (i64, Vec<f64>) {
    let tick = tick.max(1);
    let first = usize::try_from((from - start).div_euclid(tick)).unwrap_or(0);
    let last = usize::try_from((to - start + tick - 1).div_euclid(tick)).unwrap_or(0);
    let slice = values
        .get(first..last.min(values.len()))
        .unwrap_or_default();
    (
        start + first as i64 * tick,
        slice.iter().map(|v| f64::from(*v)).collect(),
    )
}

fn close_up_chart(simulation: &Simulation, ctx: &ReportContext<'_>) -> String {
    let Some((from, to)) = worst_window(simulation) else {
        return "<h2>Close-up</h2><p class=\"note\">No policy was ever under-provisioned.</p>"
            .to_owned();
    };
    let timelines: Vec<(usize, &crate::timeline::Timeline)> = simulation
        .policies
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.timeline.as_ref().map(|t| (i, t)))
        .collect();
    let Some((_, first)) = timelines.first() else {
        return String::new();
    };
    let (load_start, load) =
        fine_slice(&first.fine_load, first.start, first.tick_seconds, from, to);
    let mut series = Vec::new();
    let mut max = load.iter().copied().fold(0.0, f64::max);
    for (i, t) in &timelines {
        let (start, values) = fine_slice(&t.fine_capacity, t.start, t.tick_seconds, from, to);
        max = values.iter().copied().fold(max, f64::max);
        series.push((*i, t, start, values));
    }
    let mut chart = Chart::new(WIDTH, 300.0, from, to, max * 1.05);
    draw_load(&mut chart, load_start, first.tick_seconds, &load);
    for (i, t, start, values) in &series {
        let name = &simulation.policies[*i].scores.name;
        let inside: Vec<(i64, i64)> = t
            .under_provisioned
            .iter()
            .copied()
            .filter(|&(a, b)| b > from && a < to)
            .collect();
        let titles: Vec<String> = inside
            .iter()
            .map(|&(a, b)| {
                format!(
                    "{name} under-provisioned {} – {} ({} s)",
                    local(a, &ctx.time_zone),
                    local(b, &ctx.time_zone),
                    b - a
                )
            })
            .collect();
        chart.periods(&inside, "under", None, Some(&titles));
        let style = policy_line(*i, simulation.policies.len());
        chart.steps(*start, t.tick_seconds, values, "capacity", &style);
        chart.legend(&format!("{name} ready capacity"), &style, false);
    }
    chart.legend("under-provisioned", "fill:#e74c3c", true);
    format!(
        "<h2>Close-up</h2><p class=\"note\">The {} hours with the most under-provisioned time, \
         per decision interval: load, each policy's ready capacity, and the periods (any policy) \
         when it fell short.</p>{}",
        CLOSE_UP_SECONDS / 3600,
        chart.finish(
            "chart-close-up",
            "Close-up of the worst under-provisioned hours",
            &format!("load ({})", ctx.unit),
            &ctx.time_zone
        )
    )
}

fn replicas_chart(simulation: &Simulation, tz: &TimeZone) -> String {
    let span = simulation.span;
    let max = simulation
        .policies
        .iter()
        .filter_map(|p| p.timeline.as_ref())
        .flat_map(|t| t.replicas.iter().copied())
        .max()
        .unwrap_or(1);
    let mut chart = Chart::new(WIDTH, 260.0, span.start, span.end, f64::from(max) * 1.05);
    for (i, p) in simulation.policies.iter().enumerate() {
        if let Some(t) = &p.timeline {
            let style = policy_line(i, simulation.policies.len());
            let values: Vec<f64> = t.replicas.iter().map(|r| f64::from(*r)).collect();
            chart.steps(t.start, t.bucket_seconds, &values, "replicas", &style);
            chart.legend(&p.scores.name, &style, false);
        }
    }
    format!(
        "<h2>Replicas</h2><p class=\"note\">Most pods (starting or ready) per {}.</p>{}",
        bucket_text(simulation.bucket_seconds),
        chart.finish("chart-replicas", "Replicas of every policy", "replicas", tz)
    )
}

/// Prediction's record after each refit: the forecast error over the accuracy window, the
/// periods prediction was demoted, and the lead time its proposals used.
fn prediction_chart(
    html: &mut String,
    t: &Timeline,
    index: usize,
    name: &str,
    span: Span,
    tz: &TimeZone,
) {
    let points = &t.prediction;
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return;
    };
    let step = points.get(1).map_or(3600, |p| (p.at - first.at).max(1));
    // Errors of several hundred percent happen (a forecast of a near-idle workload); the axis
    // stops at 200% and such values are drawn at the top.
    const CAP: f64 = 200.0;
    let top = points
        .iter()
        .filter_map(|p| p.error_percent)
        .fold(60.0f64, f64::max)
        .min(CAP);
    let mut chart = Chart::new(WIDTH, 180.0, span.start, span.end, top * 1.1);
    let mut demoted: Vec<(i64, i64)> = Vec::new();
    for (i, p) in points.iter().enumerate().filter(|(_, p)| p.demoted) {
        let end = points.get(i + 1).map_or(span.end, |n| n.at);
        match demoted.last_mut() {
            Some(last) if last.1 == p.at => last.1 = end,
            _ => demoted.push((p.at, end)),
        }
    }
    if !demoted.is_empty() {
        let titles: Vec<String> = demoted
            .iter()
            .map(|&(a, b)| format!("prediction demoted {} – {}", local(a, tz), local(b, tz)))
            .collect();
        chart.periods(&demoted, "demoted", None, Some(&titles));
        chart.legend("prediction demoted (ForecastInaccurate)", "fill:#bbb", true);
    }
    // Points at the refits, drawn as a line through the middle of each refit interval.
    let values: Vec<Option<f64>> = points
        .iter()
        .map(|p| p.error_percent.map(|e| e.min(CAP)))
        .collect();
    let style = format!("stroke:{}", colour(index));
    chart.line(first.at - step / 2, step, &values, "forecast-error", &style);
    chart.legend("forecast error over the accuracy window (%)", &style, false);
    let demoted_minutes: i64 = demoted.iter().map(|(a, b)| b - a).sum::<i64>() / 60;
    let _ = write!(
        html,
        "<h3>Prediction</h3><p class=\"note\">Proposals looked {}&#8239;s ahead: start-up {}&#8239;s ({}) \
         plus two sync periods. Forecast error after the last refit: {}. Demoted for {} minutes{}.</p>{}",
        last.horizon_seconds,
        last.startup_seconds,
        if last.startup_measured { "measured from the pods" } else { "assumed" },
        last.error_percent.map_or("not measured".to_owned(), |e| format!("{e:.0}%")),
        demoted_minutes,
        if demoted.is_empty() { "" } else { " (shaded; hover for when)" },
        chart.finish(
            &format!("chart-prediction-{index}"),
            &format!("{name}: forecast error and demotion"),
            "error (%)",
            tz
        )
    );
}

fn bucket_text(seconds: i64) -> String {
    if seconds % 60 == 0 {
        format!("{} min", seconds / 60)
    } else {
        format!("{seconds} s")
    }
}

/// The highest of the forecast peaks of each local day: every refit finds a peak inside its
/// window, and marking them all would bury the chart.
fn daily_peaks(peaks: &[(i64, f64)], tz: &TimeZone) -> Vec<(i64, f64)> {
    let mut sorted = peaks.to_vec();
    sorted.sort_by_key(|p| p.0);
    let mut out: Vec<(jiff::civil::Date, i64, f64)> = Vec::new();
    for (at, value) in sorted {
        let day = timestamp(at).to_zoned(tz.clone()).date();
        match out.last_mut() {
            Some(last) if last.0 == day => {
                if value > last.2 {
                    *last = (day, at, value);
                }
            }
            _ => out.push((day, at, value)),
        }
    }
    out.into_iter().map(|(_, at, v)| (at, v)).collect()
}

fn cron_titles(windows: &[CronWindow], tz: &TimeZone) -> Vec<String> {
    windows
        .iter()
        .map(|w| {
            format!(
                "cron {} active {} – {}: holds at least {} replicas",
                w.names.join(", "),
                local(w.start, tz),
                local(w.end, tz),
                w.target
            )
        })
        .collect()
}

fn policy_section(
    html: &mut String,
    simulation: &Simulation,
    index: usize,
    outcome: &PolicyOutcome,
    ctx: &ReportContext<'_>,
) {
    let tz = &ctx.time_zone;
    let name = &outcome.scores.name;
    let _ = write!(
        html,
        "<section class=\"policy\" id=\"policy-{index}\"><h2><span class=\"swatch\" style=\"background:{}\"></span>{}</h2>",
        colour(index),
        escape(name)
    );
    let Some(t) = &outcome.timeline else {
        html.push_str("<p>No timeline was recorded.</p></section>");
        return;
    };
    let span = simulation.span;
    load_chart(html, simulation, index, outcome, t, ctx);
    policy_replicas_chart(html, t, index, name, span, tz);
    prediction_chart(html, t, index, name, span, tz);
    decisions_table(html, t, index, tz);
    html.push_str("</section>");
}

/// Load against this policy's ready capacity, with its cron windows, the metric outages, its
/// under-provisioned periods and the daily forecast peaks.
fn load_chart(
    html: &mut String,
    simulation: &Simulation,
    index: usize,
    outcome: &PolicyOutcome,
    t: &Timeline,
    ctx: &ReportContext<'_>,
) {
    let (tz, span, name) = (&ctx.time_zone, simulation.span, &outcome.scores.name);
    let style = format!("stroke:{}", colour(index));
    let windows = simulation
        .cron_windows
        .get(index)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let forecast_max = t
        .forecast
        .iter()
        .flatten()
        .copied()
        .chain(t.forecast_peaks.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let mut chart = Chart::new(
        WIDTH,
        300.0,
        span.start,
        span.end,
        max_capacity(simulation).max(forecast_max) * 1.05,
    );
    mark_windows_and_outages(&mut chart, simulation, windows, tz);
    draw_load(
        &mut chart,
        span.start,
        simulation.bucket_seconds,
        &simulation.load,
    );
    let under_titles: Vec<String> = t
        .under_provisioned
        .iter()
        .map(|&(a, b)| {
            format!(
                "under-provisioned {} – {} ({} s)",
                local(a, tz),
                local(b, tz),
                b - a
            )
        })
        .collect();
    chart.periods(&t.under_provisioned, "under", None, Some(&under_titles));
    chart.legend("under-provisioned", "fill:#e74c3c", true);
    chart.steps(t.start, t.bucket_seconds, &t.capacity, "capacity", &style);
    chart.legend("ready capacity", &style, false);
    if t.forecast.iter().any(Option::is_some) {
        let dashed = format!("stroke:{};stroke-dasharray:5 3", colour(index));
        chart.line(t.start, t.bucket_seconds, &t.forecast, "forecast", &dashed);
        chart.legend("forecast", &dashed, false);
    }
    let peaks = peak_marks(t, tz, ctx.unit);
    if !peaks.is_empty() {
        chart.markers(&peaks, "peaks", "triangle", "fill:#333");
        chart.legend("daily forecast peak", "fill:#333", true);
    }
    let note = load_note(
        t,
        outcome,
        !windows.is_empty(),
        simulation,
        !peaks.is_empty(),
    );
    let _ = write!(
        html,
        "<p class=\"note\">{note}</p>{}",
        chart.finish(
            &format!("chart-policy-{index}"),
            &format!("{name}: load, ready capacity, under-provisioned periods"),
            &format!("load ({})", ctx.unit),
            tz
        )
    );
}

/// The policy's cron windows and the metric outages, shaded with their times as titles.
fn mark_windows_and_outages(
    chart: &mut Chart,
    simulation: &Simulation,
    windows: &[CronWindow],
    tz: &TimeZone,
) {
    if !windows.is_empty() {
        let periods: Vec<(i64, i64)> = windows.iter().map(|w| (w.start, w.end)).collect();
        chart.periods(&periods, "cron", None, Some(&cron_titles(windows, tz)));
        chart.legend("cron window", "fill:#f5d76e", true);
    }
    if !simulation.outages.is_empty() {
        let titles: Vec<String> = simulation
            .outages
            .iter()
            .map(|&(a, b)| {
                format!(
                    "metric outage {} – {}: every metric read fails",
                    local(a, tz),
                    local(b, tz)
                )
            })
            .collect();
        chart.periods(&simulation.outages, "outage", None, Some(&titles));
        chart.legend("metric outage", "fill:#7f8c8d", true);
    }
}

/// The day's highest forecast peak, for each day, with its title.
fn peak_marks(t: &Timeline, tz: &TimeZone, unit: &str) -> Vec<(i64, f64, String)> {
    daily_peaks(&t.forecast_peaks, tz)
        .into_iter()
        .map(|(at, v)| {
            (
                at,
                v,
                format!(
                    "the day's highest forecast peak: {:.2} {} at {}",
                    v,
                    unit,
                    local(at, tz)
                ),
            )
        })
        .collect()
}

/// The note under the load chart: how often the policy was under-provisioned, and what
/// the chart's marks explain when hovered.
fn load_note(
    t: &Timeline,
    outcome: &PolicyOutcome,
    crons: bool,
    simulation: &Simulation,
    peaks: bool,
) -> String {
    let mut hover = Vec::new();
    if !t.under_provisioned.is_empty() {
        hover.push("an under-provisioned period");
    }
    if crons {
        hover.push("a cron window");
    }
    if !simulation.outages.is_empty() {
        hover.push("a metric outage");
    }
    if peaks {
        hover.push("a forecast peak");
    }
    let hover = match hover.as_slice() {
        [] => String::new(),
        [one] => format!(" Hover over {one} for details."),
        [init @ .., last] => format!(" Hover over {} or {last} for details.", init.join(", ")),
    };
    let periods = match t.under_provisioned.len() {
        0 => "Never under-provisioned.".to_owned(),
        1 => format!(
            "1 under-provisioned period, {:.1} minutes.",
            outcome.scores.under_provisioned_minutes
        ),
        n => format!(
            "{n} under-provisioned periods, {:.1} minutes in all.",
            outcome.scores.under_provisioned_minutes
        ),
    };
    format!("{periods}{hover}")
}

/// Replicas with one marker per rescale.
fn policy_replicas_chart(
    html: &mut String,
    t: &Timeline,
    index: usize,
    name: &str,
    span: Span,
    tz: &TimeZone,
) {
    let style = format!("stroke:{}", colour(index));
    let max = t.replicas.iter().copied().max().unwrap_or(1);
    let mut chart = Chart::new(WIDTH, 200.0, span.start, span.end, f64::from(max) * 1.1);
    let values: Vec<f64> = t.replicas.iter().map(|r| f64::from(*r)).collect();
    chart.steps(t.start, t.bucket_seconds, &values, "replicas", &style);
    chart.legend("replicas", &style, false);
    let marks: Vec<(i64, f64, String)> = t
        .decisions
        .iter()
        .map(|d| {
            let at = d.time.as_second();
            let text = format!("{}\n{}", local(at, tz), explain(d).join("\n"));
            (at, f64::from(d.desired_replicas), text)
        })
        .collect();
    chart.markers(
        &marks,
        "decisions",
        "circle",
        &format!("fill:{}", colour(index)),
    );
    chart.legend(
        "rescale (hover for why)",
        &format!("fill:{}", colour(index)),
        true,
    );
    html.push_str(&chart.finish(
        &format!("chart-replicas-{index}"),
        &format!("{name}: replicas and rescale decisions"),
        "replicas",
        tz,
    ));
}

/// The rescales as a table.
fn decisions_table(html: &mut String, t: &Timeline, index: usize, tz: &TimeZone) {
    let shown = if t.decisions_total > t.decisions.len() {
        format!(
            "the first {} of {} rescales",
            t.decisions.len(),
            t.decisions_total
        )
    } else {
        format!("{} rescales", t.decisions_total)
    };
    let _ = write!(
        html,
        "<details><summary>Decisions: {shown}</summary><table class=\"decisions\" id=\"decisions-{index}\">\
         <thead><tr><th>time</th><th>from</th><th>to</th><th>why</th></tr></thead><tbody>"
    );
    for d in &t.decisions {
        let lines = explain(d);
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td><b>{}</b>",
            escape(&local(d.time.as_second(), tz)),
            d.current_replicas,
            d.desired_replicas,
            escape(&lines[0])
        );
        for line in &lines[1..] {
            let _ = write!(html, "<br>{}", escape(line));
        }
        html.push_str("</td></tr>");
    }
    html.push_str("</tbody></table></details>");
}
