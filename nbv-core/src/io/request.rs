//! What a machine asks of the shell.

use std::fmt;

use serde_json::Value;

use super::ObjectRef;

/// One I/O request: one API call, or one read of a watch cache. The set is closed: a
/// shell that answers these answers every machine of nbv-core.
///
/// | request | the shell's call | answered with |
/// |---|---|---|
/// | [`Get`](Request::Get) | `GET` the object | [`Object`](super::Response::Object) (`None`: 404) |
/// | [`Cached`](Request::Cached) | read the watch cache that holds such objects | [`Object`](super::Response::Object), or [`NotCached`](super::Response::NotCached) where no cache holds them |
/// | [`List`](Request::List) | `LIST` by label selector | [`Objects`](super::Response::Objects) |
/// | [`Create`](Request::Create) | `POST` the object | [`Object`](super::Response::Object) (the stored object) |
/// | [`Patch`](Request::Patch) | `PATCH`, JSON merge patch, nbv's field manager | [`Object`](super::Response::Object) (the stored object) |
/// | [`Delete`](Request::Delete) | `DELETE`, with the uid as precondition | [`Deleted`](super::Response::Deleted) |
/// | [`Evict`](Request::Evict) | `POST` the pod's `eviction` subresource (`policy/v1`, or `policy/v1beta1` where the server serves no other), with the uid as precondition | [`Deleted`](super::Response::Deleted) |
/// | [`DeleteAll`](Request::DeleteAll) | `DELETE` the collection, by label selector, in the background | [`Objects`](super::Response::Objects) (those deleted) |
///
/// Any of them may be answered [`Failed`](super::Response::Failed) with what the API
/// server said (or that it said nothing).
///
/// # Examples
///
/// ```
/// use nbv_core::io::{ObjectRef, Request};
///
/// let list = Request::List {
///     kind: ObjectRef::namespaced("v1", "Pod", "serving", ""),
///     label_selector: "serving.kserve.io/inferenceservice=sklearn".into(),
/// };
/// assert_eq!(list.to_string(), "LIST Pod in serving with serving.kserve.io/inferenceservice=sklearn");
/// assert!(!list.writes());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// Read one object from the API server.
    Get(ObjectRef),
    /// Read one object from the shell's watch cache of its kind, without a request.
    Cached(ObjectRef),
    /// List the objects of `kind` (its name is empty) in its namespace whose labels
    /// match `label_selector`.
    List {
        /// The kind and namespace to list.
        kind: ObjectRef,
        /// A label selector (`a=b,c`).
        label_selector: String,
    },
    /// Create an object (its `apiVersion`, `kind` and `metadata.namespace` say where).
    Create {
        /// Where it is created.
        object: ObjectRef,
        /// The whole object.
        body: Value,
    },
    /// Apply a JSON merge patch. A `metadata.resourceVersion` in the patch is a
    /// precondition: the API server answers 409 when the object changed since.
    Patch {
        /// The object patched.
        object: ObjectRef,
        /// The object itself or one of its subresources.
        subresource: Subresource,
        /// The merge patch.
        patch: Value,
    },
    /// Delete an object, only if it still has `uid` (when given).
    Delete {
        /// The object deleted.
        object: ObjectRef,
        /// A precondition: the uid of the object meant.
        uid: Option<String>,
    },
    /// Evict a pod through the Eviction API, only if it still has `uid`: unlike a
    /// delete, the API server refuses it (HTTP 429) while a PodDisruptionBudget does
    /// not allow the disruption.
    Evict {
        /// The pod.
        pod: ObjectRef,
        /// A precondition: the uid of the pod meant.
        uid: String,
    },
    /// Delete every object of `kind` (its name is empty) in its namespace whose labels
    /// match `label_selector`, their dependents in the background.
    DeleteAll {
        /// The kind and namespace.
        kind: ObjectRef,
        /// A label selector (`a=b,c!=d`).
        label_selector: String,
    },
}

/// The part of an object a patch writes.
///
/// # Examples
///
/// ```
/// use nbv_core::io::Subresource;
///
/// assert_eq!(Subresource::Status.path(), Some("status"));
/// assert_eq!(Subresource::Object.path(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subresource {
    /// The object itself (its metadata and spec).
    Object,
    /// Its `status` subresource.
    Status,
}

impl Subresource {
    /// The subresource's path segment, if any.
    pub fn path(self) -> Option<&'static str> {
        match self {
            Subresource::Object => None,
            Subresource::Status => Some("status"),
        }
    }
}

impl Request {
    /// The object (or, for a list, the kind) the request is about.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::io::{ObjectRef, Request};
    ///
    /// let ns = ObjectRef::cluster("v1", "Namespace", "ml");
    /// assert_eq!(Request::Get(ns.clone()).object(), &ns);
    /// ```
    pub fn object(&self) -> &ObjectRef {
        match self {
            Request::Get(object) | Request::Cached(object) => object,
            Request::List { kind, .. } | Request::DeleteAll { kind, .. } => kind,
            Request::Create { object, .. }
            | Request::Patch { object, .. }
            | Request::Delete { object, .. } => object,
            Request::Evict { pod, .. } => pod,
        }
    }

    /// Whether the request changes the cluster.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::io::{ObjectRef, Request};
    ///
    /// let pod = ObjectRef::namespaced("v1", "Pod", "ml", "p");
    /// assert!(Request::Delete { object: pod.clone(), uid: None }.writes());
    /// assert!(!Request::Cached(pod).writes());
    /// ```
    pub fn writes(&self) -> bool {
        matches!(
            self,
            Request::Create { .. }
                | Request::Patch { .. }
                | Request::Delete { .. }
                | Request::Evict { .. }
                | Request::DeleteAll { .. }
        )
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Request::Get(object) => write!(f, "GET {object}"),
            Request::Cached(object) => write!(f, "read {object} from the cache"),
            Request::List {
                kind,
                label_selector,
            }
            | Request::DeleteAll {
                kind,
                label_selector,
            } => {
                let verb = if self.writes() { "DELETE" } else { "LIST" };
                write!(f, "{verb} {}", kind.kind)?;
                if let Some(namespace) = &kind.namespace {
                    write!(f, " in {namespace}")?;
                }
                if !label_selector.is_empty() {
                    write!(f, " with {label_selector}")?;
                }
                Ok(())
            }
            Request::Create { object, .. } => write!(f, "POST {object}"),
            Request::Patch {
                object,
                subresource,
                ..
            } => match subresource.path() {
                Some(path) => write!(f, "PATCH {object} {path}"),
                None => write!(f, "PATCH {object}"),
            },
            Request::Delete { object, .. } => write!(f, "DELETE {object}"),
            Request::Evict { pod, .. } => write!(f, "POST {pod} eviction"),
        }
    }
}
