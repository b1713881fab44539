//! Foresight's API: the EffectiveHorizontalPodAutoscaler spec and status, the autoscaling/v2
//! shapes they reuse, defaulting, and validation with field paths.
//!
//! With the `kube` feature, the resource itself, `EffectiveHorizontalPodAutoscaler`, is
//! derived from the spec (`#[derive(kube::CustomResource)]`), with its CRD; without it this
//! crate depends on no Kubernetes crate, which keeps the decision core free of them.

// No unsafe code here, ever; unwrap and expect only in tests (a panic in the controller
// is an outage, in the core a wrong answer).
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod cron;
pub mod defaults;
pub mod duration;
pub mod fallback;
pub mod formula;
pub mod hpa;
pub mod idle;
pub mod import;
pub mod keda;
pub mod manifest;
pub mod objective;
pub mod pause;
pub mod prediction;
pub mod quantity;
pub mod schedule;
pub mod schema;
pub mod selector;
pub mod spec;
pub mod status;
pub mod unknown_fields;
pub mod validation;
pub mod warnings;

pub use quantity::Quantity;
#[cfg(feature = "kube")]
pub use spec::EffectiveHorizontalPodAutoscaler;
pub use spec::EffectiveHorizontalPodAutoscalerSpec;
pub use status::EffectiveHorizontalPodAutoscalerStatus;
