//! Reading the files the commands are given: `-` is standard input, and a failure is said
//! once, in words (no `(os error 2)`).

use std::io::Read;
use std::path::Path;

/// The text of `path`, or of standard input for `-`.
pub fn read_input(path: &Path) -> Result<String, String> {
    let result = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    } else {
        std::fs::read_to_string(path)
    };
    result.map_err(|e| format!("cannot read: {}", io_error(&e)))
}

/// An I/O error's description without the errno Rust appends.
pub fn io_error(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
