//! The load a simulation replays: a step function of time built from a trace's samples.
//!
//! Each sample's value holds from its timestamp until the next sample (a monitoring system's
//! per-minute value is the average over that minute, so holding it is the faithful reading);
//! the last sample holds for the trace's usual step.

use crate::error::SimError;

/// The first and last timestamps a trace may hold (0001-01-01 and 9998-01-01 UTC): time
/// arithmetic on them can never overflow, and every instant has a calendar date.
const FIRST_TS: i64 = -62_135_596_800;
const LAST_TS: i64 = 253_370_764_800;

/// One point of a load trace: the load from `ts` (Unix seconds) until the next point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadPoint {
    /// Unix seconds.
    pub ts: i64,
    /// The load, in the unit of the simulated metrics (CPU cores for CPU metrics).
    pub value: f64,
}

/// A load trace, checked: at least one point, strictly increasing timestamps, finite
/// non-negative values.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadTrace {
    points: Vec<LoadPoint>,
    end: i64,
}

impl LoadTrace {
    /// Builds a trace from `(ts, value)` points. The trace ends one usual step (the median
    /// spacing of the points, 60 s for a single point) after the last point.
    pub fn new(points: Vec<LoadPoint>) -> Result<LoadTrace, SimError> {
        let Some(last) = points.last() else {
            return Err(SimError::Trace("the trace has no samples".to_owned()));
        };
        for (i, p) in points.iter().enumerate() {
            if !(FIRST_TS..=LAST_TS).contains(&p.ts) {
                return Err(SimError::Trace(format!(
                    "sample {} has timestamp {}, outside the years 0001 to 9998",
                    i + 1,
                    p.ts
                )));
            }
            if !p.value.is_finite() || p.value < 0.0 {
                return Err(SimError::Trace(format!(
                    "sample {} (ts {}) has value {}; load must be a finite number >= 0",
                    i + 1,
                    p.ts,
                    p.value
                )));
            }
            if i > 0 && p.ts <= points[i - 1].ts {
                return Err(SimError::Trace(format!(
                    "sample {} (ts {}) is not after the previous sample (ts {})",
                    i + 1,
                    p.ts,
                    points[i - 1].ts
                )));
            }
        }
        let end = last.ts.saturating_add(median_step(&points));
        Ok(LoadTrace { points, end })
    }

    /// The points, in time order.
    pub fn points(&self) -> &[LoadPoint] {
        &self.points
    }

    /// The first instant with load.
    pub fn start(&self) -> i64 {
        self.points[0].ts
    }

    /// The instant after the last load (exclusive).
    pub fn end(&self) -> i64 {
        self.end
    }

    /// The largest load.
    pub fn peak(&self) -> f64 {
        self.points.iter().map(|p| p.value).fold(0.0, f64::max)
    }

    /// The same trace with every value multiplied so that its peak becomes `peak`. A trace
    /// that is zero everywhere stays zero.
    pub fn scaled_to_peak(&self, peak: f64) -> LoadTrace {
        let max = self.peak();
        let factor = if max > 0.0 { peak / max } else { 0.0 };
        LoadTrace {
            points: self
                .points
                .iter()
                .map(|p| LoadPoint {
                    ts: p.ts,
                    value: p.value * factor,
                })
                .collect(),
            end: self.end,
        }
    }

    /// The load at `ts`: the latest point at or before it (the first point before the start,
    /// zero from `end()` on).
    pub fn value_at(&self, ts: i64) -> f64 {
        if ts >= self.end {
            return 0.0;
        }
        let i = self.points.partition_point(|p| p.ts <= ts);
        self.points[i.saturating_sub(1)].value
    }

    /// A cursor for reading the load forwards in time without searching.
    pub fn cursor(&self) -> LoadCursor<'_> {
        LoadCursor {
            trace: self,
            index: 0,
        }
    }

    /// The mean load over `[from, to)` as a replay reads it through a cursor (each value
    /// held from its stamp; the load at `from` when the span is empty). A pure function of
    /// the trace and the span, so every replay of the trace gets the same bits for it.
    pub fn mean_over(&self, from: i64, to: i64) -> f64 {
        if to <= from {
            return self.value_at(from);
        }
        let mut cursor = LoadCursor {
            trace: self,
            index: self
                .points
                .partition_point(|p| p.ts <= from)
                .saturating_sub(1),
        };
        let (mut sum, mut t) = (0.0, from);
        while t < to {
            let (value, next) = cursor.at(t);
            let until = next.min(to);
            sum += value * (until - t) as f64;
            t = until;
        }
        sum / (to - from) as f64
    }
}

