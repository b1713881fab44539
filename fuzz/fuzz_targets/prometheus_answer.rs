//! What a Prometheus server (or anything at its address) answers: instant and range query
//! bodies, under status 200, or 500 when the input starts with `!`.
#![no_main]

use std::collections::BTreeMap;

use foresight_k8s::prometheus::{decode_answer, instant_answer, join_range};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (status, body) = match data.split_first() {
        Some((b'!', rest)) => (500, rest),
        _ => (200, data),
    };
    if let Ok(answer) = decode_answer(status, "http://prometheus/api/v1/query", body) {
        let _ = instant_answer(answer);
    }
    if let Ok(answer) = decode_answer(status, "http://prometheus/api/v1/query_range", body) {
        let mut joined = BTreeMap::new();
        let _ = join_range(&mut joined, answer);
    }
});
