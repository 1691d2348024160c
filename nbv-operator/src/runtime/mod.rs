//! Process plumbing, independent of what the process runs.

pub mod api_error;
pub mod backoff;
pub mod client;
pub mod clock;
pub mod deadline;
pub mod depth;
pub mod heap;
pub mod leader;
pub mod monitoring;
pub mod requests;
pub mod telemetry;
pub mod watch;
