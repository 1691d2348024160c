//! Applying and reading objects of any kind, as `kubectl apply` and `kubectl get` do.

use std::path::Path;
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::discovery::{Scope, pinned_kind};
use serde_json::Value;

/// The field manager of the suite's own writes (it plays users and controllers).
pub const MANAGER: &str = "nbv-e2e";

/// The API of `api_version`/`kind`, in `namespace` when the kind is namespaced.
pub async fn api_for(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    // A CRD applied a moment ago may not be served yet.
    let mut last = None;
    for _ in 0..60 {
        match pinned_kind(client, &gvk).await {
            Ok((resource, caps)) => {
                return match (caps.scope, namespace) {
                    (Scope::Namespaced, Some(ns)) => {
                        Api::namespaced_with(client.clone(), ns, &resource)
                    }
                    (Scope::Namespaced, None) => {
                        Api::default_namespaced_with(client.clone(), &resource)
                    }
                    (Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
                };
            }
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("{api_version} {kind} is not served: {last:?}");
}

/// The API resource of a kind known to be served, without discovery.
pub fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// Applies `object` (server-side apply, forced), in `namespace` unless it names its
/// own, and returns it as stored.
pub async fn apply(
    client: &kube::Client,
    object: &Value,
    namespace: Option<&str>,
) -> DynamicObject {
    let api_version = object["apiVersion"].as_str().expect("apiVersion");
    let kind = object["kind"].as_str().expect("kind");
    let name = object["metadata"]["name"].as_str().expect("metadata.name");
    let ns = object["metadata"]["namespace"].as_str().or(namespace);
    let api = api_for(client, api_version, kind, ns).await;
    let mut body = object.clone();
    if let (Some(ns), Some(meta)) = (ns, body["metadata"].as_object_mut()) {
        meta.insert("namespace".into(), Value::String(ns.to_owned()));
    }
    // Status goes through its own subresource where there is one; a user's apply
    // never carries it.
    let status = body.as_object_mut().and_then(|o| o.remove("status"));
    let stored = api
        .patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .unwrap_or_else(|e| panic!("apply {kind} {name}: {e}"));
    match status {
        Some(status) if !status.is_null() => {
            let patch = serde_json::json!({"status": status});
            match api
                .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(o) => o,
                // No status subresource (Argo CD's Application): status is part of the
                // object.
                Err(kube::Error::Api(e)) if e.code == 404 => api
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .unwrap_or_else(|e| panic!("write the status of {kind} {name}: {e}")),
                Err(e) => panic!("write the status of {kind} {name}: {e}"),
            }
        }
        _ => stored,
    }
}

/// Every document of a YAML file.
pub fn yaml_documents(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| {
            <Value as serde::Deserialize>::deserialize(doc)
                .unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
        })
        .filter(|v| !v.is_null())
        .collect()
}

/// The repository's root.
pub fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}
