//! What OLM's packageserver makes of a file-based catalog: the PackageManifests that
//! `kubectl get packagemanifests` and the OperatorHub page of the OpenShift console
//! list.
//!
//! For every channel of a package, the packageserver asks the catalog's registry for
//! the channel head's bundle and reads its ClusterServiceVersion. The registry builds
//! that CSV from the bundle's `olm.bundle.object` CSV, or from its `olm.csv.metadata`
//! property with the package's icon, the bundle's version and related images, and the
//! package's description when the metadata has none. A channel whose head yields no
//! CSV is left out; a package is listed only when its default channel is not (the
//! PackageManifest names it, and its provider is that head's).

use serde_json::{Value, json};

use super::fbc::{channel_head, properties};

/// A package as the packageserver lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageManifest {
    /// The package name.
    pub name: String,
    /// `status.defaultChannel`.
    pub default_channel: String,
    /// `status.provider`: the provider of the default channel's head CSV.
    pub provider: Value,
    /// `status.channels`, in the catalog's order.
    pub channels: Vec<PackageChannel>,
}

/// One channel of a PackageManifest.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageChannel {
    /// The channel name.
    pub name: String,
    /// `currentCSV`: the channel head.
    pub current_csv: String,
    /// `currentCSVDesc`: what the console shows of the head's CSV.
    pub current_csv_desc: CsvDescription,
}

/// The fields of a `currentCSVDesc` the console's OperatorHub tile and install page
/// show.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvDescription {
    /// `displayName`.
    pub display_name: String,
    /// `version`.
    pub version: String,
    /// `provider` (`name`, `url`).
    pub provider: Value,
    /// `installModes`.
    pub install_modes: Value,
    /// The names of the owned CRDs (`customresourcedefinitions.owned[].name`).
    pub owned_crds: Vec<String>,
    /// `icon`.
    pub icon: Value,
    /// `annotations` (`capabilities`, `categories`, `alm-examples`, ...).
    pub annotations: Value,
    /// `description`, the long description.
    pub description: String,
    /// `minKubeVersion`.
    pub min_kube_version: String,
    /// `relatedImages`.
    pub related_images: Value,
}

/// The PackageManifests of a catalog's documents, as the packageserver lists them.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::olm::package_manifests;
/// use serde_json::json;
/// let mut catalog = vec![
///     json!({"schema": "olm.package", "name": "op", "defaultChannel": "stable"}),
///     json!({"schema": "olm.channel", "package": "op", "name": "stable",
///            "entries": [{"name": "op.v1.0.0"}]}),
///     json!({"schema": "olm.bundle", "package": "op", "name": "op.v1.0.0", "image": "b:v1",
///            "properties": [{"type": "olm.package", "value": {"packageName": "op", "version": "1.0.0"}}]}),
/// ];
/// // Without the CSV's metadata the package is not listed.
/// assert!(package_manifests(&catalog).is_empty());
/// catalog[2]["properties"].as_array_mut().unwrap().push(
///     json!({"type": "olm.csv.metadata", "value": {"displayName": "Op"}}));
/// let listed = package_manifests(&catalog);
/// assert_eq!(listed[0].channels[0].current_csv, "op.v1.0.0");
/// assert_eq!(listed[0].channels[0].current_csv_desc.display_name, "Op");
/// ```
pub fn package_manifests(documents: &[Value]) -> Vec<PackageManifest> {
    let of = |schema: &'static str| documents.iter().filter(move |d| d["schema"] == schema);
    of("olm.package")
        .filter_map(|package| {
            let name = package["name"].as_str().unwrap_or_default();
            let channels: Vec<PackageChannel> = of("olm.channel")
                .filter(|c| c["package"] == name)
                .filter_map(|channel| {
                    let head = channel_head(&channel["entries"]).ok()?;
                    let bundle = of("olm.bundle")
                        .find(|b| b["package"] == name && b["name"] == head.as_str())?;
                    let csv = bundle_csv(package, bundle)?;
                    Some(PackageChannel {
                        name: channel["name"].as_str().unwrap_or_default().to_owned(),
                        current_csv: csv["metadata"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        current_csv_desc: describe(&csv),
                    })
                })
                .collect();
            let default_channel = package["defaultChannel"].as_str().unwrap_or_default();
            let default = channels.iter().find(|c| c.name == default_channel)?;
            Some(PackageManifest {
                name: name.to_owned(),
                default_channel: default_channel.to_owned(),
                provider: default.current_csv_desc.provider.clone(),
                channels,
            })
        })
        .collect()
}

/// The CSV the registry serves for a bundle: its `olm.bundle.object` CSV, or one built
/// from its `olm.csv.metadata`; `None` when it has neither.
fn bundle_csv(package: &Value, bundle: &Value) -> Option<Value> {
    let from_objects = properties(bundle, "olm.bundle.object")
        .into_iter()
        .find_map(|object| {
            use base64::Engine;
            let data = base64::engine::general_purpose::STANDARD
                .decode(object["data"].as_str()?)
                .ok()?;
            let csv: Value = serde_json::from_slice(&data).ok()?;
            (csv["kind"] == "ClusterServiceVersion").then_some(csv)
        });
    if from_objects.is_some() {
        return from_objects;
    }
    let metadata = properties(bundle, "olm.csv.metadata").into_iter().next()?;
    let version = properties(bundle, "olm.package")
        .first()
        .map(|p| p["version"].clone())
        .unwrap_or_default();
    let mut spec = metadata.clone();
    let spec_object = spec.as_object_mut()?;
    let annotations = spec_object.remove("annotations").unwrap_or_default();
    let labels = spec_object.remove("labels").unwrap_or_default();
    if let Some(crds) = spec_object.remove("crdDescriptions") {
        spec_object.insert("customresourcedefinitions".to_owned(), crds);
    }
    if let Some(api_services) = spec_object.remove("apiServiceDefinitions") {
        spec_object.insert("apiservicedefinitions".to_owned(), api_services);
    }
    if spec_object
        .get("description")
        .is_none_or(|d| d.as_str() == Some(""))
    {
        spec_object.insert("description".to_owned(), package["description"].clone());
    }
    if package["icon"].is_object() {
        spec_object.insert(
            "icon".to_owned(),
            json!([{ "base64data": package["icon"]["base64data"], "mediatype": package["icon"]["mediatype"] }]),
        );
    }
    spec_object.insert("version".to_owned(), version);
    spec_object.insert("relatedImages".to_owned(), bundle["relatedImages"].clone());
    Some(json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": { "name": bundle["name"], "annotations": annotations, "labels": labels },
        "spec": spec,
    }))
}

