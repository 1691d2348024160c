//! The OLM bundle (`bundle/`) and file-based catalog (`catalog/`): rendered from the
//! same sources as `config/`, upgradeable without a gap, and valid against OLM's own
//! CRD schemas (`../shared/reference/olm/`).
//!
//! `NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test olm` rewrites the generated
//! files instead of failing (as `nbv olm bundle` and `nbv olm catalog` do).

mod repository;

use std::collections::{BTreeMap, BTreeSet};

use nbv_core::api::NotebookValidationJob;
use nbv_operator::commands::olm::{
    self, CHANNEL, PACKAGE, VERSION, bundle_annotations, bundle_files, catalog_files, check_chain,
};
use repository::{assert_valid, documents, read, root};
use serde_json::Value;

const CSV: &str = "bundle/manifests/nbv-operator.clusterserviceversion.yaml";
const CATALOG: &str = "catalog/nbv-operator/catalog.yaml";

/// Every file under `dir`, relative to it.
fn files_under(dir: &str) -> BTreeSet<String> {
    fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, base, out);
            } else if let Ok(relative) = path.strip_prefix(base) {
                out.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = BTreeSet::new();
    let base = root().join(dir);
    walk(&base, &base, &mut out);
    out
}

fn assert_directory_generated(dir: &str, files: Vec<olm::File>, how: &str) {
    let expected: BTreeSet<String> = files.iter().map(|f| f.path.clone()).collect();
    for file in &files {
        repository::assert_generated(&format!("{dir}/{}", file.path), &file.text, how, "olm");
    }
    let extra: Vec<_> = files_under(dir).difference(&expected).cloned().collect();
    assert!(
        extra.is_empty(),
        "{dir}/ holds files `{how}` does not write: {extra:?}"
    );
}

#[test]
fn the_bundle_is_the_output_of_nbv_olm_bundle() {
    let files = bundle_files().expect("the bundle renders");
    assert_directory_generated("bundle", files, "nbv olm bundle --output bundle");
}

#[test]
fn the_catalog_is_the_output_of_nbv_olm_catalog() {
    let files = catalog_files().expect("the catalog renders");
    assert_directory_generated("catalog", files, "nbv olm catalog --output catalog");
}

fn csv() -> Value {
    documents(CSV).remove(0)
}

fn single(file: &str) -> Value {
    let mut docs = documents(file);
    assert_eq!(docs.len(), 1, "{file} should hold one document");
    docs.remove(0)
}

