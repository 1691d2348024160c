//! What carrying out an on-success trigger came to, as values the shell reports and
//! the core settles ([`crate::reconcile`]).

mod outcome;

pub use outcome::{AlreadyDone, SyncReport, TriggerOutcome};
