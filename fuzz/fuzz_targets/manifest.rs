//! Manifests as `validate` and `import` read them: YAML or JSON, several documents, every kind
//! (HPA v1/v2, Foresight, Crane EHPA, KEDA ScaledObject), then validation, import and
//! compilation of what validates.
#![no_main]

use foresight_api::import::{import_document, render, ImportOptions};
use foresight_api::manifest::{classify, parse_documents, Document};
use foresight_api::validation::validate_spec;
use foresight_core::autoscaler::{Autoscaler, ControllerConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(documents) = parse_documents(text) else {
        return;
    };
    for doc in &documents {
        for preview in [false, true] {
            if let Ok(imported) = import_document(doc, ImportOptions { preview }) {
                let _ = render(&imported);
            }
        }
        if let Ok(Document::Foresight(object)) = classify(doc) {
            if validate_spec(&object.spec).is_empty() {
                let _ = Autoscaler::new("ns", "name", &object.spec, &ControllerConfig::default());
            }
        }
    }
});
