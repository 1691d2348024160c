//! The semantics of each write verb: what the API server checks, which fields it owns,
//! how deletion interacts with finalizers and owner references.
//!
//! Requests from clients ([`Actor::Client`]) get the real API server's rules. Direct
//! access from tests ([`Actor::Direct`]) is for setting up state, so it skips the rules a
//! test would have to work around: it may write `.status` through the main resource and
//! never fails on a stale `resourceVersion`.

use std::collections::HashSet;

use nbv_core::time::rfc3339;
use serde_json::Value;

use super::error::ApiError;
use super::log::{Actor, PatchType, Verb};
use super::meta::{
    finalizers, generation, generation_relevant, meta_str, metadata_mut, owner_uids, set_meta,
};
use super::patch::{apply_patch, record_apply_manager};
use super::resource::ApiResourceSpec;
use super::store::{ObjectKey, Store, WriteCtx};

/// Metadata fields only the server writes; updates cannot change them.
const SERVER_OWNED_META: [&str; 4] = [
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Longest object name the API server accepts (a DNS subdomain).
const MAX_NAME_LEN: usize = 253;

/// Options shared by writes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WriteOpts {
    /// `dryRun=All`: validate and compute, but store nothing.
    pub(crate) dry_run: bool,
    /// The write targets the `/status` subresource.
    pub(crate) status: bool,
}

/// A PATCH request's body and how to read it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PatchBody<'a> {
    pub(crate) patch_type: PatchType,
    pub(crate) body: &'a [u8],
    /// The `fieldManager` query parameter (required for server-side apply).
    pub(crate) field_manager: Option<&'a str>,
}

/// `propagationPolicy` of a delete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Propagation {
    /// Dependents are deleted right after the owner (the garbage collector's work,
    /// done synchronously here). Foreground deletion is treated the same way.
    #[default]
    Background,
    /// Dependents are kept; their owner references to the deleted object are removed.
    Orphan,
}

/// Options of a delete.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeleteOpts {
    pub(crate) dry_run: bool,
    pub(crate) propagation: Propagation,
    pub(crate) precondition_uid: Option<String>,
    pub(crate) precondition_resource_version: Option<String>,
}

/// What a delete did.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Deletion {
    /// The object is gone; this was its last state.
    Deleted(Value),
    /// The object has finalizers: it now carries a `deletionTimestamp` and stays until
    /// they are removed.
    Pending(Value),
}

impl Deletion {
    pub(crate) fn object(&self) -> &Value {
        match self {
            Deletion::Deleted(object) | Deletion::Pending(object) => object,
        }
    }
}

/// Builds the storage key of `name` in `namespace` for `spec`.
pub(crate) fn object_key(spec: &ApiResourceSpec, namespace: &str, name: &str) -> ObjectKey {
    ObjectKey {
        resource: spec.key(),
        namespace: if spec.namespaced {
            namespace.to_owned()
        } else {
            String::new()
        },
        name: name.to_owned(),
    }
}

fn validate_name(spec: &ApiResourceSpec, name: &str) -> Result<(), ApiError> {
    let bad = name.is_empty()
        || name.len() > MAX_NAME_LEN
        || name == "."
        || name == ".."
        || name.contains(['/', '%']);
    if bad {
        Err(ApiError::invalid(format!(
            "{} \"{name}\" is invalid: metadata.name: a name must be 1 to {MAX_NAME_LEN} \
             characters without '/' or '%'",
            spec.plural
        )))
    } else {
        Ok(())
    }
}

