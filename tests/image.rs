//! The container image `scripts/image` builds: a static binary on an empty base that runs as
//! a non-root user, with the time zone database inside the binary.
//!
//! The test builds the image with buildah (Debian's; `scripts/test` installs it), then runs
//! its binary inside the image's own filesystem (`buildah run`, chroot isolation: no
//! container runtime or registry needed). Without buildah or podman it says how to enable it
//! and passes, unless `FORESIGHT_REQUIRE_IMAGE=1` (set by `.ci/run`).

use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(program: &str, args: &[&str]) -> Output {
    let out = Command::new(program)
        .args(args)
        .current_dir(root())
        .env("STORAGE_DRIVER", storage_driver())
        .output()
        .unwrap_or_else(|e| panic!("{program} could not run: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// vfs works everywhere (no overlay mounts, no fuse); a user's own setting wins.
fn storage_driver() -> String {
    std::env::var("STORAGE_DRIVER").unwrap_or_else(|_| "vfs".to_owned())
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_image_runs_its_binary_as_non_root_with_time_zones_and_no_tzdata() {
    if !have("buildah") {
        assert!(
            std::env::var("FORESIGHT_REQUIRE_IMAGE").as_deref() != Ok("1"),
            "buildah is required (FORESIGHT_REQUIRE_IMAGE=1): apt-get install -y buildah"
        );
        foresight_fixtures::skip(
            "image",
            "no buildah (apt-get install -y buildah; scripts/test does)",
        );
        return;
    }
    let archive = tempfile::tempdir().unwrap();
    let archive = archive.path().join("foresight.tar");
    let built = run("scripts/image", &["--save", archive.to_str().unwrap()]);
    let image = stdout(&built).lines().last().unwrap_or_default().to_owned();
    let expected = stdout(&run("scripts/image", &["--print-name"]));
    assert_eq!(image, expected);
    assert!(
        archive.metadata().unwrap().len() > 1_000_000,
        "the OCI archive was written"
    );

    let config: serde_json::Value = serde_json::from_str(&stdout(&run(
        "buildah",
        &["inspect", "--type", "image", &image],
    )))
    .expect("buildah inspect prints JSON");
    let oci = &config["OCIv1"]["config"];
    assert_eq!(oci["User"], "65532:65532", "{oci}");
    assert_eq!(oci["Entrypoint"][0], "/usr/local/bin/foresight", "{oci}");
    assert_eq!(oci["Cmd"][0], "controller", "{oci}");

    let container = stdout(&run("buildah", &["from", &image]));
    let in_image = |args: &[&str]| {
        let mut all = vec!["run", "--isolation", "chroot", container.as_str(), "--"];
        all.extend_from_slice(args);
        run("buildah", &all)
    };
    let checks = std::panic::catch_unwind(|| {
        // Before anything runs in it (a run adds its mount points, /dev, /proc, ...).
        let mount = stdout(&run("buildah", &["mount", &container]));
        assert!(!Path::new(&mount).join("usr/share/zoneinfo").exists());
        let entries: Vec<String> = std::fs::read_dir(&mount)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut entries = entries;
        entries.sort();
        assert_eq!(
            entries,
            ["etc", "tmp", "usr"],
            "nothing but the binary and its files"
        );
        run("buildah", &["umount", &container]);
        let version = stdout(&in_image(&["/usr/local/bin/foresight", "--version"]));
        assert!(
            version.starts_with(&format!("foresight {}", env!("CARGO_PKG_VERSION"))),
            "{version}"
        );
        // The policy's cron is in Asia/Shanghai, and the image has no /usr/share/zoneinfo:
        // the zone comes from the database compiled into the binary.
        run(
            "buildah",
            &[
                "copy",
                &container,
                "examples/simulate/policy.yaml",
                "/tmp/policy.yaml",
            ],
        );
        let valid = stdout(&in_image(&[
            "/usr/local/bin/foresight",
            "validate",
            "/tmp/policy.yaml",
        ]));
        assert_eq!(valid, "1 document(s) valid");
    });
    run("buildah", &["rm", &container]);
    if let Err(e) = checks {
        std::panic::resume_unwind(e);
    }
}
