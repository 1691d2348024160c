//! `nbv wait --namespace NS --wave N [--timeout D]`: block until wave N may proceed.
//!
//! Run as an Argo CD `PreSync` hook (see `docs/wait.md`), it holds back a sync until
//! every `NotebookValidationJob` of the namespace whose `mlops.dev/block-wave` is N has
//! completed its own wave, and fails the sync as soon as one of them has failed. The
//! decision is [`nbv_core::waves::gate`]'s; this command only feeds it.
//!
//! The jobs are read with a watch (one LIST, then a WATCH that streams changes), never
//! with a loop of LISTs, and the gate is evaluated only on a complete view of the
//! namespace: after the initial list and after each change, never in the middle of a
//! (re)list, where a job not yet listed could make the gate look open.
//!
//! # Exit codes
//!
//! | Code | [`WaitStatus`]               | Meaning                                               |
//! |------|------------------------------|-------------------------------------------------------|
//! | 0    | [`WaitStatus::Open`]         | wave N may proceed                                    |
//! | 1    | [`WaitStatus::Failed`]       | a blocking job failed or is misconfigured             |
//! | 2    | [`WaitStatus::TimedOut`]     | `--timeout` passed while still waiting                |
//! | 3    | [`WaitStatus::Unreadable`]   | the jobs cannot be read: access refused (401/403) or  |
//! |      |                              | the NotebookValidationJob API is not served (404)     |
//!
//! Other API errors (the API server restarting, a network blip, 5xx, 429) are printed
//! to standard error and retried with kube-runtime's default backoff, within the
//! timeout.

mod jobs;
mod report;

use std::io::Write;
use std::pin::pin;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::reflector::{self, store::Writer};
use kube::runtime::watcher;
use nbv_core::api::NotebookValidationJob;
use nbv_core::text::truncate_chars;
use nbv_core::waves::{GateDecision, Wave};

use crate::runtime::backoff::WatchBackoff;

/// Writes a duration as `--timeout` reads it (`1h30m`, `1.5s`), for messages.
pub use nbv_core::duration::format as format_duration;
pub use nbv_core::duration::{InvalidDuration, parse_duration};

/// The arguments of `nbv wait`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_operator::wait::{parse_duration, WaitArgs};
///
/// let args = WaitArgs {
///     namespace: "ml-pipeline".into(),
///     wave: 4,
///     timeout: Some(parse_duration("2h")?),
/// };
/// assert_eq!(args.timeout, Some(Duration::from_secs(7200)));
/// # Ok::<(), nbv_operator::wait::InvalidDuration>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitArgs {
    /// The namespace whose jobs may block the wave.
    pub namespace: String,
    /// The gated wave: jobs with `mlops.dev/block-wave: <wave>` block it.
    pub wave: i64,
    /// How long to wait at most; `None` waits until the gate opens or fails. A zero
    /// timeout gives up at once.
    pub timeout: Option<Duration>,
}

/// How `nbv wait` ended; [`WaitStatus::code`] is the process exit code.
///
/// # Examples
///
/// ```
/// use nbv_operator::wait::WaitStatus;
///
/// assert_eq!(WaitStatus::Open.code(), 0);
/// assert_eq!(WaitStatus::Unreadable.code(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitStatus {
    /// The wave may proceed (exit code 0).
    Open,
    /// A blocking job failed or cannot be evaluated; waiting would not help (exit 1).
    Failed,
    /// The timeout passed while the gate was still closed (exit 2).
    TimedOut,
    /// The jobs cannot be read: access refused, the API is not served, or the watch
    /// ended, which kube-runtime's watcher does not do on its own (exit 3).
    Unreadable,
}

impl WaitStatus {
    /// The process exit code.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::wait::WaitStatus;
    ///
    /// assert_eq!(WaitStatus::TimedOut.code(), 2);
    /// ```
    pub const fn code(self) -> u8 {
        match self {
            WaitStatus::Open => 0,
            WaitStatus::Failed => 1,
            WaitStatus::TimedOut => 2,
            WaitStatus::Unreadable => 3,
        }
    }
}

