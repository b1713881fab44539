//! What the watches decode: only what the caches read.
//!
//! A watch decodes one (re)list page at a time, and every watch relists at once after an
//! API server restart: that is the controller's memory peak. A heap profile at 2,000
//! autoscalers showed, of the decoded list pages, about 40% `metadata.managedFields` (which
//! no cache keeps) and most of the rest the pods' spec fields the pod cache never reads
//! (images, commands, environment, volumes, probes...).
//!
//! The types here decode the same JSON into the same `k8s-openapi` types, but skip what no
//! cache reads while decoding (serde ignores the fields a struct does not name, without
//! building them): `managedFields` on every watch; for pods, everything but the fields
//! [`crate::pods::convert`] reads; for the workload kinds, everything but the scale. Each
//! type names the resource it decodes (kind, group, version, plural are that resource's),
//! so the API requests are the same.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use foresight_api::status::EffectiveHorizontalPodAutoscalerStatus;
use foresight_api::{EffectiveHorizontalPodAutoscaler, EffectiveHorizontalPodAutoscalerSpec};
use k8s_openapi::api::core::v1::{
    Container, Pod, PodCondition, PodSpec, PodStatus, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use kube::core::NamespaceResourceScope;
use kube::Resource;
use serde::{Deserialize, Deserializer};

use crate::target::ScalableWorkload;

/// Implements `Resource` for a type that stands for another resource (`$of`) in requests and
/// caches: the kind, group, version and plural are `$of`'s, so the requests are the same; the
/// metadata is the type's own, at `self.$meta`. The type's generics and their bounds come
/// first, in brackets.
macro_rules! stands_for {
    ([$($generics:tt)*] $ty:ty, $of:ty, $($meta:tt).+) => {
        impl<$($generics)*> kube::Resource for $ty {
            type DynamicType = ();
            type Scope = kube::core::NamespaceResourceScope;

            fn kind(dt: &()) -> std::borrow::Cow<'_, str> {
                <$of as kube::Resource>::kind(dt)
            }
            fn group(dt: &()) -> std::borrow::Cow<'_, str> {
                <$of as kube::Resource>::group(dt)
            }
            fn version(dt: &()) -> std::borrow::Cow<'_, str> {
                <$of as kube::Resource>::version(dt)
            }
            fn plural(dt: &()) -> std::borrow::Cow<'_, str> {
                <$of as kube::Resource>::plural(dt)
            }
            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.$($meta).+
            }
            fn meta_mut(
                &mut self,
            ) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.$($meta).+
            }
        }
    };
}
pub(crate) use stands_for;

/// `metadata` as the API server sends it, without `managedFields` (left undecoded).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Meta {
    annotations: Option<BTreeMap<String, String>>,
    creation_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
    generate_name: Option<String>,
    generation: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    name: Option<String>,
    namespace: Option<String>,
    owner_references: Option<Vec<OwnerReference>>,
    resource_version: Option<String>,
    self_link: Option<String>,
    uid: Option<String>,
}

/// Decodes `metadata` without its `managedFields`: every other field as `ObjectMeta` decodes
/// it.
fn meta_without_managed_fields<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let m = Meta::deserialize(d)?;
    Ok(ObjectMeta {
        annotations: m.annotations,
        creation_timestamp: m.creation_timestamp,
        deletion_grace_period_seconds: m.deletion_grace_period_seconds,
        deletion_timestamp: m.deletion_timestamp,
        finalizers: m.finalizers,
        generate_name: m.generate_name,
        generation: m.generation,
        labels: m.labels,
        managed_fields: None,
        name: m.name,
        namespace: m.namespace,
        owner_references: m.owner_references,
        resource_version: m.resource_version,
        self_link: m.self_link,
        uid: m.uid,
    })
}

/// A pod as the pod watch decodes it: metadata without `managedFields`; of the spec, the
/// containers' and init containers' names, requests and restart policy, and the pod-level
/// requests; of the status, the phase, the conditions and the start time. Everything else
/// is left at its default.
#[derive(Clone, Debug)]
pub struct WatchedPod(pub Pod);

