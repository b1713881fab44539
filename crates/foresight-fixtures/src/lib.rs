//! What Foresight's tests share about their fixtures: where Crane's production traces are
//! (third-party data the repository does not hold), and how a test that cannot run says so.
//!
//! A skipped test still passes in cargo's summary, so a skip is also written, one line per
//! test, to the file `FORESIGHT_SKIP_LOG` names: `scripts/test` sets it, counts the lines and
//! names every skipped test and the reason in its closing line.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The file a skip is recorded in (one `test<TAB>reason` line each), when set.
pub const SKIP_LOG_VAR: &str = "FORESIGHT_SKIP_LOG";

/// The file each real-cluster suite records the API server version it ran against in (one
/// `test<TAB>version` line each), when set.
pub const CLUSTER_LOG_VAR: &str = "FORESIGHT_CLUSTER_LOG";

/// The directory of Crane's traces, when set.
pub const TRACES_VAR: &str = "FORESIGHT_TRACES_DIR";

/// Set to `1` (CI does) to make missing traces a failure instead of a skip.
pub const REQUIRE_TRACES_VAR: &str = "FORESIGHT_REQUIRE_TRACES";

/// Says that `test` did not run and why: one line on stderr (shown with `--nocapture`) and
/// one in the skip log, which `scripts/test` reports at its end.
pub fn skip(test: &str, why: &str) {
    eprintln!("skipping {test}: {why}");
    append(SKIP_LOG_VAR, test, why);
}

/// Says which Kubernetes API server a real-cluster suite ran against: one line on stderr and
/// one in the cluster log, which `scripts/test` reports at its end.
pub fn ran_against(test: &str, version: &str) {
    eprintln!("{test}: running against kube-apiserver {version}");
    append(CLUSTER_LOG_VAR, test, version);
}

/// Appends `test<TAB>text` to the file the variable `var` names, if it names one.
fn append(var: &str, test: &str, text: &str) {
    let Some(log) = std::env::var_os(var).filter(|p| !p.is_empty()) else {
        return;
    };
    let line = format!("{test}\t{}\n", text.replace(['\n', '\t'], " "));
    // Tests run in parallel threads and processes: one append of one whole line each.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot record {test} in {}: {e}", Path::new(&log).display());
    }
}

/// Where Crane's traces are: `FORESIGHT_TRACES_DIR`, else `../shared/traces/crane-dsp` beside
/// the repository when it exists; otherwise why there are none.
pub fn crane_traces() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os(TRACES_VAR).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return if dir.is_dir() {
            Ok(dir)
        } else {
            Err(format!("{TRACES_VAR}={} is not a directory", dir.display()))
        };
    }
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/crane-dsp");
    if shared.is_dir() {
        Ok(shared)
    } else {
        Err(format!(
            "Crane's traces are not in the repository (third-party data): set {TRACES_VAR}, \
             or put them in ../shared/traces/crane-dsp beside the checkout"
        ))
    }
}

/// Crane's traces, or `None` after recording that `test` was skipped. Under
/// `FORESIGHT_REQUIRE_TRACES=1` missing traces panic: CI must never skip.
pub fn crane_traces_or_skip(test: &str) -> Option<PathBuf> {
    match crane_traces() {
        Ok(dir) => Some(dir),
        Err(why) if std::env::var(REQUIRE_TRACES_VAR).as_deref() == Ok("1") => {
            panic!("{test}: {why}, and {REQUIRE_TRACES_VAR}=1 forbids skipping")
        }
        Err(why) => {
            skip(test, &why);
            None
        }
    }
}

/// Crane's twelve traces by name and SHA-256 (gocrane/crane, `pkg/prediction/dsp/test_data`),
/// so that a test which asserts what is known of one file only runs on that very file.
const CRANE_FILES: [(&str, &str); 12] = [
    (
        "input0.csv",
        "5e82745e6263cabb3e354fc7d180a59891155d6e3c3755fd5cb32da6fc43985f",
    ),
    (
        "input1.csv",
        "998a32ccd406c86d087c7e571dc6a18f5f1777e173b135c421720c7ccecc2745",
    ),
    (
        "input2.csv",
        "47b690dc7d429acf55f7ac005c537550af4d722e56e2a1ba29366a12b9cf3782",
    ),
    (
        "input3.csv",
        "6e4dd8ac40997e1143471f21ecd4ec97ee198155c4cc3ebb865063ca74f25ee4",
    ),
    (
        "input4.csv",
        "d2ee084db906cafeca8998acfdc199d2ba7d1b24831f8490ca251a30c13ba96a",
    ),
    (
        "input5.csv",
        "1267195d354be015f999bec08703bc9d9317ff825f3a9932a1da87294e439706",
    ),
    (
        "input6.csv",
        "de6040fc7381ff2d3a4d3f02d9baa941f135f76e813c5a5110b054e39f36811e",
    ),
    (
        "input7.csv",
        "551f08d7f9dcf83ea1d56493c5cea91bc5a03e7e5b808680eb13b0a61abebcd9",
    ),
    (
        "input8.csv",
        "fd2bc740e3d93c04ea5d019e1afd025a5d663d355d88dd0a101bf6d35046eefd",
    ),
    (
        "input9.csv",
        "637b232601f5dfa87b1e13e81277beda0b803890d4230e3cef2f8aab955ca77b",
    ),
    (
        "input10.csv",
        "cbea0d37a182b946bceda6a184f8731d9f8ce9342429b9751251c84284587d37",
    ),
    (
        "input11.csv",
        "1fd67257a08c9b1c0b7334b90df31fbc277c04be45770c7fc4480296abf37959",
    ),
];

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The hex SHA-256 of each of Crane's traces, whatever its file is called.
pub fn crane_hashes() -> impl Iterator<Item = &'static str> {
    CRANE_FILES.iter().map(|(_, hash)| *hash)
}

/// `dir/name` when it is Crane's file of that name, byte for byte; `None` when the directory
/// holds another file by that name or none (other traces under `FORESIGHT_TRACES_DIR`).
pub fn crane_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let (_, hash) = CRANE_FILES.iter().find(|(n, _)| *n == name)?;
    let path = dir.join(name);
    let bytes = std::fs::read(&path).ok()?;
    (sha256_hex(&bytes) == *hash).then_some(path)
}

/// Every one of Crane's twelve traces in the traces directory, or `None` after recording
/// that `test` was skipped (no directory, or one that holds other traces).
pub fn all_crane_files_or_skip(test: &str) -> Option<Vec<(&'static str, PathBuf)>> {
    let dir = crane_traces_or_skip(test)?;
    let found: Vec<_> = CRANE_FILES
        .iter()
        .filter_map(|(name, _)| Some((*name, crane_file(&dir, name)?)))
        .collect();
    if found.len() == CRANE_FILES.len() {
        Some(found)
    } else {
        skip(
            test,
            &format!(
                "{} holds {} of Crane's 12 traces (other traces are run by the tests that \
                 read every CSV there)",
                dir.display(),
                found.len()
            ),
        );
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_appends_one_line_per_test_to_the_log() {
        let dir = std::env::temp_dir().join(format!("foresight-skip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("skips");
        std::env::set_var(SKIP_LOG_VAR, &log);
        skip("suite_a", "no control plane\nsecond line");
        skip("suite_b", "no browser");
        std::env::remove_var(SKIP_LOG_VAR);
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text,
            "suite_a\tno control plane second line\nsuite_b\tno browser\n"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn sha256_is_the_standard_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
