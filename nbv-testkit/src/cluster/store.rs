//! Object storage, the global resourceVersion, the change feed and the change history.
//!
//! Every committed write goes through [`Store::commit`], which bumps the single global
//! resourceVersion, stamps it on the object, records a [`Change`], appends a feed event and
//! hands it to open watches. Nothing else mutates stored objects, so watches, history and
//! storage cannot disagree.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::sync::mpsc;

use super::error::{ApiError, Reason};
use super::log::{Actor, Change, Verb};
use super::meta::set_meta;
use super::resource::ResourceKey;

/// Watch events kept for resuming watches; older resourceVersions get 410 Gone.
pub(crate) const FEED_CAPACITY: usize = 10_000;
/// Changes kept by [`Store::history`]; the oldest are dropped first.
pub(crate) const HISTORY_CAPACITY: usize = 100_000;

/// The type of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One entry of the change feed.
#[derive(Debug)]
pub(crate) struct FeedEvent {
    pub(crate) resource_version: u64,
    pub(crate) resource: ResourceKey,
    pub(crate) event: EventType,
    /// The object after the change (for deletions: its last state, with the deletion's
    /// resourceVersion).
    pub(crate) object: Value,
    /// The object before the change, for watches whose selector it stops or starts matching.
    pub(crate) previous: Option<Value>,
}

/// Who writes, with which verb, when.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WriteCtx {
    pub(crate) verb: Verb,
    pub(crate) actor: Actor,
    pub(crate) now: DateTime<Utc>,
}

impl WriteCtx {
    pub(crate) fn with_actor(self, actor: Actor) -> Self {
        Self { actor, ..self }
    }
}

/// Where a stored object lives: resource, namespace (empty when cluster-scoped) and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ObjectKey {
    pub(crate) resource: ResourceKey,
    pub(crate) namespace: String,
    pub(crate) name: String,
}

struct WatcherSlot {
    resource: ResourceKey,
    tx: mpsc::UnboundedSender<Arc<FeedEvent>>,
}

/// Where a new watch starts.
pub(crate) enum WatchStart {
    /// Replay every current object as ADDED, then follow changes (resourceVersion unset
    /// or "0").
    CurrentState,
    /// Follow changes after this resourceVersion.
    After(u64),
}

/// What a new watch sees first, and the channel it follows afterwards.
pub(crate) struct WatchSubscription {
    pub(crate) backlog: Vec<Arc<FeedEvent>>,
    pub(crate) live: mpsc::UnboundedReceiver<Arc<FeedEvent>>,
}

#[derive(Default)]
pub(crate) struct Store {
    objects: BTreeMap<ResourceKey, BTreeMap<(String, String), Value>>,
    resource_version: u64,
    feed: VecDeque<Arc<FeedEvent>>,
    /// Every event with a resourceVersion at or below this one has left the feed.
    feed_floor: u64,
    watchers: Vec<WatcherSlot>,
    history: VecDeque<Change>,
    uid_counter: u64,
    name_counter: u64,
}

impl Store {
    pub(crate) fn resource_version(&self) -> u64 {
        self.resource_version
    }

    pub(crate) fn get(&self, key: &ObjectKey) -> Option<&Value> {
        self.objects
            .get(&key.resource)?
            .get(&(key.namespace.clone(), key.name.clone()))
    }

