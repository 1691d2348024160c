//! Carrying out one routed API request against the state (synchronously, under the lock).

use std::collections::BTreeMap;
use std::time::Duration;

use http::StatusCode;
use serde_json::{Value, json};

use super::error::{ApiError, Reason};
use super::log::{Actor, Verb};
use super::meta::meta_str;
use super::ops::{DeleteOpts, Deletion, PatchBody, Propagation, WriteOpts, object_key};
use super::patch::parse_body;
use super::resource::ApiResourceSpec;
use super::route::ResourcePath;
use super::selector::{FieldSelector, LabelSelector};
use super::state::State;
use super::store::{WatchStart, WriteCtx};
use super::watch::{ObjectFilter, WatchPlan};

/// Server-side watch timeout when the client names none (the API server picks 30 to 60
/// minutes; kube always sends `timeoutSeconds`).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);
/// Upper bound on `timeoutSeconds`, so a hostile value cannot overflow the deadline.
const MAX_WATCH_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// What the request produced.
pub(crate) enum Outcome {
    /// A JSON response.
    Json(StatusCode, Value),
    /// A watch stream.
    Watch(WatchPlan),
    /// A watch refused inside the stream (HTTP 200, then one ERROR event), as for 410.
    WatchError(ApiError),
}

/// A routed request for a registered resource.
pub(crate) struct ApiRequest<'a> {
    pub(crate) verb: Verb,
    pub(crate) path: &'a ResourcePath,
    pub(crate) spec: &'a ApiResourceSpec,
    pub(crate) query: &'a BTreeMap<String, String>,
    pub(crate) body: &'a [u8],
}

impl ApiRequest<'_> {
    fn param(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str)
    }

    fn flag(&self, name: &str) -> bool {
        matches!(self.param(name), Some("true" | "1"))
    }

    fn dry_run(&self) -> bool {
        self.param("dryRun") == Some("All")
    }

    fn namespace(&self) -> &str {
        self.path.namespace.as_deref().unwrap_or_default()
    }

    fn name(&self) -> Result<&str, ApiError> {
        self.path.name.as_deref().ok_or_else(|| {
            ApiError::new(Reason::MethodNotAllowed, "this verb needs an object name")
        })
    }

    fn filter(&self) -> Result<ObjectFilter, ApiError> {
        let bad = |e: super::selector::SelectorError| ApiError::bad_request(e.to_string());
        Ok(ObjectFilter {
            namespace: self.path.namespace.clone(),
            labels: LabelSelector::parse(self.param("labelSelector").unwrap_or_default())
                .map_err(bad)?,
            fields: FieldSelector::parse(self.param("fieldSelector").unwrap_or_default())
                .map_err(bad)?,
        })
    }

    fn write_opts(&self) -> WriteOpts {
        WriteOpts {
            dry_run: self.dry_run(),
            status: self.path.subresource.is_some(),
        }
    }

    fn body_json(&self) -> Result<Value, ApiError> {
        parse_body(self.body)
    }

    /// `DeleteOptions` from the body (kube sends them there) and the query.
    fn delete_opts(&self) -> Result<DeleteOpts, ApiError> {
        let body = if self.body.is_empty() {
            Value::Null
        } else {
            self.body_json()?
        };
        let policy = body
            .get("propagationPolicy")
            .and_then(Value::as_str)
            .or_else(|| self.param("propagationPolicy"));
        let propagation = match policy {
            None | Some("Background" | "Foreground") => Propagation::Background,
            Some("Orphan") => Propagation::Orphan,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "propagationPolicy \"{other}\" is not one of Background, Foreground, Orphan"
                )));
            }
        };
        let precondition = |field: &str| {
            body.pointer(&format!("/preconditions/{field}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let body_dry_run = body
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(|v| v == "All"));
        Ok(DeleteOpts {
            dry_run: self.dry_run() || body_dry_run,
            propagation,
            precondition_uid: precondition("uid"),
            precondition_resource_version: precondition("resourceVersion"),
        })
    }
}

fn list_doc(spec: &ApiResourceSpec, rv: u64, items: Vec<Value>) -> Value {
    json!({
        "apiVersion": spec.api_version(),
        "kind": format!("{}List", spec.kind),
        "metadata": {"resourceVersion": rv.to_string()},
        "items": items,
    })
}

fn success_status(spec: &ApiResourceSpec, object: &Value) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {
            "name": meta_str(object, "name").unwrap_or_default(),
            "group": spec.group,
            "kind": spec.plural,
            "uid": meta_str(object, "uid").unwrap_or_default(),
        },
    })
}

