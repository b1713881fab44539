//! The scale target: reading its scale (`spec.replicas`, `status.replicas`, the selector) and
//! writing its replicas through the `scale` subresource.
//!
//! Reads come from a watch cache for the workload kinds whose scale is known from the object
//! itself (Deployment, StatefulSet, ReplicaSet in `apps`): the HPA controller's one `GET
//! /scale` per autoscaler per sync is the largest request cost of autoscaling, and a watch
//! makes it free. Every other kind — a custom resource with a scale subresource, an Argo
//! Rollout — is resolved through API discovery (cached per group/version/kind) and read with
//! `GET .../scale`, as Kubernetes does. Writes always go through the scale subresource.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use foresight_api::hpa::{CrossVersionObjectReference, SelectorOperator};
use foresight_core::proposals::Scale;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client};
use parking_lot::RwLock;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

use crate::relist::Sweep;
use crate::slim::WatchedWorkload;
use crate::telemetry::{ApiCall, Call};

/// Why the scale could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// `scaleTargetRef.apiVersion` does not parse, or is missing for a kind we cannot guess.
    #[error("scaleTargetRef: {0}")]
    Reference(String),
    /// Discovery did not find the kind.
    #[error("unable to resolve {kind} in {api_version}: {source}")]
    Discovery {
        /// The kind.
        kind: String,
        /// The apiVersion.
        api_version: String,
        /// The API error.
        source: kube::Error,
    },
    /// The scale subresource call failed.
    #[error("{0}")]
    Api(#[from] kube::Error),
}

/// The kinds whose scale the watch cache serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// apps/v1 Deployment.
    Deployment,
    /// apps/v1 StatefulSet.
    StatefulSet,
    /// apps/v1 ReplicaSet.
    ReplicaSet,
}

impl WorkloadKind {
    /// All of them.
    pub const ALL: [WorkloadKind; 3] = [
        WorkloadKind::Deployment,
        WorkloadKind::StatefulSet,
        WorkloadKind::ReplicaSet,
    ];

    /// The kind for a reference, if it is one of ours.
    pub fn of(target: &CrossVersionObjectReference) -> Option<WorkloadKind> {
        let group = target
            .api_version
            .as_deref()
            .map(|v| v.split_once('/').map(|(g, _)| g).unwrap_or(""))
            .unwrap_or("apps");
        if group != "apps" {
            return None;
        }
        match target.kind.as_str() {
            "Deployment" => Some(WorkloadKind::Deployment),
            "StatefulSet" => Some(WorkloadKind::StatefulSet),
            "ReplicaSet" => Some(WorkloadKind::ReplicaSet),
            _ => None,
        }
    }

    /// The kind's name, as in `scaleTargetRef.kind`.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::ReplicaSet => "ReplicaSet",
        }
    }

    /// How its watch is named in the log.
    fn watch_name(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment watch",
            WorkloadKind::StatefulSet => "StatefulSet watch",
            WorkloadKind::ReplicaSet => "ReplicaSet watch",
        }
    }

    /// Parses a kind name (for the controller's flags).
    pub fn parse(name: &str) -> Option<WorkloadKind> {
        WorkloadKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }
}

/// The scale of one workload, derived from the object as its scale subresource would report
/// it.
type Scales = HashMap<WorkloadKey, Scale>;

/// A workload's namespace and name.
type WorkloadKey = (String, String);

#[derive(Debug, Default)]
struct KindCache {
    scales: RwLock<Scales>,
    /// The workloads a (re)list has listed so far. A relist applies in place (one copy, not
    /// two) and removes what it did not list when it completes.
    relist: parking_lot::Mutex<Sweep<WorkloadKey>>,
    ready: AtomicBool,
}

