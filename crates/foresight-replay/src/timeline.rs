//! What a run keeps for the report: capacity, replicas and forecast per chart bucket, the
//! exact under-provisioned periods, forecast peaks and the explanation of every rescale.

use foresight_api::status::DecisionRecord;
use foresight_core::prediction::Forecast;

/// At most this many rescale explanations are kept per policy (the report would grow
/// unreadable long before); the count of all of them is kept regardless.
pub const MAX_DECISIONS: usize = 3000;

/// One policy's recorded run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Unix seconds of the first bucket.
    pub start: i64,
    /// Seconds per bucket.
    pub bucket_seconds: i64,
    /// Mean ready capacity per bucket (load units).
    pub capacity: Vec<f64>,
    /// Most pods (starting or ready) per bucket.
    pub replicas: Vec<i32>,
    /// The forecast in use at each bucket's start, when there was one (load units).
    pub forecast: Vec<Option<f64>>,
    /// `[start, end)` periods, Unix seconds, when ready capacity was below load.
    pub under_provisioned: Vec<(i64, i64)>,
    /// Each refit's forecast peak inside the prediction window: (Unix seconds, load units).
    pub forecast_peaks: Vec<(i64, f64)>,
    /// The explanation of each rescale, oldest first (at most [`MAX_DECISIONS`]).
    pub decisions: Vec<DecisionRecord>,
    /// How many rescales there were in all.
    pub decisions_total: usize,
    /// Seconds between decisions: the spacing of the fine series.
    pub tick_seconds: i64,
    /// Mean load per decision interval, from `start` (for close-up charts).
    pub fine_load: Vec<f32>,
    /// Mean ready capacity per decision interval, from `start`.
    pub fine_capacity: Vec<f32>,
    /// Prediction's state after each refit.
    pub prediction: Vec<PredictionPoint>,
}

/// Prediction's state after a refit: how wrong the forecasts had been, whether prediction was
/// demoted, and the lead time the proposals used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PredictionPoint {
    /// The refit's time (Unix seconds).
    pub at: i64,
    /// The forecast error over the accuracy window, percent; `None` before any comparison.
    pub error_percent: Option<f64>,
    /// Whether prediction was demoted (`ForecastInaccurate`).
    pub demoted: bool,
    /// How far ahead proposals looked, seconds.
    pub horizon_seconds: i64,
    /// The start-up time used, seconds.
    pub startup_seconds: i64,
    /// Whether the start-up time was measured from the pods.
    pub startup_measured: bool,
}

/// Fills a [`Timeline`] as the simulation advances.
#[derive(Clone, Debug)]
pub struct Recorder {
    timeline: Timeline,
    bucket_end: i64,
    capacity_sum: f64,
    covered: i64,
    replicas_max: i32,
    tick_load: f64,
    tick_capacity: f64,
    tick_covered: i64,
}

impl Recorder {
    /// A recorder with buckets of `bucket_seconds` from `start`, for decisions every
    /// `tick_seconds`.
    pub fn new(start: i64, bucket_seconds: i64, tick_seconds: i64) -> Self {
        let bucket_seconds = bucket_seconds.max(1);
        Recorder {
            timeline: Timeline {
                start,
                bucket_seconds,
                tick_seconds: tick_seconds.max(1),
                ..Timeline::default()
            },
            bucket_end: start,
            capacity_sum: 0.0,
            covered: 0,
            replicas_max: 0,
            tick_load: 0.0,
            tick_capacity: 0.0,
            tick_covered: 0,
        }
    }

    /// Closes a decision interval of the fine series.
    pub fn close_tick(&mut self) {
        let covered = self.tick_covered.max(1) as f64;
        self.timeline
            .fine_load
            .push((self.tick_load / covered) as f32);
        self.timeline
            .fine_capacity
            .push((self.tick_capacity / covered) as f32);
        self.tick_load = 0.0;
        self.tick_capacity = 0.0;
        self.tick_covered = 0;
    }