fn describe(csv: &Value) -> CsvDescription {
    let spec = &csv["spec"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    CsvDescription {
        display_name: text(&spec["displayName"]),
        version: text(&spec["version"]),
        provider: spec["provider"].clone(),
        install_modes: spec["installModes"].clone(),
        owned_crds: spec["customresourcedefinitions"]["owned"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|crd| text(&crd["name"]))
            .collect(),
        icon: spec["icon"].clone(),
        annotations: csv["metadata"]["annotations"].clone(),
        description: text(&spec["description"]),
        min_kube_version: text(&spec["minKubeVersion"]),
        related_images: spec["relatedImages"].clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Vec<Value> {
        vec![
            json!({"schema": "olm.package", "name": "op", "defaultChannel": "stable",
                   "description": "the package's", "icon": {"base64data": "PHN2Zz4=", "mediatype": "image/svg+xml"}}),
            json!({"schema": "olm.channel", "package": "op", "name": "stable", "entries": [
                {"name": "op.v1.0.0"}, {"name": "op.v1.1.0", "replaces": "op.v1.0.0"}]}),
            json!({"schema": "olm.channel", "package": "op", "name": "fast", "entries": [
                {"name": "op.v1.0.0"}, {"name": "op.v0.9.0"}]}),
            json!({"schema": "olm.bundle", "package": "op", "name": "op.v1.0.0", "image": "b:1.0.0",
                   "properties": [{"type": "olm.package", "value": {"packageName": "op", "version": "1.0.0"}},
                                  {"type": "olm.csv.metadata", "value": {"displayName": "old"}}]}),
            json!({"schema": "olm.bundle", "package": "op", "name": "op.v1.1.0", "image": "b:1.1.0",
                   "relatedImages": [{"name": "op", "image": "op:1.1.0"}],
                   "properties": [{"type": "olm.package", "value": {"packageName": "op", "version": "1.1.0"}},
                                  {"type": "olm.csv.metadata", "value": {"displayName": "Op",
                                   "provider": {"name": "us"},
                                   "crdDescriptions": {"owned": [{"name": "ws.example.com"}]}}}]}),
        ]
    }

    #[test]
    fn the_head_of_each_channel_is_described_from_its_metadata_and_the_package() {
        let listed = package_manifests(&catalog());
        assert_eq!(listed.len(), 1);
        let package = &listed[0];
        assert_eq!(package.provider, json!({"name": "us"}));
        // The fast channel has two heads: the registry finds no bundle for it.
        assert_eq!(package.channels.len(), 1);
        let stable = &package.channels[0];
        assert_eq!(stable.current_csv, "op.v1.1.0");
        let desc = &stable.current_csv_desc;
        assert_eq!(desc.display_name, "Op");
        assert_eq!(desc.version, "1.1.0");
        assert_eq!(desc.description, "the package's");
        assert_eq!(desc.owned_crds, ["ws.example.com"]);
        assert_eq!(desc.icon[0]["base64data"], "PHN2Zz4=");
        assert_eq!(desc.related_images[0]["image"], "op:1.1.0");
    }

    #[test]
    fn a_package_whose_default_channel_yields_no_csv_is_not_listed() {
        let mut docs = catalog();
        docs[4]["properties"].as_array_mut().unwrap().pop();
        assert_eq!(package_manifests(&docs), []);
    }
}