impl KindCache {
    /// Applies one watch event: a workload's scale, its deletion, or a step of a (re)list.
    fn on_event(&self, event: watcher::Event<(WorkloadKey, Scale)>) {
        match event {
            watcher::Event::Apply((key, scale)) => {
                self.scales.write().insert(key, scale);
            }
            watcher::Event::Delete((key, _)) => {
                self.scales.write().remove(&key);
            }
            watcher::Event::Init => self.relist.lock().begin(),
            watcher::Event::InitApply((key, scale)) => {
                self.relist.lock().saw(key.clone());
                self.scales.write().insert(key, scale);
            }
            watcher::Event::InitDone => {
                let listed = self.relist.lock().finish();
                if let Some(listed) = listed {
                    self.scales.write().retain(|key, _| listed.contains(key));
                }
                self.ready.store(true, Ordering::Release);
            }
        }
    }
}

/// A workload watch's event, reduced to what the cache keeps. Objects without a namespace or
/// name are not real API objects and are skipped.
fn keyed<W: ScalableWorkload>(
    event: watcher::Event<W>,
) -> Option<watcher::Event<(WorkloadKey, Scale)>> {
    let keyed = |w: &W| {
        let key = (w.meta().namespace.clone()?, w.meta().name.clone()?);
        Some((key, scale_of(w)))
    };
    Some(match event {
        watcher::Event::Apply(w) => watcher::Event::Apply(keyed(&w)?),
        watcher::Event::Delete(w) => watcher::Event::Delete(keyed(&w)?),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(w) => watcher::Event::InitApply(keyed(&w)?),
        watcher::Event::InitDone => watcher::Event::InitDone,
    })
}

/// Scales of Deployments, StatefulSets and ReplicaSets, kept current by watches.
#[derive(Debug, Default)]
pub struct WorkloadCache {
    kinds: HashMap<WorkloadKind, KindCache>,
}

/// A workload object whose scale can be read off it.
pub trait ScalableWorkload:
    kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
    + DeserializeOwned
    + Clone
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// `(spec.replicas, status.replicas, spec.selector)`.
    fn scale_parts(&self) -> (Option<i32>, Option<i32>, Option<&LabelSelector>);
}

impl ScalableWorkload for Deployment {
    fn scale_parts(&self) -> (Option<i32>, Option<i32>, Option<&LabelSelector>) {
        let spec = self.spec.as_ref();
        (
            spec.and_then(|s| s.replicas),
            self.status.as_ref().and_then(|s| s.replicas),
            spec.map(|s| &s.selector),
        )
    }
}

impl ScalableWorkload for StatefulSet {
    fn scale_parts(&self) -> (Option<i32>, Option<i32>, Option<&LabelSelector>) {
        let spec = self.spec.as_ref();
        (
            spec.and_then(|s| s.replicas),
            self.status.as_ref().map(|s| s.replicas),
            spec.map(|s| &s.selector),
        )
    }
}

impl ScalableWorkload for ReplicaSet {
    fn scale_parts(&self) -> (Option<i32>, Option<i32>, Option<&LabelSelector>) {
        let spec = self.spec.as_ref();
        (
            spec.and_then(|s| s.replicas),
            self.status.as_ref().map(|s| s.replicas),
            spec.map(|s| &s.selector),
        )
    }
}

/// The scale the subresource reports for a workload object: `spec.replicas` defaults to 1,
/// as the API server defaults it.
pub fn scale_of<W: ScalableWorkload>(w: &W) -> Scale {
    let (spec, status, selector) = w.scale_parts();
    Scale {
        spec_replicas: spec.unwrap_or(1),
        status_replicas: status.unwrap_or(0),
        selector: selector.map(format_selector).unwrap_or_default(),
    }
}

/// A label selector in its string form, as `metav1.FormatLabelSelector` writes it.
pub fn format_selector(sel: &LabelSelector) -> String {
    let mut parts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in sel.match_labels.iter().flatten() {
        parts.entry(k.clone()).or_default().push(format!("{k}={v}"));
    }
    for e in sel.match_expressions.iter().flatten() {
        let mut sorted = e.values.clone().unwrap_or_default();
        sorted.sort();
        let text = SelectorOperator::requirement_text(&e.operator, &e.key, &sorted);
        parts.entry(e.key.clone()).or_default().push(text);
    }
    parts.into_values().flatten().collect::<Vec<_>>().join(",")
}

