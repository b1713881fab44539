//! The cost-against-risk chart: the reactive frontier (replica-hours against
//! under-provisioned minutes at every target tried), each policy as a point beside it, and
//! the clairvoyant bound as a line, and each policy with an objective as its own dashed
//! frontier (its shortfall swept). A policy below the frontier is cheaper than a reactive
//! policy exactly as safe; the distance to the bound is what foresight could still win.

use std::fmt::Write;

use super::svg::{escape, nice_ticks};
use super::{colour, WIDTH};
use crate::bound::ClairvoyantBound;
use crate::frontier::{Comparison, LevelKind};
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
        "<text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" >under-provisioned minutes (log scale)</text><text class=\"axis-title\" \
         transform=\"translate(14 {:.1}) rotate(-90)\">replica-hours</text>",
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 8.0,
        (TOP + HEIGHT - BOTTOM) / 2.0,
    );
    if let Some(note) = left_out_note(simulation, comparison) {
        let _ = write!(
            svg,
            "<text class=\"left-out\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            TOP - 6.0,
            escape(&note)
        );
    }
    frontier_and_bound(&mut svg, &axes, &simulation.bound, comparison);
    tuned_frontiers(&mut svg, &axes, simulation, comparison);
    policy_points(&mut svg, &axes, simulation, comparison);
    svg.push_str("</svg>");
    svg
}

/// The plot's scales: under-provisioned minutes across on a symmetric-log scale (0, 1, 10,
/// 100, … so that a replay short 8,000 minutes sits beside one short 20 without crushing it),
/// replica-hours up on a linear one. Every point drawn lies inside them; reactive replays
/// costlier than the chart's ceiling are left out and named by [`left_out_note`].
struct Axes {
    x_ticks: Vec<f64>,
    x_max: f64,
    y_min: f64,
    y_max: f64,
    y_step: f64,
}

/// How much dearer than the costliest policy (or the bound) a reactive replay may be and still
/// be drawn: the frontier's safe end climbs steeply, and following it to the top would flatten
/// the stretch where the policies are.
const COST_CEILING: f64 = 1.6;

impl Axes {
    fn fit(simulation: &Simulation, comparison: &Comparison) -> Axes {
        let bound: &ClairvoyantBound = &simulation.bound;
        let policies = simulation
            .policies
            .iter()
            .map(|p| (p.scores.under_provisioned_minutes, p.scores.replica_hours));
        let ceiling = cost_ceiling(simulation);
        let shown_frontier = comparison
            .frontier
            .points
            .iter()
            .filter(|p| p.replica_hours <= ceiling)
            .map(|p| (p.under_provisioned_minutes, p.replica_hours));
        let tuned = comparison
            .tuned
            .iter()
            .flat_map(|t| &t.points)
            .filter(|p| p.replica_hours <= ceiling)
            .map(|p| (p.under_provisioned_minutes, p.replica_hours));
        let shown: Vec<(f64, f64)> = policies
            .chain(shown_frontier)
            .chain(tuned)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let x_want = shown.iter().map(|p| p.0).fold(1.0, f64::max);
        let x_ticks = log_ticks(x_want);
        let x_max = x_ticks.last().copied().unwrap_or(1.0).max(1.0);
        let y_top = shown
            .iter()
            .map(|p| p.1)
            .fold(bound.replica_hours, f64::max)
            * 1.05;
        let y_bottom = shown
            .iter()
            .map(|p| p.1)
            .fold(bound.replica_hours, f64::min)
            .max(0.0)
            * 0.9;
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
        LEFT + symlog(v) / symlog(self.x_max) * (WIDTH - LEFT - RIGHT)
    }

    fn y(&self, v: f64) -> f64 {
        TOP + (1.0 - (v - self.y_min) / (self.y_max - self.y_min)) * (HEIGHT - TOP - BOTTOM)
    }

    /// A polyline's `points` through (minutes, replica-hours) pairs.
    fn path(&self, points: impl Iterator<Item = (f64, f64)>) -> String {
        let coordinates: Vec<String> = points
            .map(|(minutes, hours)| format!("{:.1},{:.1}", self.x(minutes), self.y(hours)))
            .collect();
        coordinates.join(" ")
    }

    /// Whether a point falls inside the plot (it is drawn only then).
    fn holds(&self, minutes: f64, replica_hours: f64) -> bool {
        minutes.is_finite()
            && (0.0..=self.x_max).contains(&minutes)
            && (self.y_min..=self.y_max).contains(&replica_hours)
    }
}

