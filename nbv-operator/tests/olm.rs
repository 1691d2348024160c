//! The OLM bundle (`bundle/`) and file-based catalog (`catalog/`): rendered from the
//! same sources as `config/`, upgradeable without a gap, and valid against OLM's own
//! CRD schemas (`../shared/reference/olm/`).
//!
//! `NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test olm` rewrites the generated
//! files instead of failing (as `nbv olm bundle` and `nbv olm catalog` do).

mod repository;

use std::collections::{BTreeMap, BTreeSet};

use nbv_core::api::NotebookValidationJob;
use nbv_operator::cli::commands::olm::{
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
    // The CRD is config's, the metrics Service and the PodDisruptionBudget are config's
    // without their namespace, and the ClusterRole for scrapers is config's.
    assert_eq!(
        single("bundle/manifests/mlops.mlops.dev_notebookvalidationjobs.yaml"),
        single("config/crd/notebookvalidationjobs.yaml")
    );
    for (source, bundled) in [
        (
            "config/manager/service.yaml",
            "bundle/manifests/nbv-operator-metrics_v1_service.yaml",
        ),
        (
            "config/manager/pdb.yaml",
            "bundle/manifests/nbv-operator_policy_v1_poddisruptionbudget.yaml",
        ),
        (
            "config/rbac/metrics_reader_role.yaml",
            "bundle/manifests/nbv-metrics-reader_rbac.authorization.k8s.io_v1_clusterrole.yaml",
        ),
    ] {
        let mut object = single(source);
        object["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("namespace");
        assert_eq!(single(bundled), object, "{bundled} is {source}");
    }
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

/// The validation Pods run nbv's own image (their nbv-tools and clone init containers),
/// which the operator learns from NBV_IMAGE: the CSV sets it to the operator's image,
/// and the catalog lists that image among this release's related images, which is what
/// mirroring tools (`oc-mirror`) copy for disconnected clusters.
#[test]
fn the_csv_gives_the_operator_its_own_image_for_the_validation_pods() {
    let csv = csv();
    let image = csv["metadata"]["annotations"]["containerImage"].clone();
    let container = &csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"]
        [0];
    let nbv_image: Vec<&Value> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["name"] == "NBV_IMAGE")
        .collect();
    assert_eq!(
        nbv_image.len(),
        1,
        "the CSV's Deployment sets NBV_IMAGE once"
    );
    assert_eq!(nbv_image[0]["value"], image);
    let bundles = catalog_bundles();
    let related = &bundles[&format!("{PACKAGE}.v{VERSION}")]["relatedImages"];
    assert!(
        related
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["image"] == image),
        "the catalog's related images of this release list {image}: {related}"
    );
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

/// The catalog's bundle entries, by name.
fn catalog_bundles() -> BTreeMap<String, Value> {
    catalog()["olm.bundle"]
        .iter()
        .map(|b| (b["name"].as_str().unwrap().to_owned(), b.clone()))
        .collect()
}

fn property<'a>(bundle: &'a Value, kind: &str) -> Vec<&'a Value> {
    bundle["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == kind)
        .map(|p| &p["value"])
        .collect()
}

#[test]
fn the_catalog_passes_the_rules_of_opm_validate() {
    let documents = documents(CATALOG);
    assert_eq!(olm::validate_catalog(&documents), []);
    for (name, bundle) in catalog_bundles() {
        assert_eq!(
            property(&bundle, "olm.csv.metadata").len(),
            1,
            "{name}: the packageserver lists a bundle by its olm.csv.metadata"
        );
        let owned = olm::owned_gvks(&property(&bundle, "olm.csv.metadata")[0]["crdDescriptions"]);
        assert!(!owned.is_empty(), "{name} owns the CRD");
        for gvk in owned {
            assert!(
                property(&bundle, "olm.gvk").contains(&&gvk),
                "{name}: olm.gvk {gvk}"
            );
        }
    }
}

