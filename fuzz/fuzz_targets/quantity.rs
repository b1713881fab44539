//! Kubernetes quantities as specs and metrics APIs write them.
#![no_main]

use foresight_api::quantity::{format_milli, Quantity};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let q = Quantity::from(text);
    if let Ok(milli) = q.milli_value() {
        let again = Quantity::from(format_milli(milli).as_str());
        assert_eq!(again.milli_value().ok(), Some(milli), "{text:?}");
    }
    let _ = q.as_f64();
});
