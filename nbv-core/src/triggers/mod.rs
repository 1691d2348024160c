//! Parsing and validating the post-success trigger annotation,
//! [`mlops.dev/on-success-trigger`](crate::annotations::ON_SUCCESS_TRIGGER).
//!
//! Its value is a YAML list; each entry names an object and what to do to it
//! when a run of the job succeeds:
//!
//! ```yaml
//! - apiVersion: serving.kserve.io/v1beta1
//!   kind: InferenceService
//!   name: predictive-analytics
//!   namespace: self-healing-platform   # optional: the job's namespace (an Application's:
//!                                      # Argo CD's, see NamespaceDefaults)
//!   action: restart                    # restart | sync | refresh
//! ```
//!
//! [`parse_triggers`] turns the value into a [`TriggerSet`] or, if anything is
//! wrong, into [`TriggerErrors`] listing every problem with its entry index
//! and field. One bad entry makes the whole annotation invalid: a caller fires
//! nothing rather than a part of what the user asked for. Unknown fields and
//! repeated triggers are warnings, not errors.
//!
//! Hostile input is cheap: a value over [`MAX_ANNOTATION_BYTES`] is rejected
//! before parsing, YAML anchors and aliases are rejected at the first one (so
//! an alias bomb is never expanded), and nesting depth and node counts are
//! bounded. The rules are documented for users in `docs/triggers.md`.
//!
//! # Examples
//!
//! ```
//! use nbv_core::triggers::{Action, parse_triggers};
//! let value = "
//! - apiVersion: serving.kserve.io/v1beta1
//!   kind: InferenceService
//!   name: predictive-analytics
//!   action: restart
//! ";
//! let set = parse_triggers(value, "ml-platform").unwrap();
//! let trigger = &set.triggers()[0];
//! assert_eq!(trigger.action(), Action::Restart);
//! assert_eq!(trigger.target().namespace().as_str(), "ml-platform");
//! ```

mod action;
mod api_version;
mod entry;
mod error;
mod names;
mod subset;
mod target;
mod text;
mod yaml;

use std::collections::BTreeMap;
use std::collections::HashSet;
use std::collections::hash_map::{Entry, HashMap};
use std::fmt::Write as _;

use serde::{Serialize, Serializer};

pub use action::{Action, UnknownAction};
pub use api_version::{ApiVersion, InvalidApiVersion};
pub use error::{
    Field, FieldProblem, TriggerError, TriggerErrors, TriggerWarning, ValueKind, YamlLocation,
};
pub use names::{
    Kind, KindError, KindProblem, NameError, NameKind, NameProblem, Namespace, ObjectName,
};
pub use target::{ActionNotSupported, TargetRef, Trigger};
mod access;
pub use access::{
    ACCEPT_TRIGGERS_FROM, AccessFacts, Grant, Refusal, TriggerAccess, in_cluster_destination,
};

use crate::annotations::ON_SUCCESS_TRIGGER;
use yaml::Node;

/// Argo CD's control-plane namespace when nothing else is configured.
pub const DEFAULT_ARGOCD_NAMESPACE: &str = "argocd";

/// The namespace of a trigger entry that names none: its job's, except for an Argo CD
/// Application, which (as in the Argo CD API and CLI) is in Argo CD's control-plane
/// namespace, `argocd` unless the operator says otherwise.
///
/// A job's namespace converts into defaults with the `argocd` control-plane namespace.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{parse_triggers, NamespaceDefaults};
///
/// let value = "
/// - {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, action: sync}
/// - {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}
/// ";
/// let set = parse_triggers(value, "ml").unwrap();
/// assert_eq!(set.triggers()[0].target().namespace().as_str(), "argocd");
/// assert_eq!(set.triggers()[1].target().namespace().as_str(), "ml");
///
/// let custom = NamespaceDefaults { job_namespace: "ml", argocd_namespace: "gitops" };
/// let set = parse_triggers(value, custom).unwrap();
/// assert_eq!(set.triggers()[0].target().namespace().as_str(), "gitops");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceDefaults<'a> {
    /// The namespace of the job that carries the annotation.
    pub job_namespace: &'a str,
    /// Argo CD's control-plane namespace.
    pub argocd_namespace: &'a str,
}

impl<'a> From<&'a str> for NamespaceDefaults<'a> {
    fn from(job_namespace: &'a str) -> Self {
        NamespaceDefaults {
            job_namespace,
            argocd_namespace: DEFAULT_ARGOCD_NAMESPACE,
        }
    }
}

impl<'a> From<&'a String> for NamespaceDefaults<'a> {
    fn from(job_namespace: &'a String) -> Self {
        NamespaceDefaults::from(job_namespace.as_str())
    }
}

