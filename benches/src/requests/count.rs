//! nbv's requests, sorted into what they are for.

use std::ops::{AddAssign, Sub};

use nbv_testkit::cluster::{RequestRecord, VerbKind};

/// Requests by purpose. Watches are left out: each is one long request, whose cost is
/// the LIST that starts it (counted among the reads).
///
/// # Examples
///
/// ```
/// use nbv_benches::requests::Counts;
///
/// let counts = Counts { status: 1, wave: 1, events: 1, ..Counts::default() };
/// assert_eq!(counts.total(), 3);
/// assert_eq!(counts.writes(), 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Writes of a job's status subresource (PATCH or PUT).
    pub status: usize,
    /// Writes of a job's object: the wave annotations (PATCH or PUT).
    pub wave: usize,
    /// Events created.
    pub events: usize,
    /// Writes of trigger targets: PATCH or PUT of a workload or an Application's
    /// operation, DELETE of a pod.
    pub trigger_writes: usize,
    /// Writes of an Application's notebook status annotations.
    pub app_status: usize,
    /// GETs and LISTs.
    pub reads: usize,
    /// Anything else (Lease renewals and the like).
    pub other: usize,
}

impl Counts {
    /// Sorts `requests`.
    pub fn of(requests: &[RequestRecord]) -> Counts {
        let mut counts = Counts::default();
        for request in requests {
            counts.add(request);
        }
        counts
    }

    fn add(&mut self, r: &RequestRecord) {
        let write = matches!(r.verb.kind(), VerbKind::Patch | VerbKind::Update);
        let slot = match (r.verb.kind(), r.resource.as_str()) {
            (VerbKind::Watch, _) => return,
            (VerbKind::Get | VerbKind::List, _) => &mut self.reads,
            (_, "notebookvalidationjobs") if write && r.subresource.is_some() => &mut self.status,
            (_, "notebookvalidationjobs") if write => &mut self.wave,
            (VerbKind::Create, "events") => &mut self.events,
            (_, "applications") if write && is_notebook_status(r) => &mut self.app_status,
            (_, "deployments" | "statefulsets" | "daemonsets" | "applications") if write => {
                &mut self.trigger_writes
            }
            (VerbKind::Delete, "pods") => &mut self.trigger_writes,
            _ => &mut self.other,
        };
        *slot += 1;
    }

    /// Every request counted.
    pub fn total(&self) -> usize {
        self.writes() + self.reads + self.other
    }

    /// The writes.
    pub fn writes(&self) -> usize {
        self.status + self.wave + self.events + self.trigger_writes + self.app_status
    }

    /// Each count divided by `n`, as fractions.
    pub fn per(&self, n: usize) -> PerCompletion {
        let n = n.max(1) as f64;
        let f = |c: usize| c as f64 / n;
        PerCompletion {
            status: f(self.status),
            wave: f(self.wave),
            events: f(self.events),
            trigger_writes: f(self.trigger_writes),
            app_status: f(self.app_status),
            reads: f(self.reads),
            total: f(self.total()),
        }
    }
}

/// Whether the request writes `mlops.dev/notebook-status` or `-summary` (the
/// publisher's patch, or an upstream-style update that carries them).
fn is_notebook_status(r: &RequestRecord) -> bool {
    let annotations = r
        .body
        .as_ref()
        .and_then(|b| b.pointer("/metadata/annotations"))
        .and_then(|a| a.as_object());
    annotations.is_some_and(|a| a.keys().any(|k| k.starts_with("mlops.dev/notebook-")))
        && r.body.as_ref().is_none_or(|b| b.get("operation").is_none())
}

impl AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.status += o.status;
        self.wave += o.wave;
        self.events += o.events;
        self.trigger_writes += o.trigger_writes;
        self.app_status += o.app_status;
        self.reads += o.reads;
        self.other += o.other;
    }
}

impl Sub for Counts {
    type Output = Counts;

    /// What `self` has beyond `o` (saturating: a run never has fewer requests than
    /// the start it shares with the other, but a count is never negative).
    fn sub(self, o: Counts) -> Counts {
        Counts {
            status: self.status.saturating_sub(o.status),
            wave: self.wave.saturating_sub(o.wave),
            events: self.events.saturating_sub(o.events),
            trigger_writes: self.trigger_writes.saturating_sub(o.trigger_writes),
            app_status: self.app_status.saturating_sub(o.app_status),
            reads: self.reads.saturating_sub(o.reads),
            other: self.other.saturating_sub(o.other),
        }
    }
}

/// [`Counts`] per completion.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PerCompletion {
    /// Status writes.
    pub status: f64,
    /// Wave annotation writes.
    pub wave: f64,
    /// Events.
    pub events: f64,
    /// Trigger target writes.
    pub trigger_writes: f64,
    /// Application status writes.
    pub app_status: f64,
    /// Reads.
    pub reads: f64,
    /// All requests.
    pub total: f64,
}
