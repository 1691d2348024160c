//! The objects that build a job's image, one route per build system: snapshots of each
//! route's objects for one plan, validated against the build systems' own CRD schemas
//! (`../shared/reference/`); the refusals of what a route cannot carry out; what the
//! watched object's status says (`testdata/`); cancellation; the history kept; and
//! that no credential of the job reaches an object.

mod history;
mod objects;
mod observe;
mod secrets;

use std::path::{Path, PathBuf};
use std::time::Duration;

use nbv_core::api::{FallbackStrategy, GitSource};
use nbv_core::build::{BuildKey, BuildPlan, ShipwrightStrategy, SourceConfig, Strategy};
use nbv_testkit::schema::strict_schema;
use serde_json::{Value, json};

/// The plan every test starts from: a commit of a private repository, a named
/// requirements file, a push Secret and a service account.
pub fn plan(strategy: Strategy) -> BuildPlan {
    let key = BuildKey::of(&json!({"fixture": 1}));
    BuildPlan {
        strategy,
        name: format!("nbv-build-{}", key.short()),
        image: format!("quay.io/example/notebooks:{key}"),
        key,
        namespace: "ml".to_owned(),
        job: "train".to_owned(),
        job_uid: "4b1c0d2e-0000-4000-8000-000000000001".to_owned(),
        git: GitSource {
            url: "https://github.com/example/models.git".to_owned(),
            git_ref: "0123456789abcdef0123456789abcdef01234567".to_owned(),
            credentials_secret: Some("git-creds".to_owned()),
        },
        source: SourceConfig {
            notebook_path: "notebooks/tier2/train.ipynb".to_owned(),
            base_image: "registry.access.redhat.com/ubi9/python-311:latest".to_owned(),
            requirements_file: Some("notebooks/tier2/requirements.txt".to_owned()),
            requirements_sources: None,
            auto_generate: true,
            dockerfile: None,
            prefer_dockerfile: false,
            fallback: FallbackStrategy::Warn,
        },
        repository: "quay.io/example/notebooks".to_owned(),
        push_secret: Some("quay-push".to_owned()),
        service_account: Some("builder".to_owned()),
        shipwright: ShipwrightStrategy {
            cluster: true,
            name: "buildah".to_owned(),
        },
        timeout: Duration::from_secs(900),
        shared: true,
    }
}

/// The reference material beside the repository, never copied into it.
fn reference(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/reference")
        .join(relative)
}

/// The `openAPIV3Schema` of `version` of the CRD in `reference/<crd>`, made strict
/// ([`strict_schema`]).
pub fn crd_schema(crd: &str, version: &str) -> Value {
    let path = reference(crd);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e} (shared/ must be beside the repository)",
            path.display()
        )
    });
    let doc: Value = serde_yaml_ng::from_str(&text).expect("a CRD is YAML");
    strict_schema(&doc, version).unwrap_or_else(|| panic!("{crd} has no version {version}"))
}

/// The errors of `doc` against `version` of the CRD `crd` (empty when it is valid).
pub fn schema_errors(crd: &str, version: &str, doc: &Value) -> Vec<String> {
    nbv_testkit::schema::schema_errors(&crd_schema(crd, version), doc)
}

/// Panics unless `doc` is valid against `version` of the CRD `crd`.
pub fn assert_valid(crd: &str, version: &str, doc: &Value) {
    let errors = schema_errors(crd, version, doc);
    assert!(
        errors.is_empty(),
        "{} {} does not validate against {crd}:\n{}",
        doc["kind"],
        doc["metadata"]["name"],
        errors.join("\n")
    );
}

/// A file of `testdata/`, as JSON.
pub fn testdata(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/build_objects/testdata")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}
