//! Reading the files the commands are given, with a size limit so that a hostile or
//! mistaken input (a disk image, `/dev/zero`) is refused without being read whole.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::error::InputError;

/// The largest file (or standard input) `nbv health` reads: 16 MiB. The API server
/// stores at most about 1.5 MiB per object, so this leaves room for long streams
/// while bounding memory and parsing time.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_operator::cli::commands::health::MAX_FILE_BYTES, 16 * 1024 * 1024);
/// ```
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// The text of the file at `path`.
pub(crate) fn read_file(path: &Path) -> Result<String, InputError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| InputError::Unreadable {
        path: name.clone(),
        source,
    })?;
    read_text(file, &name)
}

/// The text `reader` yields, reported as `name` in errors.
pub(crate) fn read_text(reader: impl Read, name: &str) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    // One byte more than the limit tells "exactly the limit" from "too large".
    reader
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Unreadable {
            path: name.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(InputError::TooLarge {
            path: name.to_owned(),
            limit: MAX_FILE_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| InputError::NotUtf8 {
        path: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_inclusive() {
        let exactly = std::io::repeat(b'a').take(MAX_FILE_BYTES);
        assert_eq!(
            read_text(exactly, "x").map(|t| t.len() as u64).ok(),
            Some(MAX_FILE_BYTES)
        );
        let above = std::io::repeat(b'a').take(MAX_FILE_BYTES + 1);
        assert!(matches!(
            read_text(above, "x"),
            Err(InputError::TooLarge { .. })
        ));
        // An endless reader is cut at the limit instead of being read forever.
        assert!(matches!(
            read_text(std::io::repeat(b'a'), "x"),
            Err(InputError::TooLarge { .. })
        ));
    }

    #[test]
    fn invalid_utf8_and_missing_files_name_the_input() {
        let error = read_text(&b"\xff"[..], "standard input").unwrap_err();
        assert_eq!(
            error.to_string(),
            "standard input is not UTF-8 text; save it as UTF-8"
        );
        let missing = read_file(Path::new("/nonexistent/objects.yaml")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("cannot read /nonexistent/objects.yaml: ")
        );
    }
}