/// Checks `apiVersion` and `kind` of a request body against the URL's resource, filling
/// them in when absent.
fn check_type(spec: &ApiResourceSpec, object: &mut Value) -> Result<(), ApiError> {
    let api_version = spec.api_version();
    let map = object.as_object_mut().ok_or_else(|| {
        ApiError::bad_request(format!(
            "the request body for {} must be a JSON object",
            spec.plural
        ))
    })?;
    for (field, expected) in [
        ("apiVersion", api_version.as_str()),
        ("kind", spec.kind.as_str()),
    ] {
        match map.get(field) {
            None | Some(Value::Null) => {
                map.insert(field.to_owned(), Value::String(expected.to_owned()));
            }
            Some(Value::String(actual)) if actual == expected => {}
            Some(actual) => {
                return Err(ApiError::bad_request(format!(
                    "{field} {actual} of the request body does not match the URL's resource \
                     {} (expected \"{expected}\")",
                    spec.plural
                )));
            }
        }
    }
    Ok(())
}

/// Checks that a body names the object the URL names.
fn check_identity(spec: &ApiResourceSpec, key: &ObjectKey, object: &Value) -> Result<(), ApiError> {
    let name = meta_str(object, "name").unwrap_or_default();
    if name != key.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            key.name
        )));
    }
    if spec.namespaced
        && let Some(ns) = meta_str(object, "namespace")
        && ns != key.namespace
    {
        return Err(ApiError::bad_request(format!(
            "the namespace of the object ({ns}) does not match the namespace on the URL ({})",
            key.namespace
        )));
    }
    Ok(())
}

fn stale(spec: &ApiResourceSpec, key: &ObjectKey) -> ApiError {
    ApiError::conflict(
        &spec.key().to_string(),
        &key.name,
        "the object has been modified; please apply your changes to the latest version and try again",
    )
}

impl Store {
    /// POST: creates an object in `namespace` (ignored for cluster-scoped resources).
    pub(crate) fn create(
        &mut self,
        spec: &ApiResourceSpec,
        namespace: &str,
        mut object: Value,
        ctx: WriteCtx,
        opts: WriteOpts,
    ) -> Result<Value, ApiError> {
        check_type(spec, &mut object)?;
        let client = ctx.actor == Actor::Client;
        if spec.namespaced {
            match meta_str(&object, "namespace").filter(|ns| !ns.is_empty()) {
                Some(ns) if ns != namespace && !namespace.is_empty() => {
                    return Err(ApiError::bad_request(format!(
                        "the namespace of the provided object ({ns}) does not match the \
                         namespace sent on the request ({namespace})"
                    )));
                }
                Some(ns) if namespace.is_empty() => {
                    let ns = ns.to_owned();
                    return self.create(spec, &ns, object, ctx, opts);
                }
                _ => {}
            }
            if namespace.is_empty() {
                return Err(ApiError::invalid(format!(
                    "{} is namespaced: metadata.namespace is required",
                    spec.plural
                )));
            }
            set_meta(
                &mut object,
                "namespace",
                Some(Value::String(namespace.to_owned())),
            );
        } else {
            set_meta(&mut object, "namespace", None);
        }
        if client && meta_str(&object, "resourceVersion").is_some_and(|rv| !rv.is_empty()) {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let name = match meta_str(&object, "name").filter(|n| !n.is_empty()) {
            Some(name) => name.to_owned(),
            None => {
                let prefix = meta_str(&object, "generateName")
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| {
                        ApiError::invalid(format!(
                            "{} is invalid: metadata.name: name or generateName is required",
                            spec.plural
                        ))
                    })?
                    .to_owned();
                let generated = loop {
                    // Retried only on a collision with an existing name: bounded in practice.
                    let candidate = format!("{prefix}{}", self.next_name_suffix());
                    if self.get(&object_key(spec, namespace, &candidate)).is_none() {
                        break candidate;
                    }
                };
                set_meta(&mut object, "name", Some(Value::String(generated.clone())));
                generated
            }
        };
        validate_name(spec, &name)?;
        let key = object_key(spec, namespace, &name);
        if self.get(&key).is_some() {
            return Err(ApiError::already_exists(&spec.key().to_string(), &name));
        }
        let uid = self.next_uid();
        let metadata = metadata_mut(&mut object);
        metadata.insert("uid".into(), Value::String(uid));
        metadata.insert("creationTimestamp".into(), Value::String(rfc3339(ctx.now)));
        metadata.insert("generation".into(), Value::from(1));
        metadata.remove("deletionTimestamp");
        metadata.remove("deletionGracePeriodSeconds");
        metadata.remove("resourceVersion");
        if client
            && spec.status_subresource
            && let Some(map) = object.as_object_mut()
        {
            // The API server drops .status on create when status is a subresource.
            map.remove("status");
        }
        if opts.dry_run {
            return Ok(object);
        }
        Ok(self.commit(&key, Some(object), ctx))
    }

