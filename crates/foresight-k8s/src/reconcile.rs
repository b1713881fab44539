//! One reconcile of one autoscaler: observe, decide (the pure core), act.
//!
//! 1. compile the spec (invalid specs are reported in status, not retried in a loop);
//! 2. observe: the target's scale, its pods (from the pod cache), its metrics, other
//!    autoscalers on the same target, and the forecasts the forecast cache holds (never
//!    waiting for Prometheus: a due refresh runs in the background);
//! 3. `foresight_core::decision::decide` with the history kept in memory (restored from
//!    status the first time the object is seen, so windows and rate limits survive restarts);
//! 4. act: write the scale when the decision says so (`scale_to`), publish events, write
//!    status when it changed (see [`crate::status`]);
//! 5. requeue one sync period after this sync ends, as the native controller does (its queue
//!    re-adds each object with a fixed delay once processed). A period measured from the end
//!    of the sync, with the scale event stamped after the write, puts an event two syncs old
//!    past a two-sync policy period every time, as in Kubernetes; a fixed wall-clock grid would
//!    put it inside or outside by milliseconds of jitter.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use foresight_api::status::{EffectiveHorizontalPodAutoscalerStatus, ScalingHistory};
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use foresight_core::decision::{
    decide, invalid_spec, reads_metrics, Decision, MetricObservation, Observation, Reconciled,
    ScaleOutcome,
};
use foresight_core::forecasting::{self, ForecastInput};
use foresight_core::history;
use foresight_core::objective::OperatingPoint;
use foresight_core::pause::Pause;
use foresight_core::proposals::Scale;
use foresight_replay::evaluation::Assumptions;
use jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, Resource, ResourceExt};
use parking_lot::Mutex;

use crate::autoscaler_key::{AutoscalerKey, PerAutoscaler};
use crate::backoff::RepeatedErrors;
use crate::conflicts::{TargetIndex, TargetKey};
use crate::due::DueAutoscaler;
use crate::events::{EventPublisher, WarningDigest};
use crate::forecasts::{self, ForecastCache};
use crate::pods::PodCache;
use crate::sources::{MetricSources, Readings};
use crate::status::{self, StatusError};
use crate::target::ScaleClient;
use crate::telemetry::hpa::{self, Action as HpaAction, ErrorKind};
use crate::telemetry::{ApiCall, DecisionLabels, Telemetry};
use foresight_api::selector::Selector;
use foresight_api::EffectiveHorizontalPodAutoscaler;

/// The controller's settings beyond the decision's own (`ControllerConfig`).
#[derive(Clone, Debug)]
pub struct ReconcileSettings {
    /// Cluster-wide defaults of the decision.
    pub core: ControllerConfig,
    /// Volatile status (metric readings) is refreshed at most this often.
    pub status_refresh: Duration,
    /// A namespace's PodMetrics list is shared for this long.
    pub metrics_max_age: Duration,
    /// How long to wait for the pod cache before trying again.
    pub cache_wait: Duration,
}

impl ReconcileSettings {
    /// The cluster-wide sync period (an autoscaler may set its own).
    pub fn sync_period(&self) -> Duration {
        Duration::from_secs(self.core.sync_period_seconds.max(1).unsigned_abs())
    }
}

impl Default for ReconcileSettings {
    fn default() -> Self {
        ReconcileSettings {
            core: ControllerConfig::default(),
            status_refresh: Duration::from_secs(120),
            metrics_max_age: Duration::from_secs(10),
            cache_wait: Duration::from_secs(1),
        }
    }
}

/// What the controller remembers about one autoscaler between syncs.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    /// Recommendations and scale events (the full in-memory form).
    pub history: ScalingHistory,
    /// When status was last written by this controller.
    pub last_write: Option<Timestamp>,
    /// What that write left on the object (see [`status::cache_behind`]).
    pub written: Option<status::Written>,
    /// The previous sync's warning events, for deduplication.
    pub last_events: Vec<WarningDigest>,
    /// The spec compiled at the generation it was compiled for: a spec changes only with
    /// its generation, so syncs in between reuse it instead of validating it again.
    pub compiled: Option<(i64, Arc<Autoscaler>)>,
}

