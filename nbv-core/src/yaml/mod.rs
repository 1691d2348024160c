//! Reading YAML within bounds: every YAML input nbv and `nbv` read (health test
//! suites and their inputs, resource streams, `argocd-cm`, the Pod defaults file,
//! simulation scenarios, the OLM and monitoring sources) goes through here, so that
//! no text costs more than a bounded amount of time and memory.
//!
//! Before anything is built, one pass over the parser's events checks the text
//! against these bounds, modelled on the ones Argo CD's YAML parser (go-yaml v3)
//! applies:
//!
//! - **Size**: at most [`MAX_INPUT_BYTES`] (16 MiB) of text.
//! - **Depth**: sequences and mappings nest at most [`MAX_DEPTH`] (128) levels,
//!   counting what aliases insert. go-yaml stops at 10,000; 128 is serde_yaml_ng's own
//!   limit, which refused deeper values already, only after parsing all of them at a
//!   cost that grows faster than the text.
//! - **Aliases**: go-yaml's rule for "document contains excessive aliasing". Once
//!   aliases repeat more than 100 nodes of a text of more than 1,000, at most 99% of
//!   the nodes may come from aliases up to 400,000 nodes in all, falling linearly to
//!   10% at 4,000,000. The same rule is applied to the bytes of text the aliases
//!   repeat, ten bytes to a node (4 MB, 40 MB): Go shares one string between all the
//!   repetitions of an anchor, Rust copies it each time, so one large anchor repeated
//!   many times is refused too. The count runs over the whole text, all its documents
//!   together (nbv keeps every document of a stream), where go-yaml counts each
//!   document alone.
//!
//! The pass takes time linear in the text and memory for one entry per anchor; it
//! expands nothing. What passes is then read by serde_yaml_ng, as before, so that a
//! text within the bounds reads exactly as it always did (YAML 1.2 booleans, tags,
//! `<<` as an ordinary key, error messages). Within the bounds, aliases add at most
//! about 400,000 nodes and 4 MB of text to what is read.
//!
//! # Examples
//!
//! ```
//! use nbv_core::yaml::{self, BoundsError, YamlError};
//!
//! let value: serde_json::Value = yaml::from_str("a: &x [1, 2]\nb: *x\n")?;
//! assert_eq!(value["b"], serde_json::json!([1, 2]));
//!
//! // Billion laughs: refused before anything is expanded.
//! let mut bomb = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
//! for level in 1..9 {
//!     let aliases = vec![format!("*l{}", level - 1); 9].join(", ");
//!     bomb += &format!("l{level}: &l{level} [{aliases}]\n");
//! }
//! let error = yaml::from_str::<serde_json::Value>(&bomb).unwrap_err();
//! assert!(matches!(error, YamlError::Bounds(BoundsError::ExcessiveAliasing { .. })));
//! # Ok::<(), YamlError>(())
//! ```

mod bounds;
mod error;

use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};

pub use error::{BoundsError, Position, YamlError};

/// The longest YAML text read: 16 MiB. The API server stores at most about 1.5 MiB per
/// object, so this leaves room for long streams.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::yaml::MAX_INPUT_BYTES, 16 * 1024 * 1024);
/// ```
pub const MAX_INPUT_BYTES: usize = 16 << 20;

/// The deepest nesting of sequences and mappings read: 128 levels, serde_yaml_ng's own
/// recursion limit.
///
/// # Examples
///
/// ```
/// let nested = format!("{}{}", "[".repeat(128), "]".repeat(128));
/// assert!(nbv_core::yaml::check(&nested).is_ok());
/// let deeper = format!("[{nested}]");
/// assert!(nbv_core::yaml::check(&deeper).is_err());
/// ```
pub const MAX_DEPTH: usize = 128;