#[test]
fn the_packageserver_lists_the_package_with_this_release_at_the_head() {
    let listed = olm::package_manifests(&documents(CATALOG));
    assert_eq!(listed.len(), 1, "one PackageManifest: {listed:?}");
    let package = &listed[0];
    assert_eq!(package.name, PACKAGE);
    assert_eq!(package.default_channel, CHANNEL);
    assert_eq!(package.provider["name"], "The nbv authors");
    assert_eq!(package.channels.len(), 1);
    let channel = &package.channels[0];
    assert_eq!(channel.name, CHANNEL);
    assert_eq!(channel.current_csv, format!("{PACKAGE}.v{VERSION}"));
    // What OperatorHub shows is this release's CSV.
    let csv = csv();
    let desc = &channel.current_csv_desc;
    assert_eq!(desc.display_name, "nbv: notebook validation for GitOps");
    assert_eq!(
        desc.display_name,
        csv["spec"]["displayName"].as_str().unwrap()
    );
    assert_eq!(desc.version, VERSION);
    assert_eq!(desc.provider, csv["spec"]["provider"]);
    assert_eq!(desc.install_modes, csv["spec"]["installModes"]);
    let supported: Vec<&str> = desc
        .install_modes
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["supported"] == true)
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(supported, ["AllNamespaces"]);
    assert_eq!(desc.owned_crds, ["notebookvalidationjobs.mlops.mlops.dev"]);
    // The icon comes from the package; it is the CSV's icon.
    assert_eq!(desc.icon, csv["spec"]["icon"]);
    assert_eq!(desc.annotations, csv["metadata"]["annotations"]);
    assert_eq!(
        desc.description,
        csv["spec"]["description"].as_str().unwrap()
    );
    assert_eq!(desc.min_kube_version, olm::MIN_KUBE_VERSION);
    assert_eq!(
        desc.related_images[0]["image"],
        format!("ghcr.io/nbv-dev/nbv:{VERSION}")
    );
}

#[test]
fn every_release_upgrades_along_the_channel_to_the_head() {
    let catalog = catalog();
    let entries = &catalog["olm.channel"][0]["entries"];
    let versions: BTreeMap<String, String> = catalog_bundles()
        .iter()
        .map(|(name, b)| {
            let version = property(b, "olm.package")[0]["version"].as_str().unwrap();
            (name.clone(), version.to_owned())
        })
        .collect();
    assert!(
        versions.len() >= 2,
        "an upgrade needs two releases: {versions:?}"
    );
    let head = olm::channel_head(entries).expect("one channel head");
    assert_eq!(head, format!("{PACKAGE}.v{VERSION}"));
    let oldest = versions
        .iter()
        .min_by_key(|(_, v)| olm::Version::parse(v).unwrap())
        .map(|(name, _)| name.clone())
        .unwrap();
    assert_eq!(oldest, format!("{PACKAGE}.v0.1.0"));
    for name in versions.keys() {
        let path = olm::upgrade_path(entries, &versions, name, &head)
            .unwrap_or_else(|e| panic!("{CATALOG}: {e}"));
        assert_eq!(path.last(), Some(&head));
        // Every step goes to a newer release.
        for step in path.windows(2) {
            let (from, to) = (&versions[&step[0]], &versions[&step[1]]);
            assert!(
                olm::Version::parse(to) > olm::Version::parse(from),
                "{from} -> {to}"
            );
        }
    }
    // From the oldest release the chain passes through every release, in order.
    let from_oldest = olm::upgrade_path(entries, &versions, &oldest, &head).unwrap();
    assert_eq!(from_oldest.len(), versions.len(), "{from_oldest:?}");
}

