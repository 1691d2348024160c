//! The deliberate bugs: what the simulation injects through [`Tamper`] to prove that
//! its invariants catch them (`nbv-operator/tests/simulate.rs`).

use crate::tamper::Tamper;

/// Deliberate bugs that tests switch on to prove the simulation's invariants detect
/// them. Never set by any flag, and not part of the production binary (the
/// `simulate` feature).
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::Mutation;
/// use nbv_operator::tamper::Tamper;
///
/// assert!(Mutation::ForgetLedger.forget_ledger());
/// assert!(!Mutation::ForgetLedger.effects_before_status());
/// assert!(Mutation::UpstreamOrder.effects_before_status());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// The shell never writes (nor remembers) the effect ledger `status.effects`, so
    /// every reconcile plans a run's effects again and only their own idempotency
    /// stands between a resync and a repeated trigger.
    ForgetLedger,
    /// The upstream operator's order: the GitOps effects of a terminal transition are
    /// carried out before the terminal status is written, and no ledger is kept. A
    /// status write that fails after the triggers fired (a conflict with the shell's
    /// own annotation patch, an API error) leaves a run that the next reconcile ends
    /// again, at another time, and fires again.
    UpstreamOrder,
}

impl Tamper for Mutation {
    fn forget_ledger(&self) -> bool {
        // The upstream operator keeps no ledger either.
        matches!(self, Mutation::ForgetLedger | Mutation::UpstreamOrder)
    }

    fn effects_before_status(&self) -> bool {
        *self == Mutation::UpstreamOrder
    }
}
