//! How one forecast is refreshed: history from Prometheus, then the predictor and what the
//! history teaches besides (headroom, self-evaluation) on a blocking thread, then the outcome
//! recorded in the entry with the retry schedule.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use foresight_core::objective::OperatingPoint;
use foresight_core::prediction::{Prediction, PredictorConfig};
use jiff::Timestamp;

use super::entries::{Failure, Key, Outcome};
use super::learning::Lesson;
use super::predictor::samples;
use super::{ForecastCache, ForecastSettings};

impl ForecastCache {
    /// Refreshes one entry: history from Prometheus, then the predictor on a blocking thread.
    pub(super) async fn run_refresh(self, key: Key, now: Timestamp) {
        // Should the refresh stop without recording (a panic), the guard frees the entry so
        // that it is retried instead of waiting forever.
        let mut guard = RunningGuard {
            cache: self.clone(),
            key: key.clone(),
            now,
            armed: true,
        };
        self.refresh_entry(&key, now).await;
        guard.armed = false;
    }

    async fn refresh_entry(&self, key: &Key, now: Timestamp) {
        let (query, predictor, generation, lesson) = {
            let entries = self.lock();
            let Some(entry) = entries.get(&key.0, &key.1) else {
                return;
            };
            let Ok(query) = entry.query.clone() else {
                return;
            };
            (
                query,
                entry.predictor.clone(),
                entry.generation,
                Lesson::for_entry(entry, now.as_second()),
            )
        };
        let counters = &self.inner.counters;
        // The semaphore is never closed, so acquiring fails only if it were; then refresh
        // without a permit rather than never.
        let _permit = self.inner.permits.clone().acquire_owned().await.ok();
        counters.started.fetch_add(1, Ordering::Relaxed);
        counters.in_flight.fetch_add(1, Ordering::Relaxed);
        let outcome = self.compute(&query, predictor, lesson, now).await;
        counters.in_flight.fetch_sub(1, Ordering::Relaxed);
        let counter = match &outcome {
            Outcome::Forecast(..) => &counters.succeeded,
            Outcome::NotReady(..) => &counters.not_ready,
            Outcome::Failed(e) => {
                tracing::warn!(autoscaler = %key.0, metric = %key.1, error = %e, "forecast refresh failed");
                &counters.failed
            }
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.record(key, generation, outcome, now);
        self.inner.refreshed.notify_waiters();
    }

    async fn compute(
        &self,
        query: &str,
        config: PredictorConfig,
        lesson: Lesson,
        now: Timestamp,
    ) -> Outcome {
        let window = self.inner.predictor.history(&config);
        let step = window.step.as_secs().max(1);
        let step_i64 = i64::try_from(step).unwrap_or(i64::MAX);
        // Align the range to the step grid so successive refreshes see the same sample times.
        let end = now
            .as_second()
            .div_euclid(step_i64)
            .saturating_mul(step_i64);
        let length = i64::try_from(window.length.as_secs()).unwrap_or(i64::MAX);
        let (Ok(start), Ok(end)) = (
            Timestamp::from_second(end.saturating_sub(length)),
            Timestamp::from_second(end),
        ) else {
            return Outcome::Failed("the history range is out of range".to_owned());
        };
        let series = match self
            .inner
            .client
            .query_range(query, start, end, Duration::from_secs(step))
            .await
        {
            Ok(s) => s,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let points = match series.len() {
            0 => {
                return Outcome::NotReady(
                    format!("the history query returned no data: {query}"),
                    Vec::new(),
                    lesson.learn(&[], step_i64, now.as_second()),
                )
            }
            1 => series.into_iter().next().map(|s| s.points).unwrap_or_default(),
            n => {
                return Outcome::Failed(format!(
                    "the history query returned {n} series; it must return one (aggregate it, e.g. with sum(...)): {query}"
                ))
            }
        };
        let predictor = Arc::clone(&self.inner.predictor);
        let prediction = tokio::task::spawn_blocking(move || {
            let p = predictor.predict(&config, &points, now);
            let history = samples(&points);
            let learned = lesson.learn(&history, step_i64, now.as_second());
            (p, history, learned)
        })
        .await;
        match prediction {
            Ok((Prediction::Ready(f), points, learned)) => Outcome::Forecast(f, points, learned),
            Ok((Prediction::NotReady { reason }, points, learned)) => {
                Outcome::NotReady(reason, points, learned)
            }
            Err(e) => Outcome::Failed(format!("the predictor stopped: {e}")),
        }
    }

    pub(super) fn record(&self, key: &Key, generation: u64, outcome: Outcome, now: Timestamp) {
        let settings = &self.inner.settings;
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(&key.0, &key.1) else {
            return;
        };
        if entry.generation != generation {
            // The spec changed while this refresh ran; the new entry has its own.
            return;
        }
        entry.running = false;
        // The forecast in use until now meets the history read since (the same comparison the
        // simulator makes at its refits).
        let window = entry.accuracy_window;
        match (&outcome, &entry.forecast) {
            (
                Outcome::Forecast(_, history, _) | Outcome::NotReady(_, history, _),
                Some(previous),
            ) => {
                entry
                    .accuracy
                    .record(previous, history, now.as_second(), window);
            }
            _ => entry.accuracy.expire(now.as_second(), window),
        }
        if let Outcome::Forecast(_, _, learned) | Outcome::NotReady(_, _, learned) = &outcome {
            entry.headroom = learned.headroom.clone();
            if let Some(e) = &learned.evaluation {
                entry.evaluation = e.clone();
            }
            if let Some(p) = &learned.operating_point {
                entry.operating_point = Some(p.clone());
            }
            if learned.errors.is_some() {
                entry.errors = learned.errors.clone();
            }
            entry.forecast_margin = learned.forecast_margin.clone();
        }
        match outcome {
            Outcome::Forecast(f, _, _) => {
                entry.failures = 0;
                // Refresh at the interval, or earlier when the forecast would stop covering
                // the window before then.
                let interval = secs(settings.model_update_interval);
                let runs_out = f
                    .end()
                    .saturating_sub(entry.window_seconds)
                    .saturating_sub(f.step);
                let due = refresh_due(
                    now.as_second(),
                    interval,
                    runs_out,
                    entry.operating_point.as_ref(),
                );
                entry.due = Timestamp::from_second(due).unwrap_or(now);
                entry.forecast = Some(f);
                entry.not_ready = None;
                entry.failure = None;
            }
            Outcome::NotReady(reason, _, _) => {
                entry.failures = 0;
                entry.forecast = None;
                entry.not_ready = Some(reason);
                entry.failure = None;
                entry.due = after(now, settings.model_update_interval);
            }
            Outcome::Failed(error) => {
                entry.failures = entry.failures.saturating_add(1);
                let since = entry.failure.as_ref().map_or(now, |f| f.since);
                entry.failure = Some(Failure { error, since });
                entry.due = after(now, backoff(settings, entry.failures));
            }
        }
    }
}

/// Frees an entry whose refresh stopped without recording an outcome.
struct RunningGuard {
    cache: ForecastCache,
    key: Key,
    now: Timestamp,
    armed: bool,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let generation = self
            .cache
            .lock()
            .get(&self.key.0, &self.key.1)
            .map(|e| e.generation);
        if let Some(generation) = generation {
            self.cache.record(
                &self.key,
                generation,
                Outcome::Failed("the forecast refresh stopped unexpectedly".to_owned()),
                self.now,
            );
        }
        self.cache.inner.refreshed.notify_waiters();
    }
}

/// When the next refresh after one at `now` falls due (Unix seconds): after `interval`, or
/// when the forecast `runs_out` of the window if sooner, or when the next block of `point`'s
/// schedule over the day begins (that block learns the headroom and the forecast's margin at
/// its own knobs); never sooner than a second from now.
pub(super) fn refresh_due(
    now: i64,
    interval: i64,
    runs_out: i64,
    point: Option<&OperatingPoint>,
) -> i64 {
    let next_block = point
        .and_then(|p| p.next_block_start(now))
        .unwrap_or(i64::MAX);
    now.saturating_add(interval)
        .min(runs_out)
        .min(next_block)
        .max(now.saturating_add(1))
}

fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

fn after(now: Timestamp, d: Duration) -> Timestamp {
    Timestamp::from_second(
        now.as_second()
            .saturating_add(secs(d))
            .max(now.as_second() + 1),
    )
    .unwrap_or(now)
}

/// `retry_initial × 2^(failures-1)`, at most `retry_max`.
pub(super) fn backoff(settings: &ForecastSettings, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(30));
    settings
        .retry_initial
        .saturating_mul(factor)
        .min(settings.retry_max)
}
