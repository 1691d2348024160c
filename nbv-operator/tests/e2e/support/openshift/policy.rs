//! A policy engine's admission webhook, as clusters add beside SCCs: Kyverno's sample
//! policy `disallow-latest-tag` (its rule `validate-image-tag`), refusing a container
//! image with the mutable tag `latest` or no tag, with Kyverno's message.

use k8s_openapi::api::core::v1::Pod;

/// The name Kyverno registers its failing-closed validating webhook under.
pub const WEBHOOK: &str = "validate.kyverno.svc-fail";

/// The policy's name.
pub const POLICY: &str = "disallow-latest-tag";

/// `None` when the Pod passes, else Kyverno's message (the API server prefixes it
/// with `admission webhook "validate.kyverno.svc-fail" denied the request: `).
pub fn denial(pod: &Pod, namespace: &str) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    let (index, _) = spec
        .containers
        .iter()
        .enumerate()
        .find(|(_, c)| c.image.as_deref().is_some_and(mutable_tag))?;
    let name = pod
        .metadata
        .name
        .clone()
        .or_else(|| pod.metadata.generate_name.clone())
        .unwrap_or_default();
    Some(format!(
        "\n\nresource Pod/{namespace}/{name} was blocked due to the following policies \n\n\
         {POLICY}:\n  validate-image-tag: 'validation error: Using a mutable image tag e.g. \
         ''latest'' is not allowed. rule validate-image-tag failed at path \
         /spec/containers/{index}/image/'\n"
    ))
}

/// `latest`, or no tag and no digest.
fn mutable_tag(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(images: &[&str]) -> Pod {
        let containers: Vec<_> = images
            .iter()
            .enumerate()
            .map(|(i, image)| json!({"name": format!("c{i}"), "image": image}))
            .collect();
        serde_json::from_value(json!({"metadata": {"name": "p"},
                                      "spec": {"containers": containers}}))
        .unwrap()
    }

    #[test]
    fn pinned_tags_and_digests_pass() {
        for image in [
            "quay.io/jupyter/minimal-notebook:2026-01-05",
            "localhost:5000/nbv:0.1.0",
            "alpine/git@sha256:0123",
        ] {
            assert_eq!(denial(&pod(&[image]), "ml"), None, "{image}");
        }
    }

    #[test]
    fn latest_or_no_tag_is_denied_with_kyverno_s_message() {
        for image in ["busybox", "localhost:5000/nbv", "quay.io/x/y:latest"] {
            let message = denial(&pod(&["busybox:1.36", image]), "ml").expect(image);
            assert_eq!(
                message,
                "\n\nresource Pod/ml/p was blocked due to the following policies \n\n\
                 disallow-latest-tag:\n  validate-image-tag: 'validation error: Using a \
                 mutable image tag e.g. ''latest'' is not allowed. rule validate-image-tag \
                 failed at path /spec/containers/1/image/'\n"
            );
        }
    }
}
