//! The controller's Kubernetes client: kube's, without its default retry policy.
//!
//! kube's default retries 429, 503 and 504 up to 15 times with backoff that grows to minutes.
//! An aggregated metrics API that answers 503 then holds a reconcile for minutes, status keeps
//! saying the metrics are fine, and a spec change waits behind it. The native HPA does not
//! retry within a sync either: a failed read fails that sync, says so in status, and the next
//! sync (a period later) tries again. Watches have their own backoff (see
//! [`crate::backoff`]); status writes retry conflicts themselves.

use kube::{Client, Config};

/// The client the controller uses, from a loaded configuration.
pub fn build(mut config: Config) -> Result<Client, kube::Error> {
    config.default_retry = false;
    Client::try_from(config)
}