impl Memory {
    /// What is remembered at first sight (a start, a change of leadership): the history
    /// status carries, so windows and rate limits survive restarts.
    fn restored(prior: &EffectiveHorizontalPodAutoscalerStatus, now: Timestamp) -> Memory {
        Memory {
            history: prior
                .history
                .as_ref()
                .map(|h| history::restore(h, now))
                .unwrap_or_default(),
            last_write: status::written_at(prior),
            written: None,
            last_events: Vec::new(),
            compiled: None,
        }
    }
}

/// Per-autoscaler memory. A reconcile takes its entry out and puts it back; the controller
/// never runs two reconciles of one object at once, so the lock is held only for the
/// map operation, never across a reconcile.
#[derive(Debug, Default)]
pub struct Memories(Mutex<HashMap<AutoscalerKey, Memory>>);

impl Memories {
    fn take(&self, key: &AutoscalerKey) -> Option<Memory> {
        self.0.lock().remove(key)
    }

    fn put(&self, key: &AutoscalerKey, m: Memory) {
        self.0.lock().insert(key.clone(), m);
    }

    /// How many autoscalers are remembered.
    pub fn len(&self) -> usize {
        self.0.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PerAutoscaler for Memories {
    fn forget(&self, key: &AutoscalerKey) {
        self.take(key);
    }

    fn retain(&self, keep: &dyn Fn(&AutoscalerKey) -> bool) {
        self.0.lock().retain(|k, _| keep(k));
    }
}

/// Where "now" comes from (the wall clock in the controller, a fixed instant in tests).
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// Everything a reconcile needs.
pub struct ReconcileContext {
    /// The API client.
    pub client: Client,
    /// How every reconcile behaves.
    pub settings: ReconcileSettings,
    /// The pod cache.
    pub pods: Arc<PodCache>,
    /// Scale reads and writes.
    pub scales: Arc<ScaleClient>,
    /// Metric reads (with the Prometheus client, when there is one).
    pub sources: MetricSources,
    /// Forecasts of predicted metrics, refreshed in the background from Prometheus; `None`
    /// without `--prometheus-url`, when prediction reports why it has none.
    pub forecasts: Option<ForecastCache>,
    /// Event publishing.
    pub events: EventPublisher,
    /// Metrics.
    pub telemetry: Arc<Telemetry>,
    /// Per-autoscaler memory.
    pub memories: Memories,
    /// Which autoscaler targets what.
    pub targets: TargetIndex,
    /// The autoscalers as the controller's watch sees them (for conflict checks).
    pub store: Store<EffectiveHorizontalPodAutoscaler>,
    /// The clock.
    pub clock: Clock,
    /// Decision errors already logged, per autoscaler (they recur every sync).
    pub decision_errors: RepeatedErrors,
    /// Reconcile failures already logged, per autoscaler.
    pub reconcile_errors: RepeatedErrors,
    /// Reconciles in flight at most (`--concurrency`). Waiters are served first come, first
    /// served, so under overload every autoscaler still syncs in the order it came due.
    pub permits: tokio::sync::Semaphore,
}

impl ReconcileContext {
    /// Every store that keeps something per autoscaler. A new one is added here, and is
    /// then forgotten with the autoscaler like the others.
    fn stores(&self) -> impl Iterator<Item = &dyn PerAutoscaler> {
        let stores: [&dyn PerAutoscaler; 5] = [
            &self.memories,
            &self.targets,
            &*self.telemetry,
            &self.decision_errors,
            &self.reconcile_errors,
        ];
        stores.into_iter().chain(
            self.forecasts
                .as_ref()
                .map(|cache| cache as &dyn PerAutoscaler),
        )
    }
}

/// A deleted autoscaler is forgotten by every store; after a full list, so is every
/// autoscaler the list no longer shows (deleted while no watch ran).
impl PerAutoscaler for ReconcileContext {
    fn forget(&self, key: &AutoscalerKey) {
        self.stores().for_each(|store| store.forget(key));
    }

    fn retain(&self, keep: &dyn Fn(&AutoscalerKey) -> bool) {
        self.stores().for_each(|store| store.retain(keep));
    }
}

/// Why a reconcile failed (the controller retries it).
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The object has no namespace or name (never true of an object from the API server).
    #[error("object without namespace or name")]
    Unnamed,
    /// Status could not be written.
    #[error(transparent)]
    Status(#[from] StatusError),
    /// The reconcile did not finish in time (an API request went unanswered).
    #[error("the reconcile did not finish within {0:?}; an API request went unanswered")]
    TimedOut(Duration),
}

impl ReconcileError {
    /// The `kind` label of `foresight_reconcile_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            ReconcileError::Unnamed => "unnamed",
            ReconcileError::Status(_) => "status_write",
            ReconcileError::TimedOut(_) => "timeout",
        }
    }
}