    /// Objects of `resource`, optionally only those in `namespace`, ordered by
    /// namespace then name.
    pub(crate) fn list<'a>(
        &'a self,
        resource: &ResourceKey,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects
            .get(resource)
            .into_iter()
            .flat_map(|objects| objects.iter())
            .filter(move |((ns, _), _)| namespace.is_none_or(|wanted| ns == wanted))
            .map(|(_, object)| object)
    }

    /// Every stored object with its key.
    pub(crate) fn all(&self) -> impl Iterator<Item = (ObjectKey, &Value)> {
        self.objects.iter().flat_map(|(resource, objects)| {
            objects.iter().map(move |((namespace, name), object)| {
                (
                    ObjectKey {
                        resource: resource.clone(),
                        namespace: namespace.clone(),
                        name: name.clone(),
                    },
                    object,
                )
            })
        })
    }

    /// A fresh, deterministic UID.
    pub(crate) fn next_uid(&mut self) -> String {
        self.uid_counter += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.uid_counter)
    }

    /// A deterministic five-character suffix for `generateName`, drawn from the same
    /// alphabet as the API server's (no vowels, no look-alike digits).
    pub(crate) fn next_name_suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        self.name_counter += 1;
        // SplitMix64: consecutive counters give unrelated-looking suffixes.
        let mut z = self.name_counter.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (0..5)
            .map(|i| {
                let index = (z >> (i * 8)) % ALPHABET.len() as u64;
                char::from(ALPHABET[usize::try_from(index).unwrap_or(0)])
            })
            .collect()
    }

    /// Stores `after` (or removes the object when `None`), stamping the next
    /// resourceVersion, recording the change and notifying watches. Returns the stored
    /// object (for deletions, its final state).
    pub(crate) fn commit(&mut self, key: &ObjectKey, after: Option<Value>, ctx: WriteCtx) -> Value {
        self.resource_version += 1;
        let rv = self.resource_version;
        let rv_value = Value::String(rv.to_string());
        let slot = (key.namespace.clone(), key.name.clone());
        let objects = self.objects.entry(key.resource.clone()).or_default();
        let before = objects.get(&slot).cloned();
        let (event, stored) = match after {
            Some(mut object) => {
                set_meta(&mut object, "resourceVersion", Some(rv_value));
                objects.insert(slot, object.clone());
                let event = if before.is_some() {
                    EventType::Modified
                } else {
                    EventType::Added
                };
                (event, object)
            }
            None => {
                objects.remove(&slot);
                let mut last = before.clone().unwrap_or(Value::Null);
                set_meta(&mut last, "resourceVersion", Some(rv_value));
                (EventType::Deleted, last)
            }
        };
        // Stored objects always carry apiVersion and kind (creation sets them).
        let type_field = |field: &str| {
            stored
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let change = Change {
            at: ctx.now,
            resource_version: rv,
            verb: ctx.verb,
            api_version: type_field("apiVersion"),
            kind: type_field("kind"),
            namespace: (!key.namespace.is_empty()).then(|| key.namespace.clone()),
            name: key.name.clone(),
            before: before.clone(),
            after: (event != EventType::Deleted).then(|| stored.clone()),
            actor: ctx.actor,
        };
        if self.history.len() >= HISTORY_CAPACITY {
            self.history.pop_front();
        }
        self.history.push_back(change);
        let feed_event = Arc::new(FeedEvent {
            resource_version: rv,
            resource: key.resource.clone(),
            event,
            object: stored.clone(),
            previous: before,
        });
        if self.feed.len() >= FEED_CAPACITY
            && let Some(dropped) = self.feed.pop_front()
        {
            self.feed_floor = dropped.resource_version;
        }
        self.feed.push_back(Arc::clone(&feed_event));
        // A closed channel means the watch's stream was dropped: forget it.
        self.watchers
            .retain(|w| w.resource != key.resource || w.tx.send(Arc::clone(&feed_event)).is_ok());
        stored
    }

    /// Opens a watch on `resource` starting at `start`.
    pub(crate) fn subscribe(
        &mut self,
        resource: &ResourceKey,
        start: WatchStart,
    ) -> Result<WatchSubscription, ApiError> {
        let backlog = match start {
            WatchStart::CurrentState => self
                .list(resource, None)
                .map(|object| {
                    Arc::new(FeedEvent {
                        resource_version: self.resource_version,
                        resource: resource.clone(),
                        event: EventType::Added,
                        object: object.clone(),
                        previous: None,
                    })
                })
                .collect(),
            WatchStart::After(rv) => {
                if rv < self.feed_floor {
                    return Err(ApiError::new(
                        Reason::Expired,
                        format!(
                            "too old resource version: {rv} ({})",
                            self.feed_floor.saturating_add(1)
                        ),
                    ));
                }
                self.feed
                    .iter()
                    .filter(|e| e.resource_version > rv && e.resource == *resource)
                    .cloned()
                    .collect()
            }
        };
        let (tx, live) = mpsc::unbounded_channel();
        // Forget watches whose streams were dropped since the last write to their resource.
        self.watchers.retain(|w| !w.tx.is_closed());
        self.watchers.push(WatcherSlot {
            resource: resource.clone(),
            tx,
        });
        Ok(WatchSubscription { backlog, live })
    }

    /// Ends every open watch stream.
    pub(crate) fn drop_watches(&mut self) {
        self.watchers.clear();
    }

    /// Forgets the change feed, so resuming a watch from any earlier resourceVersion
    /// answers 410 Gone (as after etcd compaction).
    pub(crate) fn compact(&mut self) {
        self.feed.clear();
        self.feed_floor = self.resource_version;
    }

    pub(crate) fn history(&self) -> Vec<Change> {
        self.history.iter().cloned().collect()
    }

    pub(crate) fn open_watches(&self) -> usize {
        self.watchers.iter().filter(|w| !w.tx.is_closed()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::log::Verb;
    use serde_json::json;

    fn ctx() -> WriteCtx {
        WriteCtx {
            verb: Verb::Create,
            actor: Actor::Direct,
            now: DateTime::<Utc>::UNIX_EPOCH,
        }
    }

    fn spec() -> crate::cluster::ApiResourceSpec {
        crate::cluster::ApiResourceSpec::namespaced("", "v1", "ConfigMap", "configmaps")
    }

    fn key(name: &str) -> ObjectKey {
        ObjectKey {
            resource: spec().key(),
            namespace: "ns".into(),
            name: name.into(),
        }
    }

    #[test]
    fn feed_is_bounded_and_old_versions_expire() {
        let mut store = Store::default();
        for i in 0..FEED_CAPACITY + 5 {
            store.commit(&key(&format!("o{i}")), Some(json!({})), ctx());
        }
        let err = store.subscribe(&spec().key(), WatchStart::After(1)).err();
        assert_eq!(err.map(|e| e.reason), Some(Reason::Expired));
        let last = store.resource_version();
        let sub = store
            .subscribe(&spec().key(), WatchStart::After(last - 3))
            .ok();
        assert_eq!(sub.map(|s| s.backlog.len()), Some(3));
    }

    #[test]
    fn generated_suffixes_are_distinct_and_well_formed() {
        let mut store = Store::default();
        let suffixes: std::collections::BTreeSet<String> =
            (0..1000).map(|_| store.next_name_suffix()).collect();
        assert_eq!(suffixes.len(), 1000);
        assert!(
            suffixes
                .iter()
                .all(|s| s.len() == 5 && s.chars().all(|c| c.is_ascii_alphanumeric()))
        );
    }
}
