//! Snapshots as `explain --snapshot` reads them: parsed, prepared, decided, finished and
//! explained.
#![no_main]

use foresight_core::decision::{decide, ScaleOutcome};
use foresight_core::explain::render;
use foresight_core::snapshot::Snapshot;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(snapshot) = serde_saphyr::from_str::<Snapshot>(text) else {
        return;
    };
    let Ok(prepared) = snapshot.prepare() else {
        return;
    };
    let d = decide(
        &prepared.autoscaler,
        &prepared.observation,
        prepared.status.clone(),
        snapshot.history.clone(),
        snapshot.now,
    );
    let scale_to = d.scale_to;
    let outcome = match scale_to {
        Some(_) => ScaleOutcome::Applied { at: snapshot.now },
        None => ScaleOutcome::NotAttempted,
    };
    let r = d.finish(&prepared.autoscaler, outcome);
    if let Some(record) = &r.status.last_decision {
        let _ = render(&prepared.autoscaler, record, &r.status, &r.events, scale_to);
    }
});