impl State {
    /// Carries out `req` for a client.
    pub(crate) fn execute(
        &mut self,
        req: &ApiRequest<'_>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Outcome, ApiError> {
        let spec = req.spec;
        let needs_object = !matches!(req.verb, Verb::List | Verb::Watch);
        if spec.namespaced && needs_object && req.path.namespace.is_none() {
            return Err(ApiError::new(
                Reason::MethodNotAllowed,
                format!(
                    "{} is namespaced: use /namespaces/{{namespace}}/{} for this verb",
                    spec.plural, spec.plural
                ),
            ));
        }
        if !spec.namespaced && req.path.namespace.is_some() {
            return Err(ApiError::new(
                Reason::NotFound,
                format!("{} is not namespaced", spec.plural),
            ));
        }
        match req.path.subresource.as_deref() {
            None => {}
            Some("status")
                if spec.status_subresource
                    && matches!(req.verb, Verb::Get | Verb::Update | Verb::Patch { .. }) => {}
            Some("status") if spec.status_subresource => {
                return Err(ApiError::new(
                    Reason::MethodNotAllowed,
                    "the status subresource supports get, update and patch",
                ));
            }
            Some("eviction") if spec.group.is_empty() && spec.plural == "pods" => {
                if req.verb != Verb::Create {
                    return Err(ApiError::new(
                        Reason::MethodNotAllowed,
                        "the eviction subresource supports create",
                    ));
                }
                let body = req.body_json()?;
                let ctx = WriteCtx {
                    verb: req.verb,
                    actor: Actor::Client,
                    now,
                };
                let status = self.evict(spec, req.namespace(), req.name()?, &body, ctx)?;
                return Ok(Outcome::Json(StatusCode::CREATED, status));
            }
            Some(other) => {
                return Err(ApiError::new(
                    Reason::NotFound,
                    format!("{} has no subresource \"{other}\"", spec.plural),
                ));
            }
        }
        let ctx = WriteCtx {
            verb: req.verb,
            actor: Actor::Client,
            now,
        };
        let ns = req.namespace();
        let json = |code: StatusCode, value: Value| Ok(Outcome::Json(code, value));
        match req.verb {
            Verb::Get => {
                let name = req.name()?;
                let key = object_key(spec, ns, name);
                match self.store.get(&key) {
                    Some(object) => json(StatusCode::OK, object.clone()),
                    None => Err(ApiError::not_found(&spec.key().to_string(), name)),
                }
            }
            Verb::List => {
                let filter = req.filter()?;
                let items = self
                    .store
                    .list(&spec.key(), req.path.namespace.as_deref())
                    .filter(|o| filter.matches(o))
                    .cloned()
                    .collect();
                json(
                    StatusCode::OK,
                    list_doc(spec, self.store.resource_version(), items),
                )
            }
            Verb::Watch => self.watch(req),
            Verb::Create => {
                let body = req.body_json()?;
                let created = self.store.create(spec, ns, body, ctx, req.write_opts())?;
                json(StatusCode::CREATED, created)
            }
            Verb::Update => {
                let key = object_key(spec, ns, req.name()?);
                let body = req.body_json()?;
                let updated = self
                    .store
                    .replace(spec, &key, body, ctx, req.write_opts())?;
                json(StatusCode::OK, updated)
            }
            Verb::Patch { patch_type } => {
                let key = object_key(spec, ns, req.name()?);
                let existed = self.store.get(&key).is_some();
                let patch = PatchBody {
                    patch_type,
                    body: req.body,
                    field_manager: req.param("fieldManager"),
                };
                let patched = self
                    .store
                    .patch(spec, &key, &patch, ctx, req.write_opts())?;
                let code = if existed {
                    StatusCode::OK
                } else {
                    StatusCode::CREATED
                };
                json(code, patched)
            }
            Verb::Delete => {
                let key = object_key(spec, ns, req.name()?);
                match self.store.delete(spec, &key, ctx, &req.delete_opts()?)? {
                    Deletion::Deleted(last) => json(StatusCode::OK, success_status(spec, &last)),
                    Deletion::Pending(object) => json(StatusCode::OK, object),
                }
            }
            Verb::DeleteCollection => {
                let filter = req.filter()?;
                let opts = req.delete_opts()?;
                let keys: Vec<String> = self
                    .store
                    .list(&spec.key(), req.path.namespace.as_deref())
                    .filter(|o| filter.matches(o))
                    .filter_map(|o| meta_str(o, "name").map(str::to_owned))
                    .collect();
                let mut items = Vec::with_capacity(keys.len());
                for name in keys {
                    let key = object_key(spec, ns, &name);
                    // An earlier deletion's cascade may already have removed it.
                    match self.store.delete(spec, &key, ctx, &opts) {
                        Ok(deletion) => items.push(deletion.object().clone()),
                        Err(e) if e.reason == Reason::NotFound => {}
                        Err(e) => return Err(e),
                    }
                }
                json(
                    StatusCode::OK,
                    list_doc(spec, self.store.resource_version(), items),
                )
            }
        }
    }

    fn watch(&mut self, req: &ApiRequest<'_>) -> Result<Outcome, ApiError> {
        let filter = req.filter()?;
        let send_initial_events = req.flag("sendInitialEvents");
        if send_initial_events && req.param("resourceVersionMatch") != Some("NotOlderThan") {
            return Err(ApiError::invalid(
                "sendInitialEvents=true requires resourceVersionMatch=NotOlderThan",
            ));
        }
        let start = match req.param("resourceVersion").unwrap_or_default() {
            _ if send_initial_events => WatchStart::CurrentState,
            "" | "0" => WatchStart::CurrentState,
            rv => WatchStart::After(rv.parse().map_err(|_| {
                ApiError::bad_request(format!(
                    "resourceVersion \"{rv}\" is not a resourceVersion this server issued"
                ))
            })?),
        };
        let timeout = match req.param("timeoutSeconds") {
            None => DEFAULT_WATCH_TIMEOUT,
            Some(s) => Duration::from_secs(s.parse().map_err(|_| {
                ApiError::bad_request(format!("timeoutSeconds \"{s}\" is not a whole number"))
            })?)
            .min(MAX_WATCH_TIMEOUT),
        };
        let opened_at = self.store.resource_version();
        let subscription = match self.store.subscribe(&req.spec.key(), start) {
            Ok(subscription) => subscription,
            Err(e) if e.reason == Reason::Expired => return Ok(Outcome::WatchError(e)),
            Err(e) => return Err(e),
        };
        Ok(Outcome::Watch(WatchPlan {
            filter,
            subscription,
            opened_at,
            timeout,
            bookmarks: req.flag("allowWatchBookmarks"),
            initial_events_end: send_initial_events,
            api_version: req.spec.api_version(),
            kind: req.spec.kind.clone(),
        }))
    }
}
