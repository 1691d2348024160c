//! The metadata every build object carries: name, labels that find it again, the
//! annotations that say what it builds, and the job as its owner.

use serde_json::{Map, Value, json};

use super::Route;
use crate::api::{API_VERSION, KIND};
use crate::build::BuildPlan;
use crate::pod::{JOB_LABEL, MANAGED_BY, MANAGED_BY_LABEL, job_label_value};

/// Label key: the first digits of the build's key ([`BuildKey::short`](crate::build::BuildKey::short));
/// also an annotation, with the whole key.
pub const BUILD_KEY_LABEL: &str = "mlops.dev/build-key";
/// Label key: the route that made the object ([`Route::as_str`]).
pub const BUILD_STRATEGY_LABEL: &str = "mlops.dev/build-strategy";
/// Annotation key: the image the object builds.
pub const IMAGE_ANNOTATION: &str = "mlops.dev/image";

/// The labels of `plan`'s objects made by `route`.
pub(super) fn labels(plan: &BuildPlan, route: Route) -> Map<String, Value> {
    let mut labels = Map::new();
    labels.insert(MANAGED_BY_LABEL.to_owned(), json!(MANAGED_BY));
    labels.insert(BUILD_KEY_LABEL.to_owned(), json!(plan.key.short()));
    labels.insert(BUILD_STRATEGY_LABEL.to_owned(), json!(route.as_str()));
    labels.insert(JOB_LABEL.to_owned(), json!(job_label_value(&plan.job)));
    labels
}

/// The metadata of the object `name` of `plan` made by `route`, with `extra` labels
/// and annotations.
pub(super) fn metadata(
    plan: &BuildPlan,
    route: Route,
    name: &str,
    extra_labels: &[(&str, &str)],
    extra_annotations: &[(&str, &str)],
) -> Value {
    let mut labels = labels(plan, route);
    for (key, value) in extra_labels {
        labels.insert((*key).to_owned(), json!(value));
    }
    let mut annotations = Map::new();
    annotations.insert(BUILD_KEY_LABEL.to_owned(), json!(plan.key.as_str()));
    annotations.insert(IMAGE_ANNOTATION.to_owned(), json!(plan.image));
    for (key, value) in extra_annotations {
        annotations.insert((*key).to_owned(), json!(value));
    }
    json!({
        "name": name,
        "namespace": plan.namespace,
        "labels": labels,
        "annotations": annotations,
        "ownerReferences": [{
            "apiVersion": API_VERSION,
            "kind": KIND,
            "name": plan.job,
            "uid": plan.job_uid,
            "controller": true,
            // The job's deletion need not wait for its builds.
            "blockOwnerDeletion": false,
        }],
    })
}