/// The longest one reconcile may take before it is abandoned and retried.
pub const RECONCILE_TIMEOUT: Duration = Duration::from_secs(15);

/// Reconciles the autoscaler `due` names, as the cache holds it once this sync's turn comes,
/// and says when to come back: the controller's runner calls this (see [`crate::due`]).
pub async fn reconcile_due(
    due: Arc<DueAutoscaler>,
    ctx: Arc<ReconcileContext>,
) -> Result<Action, ReconcileError> {
    // The limit is ours, not kube-runtime's: its runner, once at its limit, picks the next
    // due object in hash order, so under a sustained backlog some autoscalers never sync.
    // (The semaphore is never closed, so `acquire` cannot fail.)
    let _permit = ctx.permits.acquire().await.ok();
    match ctx.store.get(&due.autoscaler()) {
        Some(obj) => reconcile_permitted(obj, &ctx).await,
        // Deleted while this sync waited: its handle goes from the runner's cache too.
        None => Ok(Action::await_change()),
    }
}

/// Reconciles one autoscaler (or the newer version of it the cache holds once this sync's
/// turn comes) and says when to come back.
pub async fn reconcile(
    obj: Arc<EffectiveHorizontalPodAutoscaler>,
    ctx: Arc<ReconcileContext>,
) -> Result<Action, ReconcileError> {
    let _permit = ctx.permits.acquire().await.ok();
    let obj = ctx.store.get(&ObjectRef::from_obj(&*obj)).unwrap_or(obj);
    reconcile_permitted(obj, &ctx).await
}

/// Reconciles `obj` once this sync holds its permit.
async fn reconcile_permitted(
    obj: Arc<EffectiveHorizontalPodAutoscaler>,
    ctx: &ReconcileContext,
) -> Result<Action, ReconcileError> {
    let Some(key) = AutoscalerKey::of_object(&obj) else {
        return Err(ReconcileError::Unnamed);
    };
    let started = std::time::Instant::now();
    ctx.telemetry.sync_started(&key);
    ctx.telemetry.reconciles.inc();
    // Every line logged while this autoscaler reconciles carries its namespace and name.
    // The span's level is ERROR so that it is on whenever any line is: at `--log-level=warn`
    // an INFO span would be filtered out and the warnings would lose their context.
    let span = tracing::error_span!("reconcile", namespace = key.namespace, name = key.name);
    // Boxed: a sync waiting for its permit is then a few words, not the whole reconcile's
    // state, and under a backlog thousands of them wait.
    let mut outcome = HpaOutcome::default();
    let inner = Box::pin(tracing::Instrument::instrument(
        reconcile_inner(&obj, ctx, &key, &mut outcome),
        span,
    ));
    // A request the API server accepted but never answers (one in flight while it restarts)
    // would hold this autoscaler's reconciles until the client's read timeout, minutes later.
    let result = match tokio::time::timeout(RECONCILE_TIMEOUT, inner).await {
        Ok(result) => result,
        Err(_) => Err(ReconcileError::TimedOut(RECONCILE_TIMEOUT)),
    };
    let took = started.elapsed();
    ctx.telemetry.reconcile_duration.observe(took.as_secs_f64());
    if result.is_err() && outcome.error == ErrorKind::None {
        outcome.error = ErrorKind::Internal;
    }
    ctx.telemetry
        .hpa
        .reconciled(outcome.action, outcome.error, took);
    match &result {
        Ok(delay) => ctx.telemetry.sync_due(&key, *delay),
        Err(e) => {
            ctx.telemetry.reconcile_failed(e.kind());
            ctx.telemetry.sync_due(&key, ctx.settings.sync_period());
        }
    }
    result.map(Action::requeue)
}

