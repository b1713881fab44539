//! What the crate's unit tests share: the autoscaler `web` on a Deployment, written as a
//! manifest the way a user writes one, and a synthetic load.

use foresight_core::autoscaler::Autoscaler;

use crate::load::LoadTrace;
use crate::policy::{policies_from_manifest, Policy};
use crate::synthetic::{generate, SyntheticConfig};

/// The policy `web` on a Deployment, from the rest of its spec (`spec`, YAML at the
/// indentation of `scaleTargetRef`).
pub(crate) fn web_policy(spec: &str) -> Policy {
    let manifest = format!(
        "apiVersion: autoscaling.foresight.dev/v1alpha1
kind: EffectiveHorizontalPodAutoscaler
metadata: {{name: web}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
{spec}"
    );
    policies_from_manifest(&manifest, "web").unwrap().remove(0)
}

/// [`web_policy`], compiled.
pub(crate) fn web(spec: &str) -> Autoscaler {
    web_policy(spec).compile().unwrap()
}

/// `days` of the synthetic generator's load from `seed`, peaking at 12 cores.
pub(crate) fn synthetic(days: u32, seed: u64) -> LoadTrace {
    LoadTrace::new(generate(&SyntheticConfig {
        days,
        seed,
        ..Default::default()
    }))
    .unwrap()
    .scaled_to_peak(12.0)
}