    /// PUT: replaces the object (or, with `opts.status`, only its `.status`).
    pub(crate) fn replace(
        &mut self,
        spec: &ApiResourceSpec,
        key: &ObjectKey,
        mut body: Value,
        ctx: WriteCtx,
        opts: WriteOpts,
    ) -> Result<Value, ApiError> {
        check_type(spec, &mut body)?;
        let current = self
            .get(key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&spec.key().to_string(), &key.name))?;
        check_identity(spec, key, &body)?;
        if ctx.actor == Actor::Client
            && let Some(rv) = meta_str(&body, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta_str(&current, "resourceVersion")
        {
            return Err(stale(spec, key));
        }
        self.finish_update(spec, key, &current, body, ctx, opts)
    }

    /// PATCH: applies a patch (server-side apply creates the object when it is absent).
    pub(crate) fn patch(
        &mut self,
        spec: &ApiResourceSpec,
        key: &ObjectKey,
        patch: &PatchBody<'_>,
        ctx: WriteCtx,
        opts: WriteOpts,
    ) -> Result<Value, ApiError> {
        let PatchBody {
            patch_type,
            body,
            field_manager,
        } = *patch;
        let manager = match (patch_type, field_manager) {
            (PatchType::Apply, Some(m)) if !m.is_empty() => Some(m),
            (PatchType::Apply, _) => {
                return Err(ApiError::bad_request(
                    "PATCH requests with the apply patch type require a fieldManager query \
                     parameter",
                ));
            }
            _ => None,
        };
        let Some(current) = self.get(key).cloned() else {
            return match manager {
                Some(manager) if !opts.status => {
                    let mut object = super::patch::parse_body(body)?;
                    check_identity(spec, key, &object)?;
                    record_apply_manager(&mut object, manager, ctx.now);
                    self.create(spec, &key.namespace, object, ctx, opts)
                }
                _ => Err(ApiError::not_found(&spec.key().to_string(), &key.name)),
            };
        };
        let mut patched = apply_patch(patch_type, &current, body)?;
        if !patched.is_object() {
            return Err(ApiError::invalid("the patch must leave a JSON object"));
        }
        for field in ["apiVersion", "kind"] {
            if patched.get(field) != current.get(field) {
                return Err(ApiError::bad_request(format!(
                    "a patch cannot change {field} (from {} to {})",
                    current.get(field).unwrap_or(&Value::Null),
                    patched.get(field).unwrap_or(&Value::Null)
                )));
            }
        }
        check_identity(spec, key, &patched)?;
        // A patch may carry a resourceVersion as a precondition (optimistic locking).
        if let Some(rv) = meta_str(&patched, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta_str(&current, "resourceVersion")
        {
            return Err(stale(spec, key));
        }
        if let Some(manager) = manager {
            record_apply_manager(&mut patched, manager, ctx.now);
        }
        self.finish_update(spec, key, &current, patched, ctx, opts)
    }

    /// Sets `.status` directly (test setup), bumping the resourceVersion.
    pub(crate) fn set_status(
        &mut self,
        spec: &ApiResourceSpec,
        key: &ObjectKey,
        status: Value,
        ctx: WriteCtx,
    ) -> Result<Value, ApiError> {
        let current = self
            .get(key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&spec.key().to_string(), &key.name))?;
        let mut new = current.clone();
        if let Some(map) = new.as_object_mut() {
            map.insert("status".into(), status);
        }
        self.finish_update(spec, key, &current, new, ctx, WriteOpts::default())
    }

