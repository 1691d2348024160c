//! Fault injection: make chosen requests fail the way a real API server or network can.

use std::time::Duration;

use http::StatusCode;

use super::log::VerbKind;

/// Which requests a fault applies to. `None` fields match anything.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::{FaultMatch, VerbKind};
///
/// let m = FaultMatch::verb(VerbKind::Patch).resource("applications").name("guestbook");
/// assert_eq!(m.verb, Some(VerbKind::Patch));
/// assert_eq!(FaultMatch::any(), FaultMatch::default());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultMatch {
    /// The verb, if only one verb should fail.
    pub verb: Option<VerbKind>,
    /// The plural resource name (`pods`), which also matches its subresources, or
    /// `plural/subresource` (`pods/status`) to match only that subresource.
    pub resource: Option<String>,
    /// The object name from the URL (collection requests have none and never match).
    pub name: Option<String>,
}

impl FaultMatch {
    /// Matches every request.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FaultMatch;
    ///
    /// assert!(FaultMatch::any().verb.is_none());
    /// ```
    pub fn any() -> Self {
        Self::default()
    }

    /// Matches requests with `verb`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::{FaultMatch, VerbKind};
    ///
    /// assert_eq!(FaultMatch::verb(VerbKind::Get).verb, Some(VerbKind::Get));
    /// ```
    pub fn verb(verb: VerbKind) -> Self {
        Self {
            verb: Some(verb),
            ..Self::default()
        }
    }

    /// Restricts to `resource` (a plural, or `plural/subresource`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FaultMatch;
    ///
    /// assert_eq!(FaultMatch::any().resource("pods/status").resource.as_deref(), Some("pods/status"));
    /// ```
    #[must_use]
    pub fn resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.to_owned());
        self
    }

    /// Restricts to the object `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FaultMatch;
    ///
    /// assert_eq!(FaultMatch::any().name("web").name.as_deref(), Some("web"));
    /// ```
    #[must_use]
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    pub(crate) fn matches(
        &self,
        verb: VerbKind,
        resource: &str,
        subresource: Option<&str>,
        name: Option<&str>,
    ) -> bool {
        let verb_ok = self.verb.is_none_or(|v| v == verb);
        let resource_ok =
            self.resource
                .as_deref()
                .is_none_or(|wanted| match wanted.split_once('/') {
                    Some((plural, sub)) => plural == resource && subresource == Some(sub),
                    None => wanted == resource,
                });
        let name_ok = self
            .name
            .as_deref()
            .is_none_or(|wanted| name == Some(wanted));
        verb_ok && resource_ok && name_ok
    }
}

/// What happens to a matching request.
///
/// # Examples
///
/// ```
/// use http::StatusCode;
/// use nbv_testkit::cluster::FaultEffect;
///
/// let effect = FaultEffect::Status(StatusCode::SERVICE_UNAVAILABLE);
/// assert_ne!(effect, FaultEffect::AfterCommit(StatusCode::SERVICE_UNAVAILABLE));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultEffect {
    /// Answer with this status (a `metav1.Status` with the matching reason) without
    /// touching any state.
    Status(StatusCode),
    /// Wait this long (in Tokio time, so virtual under a paused clock), then answer
    /// 504 Timeout without touching any state.
    Timeout(Duration),
    /// Only for watch requests: accept the watch, then end its stream at once, as a
    /// dropped connection does. (To end watches that are already open, call
    /// [`FakeCluster::drop_watches`](super::FakeCluster::drop_watches).)
    DropWatch,
    /// Carry out the request, then answer with this status instead of the result: a
    /// response lost after the write was committed.
    AfterCommit(StatusCode),
}

/// How many times a fault fires before it is used up.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::Times;
///
/// assert_ne!(Times::Once, Times::Always);
/// assert_eq!(Times::N(1), Times::N(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Times {
    /// The first matching request only.
    Once,
    /// The first `n` matching requests (`N(0)` never fires).
    N(u32),
    /// Every matching request, until [`FakeCluster::clear_faults`](super::FakeCluster::clear_faults).
    Always,
}

/// A fault to inject with [`FakeCluster::inject`](super::FakeCluster::inject).
///
/// Faults are checked in the order they were injected; the first one that matches a
/// request fires (and uses up one of its `times`).
///
/// # Examples
///
/// ```
/// use http::StatusCode;
/// use nbv_testkit::cluster::{Fault, FaultMatch, Times, VerbKind};
///
/// let fault = Fault::new(FaultMatch::verb(VerbKind::Create), Fault::status(500), Times::Once);
/// assert_eq!(fault.times, Times::Once);
/// assert_eq!(Fault::status(500), nbv_testkit::cluster::FaultEffect::Status(StatusCode::INTERNAL_SERVER_ERROR));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Which requests it applies to.
    pub matcher: FaultMatch,
    /// What happens to them.
    pub effect: FaultEffect,
    /// How often.
    pub times: Times,
}

