//! Kustomizations refer to files that exist, and every manifest is referenced.

use super::*;

/// The `resources` of a kustomization: files, or directories with a kustomization.
fn kustomization_resources(file: &str) -> Vec<String> {
    let doc = &documents(file)[0];
    assert_eq!(doc["kind"], "Kustomization", "{file}");
    for field in ["bases", "patchesStrategicMerge", "patchesJson6902", "vars"] {
        assert!(
            doc[field].is_null(),
            "{file}: `{field}` is deprecated in kustomize; use resources/patches"
        );
    }
    doc["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{file} has no resources list"))
        .iter()
        .map(|r| {
            r.as_str()
                .unwrap_or_else(|| panic!("{file}: a resource is not a string"))
                .to_owned()
        })
        .collect()
}

fn resolve(file: &str, resource: &str) -> PathBuf {
    Path::new(file)
        .parent()
        .unwrap_or(Path::new(""))
        .join(resource)
}

/// The `configurations` of a kustomization (transformer configurations), as paths
/// from the repository root.
fn kustomization_configurations(file: &str) -> Vec<String> {
    documents(file)[0]["configurations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let c = c
                .as_str()
                .unwrap_or_else(|| panic!("{file}: a configuration is not a string"));
            normalize(&resolve(file, c).to_string_lossy().replace('\\', "/"))
        })
        .collect()
}

#[test]
fn every_kustomization_refers_to_existing_files_and_every_manifest_is_referenced() {
    let mut referenced = BTreeSet::new();
    let mut configurations = BTreeSet::new();
    for file in yaml_files()
        .into_iter()
        .filter(|f| f.ends_with("/kustomization.yaml"))
    {
        for configuration in kustomization_configurations(&file) {
            assert!(
                is_kustomize_configuration(&configuration),
                "{file}: name the transformer configuration {configuration} kustomizeconfig.yaml"
            );
            assert!(
                root().join(&configuration).is_file(),
                "{file}: {configuration} does not exist"
            );
            configurations.insert(configuration);
        }
        for resource in kustomization_resources(&file) {
            let target = root().join(resolve(&file, &resource));
            if target.is_dir() {
                assert!(
                    target.join("kustomization.yaml").is_file(),
                    "{file}: the directory {resource} has no kustomization.yaml"
                );
            } else {
                assert!(target.is_file(), "{file}: {resource} does not exist");
                let normalized = resolve(&file, &resource)
                    .to_string_lossy()
                    .replace('\\', "/");
                referenced.insert(normalized);
            }
        }
    }
    // Files that are examples or alternatives, applied by hand (each says so at its top).
    let by_hand = [
        "config/rbac/wait-hook-role.yaml",
        "config/rbac/extra-trigger-targets.example.yaml",
        "config/argocd/health-check-configmap-advanced.yaml",
        "config/argocd/health-check-configmap-guide.yaml",
        "config/argocd/notifications-cm.yaml",
        "config/openshift-gitops/managed-by-namespace.example.yaml",
    ];
    for file in yaml_files()
        .into_iter()
        .filter(|f| !f.ends_with("/kustomization.yaml"))
    {
        assert!(
            referenced.contains(&file) || by_hand.contains(&file.as_str()),
            "{file} is in no kustomization: add it to its directory's kustomization.yaml"
        );
    }
    for file in config_files()
        .into_iter()
        .filter(|f| is_kustomize_configuration(f))
    {
        assert!(
            configurations.contains(&file),
            "{file} is the `configurations` of no kustomization"
        );
    }
}

/// NBV_IMAGE names the operator's own image, and follows it wherever kustomize's image
/// transformer sends the image (`kustomize edit set image`, an overlay's `images`):
/// the transformer rewrites the Deployment's environment values too, and only those
/// that name the image.
#[test]
fn nbv_image_follows_the_operators_image_through_kustomize() {
    let manifests = manifests();
    let deployment = find(&manifests, "Deployment", "nbv-operator");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let nbv_image = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == "NBV_IMAGE")
        .expect("the Deployment sets NBV_IMAGE");
    assert_eq!(
        nbv_image["value"], container["image"],
        "NBV_IMAGE is the operator's own image"
    );
    assert!(
        kustomization_configurations("config/manager/kustomization.yaml")
            .contains(&"config/manager/kustomizeconfig.yaml".to_owned())
    );
    let config = &documents("config/manager/kustomizeconfig.yaml")[0];
    let specs = config["images"].as_array().expect("image field specs");
    assert!(
        specs
            .iter()
            .any(|s| s["kind"] == "Deployment"
                && s["path"] == "spec/template/spec/containers/env/value"),
        "kustomizeconfig.yaml: the image transformer must rewrite the Deployment's env values: {specs:?}"
    );
    let images = documents("config/manager/kustomization.yaml")[0]["images"].clone();
    let image = container["image"].as_str().expect("an image");
    assert!(
        images
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| image.starts_with(&format!("{}:", i["name"].as_str().unwrap_or("")))),
        "config/manager's `images` names the operator's image {image}"
    );
}

/// The objects `kubectl apply -k <dir>` creates, as `Kind namespace/name`.
fn inventory(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for resource in kustomization_resources(&format!("{dir}/kustomization.yaml")) {
        let path = resolve(&format!("{dir}/kustomization.yaml"), &resource);
        let relative = path.to_string_lossy().replace('\\', "/");
        if root().join(&path).is_dir() {
            out.extend(inventory(&normalize(&relative)));
        } else {
            for doc in documents(&normalize(&relative)) {
                let ns = doc["metadata"]["namespace"]
                    .as_str()
                    .map(|n| format!("{n}/"))
                    .unwrap_or_default();
                out.push(format!(
                    "{} {ns}{}",
                    doc["kind"].as_str().unwrap_or("?"),
                    doc["metadata"]["name"].as_str().unwrap_or("?")
                ));
            }
        }
    }
    out
}

/// `config/default/../crd` → `config/crd`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[test]
fn what_the_default_installation_creates() {
    insta::assert_yaml_snapshot!(inventory("config/default"));
}
