//! Which autoscaler: the one key every per-autoscaler store files its entries under, and the
//! one way they all forget an autoscaler.

use std::fmt;

use foresight_api::EffectiveHorizontalPodAutoscaler;
use foresight_core::autoscaler::Autoscaler;

/// An autoscaler's namespace and name. Shown as `namespace/name`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AutoscalerKey {
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl AutoscalerKey {
    /// The key of `name` in `namespace`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        AutoscalerKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The key of an object as the API server returned it (`None` without a namespace or
    /// a name, which no stored object lacks).
    pub fn of_object(obj: &EffectiveHorizontalPodAutoscaler) -> Option<Self> {
        Some(AutoscalerKey::new(
            obj.metadata.namespace.as_deref()?,
            obj.metadata.name.as_deref()?,
        ))
    }

    /// The key of a compiled autoscaler.
    pub fn of(autoscaler: &Autoscaler) -> Self {
        AutoscalerKey::new(&*autoscaler.namespace, &*autoscaler.name)
    }
}

impl fmt::Display for AutoscalerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A store that keeps something per autoscaler. The controller forgets a deleted autoscaler,
/// or every autoscaler a full list no longer shows, through this trait alone, so a store that
/// implements it cannot be missed (see `ReconcileContext::stores`).
pub trait PerAutoscaler {
    /// Forgets one autoscaler (it was deleted).
    fn forget(&self, key: &AutoscalerKey);

    /// Forgets every autoscaler `keep` refuses (deleted while no watch ran).
    fn retain(&self, keep: &dyn Fn(&AutoscalerKey) -> bool);
}