    /// The common tail of PUT and PATCH: restrict to the status or main resource, keep
    /// server-owned fields, bump the generation, enforce the finalizer rules, and store.
    fn finish_update(
        &mut self,
        spec: &ApiResourceSpec,
        key: &ObjectKey,
        current: &Value,
        mut new: Value,
        ctx: WriteCtx,
        opts: WriteOpts,
    ) -> Result<Value, ApiError> {
        let client = ctx.actor == Actor::Client;
        if opts.status {
            // Only .status changes through the status subresource.
            let status = new.get("status").cloned();
            new = current.clone();
            if let Some(map) = new.as_object_mut() {
                match status {
                    Some(status) => map.insert("status".into(), status),
                    None => map.remove("status"),
                };
            }
        } else if client && spec.status_subresource {
            // ... and never through the main resource when it has a status subresource.
            if let Some(map) = new.as_object_mut() {
                match current.get("status") {
                    Some(status) => map.insert("status".into(), status.clone()),
                    None => map.remove("status"),
                };
            }
        }
        let metadata = metadata_mut(&mut new);
        for field in SERVER_OWNED_META {
            match current.get("metadata").and_then(|m| m.get(field)) {
                Some(value) => metadata.insert(field.to_owned(), value.clone()),
                None => metadata.remove(field),
            };
        }
        if let Some(rv) = current.pointer("/metadata/resourceVersion") {
            metadata.insert("resourceVersion".into(), rv.clone());
        }
        if spec.namespaced {
            metadata.insert("namespace".into(), Value::String(key.namespace.clone()));
        }
        let bumped = generation_relevant(&new, spec.status_subresource)
            != generation_relevant(current, spec.status_subresource);
        let next_generation = generation(current).max(1) + i64::from(bumped);
        metadata_mut(&mut new).insert("generation".into(), Value::from(next_generation));

        let deleting = meta_str(current, "deletionTimestamp").is_some();
        if deleting {
            let before: HashSet<&str> = finalizers(current).into_iter().collect();
            if let Some(added) = finalizers(&new).into_iter().find(|f| !before.contains(f)) {
                return Err(ApiError::invalid(format!(
                    "{} \"{}\" is invalid: metadata.finalizers: Forbidden: no new finalizers \
                     can be added if the object is being deleted, found new finalizer {added}",
                    spec.key(),
                    key.name
                )));
            }
        }
        if new == *current {
            // A write that changes nothing is not a change: no new resourceVersion, no event.
            return Ok(new);
        }
        if opts.dry_run {
            return Ok(new);
        }
        if deleting && finalizers(&new).is_empty() {
            // The last finalizer is gone: the pending deletion completes now.
            self.commit(key, Some(new), ctx);
            return Ok(self.remove(key, ctx, Some(Propagation::Background)));
        }
        Ok(self.commit(key, Some(new), ctx))
    }

