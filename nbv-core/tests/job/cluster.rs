//! A cluster in a map, answering the job machine's requests as an API server and its
//! watch caches would: enough to drive a reconcile in a test, with faults on demand.

use std::collections::{BTreeMap, BTreeSet};

use nbv_core::io::{ApiAnswer, ObjectRef, Request, Response, Subresource};
use serde_json::{Value, json};

/// Objects by kind, namespace and name; every write bumps `resourceVersion`.
#[derive(Default)]
pub struct Cluster {
    objects: BTreeMap<(String, String, String), Value>,
    version: u64,
    /// The requests answered, as `Request`'s `Display` writes them.
    pub log: Vec<String>,
    /// Answers to give instead of the cluster's, by request number (from 0).
    pub faults: BTreeMap<usize, ApiAnswer>,
    /// Requests carried out whose answer is lost (a 500 instead), by number.
    pub lost: BTreeSet<usize>,
    /// Whether the shell keeps watch caches (of Pods, Applications, models).
    pub caches: bool,
    generated: u64,
    /// Every version of every job stored, in order.
    pub history: Vec<Value>,
    /// How many writes each object took, by kind, namespace and name.
    pub writes: BTreeMap<(String, String, String), usize>,
    /// API versions this cluster does not serve: requests about them are answered
    /// 404, as an API server answers for a resource it does not know.
    pub unserved: Vec<String>,
}

fn key(object: &ObjectRef) -> (String, String, String) {
    (
        object.kind.clone(),
        object.namespace.clone().unwrap_or_default(),
        object.name.clone(),
    )
}

/// Whether `labels` match a selector of `a=b`, `a!=b` terms.
fn selects(selector: &str, labels: &Value) -> bool {
    selector.split(',').filter(|t| !t.is_empty()).all(|term| {
        if let Some((k, v)) = term.split_once("!=") {
            labels.get(k).and_then(Value::as_str) != Some(v)
        } else if let Some((k, v)) = term.split_once('=') {
            labels.get(k).and_then(Value::as_str) == Some(v)
        } else {
            labels.get(term).is_some()
        }
    })
}

impl Cluster {
    /// A cluster with watch caches.
    pub fn new() -> Self {
        Cluster {
            caches: true,
            ..Cluster::default()
        }
    }

    /// Stores `object` (its kind and metadata name it).
    pub fn put(&mut self, object: Value) -> Value {
        let reference = ObjectRef {
            api_version: object["apiVersion"].as_str().unwrap_or("v1").to_owned(),
            kind: object["kind"].as_str().unwrap_or_default().to_owned(),
            namespace: object["metadata"]["namespace"].as_str().map(str::to_owned),
            name: object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        };
        self.store(&reference, object)
    }

    fn store(&mut self, reference: &ObjectRef, mut object: Value) -> Value {
        self.version += 1;
        object["metadata"]["resourceVersion"] = json!(self.version.to_string());
        if object["metadata"]["uid"].is_null() {
            object["metadata"]["uid"] = json!(format!("uid-{}", reference.name));
        }
        *self.writes.entry(key(reference)).or_default() += 1;
        if reference.kind == "NotebookValidationJob" {
            self.history.push(object.clone());
        }
        self.objects.insert(key(reference), object.clone());
        object
    }

