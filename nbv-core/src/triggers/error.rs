//! Errors and warnings of the trigger annotation, worded for the person who
//! wrote it.
//!
//! Every problem with an entry names the entry by its 0-based position in the
//! YAML list (`entry 0` is the first item), adds `(Kind/name)` when the entry
//! has a valid kind and name (so the user finds it without counting), and
//! names the field (`field "action"`) when the problem is about one field.

use std::fmt;

use super::MAX_ANNOTATION_BYTES;
use super::action::UnknownAction;
use super::api_version::InvalidApiVersion;
use super::names::{DidYouMean, KindError, NameError};
use super::target::ActionNotSupported;
use super::text::Quoted;
use crate::annotations::ON_SUCCESS_TRIGGER;

/// A field of a trigger entry.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::Field;
/// assert_eq!(Field::ApiVersion.as_str(), "apiVersion");
/// assert_eq!(Field::from_key("namespace"), Some(Field::Namespace));
/// assert_eq!(Field::from_key("Namespace"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// `apiVersion` (required).
    ApiVersion,
    /// `kind` (required).
    Kind,
    /// `name` (required).
    Name,
    /// `namespace` (optional; defaults to the job's namespace).
    Namespace,
    /// `action` (required).
    Action,
}

impl Field {
    /// Every field, in the order they are checked and reported.
    pub const ALL: [Field; 5] = [
        Field::ApiVersion,
        Field::Kind,
        Field::Name,
        Field::Namespace,
        Field::Action,
    ];

    /// The key of the field in an entry (case-sensitive).
    pub const fn as_str(self) -> &'static str {
        match self {
            Field::ApiVersion => "apiVersion",
            Field::Kind => "kind",
            Field::Name => "name",
            Field::Namespace => "namespace",
            Field::Action => "action",
        }
    }

    /// The field with exactly this key, if any.
    pub fn from_key(key: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.as_str() == key)
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a YAML value turned out to be, for "expected X, found Y" messages.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{FieldProblem, TriggerError, ValueKind, parse_triggers};
/// let errors = parse_triggers("- {apiVersion: v1, kind: Pod, name: 5, action: restart}", "ml")
///     .unwrap_err();
/// let TriggerError::Field { problem: FieldProblem::NotAString { found }, .. } = &errors.errors()[0]
/// else { panic!("expected a type error") };
/// assert_eq!(found, &ValueKind::Number("5".into()));
/// assert_eq!(found.to_string(), "a number (5)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueKind {
    /// `null`, `~`, or nothing at all after the colon.
    Null,
    /// `true` or `false`.
    Boolean(bool),
    /// An integer or a float, as YAML read it.
    Number(String),
    /// A string.
    String(String),
    /// A sequence.
    List,
    /// A mapping.
    Mapping,
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueKind::Null => f.write_str("null"),
            ValueKind::Boolean(b) => write!(f, "a boolean ({b})"),
            ValueKind::Number(n) => write!(f, "a number ({n})"),
            ValueKind::String(s) => write!(f, "a string ({})", Quoted(s)),
            ValueKind::List => f.write_str("a list"),
            ValueKind::Mapping => f.write_str("a mapping"),
        }
    }
}

/// A position in the annotation value (1-based line and column).
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{TriggerError, parse_triggers};
/// let errors = parse_triggers("- a\n- &x b\n", "ml").unwrap_err();
/// let TriggerError::AliasNotAllowed { location: Some(at) } = &errors.errors()[0]
/// else { panic!("expected an alias error") };
/// assert_eq!((at.line, at.column), (2, 6));
/// assert_eq!(at.to_string(), "line 2, column 6");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct YamlLocation {
    /// 1-based line within the annotation value.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

impl fmt::Display for YamlLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Renders ` at line L, column C`, or nothing when the parser gave no position.
struct At(Option<YamlLocation>);

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(location) => write!(f, " at {location}"),
            None => Ok(()),
        }
    }
}

/// Renders `entry N` or `entry N (Kind/name)`.
struct EntryPrefix<'a>(usize, Option<&'a str>);

impl fmt::Display for EntryPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "entry {}", self.0)?;
        match self.1 {
            Some(target) => write!(f, " ({target})"),
            None => Ok(()),
        }
    }
}

/// What is wrong with one field of an entry.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{Field, FieldProblem, TriggerError, parse_triggers};
/// let errors = parse_triggers("- {apiVersion: v1, kind: Pod, action: restart}", "ml").unwrap_err();
/// assert!(matches!(
///     &errors.errors()[0],
///     TriggerError::Field { index: 0, field: Field::Name, problem: FieldProblem::Missing { .. }, .. }
/// ));
/// assert_eq!(errors.to_string(), "entry 0: field \"name\": is missing");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldProblem {
    /// A required field is absent.
    #[error("is missing{}", MissingHint(similar.as_deref()))]
    Missing {
        /// An unknown key of the same entry that looks like this field
        /// (for example `apiversion` for `apiVersion`).
        similar: Option<String>,
    },
    /// The field is present but not a string.
    #[error("expected a string, found {found}{}", QuoteHint(found))]
    NotAString {
        /// What it is instead.
        found: ValueKind,
    },
    /// `apiVersion` is not a valid API version.
    #[error("{0}")]
    ApiVersion(InvalidApiVersion),
    /// `kind` is not a valid kind.
    #[error("{0}")]
    Kind(KindError),
    /// `name` or `namespace` is not a valid Kubernetes name.
    #[error("{0}")]
    Name(NameError),
    /// `namespace` is absent and the job's namespace, its default, is not valid.
    #[error(
        "is missing and cannot default to the job's namespace, which is not valid ({0}); \
         set it explicitly"
    )]
    NoDefaultNamespace(NameError),
    /// `action` is not one of the actions.
    #[error("{0}")]
    Action(UnknownAction),
    /// `action` does not apply to the target's kind.
    #[error("{0}")]
    NotSupported(ActionNotSupported),
}

