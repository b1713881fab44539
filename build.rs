//! Stamps the binary with the source revision it was built from, for
//! `foresight_build_info{revision}` and `foresight --version`: `FORESIGHT_REVISION` when set
//! (an image build from a tree without `.git`), else the checkout's commit, else `unknown`.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=FORESIGHT_REVISION");
    for watched in [".git/HEAD", ".git/refs/heads", ".git/packed-refs"] {
        if Path::new(watched).exists() {
            println!("cargo:rerun-if-changed={watched}");
        }
    }
    let revision = std::env::var("FORESIGHT_REVISION")
        .ok()
        .filter(|r| !r.trim().is_empty())
        .or_else(|| {
            let out = Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
                .filter(|r| !r.is_empty())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=FORESIGHT_REVISION={revision}");
}
