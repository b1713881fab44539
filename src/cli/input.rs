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
    without_errno(&error.to_string())
}

/// `text` without the ` (os error N)` Rust appends to I/O errors (wherever it stands).
pub fn without_errno(text: &str) -> String {
    let mut out = text.to_owned();
    while let Some(at) = out.find(" (os error ") {
        let end = out[at..].find(')').map_or(out.len(), |e| at + e + 1);
        out.replace_range(at..end, "");
    }
    out
}
