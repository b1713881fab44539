//! Label selectors. The first line is the string form a scale reports (parsed, then matched
//! against the `key=value` labels on the following lines); the whole input is also read as
//! the structured form a metric carries (JSON), whose query string is parsed back.
#![no_main]

use std::collections::BTreeMap;

use foresight_api::hpa::LabelSelector;
use foresight_api::selector::Selector;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let mut lines = text.split('\n');
    let selector = lines.next().unwrap_or_default();
    let labels: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    if let Ok(s) = Selector::parse(selector) {
        let _ = s.matches(&labels);
        let _ = s.required_label();
    }
    if let Ok(structured) = serde_json::from_str::<LabelSelector>(text) {
        let _ = Selector::parse(&structured.to_query());
        let _ = LabelSelector::go_format(Some(&structured));
    }
});