#[derive(Deserialize)]
struct PodShadow {
    #[serde(default, deserialize_with = "meta_without_managed_fields")]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Option<PodSpecShadow>,
    #[serde(default)]
    status: Option<PodStatusShadow>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSpecShadow {
    #[serde(default)]
    containers: Vec<ContainerShadow>,
    #[serde(default)]
    init_containers: Option<Vec<ContainerShadow>>,
    #[serde(default)]
    resources: Option<RequestsShadow>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContainerShadow {
    #[serde(default)]
    name: String,
    #[serde(default)]
    resources: Option<RequestsShadow>,
    #[serde(default)]
    restart_policy: Option<String>,
}

/// `resources`: the requests only (limits and claims are not read).
#[derive(Deserialize)]
struct RequestsShadow {
    #[serde(default)]
    requests: Option<BTreeMap<String, Quantity>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodStatusShadow {
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    conditions: Option<Vec<PodCondition>>,
    #[serde(default)]
    start_time: Option<Time>,
}

impl RequestsShadow {
    fn into_requirements(self) -> ResourceRequirements {
        ResourceRequirements {
            requests: self.requests,
            ..Default::default()
        }
    }
}

impl ContainerShadow {
    fn into_container(self) -> Container {
        Container {
            name: self.name,
            resources: self.resources.map(RequestsShadow::into_requirements),
            restart_policy: self.restart_policy,
            ..Default::default()
        }
    }
}

impl<'de> Deserialize<'de> for WatchedPod {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = PodShadow::deserialize(d)?;
        Ok(WatchedPod(Pod {
            metadata: p.metadata,
            spec: p.spec.map(|s| PodSpec {
                containers: s
                    .containers
                    .into_iter()
                    .map(ContainerShadow::into_container)
                    .collect(),
                init_containers: s.init_containers.map(|cs| {
                    cs.into_iter()
                        .map(ContainerShadow::into_container)
                        .collect()
                }),
                resources: s.resources.map(RequestsShadow::into_requirements),
                ..Default::default()
            }),
            status: p.status.map(|s| PodStatus {
                phase: s.phase,
                conditions: s.conditions,
                start_time: s.start_time,
                ..Default::default()
            }),
        }))
    }
}

stands_for!([] WatchedPod, Pod, 0.metadata);

/// A Deployment, StatefulSet or ReplicaSet (`K`) as its watch decodes it: metadata without
/// `managedFields`, and the scale (`spec.replicas`, `spec.selector`, `status.replicas`).
#[derive(Clone, Debug)]
pub struct WatchedWorkload<K> {
    metadata: ObjectMeta,
    spec_replicas: Option<i32>,
    status_replicas: Option<i32>,
    selector: Option<LabelSelector>,
    kind: PhantomData<fn() -> K>,
}

#[derive(Deserialize)]
struct WorkloadShadow {
    #[serde(default, deserialize_with = "meta_without_managed_fields")]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Option<WorkloadSpecShadow>,
    #[serde(default)]
    status: Option<WorkloadStatusShadow>,
}

#[derive(Deserialize)]
struct WorkloadSpecShadow {
    #[serde(default)]
    replicas: Option<i32>,
    #[serde(default)]
    selector: Option<LabelSelector>,
}

#[derive(Deserialize)]
struct WorkloadStatusShadow {
    #[serde(default)]
    replicas: Option<i32>,
}

impl<'de, K> Deserialize<'de> for WatchedWorkload<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = WorkloadShadow::deserialize(d)?;
        let (spec_replicas, selector) =
            w.spec.map(|s| (s.replicas, s.selector)).unwrap_or_default();
        Ok(WatchedWorkload {
            metadata: w.metadata,
            spec_replicas,
            status_replicas: w.status.and_then(|s| s.replicas),
            selector,
            kind: PhantomData,
        })
    }
}

stands_for!(
    [K: Resource<DynamicType = (), Scope = NamespaceResourceScope>]
    WatchedWorkload<K>,
    K,
    metadata
);

impl<K> ScalableWorkload for WatchedWorkload<K>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + 'static,
{
    fn scale_parts(&self) -> (Option<i32>, Option<i32>, Option<&LabelSelector>) {
        (
            self.spec_replicas,
            self.status_replicas,
            self.selector.as_ref(),
        )
    }
}

/// An autoscaler as its watch decodes it: metadata without `managedFields`, the spec and
/// the status whole (the reconcile reads both).
#[derive(Clone, Debug)]
pub struct WatchedAutoscaler(pub EffectiveHorizontalPodAutoscaler);

#[derive(Deserialize)]
struct AutoscalerShadow {
    #[serde(deserialize_with = "meta_without_managed_fields")]
    metadata: ObjectMeta,
    spec: EffectiveHorizontalPodAutoscalerSpec,
    #[serde(default)]
    status: Option<EffectiveHorizontalPodAutoscalerStatus>,
}

impl<'de> Deserialize<'de> for WatchedAutoscaler {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let a = AutoscalerShadow::deserialize(d)?;
        let mut o = EffectiveHorizontalPodAutoscaler::new("", a.spec);
        o.metadata = a.metadata;
        o.status = a.status;
        Ok(WatchedAutoscaler(o))
    }
}

