//! Watch streams: newline-delimited JSON watch events from the change feed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::error::ApiError;
use super::meta::meta_str;
use super::selector::{FieldSelector, LabelSelector};
use super::state::Shared;
use super::store::{EventType, FeedEvent, WatchSubscription};

/// Which objects a watch (or list) sees.
#[derive(Clone, Debug, Default)]
pub(crate) struct ObjectFilter {
    pub(crate) namespace: Option<String>,
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
}

impl ObjectFilter {
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let ns_ok = self
            .namespace
            .as_deref()
            .is_none_or(|ns| meta_str(object, "namespace").unwrap_or_default() == ns);
        ns_ok && self.labels.matches(object) && self.fields.matches(object)
    }

    /// The event a watch with this filter sees for a feed event, if any.
    ///
    /// Like the API server's watch cache: an object that starts matching the selector
    /// appears as ADDED, one that stops matching disappears as DELETED (carrying its
    /// previous state with the new resourceVersion).
    fn translate(&self, event: &FeedEvent) -> Option<(EventType, Value)> {
        let now = self.matches(&event.object);
        match event.event {
            EventType::Added | EventType::Deleted => {
                now.then(|| (event.event, event.object.clone()))
            }
            EventType::Modified => {
                let before = event.previous.as_ref().is_some_and(|p| self.matches(p));
                match (before, now) {
                    (true, true) => Some((EventType::Modified, event.object.clone())),
                    (false, true) => Some((EventType::Added, event.object.clone())),
                    (true, false) => {
                        let mut last = event.previous.clone().unwrap_or(Value::Null);
                        super::meta::set_meta(
                            &mut last,
                            "resourceVersion",
                            Some(Value::String(event.resource_version.to_string())),
                        );
                        Some((EventType::Deleted, last))
                    }
                    (false, false) => None,
                }
            }
        }
    }
}

/// Everything needed to stream one watch.
pub(crate) struct WatchPlan {
    pub(crate) filter: ObjectFilter,
    pub(crate) subscription: WatchSubscription,
    /// The global resourceVersion when the watch was opened.
    pub(crate) opened_at: u64,
    pub(crate) timeout: Duration,
    pub(crate) bookmarks: bool,
    /// `sendInitialEvents=true`: mark the end of the replayed state with a bookmark.
    pub(crate) initial_events_end: bool,
    pub(crate) api_version: String,
    pub(crate) kind: String,
}

fn line(value: &Value) -> Bytes {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

fn bookmark(api_version: &str, kind: &str, rv: u64, initial_end: bool) -> Bytes {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    line(&json!({
        "type": "BOOKMARK",
        "object": {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    }))
}

/// A watch answered with a single ERROR event, as the API server answers a watch from a
/// resourceVersion it no longer has (HTTP 200, then `{"type":"ERROR","object":Status}`).
pub(crate) fn error_stream(error: &ApiError) -> (Bytes, BoxStream<'static, Bytes>) {
    let bytes = line(&json!({"type": "ERROR", "object": error.to_status()}));
    (bytes.clone(), stream::once(async move { bytes }).boxed())
}

struct Streaming {
    pending: VecDeque<Bytes>,
    live: UnboundedReceiver<Arc<FeedEvent>>,
    filter: ObjectFilter,
    deadline: Instant,
    bookmarks: bool,
    finished: bool,
    last_rv: u64,
    api_version: String,
    kind: String,
    shared: Arc<Shared>,
    request_id: u64,
}

impl Streaming {
    fn push(&mut self, event: &FeedEvent) {
        if let Some((kind, object)) = self.filter.translate(event) {
            self.last_rv = self.last_rv.max(event.resource_version);
            self.pending
                .push_back(line(&json!({"type": kind.as_str(), "object": object})));
        }
    }

    /// The watch timed out: deliver what is already queued, then a bookmark so the client
    /// resumes from here instead of from an old resourceVersion (which could be gone).
    fn expire(&mut self) {
        self.finished = true;
        let current = self.shared.lock().store.resource_version();
        while let Ok(event) = self.live.try_recv() {
            self.push(&event);
        }
        if self.bookmarks {
            let rv = current.max(self.last_rv);
            let mark = bookmark(&self.api_version, &self.kind, rv, false);
            self.pending.push_back(mark);
        }
    }

    async fn next(mut self) -> Option<(Bytes, Self)> {
        loop {
            if let Some(bytes) = self.pending.pop_front() {
                self.shared
                    .lock()
                    .add_bytes_out(self.request_id, bytes.len());
                return Some((bytes, self));
            }
            if self.finished {
                return None;
            }
            tokio::select! {
                biased;
                event = self.live.recv() => match event {
                    Some(event) => self.push(&event),
                    // The server dropped the watch (drop_watches): end the stream.
                    None => self.finished = true,
                },
                () = tokio::time::sleep_until(self.deadline) => self.expire(),
            }
        }
    }
}

/// The body stream of a watch.
pub(crate) fn watch_stream(
    plan: WatchPlan,
    shared: Arc<Shared>,
    request_id: u64,
) -> BoxStream<'static, Bytes> {
    let WatchPlan {
        filter,
        subscription,
        opened_at,
        timeout,
        bookmarks,
        initial_events_end,
        api_version,
        kind,
    } = plan;
    let mut streaming = Streaming {
        pending: VecDeque::new(),
        live: subscription.live,
        filter,
        deadline: Instant::now() + timeout,
        bookmarks,
        finished: false,
        last_rv: 0,
        api_version,
        kind,
        shared,
        request_id,
    };
    for event in &subscription.backlog {
        streaming.push(event);
    }
    if initial_events_end {
        streaming.last_rv = streaming.last_rv.max(opened_at);
        let mark = bookmark(&streaming.api_version, &streaming.kind, opened_at, true);
        streaming.pending.push_back(mark);
    }
    stream::unfold(streaming, Streaming::next).boxed()
}
