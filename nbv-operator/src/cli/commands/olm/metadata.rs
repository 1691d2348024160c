//! What a catalog says of a bundle, read from its ClusterServiceVersion the way
//! `opm render` reads it: the `olm.csv.metadata` property (the CSV's metadata without
//! its install strategy; the packageserver builds the PackageManifests of OperatorHub
//! from it) and one `olm.gvk` property per owned CRD (what the resolver matches APIs
//! against).

use serde_json::{Map, Value, json};

/// The `olm.csv.metadata` value of a CSV, with the fields of operator-registry's
/// `property.CSVMetadata`: `annotations` and `labels` from its metadata; from its spec
/// `apiServiceDefinitions`, `crdDescriptions` (the spec's
/// `customresourcedefinitions`), `description`, `displayName`, `installModes`,
/// `keywords`, `links`, `maintainers`, `maturity`, `minKubeVersion`, `nativeAPIs` and
/// `provider`. The icon is not among them: the packageserver takes the package's.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// let csv = json!({
///     "metadata": { "name": "op.v1.0.0", "annotations": { "capabilities": "Basic Install" } },
///     "spec": { "displayName": "Op", "version": "1.0.0", "install": { "strategy": "deployment" } },
/// });
/// let metadata = nbv_operator::cli::commands::olm::csv_metadata(&csv);
/// assert_eq!(metadata["displayName"], "Op");
/// assert_eq!(metadata["annotations"]["capabilities"], "Basic Install");
/// assert!(metadata.get("install").is_none());
/// ```
pub fn csv_metadata(csv: &Value) -> Value {
    let spec = &csv["spec"];
    // Go serializes the two struct-typed fields even when empty, as opm writes them.
    let or_empty = |value: &Value| match value {
        Value::Null => json!({}),
        other => other.clone(),
    };
    let mut metadata = Map::new();
    metadata.insert(
        "apiServiceDefinitions".to_owned(),
        or_empty(&spec["apiservicedefinitions"]),
    );
    metadata.insert("provider".to_owned(), or_empty(&spec["provider"]));
    let fields = [
        ("annotations", &csv["metadata"]["annotations"]),
        ("labels", &csv["metadata"]["labels"]),
        ("crdDescriptions", &spec["customresourcedefinitions"]),
    ]
    .into_iter()
    .chain(
        [
            "description",
            "displayName",
            "installModes",
            "keywords",
            "links",
            "maintainers",
            "maturity",
            "minKubeVersion",
            "nativeAPIs",
        ]
        .into_iter()
        .map(|field| (field, &spec[field])),
    );
    for (to, from) in fields {
        if !from.is_null() {
            metadata.insert(to.to_owned(), from.clone());
        }
    }
    Value::Object(metadata)
}

/// The `olm.gvk` values of the CRDs a CSV owns (or of the owned entries of an
/// `olm.csv.metadata`'s `crdDescriptions`): the group is the CRD name after its
/// plural.
pub fn owned_gvks(crd_descriptions: &Value) -> Vec<Value> {
    crd_descriptions["owned"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|crd| {
            let name = crd["name"].as_str().unwrap_or_default();
            let group = name.split_once('.').map_or("", |(_, group)| group);
            json!({ "group": group, "kind": crd["kind"], "version": crd["version"] })
        })
        .collect()
}

/// The `olm.bundle` of a CSV: its `olm.package`, `olm.gvk` and `olm.csv.metadata`
/// properties, and the operator image (`containerImage`) as a related image.
pub(super) fn bundle_entry(package: &str, csv: &Value, bundle_image: &str) -> Value {
    let name = csv["metadata"]["name"].clone();
    let version = csv["spec"]["version"].clone();
    let mut properties = vec![
        json!({ "type": "olm.package", "value": { "packageName": package, "version": version } }),
    ];
    properties.extend(
        owned_gvks(&csv["spec"]["customresourcedefinitions"])
            .into_iter()
            .map(|gvk| json!({ "type": "olm.gvk", "value": gvk })),
    );
    properties.push(json!({ "type": "olm.csv.metadata", "value": csv_metadata(csv) }));
    let mut bundle = json!({
        "schema": "olm.bundle",
        "name": name,
        "package": package,
        "image": bundle_image,
        "properties": properties,
    });
    if let Some(image) = csv["metadata"]["annotations"]["containerImage"].as_str() {
        bundle["relatedImages"] = json!([{ "name": "nbv", "image": image }]);
    }
    bundle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_renames_the_crd_and_api_service_fields_and_drops_the_rest() {
        let csv = json!({
            "metadata": { "name": "x", "labels": { "a": "b" } },
            "spec": {
                "customresourcedefinitions": { "owned": [
                    { "name": "widgets.example.com", "kind": "Widget", "version": "v1" } ] },
                "apiservicedefinitions": { "owned": [] },
                "install": {}, "replaces": "x.v0", "version": "1.0.0", "icon": [],
                "relatedImages": [],
            },
        });
        let metadata = csv_metadata(&csv);
        let mut keys: Vec<&str> = metadata
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "apiServiceDefinitions",
                "crdDescriptions",
                "labels",
                "provider"
            ]
        );
        assert_eq!(
            owned_gvks(&metadata["crdDescriptions"]),
            [json!({ "group": "example.com", "kind": "Widget", "version": "v1" })]
        );
    }
}
