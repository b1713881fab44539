//! Finding the cluster, for every subcommand that talks to one.

use std::path::Path;

use anyhow::Context as _;

/// The client configuration: from `kubeconfig` (and `context`) when given, otherwise inferred
/// (KUBECONFIG, ~/.kube/config, then the in-cluster service account).
pub async fn load(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> anyhow::Result<kube::Config> {
    let options = kube::config::KubeConfigOptions {
        context: context.map(str::to_owned),
        ..Default::default()
    };
    match kubeconfig {
        Some(path) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .context("loading kubeconfig")
        }
        None if context.is_some() => kube::Config::from_kubeconfig(&options)
            .await
            .context("loading ~/.kube/config"),
        None => kube::Config::infer()
            .await
            .context("finding cluster credentials (~/.kube/config or in-cluster)"),
    }
}