stands_for!([] WatchedAutoscaler, EffectiveHorizontalPodAutoscaler, 0.metadata);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pods::convert;
    use crate::target::scale_of;
    use foresight_core::proposals::Scale;
    use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
    use kube::ResourceExt;
    use serde_json::json;

    /// Who manages which field, as the API server records it: the largest part of most
    /// objects' metadata.
    fn managed_fields() -> serde_json::Value {
        json!([{
            "manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
            "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                         "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}}}}}
        }, {
            "manager": "kubelet", "operation": "Update", "apiVersion": "v1",
            "time": "2026-01-01T00:00:05Z", "fieldsType": "FieldsV1", "subresource": "status",
            "fieldsV1": {"f:status": {"f:conditions": {}, "f:phase": {}}}
        }])
    }

    /// A pod as a list page carries it: with sidecars (restartable init containers), a plain
    /// init container, pod-level requests, readiness conditions, and much nothing reads.
    fn pod_json() -> serde_json::Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "web-7c9f-abcde", "namespace": "shop", "uid": "u-1",
                "resourceVersion": "4711", "generateName": "web-7c9f-",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"app": "web", "pod-template-hash": "7c9f"},
                "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                     "name": "web-7c9f", "uid": "u-2", "controller": true}],
                "managedFields": managed_fields()
            },
            "spec": {
                "resources": {"requests": {"cpu": "2", "memory": "1Gi"},
                              "limits": {"cpu": "4"}},
                "initContainers": [
                    {"name": "migrate", "image": "migrate:1",
                     "resources": {"requests": {"cpu": "1"}}},
                    {"name": "proxy", "image": "proxy:1", "restartPolicy": "Always",
                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
                ],
                "containers": [
                    {"name": "web", "image": "web:1", "command": ["/web"],
                     "args": ["--port", "8080"],
                     "env": [{"name": "A", "value": "b"}],
                     "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                     "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
                     "resources": {"requests": {"cpu": "500m", "memory": "256Mi"},
                                   "limits": {"cpu": "1", "memory": "512Mi"}},
                     "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
                    {"name": "log", "image": "log:1"}
                ],
                "volumes": [{"name": "data", "emptyDir": {}}],
                "nodeName": "node-1", "serviceAccountName": "default",
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                 "effect": "NoExecute", "tolerationSeconds": 300}]
            },
            "status": {
                "phase": "Running", "startTime": "2026-01-01T00:00:01Z",
                "hostIP": "10.0.0.1", "podIP": "10.1.0.7", "qosClass": "Burstable",
                "conditions": [
                    {"type": "PodReadyToStartContainers", "status": "True",
                     "lastTransitionTime": "2026-01-01T00:00:02Z"},
                    {"type": "Initialized", "status": "True",
                     "lastTransitionTime": "2026-01-01T00:00:03Z"},
                    {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                     "message": "containers with unready status: [web]",
                     "lastTransitionTime": "2026-01-01T00:00:04Z"}
                ],
                "containerStatuses": [{"name": "web", "ready": false, "restartCount": 0,
                                       "image": "web:1", "imageID": "sha256:0",
                                       "state": {"running": {"startedAt": "2026-01-01T00:00:03Z"}}}]
            }
        })
    }

    #[test]
    fn a_slim_pod_converts_as_the_full_pod_does() {
        let full: Pod = serde_json::from_value(pod_json()).unwrap();
        let slim: WatchedPod = serde_json::from_value(pod_json()).unwrap();
        let (want, got) = (convert(&full).unwrap(), convert(&slim.0).unwrap());
        assert_eq!(got, want);
        // The pod is one the cache has something to say about.
        let pod = &got.2.pod;
        assert_eq!(
            (pod.containers.len(), pod.sidecars.len()),
            (2, 1),
            "containers and sidecars: {pod:?}"
        );
        assert_eq!(pod.sidecars[0].requests.cpu, Some(100));
        assert_eq!(pod.pod_requests.as_ref().and_then(|r| r.cpu), Some(2000));
        assert!(pod.ready.is_some() && pod.start_time.is_some());

        // managedFields is not decoded; the rest of the metadata is as before.
        assert!(full.metadata.managed_fields.is_some());
        assert_eq!(slim.0.metadata.managed_fields, None);
        let mut meta = full.metadata.clone();
        meta.managed_fields = None;
        assert_eq!(slim.0.metadata, meta);
        assert_eq!(slim.resource_version().as_deref(), Some("4711"));

        // Without spec, status or metadata fields, as the full decode.
        for trimmed in [
            json!({"metadata": {"name": "a", "namespace": "b"}}),
            json!({"metadata": {"name": "a", "namespace": "b"}, "spec": {"containers": []},
                   "status": {}}),
            json!({"metadata": {"name": "a"}, "spec": {"containers": []}}),
        ] {
            let full: Pod = serde_json::from_value(trimmed.clone()).unwrap();
            let slim: WatchedPod = serde_json::from_value(trimmed).unwrap();
            assert_eq!(convert(&slim.0), convert(&full));
        }
    }

    #[test]
    fn slim_pods_and_workloads_name_their_resource() {
        assert_eq!(WatchedPod::url_path(&(), None), Pod::url_path(&(), None));
        assert_eq!(
            WatchedWorkload::<StatefulSet>::url_path(&(), Some("a")),
            StatefulSet::url_path(&(), Some("a"))
        );
        assert_eq!(
            WatchedAutoscaler::url_path(&(), None),
            EffectiveHorizontalPodAutoscaler::url_path(&(), None)
        );
    }

    fn workload_json(kind: &str, status_replicas: Option<i32>) -> serde_json::Value {
        let mut w = json!({
            "apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "9",
                         "generation": 4, "labels": {"app": "web"},
                         "annotations": {"deployment.kubernetes.io/revision": "3"},
                         "managedFields": managed_fields()},
            "spec": {
                "replicas": 3,
                "serviceName": "web",
                "selector": {"matchLabels": {"app": "web"},
                             "matchExpressions": [{"key": "tier", "operator": "In",
                                                   "values": ["b", "a"]}]},
                "template": {"metadata": {"labels": {"app": "web", "tier": "a"}},
                             "spec": {"containers": [{"name": "web", "image": "web:1"}]}}
            },
            "status": {"observedGeneration": 4, "readyReplicas": 2}
        });
        if let Some(r) = status_replicas {
            w["status"]["replicas"] = json!(r);
        }
        w
    }

    /// What the workload cache keeps of an object: its namespace, name and scale.
    type Kept = (Option<String>, Option<String>, Scale);

    /// What the cache keeps of a workload, from the full type and from the slim one.
    fn both<K: ScalableWorkload>(json: serde_json::Value) -> (Kept, Kept) {
        let full: K = serde_json::from_value(json.clone()).unwrap();
        let slim: WatchedWorkload<K> = serde_json::from_value(json).unwrap();
        assert_eq!(slim.metadata.managed_fields, None);
        let key = |m: &ObjectMeta| (m.namespace.clone(), m.name.clone());
        let (fk, sk) = (key(full.meta()), key(slim.meta()));
        ((fk.0, fk.1, scale_of(&full)), (sk.0, sk.1, scale_of(&slim)))
    }

    #[test]
    fn a_slim_workload_has_the_scale_of_the_full_one() {
        for replicas in [Some(2), Some(0)] {
            let (full, slim) = both::<Deployment>(workload_json("Deployment", replicas));
            assert_eq!(slim, full);
            assert_eq!(slim.2.selector, "app=web,tier in (a,b)");
            let (full, slim) = both::<StatefulSet>(workload_json("StatefulSet", replicas));
            assert_eq!(slim, full);
            let (full, slim) = both::<ReplicaSet>(workload_json("ReplicaSet", replicas));
            assert_eq!(slim, full);
        }
        // A Deployment's status.replicas is omitted at zero; spec.replicas defaults to 1.
        let mut w = workload_json("Deployment", None);
        w["spec"].as_object_mut().unwrap().remove("replicas");
        let (full, slim) = both::<Deployment>(w);
        assert_eq!(slim, full);
        assert_eq!((slim.2.spec_replicas, slim.2.status_replicas), (1, 0));
    }

    #[test]
    fn a_slim_autoscaler_is_the_full_one_without_managed_fields() {
        let json = json!({
            "apiVersion": "autoscaling.foresight.dev/v1alpha1",
            "kind": "EffectiveHorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop", "generation": 2,
                         "resourceVersion": "7", "uid": "u-1",
                         "creationTimestamp": "2026-01-01T00:00:00Z",
                         "annotations": {"autoscaling.foresight.dev/paused": "true"},
                         "managedFields": managed_fields()},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "web"},
                     "minReplicas": 2, "maxReplicas": 10},
            "status": {"currentReplicas": 3, "desiredReplicas": 4}
        });
        let mut full: EffectiveHorizontalPodAutoscaler =
            serde_json::from_value(json.clone()).unwrap();
        let slim: WatchedAutoscaler = serde_json::from_value(json).unwrap();
        assert!(full.metadata.managed_fields.is_some() && full.status.is_some());
        full.metadata.managed_fields = None;
        assert_eq!(slim.0, full);
        // Without status, as the full decode.
        let json = json!({"metadata": {"name": "web"},
                          "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
                                   "maxReplicas": 1}});
        let full: EffectiveHorizontalPodAutoscaler = serde_json::from_value(json.clone()).unwrap();
        let slim: WatchedAutoscaler = serde_json::from_value(json).unwrap();
        assert_eq!(slim.0, full);
    }
}
