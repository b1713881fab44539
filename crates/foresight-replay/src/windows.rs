//! Cron windows inside a simulation's span, for the report to draw. The decision evaluates the
//! crons itself; this only lists when each set of crons was active.

use foresight_core::autoscaler::Autoscaler;

use crate::cluster::timestamp;
use crate::runner::Span;

/// A period during which crons were active.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronWindow {
    /// Unix seconds (clamped to the span).
    pub start: i64,
    /// Unix seconds, exclusive (clamped to the span).
    pub end: i64,
    /// The largest active target.
    pub target: i32,
    /// The active crons' names.
    pub names: Vec<String>,
}

/// At most this many windows are listed (a cron firing every minute would otherwise make
/// hundreds of thousands).
const MAX_WINDOWS: usize = 5000;

/// The periods inside `span` during which `autoscaler`'s crons were active.
pub fn cron_windows(autoscaler: &Autoscaler, span: Span) -> Vec<CronWindow> {
    let Some(set) = autoscaler.crons.as_ref() else {
        return Vec::new();
    };
    let mut windows = Vec::new();
    let mut t = span.start;
    while t < span.end && windows.len() < MAX_WINDOWS {
        let state = set.evaluate(timestamp(t));
        let next = state
            .next_transition
            .map_or(span.end, |n| n.as_second())
            .clamp(t + 1, span.end);
        if let Some(target) = state.target {
            windows.push(CronWindow {
                start: t,
                end: next,
                target,
                names: state.active.into_iter().map(|a| a.name).collect(),
            });
        }
        t = next;
    }
    windows
}