#[test]
fn the_published_release_keeps_the_metadata_its_bundle_shipped() {
    let frozen = documents(
        "nbv-operator/src/cli/commands/olm/releases/nbv-operator.v0.1.0.clusterserviceversion.yaml",
    )
    .remove(0);
    assert_eq!(frozen["metadata"]["name"], "nbv-operator.v0.1.0");
    assert_eq!(frozen["spec"]["version"], "0.1.0");
    assert_valid(
        "olm/operators.coreos.com_clusterserviceversions.yaml",
        "v1alpha1",
        &frozen,
        "the CSV of release 0.1.0",
    );
    let bundles = catalog_bundles();
    let published = &bundles["nbv-operator.v0.1.0"];
    assert_eq!(
        *property(published, "olm.csv.metadata")[0],
        olm::csv_metadata(&frozen)
    );
    assert_eq!(
        property(published, "olm.csv.metadata")[0]["annotations"]["containerImage"],
        "ghcr.io/nbv-dev/nbv:0.1.0"
    );
    assert_eq!(
        published["relatedImages"][0]["image"],
        "ghcr.io/nbv-dev/nbv:0.1.0"
    );
    assert_eq!(
        published["image"],
        "ghcr.io/nbv-dev/nbv-operator-bundle:v0.1.0"
    );
    // This release's entry is the bundle's CSV.
    let current = &bundles[&format!("{PACKAGE}.v{VERSION}")];
    assert_eq!(
        *property(current, "olm.csv.metadata")[0],
        olm::csv_metadata(&csv())
    );
}

/// The documents of the bundle's manifests/.
fn bundle_manifests() -> Vec<Value> {
    let dir = root().join("bundle/manifests");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .iter()
        .flat_map(|name| documents(&format!("bundle/manifests/{name}")))
        .collect()
}

#[test]
fn the_bundle_installs_with_olm_v1() {
    let annotations = single("bundle/metadata/annotations.yaml")["annotations"].clone();
    let manifests = bundle_manifests();
    // The CSV, the CRD, the metrics Service, the PodDisruptionBudget, the ClusterRole
    // for scrapers (not the NetworkPolicy, which older OLM v0 of the supported
    // OpenShift refuses).
    assert_eq!(manifests.len(), 5);
    assert!(
        manifests
            .iter()
            .any(|m| m["kind"] == "ClusterRole" && m["metadata"]["name"] == "nbv-metrics-reader"),
        "the bundle holds the ClusterRole nbv-metrics-reader"
    );
    // No metadata/properties.yaml nor dependencies.yaml: no dependency to resolve.
    assert_eq!(
        files_under("bundle/metadata"),
        BTreeSet::from(["annotations.yaml".to_owned()])
    );
    let problems = olm::check_registry_v1(&manifests, &annotations, &[]);
    assert!(problems.is_empty(), "{problems:?}");
    // The check can fail: a webhook makes the same bundle uninstallable.
    let mut with_webhook = manifests.clone();
    let csv_at = with_webhook
        .iter()
        .position(|m| m["kind"] == "ClusterServiceVersion")
        .unwrap();
    with_webhook[csv_at]["spec"]["webhookdefinitions"] =
        serde_json::json!([{ "type": "ValidatingAdmissionWebhook" }]);
    assert_eq!(
        olm::check_registry_v1(&with_webhook, &annotations, &[]).len(),
        1
    );
}

/// Whether `rules` grant `verb` on the non-resource URL `url`.
fn grants_url(rules: &[Value], url: &str, verb: &str) -> bool {
    let has = |list: &Value, item: &str| {
        list.as_array()
            .is_some_and(|l| l.iter().any(|x| x == item || x == "*"))
    };
    rules
        .iter()
        .any(|rule| has(&rule["nonResourceURLs"], url) && has(&rule["verbs"], verb))
}

/// Whether `rules` grant `verb` on `group`/`resource` (named `name`, if given).
fn grants(rules: &[Value], group: &str, resource: &str, verb: &str, name: Option<&str>) -> bool {
    let has = |list: &Value, item: &str| {
        list.as_array()
            .is_some_and(|l| l.iter().any(|x| x == item || x == "*"))
    };
    rules.iter().any(|rule| {
        has(&rule["apiGroups"], group)
            && has(&rule["resources"], resource)
            && has(&rule["verbs"], verb)
            && (rule.get("resourceNames").is_none()
                || name.is_some_and(|n| has(&rule["resourceNames"], n)))
    })
}

