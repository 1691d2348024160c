//! An Argo CD Application as nbv's watch cache keeps it.
//!
//! nbv watches every Application of the namespaces it serves, and most of them are
//! Applications it never acts on, so what each costs is paid many times over for the
//! life of the process. Two things made that cost ten times the object nbv reads:
//!
//! - a `serde_json::Value` spends a B-tree node (over 500 bytes) on every JSON
//!   object, however few fields it holds, and the part nbv reads of an Application is
//!   a handful of small objects;
//! - decoding the whole object first (its resource list, sync result, managedFields)
//!   and trimming it after scatters the few allocations kept among many freed ones, so
//!   the allocator cannot give the pages back: measured over 10,000 Applications, a
//!   cache of 562 bytes of JSON each held 7.8 KiB of resident memory each.
//!
//! [`CachedApplication`] therefore decodes only the fields nbv reads, skipping the
//! rest unread, and keeps them as compact JSON text; readers get them back as a JSON
//! value ([`CachedApplication::to_json`]) when they act on the Application, which is
//! once per trigger or status publication, not once per event.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::api::{ApiResource, DynamicObject, ObjectMeta};
use kube::core::{DynamicResourceScope, Resource};
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::metadata::trim_metadata;

/// An Argo CD Application as the Applications' cache keeps it: its metadata (without
/// what [`trim_metadata`](super::trim_metadata) drops), `spec.project`,
/// `spec.destination`, `spec.syncPolicy`, `operation`, `status.operationState`
/// without its `syncResult`, and of `status.resources` only the namespaces, each once
/// (which jobs the Application answers for). Everything else (`spec.source`, Helm
/// values, the rest of the resource list, history and conditions) is skipped while
/// decoding, so its size does not depend on how many resources the Application
/// deploys or on its sync history.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::projection::CachedApplication;
/// use serde_json::json;
///
/// let app: CachedApplication = serde_json::from_value(json!({
///     "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
///     "metadata": {"name": "models", "namespace": "argocd", "resourceVersion": "7",
///                  "managedFields": [{"manager": "argocd-controller"}]},
///     "spec": {"project": "ml", "destination": {"namespace": "ml"},
///              "source": {"repoURL": "https://git.example.com/ml.git", "helm": {"values": "…"}}},
///     "status": {"resources": [{"kind": "Deployment", "name": "api", "namespace": "ml"},
///                              {"kind": "Service", "name": "api", "namespace": "ml"}],
///                "operationState": {"phase": "Succeeded", "startedAt": "2026-01-24T22:30:00Z",
///                                   "syncResult": {"resources": [{"kind": "Deployment"}]}}}
/// })).unwrap();
/// assert_eq!(app.metadata.resource_version.as_deref(), Some("7"));
/// assert!(app.metadata.managed_fields.is_none());
/// let read = app.to_json();
/// assert_eq!(read["spec"], json!({"project": "ml", "destination": {"namespace": "ml"}}));
/// assert_eq!(read["status"], json!({"operationState": {
///     "phase": "Succeeded", "startedAt": "2026-01-24T22:30:00Z"},
///     "resources": [{"namespace": "ml"}]}));
/// assert_eq!(read["metadata"]["name"], "models");
/// assert_eq!(read["kind"], "Application");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CachedApplication {
    /// Its metadata, trimmed.
    pub metadata: ObjectMeta,
    /// The fields read beyond the metadata, as a compact JSON object.
    fields: Box<str>,
}

impl CachedApplication {
    /// The Application as nbv reads it: `apiVersion`, `kind`, `metadata` and the
    /// fields kept.
    ///
    /// # Examples
    ///
    /// See [`CachedApplication`].
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.to_object()).unwrap_or_default()
    }

    /// The Application as a [`DynamicObject`] holding the fields kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::projection::CachedApplication;
    ///
    /// let app: CachedApplication = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "models", "namespace": "argocd"},
    ///     "spec": {"project": "ml"}
    /// })).unwrap();
    /// let object = app.to_object();
    /// assert_eq!(object.metadata.name.as_deref(), Some("models"));
    /// assert_eq!(object.data["spec"]["project"], "ml");
    /// ```
    pub fn to_object(&self) -> DynamicObject {
        let resource = crate::operator::resources::application_resource();
        let mut object = DynamicObject::new("", &resource);
        object.metadata = self.metadata.clone();
        // The text was written from a JSON object by `From<Wire>`.
        object.data = Value::Object(serde_json::from_str(&self.fields).unwrap_or_default());
        object
    }
}

impl Resource for CachedApplication {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn group(resource: &ApiResource) -> Cow<'_, str> {
        resource.group.as_str().into()
    }

    fn version(resource: &ApiResource) -> Cow<'_, str> {
        resource.version.as_str().into()
    }

    fn kind(resource: &ApiResource) -> Cow<'_, str> {
        resource.kind.as_str().into()
    }

    fn api_version(resource: &ApiResource) -> Cow<'_, str> {
        resource.api_version.as_str().into()
    }

    fn plural(resource: &ApiResource) -> Cow<'_, str> {
        resource.plural.as_str().into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl<'de> Deserialize<'de> for CachedApplication {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Wire::deserialize(deserializer).map(CachedApplication::from)
    }
}

