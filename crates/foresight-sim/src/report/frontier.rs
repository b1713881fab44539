//! The cost-against-risk chart: the reactive frontier (replica-hours against
//! under-provisioned minutes at every target tried), each policy as a point beside it, and
//! the clairvoyant bound as a line. A policy below the frontier is cheaper than a reactive
//! policy exactly as safe; the distance to the bound is what foresight could still win.

use std::fmt::Write;

use super::svg::{escape, nice_ticks};
use super::{colour, WIDTH};
use crate::bound::ClairvoyantBound;
use crate::frontier::Comparison;
use crate::simulation::Simulation;

const HEIGHT: f64 = 360.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 44.0;

/// The chart, as an SVG element with id `chart-frontier`.
pub fn frontier_chart(simulation: &Simulation, comparison: &Comparison) -> String {
    let axes = Axes::fit(simulation, comparison);
    let mut svg = String::with_capacity(16 * 1024);
    let _ = write!(
        svg,
        "<svg id=\"chart-frontier\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\" \
         aria-label=\"replica-hours against under-provisioned minutes\">\
         <defs><clipPath id=\"frontier-plot\"><rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" \
         height=\"{}\"/></clipPath></defs>",
        WIDTH - LEFT - RIGHT,
        HEIGHT - TOP - BOTTOM
    );
    svg.push_str("<g class=\"grid\">");
    for t in &axes.x_ticks {
        let _ = write!(
            svg,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{TOP}\" y2=\"{1:.1}\"/>\
             <text class=\"xlabel\" x=\"{0:.1}\" y=\"{2:.1}\">{3}</text>",
            axes.x(*t),
            HEIGHT - BOTTOM,
            HEIGHT - BOTTOM + 16.0,
            tick(*t)
        );
    }
    let mut v = axes.y_min;
    while v <= axes.y_max + axes.y_step * 0.001 {
        let _ = write!(
            svg,
            "<line x1=\"{LEFT}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{1:.1}\"/>\
             <text class=\"ylabel\" x=\"{2:.1}\" y=\"{3:.1}\">{4}</text>",
            WIDTH - RIGHT,
            axes.y(v),
            LEFT - 6.0,
            axes.y(v) + 4.0,
            tick(v)
        );
        v += axes.y_step;
    }
    svg.push_str("</g>");
    let _ = write!(
        svg,
        "<text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" >under-provisioned minutes</text><text class=\"axis-title\" \
         transform=\"translate(14 {:.1}) rotate(-90)\">replica-hours</text>",
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 8.0,
        (TOP + HEIGHT - BOTTOM) / 2.0,
    );
    frontier_and_bound(&mut svg, &axes, &simulation.bound, comparison);
    policy_points(&mut svg, &axes, simulation, comparison);
    svg.push_str("</svg>");
    svg
}

/// The plot's scales: under-provisioned minutes across, replica-hours up.
struct Axes {
    x_ticks: Vec<f64>,
    x_max: f64,
    y_min: f64,
    y_max: f64,
    y_step: f64,
}

impl Axes {
    /// The interesting stretch: up to a little past the riskiest policy (and the baseline's
    /// own target), replays far riskier running off the right edge; up from just below the
    /// bound to the costliest point shown.
    fn fit(simulation: &Simulation, comparison: &Comparison) -> Axes {
        let bound: &ClairvoyantBound = &simulation.bound;
        let policies: Vec<(f64, f64)> = simulation
            .policies
            .iter()
            .map(|p| (p.scores.under_provisioned_minutes, p.scores.replica_hours))
            .collect();
        let envelope = comparison.frontier.envelope();
        let baseline_under = comparison
            .frontier
            .points
            .iter()
            .find(|p| p.level == comparison.frontier.baseline_level)
            .map_or(0.0, |p| p.under_provisioned_minutes);
        let x_want = policies
            .iter()
            .map(|p| p.0)
            .fold(baseline_under, f64::max)
            .max(1.0)
            * 1.4;
        let x_ticks = nice_ticks(x_want, 6);
        let x_max = x_ticks
            .last()
            .copied()
            .unwrap_or(1.0)
            .max(f64::MIN_POSITIVE);
        let shown_costs = envelope
            .iter()
            .filter(|p| p.under_provisioned_minutes <= x_max)
            .map(|p| p.replica_hours)
            .chain(policies.iter().map(|p| p.1));
        let y_top = shown_costs.fold(bound.replica_hours, f64::max) * 1.05;
        let y_bottom = (bound.replica_hours * 0.9).max(0.0);
        let y_step = nice_ticks(y_top - y_bottom, 5)
            .get(1)
            .copied()
            .unwrap_or(1.0)
            .max(f64::MIN_POSITIVE);
        let y_min = (y_bottom / y_step).floor() * y_step;
        let y_max = ((y_top / y_step).ceil() * y_step).max(y_min + y_step);
        Axes {
            x_ticks,
            x_max,
            y_min,
            y_max,
            y_step,
        }
    }

