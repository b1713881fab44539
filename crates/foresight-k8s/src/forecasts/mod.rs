//! The forecasts of predicted metrics, kept fresh in the background (the observed value of a
//! `type: Prometheus` metric is read by [`crate::sources::prometheus`]).
//!
//! Forecasts are expensive (a range query over days of history, then an FFT), so they are not
//! computed in the reconcile. [`ForecastCache`] keeps one forecast per (autoscaler, metric),
//! refreshes it every model-update interval on a bounded pool of background tasks, and answers
//! the reconcile at once from memory with a [`ForecastInput`].
//!
//! Failure behaviour, chosen so that prediction only ever helps: when a refresh fails (e.g.
//! Prometheus is down), the last good forecast is still served for a short grace period
//! (`keep_forecast_after_failure`, 5 minutes by default), long enough to ride out a Prometheus
//! restart without flapping, and only while it still covers the prediction window. After that
//! the metric's input becomes `Failed(<the Prometheus error>)`: the decision sets
//! `PredictionReady=False` with the error and scales on the observed metric alone. Failed
//! refreshes are retried with exponential backoff; the first success restores the forecast.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};

use foresight_core::autoscaler::Autoscaler;
use foresight_core::forecasting::{ForecastInput, HeadroomInput};
use foresight_core::objective::OperatingPoint;
use foresight_core::prediction::conformal::ForecastMargin;
use foresight_core::prediction::{Accuracy, EvaluationInput};
use foresight_replay::evaluation::Assumptions;
use jiff::Timestamp;
use tokio::sync::{Notify, Semaphore};

use crate::autoscaler_key::{AutoscalerKey, PerAutoscaler};
use crate::prometheus::promql::history_query;
use crate::prometheus::PrometheusClient;

mod entries;
mod learning;
mod predictor;
mod refresh;

pub use entries::RefreshStats;
use entries::{Counters, Entries, Entry, Key, Workload};
pub use predictor::{CorePredictor, HistoryWindow, Predictor};

/// How the cache refreshes.
#[derive(Clone, Debug)]
pub struct ForecastSettings {
    /// How often a forecast is recomputed from fresh history (default 1h).
    pub model_update_interval: Duration,
    /// How many refreshes may run at once (default 4).
    pub max_concurrent_refreshes: usize,
    /// First retry delay after a failed refresh; doubles per failure (default 15s).
    pub retry_initial: Duration,
    /// Longest retry delay (default 5 minutes).
    pub retry_max: Duration,
    /// How long the last good forecast is still used after a refresh failed (default 5
    /// minutes); zero demotes prediction at the first failure.
    pub keep_forecast_after_failure: Duration,
    /// The controller's history-query templates per metric identifier (`resource.cpu`, ...);
    /// see [`crate::prometheus::promql::fill_template`].
    pub query_overrides: BTreeMap<String, String>,
}

impl Default for ForecastSettings {
    fn default() -> Self {
        ForecastSettings {
            model_update_interval: Duration::from_secs(3600),
            max_concurrent_refreshes: 4,
            retry_initial: Duration::from_secs(15),
            retry_max: Duration::from_secs(300),
            keep_forecast_after_failure: Duration::from_secs(300),
            query_overrides: BTreeMap::new(),
        }
    }
}

struct Inner {
    client: PrometheusClient,
    predictor: Arc<dyn Predictor>,
    settings: ForecastSettings,
    entries: Mutex<Entries>,
    permits: Arc<Semaphore>,
    counters: Counters,
    /// Woken whenever a refresh ends.
    refreshed: Notify,
}

/// Forecasts per (autoscaler, metric), refreshed in the background. Cheap to clone.
#[derive(Clone)]
pub struct ForecastCache {
    inner: Arc<Inner>,
}

/// The identifier each metric's forecast is filed under: `Metric::identifier()`, with `#2`,
/// `#3`, ... appended to repeats (two External metrics of one name with different selectors),
/// so that each keeps its own forecast.
pub fn entry_ids(autoscaler: &Autoscaler) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    autoscaler
        .metrics
        .iter()
        .map(|m| {
            let id = m.identifier();
            let n = seen.entry(id.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                id
            } else {
                format!("{id}#{n}")
            }
        })
        .collect()
}

/// Why a controller without Prometheus has no forecast. `NotReady` rather than `Failed`:
/// nothing was tried and nothing broke, the controller simply has no source of history
/// (`PredictionReady=False`, reason `PredictNotReady`); `PredictFailed` stays reserved for a
/// configured Prometheus that does not answer, so alerts on it mean an outage.
pub const NO_PROMETHEUS: &str =
    "no Prometheus configured: start the controller with --prometheus-url";

/// What prediction offers each metric of `autoscaler` when the controller has no
/// Prometheus: `NotReady(NO_PROMETHEUS)` for each, in spec order; empty when prediction is
/// off.
pub fn without_prometheus(autoscaler: &Autoscaler) -> Vec<ForecastInput> {
    if autoscaler.prediction_window_seconds.is_none() {
        return Vec::new();
    }
    vec![ForecastInput::NotReady(NO_PROMETHEUS.to_owned()); autoscaler.metrics.len()]
}

/// How many tracked forecasts give the decision a forecast at some instant, and how many
/// do not, for `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForecastStates {
    /// Forecasts the decision would use (`ForecastInput::Ready`).
    pub ready: u64,
    /// Not ready: not computed yet, too little history, out of date, no query.
    pub not_ready: u64,
    /// Failing to refresh past the grace period (`ForecastInput::Failed`).
    pub failed: u64,
}

/// Forecasts are forgotten with their autoscaler, and after a full list, those of
/// autoscalers deleted while no watch was running (a standby replica, a watch that had to
/// start over).
impl PerAutoscaler for ForecastCache {
    fn forget(&self, key: &AutoscalerKey) {
        self.remove(key);
    }