/// The fields of an Application nbv decodes; serde skips every other one unread.
/// `spec` and `status` that are not objects count as absent: one malformed
/// Application must not fail the listing of all the others.
#[derive(Deserialize)]
struct Wire {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    spec: ObjectOr<Spec>,
    #[serde(default)]
    operation: Option<Value>,
    #[serde(default)]
    status: ObjectOr<Status>,
}

/// `ObjectMeta` without `managedFields` (often as large as the object) and the
/// deprecated `selfLink`.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Metadata {
    name: Option<String>,
    generate_name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    generation: Option<i64>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    annotations: Option<BTreeMap<String, String>>,
    owner_references: Option<Vec<OwnerReference>>,
    finalizers: Option<Vec<String>>,
}

/// The fields of `spec` nbv reads: the project (sync windows), the destination
/// (trigger access, sync windows) and the sync policy (the options and retry of a
/// sync it starts).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Spec {
    project: Option<Value>,
    destination: Option<Value>,
    sync_policy: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Status {
    operation_state: ObjectOr<OperationState>,
    resources: ManagedNamespaces,
}

/// The namespaces of `status.resources`, each once: which jobs the Application answers
/// for ([`nbv_core::aggregate::Custody`]). Entries that are not objects, and a list that
/// is not a list, read as nothing.
#[derive(Default)]
struct ManagedNamespaces(std::collections::BTreeSet<String>);

impl<'de> Deserialize<'de> for ManagedNamespaces {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = ManagedNamespaces;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an Application's status.resources list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut namespaces = std::collections::BTreeSet::new();
                while let Some(ObjectOr(entry)) = seq.next_element::<ObjectOr<Entry>>()? {
                    namespaces.extend(entry.and_then(|e| e.namespace.0));
                }
                Ok(ManagedNamespaces(namespaces))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ManagedNamespaces::default())
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(ManagedNamespaces::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ManagedNamespaces::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ManagedNamespaces::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ManagedNamespaces::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ManagedNamespaces::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(ManagedNamespaces::default())
            }
        }
        deserializer.deserialize_any(Entries)
    }
}

/// The part of a `status.resources` entry nbv reads: its namespace, when it is a string.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Entry {
    namespace: TextOr,
}

/// A string; anything else reads as absent.
#[derive(Default)]
struct TextOr(Option<String>);

impl<'de> Deserialize<'de> for TextOr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(deserializer)? {
            Value::String(text) => TextOr(Some(text)),
            _ => TextOr(None),
        })
    }
}

/// `status.operationState` without `syncResult` (one entry per resource synced).
struct OperationState(Map<String, Value>);

impl<'de> Deserialize<'de> for OperationState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = OperationState;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an Application's status.operationState object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OperationState, A::Error> {
                let mut fields = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "syncResult" {
                        map.next_value::<IgnoredAny>()?;
                    } else {
                        fields.insert(key, map.next_value()?);
                    }
                }
                Ok(OperationState(fields))
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// A `T` decoded from a JSON object; anything else (null, a string, a list) is
/// skipped and reads as absent.
struct ObjectOr<T>(Option<T>);