/// The replica-hours above which a reactive replay is left off the chart.
fn cost_ceiling(simulation: &Simulation) -> f64 {
    simulation
        .policies
        .iter()
        .map(|p| p.scores.replica_hours)
        .fold(simulation.bound.replica_hours, f64::max)
        * COST_CEILING
}

/// Zero stays zero, each decade takes the same width.
fn symlog(v: f64) -> f64 {
    v.max(0.0).ln_1p()
}

/// 0, then 1, 10, 100, … up to the first decade at or past `max`; where that is only a
/// decade or two, the 2s and 5s between them as well.
fn log_ticks(max: f64) -> Vec<f64> {
    let mut decades = vec![1.0];
    while decades.last().is_some_and(|d| *d < max) && decades.len() < 12 {
        let next = decades.last().copied().unwrap_or(1.0) * 10.0;
        decades.push(next);
    }
    let mut ticks = vec![0.0];
    if decades.len() <= 3 {
        for d in &decades {
            ticks.push(*d);
            if *d < max {
                ticks.extend([2.0 * d, 5.0 * d].into_iter().filter(|t| *t < max * 1.0001));
            }
        }
        // End on the first tick at or past the largest value.
        if let Some(end) = ticks.iter().position(|t| *t >= max) {
            ticks.truncate(end + 1);
        }
    } else {
        ticks.extend(decades);
    }
    ticks
}