impl WorkloadCache {
    /// A cache for `kinds`, none of them ready.
    pub fn new(kinds: &[WorkloadKind]) -> Self {
        WorkloadCache {
            kinds: kinds.iter().map(|k| (*k, KindCache::default())).collect(),
        }
    }

    /// The cached scale: `None` when the kind is not cached, its watch has not listed yet,
    /// or the object is not (yet) in it — the caller then asks the API.
    pub fn get(&self, kind: WorkloadKind, namespace: &str, name: &str) -> Option<Scale> {
        let c = self.kinds.get(&kind)?;
        if !c.ready.load(Ordering::Acquire) {
            return None;
        }
        c.scales
            .read()
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned()
    }

    /// Records a workload's scale.
    pub fn apply(&self, kind: WorkloadKind, namespace: &str, name: &str, scale: Scale) {
        if let Some(c) = self.kinds.get(&kind) {
            c.scales
                .write()
                .insert((namespace.to_owned(), name.to_owned()), scale);
        }
    }

    /// Forgets a workload.
    pub fn delete(&self, kind: WorkloadKind, namespace: &str, name: &str) {
        if let Some(c) = self.kinds.get(&kind) {
            c.scales
                .write()
                .remove(&(namespace.to_owned(), name.to_owned()));
        }
    }

    /// Marks a kind's cache complete.
    pub fn mark_ready(&self, kind: WorkloadKind) {
        if let Some(c) = self.kinds.get(&kind) {
            c.ready.store(true, Ordering::Release);
        }
    }

    /// The kinds this cache holds.
    pub fn kinds(&self) -> Vec<WorkloadKind> {
        self.kinds.keys().copied().collect()
    }

    /// Keeps `kind` current from a watch until the stream ends.
    pub async fn run(self: Arc<Self>, client: Client, kind: WorkloadKind) {
        match kind {
            // Decoded without what the scale does not need (see `crate::slim`).
            WorkloadKind::Deployment => {
                self.watch::<WatchedWorkload<Deployment>>(client, kind)
                    .await
            }
            WorkloadKind::StatefulSet => {
                self.watch::<WatchedWorkload<StatefulSet>>(client, kind)
                    .await
            }
            WorkloadKind::ReplicaSet => {
                self.watch::<WatchedWorkload<ReplicaSet>>(client, kind)
                    .await
            }
        }
    }

    async fn watch<W: ScalableWorkload>(&self, client: Client, kind: WorkloadKind) {
        let Some(cache) = self.kinds.get(&kind) else {
            return;
        };
        let stream = watcher(Api::<W>::all(client), crate::client::watch_config())
            .backoff(crate::backoff::watch_backoff());
        futures::pin_mut!(stream);
        let mut failures = crate::backoff::FailureLog::new(kind.watch_name());
        while let Some(event) = stream.next().await {
            if event.is_ok() {
                failures.succeeded();
            }
            match event {
                Ok(event) => {
                    if let Some(event) = keyed(event) {
                        cache.on_event(event);
                    }
                }
                Err(e) => {
                    failures.failed(&e);
                }
            }
        }
    }
}

/// Reads and writes scales: from the workload cache when it can, else through discovery and
/// the scale subresource.
pub struct ScaleClient {
    client: Client,
    workloads: Arc<WorkloadCache>,
    resolved: Mutex<HashMap<GroupVersionKind, ApiResource>>,
}

impl ScaleClient {
    /// A scale client over `client`, reading from `workloads` where it can.
    pub fn new(client: Client, workloads: Arc<WorkloadCache>) -> Self {
        ScaleClient {
            client,
            workloads,
            resolved: Mutex::new(HashMap::new()),
        }
    }