/// What to do after a failed reconcile: try again after a sync period.
pub fn error_policy(
    due: Arc<DueAutoscaler>,
    err: &ReconcileError,
    ctx: Arc<ReconcileContext>,
) -> Action {
    let key = AutoscalerKey::new(due.namespace().unwrap_or_default(), due.name_any());
    if let Some(times) = ctx.reconcile_errors.note(&key, &err.to_string()) {
        tracing::warn!(namespace = %key.namespace, name = %key.name, error = %err, times, "reconcile failed");
    }
    Action::requeue(ctx.settings.sync_period())
}

/// What a reconcile did, as the HPA's reconciliation series labels it: the rescale written
/// (if any) and the first kind of error.
#[derive(Clone, Copy, Debug)]
struct HpaOutcome {
    action: HpaAction,
    error: ErrorKind,
}

impl Default for HpaOutcome {
    fn default() -> Self {
        HpaOutcome {
            action: HpaAction::None,
            error: ErrorKind::None,
        }
    }
}

/// One reconcile; says after how long to sync again. The autoscaler's memory is taken out
/// once and put back once, whichever way the sync ends.
async fn reconcile_inner(
    obj: &EffectiveHorizontalPodAutoscaler,
    ctx: &ReconcileContext,
    key: &AutoscalerKey,
    outcome: &mut HpaOutcome,
) -> Result<Duration, ReconcileError> {
    let now = (ctx.clock)();
    let prior = obj.status.clone().unwrap_or_default();
    let mut memory = ctx
        .memories
        .take(key)
        .unwrap_or_else(|| Memory::restored(&prior, now));
    let result = sync(obj, ctx, key, (&prior, now), &mut memory, outcome).await;
    ctx.memories.put(key, memory);
    result
}

/// Compile, observe, decide, act, record (`prior` is the status the sync starts from, at
/// `now`).
async fn sync(
    obj: &EffectiveHorizontalPodAutoscaler,
    ctx: &ReconcileContext,
    key: &AutoscalerKey,
    (prior, now): (&EffectiveHorizontalPodAutoscalerStatus, Timestamp),
    memory: &mut Memory,
    outcome: &mut HpaOutcome,
) -> Result<Duration, ReconcileError> {
    let calls = ctx.telemetry.calls();
    let api: Api<EffectiveHorizontalPodAutoscaler> =
        Api::namespaced(ctx.client.clone(), &key.namespace);
    let autoscaler = match compile(obj, ctx, key, memory) {
        Ok(a) => a,
        Err(message) => {
            outcome.error = ErrorKind::Spec;
            let written = report_invalid_spec(obj, ctx, &api, memory, &message, now).await;
            ctx.telemetry.autoscalers.record_invalid(key);
            written?;
            return Ok(ctx.settings.sync_period());
        }
    };
    if !ctx.pods.is_ready() {
        // Without the first pod list every workload looks podless; wait rather than decide
        // on that.
        return Ok(ctx.settings.cache_wait);
    }

    let (observation, durations) = observe(ctx, obj, &autoscaler, key, prior, now, &calls).await;
    let history = std::mem::take(&mut memory.history);
    let decision = decide(&autoscaler, &observation, prior.clone(), history, now);
    let rescaled = rescale(ctx, &autoscaler, &decision, &calls).await;
    record_hpa_series(
        ctx,
        &autoscaler,
        &decision,
        &rescaled,
        prior,
        &durations,
        outcome,
    );
    let labels = DecisionLabels {
        direction: decision.direction().to_owned(),
        reason: decision.shaped_by().to_owned(),
    };
    let reconciled = decision.finish(&autoscaler, rescaled);
    let new_status = status_after(obj, prior, &reconciled, &autoscaler, now);

    ctx.events
        .publish(
            &obj.object_ref(&()),
            &reconciled.events,
            &mut memory.last_events,
            &calls,
        )
        .await;
    match &reconciled.error {
        Some(err) => {
            if let Some(times) = ctx.decision_errors.note(key, err) {
                tracing::info!(error = %err, times, "decision reported an error");
            }
        }
        None => ctx.decision_errors.clear(key),
    }
    ctx.telemetry.decisions.get_or_create(&labels).inc();
    ctx.telemetry.autoscalers.record(&autoscaler, &new_status);
    memory.history = reconciled.history;

    if status::should_write_over(
        obj,
        memory.written,
        &new_status,
        memory.last_write,
        now,
        ctx.settings.status_refresh,
    ) {
        let version = status::write(&api, &key.name, &new_status, &calls).await?;
        memory.written = status::written(version, &new_status);
        memory.last_write = Some(now);
    }
    ctx.reconcile_errors.clear(key);
    let period = autoscaler
        .settings
        .sync_period_seconds
        .max(1)
        .unsigned_abs();
    Ok(Duration::from_secs(period))
}

