//! Foresight's Kubernetes controller: the shell that observes the cluster, hands what it saw
//! to the pure decision in `foresight-core`, and acts on the decision.
//!
//! - [`crd`]: the CustomResourceDefinition of the resource `foresight-api` derives
//!   (`foresight_api::EffectiveHorizontalPodAutoscaler`);
//! - [`target`]: reading and writing the target's scale; [`pods`]: the pod cache;
//!   [`labels`]: label sets as the caches keep them;
//!   [`sources`]: the metrics APIs;
//! - [`autoscaler_key`]: the key every per-autoscaler store uses, and the one way they
//!   forget a deleted autoscaler;
//! - [`reconcile`]: one reconcile; [`status`]: when and how status is written; [`events`]:
//!   Kubernetes events; [`conflicts`]: two autoscalers on one workload;
//! - [`client`]: the Kubernetes client and its retry policy; [`leader`]: leader election;
//!   [`controller`]: the running controller; [`slim`]: what the watches decode; [`telemetry`]: `/metrics`, health, logs;
//! - [`prometheus`]: the Prometheus HTTP API client and its answers, [`prometheus::promql`]: the
//!   history queries; [`forecasts`]: the forecast cache and the predictors it drives
//!   (`type: Prometheus` values are a metric source, [`sources::prometheus`]).

// No unsafe code here, ever; unwrap and expect only in tests (a panic in the controller
// is an outage, in the core a wrong answer).
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod autoscaler_key;
pub mod backoff;
pub mod client;
pub mod conflicts;
pub mod controller;
pub mod crd;
pub mod digest;
pub mod due;
pub mod events;
pub mod forecasts;
pub mod labels;
pub mod leader;
pub mod pods;
pub mod prometheus;
pub mod reconcile;
pub mod relist;
pub mod slim;
pub mod sources;
pub mod status;
pub mod target;
pub mod telemetry;
