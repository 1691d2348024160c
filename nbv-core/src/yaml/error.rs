//! What goes wrong reading YAML: a bound is exceeded, or the text is not YAML of the
//! expected shape.

use std::fmt;

/// Where in the text: line and column, both counted from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} column {}", self.line, self.column)
    }
}

/// A bound of [`crate::yaml`] that the text exceeds, found before anything was built
/// from it. The message names the bound and what to change.
///
/// # Examples
///
/// ```
/// use nbv_core::yaml::{self, BoundsError};
///
/// let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
/// let error = yaml::check(&deep).unwrap_err();
/// assert!(matches!(error, BoundsError::TooDeep { max: 128, .. }));
/// assert!(error.to_string().contains("nested more than 128 levels"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoundsError {
    /// The text is longer than nbv reads.
    #[error(
        "the YAML is {bytes} bytes, more than the {max} bytes nbv reads: split it into \
         smaller files"
    )]
    TooLarge {
        /// Its length.
        bytes: usize,
        /// [`Limits::max_input_bytes`](super::Limits::max_input_bytes).
        max: usize,
    },
    /// Sequences and mappings nest deeper than nbv reads (counting what aliases
    /// insert).
    #[error(
        "{at}: nested more than {max} levels deep (sequences and mappings, with what \
         aliases insert): flatten the structure"
    )]
    TooDeep {
        /// Where the level that is too deep starts.
        at: Position,
        /// [`Limits::max_depth`](super::Limits::max_depth).
        max: usize,
    },
    /// Aliases repeat more nodes than the text writes out, beyond the share go-yaml
    /// (Argo CD's YAML parser) allows.
    #[error(
        "{at}: document contains excessive aliasing: aliases repeat {aliased} nodes beside \
         the {written} written out; write the repeated parts out, or use fewer aliases"
    )]
    ExcessiveAliasing {
        /// The alias that went over.
        at: Position,
        /// Nodes the aliases repeat so far.
        aliased: u64,
        /// Nodes written out so far (an alias counts as one).
        written: u64,
    },
    /// Aliases repeat more text than the text writes out, by the same rule applied to
    /// bytes: each repetition is a copy in memory.
    #[error(
        "{at}: document contains excessive aliasing: aliases repeat {aliased} bytes of text \
         beside the {written} written out; write the repeated parts out, or use fewer \
         aliases"
    )]
    ExcessiveAliasedText {
        /// The alias that went over.
        at: Position,
        /// Bytes of scalars and tags the aliases repeat so far.
        aliased: u64,
        /// Bytes of scalars and tags written out so far.
        written: u64,
    },
    /// An alias refers to a node that contains it, which would repeat without end.
    #[error("{at}: an alias refers to the node that contains it: remove the alias")]
    RecursiveAlias {
        /// The alias.
        at: Position,
    },
    /// serde_yaml_ng finds a document where the check found none, so it was not checked
    /// and is not read. The two parsers disagree on the text: this is not expected.
    #[error(
        "document {document} was not checked against the bounds (the YAML parsers disagree \
         on where it starts); write the stream in plain block style"
    )]
    Unchecked {
        /// The document, from 1.
        document: usize,
    },
    /// The text is not YAML.
    #[error("{message} at {at}")]
    Syntax {
        /// Where the parser stopped.
        at: Position,
        /// What it expected.
        message: String,
    },
}

/// Why [`crate::yaml::from_str`] or a document of [`crate::yaml::documents`] cannot be
/// read: a bound, or the YAML parser's own error (its message unchanged).
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// A bound is exceeded.
    #[error(transparent)]
    Bounds(#[from] BoundsError),
    /// The text is not YAML, or not of the shape asked for.
    #[error(transparent)]
    Yaml(#[from] serde_yaml_ng::Error),
}