    /// DELETE of one object.
    pub(crate) fn delete(
        &mut self,
        spec: &ApiResourceSpec,
        key: &ObjectKey,
        ctx: WriteCtx,
        opts: &DeleteOpts,
    ) -> Result<Deletion, ApiError> {
        let current = self
            .get(key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&spec.key().to_string(), &key.name))?;
        let precondition = |wanted: &Option<String>, field: &str| {
            let actual = meta_str(&current, field).unwrap_or_default();
            match wanted {
                Some(w) if w != actual => Err(ApiError::conflict(
                    &spec.key().to_string(),
                    &key.name,
                    &format!(
                        "Precondition failed: {field} in precondition: {w}, {field} in object \
                         meta: {actual}"
                    ),
                )),
                _ => Ok(()),
            }
        };
        precondition(&opts.precondition_uid, "uid")?;
        precondition(&opts.precondition_resource_version, "resourceVersion")?;
        if opts.dry_run {
            return Ok(Deletion::Deleted(current));
        }
        Ok(self.delete_unchecked(key, current, ctx, Some(opts.propagation)))
    }

    /// Deletes (or marks for deletion, when finalizers remain) an existing object, then
    /// handles its dependents by `propagation` (`None`: the caller does).
    fn delete_unchecked(
        &mut self,
        key: &ObjectKey,
        current: Value,
        ctx: WriteCtx,
        propagation: Option<Propagation>,
    ) -> Deletion {
        if finalizers(&current).is_empty() {
            return Deletion::Deleted(self.remove(key, ctx, propagation));
        }
        if meta_str(&current, "deletionTimestamp").is_some() {
            return Deletion::Pending(current);
        }
        let mut marked = current;
        let metadata = metadata_mut(&mut marked);
        metadata.insert("deletionTimestamp".into(), Value::String(rfc3339(ctx.now)));
        metadata.insert("deletionGracePeriodSeconds".into(), Value::from(0));
        Deletion::Pending(self.commit(key, Some(marked), ctx))
    }

    /// Removes an object from storage, then deletes or orphans its dependents (`None`:
    /// leaves them to the caller).
    fn remove(
        &mut self,
        key: &ObjectKey,
        ctx: WriteCtx,
        propagation: Option<Propagation>,
    ) -> Value {
        let last = self.commit(key, None, ctx);
        let Some(uid) = meta_str(&last, "uid").map(str::to_owned) else {
            return last;
        };
        let gc = ctx.with_actor(Actor::GarbageCollector);
        match propagation {
            Some(Propagation::Orphan) => self.orphan_dependents(&uid, gc),
            Some(Propagation::Background) => self.collect_garbage(uid, gc),
            None => {}
        }
        last
    }

    /// Deletes, transitively, every object whose owners have all been deleted, starting
    /// from the owner `uid`. Dependents with finalizers are only marked; theirs cascade
    /// when their own deletion completes.
    fn collect_garbage(&mut self, uid: String, ctx: WriteCtx) {
        let ctx = WriteCtx {
            verb: Verb::Delete,
            ..ctx
        };
        let mut present: HashSet<String> = self
            .all()
            .filter_map(|(_, o)| meta_str(o, "uid").map(str::to_owned))
            .collect();
        let mut queue = vec![uid];
        while let Some(owner) = queue.pop() {
            let orphans: Vec<(ObjectKey, Value)> = self
                .all()
                .filter(|(_, o)| {
                    let owners = owner_uids(o);
                    owners.contains(&owner.as_str()) && owners.iter().all(|u| !present.contains(*u))
                })
                .map(|(k, o)| (k, o.clone()))
                .collect();
            for (key, object) in orphans {
                if let Deletion::Deleted(last) = self.delete_unchecked(&key, object, ctx, None)
                    && let Some(uid) = meta_str(&last, "uid")
                {
                    present.remove(uid);
                    queue.push(uid.to_owned());
                }
            }
        }
    }

    /// Removes owner references to `uid` from every dependent.
    fn orphan_dependents(&mut self, uid: &str, ctx: WriteCtx) {
        let ctx = WriteCtx {
            verb: Verb::Update,
            ..ctx
        };
        let dependents: Vec<(ObjectKey, Value)> = self
            .all()
            .filter(|(_, o)| owner_uids(o).contains(&uid))
            .map(|(k, o)| (k, o.clone()))
            .collect();
        for (key, mut object) in dependents {
            if let Some(Value::Array(refs)) = metadata_mut(&mut object).get_mut("ownerReferences") {
                refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid));
            }
            self.commit(&key, Some(object), ctx);
        }
    }
}