/// The largest annotation value that is parsed, in bytes (64 KiB). Anything
/// larger is rejected without being parsed: a real trigger list is a few
/// hundred bytes, and the bound caps the parser's work on hostile input.
pub const MAX_ANNOTATION_BYTES: usize = 64 * 1024;

/// The valid triggers of an annotation, in list order, without duplicates,
/// and the warnings found while reading it.
///
/// Serialises to the annotation form (a list of entries with every
/// namespace written out), which parses back to the same set.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::parse_triggers;
/// let value = "
/// - {apiVersion: apps/v1, kind: Deployment, name: model-server, action: restart}
/// - {apiVersion: apps/v1, kind: Deployment, name: model-server, action: restart}
/// ";
/// let set = parse_triggers(value, "ml").unwrap();
/// assert_eq!(set.len(), 1);
/// assert_eq!(set.warnings().len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TriggerSet {
    triggers: Vec<Trigger>,
    warnings: Vec<TriggerWarning>,
}

impl TriggerSet {
    /// The triggers, in the order of the list (duplicates removed, the first
    /// occurrence kept).
    pub fn triggers(&self) -> &[Trigger] {
        &self.triggers
    }

    /// Warnings: unknown fields (ignored) and duplicate triggers (dropped).
    pub fn warnings(&self) -> &[TriggerWarning] {
        &self.warnings
    }

    /// Number of triggers.
    pub fn len(&self) -> usize {
        self.triggers.len()
    }

    /// Whether there is no trigger.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(nbv_core::triggers::parse_triggers("[]", "ml").unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.triggers.is_empty()
    }

    /// Iterates over the triggers.
    pub fn iter(&self) -> std::slice::Iter<'_, Trigger> {
        self.triggers.iter()
    }

    /// The canonical annotation value for these triggers: block style, one
    /// entry per trigger, every namespace written out, every value in double
    /// quotes. It parses back to the same triggers, whatever the job's
    /// namespace.
    ///
    /// Quoting every value is not decoration: `1e3`, `true`, `null` and
    /// `0x1f` are valid Kubernetes names that YAML reads as numbers, booleans
    /// or null when unquoted, and emitters disagree on which of them need
    /// quotes (YAML 1.1 reads `1e3` as a string, YAML 1.2 as a number).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::parse_triggers;
    /// let set = parse_triggers("- {apiVersion: v1, kind: Pod, name: '1e3', action: restart}", "ml").unwrap();
    /// let value = set.to_annotation_value();
    /// assert_eq!(
    ///     value,
    ///     "- apiVersion: \"v1\"\n  kind: \"Pod\"\n  name: \"1e3\"\n  namespace: \"ml\"\n  action: \"restart\"\n"
    /// );
    /// assert_eq!(parse_triggers(&value, "other").unwrap(), set);
    /// ```
    pub fn to_annotation_value(&self) -> String {
        let mut out = String::new();
        for trigger in &self.triggers {
            let target = trigger.target();
            // The validated types allow neither '"' nor '\', so plain double
            // quotes need no escaping.
            let _ = write!(
                out,
                "- apiVersion: \"{}\"\n  kind: \"{}\"\n  name: \"{}\"\n  namespace: \"{}\"\n  action: \"{}\"\n",
                target.api_version(),
                target.kind(),
                target.name(),
                target.namespace(),
                trigger.action(),
            );
        }
        out
    }
}

/// Collects triggers into a set the way parsing does: in order, a trigger
/// with the same [`key`](Trigger::key) as an earlier one is dropped. (No
/// warnings: they describe annotation text, and there is none here.)
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{parse_triggers, TriggerSet};
/// let parsed = parse_triggers(
///     "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}",
///     "ml",
/// ).unwrap();
/// let doubled: TriggerSet = parsed.iter().chain(parsed.iter()).cloned().collect();
/// assert_eq!(doubled, parsed);
/// ```
impl FromIterator<Trigger> for TriggerSet {
    fn from_iter<I: IntoIterator<Item = Trigger>>(iter: I) -> Self {
        let mut seen = HashSet::new();
        let triggers = iter
            .into_iter()
            .filter(|trigger| seen.insert(trigger.key()))
            .collect();
        Self {
            triggers,
            warnings: Vec::new(),
        }
    }
}

impl<'a> IntoIterator for &'a TriggerSet {
    type Item = &'a Trigger;
    type IntoIter = std::slice::Iter<'a, Trigger>;

    fn into_iter(self) -> Self::IntoIter {
        self.triggers.iter()
    }
}