/// The bounds a text is checked against.
///
/// # Examples
///
/// ```
/// use nbv_core::yaml::{self, BoundsError, Limits};
///
/// let small = Limits { max_input_bytes: 8, ..Limits::DEFAULT };
/// assert!(matches!(
///     yaml::check_within("a: [1, 2, 3]", &small),
///     Err(BoundsError::TooLarge { bytes: 12, max: 8 })
/// ));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest text, in bytes.
    pub max_input_bytes: usize,
    /// The deepest nesting of sequences and mappings.
    pub max_depth: usize,
}

impl Limits {
    /// [`MAX_INPUT_BYTES`] and [`MAX_DEPTH`].
    pub const DEFAULT: Limits = Limits {
        max_input_bytes: MAX_INPUT_BYTES,
        max_depth: MAX_DEPTH,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Checks `text` against the default bounds without building anything.
///
/// # Errors
///
/// The first bound the text exceeds, or where it stops being YAML.
///
/// # Examples
///
/// ```
/// assert!(nbv_core::yaml::check("a: &x 1\nb: *x\n").is_ok());
/// assert!(nbv_core::yaml::check("a: [").is_err());
/// ```
pub fn check(text: &str) -> Result<(), BoundsError> {
    check_within(text, &Limits::DEFAULT)
}

/// Checks `text` against `limits` without building anything.
///
/// # Errors
///
/// As [`check`].
///
/// # Examples
///
/// ```
/// use nbv_core::yaml::{self, Limits};
///
/// let shallow = Limits { max_depth: 1, ..Limits::DEFAULT };
/// assert!(yaml::check_within("[1, 2]", &shallow).is_ok());
/// assert!(yaml::check_within("[[1], 2]", &shallow).is_err());
/// ```
pub fn check_within(text: &str, limits: &Limits) -> Result<(), BoundsError> {
    match bounds::scan(text, limits).stopped {
        None => Ok(()),
        Some(error) => Err(error),
    }
}

/// Reads the one YAML document of `text` into `T`, within the default bounds.
///
/// # Errors
///
/// [`YamlError::Bounds`] when the text exceeds a bound; [`YamlError::Yaml`], with
/// serde_yaml_ng's message, when it is not YAML or not a `T`.
///
/// # Examples
///
/// ```
/// let list: Vec<u32> = nbv_core::yaml::from_str("[1, 2, 3]")?;
/// assert_eq!(list, [1, 2, 3]);
/// assert!(nbv_core::yaml::from_str::<Vec<u32>>("a: b").is_err());
/// # Ok::<(), nbv_core::yaml::YamlError>(())
/// ```
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    from_str_within(text, &Limits::DEFAULT)
}

/// [`from_str`] within `limits`.
///
/// # Errors
///
/// As [`from_str`].
///
/// # Examples
///
/// ```
/// use nbv_core::yaml::{self, Limits};
///
/// let shallow = Limits { max_depth: 1, ..Limits::DEFAULT };
/// assert!(yaml::from_str_within::<Vec<Vec<u8>>>("[[1]]", &shallow).is_err());
/// ```
pub fn from_str_within<T: DeserializeOwned>(text: &str, limits: &Limits) -> Result<T, YamlError> {
    match bounds::scan(text, limits).stopped {
        None => Ok(serde_yaml_ng::from_str(text)?),
        Some(stopped) => Err(not_read(stopped, || {
            serde_yaml_ng::from_str::<IgnoredAny>(text).err()
        })),
    }
}

/// The error for a text the check stopped in. Where it stopped because the text is not
/// YAML, serde_yaml_ng's own message is kept (`syntax` reads up to its error, which is
/// the part already checked, and expands nothing): the messages stay as they were.
fn not_read(
    stopped: BoundsError,
    syntax: impl FnOnce() -> Option<serde_yaml_ng::Error>,
) -> YamlError {
    match stopped {
        BoundsError::Syntax { .. } | BoundsError::Unchecked { .. } => match syntax() {
            Some(error) => YamlError::Yaml(error),
            // The two parsers disagree: nothing past the check's stop is read.
            None => YamlError::Bounds(stopped),
        },
        other => YamlError::Bounds(other),
    }
}

/// The documents of the YAML stream `text`, within the default bounds: one
/// serde_yaml_ng deserializer for each document before the first one that exceeds a
/// bound or is not YAML, then that document's error, then nothing. As with
/// serde_yaml_ng alone, the documents before a bad one can be read.
///
/// # Examples
///
/// ```
/// use serde::Deserialize;
/// use serde_json::Value;
///
/// let mut documents = nbv_core::yaml::documents("a: 1\n---\nb: [\n");
/// let first = Value::deserialize(documents.next().unwrap()?)?;
/// assert_eq!(first, serde_json::json!({"a": 1}));
/// assert!(documents.next().unwrap().is_err());
/// assert!(documents.next().is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn documents(text: &str) -> Documents<'_> {
    documents_within(text, &Limits::DEFAULT)
}