impl Fault {
    /// A fault from its three parts.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::{Fault, FaultEffect, FaultMatch, Times};
    ///
    /// let fault = Fault::new(FaultMatch::any(), FaultEffect::DropWatch, Times::Always);
    /// assert_eq!(fault.effect, FaultEffect::DropWatch);
    /// ```
    pub fn new(matcher: FaultMatch, effect: FaultEffect, times: Times) -> Self {
        Self {
            matcher,
            effect,
            times,
        }
    }

    /// [`FaultEffect::Status`] from a numeric code; codes outside 100..=999 become 500.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::StatusCode;
    /// use nbv_testkit::cluster::{Fault, FaultEffect};
    ///
    /// assert_eq!(Fault::status(429), FaultEffect::Status(StatusCode::TOO_MANY_REQUESTS));
    /// assert_eq!(Fault::status(7), FaultEffect::Status(StatusCode::INTERNAL_SERVER_ERROR));
    /// ```
    pub fn status(code: u16) -> FaultEffect {
        FaultEffect::Status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
    }
}

/// A fault with its remaining uses.
#[derive(Debug)]
struct Armed {
    fault: Fault,
    /// `None`: unlimited.
    remaining: Option<u32>,
}

/// The injected faults, in injection order.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    armed: Vec<Armed>,
}

impl Faults {
    pub(crate) fn inject(&mut self, fault: Fault) {
        let remaining = match fault.times {
            Times::Once => Some(1),
            Times::N(0) => return,
            Times::N(n) => Some(n),
            Times::Always => None,
        };
        self.armed.push(Armed { fault, remaining });
    }

    pub(crate) fn clear(&mut self) {
        self.armed.clear();
    }

    /// Fires the first fault matching the request, if any, using up one of its uses.
    pub(crate) fn take(
        &mut self,
        verb: VerbKind,
        resource: &str,
        subresource: Option<&str>,
        name: Option<&str>,
    ) -> Option<FaultEffect> {
        let index = self.armed.iter().position(|a| {
            let applies = a.fault.effect != FaultEffect::DropWatch || verb == VerbKind::Watch;
            applies && a.fault.matcher.matches(verb, resource, subresource, name)
        })?;
        let armed = &mut self.armed[index];
        let effect = armed.fault.effect;
        if let Some(remaining) = armed.remaining.as_mut() {
            *remaining = remaining.saturating_sub(1);
            if *remaining == 0 {
                self.armed.remove(index);
            }
        }
        Some(effect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_counted_and_order_is_injection_order() {
        let mut faults = Faults::default();
        faults.inject(Fault::new(
            FaultMatch::verb(VerbKind::Get),
            Fault::status(500),
            Times::N(2),
        ));
        faults.inject(Fault::new(
            FaultMatch::any(),
            Fault::status(503),
            Times::Always,
        ));
        faults.inject(Fault::new(
            FaultMatch::any(),
            Fault::status(429),
            Times::N(0),
        ));
        let take = |f: &mut Faults| f.take(VerbKind::Get, "pods", None, Some("a"));
        assert_eq!(take(&mut faults), Some(Fault::status(500)));
        assert_eq!(take(&mut faults), Some(Fault::status(500)));
        assert_eq!(take(&mut faults), Some(Fault::status(503)));
        assert_eq!(take(&mut faults), Some(Fault::status(503)));
        faults.clear();
        assert_eq!(take(&mut faults), None);
    }

    #[test]
    fn matching_rules() {
        let m = FaultMatch::any().resource("pods/status");
        assert!(m.matches(VerbKind::Patch, "pods", Some("status"), Some("a")));
        assert!(!m.matches(VerbKind::Patch, "pods", None, Some("a")));
        let m = FaultMatch::any().resource("pods").name("a");
        assert!(m.matches(VerbKind::Patch, "pods", Some("status"), Some("a")));
        assert!(!m.matches(VerbKind::List, "pods", None, None));
        assert!(!m.matches(VerbKind::Get, "configmaps", None, Some("a")));
    }

    #[test]
    fn drop_watch_only_fires_on_watches() {
        let mut faults = Faults::default();
        faults.inject(Fault::new(
            FaultMatch::any(),
            FaultEffect::DropWatch,
            Times::Once,
        ));
        assert_eq!(faults.take(VerbKind::List, "pods", None, None), None);
        assert_eq!(
            faults.take(VerbKind::Watch, "pods", None, None),
            Some(FaultEffect::DropWatch)
        );
        assert_eq!(faults.take(VerbKind::Watch, "pods", None, None), None);
    }
}
