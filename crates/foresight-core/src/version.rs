//! The Kubernetes release whose HPA the decision reproduces.
//!
//! Foresight decides as the horizontal pod autoscaler of one Kubernetes minor release, 1.28 to
//! 1.37. The releases differ in a handful of places (docs/kubernetes-versions.md lists them, with
//! the release each arrived in); the decision asks the version at each of those places through
//! the methods below, so there is one code path and the differences are named once.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A Kubernetes minor release, 1.28 to 1.37.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubernetesVersion {
    minor: u8,
}

/// Why a version string was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not `1.N`, `v1.N` or `v1.N.P` (with an optional `-…`/`+…` build suffix).
    #[error(
        "{0:?} is not a Kubernetes version: expected 1.N or v1.N.P, for example 1.37 or v1.37.2"
    )]
    Malformed(String),
    /// A version Foresight does not reproduce.
    #[error(
        "Kubernetes {major}.{minor} is not supported: Foresight decides as the HPA of Kubernetes {oldest} to {newest}"
    )]
    OutOfRange {
        /// The major number given.
        major: u64,
        /// The minor number given.
        minor: u64,
        /// The oldest supported release.
        oldest: KubernetesVersion,
        /// The newest supported release.
        newest: KubernetesVersion,
    },
}

impl KubernetesVersion {
    /// Kubernetes 1.28, the release of the original conformance corpus (v1.28.4).
    pub const V1_28: Self = KubernetesVersion { minor: 28 };
    /// Kubernetes 1.33: the tolerance test `1 − down ≤ ratio ≤ 1 + up` (KEP-4951).
    pub const V1_33: Self = KubernetesVersion { minor: 33 };
    /// Kubernetes 1.34: pod-level resource requests on by default (KEP-2837 beta).
    pub const V1_34: Self = KubernetesVersion { minor: 34 };
    /// Kubernetes 1.37: HPAScaleToZero and HPAGeneration on by default.
    pub const V1_37: Self = KubernetesVersion { minor: 37 };
    /// The oldest release reproduced.
    pub const OLDEST: Self = Self::V1_28;
    /// The newest release reproduced, and the default.
    pub const NEWEST: Self = Self::V1_37;

    /// Release `1.minor`, when it is within the supported range.
    pub fn new(minor: u64) -> Result<Self, VersionError> {
        Self::from_parts(1, minor)
    }

    fn from_parts(major: u64, minor: u64) -> Result<Self, VersionError> {
        let out_of_range = || VersionError::OutOfRange {
            major,
            minor,
            oldest: Self::OLDEST,
            newest: Self::NEWEST,
        };
        if major != 1 {
            return Err(out_of_range());
        }
        let minor = u8::try_from(minor).map_err(|_| out_of_range())?;
        let version = KubernetesVersion { minor };
        if version < Self::OLDEST || version > Self::NEWEST {
            return Err(out_of_range());
        }
        Ok(version)
    }

    /// The minor number (28 for Kubernetes 1.28).
    pub fn minor(self) -> u8 {
        self.minor
    }

    /// Every supported release, oldest first.
    pub fn all() -> impl Iterator<Item = KubernetesVersion> {
        (Self::OLDEST.minor..=Self::NEWEST.minor).map(|minor| KubernetesVersion { minor })
    }

    /// The nearest supported release to a server's version: a newer server is decided for as
    /// the newest release Foresight knows, an older one as the oldest; the flag says whether
    /// the release itself is supported. `None` when the string is not a 1.x release at all
    /// (a development build reports `v0.0.0-master+…`). For the version an API server reports, where refusing to start
    /// would help nobody; a version the user types is parsed strictly ([`FromStr`]).
    pub fn nearest(text: &str) -> Option<(KubernetesVersion, bool)> {
        match text.parse::<KubernetesVersion>() {
            Ok(v) => Some((v, true)),
            Err(VersionError::OutOfRange { major, .. }) if major != 1 => None,
            Err(VersionError::OutOfRange { minor, .. }) => {
                if minor > u64::from(Self::NEWEST.minor) {
                    Some((Self::NEWEST, false))
                } else {
                    Some((Self::OLDEST, false))
                }
            }
            Err(VersionError::Malformed(_)) => None,
        }
    }

    // The places the releases differ. Each says what the newer releases do.