#[test]
fn the_csv_installs_exactly_what_config_installs() {
    let csv = csv();
    let install = &csv["spec"]["install"];
    assert_eq!(install["strategy"], "deployment");
    let deployment = single("config/manager/deployment.yaml");
    let deployments = install["spec"]["deployments"]
        .as_array()
        .expect("deployments");
    assert_eq!(deployments.len(), 1);
    assert_eq!(deployments[0]["name"], deployment["metadata"]["name"]);
    assert_eq!(
        deployments[0]["spec"], deployment["spec"],
        "the Deployment's spec differs from config/manager"
    );
    let account = single("config/rbac/service_account.yaml")["metadata"]["name"].clone();
    let cluster = &install["spec"]["clusterPermissions"];
    assert_eq!(cluster.as_array().map(Vec::len), Some(1));
    assert_eq!(cluster[0]["serviceAccountName"], account);
    assert_eq!(
        cluster[0]["rules"],
        single("config/rbac/role.yaml")["rules"]
    );
    let namespaced = &install["spec"]["permissions"];
    assert_eq!(namespaced.as_array().map(Vec::len), Some(1));
    assert_eq!(namespaced[0]["serviceAccountName"], account);
    assert_eq!(
        namespaced[0]["rules"],
        single("config/rbac/leader_election_role.yaml")["rules"]
    );
    // The CRD is config's, and the metrics Service is config's without its namespace.
    assert_eq!(
        single("bundle/manifests/mlops.mlops.dev_notebookvalidationjobs.yaml"),
        single("config/crd/notebookvalidationjobs.yaml")
    );
    let mut service = single("config/manager/service.yaml");
    service["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("namespace");
    assert_eq!(
        single("bundle/manifests/nbv-operator-metrics_v1_service.yaml"),
        service
    );
}

#[test]
fn the_csv_describes_the_release() {
    let csv = csv();
    let spec = &csv["spec"];
    assert_eq!(spec["version"], VERSION);
    assert_eq!(csv["metadata"]["name"], format!("{PACKAGE}.v{VERSION}"));
    assert_eq!(spec["minKubeVersion"], olm::MIN_KUBE_VERSION);
    let image = csv["metadata"]["annotations"]["containerImage"]
        .as_str()
        .unwrap();
    assert_eq!(image, format!("ghcr.io/nbv-dev/nbv:{VERSION}"));
    assert_eq!(
        spec["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"][0]["image"],
        image
    );
    let modes: BTreeMap<&str, bool> = spec["installModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["type"].as_str().unwrap(),
                m["supported"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(modes.len(), 4, "{modes:?}");
    // nbv watches every namespace unless told otherwise, and the Deployment does not
    // read OLM's target namespaces: only AllNamespaces is honest.
    assert_eq!(
        modes
            .iter()
            .filter(|(_, s)| **s)
            .map(|(m, _)| *m)
            .collect::<Vec<_>>(),
        ["AllNamespaces"]
    );
    let owned = &spec["customresourcedefinitions"]["owned"];
    assert_eq!(owned[0]["name"], "notebookvalidationjobs.mlops.mlops.dev");
    assert!(
        owned[0]["description"]
            .as_str()
            .is_some_and(|d| d.len() > 40)
    );
    assert!(
        spec["icon"][0]["base64data"]
            .as_str()
            .is_some_and(|d| d.len() > 100)
    );
    assert!(spec["links"].as_array().is_some_and(|l| l.len() >= 2));
    // alm-examples: the sample jobs, each a valid NotebookValidationJob.
    let examples: Vec<Value> = serde_json::from_str(
        csv["metadata"]["annotations"]["alm-examples"]
            .as_str()
            .unwrap(),
    )
    .expect("alm-examples is a JSON array");
    let samples: Vec<Value> = documents("config/samples/training/notebookvalidationjob.yaml")
        .into_iter()
        .filter(|d| d["kind"] == "NotebookValidationJob")
        .collect();
    assert_eq!(examples, samples);
    for example in &examples {
        serde_json::from_value::<NotebookValidationJob>(example.clone()).expect("a valid job");
    }
}

#[test]
fn the_bundle_metadata_names_the_package_channel_and_openshift_versions() {
    let annotations = &single("bundle/metadata/annotations.yaml")["annotations"];
    assert_eq!(
        annotations["operators.operatorframework.io.bundle.package.v1"],
        PACKAGE
    );
    assert_eq!(
        annotations["operators.operatorframework.io.bundle.channels.v1"],
        CHANNEL
    );
    assert_eq!(
        annotations["operators.operatorframework.io.bundle.channel.default.v1"],
        CHANNEL
    );
    assert_eq!(annotations["com.redhat.openshift.versions"], "v4.18-v4.20");
    assert_eq!(
        annotations["operators.operatorframework.io.bundle.mediatype.v1"],
        "registry+v1"
    );
    // The bundle image carries the same annotations as labels.
    let dockerfile = read("bundle/bundle.Dockerfile");
    for (key, value) in bundle_annotations() {
        assert_eq!(annotations[key], value.as_str());
        assert!(
            dockerfile.contains(&format!("LABEL {key}={value}\n")),
            "bundle.Dockerfile lacks {key}"
        );
    }
}

/// The catalog's documents by schema.
fn catalog() -> BTreeMap<String, Vec<Value>> {
    let mut by_schema: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for doc in documents(CATALOG) {
        let schema = doc["schema"]
            .as_str()
            .expect("every catalog document has a schema")
            .to_owned();
        by_schema.entry(schema).or_default().push(doc);
    }
    by_schema
}

#[test]
fn every_release_replaces_the_one_before_it_without_a_gap() {
    let catalog = catalog();
    assert_eq!(catalog["olm.package"].len(), 1);
    assert_eq!(catalog["olm.package"][0]["name"], PACKAGE);
    assert_eq!(catalog["olm.package"][0]["defaultChannel"], CHANNEL);
    let channels = &catalog["olm.channel"];
    assert_eq!(channels.len(), 1);
    assert_eq!(channels[0]["name"], CHANNEL);
    let versions: BTreeMap<String, String> = catalog["olm.bundle"]
        .iter()
        .map(|b| {
            let version = b["properties"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["type"] == "olm.package"))
                .map(|p| {
                    p["value"]["version"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                })
                .unwrap_or_else(|| panic!("bundle {} has no olm.package property", b["name"]));
            assert_eq!(b["name"], format!("{PACKAGE}.v{version}"));
            (b["name"].as_str().unwrap().to_owned(), version)
        })
        .collect();
    let entries = &channels[0]["entries"];
    let names: BTreeSet<String> = entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        versions.keys().cloned().collect(),
        "every channel entry has its olm.bundle and back"
    );
    check_chain(entries, &versions).unwrap_or_else(|e| panic!("{CATALOG}: {e}"));
    // The newest entry is this release, and the CSV says what the channel says.
    let csv = csv();
    let head = entries
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == csv["metadata"]["name"])
        .expect("this release is in the channel");
    assert_eq!(versions[head["name"].as_str().unwrap()], VERSION);
    assert_eq!(head["replaces"], csv["spec"]["replaces"]);
    assert_eq!(head["skipRange"], csv["spec"]["skipRange"]);
    assert!(
        entries
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["replaces"] != head["name"]),
        "a release replaces this one: it is not the newest"
    );
}