    fn retain(&self, keep: &dyn Fn(&AutoscalerKey) -> bool) {
        self.lock().retain_autoscalers(keep);
    }
}

impl ForecastCache {
    /// A cache reading history from `client` and forecasting with `predictor`.
    pub fn new(
        client: PrometheusClient,
        predictor: Arc<dyn Predictor>,
        settings: ForecastSettings,
    ) -> Self {
        let permits = Arc::new(Semaphore::new(settings.max_concurrent_refreshes.max(1)));
        ForecastCache {
            inner: Arc::new(Inner {
                client,
                predictor,
                settings,
                entries: Mutex::new(Entries::default()),
                permits,
                counters: Counters::default(),
                refreshed: Notify::new(),
            }),
        }
    }

    /// What prediction offers each metric of `autoscaler` at `now`, in spec order, for
    /// `Observation::forecasts`; empty when prediction is off. Registers new metrics and
    /// starts due refreshes in the background on the current Tokio runtime, without waiting
    /// for them: a new autoscaler's metrics are `NotReady` until their first refresh ends.
    pub fn forecasts(&self, autoscaler: &Autoscaler, now: Timestamp) -> Vec<ForecastInput> {
        // Without a runtime nothing could run the refreshes: answer from memory only, and
        // leave the entries due for a caller that has one.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            for key in self.register(autoscaler, now) {
                let cache = self.clone();
                runtime.spawn(async move { cache.run_refresh(key, now).await });
            }
        }
        self.inputs(autoscaler, now)
    }

    /// Registers `autoscaler` and refreshes every metric that is due, waiting for the
    /// refreshes to finish; then answers like [`ForecastCache::forecasts`]. For tools and
    /// tests that want a forecast now rather than on the next reconcile.
    pub async fn refresh(&self, autoscaler: &Autoscaler, now: Timestamp) -> Vec<ForecastInput> {
        let due = self.register(autoscaler, now);
        let mut tasks = Vec::new();
        for key in due {
            let cache = self.clone();
            tasks.push(tokio::spawn(
                async move { cache.run_refresh(key, now).await },
            ));
        }
        for task in tasks {
            // A refresh task only ends by returning; a join error would mean it panicked,
            // and the wait below would then never end: report it as a failure instead.
            if let Err(e) = task.await {
                tracing::error!(error = %e, "forecast refresh task stopped");
                return self.inputs(autoscaler, now);
            }
        }
        // Refreshes started earlier by `forecasts` may still run: wait for them too.
        let key = AutoscalerKey::of(autoscaler);
        loop {
            let notified = self.inner.refreshed.notified();
            tokio::pin!(notified);
            // Register for the wake-up before looking, so none is missed in between.
            notified.as_mut().enable();
            if !self.lock().any_running(&key) {
                break;
            }
            notified.await;
        }
        self.inputs(autoscaler, now)
    }

    /// The input for one metric (`identifier` as `Metric::identifier()` gives it) of the
    /// autoscaler `key`.
    pub fn get(&self, key: &AutoscalerKey, identifier: &str, now: Timestamp) -> ForecastInput {
        let entries = self.lock();
        match entries.get(key, identifier) {
            Some(entry) => self.input(entry, now),
            None => ForecastInput::NotReady("no forecast computed yet".to_owned()),
        }
    }

    /// Forgets an autoscaler (it was deleted, or turned prediction off).
    pub fn remove(&self, key: &AutoscalerKey) {
        self.lock().remove_autoscaler(key);
    }

    /// The tracked forecasts by what they would give the decision at `now`.
    pub fn states(&self, now: Timestamp) -> ForecastStates {
        let entries = self.lock();
        let mut states = ForecastStates::default();
        for entry in entries.values() {
            match self.input(entry, now) {
                ForecastInput::Ready(_) => states.ready += 1,
                ForecastInput::Failed(_) => states.failed += 1,
                ForecastInput::NotReady(_) | ForecastInput::Off => states.not_ready += 1,
            }
        }
        states
    }

    /// The client the cache reads history with.
    pub fn client(&self) -> &PrometheusClient {
        &self.inner.client
    }

    /// The refresh counters.
    pub fn stats(&self) -> RefreshStats {
        let c = &self.inner.counters;
        RefreshStats {
            started: c.started.load(Ordering::Relaxed),
            succeeded: c.succeeded.load(Ordering::Relaxed),
            not_ready: c.not_ready.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
            entries: self.lock().len() as u64,
            in_flight: c.in_flight.load(Ordering::Relaxed),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.inner.entries.lock()
    }

    /// Brings the entries of `autoscaler` in line with its spec and returns the keys whose
    /// refresh is due (marking them running).
    fn register(&self, autoscaler: &Autoscaler, now: Timestamp) -> Vec<Key> {
        let key = AutoscalerKey::of(autoscaler);
        let Some(policy) = &autoscaler.prediction else {
            self.remove(&key);
            return Vec::new();
        };
        let (window, algorithm) = (policy.window_seconds, &policy.predictor);
        let mut all = self.lock();
        let entries = all.of_autoscaler(&key);
        let ids = entry_ids(autoscaler);
        entries.retain(|id, _| ids.contains(id));
        let mut due = Vec::new();
        for (metric, id) in autoscaler.metrics.iter().zip(ids) {
            let query = history_query(autoscaler, metric, &self.inner.settings.query_overrides)
                .map(|(q, _)| q);
            let fingerprint = format!("{query:?}|{algorithm:?}|{window}");
            let entry_key = (key.clone(), id.clone());
            let entry = entries.entry(id).or_insert_with(|| {
                Entry::new(
                    String::new(),
                    Err(String::new()),
                    algorithm.clone(),
                    window,
                    now,
                    0,
                )
            });
            if entry.fingerprint != fingerprint {
                // New or changed: start over and refresh at once.
                let generation = entry.generation.wrapping_add(1);
                *entry = Entry::new(
                    fingerprint,
                    query,
                    algorithm.clone(),
                    window,
                    now,
                    generation,
                );
            }
            entry.accuracy_window = policy.accuracy_window_seconds;
            entry.headroom_quantile = policy.headroom_quantile;
            // With an objective the tuner replays the history instead: prediction on or off
            // is one of its candidates (as in the simulator).
            entry.self_evaluation = policy.self_evaluation && autoscaler.objective.is_none();
            if entry.objective != autoscaler.objective {
                // A new objective asks for a new point at the next refresh.
                entry.objective = autoscaler.objective;
                entry.operating_point = None;
                entry.forecast_margin = None;
            }
            if entry.objective.is_none() {
                entry.errors = None;
            }
            // Turned off in the spec: nothing learned before may be offered any more.
            if entry.headroom_quantile.is_none() {
                entry.headroom = HeadroomInput::Off;
            }
            if !entry.self_evaluation {
                entry.evaluation = EvaluationInput::Off;
            }
            if !entry.running && entry.due <= now && entry.query.is_ok() {
                entry.running = true;
                due.push(entry_key);
            }
        }
        due
    }

    /// How accurate each metric's forecasts have been, in spec order, for
    /// `Observation::forecast_accuracy`; empty when prediction is off.
    pub fn accuracy(&self, autoscaler: &Autoscaler) -> Vec<Option<Accuracy>> {
        self.per_metric(autoscaler, |e| e.and_then(|e| e.accuracy.summary()))
    }

    /// `read` of each metric's entry (if any) of `autoscaler`, in spec order, under one lock;
    /// empty when prediction is off.
    fn per_metric<T>(&self, autoscaler: &Autoscaler, read: impl Fn(Option<&Entry>) -> T) -> Vec<T> {
        if autoscaler.prediction_window_seconds.is_none() {
            return Vec::new();
        }
        let key = AutoscalerKey::of(autoscaler);
        let mut all = self.lock();
        let entries = all.of_autoscaler(&key);
        entry_ids(autoscaler)
            .iter()
            .map(|id| read(entries.get(id)))
            .collect()
    }

    /// Tells the cache what the latest decision knew of `autoscaler`'s workload (its pods'
    /// requests and start-up time), for learning headroom and replaying history at the next
    /// refreshes. Cheap: it keeps a reference to the compiled autoscaler.
    pub fn learn_about(&self, autoscaler: &Arc<Autoscaler>, assumptions: Assumptions) {
        let key = AutoscalerKey::of(autoscaler);
        let mut all = self.lock();
        let entries = all.of_autoscaler(&key);
        for (index, id) in entry_ids(autoscaler).into_iter().enumerate() {
            if let Some(entry) = entries.get_mut(&id) {
                entry.workload = Some(Workload {
                    autoscaler: Arc::clone(autoscaler),
                    index,
                    assumptions,
                });
            }
        }
    }

    /// The headroom learned and self-evaluation's latest verdict for each metric of
    /// `autoscaler`, in spec order; empty when prediction is off.
    pub fn learned(&self, autoscaler: &Autoscaler) -> Vec<(HeadroomInput, EvaluationInput)> {
        self.per_metric(autoscaler, |e| {
            e.map_or_else(Default::default, |e| {
                (e.headroom.clone(), e.evaluation.clone())
            })
        })
    }

    /// The margin the forecast's own errors call for, for each metric of `autoscaler` in spec
    /// order, where the operating point lets the forecast carry the headroom (`None`
    /// elsewhere); empty when prediction is off.
    pub fn forecast_margins(&self, autoscaler: &Autoscaler) -> Vec<Option<ForecastMargin>> {
        self.per_metric(autoscaler, |e| e.and_then(|e| e.forecast_margin.clone()))
    }

    /// The operating point the tuner chose for `autoscaler` (with `spec.objective`): the
    /// first metric's that has one, since a decision runs at one point.
    pub fn operating_point(&self, autoscaler: &Autoscaler) -> Option<OperatingPoint> {
        autoscaler.objective?;
        self.per_metric(autoscaler, |e| e.and_then(|e| e.operating_point.clone()))
            .into_iter()
            .flatten()
            .next()
    }

    fn inputs(&self, autoscaler: &Autoscaler, now: Timestamp) -> Vec<ForecastInput> {
        if autoscaler.prediction_window_seconds.is_none() {
            return Vec::new();
        }
        let key = AutoscalerKey::of(autoscaler);
        entry_ids(autoscaler)
            .iter()
            .map(|id| self.get(&key, id, now))
            .collect()
    }

    /// The input an entry gives at `now` (module docs: failure behaviour).
    fn input(&self, entry: &Entry, now: Timestamp) -> ForecastInput {
        if let Err(reason) = &entry.query {
            return ForecastInput::NotReady(reason.clone());
        }
        let horizon = now.as_second().saturating_add(entry.window_seconds);
        let grace = self.inner.settings.keep_forecast_after_failure;
        match (&entry.forecast, &entry.failure) {
            (Some(forecast), None) if forecast.end() > horizon => {
                ForecastInput::Ready(forecast.clone())
            }
            (Some(forecast), None) => ForecastInput::NotReady(format!(
                "forecast out of date: it ends at {}, before now + {}s; a refresh is due",
                Timestamp::from_second(forecast.end()).unwrap_or(now),
                entry.window_seconds
            )),
            (Some(forecast), Some(failure))
                if forecast.end() > horizon
                    && now.duration_since(failure.since).unsigned_abs() < grace =>
            {
                ForecastInput::Ready(forecast.clone())
            }
            (_, Some(failure)) => ForecastInput::Failed(failure.error.clone()),
            (None, None) => ForecastInput::NotReady(
                entry
                    .not_ready
                    .clone()
                    .unwrap_or_else(|| "first forecast not computed yet".to_owned()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::refresh::{backoff, refresh_due};
    use super::*;
    use crate::prometheus::{Point, PrometheusOptions};
    use crate::sources::prometheus::read_prometheus_metrics;
    use foresight_core::autoscaler::ControllerConfig;
    use foresight_core::metrics::{MetricData, ValueSample};
    use foresight_core::objective::Knobs;
    use foresight_core::prediction::Algorithm;
    use foresight_core::prediction::Forecast;
    use foresight_core::prediction::{Prediction, PredictorConfig};
    use foresight_core::trace::Sample;
    use wiremock::matchers::{path, query_param};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    /// A test predictor: flat at the history's maximum for `horizon` seconds from `now`, or
    /// not ready with fewer than `min_points` points.
    struct FlatMax {
        horizon: i64,
        min_points: usize,
    }

    impl Predictor for FlatMax {
        fn history(&self, _predictor: &PredictorConfig) -> HistoryWindow {
            HistoryWindow {
                length: Duration::from_secs(600),
                step: Duration::from_secs(60),
            }
        }

        fn predict(
            &self,
            _predictor: &PredictorConfig,
            history: &[Point],
            now: Timestamp,
        ) -> Prediction {
            if history.len() < self.min_points {
                return Prediction::not_ready(format!(
                    "{} points < {}",
                    history.len(),
                    self.min_points
                ));
            }
            let max = history.iter().map(|p| p.value).fold(f64::MIN, f64::max);
            Prediction::Ready(Forecast {
                algorithm: Algorithm::Dsp,
                period_seconds: None,
                start: now.as_second(),
                step: 60,
                values: vec![max; usize::try_from(self.horizon / 60).unwrap()],
                estimator: "flat".to_owned(),
            })
        }
    }

    fn autoscaler(metrics: serde_json::Value, prediction: Option<serde_json::Value>) -> Autoscaler {
        let mut spec = serde_json::json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 10,
            "metrics": metrics,
        });
        if let Some(p) = prediction {
            spec["prediction"] = p;
        }
        let spec: foresight_api::EffectiveHorizontalPodAutoscalerSpec =
            serde_json::from_value(spec).unwrap();
        Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).unwrap()
    }

    fn cpu_autoscaler(window: i32) -> Autoscaler {
        autoscaler(
            serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]),
            Some(serde_json::json!({
                "predictionWindowSeconds": window,
                "predictionAlgorithm": {"algorithmType": "dsp"}
            })),
        )
    }

    fn matrix(points: &[(i64, &str)]) -> ResponseTemplate {
        let values: Vec<serde_json::Value> = points
            .iter()
            .map(|(t, v)| serde_json::json!([t, v]))
            .collect();
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "status": "success",
            "data": {"resultType": "matrix", "result": [{"metric": {}, "values": values}]}
        }))
    }

    async fn cache(server: &MockServer, settings: ForecastSettings, horizon: i64) -> ForecastCache {
        let client = PrometheusClient::new(&server.uri(), PrometheusOptions::default()).unwrap();
        ForecastCache::new(
            client,
            Arc::new(FlatMax {
                horizon,
                min_points: 2,
            }),
            settings,
        )
    }

    /// A predictor that reads four days of minutes and never forecasts.
    struct FourDays;

    impl Predictor for FourDays {
        fn history(&self, _predictor: &PredictorConfig) -> HistoryWindow {
            HistoryWindow {
                length: Duration::from_secs(4 * 86_400),
                step: Duration::from_secs(60),
            }
        }

        fn predict(&self, _: &PredictorConfig, _: &[Point], _: Timestamp) -> Prediction {
            Prediction::not_ready("no period")
        }
    }

    /// A cache over a Prometheus answering four days of minutes at 4 cores, with a minute at
    /// 8.5 every five minutes from 10:00 to 10:30 UTC (the server lives as long as the first).
    async fn four_bursty_days() -> (MockServer, ForecastCache) {
        let points: Vec<(i64, String)> = (0..4 * 1440)
            .map(|m| {
                let minute = m % 1440;
                let burst = (600..630).contains(&minute) && minute % 5 == 0;
                (m * 60, if burst { "8.5" } else { "4" }.to_owned())
            })
            .collect();
        cache_over(&points).await
    }

    /// A cache over a Prometheus answering every range query with `points` (the server lives
    /// as long as the first), refitting every 10 minutes.
    async fn cache_over(points: &[(i64, String)]) -> (MockServer, ForecastCache) {
        let points: Vec<(i64, &str)> = points.iter().map(|(t, v)| (*t, v.as_str())).collect();
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(matrix(&points))
            .mount(&server)
            .await;
        let client = PrometheusClient::new(&server.uri(), PrometheusOptions::default()).unwrap();
        let settings = ForecastSettings {
            model_update_interval: Duration::from_secs(600),
            ..Default::default()
        };
        let cache = ForecastCache::new(client, Arc::new(FourDays), settings);
        (server, cache)
    }

    #[tokio::test]
    async fn refreshes_learn_headroom_and_replay_the_history_once_the_workload_is_known() {
        let (_server, cache) = four_bursty_days().await;
        let a = Arc::new(autoscaler(
            serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 75}}}]),
            Some(serde_json::json!({"predictionAlgorithm": {"algorithmType": "dsp"}})),
        ));
        let now = at(4 * 86_400);
        cache.refresh(&a, now).await;
        // Headroom from the first refresh; no verdict before the workload is described.
        let (headroom, evaluation) = cache.learned(&a).remove(0);
        let HeadroomInput::Ready(h) = headroom else {
            panic!("{headroom:?}")
        };
        assert_eq!(h.rise_at(10 * 3600), 4.5);
        assert_eq!(h.rise_at(3 * 3600), 0.0);
        assert_eq!(evaluation, EvaluationInput::Off);
        cache.learn_about(
            &a,
            Assumptions {
                startup_seconds: 60,
                pod_cpu_request_millicores: 1000,
                prediction_proposed: true,
            },
        );
        cache.refresh(&a, at(4 * 86_400 + 600)).await;
        let (_, evaluation) = cache.learned(&a).remove(0);
        let EvaluationInput::Done(e) = evaluation else {
            panic!("{evaluation:?}")
        };
        assert_eq!(
            e.replayed_seconds, 86_400,
            "four days: one replayed after three of training"
        );
        assert!(
            e.predictive_under_seconds < e.reactive_under_seconds,
            "{e:?}"
        );
        // A spec that turns both off is offered neither any more.
        let off = Arc::new(autoscaler(
            serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 75}}}]),
            Some(
                serde_json::json!({"predictionAlgorithm": {"algorithmType": "dsp"},
                "headroom": {"enabled": false}, "selfEvaluation": false}),
            ),
        ));
        cache.forecasts(&off, at(4 * 86_400 + 601));
        assert_eq!(
            cache.learned(&off),
            vec![(HeadroomInput::Off, EvaluationInput::Off)]
        );
    }

    #[tokio::test]
    async fn with_an_objective_refreshes_choose_an_operating_point_once_a_day() {
        let (_server, cache) = four_bursty_days().await;
        let metrics = serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 75}}}]);
        let mut spec = serde_json::json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 10,
            "metrics": metrics,
            "prediction": {"predictionAlgorithm": {"algorithmType": "dsp"}},
            "objective": {"shortfall": "AsReactive", "maxUtilization": 90},
        });
        let spec_of = |spec: &serde_json::Value| {
            let spec: foresight_api::EffectiveHorizontalPodAutoscalerSpec =
                serde_json::from_value(spec.clone()).unwrap();
            Arc::new(Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).unwrap())
        };
        let a = spec_of(&spec);
        let assumptions = Assumptions {
            startup_seconds: 60,
            pod_cpu_request_millicores: 1000,
            prediction_proposed: true,
        };
        let now = at(4 * 86_400);
        cache.refresh(&a, now).await;
        assert_eq!(
            cache.operating_point(&a),
            None,
            "no point before the workload is known"
        );
        cache.learn_about(&a, assumptions);
        cache.refresh(&a, at(4 * 86_400 + 600)).await;
        let point = cache
            .operating_point(&a)
            .expect("a point once the workload is known");
        assert_eq!(point.chosen_at, 4 * 86_400 + 600);
        assert_eq!(
            point.replayed_seconds,
            2 * 86_400,
            "two days of training, two replayed"
        );
        assert!(point.meets, "{}", point.describe());
        let u = point.knobs.utilization.expect("a Utilization target");
        assert!((75..=90).contains(&u), "{}", point.describe());
        // The tuner takes self-evaluation's place.
        assert_eq!(cache.learned(&a)[0].1, EvaluationInput::Off);
        // Within the day the point stays; headroom follows its risk budget.
        cache.refresh(&a, at(4 * 86_400 + 1200)).await;
        let again = cache.operating_point(&a).unwrap();
        assert_eq!(again.chosen_at, point.chosen_at);
        if let (true, Some(b)) = (again.knobs.prediction, again.knobs.risk_budget_percent) {
            let HeadroomInput::Ready(h) = cache.learned(&a).remove(0).0 else {
                panic!("headroom at the point's budget")
            };
            assert!((h.quantile - (1.0 - b / 100.0)).abs() < 1e-9, "{h:?}");
        }
        // Without the objective the point goes, and the spec runs as written.
        spec.as_object_mut().unwrap().remove("objective");
        let plain = spec_of(&spec);
        cache.forecasts(&plain, at(4 * 86_400 + 1300));
        assert_eq!(cache.operating_point(&plain), None);
        assert_eq!(
            cache.operating_point(&a),
            None,
            "the objective changed: chosen anew"
        );
    }

    /// Four days of minutes of a daily cycle between 2 and 12 cores with a little noise:
    /// load the forecast foresees, so that it carries the headroom at a hotter target more
    /// cheaply than learned headroom does (the tuner's replays say so).
    fn four_daily_cycles() -> Vec<Sample> {
        (0..4 * 1440)
            .map(|m: i64| {
                let day = (m % 1440) as f64 / 1440.0;
                let noise = ((m * 7919) % 13) as f64 / 13.0 - 0.5;
                Sample {
                    ts: m * 60,
                    value: 7.0 + 5.0 * (day * std::f64::consts::TAU).sin() + 0.3 * noise,
                }
            })
            .collect()
    }

    #[tokio::test]
    async fn the_controller_tunes_to_the_point_the_simulator_chooses_where_the_forecast_carries_the_headroom(
    ) {
        let history = four_daily_cycles();
        let text: Vec<(i64, String)> = history
            .iter()
            .map(|s| (s.ts, s.value.to_string()))
            .collect();
        let (_server, cache) = cache_over(&text).await;
        let spec = serde_json::json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 40,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 75}}}],
            "prediction": {"predictionAlgorithm": {"algorithmType": "dsp",
                "dsp": {"sampleInterval": "1m", "historyLength": "7d"}}},
            "objective": {"shortfall": "AsReactive", "maxUtilization": 90},
        });
        let spec: foresight_api::EffectiveHorizontalPodAutoscalerSpec =
            serde_json::from_value(spec).unwrap();
        let a =
            Arc::new(Autoscaler::new("shop", "web", &spec, &ControllerConfig::default()).unwrap());
        let assumptions = Assumptions {
            startup_seconds: 60,
            pod_cpu_request_millicores: 1000,
            prediction_proposed: true,
        };
        cache.refresh(&a, at(4 * 86_400)).await;
        cache.learn_about(&a, assumptions);
        let now = 4 * 86_400 + 600;
        cache.refresh(&a, at(now)).await;
        let controller = cache
            .operating_point(&a)
            .expect("a point once the workload is known");
        // The simulator's tuner on the same history.
        let simulator = foresight_replay::tuner::tune(
            &a,
            &a.objective.unwrap(),
            &history,
            60,
            now,
            assumptions,
            None,
        )
        .unwrap();
        assert_eq!(controller, simulator);
        assert!(
            controller.knobs.forecast_budget_percent.is_some() && controller.meets,
            "{}",
            controller.describe()
        );
        assert!(
            controller.knobs.utilization > Some(75),
            "{}",
            controller.describe()
        );
        // And the controller can run it: the decision gets the margin the forecast's errors
        // call for, learned from the history the cache read.
        let margin = cache
            .forecast_margins(&a)
            .remove(0)
            .expect("a margin at this point");
        assert_eq!(margin.margins.len(), 168);
        assert!(margin.samples > 1000, "{}", margin.samples);
        let budget = controller.knobs.forecast_budget_percent.unwrap();
        assert!(
            (margin.quantile - (1.0 - budget / 100.0)).abs() < 1e-9,
            "{}",
            margin.quantile
        );
    }

    #[tokio::test]
    async fn a_new_autoscaler_is_not_ready_at_once_then_ready_after_its_refresh() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .and(query_param(
                "query",
                r#"sum(rate(container_cpu_usage_seconds_total{namespace="shop",pod=~"web-[a-z0-9]+-[a-z0-9]{5}",container!="",container!="POD"}[5m]))"#,
            ))
            // now = 10_030 is aligned down to 10_020; 600 s of history.
            .and(query_param("start", "9420"))
            .and(query_param("end", "10020"))
            .and(query_param("step", "60"))
            .respond_with(matrix(&[(9360, "0.5"), (9420, "1.5"), (9480, "1.0")]))
            .mount(&server)
            .await;
        let cache = cache(&server, ForecastSettings::default(), 7200).await;
        let a = cpu_autoscaler(3600);
        let now = at(10_030);
        let first = cache.forecasts(&a, now);
        assert_eq!(first.len(), 1);
        assert!(matches!(&first[0], ForecastInput::NotReady(_)), "{first:?}");
        // `refresh` also waits for the refresh `forecasts` started in the background.
        let inputs = cache.refresh(&a, now).await;
        match &inputs[0] {
            ForecastInput::Ready(f) => assert_eq!(f.values[0], 1.5),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            cache.get(&AutoscalerKey::new("shop", "web"), "resource.cpu", now),
            inputs[0]
        );
        let stats = cache.stats();
        assert_eq!((stats.succeeded, stats.failed, stats.entries), (1, 0, 1));
    }

    #[tokio::test]
    async fn prometheus_down_demotes_the_forecast_after_the_grace_period() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(matrix(&[(0, "2"), (60, "3")]))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(ResponseTemplate::new(503).set_body_string("down"))
            .mount(&server)
            .await;
        let settings = ForecastSettings {
            model_update_interval: Duration::from_secs(600),
            keep_forecast_after_failure: Duration::from_secs(120),
            retry_initial: Duration::from_secs(30),
            ..Default::default()
        };
        let cache = cache(&server, settings, 86_400).await;
        let a = cpu_autoscaler(600);
        assert!(matches!(
            cache.refresh(&a, at(1_000)).await[0],
            ForecastInput::Ready(_)
        ));
        // Not due yet: nothing is asked, the forecast stands.
        assert!(matches!(
            cache.refresh(&a, at(1_500)).await[0],
            ForecastInput::Ready(_)
        ));
        // Due at 1_600: the refresh fails, but the forecast is kept for 120 s.
        assert!(matches!(
            cache.refresh(&a, at(1_600)).await[0],
            ForecastInput::Ready(_)
        ));
        // Retried at 1_630 and 1_690 (backoff 30 s, 60 s), still failing; past 1_720 the
        // forecast is dropped and the error shows.
        assert!(matches!(
            cache.refresh(&a, at(1_630)).await[0],
            ForecastInput::Ready(_)
        ));
        match &cache.refresh(&a, at(1_730)).await[0] {
            ForecastInput::Failed(e) => assert!(e.contains("HTTP 503"), "{e}"),
            other => panic!("{other:?}"),
        }
        let stats = cache.stats();
        assert_eq!((stats.succeeded, stats.failed), (1, 3));
    }

    #[tokio::test]
    async fn without_grace_the_first_failure_demotes() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(matrix(&[(0, "2"), (60, "3")]))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        let settings = ForecastSettings {
            model_update_interval: Duration::from_secs(60),
            keep_forecast_after_failure: Duration::ZERO,
            ..Default::default()
        };
        let cache = cache(&server, settings, 86_400).await;
        let a = cpu_autoscaler(600);
        assert!(matches!(
            cache.refresh(&a, at(1_000)).await[0],
            ForecastInput::Ready(_)
        ));
        // The mock answers only once: the next refresh gets a 404.
        match &cache.refresh(&a, at(1_061)).await[0] {
            ForecastInput::Failed(e) => assert!(e.contains("HTTP 404"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_forecast_that_no_longer_covers_the_window_is_out_of_date() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(matrix(&[(0, "2"), (60, "3")]))
            .mount(&server)
            .await;
        // The forecast spans 1200 s, the window is 600 s: it covers until now + 600 < end.
        let cache = cache(&server, ForecastSettings::default(), 1200).await;
        let a = cpu_autoscaler(600);
        assert!(matches!(
            cache.refresh(&a, at(1_000)).await[0],
            ForecastInput::Ready(_)
        ));
        match cache.get(
            &AutoscalerKey::new("shop", "web"),
            "resource.cpu",
            at(1_700),
        ) {
            ForecastInput::NotReady(r) => assert!(r.contains("out of date"), "{r}"),
            other => panic!("{other:?}"),
        }
        // The refresh is scheduled before the forecast runs out, not an hour later.
        assert!(matches!(
            cache.refresh(&a, at(1_540)).await[0],
            ForecastInput::Ready(_)
        ));
        assert_eq!(cache.stats().succeeded, 2);
    }

    #[tokio::test]
    async fn predictor_and_query_problems_are_reported() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .and(query_param("query", "one_point"))
            .respond_with(matrix(&[(0, "2")]))
            .mount(&server)
            .await;
        Mock::given(path("/api/v1/query_range"))
            .and(query_param("query", "nothing"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "status": "success", "data": {"resultType": "matrix", "result": []}})))
            .mount(&server)
            .await;
        Mock::given(path("/api/v1/query_range"))
            .and(query_param("query", "two"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "status": "success", "data": {"resultType": "matrix", "result": [
                    {"metric": {"pod": "a"}, "values": [[0, "1"]]},
                    {"metric": {"pod": "b"}, "values": [[0, "1"]]}]}})))
            .mount(&server)
            .await;
        let cache = cache(&server, ForecastSettings::default(), 3600).await;
        let prometheus = |name: &str, q: &str| {
            serde_json::json!({"type": "Prometheus", "prometheus": {"name": name, "query": "up",
                "historyQuery": q, "target": {"type": "Value", "value": "1"}}})
        };
        let a = autoscaler(
            serde_json::json!([
                prometheus("a", "one_point"),
                prometheus("b", "nothing"),
                prometheus("c", "two"),
                {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "i", "apiVersion": "networking.k8s.io/v1"},
                    "metric": {"name": "hits"}, "target": {"type": "Value", "value": "1"}}}
            ]),
            Some(serde_json::json!({"predictionAlgorithm": {"algorithmType": "dsp"}})),
        );
        let inputs = cache.refresh(&a, at(10_000)).await;
        let text: Vec<String> = inputs.iter().map(|i| format!("{i:?}")).collect();
        assert!(
            matches!(&inputs[0], ForecastInput::NotReady(r) if r == "1 points < 2"),
            "{text:?}"
        );
        assert!(
            matches!(&inputs[1], ForecastInput::NotReady(r) if r.contains("no data")),
            "{text:?}"
        );
        assert!(
            matches!(&inputs[2], ForecastInput::Failed(r) if r.contains("returned 2 series")),
            "{text:?}"
        );
        assert!(
            matches!(&inputs[3], ForecastInput::NotReady(r) if r.contains("historyQueries")),
            "{text:?}"
        );
    }

    #[tokio::test]
    async fn a_changed_spec_refreshes_at_once_and_prediction_off_forgets() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(matrix(&[(0, "2"), (60, "3")]))
            .mount(&server)
            .await;
        let cache = cache(&server, ForecastSettings::default(), 86_400).await;
        assert!(matches!(
            cache.refresh(&cpu_autoscaler(600), at(1_000)).await[0],
            ForecastInput::Ready(_)
        ));
        // Another window is another spec: refreshed although the interval has not passed.
        assert!(matches!(
            cache.refresh(&cpu_autoscaler(900), at(1_010)).await[0],
            ForecastInput::Ready(_)
        ));
        assert_eq!(cache.stats().succeeded, 2);
        let off = autoscaler(
            serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]),
            None,
        );
        assert_eq!(cache.forecasts(&off, at(1_020)), vec![]);
        assert_eq!(cache.stats().entries, 0);
        assert!(matches!(
            cache.get(
                &AutoscalerKey::new("shop", "web"),
                "resource.cpu",
                at(1_020)
            ),
            ForecastInput::NotReady(_)
        ));
    }

    #[tokio::test]
    async fn states_count_what_the_decision_would_get_and_deleted_autoscalers_are_pruned() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(matrix(&[(0, "2"), (60, "3")]))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(ResponseTemplate::new(503))
            .mount(&server)
            .await;
        let settings = ForecastSettings {
            keep_forecast_after_failure: Duration::ZERO,
            ..Default::default()
        };
        let cache = cache(&server, settings, 86_400).await;
        let mut other = cpu_autoscaler(600);
        other.name = "api".to_owned();
        assert!(matches!(
            cache.refresh(&cpu_autoscaler(600), at(1_000)).await[0],
            ForecastInput::Ready(_)
        ));
        assert!(matches!(
            cache.refresh(&other, at(1_000)).await[0],
            ForecastInput::Failed(_)
        ));
        assert_eq!(
            cache.states(at(1_000)),
            ForecastStates {
                ready: 1,
                not_ready: 0,
                failed: 1
            }
        );
        // Past its end the good forecast no longer counts as ready.
        assert_eq!(cache.states(at(200_000)).not_ready, 1);
        assert_eq!(
            cache.client().request_stats().requests[&crate::prometheus::Endpoint::QueryRange],
            2
        );
        // Only shop/web is still listed: shop/api is forgotten.
        cache.retain(&|k| *k == AutoscalerKey::new("shop", "web"));
        assert_eq!(cache.stats().entries, 1);
        assert!(matches!(
            cache.get(
                &AutoscalerKey::new("shop", "api"),
                "resource.cpu",
                at(1_000)
            ),
            ForecastInput::NotReady(_)
        ));
    }

    #[test]
    fn without_prometheus_every_predicted_metric_says_how_to_get_one() {
        assert_eq!(
            without_prometheus(&cpu_autoscaler(600)),
            vec![ForecastInput::NotReady(NO_PROMETHEUS.to_owned())]
        );
        assert!(NO_PROMETHEUS.contains("--prometheus-url"));
        let off = autoscaler(
            serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]),
            None,
        );
        assert_eq!(without_prometheus(&off), vec![]);
    }

    #[tokio::test]
    async fn reads_prometheus_metrics_in_spec_order() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query"))
            .and(query_param("query", "sum(rate(requests[1m]))"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "status": "success", "data": {"resultType": "vector",
                    "result": [{"metric": {}, "value": [1000, "12.5"]}]}})))
            .mount(&server)
            .await;
        let client = PrometheusClient::new(&server.uri(), PrometheusOptions::default()).unwrap();
        let a = autoscaler(
            serde_json::json!([
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
                {"type": "Prometheus", "prometheus": {"name": "rps", "query": "sum(rate(requests[1m]))",
                    "target": {"type": "Value", "value": "10"}}}
            ]),
            None,
        );
        let data = read_prometheus_metrics(&client, &a, at(1_000)).await;
        assert_eq!(
            data,
            vec![
                MetricData::None,
                MetricData::Values(vec![ValueSample {
                    value: 12_500,
                    timestamp: at(1_000)
                }])
            ]
        );
    }

    #[tokio::test]
    async fn metrics_sharing_an_identifier_keep_their_own_forecasts() {
        let server = MockServer::start().await;
        Mock::given(path("/api/v1/query_range"))
            .respond_with(matrix(&[(0, "2"), (60, "3")]))
            .mount(&server)
            .await;
        let cache = cache(&server, ForecastSettings::default(), 86_400).await;
        let external = |queue: &str| {
            serde_json::json!({"type": "External", "external": {
                "metric": {"name": "jobs", "selector": {"matchLabels": {"queue": queue}}},
                "target": {"type": "Value", "value": "10"}}})
        };
        let a = autoscaler(
            serde_json::json!([external("a"), external("b")]),
            Some(serde_json::json!({"predictionAlgorithm": {"algorithmType": "dsp"}})),
        );
        assert_eq!(entry_ids(&a), ["external.jobs", "external.jobs#2"]);
        let first = cache.refresh(&a, at(1_000)).await;
        assert!(
            first.iter().all(|i| matches!(i, ForecastInput::Ready(_))),
            "{first:?}"
        );
        // Asking again changes nothing: no refresh starts while the forecasts are fresh.
        cache.refresh(&a, at(1_001)).await;
        assert_eq!(cache.stats().started, 2);
        assert_eq!(cache.stats().entries, 2);
    }

    #[test]
    fn outside_a_runtime_it_answers_without_refreshing() {
        let client =
            PrometheusClient::new("http://127.0.0.1:9", PrometheusOptions::default()).unwrap();
        let cache = ForecastCache::new(
            client,
            Arc::new(FlatMax {
                horizon: 600,
                min_points: 1,
            }),
            ForecastSettings::default(),
        );
        let inputs = cache.forecasts(&cpu_autoscaler(600), at(1_000));
        assert!(
            matches!(&inputs[0], ForecastInput::NotReady(_)),
            "{inputs:?}"
        );
        assert_eq!(cache.stats().started, 0);
    }

    #[test]
    fn the_core_predictor_asks_for_its_configured_history() {
        let algorithm = |json: serde_json::Value| -> PredictorConfig {
            PredictorConfig::from_spec(&serde_json::from_value(json).unwrap()).unwrap()
        };
        let dsp = algorithm(serde_json::json!({"algorithmType": "dsp",
            "dsp": {"sampleInterval": "5m", "historyLength": "3d"}}));
        assert_eq!(
            CorePredictor.history(&dsp),
            HistoryWindow {
                length: Duration::from_secs(3 * 86_400 + 3600),
                step: Duration::from_secs(300),
            }
        );
        let percentile = algorithm(serde_json::json!({"algorithmType": "percentile"}));
        let window = CorePredictor.history(&percentile);
        assert_eq!(window.step, Duration::from_secs(60));
        assert_eq!(window.length, Duration::from_secs(7 * 86_400));
        // Too little history: not ready, with the predictor's reason.
        let points: Vec<Point> = (0..30)
            .map(|i| Point {
                ts: 1_000_000 + i * 300,
                value: 1.0,
            })
            .collect();
        match CorePredictor.predict(&dsp, &points, at(1_009_000)) {
            Prediction::NotReady { reason } => assert!(reason.contains("2 periods"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn under_a_schedule_a_refresh_falls_due_when_the_next_block_begins() {
        let knobs = |utilization: i32| Knobs {
            forecast_budget_percent: None,
            utilization: Some(utilization),
            risk_budget_percent: None,
            prediction: false,
        };
        let point = OperatingPoint {
            knobs: knobs(75),
            chosen_at: 0,
            replayed_seconds: 86_400,
            under_minutes: 0.0,
            replica_hours: 90.0,
            reactive_under_minutes: 0.0,
            reactive_replica_hours: 100.0,
            meets: true,
            written_utilization: Some(75),
            blocks: [90, 90, 75, 75, 75, 90].map(knobs).to_vec(),
            carried_minutes: 0.0,
        };
        let day = 20 * 86_400;
        // 03:55 UTC, refreshing every 15 minutes: the block from 04:00 learns at 04:00.
        let now = day + 3 * 3_600 + 55 * 60;
        assert_eq!(
            refresh_due(now, 900, i64::MAX, Some(&point)),
            day + 4 * 3_600
        );
        // Within a block, at the interval or where the forecast runs out, as without one.
        assert_eq!(
            refresh_due(day + 600, 900, i64::MAX, Some(&point)),
            day + 1_500
        );
        assert_eq!(
            refresh_due(day + 600, 900, day + 700, Some(&point)),
            day + 700
        );
        let single = OperatingPoint {
            blocks: Vec::new(),
            ..point
        };
        assert_eq!(refresh_due(now, 900, i64::MAX, Some(&single)), now + 900);
        assert_eq!(refresh_due(now, 900, i64::MAX, None), now + 900);
        // Never sooner than a second from now, and no overflow at the end of time.
        assert_eq!(refresh_due(now, 900, 0, None), now + 1);
        assert_eq!(
            refresh_due(i64::MAX, 900, i64::MAX, Some(&single)),
            i64::MAX
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let s = ForecastSettings::default();
        let delays: Vec<u64> = (1..=7).map(|n| backoff(&s, n).as_secs()).collect();
        assert_eq!(delays, vec![15, 30, 60, 120, 240, 300, 300]);
        assert_eq!(backoff(&s, u32::MAX).as_secs(), 300);
    }
}
