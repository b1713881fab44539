//! Leader election on a coordination.k8s.io Lease (kube-lease-manager), so that of several
//! replicas exactly one acts; the others keep their caches warm and take over when the
//! leader's lease expires.

use std::time::Duration;

use kube::Client;
use kube_lease_manager::{LeaseManagerBuilder, LeaseManagerError};
use tokio::sync::watch;

/// Where the lease lives and who we are.
#[derive(Clone, Debug)]
pub struct LeaderOptions {
    /// The Lease's name.
    pub lease_name: String,
    /// The Lease's namespace.
    pub lease_namespace: String,
    /// This replica's identity (the pod name).
    pub identity: String,
    /// How long a lease holds without renewal.
    pub lease_duration: Duration,
    /// Extra time a follower waits past expiry, against clock skew.
    pub grace: Duration,
}

/// Why leader election could not start.
#[derive(Debug, thiserror::Error)]
#[error("leader election on lease {namespace}/{name}: {source}")]
pub struct LeaderError {
    /// Lease namespace.
    pub namespace: String,
    /// Lease name.
    pub name: String,
    /// The cause.
    pub source: LeaseManagerError,
}

/// Whether this replica leads, as a channel that changes when leadership does. The task
/// that holds and renews the lease runs until every receiver is dropped, then releases it.
pub async fn elect(
    client: Client,
    opts: &LeaderOptions,
) -> Result<watch::Receiver<bool>, LeaderError> {
    let manager = LeaseManagerBuilder::new(client, &opts.lease_name)
        .with_namespace(&opts.lease_namespace)
        .with_identity(&opts.identity)
        .with_duration(opts.lease_duration.as_secs().max(1))
        .with_grace(opts.grace.as_secs())
        .build()
        .await
        .map_err(|source| LeaderError {
            namespace: opts.lease_namespace.clone(),
            name: opts.lease_name.clone(),
            source,
        })?;
    let (rx, _task) = manager.watch().await;
    Ok(rx)
}

/// A channel that always says "leader", for a single replica without election.
pub fn always_leader() -> (watch::Sender<bool>, watch::Receiver<bool>) {
    watch::channel(true)
}