    /// Records `[a, b)` with constant load, capacity and replicas; `forecast` is the forecast
    /// in use, read at the start of each bucket.
    pub fn segment(
        &mut self,
        a: i64,
        b: i64,
        load: f64,
        capacity: f64,
        replicas: i32,
        forecast: Option<&Forecast>,
    ) {
        let dt = (b - a) as f64;
        self.tick_load += load * dt;
        self.tick_capacity += capacity * dt;
        self.tick_covered += b - a;
        if load > capacity {
            match self.timeline.under_provisioned.last_mut() {
                Some(last) if last.1 == a => last.1 = b,
                _ => self.timeline.under_provisioned.push((a, b)),
            }
        }
        let mut a = a;
        while a < b {
            if a >= self.bucket_end {
                self.close_bucket();
                self.timeline
                    .forecast
                    .push(forecast.and_then(|f| f.value_at(a)));
                self.bucket_end = a
                    - (a - self.timeline.start).rem_euclid(self.timeline.bucket_seconds)
                    + self.timeline.bucket_seconds;
            }
            let until = b.min(self.bucket_end);
            self.capacity_sum += capacity * (until - a) as f64;
            self.covered += until - a;
            self.replicas_max = self.replicas_max.max(replicas);
            a = until;
        }
    }

    fn close_bucket(&mut self) {
        if self.covered > 0 {
            self.timeline
                .capacity
                .push(self.capacity_sum / self.covered as f64);
            self.timeline.replicas.push(self.replicas_max);
        }
        self.capacity_sum = 0.0;
        self.covered = 0;
        self.replicas_max = 0;
    }

    /// Keeps the explanation of a rescale.
    pub fn rescale(&mut self, record: DecisionRecord) {
        self.timeline.decisions_total += 1;
        if self.timeline.decisions.len() < MAX_DECISIONS {
            self.timeline.decisions.push(record);
        }
    }

    /// Keeps prediction's state after a refit at `at`.
    pub fn prediction(&mut self, at: i64, status: &foresight_api::status::PredictionStatus) {
        let judged = status.metrics.iter().filter(|m| m.samples > 0);
        self.timeline.prediction.push(PredictionPoint {
            at,
            error_percent: judged.map(|m| m.error_percent as f64).reduce(f64::max),
            demoted: status.metrics.iter().any(|m| m.demoted),
            horizon_seconds: status.horizon_seconds,
            startup_seconds: status.startup_seconds,
            startup_measured: status.startup_measured,
        });
    }

    /// Keeps a refit's forecast peak (once per distinct instant).
    pub fn forecast_peak(&mut self, at: i64, value: f64) {
        if self
            .timeline
            .forecast_peaks
            .last()
            .is_none_or(|(t, _)| *t != at)
        {
            self.timeline.forecast_peaks.push((at, value));
        }
    }

    /// The timeline.
    pub fn finish(mut self) -> Timeline {
        self.close_bucket();
        let n = self.timeline.capacity.len();
        self.timeline.forecast.truncate(n);
        self.timeline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_average_capacity_and_keep_the_most_replicas() {
        let mut r = Recorder::new(0, 60, 15);
        r.segment(0, 30, 1.0, 2.0, 2, None);
        r.segment(30, 90, 3.0, 4.0, 4, None);
        r.segment(90, 120, 5.0, 4.0, 4, None);
        let t = r.finish();
        assert_eq!(t.capacity, vec![3.0, 4.0]);
        assert_eq!(t.replicas, vec![4, 4]);
        assert_eq!(t.forecast, vec![None, None]);
        assert_eq!(t.under_provisioned, vec![(90, 120)]);
    }

    #[test]
    fn the_fine_series_keeps_one_mean_per_decision_interval() {
        let mut r = Recorder::new(0, 60, 15);
        r.segment(0, 5, 1.0, 2.0, 2, None);
        r.segment(5, 15, 4.0, 2.0, 2, None);
        r.close_tick();
        r.segment(15, 30, 2.0, 3.0, 3, None);
        r.close_tick();
        let t = r.finish();
        assert_eq!(t.fine_load, vec![3.0, 2.0]);
        assert_eq!(t.fine_capacity, vec![2.0, 3.0]);
        assert_eq!(t.tick_seconds, 15);
    }

    #[test]
    fn adjacent_under_provisioned_segments_merge() {
        let mut r = Recorder::new(0, 60, 15);
        r.segment(0, 15, 5.0, 4.0, 4, None);
        r.segment(15, 30, 5.0, 4.0, 4, None);
        r.segment(30, 45, 1.0, 4.0, 4, None);
        r.segment(45, 60, 5.0, 4.0, 4, None);
        assert_eq!(r.finish().under_provisioned, vec![(0, 30), (45, 60)]);
    }
}
