//! `nbv triggers lint`: validate an on-success-trigger annotation value.

use std::io::{Read, Write};
use std::path::Path;

use nbv_core::triggers::{MAX_ANNOTATION_BYTES, parse_triggers};

/// Reads at most one byte more than the annotation limit, so a huge input is rejected
/// by the parser's size check without being read whole.
fn read_value(file: Option<&Path>) -> Result<Vec<u8>, String> {
    let limit = (MAX_ANNOTATION_BYTES + 1) as u64;
    let mut buf = Vec::new();
    let result = match file {
        None => std::io::stdin().take(limit).read_to_end(&mut buf),
        Some(p) if p == Path::new("-") => std::io::stdin().take(limit).read_to_end(&mut buf),
        Some(p) => std::fs::File::open(p)
            .and_then(|f| f.take(limit).read_to_end(&mut buf))
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display()))),
    };
    result.map(|_| buf).map_err(|e| e.to_string())
}

/// Validates the annotation value in `file` (standard input for `None` or `-`).
///
/// Exit codes: 0 valid (warnings may be printed), 1 invalid, 2 unreadable input.
pub fn run(file: Option<&Path>, namespace: &str, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let bytes = match read_value(file) {
        Ok(b) => b,
        Err(e) => {
            let _ = writeln!(err, "error: cannot read the annotation value: {e}");
            return 2;
        }
    };
    let Ok(text) = String::from_utf8(bytes) else {
        let _ = writeln!(err, "error: the annotation value is not UTF-8 text");
        return 1;
    };
    lint_text(&text, namespace, out, err)
}

/// Validates an annotation value given as text. See [`run`] for exit codes.
pub fn lint_text(text: &str, namespace: &str, out: &mut impl Write, err: &mut impl Write) -> u8 {
    match parse_triggers(text, namespace) {
        Ok(set) => {
            for warning in set.warnings() {
                let _ = writeln!(err, "warning: {warning}");
            }
            let _ = writeln!(out, "valid: {} trigger(s)", set.len());
            for trigger in set.iter() {
                let _ = writeln!(out, "  {trigger}");
            }
            0
        }
        Err(errors) => {
            for warning in errors.warnings() {
                let _ = writeln!(err, "warning: {warning}");
            }
            for error in errors.errors() {
                let _ = writeln!(err, "error: {error}");
            }
            let _ = writeln!(err, "invalid: no trigger would fire; fix the errors above");
            1
        }
    }
}