/// Waits until wave `args.wave` may proceed, printing progress to `out` and problems to
/// `err`, and returns the exit code (see [`WaitStatus`]).
///
/// Prints the gate's own messages ([`GateDecision`]'s `Display`): to `out`, `wave N is
/// open: ...` when it opens and `wave N is waiting on 2 jobs: a, b` whenever the set of
/// jobs still awaited changes; to `err`, `wave N cannot proceed: ...` followed by the
/// evidence of each failed run (its `status.phase` and `mlops.dev/wave-failed`), API
/// errors as they happen, and what was still awaited at a timeout. Write errors on
/// `out` and `err` are ignored: the exit code carries the outcome.
///
/// # Examples
///
/// ```no_run
/// use nbv_operator::wait::{wait, WaitArgs};
///
/// # async fn example(client: kube::Client) {
/// let args = WaitArgs { namespace: "ml".into(), wave: 4, timeout: None };
/// let code = wait(client, &args, &mut std::io::stdout(), &mut std::io::stderr()).await;
/// std::process::exit(i32::from(code));
/// # }
/// ```
pub async fn wait(
    client: kube::Client,
    args: &WaitArgs,
    out: &mut (impl Write + Send),
    err: &mut (impl Write + Send),
) -> u8 {
    run(client, args, out, err).await.code()
}

/// What the watch has shown so far, for messages.
#[derive(Default)]
struct Progress {
    /// The last `Waiting` decision printed; `None` before the first one.
    waiting: Option<GateDecision>,
    /// The last API error, while no complete view was seen.
    last_error: Option<String>,
}

async fn run(
    client: kube::Client,
    args: &WaitArgs,
    out: &mut (impl Write + Send),
    err: &mut (impl Write + Send),
) -> WaitStatus {
    let wave = Wave::new(args.wave);
    let resource = ApiResource::erase::<NotebookValidationJob>(&());
    let api = Api::<DynamicObject>::namespaced_with(client, &args.namespace, &resource);
    let writer = Writer::new(resource);
    let store = writer.as_reader();
    let mut events = pin!(
        reflector::reflector(writer, watcher(api, crate::runtime::watch::config()))
            .patient_backoff()
    );
    let timeout = args.timeout;
    let mut deadline = pin!(async move {
        match timeout {
            Some(timeout) => tokio::time::sleep(timeout).await,
            None => std::future::pending().await,
        }
    });
    let mut progress = Progress::default();
    loop {
        let event = tokio::select! {
            biased;
            () = &mut deadline => {
                let _ = writeln!(err, "{}", timed_out(args, &progress));
                return WaitStatus::TimedOut;
            }
            event = events.next() => event,
        };
        match event {
            None => {
                let _ = writeln!(
                    err,
                    "error: the watch of NotebookValidationJobs in namespace {} ended; \
                     run nbv wait again",
                    args.namespace
                );
                return WaitStatus::Unreadable;
            }
            Some(Err(error)) => {
                if let Some(message) = refusal(&error, &args.namespace) {
                    let _ = writeln!(err, "error: {message}");
                    return WaitStatus::Unreadable;
                }
                let message = format!(
                    "cannot read NotebookValidationJobs in namespace {}: {}; retrying",
                    args.namespace,
                    describe(&error)
                );
                let _ = writeln!(err, "error: {message}");
                if progress.waiting.is_none() {
                    progress.last_error = Some(message);
                }
            }
            // The store is incomplete until InitDone: evaluating now could open the
            // gate before the blocking job is listed.
            Some(Ok(watcher::Event::Init | watcher::Event::InitApply(_))) => {}
            Some(Ok(
                watcher::Event::InitDone | watcher::Event::Apply(_) | watcher::Event::Delete(_),
            )) => {
                let all = store.state();
                let decision = jobs::decide(wave, &all);
                match &decision {
                    GateDecision::Open { .. } => {
                        let _ = writeln!(out, "{decision}");
                        return WaitStatus::Open;
                    }
                    GateDecision::Failed { failed, .. } => {
                        let _ = writeln!(err, "{decision}");
                        for line in report::evidence(failed, &all) {
                            let _ = writeln!(err, "  {line}");
                        }
                        return WaitStatus::Failed;
                    }
                    GateDecision::Waiting { .. } => {
                        if progress.waiting.as_ref() != Some(&decision) {
                            let _ = writeln!(out, "{decision}");
                            progress.waiting = Some(decision);
                        }
                    }
                }
            }
        }
    }
}