    /// The target's `group/version/kind`. A missing apiVersion is accepted for the apps
    /// workloads (as `apps/v1`) and rejected otherwise: guessing a group is how an
    /// autoscaler ends up scaling the wrong thing.
    pub fn gvk(target: &CrossVersionObjectReference) -> Result<GroupVersionKind, ScaleError> {
        let api_version = match (&target.api_version, WorkloadKind::of(target)) {
            (Some(v), _) if !v.is_empty() => v.clone(),
            (_, Some(_)) => "apps/v1".to_owned(),
            _ => {
                return Err(ScaleError::Reference(format!(
                    "apiVersion is required for kind {}",
                    target.kind
                )))
            }
        };
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version.as_str()),
        };
        if version.is_empty() || version.contains('/') {
            return Err(ScaleError::Reference(format!(
                "apiVersion {api_version:?} is not group/version"
            )));
        }
        Ok(GroupVersionKind::gvk(group, version, &target.kind))
    }

    /// The API resource for a reference (its plural, group, version), from discovery once per
    /// kind.
    pub async fn resource_for(
        &self,
        target: &CrossVersionObjectReference,
        calls: &ApiCall,
    ) -> Result<ApiResource, ScaleError> {
        let gvk = Self::gvk(target)?;
        if let Some(ar) = self.resolved.lock().await.get(&gvk) {
            return Ok(ar.clone());
        }
        let ar = match WorkloadKind::of(target) {
            // The apps workloads need no discovery round trip.
            Some(WorkloadKind::Deployment) if gvk.version == "v1" => {
                ApiResource::erase::<Deployment>(&())
            }
            Some(WorkloadKind::StatefulSet) if gvk.version == "v1" => {
                ApiResource::erase::<StatefulSet>(&())
            }
            Some(WorkloadKind::ReplicaSet) if gvk.version == "v1" => {
                ApiResource::erase::<ReplicaSet>(&())
            }
            _ => {
                calls.record(Call::Discovery);
                let (ar, _caps) = kube::discovery::pinned_kind(&self.client, &gvk)
                    .await
                    .map_err(|source| ScaleError::Discovery {
                        kind: gvk.kind.clone(),
                        api_version: gvk.api_version(),
                        source,
                    })?;
                ar
            }
        };
        self.resolved.lock().await.insert(gvk, ar.clone());
        Ok(ar)
    }

    /// The target's scale.
    pub async fn read(
        &self,
        namespace: &str,
        target: &CrossVersionObjectReference,
        calls: &ApiCall,
    ) -> Result<Scale, ScaleError> {
        if let Some(kind) = WorkloadKind::of(target) {
            if let Some(scale) = self.workloads.get(kind, namespace, &target.name) {
                return Ok(scale);
            }
        }
        let ar = self.resource_for(target, calls).await?;
        let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), namespace, &ar);
        calls.record(Call::GetScale);
        let scale = api.get_scale(&target.name).await?;
        Ok(Scale {
            spec_replicas: scale.spec.and_then(|s| s.replicas).unwrap_or(0),
            status_replicas: scale.status.as_ref().map(|s| s.replicas).unwrap_or(0),
            selector: scale.status.and_then(|s| s.selector).unwrap_or_default(),
        })
    }

    /// Sets the target's replicas through its scale subresource (a merge patch of
    /// `spec.replicas`, which leaves any other field of the scale alone).
    pub async fn write(
        &self,
        namespace: &str,
        target: &CrossVersionObjectReference,
        replicas: i32,
        calls: &ApiCall,
    ) -> Result<(), ScaleError> {
        let ar = self.resource_for(target, calls).await?;
        let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), namespace, &ar);
        let patch = serde_json::json!({"spec": {"replicas": replicas}});
        calls.record(Call::PatchScale);
        api.patch_scale(&target.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        // Let the next read see the new count even before the watch delivers it.
        if let Some(kind) = WorkloadKind::of(target) {
            if let Some(mut scale) = self.workloads.get(kind, namespace, &target.name) {
                scale.spec_replicas = replicas;
                self.workloads.apply(kind, namespace, &target.name, scale);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_selectors_as_kubernetes_does() {
        let sel: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"tier": "web", "app": "shop"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "canary"]},
                                 {"key": "legacy", "operator": "DoesNotExist"}]
        }))
        .unwrap();
        assert_eq!(
            format_selector(&sel),
            "app=shop,env in (canary,prod),!legacy,tier=web"
        );
    }

    fn scale(replicas: i32) -> Scale {
        Scale {
            spec_replicas: replicas,
            status_replicas: replicas,
            selector: "app=web".into(),
        }
    }

    fn key(name: &str) -> WorkloadKey {
        ("a".into(), name.into())
    }

    #[test]
    fn a_workload_relist_applies_in_place_and_removes_the_unlisted() {
        use watcher::Event::*;
        let kind = WorkloadKind::Deployment;
        let cache = WorkloadCache::new(&[kind]);
        let kc = &cache.kinds[&kind];
        let get = |name: &str| cache.get(kind, "a", name).map(|s| s.spec_replicas);
        kc.on_event(Init);
        kc.on_event(InitApply((key("web"), scale(2))));
        kc.on_event(InitApply((key("gone"), scale(1))));
        // Not ready before the first list completes: the caller asks the API.
        assert_eq!(get("web"), None);
        kc.on_event(InitDone);
        assert_eq!((get("web"), get("gone")), (Some(2), Some(1)));

        kc.on_event(Init);
        kc.on_event(InitApply((key("web"), scale(5))));
        // Mid-relist: the listed one is current, the one not yet listed still there.
        assert_eq!((get("web"), get("gone")), (Some(5), Some(1)));
        kc.on_event(InitDone);
        assert_eq!((get("web"), get("gone")), (Some(5), None));

        // A relist that fails part way removes nothing; the next complete one does.
        kc.on_event(Apply((key("new"), scale(3))));
        kc.on_event(Init);
        kc.on_event(InitApply((key("new"), scale(3))));
        kc.on_event(Init);
        kc.on_event(InitApply((key("web"), scale(5))));
        assert_eq!(get("new"), Some(3));
        kc.on_event(InitDone);
        assert_eq!((get("web"), get("new")), (Some(5), None));
        kc.on_event(Delete((key("web"), scale(5))));
        assert_eq!(get("web"), None);
    }

    #[test]
    fn deployment_scale_defaults_replicas_to_one() {
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "a"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"spec": {"containers": []}}},
            "status": {"replicas": 3}
        }))
        .unwrap();
        let s = scale_of(&d);
        assert_eq!((s.spec_replicas, s.status_replicas), (1, 3));
        assert_eq!(s.selector, "app=web");
    }

    #[test]
    fn resolves_group_version_kind() {
        let r = |v: Option<&str>, k: &str| CrossVersionObjectReference {
            api_version: v.map(str::to_owned),
            kind: k.to_owned(),
            name: "x".to_owned(),
        };
        let g = ScaleClient::gvk(&r(Some("argoproj.io/v1alpha1"), "Rollout")).unwrap();
        assert_eq!(
            (g.group.as_str(), g.version.as_str()),
            ("argoproj.io", "v1alpha1")
        );
        let g = ScaleClient::gvk(&r(None, "Deployment")).unwrap();
        assert_eq!(g.api_version(), "apps/v1");
        let g = ScaleClient::gvk(&r(Some("v1"), "ReplicationController")).unwrap();
        assert_eq!(g.group, "");
        assert!(ScaleClient::gvk(&r(None, "Rollout")).is_err());
        assert!(ScaleClient::gvk(&r(Some("a/b/c"), "X")).is_err());
    }
}
