//! A hook that lets a test harness break the reconcile on purpose.
//!
//! The simulation's invariants are only worth something if they catch real bugs. To
//! show that they do, `nbv simulate` (the `simulate` feature) switches on deliberate
//! bugs through this trait and checks that an invariant breaks
//! (`nbv-operator/tests/simulate.rs`). Production never sets it:
//! [`Context::tamper`](crate::context::Context::tamper) is `None` in `nbv run`, and no
//! flag sets it. The bugs themselves live with the simulation
//! (`simulate::Mutation`), so the production binary carries only these two questions.

/// What the reconcile asks a tampering harness. Every answer `false` is the real
/// operator.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use nbv_operator::tamper::Tamper;
///
/// /// The bug of an operator that never keeps its ledger.
/// struct Amnesia;
///
/// impl Tamper for Amnesia {
///     fn forget_ledger(&self) -> bool {
///         true
///     }
///     fn effects_before_status(&self) -> bool {
///         false
///     }
/// }
///
/// let tamper: Option<Arc<dyn Tamper>> = Some(Arc::new(Amnesia));
/// assert!(tamper.as_ref().is_some_and(|t| t.forget_ledger()));
/// ```
pub trait Tamper: Send + Sync + 'static {
    /// Never write (nor remember) the effect ledger `status.effects`, so every
    /// reconcile plans a run's effects again.
    fn forget_ledger(&self) -> bool;

    /// Carry out the effects of a terminal transition before its status is written
    /// (the upstream operator's order) instead of after.
    fn effects_before_status(&self) -> bool;
}
