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
}

/// The shortest lease: a holder renews a whole second before expiry, and kube-lease-manager
/// needs that margin to be shorter than the lease.
const MIN_LEASE_SECONDS: u64 = 2;

/// How long before its lease expires the holder renews it (kube-lease-manager's `grace`): a
/// third of the lease, as client-go's defaults (15 s lease, renewed every 5 s or so) do, at
/// least a second and always less than the lease. A margin as long as the lease would make
/// the holder renew without pause, a GET and an update of the Lease many times a second.
fn renewal_margin(lease_seconds: u64) -> u64 {
    let lease = lease_seconds.max(MIN_LEASE_SECONDS);
    (lease / 3).clamp(1, lease - 1)
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
        .with_duration(opts.lease_duration.as_secs().max(MIN_LEASE_SECONDS))
        .with_grace(renewal_margin(opts.lease_duration.as_secs()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_renews_before_expiry_and_not_without_pause() {
        assert_eq!(renewal_margin(15), 5);
        assert_eq!(renewal_margin(60), 20);
        // Short leases (tests, impatient failover) still leave a pause between renewals.
        assert_eq!(renewal_margin(4), 1);
        assert_eq!(renewal_margin(2), 1);
        assert_eq!(renewal_margin(1), 1);
        assert_eq!(renewal_margin(0), 1);
        for lease in 0..100 {
            let margin = renewal_margin(lease);
            assert!(
                margin >= 1 && margin < lease.max(MIN_LEASE_SECONDS),
                "{lease}"
            );
        }
    }
}
