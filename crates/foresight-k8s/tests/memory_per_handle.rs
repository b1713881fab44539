//! What the reconcile runner's cache of handles (`foresight_k8s::due`) holds per autoscaler,
//! counted by the allocator, beside what the autoscalers' own cache holds for the same
//! autoscalers: `cluster_faults`' fleet (50 to a namespace), each with the status a
//! Preview autoscaler writes after one decision.
//!
//! The counts are the bytes asked of the allocator and still held, not the RSS. Run with
//! `--nocapture` to see them; `docs/controller.md` carries them. One test in this file, so
//! that no other test allocates while it counts.

use foresight_api::EffectiveHorizontalPodAutoscaler;
use futures::StreamExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;
use serde_json::json;

mod counting;
use counting::live;

const AUTOSCALERS: usize = 10_000;

/// Autoscaler `i` of the bad day's fleet, with the status it has after its first decision.
fn autoscaler(i: usize) -> EffectiveHorizontalPodAutoscaler {
    let time = "2026-11-29T07:39:03.1981474Z";
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({"type": kind, "status": status, "reason": reason, "message": message,
               "lastTransitionTime": time})
    };
    serde_json::from_value(json!({
        "apiVersion": "autoscaling.foresight.dev/v1alpha1",
        "kind": "EffectiveHorizontalPodAutoscaler",
        "metadata": {"name": format!("app-{i}"), "namespace": format!("fleet-{}", i / 50),
                     "uid": format!("0b6f7c1e-0000-4000-8000-{i:012}"),
                     "resourceVersion": format!("{}", 100_000 + i), "generation": 1},
        "spec": {
            "scaleStrategy": "Preview",
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": format!("app-{i}")},
            "minReplicas": 1, "maxReplicas": 20,
            "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 100, "periodSeconds": 15}]}},
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                         "target": {"type": "Utilization", "averageUtilization": 50}}}]
        },
        "status": {
            "conditions": [
                condition("AbleToScale", "True", "ReadyForNewScale",
                          "recommended size 4 differs from current size 1; the Preview strategy does not apply it"),
                condition("ScalingActive", "True", "ValidMetricFound",
                          "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"),
                condition("ScalingLimited", "False", "DesiredWithinRange",
                          "the desired count is within the acceptable range"),
                condition("Ready", "True", "DecisionMade", "the autoscaler decided from its sources")
            ],
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                                "current": {"averageUtilization": 200, "averageValue": "200m"}}}],
            "currentReplicas": 1, "desiredReplicas": 4, "expectReplicas": 4,
            "history": {"recommendations": [{"replicas": 3, "timestamp": time},
                                            {"replicas": 4, "timestamp": time}],
                        "scaleDownEvents": [], "scaleUpEvents": []},
            "lastDecision": {
                "currentReplicas": 1, "desiredReplicas": 4, "limits": [],
                "proposals": [{"current": "200% (200m)", "name": "cpu utilization", "replicas": 4,
                               "source": "metric", "target": "50%"}],
                "recommendation": 4, "rescale": true, "strategy": "Preview",
                "summary": "preview, not applied; would scale 1 -> 4: cpu resource utilization (percentage of request) above target",
                "time": time
            },
            "observedGeneration": 1,
            "targets": "cpu: 200%/50%"
        }
    }))
    .unwrap()
}

/// The first list of every autoscaler, as the watcher gives it.
fn first_list() -> Vec<Event<EffectiveHorizontalPodAutoscaler>> {
    std::iter::once(Event::Init)
        .chain((0..AUTOSCALERS).map(|i| Event::InitApply(autoscaler(i))))
        .chain(std::iter::once(Event::InitDone))
        .collect()
}

#[test]
fn a_handle_costs_a_small_part_of_its_autoscaler() {
    // The autoscalers' cache, filled as kube's reflector fills it.
    let base = live();
    let autoscalers = Writer::<EffectiveHorizontalPodAutoscaler>::default();
    let mut autoscalers_writer = autoscalers;
    let autoscaler_cache = autoscalers_writer.as_reader();
    for event in first_list() {
        autoscalers_writer.apply_watcher_event(&event);
    }
    assert_eq!(autoscaler_cache.state().len(), AUTOSCALERS);
    let autoscaler_bytes = (live() - base) as f64 / AUTOSCALERS as f64;

    // The handles' cache, fed by the same events as the controller feeds it. The events
    // are counted from before they are made: the stream drops each once it has passed.
    let base = live();
    let events = first_list();
    let handles = Writer::default();
    let handle_cache = handles.as_reader();
    let passed = futures::executor::block_on(
        foresight_k8s::due::reflect_handles(
            handles,
            futures::stream::iter(events.into_iter().map(Ok)),
        )
        .count(),
    );
    assert_eq!(passed, AUTOSCALERS + 2);
    assert_eq!(handle_cache.state().len(), AUTOSCALERS);
    let handle_bytes = (live() - base) as f64 / AUTOSCALERS as f64;

    eprintln!(
        "the autoscalers' cache: {autoscaler_bytes:.0} bytes an autoscaler ({:.1} MiB at {AUTOSCALERS}); the handles' cache: {handle_bytes:.0} bytes an autoscaler ({:.1} MiB)",
        autoscaler_bytes * AUTOSCALERS as f64 / 1_048_576.0,
        handle_bytes * AUTOSCALERS as f64 / 1_048_576.0,
    );
    // What a waiting reconcile no longer pins is the first figure; what the handles cost
    // instead must stay a small part of it.
    assert!(
        handle_bytes < autoscaler_bytes / 4.0,
        "a handle costs {handle_bytes:.0} bytes against {autoscaler_bytes:.0} for its autoscaler"
    );
}