impl<T> Default for ObjectOr<T> {
    fn default() -> Self {
        ObjectOr(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOr<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Object<T> {
            type Value = ObjectOr<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjectOr<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| ObjectOr(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ObjectOr<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ObjectOr(None))
            }
            fn visit_unit<E>(self) -> Result<ObjectOr<T>, E> {
                Ok(ObjectOr(None))
            }
            fn visit_none<E>(self) -> Result<ObjectOr<T>, E> {
                Ok(ObjectOr(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<ObjectOr<T>, E> {
                Ok(ObjectOr(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<ObjectOr<T>, E> {
                Ok(ObjectOr(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<ObjectOr<T>, E> {
                Ok(ObjectOr(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<ObjectOr<T>, E> {
                Ok(ObjectOr(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<ObjectOr<T>, E> {
                Ok(ObjectOr(None))
            }
        }
        deserializer.deserialize_any(Object(PhantomData))
    }
}

impl From<Wire> for CachedApplication {
    fn from(wire: Wire) -> Self {
        let Wire {
            metadata,
            spec,
            operation,
            status,
        } = wire;
        let (spec, status) = (spec.0.unwrap_or_default(), status.0.unwrap_or_default());
        let mut fields = Map::new();
        let spec: Map<String, Value> = [
            ("project", spec.project),
            ("destination", spec.destination),
            ("syncPolicy", spec.sync_policy),
        ]
        .into_iter()
        .filter_map(|(field, value)| Some((field.to_owned(), value?)))
        .collect();
        if !spec.is_empty() {
            fields.insert("spec".to_owned(), Value::Object(spec));
        }
        if let Some(operation) = operation {
            fields.insert("operation".to_owned(), operation);
        }
        let mut kept = Map::new();
        if let Some(OperationState(state)) = status.operation_state.0 {
            kept.insert("operationState".to_owned(), Value::Object(state));
        }
        if !status.resources.0.is_empty() {
            let namespaces = status.resources.0.into_iter();
            let entries = namespaces.map(|namespace| serde_json::json!({ "namespace": namespace }));
            kept.insert("resources".to_owned(), Value::Array(entries.collect()));
        }
        if !kept.is_empty() {
            fields.insert("status".to_owned(), Value::Object(kept));
        }
        let mut metadata = ObjectMeta {
            name: metadata.name,
            generate_name: metadata.generate_name,
            namespace: metadata.namespace,
            uid: metadata.uid,
            resource_version: metadata.resource_version,
            generation: metadata.generation,
            creation_timestamp: metadata.creation_timestamp,
            deletion_timestamp: metadata.deletion_timestamp,
            deletion_grace_period_seconds: metadata.deletion_grace_period_seconds,
            labels: metadata.labels,
            annotations: metadata.annotations,
            owner_references: metadata.owner_references,
            finalizers: metadata.finalizers,
            ..ObjectMeta::default()
        };
        trim_metadata(&mut metadata);
        CachedApplication {
            metadata,
            fields: Value::Object(fields).to_string().into_boxed_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cached(object: Value) -> Value {
        serde_json::from_value::<CachedApplication>(object)
            .expect("an Application")
            .to_json()
    }

    #[test]
    fn what_nbv_reads_is_kept_as_it_was() {
        let sync_policy = json!({"automated": {"prune": true}, "syncOptions": ["CreateNamespace=true"],
                                 "retry": {"limit": 2, "backoff": {"duration": "5s"}}});
        let operation = json!({"sync": {"revision": "abc"}, "initiatedBy": {"username": "nbv"},
                               "info": [{"name": "nbv.io/run", "value": "ml/train/3"}]});
        let state = json!({"phase": "Running", "startedAt": "2026-01-24T22:30:00Z",
                           "operation": operation, "message": "waiting for healthy state"});
        let read = cached(json!({
            "metadata": {"name": "models", "namespace": "argocd", "uid": "u-1",
                         "labels": {"team": "ml"},
                         "annotations": {"notified.notifications.argoproj.io": "{}",
                                         super::super::metadata::LAST_APPLIED: "{}"},
                         "ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1",
                                              "kind": "ApplicationSet", "name": "all", "uid": "u-0"}]},
            "spec": {"project": "ml", "destination": {"server": "https://kubernetes.default.svc",
                                                      "namespace": "ml"},
                     "syncPolicy": sync_policy, "source": {"repoURL": "https://git.example.com/ml.git"}},
            "operation": operation,
            "status": {"operationState": {"syncResult": {"resources": []}, "phase": "Running",
                                          "startedAt": "2026-01-24T22:30:00Z", "operation": operation,
                                          "message": "waiting for healthy state"},
                       "health": {"status": "Progressing"}, "history": [{"id": 1}]}
        }));
        assert_eq!(read["spec"]["syncPolicy"], sync_policy);
        assert_eq!(read["spec"]["destination"]["namespace"], "ml");
        assert!(read["spec"]["source"].is_null());
        assert_eq!(read["operation"], operation);
        assert_eq!(read["status"], json!({"operationState": state}));
        assert_eq!(read["metadata"]["labels"], json!({"team": "ml"}));
        assert_eq!(
            read["metadata"]["annotations"],
            json!({"notified.notifications.argoproj.io": "{}"})
        );
        assert_eq!(
            read["metadata"]["ownerReferences"][0]["kind"],
            "ApplicationSet"
        );
    }

    #[test]
    fn an_application_without_the_fields_reads_as_empty() {
        let read = cached(json!({"metadata": {"name": "bare", "namespace": "argocd"}}));
        assert_eq!(read["metadata"]["name"], "bare");
        for field in ["spec", "operation", "status"] {
            assert!(read[field].is_null(), "{field}: {read}");
        }
        let read = cached(json!({"metadata": {"name": "nulls"}, "spec": null,
                                 "operation": null, "status": {"operationState": null}}));
        assert!(read["spec"].is_null() && read["operation"].is_null() && read["status"].is_null());
    }

    #[test]
    fn a_malformed_spec_or_status_does_not_fail_the_listing() {
        let list: kube::api::ObjectList<CachedApplication> = serde_json::from_value(json!({
            "metadata": {"resourceVersion": "9"},
            "items": [
                {"metadata": {"name": "odd"}, "spec": "not an object",
                 "status": ["a", {"b": 1}], "operation": 7},
                {"metadata": {"name": "odd-state"}, "status": {"operationState": true}},
                {"metadata": {"name": "good"}, "spec": {"project": "ml"}}
            ]
        }))
        .expect("a listing");
        let reads: Vec<Value> = list.items.iter().map(CachedApplication::to_json).collect();
        assert!(reads[0]["spec"].is_null() && reads[0]["status"].is_null());
        assert_eq!(reads[0]["operation"], 7);
        assert!(reads[1]["status"].is_null());
        assert_eq!(reads[2]["spec"]["project"], "ml");
    }
}
