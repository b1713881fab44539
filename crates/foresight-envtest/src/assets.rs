//! Where the control plane's binaries are: the envtest convention, a directory named by
//! `KUBEBUILDER_ASSETS` holding `etcd`, `kube-apiserver` and (here) `kube-controller-manager`.

use std::path::{Path, PathBuf};

/// The binaries of one control plane.
#[derive(Clone, Debug)]
pub struct Assets {
    /// `etcd`.
    pub etcd: PathBuf,
    /// `kube-apiserver`.
    pub apiserver: PathBuf,
    /// `kube-controller-manager`, when present.
    pub controller_manager: Option<PathBuf>,
}

/// Set to `1` (CI does) to make missing assets a failure instead of a skip.
pub const REQUIRE_VAR: &str = "FORESIGHT_REQUIRE_ENVTEST";

impl Assets {
    /// The assets in `KUBEBUILDER_ASSETS`, or why there are none.
    pub fn find() -> Result<Assets, String> {
        let dir = std::env::var_os("KUBEBUILDER_ASSETS")
            .filter(|d| !d.is_empty())
            .ok_or("KUBEBUILDER_ASSETS is not set")?;
        Self::in_dir(Path::new(&dir))
    }

    fn in_dir(dir: &Path) -> Result<Assets, String> {
        let exe = |name: &str| {
            let p = dir.join(name);
            p.is_file().then_some(p)
        };
        let missing = |name: &str| format!("KUBEBUILDER_ASSETS={} has no {name}", dir.display());
        Ok(Assets {
            etcd: exe("etcd").ok_or_else(|| missing("etcd"))?,
            apiserver: exe("kube-apiserver").ok_or_else(|| missing("kube-apiserver"))?,
            controller_manager: exe("kube-controller-manager"),
        })
    }

    /// The assets, or `None` after recording the skip (`foresight_fixtures::skip`) with how to
    /// enable the real-cluster tests. Under `FORESIGHT_REQUIRE_ENVTEST=1` a missing asset panics: CI must never skip.
    /// `needs_controller_manager` makes a missing `kube-controller-manager` count as missing.
    pub fn or_skip(test: &str, needs_controller_manager: bool) -> Option<Assets> {
        let found = Self::find().and_then(|a| {
            if needs_controller_manager && a.controller_manager.is_none() {
                Err("KUBEBUILDER_ASSETS has no kube-controller-manager (the native HPA side by side needs it)".to_owned())
            } else {
                Ok(a)
            }
        });
        match found {
            Ok(a) => Some(a),
            Err(why) if std::env::var(REQUIRE_VAR).as_deref() == Ok("1") => {
                panic!("{test}: {why}, and {REQUIRE_VAR}=1 forbids skipping")
            }
            Err(why) => {
                foresight_fixtures::skip(
                    test,
                    &format!(
                        "{why}; run ./scripts/test (it builds the control plane with \
                         scripts/control-plane), or point KUBEBUILDER_ASSETS at a directory \
                         with etcd, kube-apiserver and kube-controller-manager"
                    ),
                );
                None
            }
        }
    }
}
