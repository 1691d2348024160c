//! Images already in OpenShift's internal registry: a push there records the image in
//! the namespace's ImageStream (`status.tags`), which nbv reads through the API server
//! with its own role, no registry credentials. A build whose image is there is not
//! built again, even after `--build-history` deleted its build objects.
//!
//! Only the job's own namespace is looked at: whether another namespace holds an image
//! is not a job's to learn through nbv.

use serde_json::Value;

use crate::io::ObjectRef;
use crate::kube_names::is_dns_subdomain;

/// The address of OpenShift's internal registry inside the cluster.
pub const INTERNAL_REGISTRY: &str = "image-registry.openshift-image-registry.svc:5000";

/// The ImageStream that records the images pushed to `repository`, when it is a
/// repository of the internal registry in `namespace`.
///
/// # Examples
///
/// ```
/// use nbv_core::build::image_stream;
///
/// let stream = image_stream("image-registry.openshift-image-registry.svc:5000/ml/nbv-notebooks", "ml").unwrap();
/// assert_eq!((stream.kind.as_str(), stream.namespace.as_deref(), stream.name.as_str()),
///            ("ImageStream", Some("ml"), "nbv-notebooks"));
/// // Another namespace's, or another registry's: not looked at.
/// assert_eq!(image_stream("image-registry.openshift-image-registry.svc:5000/other/nbv-notebooks", "ml"), None);
/// assert_eq!(image_stream("quay.io/ml/nbv-notebooks", "ml"), None);
/// ```
pub fn image_stream(repository: &str, namespace: &str) -> Option<ObjectRef> {
    let path = repository
        .strip_prefix(INTERNAL_REGISTRY)?
        .strip_prefix('/')?;
    let (stream_namespace, name) = path.split_once('/')?;
    (stream_namespace == namespace && is_dns_subdomain(name))
        .then(|| ObjectRef::namespaced("image.openshift.io/v1", "ImageStream", namespace, name))
}

/// The digest of the image `stream` records under `tag` (its newest item), when it
/// is a well-formed `sha256:` digest.
///
/// # Examples
///
/// ```
/// use nbv_core::build::tagged_digest;
/// use serde_json::json;
///
/// let digest = format!("sha256:{}", "ab".repeat(32));
/// let stream = json!({"status": {"tags": [
///     {"tag": "old", "items": [{"image": "sha256:00"}]},
///     {"tag": "k1", "items": [{"image": digest}, {"image": "sha256:older"}]},
/// ]}});
/// assert_eq!(tagged_digest(&stream, "k1"), Some(digest));
/// assert_eq!(tagged_digest(&stream, "k2"), None);
/// assert_eq!(tagged_digest(&stream, "old"), None, "not a digest");
/// ```
pub fn tagged_digest(stream: &Value, tag: &str) -> Option<String> {
    let tags = stream["status"]["tags"].as_array()?;
    let entry = tags.iter().find(|t| t["tag"].as_str() == Some(tag))?;
    let digest = entry["items"].as_array()?.first()?["image"].as_str()?;
    is_digest(digest).then(|| digest.to_owned())
}

fn is_digest(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    proptest! {
        /// Whatever the ImageStream holds, the answer is a well-formed digest or none.
        #[test]
        fn any_stream_gives_a_digest_or_none(
            tag in "[a-z0-9]{0,4}",
            image in proptest::option::of("(sha256:)?[0-9a-fA-F]{0,66}"),
            shape in 0usize..4,
        ) {
            let items = match &image {
                Some(image) => json!([{"image": image}]),
                None => json!([]),
            };
            let stream = match shape {
                0 => json!({"status": {"tags": [{"tag": tag, "items": items}]}}),
                1 => json!({"status": {"tags": {"tag": tag}}}),
                2 => json!({"status": null}),
                _ => json!([items]),
            };
            if let Some(digest) = tagged_digest(&stream, &tag) {
                prop_assert!(is_digest(&digest));
                prop_assert_eq!(Some(digest), image);
            }
        }
    }

    #[test]
    fn only_the_internal_registry_in_the_jobs_namespace_is_read() {
        for repository in [
            "image-registry.openshift-image-registry.svc:5000/ml",
            "image-registry.openshift-image-registry.svc:5000/ml/a/b",
            "image-registry.openshift-image-registry.svc:5000/ml/Bad_Name",
            "image-registry.openshift-image-registry.svc:50000/ml/x",
            "image-registry.openshift-image-registry.svc/ml/x",
        ] {
            assert_eq!(image_stream(repository, "ml"), None, "{repository}");
        }
    }
}
