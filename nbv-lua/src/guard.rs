//! The execution budget of a script: VM instructions, and optionally wall-clock time.
//!
//! Argo CD stops a script after one second of wall-clock time. Wall-clock time makes
//! a test's outcome depend on the machine, so the primary limit here is a count of VM
//! instructions, checked by a hook every [`STEP`] instructions; the optional timeout is
//! checked by the same hook.
//!
//! Work done inside library functions written in C (`table.sort` of a large table,
//! `string.rep`) executes no VM instruction, so the budget does not see it. The hook
//! therefore also runs on every function call, where only the timeout is checked: a
//! loop of expensive library calls is stopped by the timeout within one call.
//!
//! Lua can catch the error the hook raises (`pcall`, `xpcall`, `coroutine.resume`), so
//! once the budget is spent the guard stays tripped: every later hook call raises again,
//! and the sandbox's wrappers of those functions re-raise after they return.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Instructions between two checks; budgets are counted in steps of this size.
pub(super) const STEP: u32 = 1000;

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

    /// Called by the hook every [`STEP`] instructions.
    pub(super) fn step(&self) -> mlua::Result<()> {
        let executed = self.executed.get().saturating_add(u64::from(STEP));
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

    /// Called by the hook on every function call: checks the timeout only, so that the
    /// instruction count stays deterministic.
    pub(super) fn call(&self) -> mlua::Result<()> {
        if self.stopped.get().is_none()
            && self
                .timeout
                .is_some_and(|timeout| self.started.elapsed() > timeout)
        {
            self.stopped.set(Some(Stop::Timeout));
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
