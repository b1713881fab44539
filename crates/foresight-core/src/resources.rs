//! Resource names and quantities. CPU and memory, which nearly every decision looks up, have
//! their own slots so that the per-pod loops compare integers, not strings.

use std::fmt;

/// A resource name, e.g. `cpu`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResourceName {
    /// `cpu`.
    Cpu,
    /// `memory`.
    Memory,
    /// Any other resource (`ephemeral-storage`, `nvidia.com/gpu`, ...).
    Other(String),
}

impl ResourceName {
    /// The name as Kubernetes writes it.
    pub fn as_str(&self) -> &str {
        match self {
            ResourceName::Cpu => "cpu",
            ResourceName::Memory => "memory",
            ResourceName::Other(s) => s,
        }
    }

    /// Whether pod-level resources (`spec.resources`) can set it: cpu, memory and hugepages,
    /// as Kubernetes' `IsSupportedPodLevelResource`.
    pub fn supported_at_pod_level(&self) -> bool {
        match self {
            ResourceName::Cpu | ResourceName::Memory => true,
            ResourceName::Other(s) => s.starts_with("hugepages-"),
        }
    }
}

impl From<&str> for ResourceName {
    fn from(s: &str) -> Self {
        match s {
            "cpu" => ResourceName::Cpu,
            "memory" => ResourceName::Memory,
            other => ResourceName::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ResourceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Quantities by resource, in thousandths (a container's requests or usage).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceList {
    /// `cpu`.
    pub cpu: Option<i64>,
    /// `memory`.
    pub memory: Option<i64>,
    /// Every other resource.
    pub other: Vec<(String, i64)>,
}

impl ResourceList {
    /// The quantity of `name`, if listed.
    #[inline(always)]
    pub fn get(&self, name: &ResourceName) -> Option<i64> {
        match name {
            ResourceName::Cpu => self.cpu,
            ResourceName::Memory => self.memory,
            ResourceName::Other(n) => self.other.iter().find(|(k, _)| k == n).map(|(_, v)| *v),
        }
    }

    /// Sets the quantity of `name`.
    pub fn set(&mut self, name: &str, milli: i64) {
        match ResourceName::from(name) {
            ResourceName::Cpu => self.cpu = Some(milli),
            ResourceName::Memory => self.memory = Some(milli),
            ResourceName::Other(n) => match self.other.iter_mut().find(|(k, _)| *k == n) {
                Some(entry) => entry.1 = milli,
                None => self.other.push((n, milli)),
            },
        }
    }

    /// Whether it sets a resource pod-level resources support (Kubernetes'
    /// `IsPodLevelRequestsSet`, for a pod's `spec.resources.requests`).
    pub fn sets_pod_level(&self) -> bool {
        self.cpu.is_some()
            || self.memory.is_some()
            || self.other.iter().any(|(k, _)| k.starts_with("hugepages-"))
    }

    /// A list of CPU only.
    pub fn cpu(milli: i64) -> Self {
        ResourceList {
            cpu: Some(milli),
            ..Default::default()
        }
    }
}

impl<S: AsRef<str>> FromIterator<(S, i64)> for ResourceList {
    fn from_iter<I: IntoIterator<Item = (S, i64)>>(iter: I) -> Self {
        let mut list = ResourceList::default();
        for (name, v) in iter {
            list.set(name.as_ref(), v);
        }
        list
    }
}
