//! The execution budget of a script: VM instructions, and optionally wall-clock time.
//!
//! Argo CD stops a script after one second of wall-clock time. Wall-clock time makes
//! a test's outcome depend on the machine, so the primary limit here is a count of VM
//! instructions, checked by a hook every [`STEP`] instructions; the optional timeout is
//! checked by the same hook.
//!
//! Work done inside one call executes no VM instruction: pattern matching, which can
//! backtrack exponentially, `string.rep`, `table.sort`, `table.concat`, `..` of long
//! strings. nbv's Lua charges that work to the same count as it goes
//! (`nbv_chargework`, see `lua/README.md`): one unit per step of the pattern matcher,
//! per element of a table, per comparison of a sort, per 64 bytes copied or compared,
//! as if the VM had run that many instructions. The hook then runs in the middle of
//! the call, and its error ends the call: the budget and the timeout bound the whole
//! evaluation, not only the code written in Lua. Compiling a chunk with `load` or
//! `loadstring` is charged here by its length ([`Guard::charge`]). The hook also runs
//! on every function call, which counts as [`CALL_COST`] instructions.
//!
//! Lua can catch the error the hook raises (`pcall`, `xpcall`, `coroutine.resume`), so
//! once the budget is spent the guard stays tripped: every later hook call raises again,
//! and the sandbox's wrappers of those functions re-raise after they return.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Instructions between two checks; budgets are counted in steps of this size.
pub(super) const STEP: u32 = 1000;

/// Instructions a function call counts for. The hook that watches calls costs more than
/// the call itself, most in a loop of a library function written in C over a table
/// (`table.foreachi(t, f)`): measured, about twenty instructions' worth.
pub(super) const CALL_COST: u64 = 20;

/// Why a script was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    Instructions,
    Timeout,
}

pub(super) struct Guard {
    budget: u64,
    timeout: Option<Duration>,
    started: Instant,
    executed: Cell<u64>,
    stopped: Cell<Option<Stop>>,
}

impl Guard {
    pub(super) fn new(budget: u64, timeout: Option<Duration>) -> Self {
        Guard {
            budget,
            timeout,
            started: Instant::now(),
            executed: Cell::new(0),
            stopped: Cell::new(None),
        }
    }

    /// Called by the hook every [`STEP`] instructions, and each time the work charged
    /// inside a call adds up to as many.
    pub(super) fn step(&self) -> mlua::Result<()> {
        self.charge(u64::from(STEP))
    }

    /// Called by the hook on every function call, which counts as [`CALL_COST`]
    /// instructions.
    pub(super) fn call(&self) -> mlua::Result<()> {
        self.charge(CALL_COST)
    }

    /// Counts `units` instructions, or work worth as many, and fails if that spends the
    /// budget or the time.
    pub(super) fn charge(&self, units: u64) -> mlua::Result<()> {
        let executed = self.executed.get().saturating_add(units);
        self.executed.set(executed);
        if self.stopped.get().is_none() {
            if executed > self.budget {
                self.stopped.set(Some(Stop::Instructions));
            } else if self
                .timeout
                .is_some_and(|timeout| self.started.elapsed() > timeout)
            {
                self.stopped.set(Some(Stop::Timeout));
            }
        }
        self.check()
    }

    /// An error if the script has been stopped.
    pub(super) fn check(&self) -> mlua::Result<()> {
        match self.stopped.get() {
            None => Ok(()),
            Some(Stop::Instructions) => Err(mlua::Error::runtime("instruction budget exhausted")),
            Some(Stop::Timeout) => Err(mlua::Error::runtime("timeout")),
        }
    }

    pub(super) fn stopped(&self) -> Option<Stop> {
        self.stopped.get()
    }

    /// Instructions run so far, in steps of [`STEP`].
    pub(super) fn executed(&self) -> u64 {
        self.executed.get()
    }
}
