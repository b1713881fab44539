//! Two autoscalers on one workload: each reconcile registers its target here and learns
//! which other autoscalers target the same workload, so that both report it
//! (`ScalingActive=False`, `AmbiguousSelector`) instead of fighting over the replica count.
//!
//! The index is filled by reconciles, so after a start every autoscaler is known once each
//! has synced (one sync period). Entries of deleted or re-targeted autoscalers are pruned
//! lazily, by checking the other autoscaler's current spec whenever it would be reported.

use parking_lot::Mutex;
use std::collections::{BTreeSet, HashMap};

use foresight_api::hpa::CrossVersionObjectReference;

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
    by_target: HashMap<TargetKey, BTreeSet<String>>,
    by_autoscaler: HashMap<(String, String), TargetKey>,
}

impl TargetIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that autoscaler `name` targets `key`, and returns the other autoscalers
    /// (`namespace/name`) that target it, in name order. `still_targets(other)` says whether
    /// another autoscaler still exists and still targets `key`; those that do not are
    /// dropped.
    pub fn register(
        &self,
        name: &str,
        key: &TargetKey,
        still_targets: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let mut inner = self.inner.lock();
        let me = (key.namespace.clone(), name.to_owned());
        if let Some(old) = inner.by_autoscaler.insert(me, key.clone()) {
            if &old != key {
                if let Some(set) = inner.by_target.get_mut(&old) {
                    set.remove(name);
                }
            }
        }
        let set = inner.by_target.entry(key.clone()).or_default();
        set.insert(name.to_owned());
        let stale: Vec<String> = set
            .iter()
            .filter(|o| o.as_str() != name && !still_targets(o))
            .cloned()
            .collect();
        for s in &stale {
            set.remove(s);
        }
        let others: Vec<String> = set
            .iter()
            .filter(|o| o.as_str() != name)
            .map(|o| format!("{}/{o}", key.namespace))
            .collect();
        for s in stale {
            inner.by_autoscaler.remove(&(key.namespace.clone(), s));
        }
        others
    }

    /// Forgets an autoscaler (it was deleted).
    pub fn forget(&self, namespace: &str, name: &str) {
        let mut inner = self.inner.lock();
        if let Some(key) = inner
            .by_autoscaler
            .remove(&(namespace.to_owned(), name.to_owned()))
        {
            if let Some(set) = inner.by_target.get_mut(&key) {
                set.remove(name);
                if set.is_empty() {
                    inner.by_target.remove(&key);
                }
            }
        }
    }

    /// Forgets everything (on a change of leadership).
    pub fn clear(&self) {
        *self.inner.lock() = Inner::default();
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

    #[test]
    fn both_autoscalers_see_each_other() {
        let idx = TargetIndex::new();
        assert!(idx.register("a", &key("web"), |_| true).is_empty());
        assert_eq!(idx.register("b", &key("web"), |_| true), ["ns/a"]);
        assert_eq!(idx.register("a", &key("web"), |_| true), ["ns/b"]);
    }

    #[test]
    fn stale_entries_are_pruned() {
        let idx = TargetIndex::new();
        idx.register("a", &key("web"), |_| true);
        // a is gone (deleted, or re-targeted in a spec not yet reconciled): not reported.
        assert!(idx.register("b", &key("web"), |_| false).is_empty());
        // a reconciles with a new target and leaves web's set.
        idx.register("a", &key("api"), |_| true);
        assert_eq!(idx.register("c", &key("web"), |_| true), ["ns/b"]);
        idx.forget("ns", "b");
        assert_eq!(idx.register("d", &key("web"), |_| true), ["ns/c"]);
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
