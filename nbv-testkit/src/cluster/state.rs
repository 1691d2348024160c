//! The state behind a [`FakeCluster`](super::FakeCluster) handle.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::clock::VirtualClock;

use super::faults::Faults;
use super::log::RequestRecord;
use super::resource::Registry;
use super::store::Store;

/// Requests kept by the request log; the oldest are dropped first.
pub(crate) const REQUEST_LOG_CAPACITY: usize = 100_000;

/// Shared by every handle, client and open watch of one cluster.
pub(crate) struct Shared {
    state: Mutex<State>,
    pub(crate) clock: VirtualClock,
}

pub(crate) struct State {
    pub(crate) registry: Registry,
    pub(crate) store: Store,
    pub(crate) faults: Faults,
    requests: VecDeque<RequestRecord>,
    next_request_id: u64,
}

impl Shared {
    pub(crate) fn new(clock: VirtualClock) -> Self {
        Self {
            state: Mutex::new(State {
                registry: Registry::with_builtins(),
                store: Store::default(),
                faults: Faults::default(),
                requests: VecDeque::new(),
                next_request_id: 0,
            }),
            clock,
        }
    }

    /// Locks the state. Callers never hold the guard across an `.await`. A panic while
    /// locked (a failing assertion in a test thread) does not make the cluster unusable.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// Appends a request to the log, giving it the next id.
    pub(crate) fn log_request(&mut self, mut record: RequestRecord) -> u64 {
        self.next_request_id += 1;
        record.id = self.next_request_id;
        if self.requests.len() >= REQUEST_LOG_CAPACITY {
            self.requests.pop_front();
        }
        self.requests.push_back(record);
        self.next_request_id
    }

    /// Updates a logged request in place (no-op when it has left the log).
    pub(crate) fn update_request(&mut self, id: u64, update: impl FnOnce(&mut RequestRecord)) {
        if let Some(record) = self.requests.iter_mut().rev().find(|r| r.id == id) {
            update(record);
        }
    }

    pub(crate) fn add_bytes_out(&mut self, id: u64, bytes: usize) {
        self.update_request(id, |r| r.bytes_out = r.bytes_out.saturating_add(bytes));
    }

    pub(crate) fn requests(&self) -> Vec<RequestRecord> {
        self.requests.iter().cloned().collect()
    }

    pub(crate) fn clear_requests(&mut self) {
        self.requests.clear();
    }
}
