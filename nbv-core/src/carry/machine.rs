//! The shape every machine of this module has, so that a shell drives them all with
//! one loop.

use crate::io::{Response, Step};
use crate::reconcile::ApiAnswer;

use super::Failure;

/// A sans-IO machine: asked [`next`](Machine::next), it names one request to carry
/// out (then [`answer`](Machine::answer) it) or gives its result. Once done, it stays
/// done: every later `next` gives the same result and asks nothing.
///
/// # Examples
///
/// A shell's loop (here over scripted answers):
///
/// ```
/// use nbv_core::carry::{Machine, NamespaceOptIn};
/// use nbv_core::io::{Response, Step};
///
/// let mut opt_in = NamespaceOptIn::start("serving");
/// let accepts = loop {
///     match opt_in.next() {
///         Step::Io(request) => {
///             assert_eq!(request.to_string(), "GET Namespace serving");
///             opt_in.answer(Response::Object(Some(serde_json::json!({"metadata": {
///                 "annotations": {"mlops.dev/accept-triggers-from": "ml"}}}))));
///         }
///         Step::Done(result) => break result,
///     }
/// };
/// assert_eq!(accepts, Ok(Some("ml".to_owned())));
/// ```
pub trait Machine {
    /// What the machine comes to.
    type Output;

    /// The next request, or the result.
    fn next(&mut self) -> Step<Self::Output>;

    /// What came of the request [`next`](Machine::next) asked for.
    fn answer(&mut self, response: Response);
}

/// A response that does not fit the request (a shell's mistake): a failure that is
/// retried, so that nothing is decided on it.
pub(super) fn unexpected(request: &str, response: &Response) -> Failure {
    Failure::Transient {
        request: request.to_owned(),
        answer: ApiAnswer::no_answer(format!("unexpected answer {response:?}")),
    }
}

/// The request of a child machine that is not done: a parent leaves a finished child
/// at once (in its `answer`), so it never asks one for its result here.
pub(super) fn forward<T, U>(step: Step<T>) -> Step<U> {
    match step {
        Step::Io(request) => Step::Io(request),
        Step::Done(_) => unreachable!("a finished child machine is left at once"),
    }
}
