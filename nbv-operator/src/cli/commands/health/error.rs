//! What can go wrong before a health check runs: reading files, and the shape of a test
//! suite.

use std::io;
use std::path::PathBuf;

/// A file (or standard input) that cannot be used as input.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::InputError;
///
/// let error = InputError::NotUtf8 { path: "jobs.yaml".into() };
/// assert_eq!(error.to_string(), "jobs.yaml is not UTF-8 text; save it as UTF-8");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file cannot be opened or read.
    #[error("cannot read {path}: {source}")]
    Unreadable {
        /// The file, as given (`standard input` for `-`).
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES).
    #[error(
        "{path} is larger than {limit} bytes; a Kubernetes object or a health script is far \
         smaller (the API server stores at most about 1.5 MiB per object): split the stream"
    )]
    TooLarge {
        /// The file.
        path: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("{path} is not UTF-8 text; save it as UTF-8")]
    NotUtf8 {
        /// The file.
        path: String,
    },
}

/// Why a suite, or one test of a suite, cannot run. `nbv health test` reports each as a
/// failure naming the file; none of them stops the other suites.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::SuiteError;
///
/// let error = SuiteError::MissingScript { path: "suites/apps/Deployment/health.lua".into() };
/// assert!(error.to_string().starts_with("missing health.lua: suites/apps/Deployment/health.lua"));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A directory has `health_test.yaml` but no `health.lua`.
    #[error(
        "missing health.lua: {} does not exist; put the health script under test next to \
         health_test.yaml", .path.display()
    )]
    MissingScript {
        /// Where the script was expected.
        path: PathBuf,
    },
    /// A directory has `health.lua` but no `health_test.yaml`.
    #[error(
        "missing health_test.yaml: {} does not exist; list the tests there as \
         `tests: [{{inputPath: ..., healthStatus: {{status: ..., message: ...}}}}]`",
        .path.display()
    )]
    MissingTests {
        /// Where the test list was expected.
        path: PathBuf,
    },
    /// A file of the suite cannot be read.
    #[error(transparent)]
    Read(#[from] InputError),
    /// `health_test.yaml` is not in Argo CD's format.
    #[error(
        "{} is not a test list in Argo CD's format (`tests: [{{inputPath: ..., \
         healthStatus: {{status: ..., message: ...}}}}]`): {message}", .path.display()
    )]
    InvalidTests {
        /// The file.
        path: PathBuf,
        /// What the YAML parser objects to, with its location.
        message: String,
    },
    /// A test input is not valid YAML.
    #[error("test input {} is not valid YAML: {message}", .path.display())]
    InvalidInput {
        /// The file.
        path: PathBuf,
        /// What the YAML parser objects to, with its location.
        message: String,
    },
    /// A test input holds several YAML documents.
    #[error(
        "test input {} holds {count} YAML documents; a test input is one object (Argo CD \
         would silently read the first one only): split it into one file per object",
        .path.display()
    )]
    MultipleDocuments {
        /// The file.
        path: PathBuf,
        /// How many documents it holds.
        count: usize,
    },
    /// A test input is not a mapping.
    #[error(
        "test input {} is a YAML {found}, not an object; write the Kubernetes object as a \
         mapping (apiVersion, kind, metadata, ...)", .path.display()
    )]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// What it is instead (`sequence`, `string`, ...).
        found: &'static str,
    },
    /// A directory given on the command line holds no suite at all.
    #[error(
        "no health check suite under {}: a suite is a directory holding health.lua and \
         health_test.yaml (as Argo CD's resource_customizations/<group>/<Kind>/)", .dir.display()
    )]
    NoSuites {
        /// The directory.
        dir: PathBuf,
    },
    /// A directory cannot be listed.
    #[error("cannot list {}: {source}", .dir.display())]
    UnreadableDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Directories nested deeper than the search goes.
    #[error(
        "{} is nested more than {max} directories below the directory searched; suites \
         that deep are not searched", .dir.display()
    )]
    TooDeep {
        /// The first directory not searched.
        dir: PathBuf,
        /// The deepest level searched.
        max: usize,
    },
}