struct MissingHint<'a>(Option<&'a str>);

impl fmt::Display for MissingHint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(similar) => write!(
                f,
                " (found {} instead; field names are case-sensitive)",
                Quoted(similar)
            ),
            None => Ok(()),
        }
    }
}

struct QuoteHint<'a>(&'a ValueKind);

impl fmt::Display for QuoteHint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ValueKind::Boolean(_) | ValueKind::Number(_) => {
                f.write_str("; put the value in quotes if it is meant as text")
            }
            _ => Ok(()),
        }
    }
}

/// One reason why the annotation is invalid.
///
/// Any error makes the whole annotation invalid: no trigger fires, so that a
/// half-understood list never runs half of what the user asked for.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{TriggerError, parse_triggers};
/// let errors = parse_triggers("apiVersion: v1", "ml").unwrap_err();
/// assert!(matches!(errors.errors(), [TriggerError::NotAList { .. }]));
/// assert_eq!(errors.errors()[0].entry_index(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TriggerError {
    /// The value is larger than [`MAX_ANNOTATION_BYTES`]; it was not parsed.
    #[error(
        "the annotation value is {size} bytes, more than the limit of {max} bytes (64 KiB); \
         it was not parsed"
    )]
    TooLarge {
        /// Size of the value in bytes.
        size: usize,
        /// The limit, [`MAX_ANNOTATION_BYTES`].
        max: usize,
    },
    /// The value uses a YAML anchor (`&a`) or alias (`*a`).
    #[error(
        "YAML anchors and aliases are not allowed{}; write every entry out in full",
        At(*location)
    )]
    AliasNotAllowed {
        /// Where the first anchor or alias is.
        location: Option<YamlLocation>,
    },
    /// A mapping has the same key twice.
    #[error(
        "duplicate key{}{}; each field may appear only once in an entry",
        DuplicateKeyName(key.as_deref()),
        At(*location)
    )]
    DuplicateKey {
        /// The repeated key, when it is a simple scalar.
        key: Option<String>,
        /// Where the second occurrence is.
        location: Option<YamlLocation>,
    },
    /// The value is not well-formed YAML, or is too deeply nested or complex.
    #[error("invalid YAML{}: {message}", At(*location))]
    Yaml {
        /// Where the parser stopped.
        location: Option<YamlLocation>,
        /// What the parser found wrong.
        message: String,
    },
    /// The value is YAML but not a list.
    #[error(
        "the value of {ON_SUCCESS_TRIGGER} must be a YAML list of triggers, found {found}{}",
        ListHint(found)
    )]
    NotAList {
        /// What it is instead.
        found: ValueKind,
    },
    /// An item of the list is not a mapping.
    #[error(
        "entry {index}: expected a mapping with apiVersion, kind, name, namespace (optional) and \
         action, found {found}"
    )]
    NotAMapping {
        /// 0-based position of the entry in the list.
        index: usize,
        /// What it is instead.
        found: ValueKind,
    },
    /// An entry has a key that is not a string (for example `5: x`).
    #[error("{}: field names must be strings, found a key that is {key}", EntryPrefix(*index, target.as_deref()))]
    NonStringKey {
        /// 0-based position of the entry in the list.
        index: usize,
        /// `Kind/name` of the entry, when both are valid.
        target: Option<String>,
        /// What the key is.
        key: ValueKind,
    },
    /// A field of an entry is missing or invalid.
    #[error("{}: field \"{field}\": {problem}", EntryPrefix(*index, target.as_deref()))]
    Field {
        /// 0-based position of the entry in the list.
        index: usize,
        /// `Kind/name` of the entry, when both are valid.
        target: Option<String>,
        /// The field.
        field: Field,
        /// What is wrong with it.
        problem: FieldProblem,
    },
}

impl TriggerError {
    /// The 0-based list position of the entry this error is about, if it is
    /// about one entry.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::{Field, parse_triggers};
    /// let errors = parse_triggers("- {apiVersion: v1, kind: Pod, name: p, action: Restart}", "ml")
    ///     .unwrap_err();
    /// assert_eq!(errors.errors()[0].entry_index(), Some(0));
    /// assert_eq!(errors.errors()[0].field(), Some(Field::Action));
    /// ```
    pub fn entry_index(&self) -> Option<usize> {
        match self {
            TriggerError::NotAMapping { index, .. }
            | TriggerError::NonStringKey { index, .. }
            | TriggerError::Field { index, .. } => Some(*index),
            _ => None,
        }
    }

