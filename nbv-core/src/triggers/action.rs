//! What a trigger does to its target.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use super::names::DidYouMean;
use super::text::{Quoted, closest};

/// What a trigger does to its target after a successful run.
///
/// Written in the annotation in exact lowercase: `restart`, `sync`, `refresh`.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::Action;
/// let action: Action = "sync".parse().unwrap();
/// assert_eq!(action, Action::Sync);
/// assert_eq!(action.to_string(), "sync");
/// let err = "Restart".parse::<Action>().unwrap_err();
/// assert_eq!(err.suggestion(), Some(Action::Restart));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Restart the workload so that it reloads (for example a new model):
    /// a rolling restart for Deployments, StatefulSets and DaemonSets, the
    /// pods of an InferenceService, the pods owned by any other kind.
    /// Not valid for an Argo CD Application.
    Restart,
    /// Start a sync of an Argo CD Application. Valid only for Applications.
    Sync,
    /// Mark the target as refreshed (annotation `mlops.dev/restart-timestamp`;
    /// for an Argo CD Application also a refresh request).
    Refresh,
}

impl Action {
    /// Every action, in the order they are listed in messages.
    pub const ALL: [Action; 3] = [Action::Restart, Action::Sync, Action::Refresh];

    /// The annotation spelling of the action.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::Action;
    /// assert_eq!(Action::Refresh.as_str(), "refresh");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Restart => "restart",
            Action::Sync => "sync",
            Action::Refresh => "refresh",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Action {
    type Err = UnknownAction;

    /// Parses the exact lowercase spelling. Anything else is an error, with a
    /// suggestion when the value differs only in case, surrounding spaces or
    /// a small typo: being lenient here would let `Restart` work in nbv but
    /// not in any other tool that reads the same annotation.
    fn from_str(value: &str) -> Result<Self, UnknownAction> {
        Action::ALL
            .into_iter()
            .find(|action| action.as_str() == value)
            .ok_or_else(|| UnknownAction {
                value: value.to_owned(),
                suggestion: closest(value, &Action::ALL.map(Action::as_str))
                    .and_then(|name| Action::ALL.into_iter().find(|a| a.as_str() == name)),
            })
    }
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A string that is not one of the [`Action`] names.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::Action;
/// let err = "Restart".parse::<Action>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown action \"Restart\"; expected one of restart, sync, refresh (did you mean \"restart\"?)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown action {}; expected one of restart, sync, refresh{}",
    Quoted(value),
    DidYouMean(suggestion.map(Action::as_str))
)]
pub struct UnknownAction {
    value: String,
    suggestion: Option<Action>,
}

impl UnknownAction {
    /// The rejected string, unabridged.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The action the user probably meant, if any is close enough.
    pub fn suggestion(&self) -> Option<Action> {
        self.suggestion
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_lowercase_only() {
        for action in Action::ALL {
            assert_eq!(action.as_str().parse::<Action>(), Ok(action));
        }
        for bad in ["RESTART", "Sync", " refresh", "refresh\n", ""] {
            assert!(bad.parse::<Action>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn suggestions() {
        let suggestion = |s: &str| s.parse::<Action>().unwrap_err().suggestion();
        assert_eq!(suggestion("REFRESH"), Some(Action::Refresh));
        assert_eq!(suggestion("snyc"), Some(Action::Sync));
        assert_eq!(suggestion("restarts"), Some(Action::Restart));
        assert_eq!(suggestion("delete"), None);
        assert_eq!(suggestion(""), None);
    }
}
