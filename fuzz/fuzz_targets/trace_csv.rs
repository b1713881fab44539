//! Load traces as `simulate --trace` and `backtest --trace` read them (`ts,value` CSV), and
//! the gap report on what parses.
#![no_main]

use foresight_core::trace::{gaps, parse_csv_lines};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(samples) = parse_csv_lines(text) {
        let _ = gaps(&samples, 3600);
    }
});
