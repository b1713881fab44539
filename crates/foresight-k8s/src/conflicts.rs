//! Two autoscalers on one workload: each reconcile registers its target here and learns
//! which other autoscalers target the same workload, so that both report it
//! (`ScalingActive=False`, `AmbiguousSelector`) instead of fighting over the replica count.
//!
//! The index is filled by reconciles, so after a start every autoscaler is known once each
//! has synced (one sync period). Entries of deleted or re-targeted autoscalers are pruned
//! lazily, by checking the other autoscaler's current spec whenever it would be reported.

use std::collections::{BTreeSet, HashMap};

use parking_lot::Mutex;

use foresight_api::hpa::CrossVersionObjectReference;

use crate::autoscaler_key::{AutoscalerKey, PerAutoscaler};

/// A workload, independent of the API version it is addressed with.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetKey {
    /// Namespace.
    pub namespace: String,
    /// API group (`apps`; empty for the core group).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
}

impl TargetKey {
    /// The workload `target` names in `namespace`.
    pub fn new(namespace: &str, target: &CrossVersionObjectReference) -> Self {
        let group = match target.api_version.as_deref() {
            Some(v) => v.split_once('/').map(|(g, _)| g).unwrap_or("").to_owned(),
            // Only the apps workloads may omit it (see `ScaleClient::gvk`).
            None => "apps".to_owned(),
        };
        TargetKey {
            namespace: namespace.to_owned(),
            group,
            kind: target.kind.clone(),
            name: target.name.clone(),
        }
    }
}

/// Which autoscalers target which workload.
#[derive(Debug, Default)]
pub struct TargetIndex {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// The names of the autoscalers targeting each workload (all in its namespace).
    by_target: HashMap<TargetKey, BTreeSet<String>>,
    by_autoscaler: HashMap<AutoscalerKey, TargetKey>,
}

impl Inner {
    fn unlink(&mut self, autoscaler: &AutoscalerKey, target: &TargetKey) {
        if let Some(set) = self.by_target.get_mut(target) {
            set.remove(&autoscaler.name);
            if set.is_empty() {
                self.by_target.remove(target);
            }
        }
    }
}

impl TargetIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that autoscaler `me` targets `key` (in its own namespace), and returns the
    /// other autoscalers (`namespace/name`) that target it, in name order.
    /// `still_targets(other)` says whether another autoscaler (by name) still exists and
    /// still targets `key`; those that do not are dropped.
    pub fn register(
        &self,
        me: &AutoscalerKey,
        key: &TargetKey,
        still_targets: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let mut inner = self.inner.lock();
        if let Some(old) = inner.by_autoscaler.insert(me.clone(), key.clone()) {
            if &old != key {
                inner.unlink(me, &old);
            }
        }
        let set = inner.by_target.entry(key.clone()).or_default();
        set.insert(me.name.clone());
        let stale: Vec<String> = set
            .iter()
            .filter(|o| **o != me.name && !still_targets(o))
            .cloned()
            .collect();
        for s in &stale {
            set.remove(s);
        }
        let others: Vec<String> = set
            .iter()
            .filter(|o| **o != me.name)
            .map(|o| format!("{}/{o}", key.namespace))
            .collect();
        for s in stale {
            inner
                .by_autoscaler
                .remove(&AutoscalerKey::new(&*key.namespace, s));
        }
        others
    }
}

impl PerAutoscaler for TargetIndex {
    fn forget(&self, autoscaler: &AutoscalerKey) {
        let mut inner = self.inner.lock();
        if let Some(target) = inner.by_autoscaler.remove(autoscaler) {
            inner.unlink(autoscaler, &target);
        }
    }

    fn retain(&self, keep: &dyn Fn(&AutoscalerKey) -> bool) {
        let mut inner = self.inner.lock();
        let gone: Vec<(AutoscalerKey, TargetKey)> = inner
            .by_autoscaler
            .iter()
            .filter(|(a, _)| !keep(a))
            .map(|(a, t)| (a.clone(), t.clone()))
            .collect();
        for (autoscaler, target) in gone {
            inner.by_autoscaler.remove(&autoscaler);
            inner.unlink(&autoscaler, &target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> TargetKey {
        TargetKey::new(
            "ns",
            &CrossVersionObjectReference {
                api_version: Some("apps/v1".into()),
                kind: "Deployment".into(),
                name: name.into(),
            },
        )
    }

    fn me(name: &str) -> AutoscalerKey {
        AutoscalerKey::new("ns", name)
    }

    #[test]
    fn both_autoscalers_see_each_other() {
        let idx = TargetIndex::new();
        assert!(idx.register(&me("a"), &key("web"), |_| true).is_empty());
        assert_eq!(idx.register(&me("b"), &key("web"), |_| true), ["ns/a"]);
        assert_eq!(idx.register(&me("a"), &key("web"), |_| true), ["ns/b"]);
    }

    #[test]
    fn stale_entries_are_pruned() {
        let idx = TargetIndex::new();
        idx.register(&me("a"), &key("web"), |_| true);
        // a is gone (deleted, or re-targeted in a spec not yet reconciled): not reported.
        assert!(idx.register(&me("b"), &key("web"), |_| false).is_empty());
        // a reconciles with a new target and leaves web's set.
        idx.register(&me("a"), &key("api"), |_| true);
        assert_eq!(idx.register(&me("c"), &key("web"), |_| true), ["ns/b"]);
        idx.forget(&me("b"));
        assert_eq!(idx.register(&me("d"), &key("web"), |_| true), ["ns/c"]);
        // After a full list that shows only d, c is forgotten too.
        idx.retain(&|a| a.name == "d");
        assert!(idx.register(&me("d"), &key("web"), |_| true).is_empty());
    }

    #[test]
    fn api_versions_of_one_group_are_one_workload() {
        let v1 = TargetKey::new(
            "ns",
            &CrossVersionObjectReference {
                api_version: Some("apps/v1".into()),
                kind: "Deployment".into(),
                name: "web".into(),
            },
        );
        let none = TargetKey::new(
            "ns",
            &CrossVersionObjectReference {
                api_version: None,
                kind: "Deployment".into(),
                name: "web".into(),
            },
        );
        assert_eq!(v1, none);
    }
}