    /// v1.33+: the dead band is `1 − down ≤ ratio ≤ 1 + up` (`Tolerances.isWithin`); before,
    /// `|1 − ratio| ≤ tolerance`. The two disagree in the last bit at the edge: at a ratio of
    /// exactly 1.1 with tolerance 0.1, `|1 − 1.1|` is 0.10000000000000009 (outside) while
    /// `1.1 ≤ 1 + 0.1` holds (inside).
    pub fn tolerance_bounds(self) -> bool {
        self >= Self::V1_33
    }

    /// v1.35+ (HPAConfigurableTolerance beta, on by default): `behavior.scaleUp/scaleDown.
    /// tolerance` is honoured. Foresight honours its per-direction tolerance at every release
    /// (it is Foresight's field); this says whether the native HPA would, for the docs and
    /// the parity suite.
    pub fn native_per_direction_tolerance(self) -> bool {
        self.minor >= 35
    }

    /// v1.29+: restartable init containers (sidecars, `restartPolicy: Always`) count in a
    /// pod's request, after its containers.
    pub fn sidecars_in_requests(self) -> bool {
        self.minor >= 29
    }

    /// v1.29+: when no metric can be computed (or the scale update fails), status'
    /// `currentMetrics` is what this reconcile measured (failed metrics as empty entries)
    /// rather than the previous reconcile's.
    pub fn metrics_in_status_on_failure(self) -> bool {
        self.minor >= 29
    }

    /// v1.33+: a pod whose metrics lack a ContainerResource metric's container is a pod
    /// without metrics (missing) rather than an error for the whole metric.
    pub fn container_missing_from_metrics_is_a_missing_pod(self) -> bool {
        self >= Self::V1_33
    }

    /// v1.34+ (PodLevelResources beta, on by default): a pod with pod-level requests is
    /// measured against them when the metric names no container.
    pub fn pod_level_requests(self) -> bool {
        self >= Self::V1_34
    }

    /// v1.34+: a memory value in status is formatted in binary units (`Mi`, `Gi`), as
    /// metrics-server reports it, instead of decimal ones.
    pub fn memory_status_in_binary_units(self) -> bool {
        self >= Self::V1_34
    }

    /// v1.35+: a ContainerResource metric whose container is missing from a pod's spec is an
    /// error (`container C not found in Pod P`); before, that pod requested nothing.
    pub fn named_container_checked_in_spec(self) -> bool {
        self.minor >= 35
    }

    /// v1.37+ (HPAScaleToZero beta, on by default): the `ScaledToZero` condition; at zero
    /// replicas metrics are computed only after the autoscaler scaled there itself, and a
    /// scale-from-zero is raised to `minReplicas`.
    pub fn scale_to_zero(self) -> bool {
        self >= Self::V1_37
    }

    /// v1.36+: at zero replicas the controller asks `shouldComputeMetricsForZeroReplicas`,
    /// which scales from the metrics only after the autoscaler scaled to zero itself (so
    /// never with HPAScaleToZero off, as in 1.36); 1.28–1.35 scale from the metrics whenever
    /// `minReplicas` is 0.
    pub fn zero_replicas_need_scaled_to_zero(self) -> bool {
        self.minor >= 36
    }

    /// v1.36 only: the scale-to-zero code is there with its gate off, and it removes a
    /// `ScaledToZero` condition on every rescale and whenever scaling is disabled (1.28–1.35
    /// leave a condition they do not know alone).
    pub fn clears_scaled_to_zero(self) -> bool {
        self.zero_replicas_need_scaled_to_zero() && !self.scale_to_zero()
    }

    /// v1.37+ (HPAGeneration beta, on by default): `status.observedGeneration`.
    pub fn observed_generation(self) -> bool {
        self >= Self::V1_37
    }

    /// v1.37+: error texts reworded: an Object metric's fetch error reads `unable to get
    /// metric M on Kind ns/name: …` (was `unable to get metric M: … on Kind ns/name`), and
    /// pods under two autoscalers are `controlled by more than one HPA (e.g. …)` (was
    /// `controlled by multiple HPAs: …`).
    pub fn reworded_errors(self) -> bool {
        self >= Self::V1_37
    }
}

impl Default for KubernetesVersion {
    fn default() -> Self {
        Self::NEWEST
    }
}

impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor)
    }
}

impl FromStr for KubernetesVersion {
    type Err = VersionError;

