//! nbv's requests, read from the API server's audit log (level Metadata for nbv's user,
//! see `scripts/control-plane`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

/// nbv's ServiceAccount user, whose requests the audit policy records.
pub const OPERATOR_USER: &str = "system:serviceaccount:nbv-system:nbv-operator";

/// The audit log.
#[derive(Clone, Debug)]
pub struct Audit {
    path: PathBuf,
}

/// A point in the log: what was written before it.
#[derive(Clone, Copy, Debug)]
pub struct Mark(usize);

/// One request, as the audit log records it.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// `get`, `list`, `watch`, `create`, `patch`, `delete`, …
    pub verb: String,
    /// Who made it.
    pub user: User,
    /// What it was about.
    #[serde(default)]
    pub object_ref: Option<ObjectRef>,
    /// The answer.
    #[serde(default)]
    pub response_status: Option<ResponseStatus>,
    /// The path, for requests without an object (discovery).
    #[serde(default)]
    pub request_u_r_i: String,
    /// The client's `User-Agent` (nbv names its replica in it).
    #[serde(default)]
    pub user_agent: String,
    /// When the API server received the request (RFC 3339, microseconds).
    #[serde(default)]
    pub request_received_timestamp: String,
    /// When it answered it (the `ResponseComplete` stage).
    #[serde(default)]
    pub stage_timestamp: String,
}

/// The user of a request.
#[derive(Clone, Debug, Deserialize)]
pub struct User {
    /// The user name.
    #[serde(default)]
    pub username: String,
}

/// The object of a request.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// The plural.
    #[serde(default)]
    pub resource: String,
    /// `status`, `binding`, …
    #[serde(default)]
    pub subresource: String,
    /// The namespace.
    #[serde(default)]
    pub namespace: String,
    /// The object's name, when the request names one.
    #[serde(default)]
    pub name: String,
}

/// The answer's code.
#[derive(Clone, Debug, Deserialize)]
pub struct ResponseStatus {
    /// The HTTP status code.
    #[serde(default)]
    pub code: u16,
}

impl Request {
    /// `resource` or `resource/subresource`.
    pub fn resource(&self) -> String {
        match &self.object_ref {
            Some(o) if o.subresource.is_empty() => o.resource.clone(),
            Some(o) => format!("{}/{}", o.resource, o.subresource),
            None => "(discovery)".to_owned(),
        }
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.response_status.as_ref().map_or(0, |s| s.code)
    }

    /// Whether it changes something (create, update, patch, delete).
    pub fn is_write(&self) -> bool {
        matches!(
            self.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        )
    }

    /// When the API server received it.
    pub fn received(&self) -> chrono::DateTime<chrono::Utc> {
        timestamp(&self.request_received_timestamp)
    }

    /// When the API server had answered it.
    pub fn answered(&self) -> chrono::DateTime<chrono::Utc> {
        timestamp(&self.stage_timestamp)
    }

    /// The name of the object, or empty (a LIST, a create).
    pub fn name(&self) -> &str {
        self.object_ref.as_ref().map_or("", |o| o.name.as_str())
    }

    /// The namespace, or empty.
    pub fn namespace(&self) -> &str {
        self.object_ref
            .as_ref()
            .map_or("", |o| o.namespace.as_str())
    }
}

fn timestamp(text: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("an audit timestamp, {text:?}: {e}"))
        .to_utc()
}

impl Audit {
    pub(super) fn new(path: PathBuf) -> Audit {
        Audit { path }
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Everything written so far is before the mark.
    pub fn mark(&self) -> Mark {
        Mark(self.lines().len())
    }

    /// nbv's requests since `mark`.
    pub fn since(&self, mark: Mark) -> Requests {
        // The log backend writes an event when the response is complete: give the
        // last responses a moment to land.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let requests = self.lines()[mark.0.min(self.lines().len())..]
            .iter()
            .filter_map(|line| serde_json::from_str::<Request>(line).ok())
            .filter(|r| r.user.username == OPERATOR_USER)
            .collect();
        Requests(requests)
    }
}

/// Some of nbv's requests.
#[derive(Clone, Debug)]
pub struct Requests(pub Vec<Request>);

impl Requests {
    /// The requests about objects of `namespace`.
    pub fn in_namespace(self, namespace: &str) -> Requests {
        Requests(
            self.0
                .into_iter()
                .filter(|r| r.namespace() == namespace)
                .collect(),
        )
    }

    /// Counts by `verb resource`, leaving out watches and discovery (a watch is one
    /// long request; what it costs is its LIST).
    pub fn by_verb_and_resource(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for r in &self.0 {
            *counts
                .entry(format!("{} {}", r.verb, r.resource()))
                .or_insert(0) += 1;
        }
        counts
    }

    /// How many requests match `verb` and `resource` (`resource` or `resource/sub`).
    pub fn count(&self, verb: &str, resource: &str) -> usize {
        self.0
            .iter()
            .filter(|r| r.verb == verb && r.resource() == resource)
            .count()
    }

    /// Writes, excluding reads and watches.
    pub fn writes(&self) -> usize {
        self.0
            .iter()
            .filter(|r| {
                matches!(
                    r.verb.as_str(),
                    "create" | "update" | "patch" | "delete" | "deletecollection"
                )
            })
            .count()
    }

    /// Panics when the API server refused a request for lack of rights: the shipped
    /// role must allow everything nbv does.
    pub fn assert_none_forbidden(&self) {
        let forbidden: Vec<String> = self
            .0
            .iter()
            .filter(|r| r.code() == 403)
            .map(|r| format!("{} {} {}", r.verb, r.resource(), r.request_u_r_i))
            .collect();
        assert!(
            forbidden.is_empty(),
            "the shipped role forbade nbv's requests: {forbidden:#?}"
        );
    }
}

impl Requests {
    /// Like [`Requests::assert_none_forbidden`], after a restart of the API server: a
    /// 403 is accepted only when the same verb on the same resource and namespace
    /// succeeded later (the authorizer had not loaded the roles yet), and only before
    /// the first request that succeeded after it.
    pub fn assert_forbidden_only_while_starting(&self) {
        let key = |r: &Request| (r.verb.clone(), r.resource(), r.namespace().to_owned());
        for (i, r) in self.0.iter().enumerate() {
            if r.code() != 403 {
                continue;
            }
            let retried = self.0[i + 1..]
                .iter()
                .any(|later| key(later) == key(r) && (200..300).contains(&later.code()));
            assert!(
                retried,
                "forbidden and never allowed later: {} {} {}",
                r.verb,
                r.resource(),
                r.request_u_r_i
            );
        }
    }
}

impl fmt::Display for Requests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts = self.by_verb_and_resource();
        writeln!(f, "{} requests, {} writes", self.0.len(), self.writes())?;
        for (what, n) in counts {
            writeln!(f, "  {n:>5}  {what}")?;
        }
        Ok(())
    }
}