    /// The field this error is about, if it is about one field.
    pub fn field(&self) -> Option<Field> {
        match self {
            TriggerError::Field { field, .. } => Some(*field),
            _ => None,
        }
    }
}

struct DuplicateKeyName<'a>(Option<&'a str>);

impl fmt::Display for DuplicateKeyName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(key) => write!(f, " {}", Quoted(key)),
            None => Ok(()),
        }
    }
}

struct ListHint<'a>(&'a ValueKind);

impl fmt::Display for ListHint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ValueKind::Mapping => f.write_str(
                "; start each trigger with \"- \", for example \"- apiVersion: apps/v1\"",
            ),
            _ => Ok(()),
        }
    }
}

/// Every error found in an annotation, and the warnings found alongside.
///
/// Parsing does not stop at the first bad entry: all of them are checked, so
/// the user can fix everything in one go. There is always at least one error.
/// [`Display`](fmt::Display) prints one error per line; warnings are kept
/// apart in [`warnings`](Self::warnings) (a linter prints both).
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::parse_triggers;
/// let value = "
/// - {apiVersion: apps/v1, kind: Deployment, name: Model_Server, action: restart}
/// - {apiVersion: apps/v1, kind: Deployment, name: web, action: Restart, replicas: 2}
/// ";
/// let errors = parse_triggers(value, "ml").unwrap_err();
/// assert_eq!(errors.errors().len(), 2);
/// assert_eq!(errors.warnings().len(), 1);
/// let text = errors.to_string();
/// assert_eq!(text.lines().count(), 2);
/// assert!(text.lines().nth(1).unwrap().starts_with("entry 1 (Deployment/web): field \"action\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", Lines(errors))]
pub struct TriggerErrors {
    errors: Vec<TriggerError>,
    warnings: Vec<TriggerWarning>,
}

impl TriggerErrors {
    /// Builds the error set. Callers pass at least one error: an empty set
    /// would be an `Err` that reports nothing.
    pub(crate) fn new(errors: Vec<TriggerError>, warnings: Vec<TriggerWarning>) -> Self {
        debug_assert!(!errors.is_empty(), "TriggerErrors without an error");
        Self { errors, warnings }
    }

    /// The errors, in the order of the entries they are about (never empty).
    pub fn errors(&self) -> &[TriggerError] {
        &self.errors
    }

    /// Warnings found while checking (unknown fields, duplicates).
    pub fn warnings(&self) -> &[TriggerWarning] {
        &self.warnings
    }
}

impl<'a> IntoIterator for &'a TriggerErrors {
    type Item = &'a TriggerError;
    type IntoIter = std::slice::Iter<'a, TriggerError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

struct Lines<'a>(&'a [TriggerError]);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

/// Something suspicious that does not make the annotation invalid.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::parse_triggers;
/// let set = parse_triggers(
///     "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart, namspace: ml}",
///     "ml",
/// ).unwrap();
/// assert_eq!(
///     set.warnings()[0].to_string(),
///     "entry 0 (Deployment/web): unknown field \"namspace\" is ignored (did you mean \"namespace\"?)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TriggerWarning {
    /// An entry has a key that is not a trigger field; it is ignored.
    #[error(
        "{}: unknown field {} is ignored{}",
        EntryPrefix(*index, target.as_deref()),
        Quoted(field),
        DidYouMean(suggestion.map(Field::as_str))
    )]
    UnknownField {
        /// 0-based position of the entry in the list.
        index: usize,
        /// `Kind/name` of the entry, when both are valid.
        target: Option<String>,
        /// The unknown key.
        field: String,
        /// The field it most likely misspells.
        suggestion: Option<Field>,
    },
    /// An entry repeats the action and target of an earlier entry; it is
    /// dropped, since each trigger fires once per run anyway.
    #[error(
        "{}: same action on the same object as entry {first}; the duplicate is ignored",
        EntryPrefix(*index, Some(target))
    )]
    Duplicate {
        /// 0-based position of the duplicate.
        index: usize,
        /// `Kind/name` of the entry.
        target: String,
        /// 0-based position of the entry that is kept.
        first: usize,
    },
}

impl TriggerWarning {
    /// The 0-based list position of the entry this warning is about.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = nbv_core::triggers::parse_triggers(
    ///     "- {apiVersion: v1, kind: Pod, name: p, action: restart}\n- {apiVersion: v1, kind: Pod, name: p, action: restart}",
    ///     "ml",
    /// ).unwrap();
    /// assert_eq!(set.warnings()[0].entry_index(), 1);
    /// ```
    pub fn entry_index(&self) -> usize {
        match self {
            TriggerWarning::UnknownField { index, .. }
            | TriggerWarning::Duplicate { index, .. } => *index,
        }
    }
}

/// The limit is part of the message; keep the text and the constant in step.
const _: () = assert!(MAX_ANNOTATION_BYTES == 64 * 1024);