    /// `1.37`, `v1.37`, `1.37.2`, `v1.37.2`, and a server's `gitVersion` such as
    /// `v1.37.2-gke.1100` or `v1.37.2+k3s1` (the build suffix is ignored).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let malformed = || VersionError::Malformed(text.to_owned());
        let trimmed = text.trim();
        let bare = trimmed.strip_prefix('v').unwrap_or(trimmed);
        let release = bare.split(['-', '+']).next().unwrap_or_default();
        let mut parts = release.split('.');
        let mut number = || -> Result<Option<u64>, VersionError> {
            match parts.next() {
                None => Ok(None),
                Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                    p.parse().map(Some).map_err(|_| malformed())
                }
                Some(_) => Err(malformed()),
            }
        };
        let (Some(major), Some(minor)) = (number()?, number()?) else {
            return Err(malformed());
        };
        let _patch = number()?;
        if number()?.is_some() {
            return Err(malformed());
        }
        Self::from_parts(major, minor)
    }
}

impl Serialize for KubernetesVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for KubernetesVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_and_server_strings_parse_to_their_minor() {
        for (text, minor) in [
            ("1.28", 28),
            ("v1.28", 28),
            ("1.37", 37),
            ("v1.37.2", 37),
            ("1.33.0", 33),
            ("v1.35.1-gke.1100", 35),
            ("v1.30.4+k3s1", 30),
            (" 1.31 ", 31),
        ] {
            assert_eq!(
                text.parse::<KubernetesVersion>().unwrap().minor(),
                minor,
                "{text}"
            );
        }
    }

    #[test]
    fn a_version_outside_the_range_says_which_range_is_supported() {
        for text in ["1.27", "v1.38.0", "2.0", "0.28"] {
            let err = text.parse::<KubernetesVersion>().unwrap_err().to_string();
            assert!(
                err.contains("is not supported") && err.contains("1.28 to 1.37"),
                "{text}: {err}"
            );
        }
        assert_eq!(
            "v1.27.3".parse::<KubernetesVersion>().unwrap_err().to_string(),
            "Kubernetes 1.27 is not supported: Foresight decides as the HPA of Kubernetes 1.28 to 1.37"
        );
    }

    #[test]
    fn text_that_is_not_a_version_is_malformed() {
        for text in [
            "",
            "1",
            "v",
            "latest",
            "1.x",
            "1.37.2.1",
            "1..2",
            "v-1.30",
            "1.300000000000000000000",
        ] {
            let err = text.parse::<KubernetesVersion>().unwrap_err();
            assert!(
                matches!(
                    err,
                    VersionError::Malformed(_) | VersionError::OutOfRange { .. }
                ),
                "{text}"
            );
            assert!(text.parse::<KubernetesVersion>().is_err(), "{text}");
        }
        assert!(matches!(
            "latest".parse::<KubernetesVersion>(),
            Err(VersionError::Malformed(_))
        ));
    }

    #[test]
    fn a_server_outside_the_range_is_decided_for_as_the_nearest_release() {
        assert_eq!(
            KubernetesVersion::nearest("v1.39.0"),
            Some((KubernetesVersion::NEWEST, false))
        );
        assert_eq!(
            KubernetesVersion::nearest("v1.26.1"),
            Some((KubernetesVersion::OLDEST, false))
        );
        assert_eq!(
            KubernetesVersion::nearest("v1.34.2"),
            Some((KubernetesVersion::new(34).unwrap(), true))
        );
        assert_eq!(KubernetesVersion::nearest("nonsense"), None);
        assert_eq!(
            KubernetesVersion::nearest("v0.0.0-master+$Format:%H$"),
            None
        );
        assert_eq!(KubernetesVersion::nearest("v2.0.0"), None);
    }

    #[test]
    fn the_default_is_the_newest_and_every_release_is_listed() {
        assert_eq!(KubernetesVersion::default(), KubernetesVersion::V1_37);
        let all: Vec<String> = KubernetesVersion::all().map(|v| v.to_string()).collect();
        assert_eq!(all.len(), 10);
        assert_eq!(all.first().map(String::as_str), Some("1.28"));
        assert_eq!(all.last().map(String::as_str), Some("1.37"));
    }

    #[test]
    fn serde_round_trips_the_short_form() {
        let v: KubernetesVersion = serde_json::from_str("\"v1.33.1\"").unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"1.33\"");
        assert!(serde_json::from_str::<KubernetesVersion>("\"1.99\"").is_err());
    }
}
