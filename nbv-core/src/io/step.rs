//! What a machine says when asked what is next.

use super::Request;

/// The next thing a sans-IO machine needs: an I/O request to carry out and answer
/// (with the machine's `answer`), or its result.
///
/// # Examples
///
/// ```
/// use nbv_core::io::{ObjectRef, Request, Step};
///
/// let step: Step<u32> = Step::Io(Request::Get(ObjectRef::cluster("v1", "Namespace", "ml")));
/// assert!(step.request().is_some());
/// assert_eq!(Step::<u32>::Done(7).request(), None);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Step<T> {
    /// Carry this request out and answer it.
    Io(Request),
    /// The machine is done.
    Done(T),
}

impl<T> Step<T> {
    /// The request, if the machine asks for one.
    pub fn request(&self) -> Option<&Request> {
        match self {
            Step::Io(request) => Some(request),
            Step::Done(_) => None,
        }
    }
}