/// The spec compiled, reused while the object's generation is the one it was compiled at;
/// or every error of a spec that does not compile, in one message (and nothing is predicted
/// for it).
fn compile(
    obj: &EffectiveHorizontalPodAutoscaler,
    ctx: &ReconcileContext,
    key: &AutoscalerKey,
    memory: &mut Memory,
) -> Result<Arc<Autoscaler>, String> {
    let generation = obj.metadata.generation;
    if let Some((at, compiled)) = &memory.compiled {
        if Some(*at) == generation {
            return Ok(Arc::clone(compiled));
        }
    }
    match Autoscaler::new(&key.namespace, &key.name, &obj.spec, &ctx.settings.core) {
        Ok(a) => {
            let a = Arc::new(a);
            memory.compiled = generation.map(|g| (g, Arc::clone(&a)));
            Ok(a)
        }
        Err(errors) => {
            if let Some(cache) = &ctx.forecasts {
                cache.remove(key);
            }
            Err(errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "))
        }
    }
}

/// The HPA's series for this decision: each metric's computation (when the decision got as
/// far as its metrics), and the reconcile's action and error so far.
fn record_hpa_series(
    ctx: &ReconcileContext,
    autoscaler: &Autoscaler,
    decision: &Decision,
    rescaled: &ScaleOutcome,
    prior: &EffectiveHorizontalPodAutoscalerStatus,
    durations: &[Duration],
    outcome: &mut HpaOutcome,
) {
    let previous = prior.current_replicas.unwrap_or(0);
    if let Some(computed) = hpa::computations(autoscaler, &decision.record, previous, durations) {
        computed.iter().for_each(|m| ctx.telemetry.hpa.computed(m));
    }
    if let (ScaleOutcome::Applied { .. }, Some(to)) = (rescaled, decision.scale_to) {
        outcome.action = HpaAction::between(decision.current_replicas, to);
    }
    if decision.error.is_some() || matches!(rescaled, ScaleOutcome::Failed(_)) {
        outcome.error = ErrorKind::Internal;
    }
}

/// Writes the scale the decision asks for, if any.
async fn rescale(
    ctx: &ReconcileContext,
    autoscaler: &Autoscaler,
    decision: &Decision,
    calls: &ApiCall,
) -> ScaleOutcome {
    let Some(n) = decision.scale_to else {
        return ScaleOutcome::NotAttempted;
    };
    let ns = &autoscaler.namespace;
    match ctx.scales.write(ns, &autoscaler.target, n, calls).await {
        Ok(()) => {
            tracing::info!(
                from = decision.current_replicas,
                to = n,
                reason = %decision.rescale_reason,
                "rescaled {} from {} to {n}",
                autoscaler.target_reference(),
                decision.current_replicas,
            );
            ScaleOutcome::Applied { at: (ctx.clock)() }
        }
        Err(e) => ScaleOutcome::Failed(e.to_string()),
    }
}

/// The status this sync leaves: the decision's, at the object's generation, with the
/// history persisted only when a decision after a restart could see the difference.
fn status_after(
    obj: &EffectiveHorizontalPodAutoscaler,
    prior: &EffectiveHorizontalPodAutoscalerStatus,
    reconciled: &Reconciled,
    autoscaler: &Autoscaler,
    now: Timestamp,
) -> EffectiveHorizontalPodAutoscalerStatus {
    let mut status = reconciled.status.clone();
    status.observed_generation = obj.metadata.generation;
    let persisted = history::for_status(&reconciled.history, autoscaler, now);
    status.history = if history::needs_write(prior.history.as_ref(), &persisted) {
        Some(persisted)
    } else {
        prior.history.clone()
    };
    status
}

/// Reads the world for one decision: other autoscalers on the target, what prediction
/// offers, the pause annotations, then the target's scale, pods and metrics; and how long
/// each metric's reads took (none when no metric was read).
async fn observe(
    ctx: &ReconcileContext,
    obj: &EffectiveHorizontalPodAutoscaler,
    autoscaler: &Arc<Autoscaler>,
    key: &AutoscalerKey,
    prior: &EffectiveHorizontalPodAutoscalerStatus,
    now: Timestamp,
    calls: &ApiCall,
) -> (Observation, Vec<Duration>) {
    // The spec changed since status last recorded it (or status was never written).
    let spec_changed = obj.metadata.generation != prior.observed_generation;
    let annotations = obj.metadata.annotations.iter().flatten();
    let mut observation = Observation {
        conflicts: conflicts(ctx, autoscaler, key),
        // What prediction offers comes from memory and is there even when the target is not.
        metrics: predicted(ctx, autoscaler, spec_changed, now),
        operating_point: operating_point(ctx, autoscaler, prior, spec_changed),
        pause: Pause::from_annotations(annotations.map(|(k, v)| (k.as_str(), v.as_str()))),
        created: obj.metadata.creation_timestamp.as_ref().map(|t| t.0),
        ..Default::default()
    };
    let scale = match ctx
        .scales
        .read(&key.namespace, &autoscaler.target, calls)
        .await
    {
        Ok(s) => s,
        Err(e) => {
            observation.scale = Err(e.to_string());
            return (observation, Vec::new());
        }
    };
    let mut durations = Vec::new();
    match Selector::parse(&scale.selector) {
        // The decision reports it as Kubernetes does (ScalingActive=False, InvalidSelector).
        Err(e) => observation.selector_error = Some(e.to_string()),
        Ok(selector) => {
            if reads_metrics(autoscaler, &scale, !observation.conflicts.is_empty(), prior) {
                let proposing = foresight_replay::runner::prediction_proposing(prior);
                let workload = Workload {
                    selector: &selector,
                    scale: &scale,
                    proposing,
                };
                durations =
                    read_metrics(ctx, autoscaler, &workload, now, calls, &mut observation).await;
            }
        }
    }
    observation.scale = Ok(scale);
    (observation, durations)
}

/// The other autoscalers (`namespace/name`) that target the same workload.
fn conflicts(ctx: &ReconcileContext, autoscaler: &Autoscaler, me: &AutoscalerKey) -> Vec<String> {
    let ns = autoscaler.namespace.as_str();
    let target = TargetKey::new(ns, &autoscaler.target);
    ctx.targets.register(me, &target, |other| {
        ctx.store
            .get(&ObjectRef::new(other).within(ns))
            .is_some_and(|o| TargetKey::new(ns, &o.spec.scale_target_ref) == target)
    })
}

/// What prediction offers each metric, in spec order: its forecast, the forecasts' accuracy,
/// the learned headroom, self-evaluation's verdict and, where the operating point lets the
/// forecast carry the headroom, the margin its errors call for.
fn predicted(
    ctx: &ReconcileContext,
    autoscaler: &Autoscaler,
    spec_changed: bool,
    now: Timestamp,
) -> Vec<MetricObservation> {
    let mut forecasts = forecast_inputs(ctx, autoscaler, spec_changed, now).into_iter();
    let (accuracy, learned, margins) = match &ctx.forecasts {
        Some(cache) => (
            cache.accuracy(autoscaler),
            cache.learned(autoscaler),
            cache.forecast_margins(autoscaler),
        ),
        None => Default::default(),
    };
    let (mut accuracy, mut learned, mut margins) = (
        accuracy.into_iter(),
        learned.into_iter(),
        margins.into_iter(),
    );
    autoscaler
        .metrics
        .iter()
        .map(|_| {
            let (headroom, evaluation) = learned.next().unwrap_or_default();
            MetricObservation {
                forecast: forecasts.next().unwrap_or_default(),
                accuracy: accuracy.next().flatten(),
                headroom,
                evaluation,
                forecast_margin: margins.next().flatten(),
                ..MetricObservation::default()
            }
        })
        .collect()
}

/// With `spec.objective`, the operating point to decide at: the tuner's latest, or until it
/// has replayed (after a restart) the one status recorded for the same spec.
fn operating_point(
    ctx: &ReconcileContext,
    autoscaler: &Autoscaler,
    prior: &EffectiveHorizontalPodAutoscalerStatus,
    spec_changed: bool,
) -> Option<OperatingPoint> {
    autoscaler.objective?;
    let cache = ctx.forecasts.as_ref()?;
    cache.operating_point(autoscaler).or_else(|| {
        let recorded = prior.operating_point.as_ref().filter(|_| !spec_changed)?;
        OperatingPoint::from_status(recorded, autoscaler.first_utilization())
    })
}

/// The target as this sync found it, for reading its pods and metrics.
struct Workload<'a> {
    selector: &'a Selector,
    scale: &'a Scale,
    /// Whether prediction proposed in the status this sync started from.
    proposing: bool,
}