/// The sentence under the plot naming the reactive replays it leaves out, if any.
fn left_out_note(simulation: &Simulation, comparison: &Comparison) -> Option<String> {
    let ceiling = cost_ceiling(simulation);
    let left_out: Vec<String> = comparison
        .frontier
        .points
        .iter()
        .filter(|p| p.replica_hours > ceiling)
        .map(|p| p.level.to_string())
        .collect();
    if left_out.is_empty() {
        return None;
    }
    let unit = match comparison.frontier.level_kind {
        LevelKind::Utilization => "%",
        LevelKind::ShareOfTarget => "% of its targets",
    };
    Some(format!(
        "not drawn: reactive at {}{unit} (dearer than {:.0} replica-h)",
        left_out.join(", "),
        ceiling
    ))
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
    let _ = write!(
        svg,
        "<polyline class=\"frontier\" points=\"{}\" style=\"fill:none;stroke:#888;\
         stroke-width:2\"/>",
        axes.path(
            envelope
                .iter()
                .map(|p| (p.under_provisioned_minutes, p.replica_hours))
        )
    );
    for p in comparison
        .frontier
        .points
        .iter()
        .filter(|p| axes.holds(p.under_provisioned_minutes, p.replica_hours))
    {
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

/// Each tuned frontier (a policy with an objective, its shortfall swept): its envelope as a
/// dashed line in the policy's colour, every replay as a ring titled with its shortfall.
fn tuned_frontiers(
    svg: &mut String,
    axes: &Axes,
    simulation: &Simulation,
    comparison: &Comparison,
) {
    svg.push_str("<g clip-path=\"url(#frontier-plot)\">");
    for tuned in &comparison.tuned {
        let i = simulation
            .policies
            .iter()
            .position(|p| p.scores.name == tuned.policy)
            .unwrap_or(0);
        let path = axes.path(
            tuned
                .envelope()
                .iter()
                .map(|p| (p.under_provisioned_minutes, p.replica_hours)),
        );
        let _ = write!(
            svg,
            "<polyline class=\"tuned-frontier\" points=\"{}\" style=\"fill:none;stroke:{};\
             stroke-width:2;stroke-dasharray:4 3\"><title>{} tuned by objective</title>\
             </polyline>",
            path,
            colour(i),
            escape(&tuned.policy)
        );
        for p in tuned
            .points
            .iter()
            .filter(|p| axes.holds(p.under_provisioned_minutes, p.replica_hours))
        {
            let _ = write!(
                svg,
                "<circle class=\"tuned-point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" \
                 style=\"fill:#fff;stroke:{};stroke-width:1.5\"><title>{} with shortfall {}: \
                 {:.1} min, {:.1} replica-h</title></circle>",
                axes.x(p.under_provisioned_minutes),
                axes.y(p.replica_hours),
                colour(i),
                escape(&tuned.policy),
                escape(&p.shortfall),
                p.under_provisioned_minutes,
                p.replica_hours
            );
        }
    }
    svg.push_str("</g>");
}

/// Each policy where it landed, with its verdict as the title.
fn policy_points(svg: &mut String, axes: &Axes, simulation: &Simulation, comparison: &Comparison) {
    let shown: Vec<(usize, f64, f64)> = simulation
        .policies
        .iter()
        .enumerate()
        .filter(|(_, p)| axes.holds(p.scores.under_provisioned_minutes, p.scores.replica_hours))
        .map(|(i, p)| {
            let s = &p.scores;
            (
                i,
                axes.x(s.under_provisioned_minutes),
                axes.y(s.replica_hours),
            )
        })
        .collect();
    let labels = label_heights(&shown);
    for ((i, cx, cy), label_y) in shown.into_iter().zip(labels) {
        let (Some(outcome), Some(judged)) =
            (simulation.policies.get(i), comparison.policies.get(i))
        else {
            continue;
        };
        let s = &outcome.scores;
        // A label right of its point, or left of it in the plot's right third, so it stays
        // inside the chart.
        let (label_x, anchor) = if cx > LEFT + (WIDTH - LEFT - RIGHT) * 2.0 / 3.0 {
            (cx - 9.0, "end")
        } else {
            (cx + 9.0, "start")
        };
        let _ = write!(
            svg,
            "<g class=\"policy-point\" id=\"frontier-policy-{i}\"><circle cx=\"{cx:.1}\" \
             cy=\"{cy:.1}\" r=\"{:.1}\" style=\"fill:{};stroke:#fff;stroke-width:1.5\"><title>{}: \
             {:.1} min, {:.1} replica-h; {}</title></circle><text x=\"{label_x:.1}\" \
             y=\"{label_y:.1}\" text-anchor=\"{anchor}\">{}</text></g>",
            7.0 - i as f64 * 0.8,
            colour(i),
            escape(&s.name),
            s.under_provisioned_minutes,
            s.replica_hours,
            escape(&judged.verdict()),
            escape(&s.name)
        );
    }
}

/// The baseline of each policy's label: beside its point, pushed down where it would overlap
/// the label above it (policies often land within a few pixels of each other), and kept
/// inside the plot.
fn label_heights(points: &[(usize, f64, f64)]) -> Vec<f64> {
    const LINE: f64 = 14.0;
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|a, b| points[*a].2.total_cmp(&points[*b].2));
    let mut heights = vec![0.0; points.len()];
    let mut previous = f64::NEG_INFINITY;
    for k in order {
        let y = (points[k].2 + 4.0).max(previous + LINE);
        heights[k] = y;
        previous = y;
    }
    // Pushed past the bottom: the stack moves up as a whole.
    let overflow = previous - (HEIGHT - BOTTOM - 4.0);
    heights
        .iter()
        .map(|y| (y - overflow.max(0.0)).max(TOP + 10.0))
        .collect()
}

fn tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minutes_axis_ends_past_the_riskiest_point_it_must_hold() {
        assert_eq!(
            log_ticks(8_450.0),
            vec![0.0, 1.0, 10.0, 100.0, 1_000.0, 10_000.0]
        );
        assert_eq!(log_ticks(20.0), vec![0.0, 1.0, 2.0, 5.0, 10.0, 20.0]);
        assert_eq!(log_ticks(0.3), vec![0.0, 1.0]);
    }

    #[test]
    fn labels_of_policies_that_land_together_do_not_overlap() {
        let heights = label_heights(&[(0, 500.0, 200.0), (1, 500.0, 201.0), (2, 510.0, 195.0)]);
        let mut sorted = heights.clone();
        sorted.sort_by(f64::total_cmp);
        assert!(
            sorted.windows(2).all(|w| w[1] - w[0] >= 14.0),
            "{heights:?}"
        );
        let low = label_heights(&[(0, 500.0, HEIGHT - BOTTOM), (1, 500.0, HEIGHT - BOTTOM)]);
        assert!(low.iter().all(|y| *y <= HEIGHT - BOTTOM - 4.0), "{low:?}");
    }

    #[test]
    fn points_far_apart_in_minutes_land_apart_on_the_chart() {
        let axes = Axes {
            x_ticks: log_ticks(8_450.0),
            x_max: 10_000.0,
            y_min: 0.0,
            y_max: 1.0,
            y_step: 1.0,
        };
        let xs: Vec<f64> = [0.0, 20.0, 21.0, 49.0, 119.0, 8_450.0]
            .iter()
            .map(|m| axes.x(*m))
            .collect();
        assert!(xs.windows(2).all(|w| w[1] > w[0]), "{xs:?}");
        assert_eq!(xs[0], LEFT);
        assert!(xs[5] < WIDTH - RIGHT, "{xs:?}");
        assert!(!axes.holds(10_001.0, 0.5) && !axes.holds(5.0, 1.5) && axes.holds(5.0, 0.5));
    }
}
