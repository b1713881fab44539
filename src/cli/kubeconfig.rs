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
        Some(path) if path.is_dir() => {
            anyhow::bail!(
                "kubeconfig {}: is a directory; name the kubeconfig file in it (e.g. {})",
                path.display(),
                path.join("config").display()
            )
        }
        Some(path) if !path.is_file() => {
            anyhow::bail!("kubeconfig {}: no such file", path.display())
        }
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
        None => {
            let named = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
            let home = std::env::var_os("HOME")
                .map(|h| Path::new(&h).join(".kube/config"))
                .filter(|p| p.is_file());
            let in_cluster = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
            if named.is_none() && home.is_none() && !in_cluster {
                anyhow::bail!(
                    "no cluster to talk to: pass --kubeconfig FILE, set KUBECONFIG, create \
                     ~/.kube/config, or run inside a cluster"
                );
            }
            kube::Config::infer()
                .await
                .context("finding cluster credentials (KUBECONFIG, ~/.kube/config or in-cluster)")
        }
    }
}