/// [`documents`] within `limits`.
///
/// # Examples
///
/// ```
/// use nbv_core::yaml::{self, Limits};
///
/// let small = Limits { max_input_bytes: 4, ..Limits::DEFAULT };
/// let mut documents = yaml::documents_within("a: 1\n---\nb: 2\n", &small);
/// assert!(documents.next().unwrap().is_err());
/// assert!(documents.next().is_none());
/// ```
pub fn documents_within<'a>(text: &'a str, limits: &Limits) -> Documents<'a> {
    let scan = bounds::scan(text, limits);
    Documents {
        parsed: serde_yaml_ng::Deserializer::from_str(text),
        passed: scan.documents,
        stopped: scan.stopped,
        yielded: 0,
        done: false,
        has_alias: text.contains('*'),
    }
}

/// The iterator of [`documents`].
pub struct Documents<'a> {
    parsed: serde_yaml_ng::Deserializer<'a>,
    /// Documents that passed the check.
    passed: usize,
    /// Why the check stopped in document `passed + 1`.
    stopped: Option<BoundsError>,
    yielded: usize,
    done: bool,
    /// Whether the text has a `*`, without which it has no alias.
    has_alias: bool,
}

impl std::fmt::Debug for Documents<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Documents")
            .field("passed", &self.passed)
            .field("stopped", &self.stopped)
            .field("yielded", &self.yielded)
            .finish_non_exhaustive()
    }
}

impl<'a> Iterator for Documents<'a> {
    type Item = Result<serde_yaml_ng::Deserializer<'a>, YamlError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.yielded < self.passed {
            self.yielded += 1;
            let document = self.parsed.next();
            self.done = document.is_none();
            return document.map(Ok);
        }
        self.done = true;
        let syntax = |document: Option<serde_yaml_ng::Deserializer<'a>>| {
            move || document.and_then(|d| IgnoredAny::deserialize(d).err())
        };
        match self.stopped.take() {
            // Parsing the document is what the check spares (libyaml's time grows faster
            // than the text with its depth): it is not parsed.
            Some(stopped @ BoundsError::Syntax { .. }) => {
                Some(Err(not_read(stopped, syntax(self.parsed.next()))))
            }
            Some(stopped) => Some(Err(YamlError::Bounds(stopped))),
            // The check read the whole text, yet serde_yaml_ng may find another document
            // (in a text of blanks, for one). Without a `*` in the text there is no alias
            // to amplify; otherwise only its syntax error, if it has one, is read. One
            // such document at most: after a syntax error the check did not see,
            // serde_yaml_ng yields the error again for ever, and a caller that reads on
            // past an error would never stop.
            None => {
                if self.yielded > self.passed {
                    return None;
                }
                let document = self.parsed.next()?;
                if !self.has_alias {
                    self.done = false;
                    self.yielded += 1;
                    return Some(Ok(document));
                }
                let unchecked = BoundsError::Unchecked {
                    document: self.yielded + 1,
                };
                Some(Err(not_read(unchecked, syntax(Some(document)))))
            }
        }
    }
}

#[cfg(test)]
mod tests;
