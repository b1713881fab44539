//! What the controller holds per pod, counted by the allocator: the pods of `cluster_scale`
//! (one Deployment per autoscaler, 50 in a namespace, its pods named and labelled as
//! kube-controller-manager names and labels them, one container with a CPU and a memory
//! request), first one pod per ReplicaSet (the steady state), then three (the load step).
//!
//! - The pod cache: what a pod costs, and that the pods' shared shapes go when their pods do.
//! - The PodMetrics lists: each namespace's last list is kept until its next (see
//!   `sources::resource`), so one sample per ready pod of every namespace is held.
//!
//! The counts are the bytes the cache asked the allocator for and still holds, not the RSS
//! (the allocator rounds each request up to its size class). Run with `--nocapture` to see
//! them; `docs/controller.md` carries them.
//!
//! One test in this file, so that no other test allocates while it counts.

use std::collections::BTreeMap;

use foresight_api::selector::Selector;
use foresight_core::metrics::{ContainerUsage, PodResourceSample};
use foresight_core::resources::ResourceList;
use foresight_k8s::pods::PodCache;
use foresight_k8s::sources::resource::{LabeledSample, Samples};
use k8s_openapi::api::core::v1::{
    Container, Pod, PodCondition, PodSpec, PodStatus, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

mod counting;
use counting::live;

const AUTOSCALERS: usize = 10_000;
const PER_NAMESPACE: usize = 50;

/// Pod `k` of autoscaler `i`'s Deployment, as the API server lists it (less what the watch
/// does not decode).
fn pod(i: usize, k: usize) -> Pod {
    let time = |s: &str| Time(s.parse().unwrap());
    Pod {
        metadata: ObjectMeta {
            namespace: Some(format!("scale-{}", i / PER_NAMESPACE)),
            name: Some(pod_name(i, k)),
            labels: Some(labels(i)),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                resources: Some(ResourceRequirements {
                    requests: Some(BTreeMap::from([
                        ("cpu".to_owned(), Quantity("100m".into())),
                        ("memory".to_owned(), Quantity("16Mi".into())),
                    ])),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            start_time: Some(time("2026-11-28T04:00:00Z")),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(time("2026-11-28T04:00:05Z")),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

/// Its Deployment's labels: `app` and the ReplicaSet's `pod-template-hash`.
fn labels(i: usize) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app".to_owned(), format!("app-{i}")),
        ("pod-template-hash".to_owned(), hash(i)),
    ])
}

/// A pod-template-hash: up to 10 characters.
fn hash(i: usize) -> String {
    format!(
        "{:010x}",
        (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 24
    )[..10]
        .to_owned()
}

/// A generated name: the ReplicaSet's and 5 characters.
fn pod_name(i: usize, k: usize) -> String {
    format!("app-{i}-{}-{:05x}", hash(i), k * 7919 + i)
}

/// Pod `k` of autoscaler `i` as a PodMetrics list item converts: the pod's labels, its
/// container's usage.
fn sample(i: usize, k: usize) -> LabeledSample {
    let mut usage = ResourceList::default();
    usage.set("cpu", 50);
    usage.set("memory", 16 << 20);
    LabeledSample {
        labels: labels(i),
        sample: PodResourceSample {
            pod: pod_name(i, k),
            timestamp: "2026-11-28T04:00:00Z".parse().unwrap(),
            window: jiff::SignedDuration::from_secs(30),
            containers: vec![ContainerUsage {
                name: "app".into(),
                usage,
            }],
        },
    }
}

/// Every namespace's PodMetrics list with `pods` pods per autoscaler, as the batch keeps
/// them.
fn pod_metrics(pods: usize) -> Vec<Samples> {
    (0..AUTOSCALERS / PER_NAMESPACE)
        .map(|n| {
            let items = (n * PER_NAMESPACE..(n + 1) * PER_NAMESPACE)
                .flat_map(|i| (0..pods).map(move |k| sample(i, k)))
                .collect();
            Samples::new(items)
        })
        .collect()
}

/// The bytes `f` leaves allocated, per `n`.
fn per(n: usize, f: impl FnOnce()) -> f64 {
    let before = live();
    f();
    (live() - before) as f64 / n as f64
}

#[test]
fn bytes_per_pod() {
    let cache = PodCache::new();
    let base = live();
    let steady = per(AUTOSCALERS, || {
        for i in 0..AUTOSCALERS {
            cache.apply(&pod(i, 0));
        }
    });
    let step = per(2 * AUTOSCALERS, || {
        for i in 0..AUTOSCALERS {
            cache.apply(&pod(i, 1));
            cache.apply(&pod(i, 2));
        }
    });
    let held = live();
    // Each autoscaler's selection sees its three pods.
    for i in (0..AUTOSCALERS).step_by(997) {
        let selector = Selector::parse(&format!("app=app-{i}")).unwrap();
        let pods = cache.select(&format!("scale-{}", i / PER_NAMESPACE), &selector);
        assert_eq!(pods.len(), 3);
    }
    assert_eq!(live(), held, "selecting holds nothing");
    for i in 0..AUTOSCALERS {
        for k in 0..3 {
            cache.delete(&pod(i, k));
        }
    }
    let left = live() - base;
    eprintln!(
        "pod cache, {AUTOSCALERS} ReplicaSets: {steady:.0} bytes a pod with one pod each, \
         {step:.0} bytes a pod for two more each ({:.1} MiB for all {}), {left} bytes left \
         after deleting every pod",
        (held - base) as f64 / (1 << 20) as f64,
        3 * AUTOSCALERS,
    );
    // Measured at 655 and 271 bytes (2,007 and 1,248 when every pod kept its own labels,
    // requests and copies of its name); the bounds leave room for other platforms' layouts.
    assert!(steady < 1000.0, "{steady:.0} bytes a pod");
    assert!(
        step < 400.0,
        "{step:.0} bytes for each further pod of a ReplicaSet"
    );
    assert!(cache.is_empty());
    assert!(
        (left as f64) < 0.01 * (held - base) as f64,
        "the emptied cache still holds {left} bytes"
    );

    // The PodMetrics lists: made and held, as the batch holds the last of each namespace.
    let mut held = Vec::new();
    let one = per(AUTOSCALERS, || held = pod_metrics(1));
    drop(held);
    let mut held = Vec::new();
    let three = per(3 * AUTOSCALERS, || held = pod_metrics(3));
    let selector = Selector::parse("app=app-42").unwrap();
    let web: Vec<String> = held[0]
        .select(&selector)
        .into_iter()
        .map(|s| s.pod)
        .collect();
    assert_eq!(web, (0..3).map(|k| pod_name(42, k)).collect::<Vec<_>>());
    eprintln!(
        "PodMetrics lists, {AUTOSCALERS} ReplicaSets: {one:.0} bytes a sample with one pod \
         each, {three:.0} bytes a sample with three pods each ({:.1} MiB for all {})",
        three * 3.0 * AUTOSCALERS as f64 / (1 << 20) as f64,
        3 * AUTOSCALERS,
    );
}
