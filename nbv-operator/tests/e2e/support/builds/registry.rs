//! OpenShift's internal registry, as far as nbv sees it: a push records the image in
//! the ImageStream of its namespace (`status.tags[].items[0]`, newest first).

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use nbv_core::build::INTERNAL_REGISTRY;
use serde_json::{Value, json};

use super::super::objects::resource;

/// Records the push of `image` (`<registry>/<namespace>/<stream>:<tag>`) with `digest`,
/// when it went to the internal registry.
pub async fn pushed(client: &kube::Client, image: &str, digest: &str) {
    let Some((repository, tag)) = image
        .strip_prefix(INTERNAL_REGISTRY)
        .and_then(|path| path.strip_prefix('/'))
        .and_then(|path| path.rsplit_once(':'))
    else {
        return;
    };
    let Some((namespace, stream)) = repository.split_once('/') else {
        return;
    };
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource("image.openshift.io", "v1", "ImageStream", "imagestreams"),
    );
    let item = json!({"image": digest, "generation": 1,
                      "dockerImageReference": format!("{INTERNAL_REGISTRY}/{repository}@{digest}")});
    let mut tags: Vec<Value> = match api.get(stream).await {
        Ok(existing) => existing.data["status"]["tags"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
        Err(_) => {
            let body: DynamicObject = serde_json::from_value(json!({
                "apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
                "metadata": {"name": stream, "namespace": namespace}, "spec": {}
            }))
            .expect("an ImageStream");
            let _ = api.create(&PostParams::default(), &body).await;
            Vec::new()
        }
    };
    match tags.iter_mut().find(|t| t["tag"] == tag) {
        Some(entry) => {
            let mut items = entry["items"].as_array().cloned().unwrap_or_default();
            items.insert(0, item);
            entry["items"] = json!(items);
        }
        None => tags.push(json!({"tag": tag, "items": [item]})),
    }
    let patch = json!({"status": {"dockerImageRepository": format!("{INTERNAL_REGISTRY}/{repository}"),
                                  "tags": tags}});
    api.patch(stream, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("record the push in the ImageStream");
}