/// Reads the target's pods and every metric into `observation`, and tells the forecast cache
/// what the decision will assume of the workload (for its headroom and replays); returns how
/// long each metric's reads took.
async fn read_metrics(
    ctx: &ReconcileContext,
    autoscaler: &Arc<Autoscaler>,
    workload: &Workload<'_>,
    now: Timestamp,
    calls: &ApiCall,
    observation: &mut Observation,
) -> Vec<Duration> {
    observation.pods = ctx.pods.select(&autoscaler.namespace, workload.selector);
    if let (Some(cache), Some(policy)) = (&ctx.forecasts, &autoscaler.prediction) {
        let reach = forecasting::reach(
            policy,
            &observation.pods,
            autoscaler.settings.sync_period_seconds,
        );
        cache.learn_about(
            autoscaler,
            Assumptions::from_pods(&observation.pods, reach.startup_seconds, workload.proposing),
        );
    }
    let Readings {
        resource_metrics,
        metrics,
        durations,
    } = ctx
        .sources
        .read(
            autoscaler,
            workload.selector,
            &workload.scale.selector,
            now,
            calls,
        )
        .await;
    observation.resource_metrics = resource_metrics;
    for (seen, reading) in observation.metrics.iter_mut().zip(metrics) {
        seen.reading = reading;
    }
    durations
}