/// The message for a timeout: what was still awaited, or why nothing could be read.
fn timed_out(args: &WaitArgs, progress: &Progress) -> String {
    let after = args.timeout.map(format_duration).unwrap_or_default();
    match (&progress.waiting, &progress.last_error) {
        (Some(waiting), _) => format!("timed out after {after}: {waiting}"),
        (None, Some(error)) => format!(
            "timed out after {after} before the jobs of namespace {} could be read; \
             last error: {error}",
            args.namespace
        ),
        (None, None) => format!(
            "timed out after {after} before the jobs of namespace {} could be read",
            args.namespace
        ),
    }
}

/// How many characters of a message from the API server an error line shows.
const MAX_MESSAGE_CHARS: usize = 300;
/// Ends a message of the API server that was cut to [`MAX_MESSAGE_CHARS`].
const MESSAGE_CUT_MARKER: &str = "...";

/// A watch error in one line: what failed, the HTTP status and the API server's
/// message, without the debug dump of kube's own `Display`.
fn describe(error: &watcher::Error) -> String {
    match error {
        watcher::Error::InitialListFailed(error) => {
            format!("listing failed: {}", client_error(error))
        }
        watcher::Error::WatchStartFailed(error) => {
            format!("starting the watch failed: {}", client_error(error))
        }
        watcher::Error::WatchFailed(error) => format!("the watch broke: {}", client_error(error)),
        watcher::Error::WatchError(status) => {
            format!("the watch returned an error: {}", api_status(status))
        }
        other => other.to_string(),
    }
}

fn client_error(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => api_status(status),
        // Transport errors keep their cause in the source chain.
        other => cut(&crate::runtime::api_error::with_causes(other)),
    }
}

fn api_status(status: &kube::core::Status) -> String {
    cut(&format!(
        "HTTP {} {}: {}",
        status.code, status.reason, status.message
    ))
}

fn cut(text: &str) -> String {
    truncate_chars(text, MAX_MESSAGE_CHARS, MESSAGE_CUT_MARKER).into_owned()
}

/// The message for an error that retrying cannot fix, or `None` for one worth
/// retrying.
fn refusal(error: &watcher::Error, namespace: &str) -> Option<String> {
    let (status, listing) = match error {
        watcher::Error::InitialListFailed(kube::Error::Api(status)) => (status, true),
        watcher::Error::WatchStartFailed(kube::Error::Api(status))
        | watcher::Error::WatchFailed(kube::Error::Api(status)) => (status, false),
        watcher::Error::WatchError(status) => (status, false),
        _ => return None,
    };
    let resource = "notebookvalidationjobs.mlops.mlops.dev";
    match status.code {
        401 => Some(format!(
            "the API server did not accept nbv wait's credentials ({}); check the service \
             account token of the hook's Pod, or the user of the kubeconfig context",
            cut(&status.message)
        )),
        403 => Some(format!(
            "access to {resource} in namespace {namespace} was refused ({}); grant the hook's \
             service account list and watch on notebookvalidationjobs \
             (apiGroup mlops.mlops.dev) in namespace {namespace}, see docs/wait.md",
            cut(&status.message)
        )),
        404 if listing => Some(format!(
            "the API server does not serve {resource} ({}); install the \
             NotebookValidationJob CRD (nbv crd | kubectl apply -f -)",
            cut(&status.message)
        )),
        _ => None,
    }
}