/// Reads a trace forwards: `at` must be called with non-decreasing times.
#[derive(Clone, Debug)]
pub struct LoadCursor<'a> {
    trace: &'a LoadTrace,
    index: usize,
}

impl LoadCursor<'_> {
    /// The load at `ts` and the instant it next changes (at most `end()`).
    pub fn at(&mut self, ts: i64) -> (f64, i64) {
        let points = &self.trace.points;
        if ts >= self.trace.end {
            return (0.0, i64::MAX);
        }
        while self.index + 1 < points.len() && points[self.index + 1].ts <= ts {
            self.index += 1;
        }
        let next = points
            .get(self.index + 1)
            .map_or(self.trace.end, |p| p.ts)
            .max(ts.saturating_add(1));
        if ts < points[self.index].ts {
            // Before the first point: its value, until it starts.
            return (points[0].value, points[0].ts);
        }
        (points[self.index].value, next)
    }
}

/// The median spacing of the points; 60 s for a single point.
fn median_step(points: &[LoadPoint]) -> i64 {
    let mut steps: Vec<i64> = points.windows(2).map(|w| w[1].ts - w[0].ts).collect();
    if steps.is_empty() {
        return 60;
    }
    let mid = steps.len() / 2;
    *steps.select_nth_unstable(mid).1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(points: &[(i64, f64)]) -> LoadTrace {
        LoadTrace::new(
            points
                .iter()
                .map(|&(ts, value)| LoadPoint { ts, value })
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn values_hold_until_the_next_point_and_the_last_for_one_step() {
        let t = trace(&[(0, 1.0), (60, 2.0), (120, 3.0)]);
        assert_eq!(t.end(), 180);
        assert_eq!(t.value_at(0), 1.0);
        assert_eq!(t.value_at(59), 1.0);
        assert_eq!(t.value_at(60), 2.0);
        assert_eq!(t.value_at(179), 3.0);
        assert_eq!(t.value_at(180), 0.0);
        assert_eq!(t.value_at(-5), 1.0);
    }

    #[test]
    fn the_mean_over_a_span_weighs_each_value_by_how_long_it_holds() {
        let t = trace(&[(0, 1.0), (60, 2.0), (90, 5.0)]);
        assert_eq!(t.mean_over(0, 60), 1.0);
        assert_eq!(t.mean_over(30, 90), 1.5);
        assert_eq!(t.mean_over(60, 120), 3.5);
        // Before the first point its value; from the end nothing.
        assert_eq!(t.mean_over(-60, 0), 1.0);
        assert_eq!(t.mean_over(120, 180), 2.5);
        assert_eq!(t.mean_over(70, 70), 2.0);
    }

    #[test]
    fn the_cursor_agrees_with_value_at_and_names_the_next_change() {
        let t = trace(&[(0, 1.0), (60, 2.0), (90, 5.0)]);
        let mut c = t.cursor();
        assert_eq!(c.at(0), (1.0, 60));
        assert_eq!(c.at(15), (1.0, 60));
        assert_eq!(c.at(60), (2.0, 90));
        assert_eq!(c.at(100), (5.0, t.end()));
        for ts in (0..t.end()).step_by(7) {
            let mut fresh = t.cursor();
            assert_eq!(fresh.at(ts).0, t.value_at(ts), "at {ts}");
        }
    }

    #[test]
    fn scaling_maps_the_peak_and_keeps_the_shape() {
        let t = trace(&[(0, 2.0), (60, 8.0), (120, 4.0)]).scaled_to_peak(16.0);
        let values: Vec<f64> = t.points().iter().map(|p| p.value).collect();
        assert_eq!(values, vec![4.0, 16.0, 8.0]);
        let zero = trace(&[(0, 0.0)]).scaled_to_peak(10.0);
        assert_eq!(zero.peak(), 0.0);
    }

    #[test]
    fn rejects_empty_negative_and_unsorted_traces() {
        assert!(LoadTrace::new(vec![]).is_err());
        let neg = LoadTrace::new(vec![LoadPoint { ts: 0, value: -1.0 }]).unwrap_err();
        assert!(neg.to_string().contains("sample 1"), "{neg}");
        let unsorted = LoadTrace::new(vec![
            LoadPoint { ts: 10, value: 1.0 },
            LoadPoint { ts: 5, value: 1.0 },
        ])
        .unwrap_err();
        assert!(unsorted.to_string().contains("sample 2"), "{unsorted}");
        let far = LoadTrace::new(vec![LoadPoint {
            ts: i64::MAX,
            value: 1.0,
        }])
        .unwrap_err();
        assert!(far.to_string().contains("outside the years"), "{far}");
    }
}
