//! Noticing panics anywhere in the simulated operator.
//!
//! Tokio catches a panic inside a spawned task and keeps it in the task's `JoinHandle`,
//! which nobody may be holding (the operator spawns its publisher and watchers itself).
//! A panic hook sees every panic first. Everything in a simulation runs on the thread
//! of its current-thread runtime, so a per-thread record holds exactly the panics of
//! the simulation running on this thread, even when several run in parallel (tests).

use std::cell::RefCell;
use std::sync::Once;

thread_local! {
    static PANICS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

static HOOK: Once = Once::new();

/// Starts recording the panics of this thread (installing the hook once per process;
/// the previous hook still runs, so panics are printed as usual).
pub(super) fn record() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info.to_string();
            // `try_with`: a panic while the thread is being torn down has nowhere to go.
            let _ = PANICS.try_with(|p| {
                if let Ok(mut panics) = p.try_borrow_mut() {
                    panics.push(message);
                }
            });
            previous(info);
        }));
    });
    PANICS.with(|p| p.borrow_mut().clear());
}

/// The panics recorded on this thread since [`record`].
pub(super) fn take() -> Vec<String> {
    PANICS.with(|p| std::mem::take(&mut *p.borrow_mut()))
}