    /// The object `kind namespace/name`.
    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&(kind.to_owned(), namespace.to_owned(), name.to_owned()))
    }

    /// Every object of `kind`.
    pub fn all(&self, kind: &str) -> Vec<&Value> {
        self.objects
            .iter()
            .filter(|((k, _, _), _)| k == kind)
            .map(|(_, v)| v)
            .collect()
    }

    /// Answers `request`: a fault if one is set for it, else as the cluster does (and
    /// then a 500 if its answer is to be lost).
    pub fn answer(&mut self, request: &Request) -> Response {
        let number = self.log.len();
        let served = self.serve(request);
        if self.lost.remove(&number) {
            return Response::Failed(ApiAnswer::status(500, "InternalError", "answer lost"));
        }
        served
    }

    fn serve(&mut self, request: &Request) -> Response {
        let number = self.log.len();
        self.log.push(request.to_string());
        if let Some(fault) = self.faults.remove(&number) {
            // A conflict is what a write answers when the object changed; to a create
            // it means the object exists, which a fault must not pretend.
            let conflict =
                matches!(&fault, ApiAnswer::Status { reason, .. } if reason == "Conflict");
            if conflict && !matches!(request, Request::Patch { .. }) {
                return Response::Failed(ApiAnswer::status(503, "ServiceUnavailable", "busy"));
            }
            return Response::Failed(fault);
        }
        if self.unserved.contains(&request.object().api_version) {
            let missing = ApiAnswer::status(
                404,
                "NotFound",
                "the server could not find the requested resource",
            );
            return match request {
                Request::Get(_) => Response::Object(None),
                Request::Cached(_) => Response::NotCached,
                _ => Response::Failed(missing),
            };
        }
        match request {
            Request::Get(object) => Response::Object(self.objects.get(&key(object)).cloned()),
            Request::Cached(object) => {
                if !self.caches || object.kind == "AppProject" {
                    return Response::NotCached;
                }
                Response::Object(self.objects.get(&key(object)).cloned())
            }
            Request::List {
                kind,
                label_selector,
            } => Response::Objects(
                self.objects
                    .iter()
                    .filter(|((k, ns, _), v)| {
                        *k == kind.kind
                            && Some(ns) == kind.namespace.as_ref()
                            && selects(label_selector, &v["metadata"]["labels"])
                    })
                    .map(|(_, v)| v.clone())
                    .collect(),
            ),
            Request::Create { object, body } => {
                let mut object = object.clone();
                if object.name.is_empty() {
                    self.generated += 1;
                    object.name = format!(
                        "{}{}",
                        body["metadata"]["generateName"].as_str().unwrap_or("x-"),
                        self.generated
                    );
                }
                if self.objects.contains_key(&key(&object)) {
                    return Response::Failed(ApiAnswer::status(409, "AlreadyExists", "exists"));
                }
                let mut body = body.clone();
                body["metadata"]["name"] = json!(object.name);
                Response::Object(Some(self.store(&object, body)))
            }
            Request::Patch {
                object,
                subresource,
                patch,
            } => {
                let Some(mut stored) = self.objects.get(&key(object)).cloned() else {
                    return Response::Failed(ApiAnswer::status(404, "NotFound", "not found"));
                };
                let precondition = patch.pointer("/metadata/resourceVersion");
                if let Some(version) = precondition.and_then(Value::as_str)
                    && stored["metadata"]["resourceVersion"] != json!(version)
                {
                    return Response::Failed(ApiAnswer::status(409, "Conflict", "modified"));
                }
                let mut patch = patch.clone();
                if let Some(metadata) = patch.get_mut("metadata").and_then(Value::as_object_mut) {
                    metadata.remove("resourceVersion");
                }
                let part = match subresource {
                    Subresource::Status => {
                        json!({"status": patch.get("status").cloned().unwrap_or(Value::Null)})
                    }
                    Subresource::Object => {
                        let mut whole = patch.clone();
                        if let Some(fields) = whole.as_object_mut() {
                            fields.remove("status");
                        }
                        whole
                    }
                };
                json_patch::merge(&mut stored, &part);
                Response::Object(Some(self.store(object, stored)))
            }
            Request::Delete { object, uid } => match self.objects.get(&key(object)) {
                None => Response::Failed(ApiAnswer::status(404, "NotFound", "not found")),
                Some(found) if uid.is_some() && found["metadata"]["uid"] != json!(uid) => {
                    Response::Failed(ApiAnswer::status(409, "Conflict", "uid precondition"))
                }
                Some(_) => {
                    self.objects.remove(&key(object));
                    Response::Deleted
                }
            },
            // No job asks for an eviction: only a restart trigger does.
            Request::Evict { .. } => Response::Failed(ApiAnswer::status(
                405,
                "MethodNotAllowed",
                "no eviction in this cluster",
            )),
            Request::DeleteAll {
                kind,
                label_selector,
            } => {
                let gone: Vec<_> = self
                    .objects
                    .iter()
                    .filter(|((k, ns, _), v)| {
                        *k == kind.kind
                            && Some(ns) == kind.namespace.as_ref()
                            && selects(label_selector, &v["metadata"]["labels"])
                    })
                    .map(|(k, _)| k.clone())
                    .collect();
                let deleted = gone.iter().filter_map(|k| self.objects.remove(k)).collect();
                Response::Objects(deleted)
            }
        }
    }
}