    fn x(&self, v: f64) -> f64 {
        LEFT + v.clamp(0.0, self.x_max) / self.x_max * (WIDTH - LEFT - RIGHT)
    }

    fn y(&self, v: f64) -> f64 {
        TOP + (1.0 - (v - self.y_min) / (self.y_max - self.y_min)) * (HEIGHT - TOP - BOTTOM)
    }
}

/// The bound and the reactive frontier (its envelope and every replay), clipped to the plot.
fn frontier_and_bound(
    svg: &mut String,
    axes: &Axes,
    bound: &ClairvoyantBound,
    comparison: &Comparison,
) {
    let envelope = comparison.frontier.envelope();
    svg.push_str("<g clip-path=\"url(#frontier-plot)\">");
    // The bound: no shortfall at all, for this many replica-hours.
    let _ = write!(
        svg,
        "<line class=\"bound\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{2:.1}\" y2=\"{2:.1}\" \
         style=\"stroke:#444;stroke-width:1.5;stroke-dasharray:6 4\"><title>clairvoyant bound: \
         {3:.1} replica-h with no shortfall</title></line><text class=\"ylabel\" \
         x=\"{1:.1}\" y=\"{4:.1}\">clairvoyant bound {3:.0} replica-h</text>",
        WIDTH - RIGHT,
        WIDTH - RIGHT - 4.0,
        axes.y(bound.replica_hours),
        bound.replica_hours,
        axes.y(bound.replica_hours) - 5.0,
    );
    let path: Vec<String> = envelope
        .iter()
        .map(|p| {
            format!(
                "{:.1},{:.1}",
                axes.x(p.under_provisioned_minutes),
                axes.y(p.replica_hours)
            )
        })
        .collect();
    let _ = write!(
        svg,
        "<polyline class=\"frontier\" points=\"{}\" style=\"fill:none;stroke:#888;\
         stroke-width:2\"/>",
        path.join(" ")
    );
    for p in &comparison.frontier.points {
        let _ = write!(
            svg,
            "<circle class=\"frontier-point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" \
             style=\"fill:#888\"><title>reactive at {}: {:.1} min, {:.1} replica-h</title>\
             </circle>",
            axes.x(p.under_provisioned_minutes),
            axes.y(p.replica_hours),
            escape(&p.target),
            p.under_provisioned_minutes,
            p.replica_hours
        );
    }
    svg.push_str("</g>");
}

/// Each policy where it landed, with its verdict as the title.
fn policy_points(svg: &mut String, axes: &Axes, simulation: &Simulation, comparison: &Comparison) {
    for (i, (outcome, judged)) in simulation
        .policies
        .iter()
        .zip(&comparison.policies)
        .enumerate()
    {
        let s = &outcome.scores;
        let (cx, cy) = (axes.x(s.under_provisioned_minutes), axes.y(s.replica_hours));
        let _ = write!(
            svg,
            "<g class=\"policy-point\" id=\"frontier-policy-{i}\"><circle cx=\"{cx:.1}\" \
             cy=\"{cy:.1}\" r=\"{:.1}\" style=\"fill:{};stroke:#fff;stroke-width:1.5\"><title>{}: \
             {:.1} min, {:.1} replica-h; {}</title></circle><text x=\"{:.1}\" \
             y=\"{:.1}\">{}</text></g>",
            7.0 - i as f64 * 0.8,
            colour(i),
            escape(&s.name),
            s.under_provisioned_minutes,
            s.replica_hours,
            escape(&judged.verdict()),
            cx + 9.0,
            cy - 8.0 + 14.0 * i as f64,
            escape(&s.name)
        );
    }
}

fn tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.1}")
    }
}
