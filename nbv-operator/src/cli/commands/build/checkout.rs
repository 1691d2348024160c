//! The checkout as nbv-core's decision sees it: files inside the directory only, read
//! with a bound.

use std::cell::RefCell;
use std::io::Read;
use std::path::{Path, PathBuf};

use nbv_core::build::RepoView;

/// The most a requirements file, Dockerfile or notebook the build reads may hold.
pub(super) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The checkout at `root`. A path whose symbolic links lead outside it is refused: it
/// is not a file of the repository, and the first such refusal is kept for the error
/// (the decision itself only sees a file that is not there).
pub(super) struct Checkout {
    root: PathBuf,
    refusals: RefCell<Vec<String>>,
}

impl Checkout {
    /// The checkout at `dir`, which must be a directory.
    pub(super) fn open(dir: &Path) -> Result<Checkout, String> {
        let root = dir
            .canonicalize()
            .map_err(|e| format!("--source {}: {e}", dir.display()))?;
        if !root.is_dir() {
            return Err(format!("--source {}: not a directory", dir.display()));
        }
        Ok(Checkout {
            root,
            refusals: RefCell::default(),
        })
    }

    /// The checkout's directory, with its links resolved.
    pub(super) fn root(&self) -> &Path {
        &self.root
    }

    /// The first path refused, as an error message.
    pub(super) fn refusal(&self) -> Option<String> {
        self.refusals.borrow().first().cloned()
    }

    /// Where `path` (relative to the root) really is: `None` when nothing is there, an
    /// error when its links lead outside the checkout.
    fn resolve(&self, path: &str) -> Result<Option<PathBuf>, String> {
        let Ok(real) = self.root.join(path).canonicalize() else {
            return Ok(None);
        };
        if real.starts_with(&self.root) {
            Ok(Some(real))
        } else {
            Err(format!(
                "{path} leaves the repository (a symbolic link to {}); nbv builds only \
                 from the repository's own files",
                real.display()
            ))
        }
    }

    fn refuse(&self, why: String) {
        self.refusals.borrow_mut().push(why);
    }

    /// The bytes of the regular file `path`, at most [`MAX_FILE_BYTES`].
    pub(super) fn read_bytes(&self, path: &str) -> Result<Vec<u8>, ReadError> {
        let real = self
            .resolve(path)
            .map_err(ReadError::Refused)?
            .filter(|p| p.is_file())
            .ok_or(ReadError::Missing)?;
        let refused = |e: std::io::Error| ReadError::Refused(format!("cannot read {path}: {e}"));
        let file = std::fs::File::open(&real).map_err(refused)?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(refused)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(ReadError::Refused(format!(
                "{path} is larger than {} MiB; nbv does not read a file that large",
                MAX_FILE_BYTES / (1024 * 1024)
            )));
        }
        Ok(bytes)
    }
}

/// Why a file of the checkout was not read.
#[derive(Debug)]
pub(super) enum ReadError {
    /// No regular file is there.
    Missing,
    /// One is, and nbv does not read it: the message says why.
    Refused(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Missing => f.write_str("no such file"),
            ReadError::Refused(why) => f.write_str(why),
        }
    }
}

impl RepoView for Checkout {
    fn is_file(&self, path: &str) -> bool {
        match self.resolve(path) {
            Ok(real) => real.is_some_and(|p| p.is_file()),
            Err(why) => {
                self.refuse(why);
                false
            }
        }
    }

    fn read(&self, path: &str) -> Option<String> {
        match self.read_bytes(path) {
            Ok(bytes) => String::from_utf8(bytes).ok(),
            Err(ReadError::Missing) => None,
            Err(ReadError::Refused(why)) => {
                self.refuse(why);
                None
            }
        }
    }
}
