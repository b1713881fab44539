//! Go durations as specs and flags write them (`1h30m`, `2d`).
#![no_main]

use foresight_api::duration::parse_duration;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = parse_duration(text);
});