impl Serialize for TriggerSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(&self.triggers)
    }
}

/// Parses and validates the value of the trigger annotation.
///
/// `defaults` gives the namespace of every entry that does not name one: the job's
/// (pass the job's namespace), or Argo CD's for an Application ([`NamespaceDefaults`]).
///
/// An empty or whitespace-only value, a value with only comments, YAML null
/// (`~`, `null`) and the empty list `[]` all mean "no triggers".
///
/// # Errors
///
/// [`TriggerErrors`] with every problem found: the value is too large, is
/// not well-formed YAML, uses anchors or aliases, repeats a key, is not a
/// list; or entries that are not mappings, miss a required field, have a
/// field of the wrong type or an invalid value. Each entry problem names the
/// entry's 0-based index and the field.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::parse_triggers;
/// let value = "
/// - apiVersion: serving.kserve.io/v1beta1
///   kind: InferenceService
///   name: predictive-analytics
///   action: Restart
/// ";
/// let errors = parse_triggers(value, "ml").unwrap_err();
/// assert_eq!(
///     errors.to_string(),
///     "entry 0 (InferenceService/predictive-analytics): field \"action\": unknown action \
///      \"Restart\"; expected one of restart, sync, refresh (did you mean \"restart\"?)"
/// );
/// ```
pub fn parse_triggers<'a>(
    value: &str,
    defaults: impl Into<NamespaceDefaults<'a>>,
) -> Result<TriggerSet, TriggerErrors> {
    let defaults = defaults.into();
    let fail = |error: TriggerError| Err(TriggerErrors::new(vec![error], Vec::new()));
    if value.len() > MAX_ANNOTATION_BYTES {
        return fail(TriggerError::TooLarge {
            size: value.len(),
            max: MAX_ANNOTATION_BYTES,
        });
    }
    // YAML's own whitespace, not Unicode's: an em space is a YAML string.
    if value.chars().all(|c| matches!(c, ' ' | '\t' | '\n' | '\r')) {
        return Ok(TriggerSet::default());
    }
    let entries = match parse_tree(value) {
        Err(error) => return fail(error),
        Ok(Node::Null) => return Ok(TriggerSet::default()),
        Ok(Node::List(entries)) => entries,
        Ok(other) => {
            return fail(TriggerError::NotAList {
                found: other.kind(),
            });
        }
    };

    let mut triggers = Vec::new();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut first_index_of_key = HashMap::new();
    for (index, node) in entries.iter().enumerate() {
        let checked = entry::check(index, node, &defaults);
        errors.extend(checked.errors);
        warnings.extend(checked.warnings);
        let Some(trigger) = checked.trigger else {
            continue;
        };
        match first_index_of_key.entry(trigger.key()) {
            Entry::Occupied(first) => warnings.push(TriggerWarning::Duplicate {
                index,
                target: format!("{}/{}", trigger.target().kind(), trigger.target().name()),
                first: *first.get(),
            }),
            Entry::Vacant(slot) => {
                slot.insert(index);
                triggers.push(trigger);
            }
        }
    }
    if errors.is_empty() {
        Ok(TriggerSet { triggers, warnings })
    } else {
        Err(TriggerErrors::new(errors, warnings))
    }
}

/// Parses `value` (already size-checked) into a tree: by the subset reader when the
/// value is written in the usual few shapes ([`subset`]), by the general parser
/// otherwise. Both give the same tree; errors always come from the general parser.
fn parse_tree(value: &str) -> Result<Node, TriggerError> {
    match subset::parse(value) {
        Some(node) => Ok(node),
        None => yaml::parse_general(value),
    }
}

/// Reads the trigger annotation from a job's annotations; no annotation
/// means no triggers.
///
/// # Errors
///
/// As [`parse_triggers`], when the annotation is present.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::annotations::ON_SUCCESS_TRIGGER;
/// use nbv_core::triggers::from_annotations;
///
/// let mut annotations = BTreeMap::new();
/// assert!(from_annotations(&annotations, "ml").unwrap().is_empty());
///
/// annotations.insert(
///     ON_SUCCESS_TRIGGER.to_owned(),
///     "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}".to_owned(),
/// );
/// assert_eq!(from_annotations(&annotations, "ml").unwrap().len(), 1);
/// ```
pub fn from_annotations<'a>(
    annotations: &BTreeMap<String, String>,
    defaults: impl Into<NamespaceDefaults<'a>>,
) -> Result<TriggerSet, TriggerErrors> {
    match annotations.get(ON_SUCCESS_TRIGGER) {
        Some(value) => parse_triggers(value, defaults),
        None => Ok(TriggerSet::default()),
    }
}