#[test]
fn the_olm_v1_installer_may_install_and_grant_everything_in_the_bundle() {
    let rbac = olm::installer_rbac().expect("the installer's RBAC renders");
    let text = {
        let body: Vec<String> = rbac
            .iter()
            .map(|d| serde_yaml_ng::to_string(d).unwrap())
            .collect();
        format!(
            "# Generated from the bundle (bundle/manifests) by nbv-operator/tests/olm.rs; do not\n\
             # edit. The rights of the ServiceAccount nbv-installer that OLM v1 installs nbv as.\n{}",
            body.join("---\n")
        )
    };
    repository::assert_generated(
        "config/olm/v1/rbac.yaml",
        &text,
        "NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test olm",
        "olm",
    );
    let rules_of = |kind: &str| -> Vec<Value> {
        rbac.iter()
            .filter(|d| d["kind"] == kind)
            .flat_map(|d| d["rules"].as_array().cloned().unwrap())
            .collect()
    };
    let (cluster, namespaced) = (rules_of("ClusterRole"), rules_of("Role"));
    let csv = csv();
    let install = &csv["spec"]["install"]["spec"];
    // Escalation prevention: the installer holds every right it grants.
    for key in ["clusterPermissions", "permissions"] {
        for permission in install[key].as_array().unwrap() {
            for rule in permission["rules"].as_array().unwrap() {
                for group in rule["apiGroups"].as_array().unwrap() {
                    for resource in rule["resources"].as_array().unwrap() {
                        for verb in rule["verbs"].as_array().unwrap() {
                            let (g, r, v) = (
                                group.as_str().unwrap(),
                                resource.as_str().unwrap(),
                                verb.as_str().unwrap(),
                            );
                            assert!(
                                grants(&cluster, g, r, v, None),
                                "the installer cannot grant {v} {g}/{r}"
                            );
                        }
                    }
                }
            }
        }
    }
    // It manages every object of the bundle.
    for manifest in bundle_manifests() {
        let name = manifest["metadata"]["name"].as_str().unwrap();
        let (rules, group, resource) = match manifest["kind"].as_str().unwrap() {
            "CustomResourceDefinition" => (
                &cluster,
                "apiextensions.k8s.io",
                "customresourcedefinitions",
            ),
            "Service" => (&namespaced, "", "services"),
            "PodDisruptionBudget" => (&namespaced, "policy", "poddisruptionbudgets"),
            "ClusterRole" => {
                // Escalation prevention again: it holds every right the role grants.
                for rule in manifest["rules"].as_array().unwrap() {
                    for verb in rule["verbs"].as_array().unwrap() {
                        let verb = verb.as_str().unwrap();
                        for url in rule["nonResourceURLs"].as_array().into_iter().flatten() {
                            let url = url.as_str().unwrap();
                            assert!(
                                grants_url(&cluster, url, verb),
                                "the installer cannot create {name}: it lacks {verb} {url}"
                            );
                        }
                        for group in rule["apiGroups"].as_array().into_iter().flatten() {
                            for resource in rule["resources"].as_array().into_iter().flatten() {
                                assert!(
                                    grants(
                                        &cluster,
                                        group.as_str().unwrap(),
                                        resource.as_str().unwrap(),
                                        verb,
                                        None
                                    ),
                                    "the installer cannot create {name}: it lacks {verb} \
                                     {group}/{resource}"
                                );
                            }
                        }
                    }
                }
                (&cluster, "rbac.authorization.k8s.io", "clusterroles")
            }
            "ClusterServiceVersion" => continue,
            other => panic!("a bundle object of kind {other} the installer is not checked for"),
        };
        assert!(
            grants(rules, group, resource, "create", None),
            "create {resource}"
        );
        for verb in ["get", "update", "patch", "delete"] {
            assert!(
                grants(rules, group, resource, verb, Some(name)),
                "{verb} {resource} {name}"
            );
        }
    }
    for deployment in install["deployments"].as_array().unwrap() {
        let name = deployment["name"].as_str().unwrap();
        let account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
            .as_str()
            .unwrap();
        for verb in ["get", "update", "patch", "delete"] {
            assert!(grants(&namespaced, "apps", "deployments", verb, Some(name)));
            assert!(grants(
                &namespaced,
                "",
                "serviceaccounts",
                verb,
                Some(account)
            ));
        }
    }
    for (rules, resources) in [
        (&cluster, ["clusterroles", "clusterrolebindings"]),
        (&namespaced, ["roles", "rolebindings"]),
    ] {
        for resource in resources {
            for verb in ["create", "get", "update", "patch", "delete"] {
                assert!(
                    grants(rules, "rbac.authorization.k8s.io", resource, verb, None),
                    "{verb} {resource}"
                );
            }
        }
    }
}

