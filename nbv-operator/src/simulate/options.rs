//! What a simulation runs with besides its scenario.

use super::mutation::Mutation;

/// How a simulation runs, beyond its scenario.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::Options;
///
/// let options = Options { seed: 7, ..Options::default() };
/// assert!(options.mutation.is_none());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Seeds the jitter of kube-runtime's retry backoff, the one random choice inside
    /// the operator's libraries.
    pub seed: u64,
    /// A deliberate bug to switch on in the operator (tests of the invariants only),
    /// wrapped around the I/O of its reconciles ([`Mutation::layer`]).
    pub mutation: Option<Mutation>,
}