/// What prediction offers each metric of `autoscaler` (empty when prediction is off): the
/// cache's answer from memory, or why there is no forecast without Prometheus. Asked on
/// every sync, even when the decision will not look at metrics, so that the cache follows
/// the spec (a changed query or window refreshes at once).
fn forecast_inputs(
    ctx: &ReconcileContext,
    autoscaler: &Autoscaler,
    spec_changed: bool,
    now: Timestamp,
) -> Vec<ForecastInput> {
    let Some(cache) = &ctx.forecasts else {
        return forecasts::without_prometheus(autoscaler);
    };
    if autoscaler.prediction_window_seconds.is_none() {
        // Forgetting looks at every tracked forecast: do it when the spec changed (prediction
        // may just have been turned off), not on every sync of autoscalers that never predict.
        if spec_changed {
            cache.remove(&AutoscalerKey::of(autoscaler));
        }
        return Vec::new();
    }
    cache.forecasts(autoscaler, now)
}

/// An object the API server accepted but the controller cannot compile (a rule CEL could
/// not express): say so in status and in one event, and touch nothing else.
async fn report_invalid_spec(
    obj: &EffectiveHorizontalPodAutoscaler,
    ctx: &ReconcileContext,
    api: &Api<EffectiveHorizontalPodAutoscaler>,
    memory: &mut Memory,
    message: &str,
    now: Timestamp,
) -> Result<(), StatusError> {
    let calls = ctx.telemetry.calls();
    let prior = obj.status.clone().unwrap_or_default();
    let (mut new_status, event) = invalid_spec(&prior, message, now);
    new_status.observed_generation = obj.metadata.generation;
    let events = [event];
    ctx.events
        .publish(
            &obj.object_ref(&()),
            &events,
            &mut memory.last_events,
            &calls,
        )
        .await;
    let changed = match memory.written {
        Some(w) if status::cache_behind(obj, memory.written) => {
            w.fingerprint != status::fingerprint(&new_status)
        }
        _ => status::relevant_change(&prior, &new_status),
    };
    if changed {
        let version = status::write(api, &obj.name_any(), &new_status, &calls).await?;
        memory.written = status::written(version, &new_status);
        memory.last_write = Some(now);
    }
    Ok(())
}