#[test]
fn the_csv_and_the_install_examples_validate_against_olms_crds() {
    assert_valid(
        "olm/operators.coreos.com_clusterserviceversions.yaml",
        "v1alpha1",
        &csv(),
        CSV,
    );
    let source = single("config/olm/catalogsource.yaml");
    assert_valid(
        "olm/operators.coreos.com_catalogsources.yaml",
        "v1alpha1",
        &source,
        "config/olm/catalogsource.yaml",
    );
    let group = single("config/olm/operatorgroup.yaml");
    assert_valid(
        "olm/operators.coreos.com_operatorgroups.yaml",
        "v1",
        &group,
        "config/olm/operatorgroup.yaml",
    );
    let subscription = single("config/olm/subscription.yaml");
    assert_valid(
        "olm/operators.coreos.com_subscriptions.yaml",
        "v1alpha1",
        &subscription,
        "config/olm/subscription.yaml",
    );
    // The Subscription asks the CatalogSource for this package and channel, in the
    // OperatorGroup's namespace.
    assert_eq!(subscription["spec"]["name"], PACKAGE);
    assert_eq!(subscription["spec"]["channel"], CHANNEL);
    assert_eq!(subscription["spec"]["source"], source["metadata"]["name"]);
    assert_eq!(
        subscription["spec"]["sourceNamespace"],
        source["metadata"]["namespace"]
    );
    assert_eq!(
        subscription["metadata"]["namespace"],
        group["metadata"]["namespace"]
    );
    assert!(
        group["spec"].get("targetNamespaces").is_none(),
        "AllNamespaces has no targetNamespaces"
    );
}

#[test]
fn the_strict_schema_catches_a_misplaced_field() {
    // The check above can fail: a CSV with a typo in a field name, or a wrong type.
    let mut typo = csv();
    typo["spec"]["minKubeVersoin"] = typo["spec"]["minKubeVersion"].take();
    let schema = repository::crd_schema(
        "olm/operators.coreos.com_clusterserviceversions.yaml",
        "v1alpha1",
    );
    let errors = repository::schema_errors(&schema, &typo);
    assert!(
        errors.iter().any(|e| e.contains("minKubeVersoin")),
        "{errors:?}"
    );
    let mut wrong_type = single("config/olm/subscription.yaml");
    wrong_type["spec"]["channel"] = Value::from(1);
    let schema = repository::crd_schema("olm/operators.coreos.com_subscriptions.yaml", "v1alpha1");
    assert!(!repository::schema_errors(&schema, &wrong_type).is_empty());
}