#[test]
fn the_olm_v1_sample_installs_this_package_as_the_installer() {
    let extension = single("config/olm/v1/clusterextension.yaml");
    let catalog = single("config/olm/v1/clustercatalog.yaml");
    let account = single("config/olm/v1/serviceaccount.yaml");
    let namespace = single("config/olm/v1/namespace.yaml");
    assert_eq!(extension["apiVersion"], "olm.operatorframework.io/v1");
    let spec = &extension["spec"];
    assert_eq!(spec["namespace"], namespace["metadata"]["name"]);
    assert_eq!(spec["namespace"], olm::INSTALL_NAMESPACE);
    assert_eq!(spec["serviceAccount"]["name"], account["metadata"]["name"]);
    assert_eq!(account["metadata"]["name"], olm::INSTALLER);
    assert_eq!(account["metadata"]["namespace"], olm::INSTALL_NAMESPACE);
    let source = &spec["source"];
    assert_eq!(source["sourceType"], "Catalog");
    assert_eq!(source["catalog"]["packageName"], PACKAGE);
    assert_eq!(source["catalog"]["channels"], serde_json::json!([CHANNEL]));
    assert_eq!(
        source["catalog"]["selector"]["matchLabels"]["olm.operatorframework.io/metadata.name"],
        catalog["metadata"]["name"]
    );
    // The ClusterExtension's name is the one the installer may set finalizers on.
    let rbac = documents("config/olm/v1/rbac.yaml");
    assert!(grants(
        rbac[0]["rules"].as_array().unwrap(),
        "olm.operatorframework.io",
        "clusterextensions/finalizers",
        "update",
        extension["metadata"]["name"].as_str()
    ));
    // The kustomization installs every file of the directory.
    let kustomization = single("config/olm/v1/kustomization.yaml");
    let listed: BTreeSet<String> = kustomization["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect();
    let mut files = files_under("config/olm/v1");
    files.remove("kustomization.yaml");
    assert_eq!(listed, files);
}

/// Where OLM installs nbv on OpenShift: openshift-operators (OperatorHub's namespace
/// for AllNamespaces operators) or nbv-system (the CSV's suggested namespace, the
/// one config/openshift and config/olm/v1 use). OpenShift GitOps runs Argo CD in
/// openshift-gitops.
const OLM_NAMESPACES: [&str; 2] = ["openshift-operators", "nbv-system"];
const OPENSHIFT_GITOPS: &str = "openshift-gitops";

#[test]
fn the_argo_cd_role_for_openshift_is_config_rbacs_in_openshift_gitops() {
    let mut documents = documents("config/rbac/argocd_role.yaml");
    for document in &mut documents {
        document["metadata"]["namespace"] = Value::from(OPENSHIFT_GITOPS);
        if document["kind"] == "RoleBinding" {
            let subject = document["subjects"][0].clone();
            document["subjects"] = OLM_NAMESPACES
                .iter()
                .map(|namespace| {
                    let mut s = subject.clone();
                    s["namespace"] = Value::from(*namespace);
                    s
                })
                .collect();
        }
    }
    let body: Vec<String> = documents
        .iter()
        .map(|d| serde_yaml_ng::to_string(d).unwrap())
        .collect();
    let text = format!(
        "# Generated from config/rbac/argocd_role.yaml (read it for what each rule is for) by\n\
         # nbv-operator/tests/olm.rs; do not edit. The Role OLM cannot install: what nbv reads\n\
         # in OpenShift GitOps' namespace, granted to nbv's ServiceAccount where OLM installs\n\
         # it: openshift-operators or nbv-system (the suggested namespace, config/openshift and\n\
         # config/olm/v1). Regenerate with NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test olm\n{}",
        body.join("---\n")
    );
    repository::assert_generated(
        "config/openshift-gitops/argocd-role.yaml",
        &text,
        "NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test olm",
        "olm",
    );
    // The subject is the operator's ServiceAccount, as the bundle names it.
    let account = single("config/rbac/service_account.yaml")["metadata"]["name"].clone();
    let binding = documents
        .iter()
        .find(|d| d["kind"] == "RoleBinding")
        .unwrap();
    for subject in binding["subjects"].as_array().unwrap() {
        assert_eq!(subject["name"], account);
    }
    assert_eq!(
        csv()["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["serviceAccountName"],
        account
    );
}

#[test]
fn the_operatorhub_install_validates_against_olms_crds() {
    let source = single("config/openshift/catalogsource.yaml");
    let subscription = single("config/openshift/subscription.yaml");
    assert_valid(
        "olm/operators.coreos.com_catalogsources.yaml",
        "v1alpha1",
        &source,
        "config/openshift/catalogsource.yaml",
    );
    assert_valid(
        "olm/operators.coreos.com_subscriptions.yaml",
        "v1alpha1",
        &subscription,
        "config/openshift/subscription.yaml",
    );
    let group = single("config/openshift/operatorgroup.yaml");
    assert_valid(
        "olm/operators.coreos.com_operatorgroups.yaml",
        "v1",
        &group,
        "config/openshift/operatorgroup.yaml",
    );
    assert!(
        group["spec"].get("targetNamespaces").is_none(),
        "AllNamespaces"
    );
    // OperatorHub's catalogs live in openshift-marketplace; nbv in the CSV's suggested
    // namespace, with its OperatorGroup, which the Argo CD Role's binding names.
    assert_eq!(source["metadata"]["namespace"], "openshift-marketplace");
    let suggested =
        csv()["metadata"]["annotations"]["operatorframework.io/suggested-namespace"].clone();
    assert_eq!(subscription["metadata"]["namespace"], suggested);
    assert_eq!(group["metadata"]["namespace"], suggested);
    assert_eq!(
        single("config/openshift/namespace.yaml")["metadata"]["name"],
        suggested
    );
    assert!(OLM_NAMESPACES.contains(&suggested.as_str().unwrap()));
    assert_eq!(subscription["spec"]["name"], PACKAGE);
    assert_eq!(subscription["spec"]["channel"], CHANNEL);
    assert_eq!(subscription["spec"]["source"], source["metadata"]["name"]);
    assert_eq!(
        subscription["spec"]["sourceNamespace"],
        source["metadata"]["namespace"]
    );
    assert_eq!(
        source["spec"]["image"],
        single("config/olm/catalogsource.yaml")["spec"]["image"]
    );
    let kustomization = single("config/openshift/kustomization.yaml");
    let listed: BTreeSet<String> = kustomization["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect();
    let mut files = files_under("config/openshift");
    files.remove("kustomization.yaml");
    assert_eq!(listed, files);
}
