//! The deployable files (`config/`, `Dockerfile`) against the code they deploy.
//!
//! Generated files must equal what the code renders, byte for byte; every kustomization
//! must point at files that exist; the samples must be what nbv accepts; the Deployment
//! and the wait hook must use flags, environment variables, ports and the user the
//! binary and the image really have.
//!
//! `NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test config` rewrites the
//! generated files (the CRD and the Argo CD health checks) instead of failing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use nbv_core::annotations::{
    BLOCK_WAVE, NOTEBOOK_STATUS, NOTEBOOK_SUMMARY, NOTIFICATION_TYPE, ON_SUCCESS_TRIGGER,
};
use nbv_core::api::NotebookValidationJob;
use nbv_core::health::{HEALTH_KEY, Variant, render_health_configmap};
use nbv_core::triggers::from_annotations;
use nbv_core::waves::{block_wave, sync_wave};
use nbv_operator::cli::{Cli, Command};
use repository::{documents, read, root};
use serde_json::Value;

mod repository;

/// Every file under `config/` with its path relative to the repository root.
fn config_files() -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, base, out);
            } else if let Ok(relative) = path.strip_prefix(base) {
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("config"), &root(), &mut out);
    out
}

/// Argo CD's test layout for resource customizations (`health_test.yaml`, `health.lua`,
/// `testdata/`): inputs of `nbv health test`, not manifests to deploy.
const HEALTH_TESTS: &str = "config/argocd/tests/";

/// A plain Prometheus rule file and its promtool unit tests (config/monitoring):
/// inputs of promtool, not manifests to deploy.
const PROMTOOL_FILES: &str = "config/monitoring/promtool/";

/// The YAML files that are manifests or kustomizations.
fn yaml_files() -> Vec<String> {
    config_files()
        .into_iter()
        .filter(|f| f.ends_with(".yaml") || f.ends_with(".yml"))
        .filter(|f| !f.starts_with(HEALTH_TESTS) && !f.starts_with(PROMTOOL_FILES))
        .collect()
}

/// The manifests (not kustomizations) under `config/`, with their file.
fn manifests() -> Vec<(String, Value)> {
    yaml_files()
        .into_iter()
        .filter(|f| !f.ends_with("/kustomization.yaml"))
        .flat_map(|f| documents(&f).into_iter().map(move |d| (f.clone(), d)))
        .collect()
}

fn find<'a>(manifests: &'a [(String, Value)], kind: &str, name: &str) -> &'a Value {
    manifests
        .iter()
        .find(|(_, m)| m["kind"] == kind && m["metadata"]["name"] == name)
        .map(|(_, m)| m)
        .unwrap_or_else(|| panic!("no {kind} {name} under config/"))
}

#[test]
fn the_crd_is_the_output_of_nbv_crd() {
    repository::assert_generated(
        "config/crd/notebookvalidationjobs.yaml",
        &nbv_operator::commands::crd::render(),
        "cargo run -q -p nbv-operator -- crd > config/crd/notebookvalidationjobs.yaml",
        "config",
    );
}

#[test]
fn the_health_checks_are_rendered_from_the_core() {
    for (variant, file) in [
        (Variant::Basic, "config/argocd/health-check-configmap.yaml"),
        (
            Variant::Advanced,
            "config/argocd/health-check-configmap-advanced.yaml",
        ),
        (
            Variant::Guide,
            "config/argocd/health-check-configmap-guide.yaml",
        ),
    ] {
        repository::assert_generated(
            file,
            &render_health_configmap(variant),
            &format!("the test (nbv_core::health::render_health_configmap(Variant::{variant:?}))"),
            "config",
        );
        let cm = &documents(file)[0];
        assert_eq!(cm["metadata"]["name"], "argocd-cm", "{file}");
        assert_eq!(
            cm["data"][HEALTH_KEY],
            variant.source(),
            "{file}: the script must survive YAML"
        );
    }
}

#[test]
fn every_yaml_file_parses_and_every_manifest_names_its_object() {
    for file in config_files().into_iter().filter(|f| {
        (f.starts_with(HEALTH_TESTS) || f.starts_with(PROMTOOL_FILES)) && f.ends_with(".yaml")
    }) {
        // Health test and promtool inputs only have to be YAML.
        documents(&file);
    }
    let files = yaml_files();
    assert!(
        files.len() > 20,
        "suspiciously few files under config/: {files:?}"
    );
    for file in files {
        for (i, doc) in documents(&file).iter().enumerate() {
            let at = format!("{file} (document {i})");
            assert!(doc["apiVersion"].is_string(), "{at}: no apiVersion");
            assert!(doc["kind"].is_string(), "{at}: no kind");
            if doc["kind"] != "Kustomization" {
                assert!(
                    doc["metadata"]["name"].is_string(),
                    "{at}: no metadata.name"
                );
            }
        }
    }
}

/// Where `actual` first differs from `expected`, as a JSON path, or `None`.
fn first_difference(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            // Each key once: visiting shared keys from both sides would double the work
            // at every level of nesting.
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                first_difference(x, y, &format!("{path}.{k}"))
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}[{i}]"))),
        (a, b) if a == b => None,
        (a, b) => Some(format!("{path}: the file has {a}, the API type keeps {b}")),
    }
}

/// Deserializes `doc` as `K` and serializes it back: a field the API does not have
/// (a typo, a wrong nesting) is dropped by the typed model, and so shows as a
/// difference.
fn round_trip<K: serde::Serialize + serde::de::DeserializeOwned>(doc: &Value) -> Option<String> {
    match serde_json::from_value::<K>(doc.clone()) {
        Err(e) => Some(format!("not a valid object: {e}")),
        Ok(typed) => first_difference(doc, &serde_json::to_value(&typed).unwrap_or_default(), ""),
    }
}

#[test]
fn every_kubernetes_object_has_only_fields_of_its_api() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::batch::v1::Job;
    use k8s_openapi::api::core::v1::{
        ConfigMap, Namespace, PersistentVolumeClaim, Service, ServiceAccount,
    };
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

    let mut checked = 0;
    for (file, doc) in manifests() {
        let problem = match doc["kind"].as_str().unwrap_or_default() {
            "Deployment" => round_trip::<Deployment>(&doc),
            "Job" => round_trip::<Job>(&doc),
            "ConfigMap" => round_trip::<ConfigMap>(&doc),
            "Namespace" => round_trip::<Namespace>(&doc),
            "PersistentVolumeClaim" => round_trip::<PersistentVolumeClaim>(&doc),
            "Service" => round_trip::<Service>(&doc),
            "ServiceAccount" => round_trip::<ServiceAccount>(&doc),
            "ClusterRole" => round_trip::<ClusterRole>(&doc),
            "ClusterRoleBinding" => round_trip::<ClusterRoleBinding>(&doc),
            "Role" => round_trip::<Role>(&doc),
            "RoleBinding" => round_trip::<RoleBinding>(&doc),
            "CustomResourceDefinition" => round_trip::<CustomResourceDefinition>(&doc),
            "NotebookValidationJob" => round_trip::<NotebookValidationJob>(&doc),
            // Argo CD Applications and KServe InferenceServices have no Rust types here.
            _ => continue,
        };
        checked += 1;
        if let Some(problem) = problem {
            panic!(
                "{file}: {} {}: {problem}",
                doc["kind"], doc["metadata"]["name"]
            );
        }
    }
    assert!(checked > 20, "only {checked} objects checked");
}

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

#[test]
fn every_kustomization_refers_to_existing_files_and_every_manifest_is_referenced() {
    let mut referenced = BTreeSet::new();
    for file in yaml_files()
        .into_iter()
        .filter(|f| f.ends_with("/kustomization.yaml"))
    {
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

/// `nbv simulate` exists exactly when the `simulate` feature is on: the image, built
/// without it, has no simulation (`.ci/run` runs this test both ways).
#[test]
fn nbv_simulate_exists_only_with_the_simulate_feature() {
    let simulate = Cli::command()
        .get_subcommands()
        .any(|c| c.get_name() == "simulate");
    assert_eq!(simulate, cfg!(feature = "simulate"));
}

#[test]
fn the_deployment_runs_nbv_run_as_the_image_user_with_real_flags() {
    let manifests = manifests();
    let deployment = find(&manifests, "Deployment", "nbv-operator");
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];

    // The arguments parse as `nbv run`.
    let args: Vec<&str> = container["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let cli = Cli::try_parse_from(std::iter::once("nbv").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("the Deployment's args {args:?} do not parse: {e}"));
    let Command::Run(run) = cli.command else {
        panic!("the Deployment does not run `nbv run`: {args:?}");
    };

    // Every NBV_ variable is one that `nbv run` reads, and parses.
    let command = Cli::command();
    let run_command = command
        .get_subcommands()
        .find(|c| c.get_name() == "run")
        .expect("nbv has a run subcommand");
    let known: BTreeSet<String> = run_command
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    let env: BTreeMap<String, &Value> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| Some((e["name"].as_str()?.to_owned(), e)))
        .collect();
    for name in env.keys().filter(|n| n.starts_with("NBV_")) {
        assert!(
            known.contains(name),
            "the Deployment sets {name}, which nbv run does not read; known: {known:?}"
        );
    }
    for (name, field) in [
        ("POD_NAME", "metadata.name"),
        ("POD_NAMESPACE", "metadata.namespace"),
    ] {
        assert_eq!(
            env.get(name)
                .map(|e| &e["valueFrom"]["fieldRef"]["fieldPath"]),
            Some(&Value::from(field)),
            "{name} must come from the downward API ({field}): leader election uses it"
        );
    }

    // Probes and the metrics port are where `nbv run` listens.
    assert!(!run.no_leader_election, "two replicas need leader election");
    assert!(
        deployment["spec"]["replicas"]
            .as_u64()
            .is_some_and(|r| r >= 2)
    );
    let port = &container["ports"][0];
    assert_eq!(port["name"], "metrics");
    assert_eq!(
        port["containerPort"].as_u64(),
        Some(u64::from(run.metrics_addr.port()))
    );
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    for probe in ["livenessProbe", "readinessProbe"] {
        assert_eq!(container[probe]["httpGet"]["port"], "metrics", "{probe}");
    }
    let service = find(&manifests, "Service", "nbv-operator-metrics");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "metrics");
    assert_eq!(
        service["spec"]["selector"],
        deployment["spec"]["selector"]["matchLabels"]
    );

    // Hardened: the restricted Pod Security Standard and the image's user.
    let security = &container["securityContext"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["capabilities"]["drop"], serde_json::json!(["ALL"]));
    for kind in ["requests", "limits"] {
        for resource in ["cpu", "memory"] {
            assert!(
                container["resources"][kind][resource].is_string(),
                "no {kind}.{resource}"
            );
        }
    }
    assert!(
        pod["terminationGracePeriodSeconds"]
            .as_u64()
            .is_some_and(|s| s > 5),
        "the Lease release takes up to 5 s"
    );
    let account = find(&manifests, "ServiceAccount", "nbv-operator");
    assert_eq!(pod["serviceAccountName"], account["metadata"]["name"]);
    assert_eq!(
        deployment["metadata"]["namespace"],
        account["metadata"]["namespace"]
    );
    assert_eq!(
        container["image"],
        format!("ghcr.io/nbv-dev/nbv:{}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_dockerfile_builds_the_nbv_binary_and_runs_it_as_the_deployments_user() {
    let dockerfile = read("Dockerfile");
    let lines: Vec<&str> = dockerfile
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));

    // The binary's name comes from nbv-operator's [[bin]].
    let manifest: toml_lite::Manifest = toml_lite::parse(&read("nbv-operator/Cargo.toml"));
    assert_eq!(manifest.bin_name.as_deref(), Some("nbv"));
    assert!(has("cargo build --release --locked -p nbv-operator"));
    // Both builds leave out the simulation and its test kit (`.ci/run` checks the tree).
    let builds: Vec<&&str> = lines.iter().filter(|l| l.contains("cargo build")).collect();
    assert_eq!(
        builds.len(),
        2,
        "the dependency layer and the image: {builds:?}"
    );
    for build in builds {
        assert!(
            build.contains("--no-default-features"),
            "the image must be built without the `simulate` feature: {build}"
        );
    }
    assert!(has("install -m 0755 target/release/nbv /out/nbv"));
    assert!(
        has("ln -s /nbv /out/usr/local/bin/nbv"),
        "`nbv` must also be on PATH (docs/wait.md runs command: [nbv])"
    );
    assert!(has("COPY --from=builder /out/ /"));
    assert!(has("ENTRYPOINT [\"/nbv\"]"));
    assert!(has("USER 65532:65532"));
    assert!(has("FROM gcr.io/distroless/cc-debian12:nonroot"));

    // The toolchain is the workspace's rust-version, on the runtime's Debian release.
    let workspace = read("Cargo.toml");
    let rust_version = workspace
        .lines()
        .find_map(|l| l.trim().strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"'))
        .expect("the workspace declares rust-version");
    assert!(
        has(&format!("FROM rust:{rust_version}-bookworm AS builder")),
        "the builder must be rust:{rust_version}-bookworm"
    );

    // Both builds see every workspace member, or cargo cannot load the workspace: the
    // dependency layer copies each member's manifest (or the whole member) before the
    // first `cargo build`, and the crates of the image are copied whole.
    let members = workspace
        .lines()
        .find_map(|l| l.trim().strip_prefix("members = "))
        .expect("the workspace lists its members");
    let first_build = lines
        .iter()
        .position(|l| l.contains("cargo build"))
        .expect("the Dockerfile runs cargo build");
    let before = &lines[..first_build];
    for member in members.trim_matches(|c| c == '[' || c == ']').split(',') {
        let member = member.trim().trim_matches('"');
        let copied = |line: &&str| {
            *line == format!("COPY {member}/Cargo.toml {member}/")
                || *line == format!("COPY {member} {member}")
        };
        assert!(
            before.iter().any(copied),
            "the Dockerfile's dependency layer does not copy the workspace member {member}"
        );
        assert!(
            has(&format!("COPY {member} {member}")),
            "the Dockerfile does not copy {member}"
        );
    }
    // The placeholder crates of the dependency layer have only src/lib.rs and
    // src/main.rs: a target declared with another path would not load there.
    for krate in ["nbv-core", "nbv-operator", "nbv-testkit"] {
        let manifest = read(&format!("{krate}/Cargo.toml"));
        for line in manifest.lines().map(str::trim) {
            assert!(
                !line.starts_with("[[") || line == "[[bin]]",
                "{krate}/Cargo.toml declares {line}: give the Dockerfile's dependency layer a placeholder for it"
            );
            if let Some(path) = line.strip_prefix("path = ") {
                assert!(
                    ["\"src/main.rs\"", "\"src/lib.rs\""].contains(&path),
                    "{krate}/Cargo.toml: target path {path} has no placeholder in the Dockerfile"
                );
            }
        }
    }
    let ignored = read(".dockerignore");
    assert!(
        ignored.lines().any(|l| l.trim() == "target/"),
        ".dockerignore must keep target/ out of the context"
    );

    let deployment = manifests()
        .into_iter()
        .find(|(_, m)| m["kind"] == "Deployment")
        .map(|(_, m)| m)
        .unwrap_or_default();
    assert_eq!(
        deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"],
        65532
    );
}

/// Just enough of a Cargo manifest: the `[[bin]]` name.
mod toml_lite {
    pub struct Manifest {
        pub bin_name: Option<String>,
    }

    pub fn parse(text: &str) -> Manifest {
        let mut in_bin = false;
        let mut bin_name = None;
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                in_bin = line == "[[bin]]";
            } else if in_bin && let Some(value) = line.strip_prefix("name = ") {
                bin_name = Some(value.trim_matches('"').to_owned());
            }
        }
        Manifest { bin_name }
    }
}

#[test]
fn the_sample_jobs_are_valid_and_their_annotations_are_what_nbv_reads() {
    let jobs: Vec<(String, Value)> = manifests()
        .into_iter()
        .filter(|(_, m)| m["kind"] == "NotebookValidationJob")
        .collect();
    assert!(!jobs.is_empty(), "no NotebookValidationJob under config/");
    let mut read_back = BTreeMap::new();
    for (file, value) in jobs {
        let job: NotebookValidationJob = serde_json::from_value(value.clone())
            .unwrap_or_else(|e| panic!("{file}: not a valid NotebookValidationJob: {e}"));
        assert!(
            job.spec.unknown_fields.is_empty(),
            "{file}: fields nbv does not know: {:?}",
            job.spec.unknown_fields
        );
        let namespace = job
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| panic!("{file}: a sample job names its namespace"));
        let annotations = job.metadata.annotations.clone().unwrap_or_default();
        let triggers = from_annotations(&annotations, &namespace)
            .unwrap_or_else(|e| panic!("{file}: invalid {ON_SUCCESS_TRIGGER}:\n{e}"));
        assert!(
            triggers.warnings().is_empty(),
            "{file}: trigger warnings: {:?}",
            triggers.warnings()
        );
        let wave = sync_wave(&annotations).unwrap_or_else(|e| panic!("{file}: {e}"));
        let blocks = block_wave(&annotations).unwrap_or_else(|e| panic!("{file}: {e}"));
        read_back.insert(
            format!(
                "{namespace}/{}",
                job.metadata.name.clone().unwrap_or_default()
            ),
            serde_json::json!({
                "syncWave": wave.map(|w| w.get()),
                "blockWave": blocks.map(|w| w.get()),
                "triggers": triggers.triggers().iter().map(|t| t.key()).collect::<Vec<_>>(),
            }),
        );
    }
    insta::assert_yaml_snapshot!(read_back);
}

#[test]
fn the_wait_hook_waits_for_the_wave_the_sample_job_blocks() {
    let manifests = manifests();
    let hooks: Vec<&Value> = manifests
        .iter()
        .map(|(_, m)| m)
        .filter(|m| {
            m["kind"] == "Job"
                && m["metadata"]["annotations"]["argocd.argoproj.io/hook"].is_string()
        })
        .collect();
    assert_eq!(hooks.len(), 1, "the samples have one wait hook");
    let hook = hooks[0];
    assert_eq!(
        hook["metadata"]["annotations"]["argocd.argoproj.io/hook"],
        "PreSync"
    );
    let pod = &hook["spec"]["template"]["spec"];
    let container = &pod["containers"][0];

    let args: Vec<&str> = container["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let cli = Cli::try_parse_from(std::iter::once("nbv").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("the hook's args {args:?} do not parse: {e}"));
    let Command::Wait {
        namespace,
        wave,
        timeout,
    } = cli.command
    else {
        panic!("the hook does not run `nbv wait`: {args:?}");
    };
    assert!(
        timeout.is_some(),
        "a hook without --timeout can hold a sync forever"
    );
    assert_eq!(
        Some(namespace.as_str()),
        hook["metadata"]["namespace"].as_str()
    );

    // A job in that namespace blocks that wave.
    let blocking = manifests.iter().map(|(_, m)| m).filter(|m| {
        m["kind"] == "NotebookValidationJob"
            && m["metadata"]["namespace"] == namespace.as_str()
            && m["metadata"]["annotations"][BLOCK_WAVE]
                .as_str()
                .and_then(|w| w.parse::<i64>().ok())
                == Some(wave)
    });
    assert_eq!(
        blocking.count(),
        1,
        "no sample job in {namespace} blocks wave {wave}"
    );

    // The operator's own image.
    let operator = find(&manifests, "Deployment", "nbv-operator");
    assert_eq!(
        container["image"],
        operator["spec"]["template"]["spec"]["containers"][0]["image"]
    );

    // Its ServiceAccount is a PreSync hook of an earlier hook wave, so it exists before
    // the Job's Pod.
    let wave_of = |m: &Value| {
        m["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
            .as_str()
            .and_then(|w| w.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let account_name = pod["serviceAccountName"]
        .as_str()
        .expect("the hook names its service account");
    let account = manifests
        .iter()
        .map(|(_, m)| m)
        .find(|m| {
            m["kind"] == "ServiceAccount"
                && m["metadata"]["name"] == account_name
                && m["metadata"]["namespace"] == hook["metadata"]["namespace"]
        })
        .expect("the samples create the hook's ServiceAccount");
    assert_eq!(
        account["metadata"]["annotations"]["argocd.argoproj.io/hook"],
        "PreSync"
    );
    assert!(
        wave_of(account) < wave_of(hook),
        "the ServiceAccount must be created before the hook Job"
    );

    // The Role is config/rbac/wait-hook-role.yaml's, deployed with the jobs (the other
    // Application) as ordinary resources, and bound to that ServiceAccount.
    let in_samples = |kind: &str| {
        manifests
            .iter()
            .find(|(f, m)| {
                f.starts_with("config/samples/")
                    && m["kind"] == kind
                    && m["metadata"]["namespace"] == namespace.as_str()
            })
            .unwrap_or_else(|| panic!("the samples have no {kind} for the hook"))
    };
    let (role_file, role) = in_samples("Role");
    let (binding_file, binding) = in_samples("RoleBinding");
    let jobs_file = manifests
        .iter()
        .find(|(_, m)| m["kind"] == "NotebookValidationJob")
        .map(|(f, _)| f.clone())
        .unwrap_or_default();
    for (file, object) in [(role_file, role), (binding_file, binding)] {
        assert_eq!(
            Path::new(file).parent(),
            Path::new(&jobs_file).parent(),
            "{file}: deploy it with the jobs"
        );
        assert!(
            object["metadata"]["annotations"]["argocd.argoproj.io/hook"].is_null(),
            "{file}: not a hook"
        );
    }
    let reference = documents("config/rbac/wait-hook-role.yaml")
        .into_iter()
        .find(|m| m["kind"] == "Role")
        .expect("config/rbac/wait-hook-role.yaml has a Role");
    assert_eq!(role["rules"], reference["rules"]);
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["name"], account_name);
    assert_eq!(
        binding["subjects"][0]["namespace"],
        hook["metadata"]["namespace"]
    );
}

#[test]
fn the_sample_applications_deploy_existing_directories() {
    for doc in documents("config/samples/applications.yaml") {
        assert_eq!(doc["kind"], "Application");
        let path = doc["spec"]["source"]["path"]
            .as_str()
            .expect("a source path");
        assert!(
            root().join(path).join("kustomization.yaml").is_file(),
            "{path} is not a kustomization"
        );
        assert_eq!(
            doc["spec"]["source"]["repoURL"],
            "https://github.com/nbv-dev/nbv"
        );
    }
}

#[test]
fn the_notification_example_reads_what_nbv_writes() {
    let cm = &documents("config/argocd/notifications-cm.yaml")[0];
    assert_eq!(cm["metadata"]["name"], "argocd-notifications-cm");
    let data = cm["data"].as_object().expect("data");
    let templates: BTreeSet<&str> = data
        .keys()
        .filter_map(|k| k.strip_prefix("template."))
        .collect();
    let mut triggers = 0;
    for (key, value) in data {
        let value = value
            .as_str()
            .unwrap_or_else(|| panic!("data.{key} is not a string"));
        // Every entry is itself YAML that Argo CD parses.
        let parsed: Value = serde_yaml_ng::from_str(value)
            .unwrap_or_else(|e| panic!("data.{key} is not valid YAML: {e}"));
        if key.starts_with("trigger.") {
            triggers += 1;
            for condition in parsed
                .as_array()
                .expect("a trigger is a list of conditions")
            {
                assert!(
                    condition["when"]
                        .as_str()
                        .is_some_and(|w| w.contains(NOTEBOOK_STATUS))
                );
                for template in condition["send"].as_array().into_iter().flatten() {
                    let name = template.as_str().unwrap_or_default();
                    assert!(
                        templates.contains(name),
                        "data.{key} sends the undefined template {name}"
                    );
                }
            }
        }
        if key.starts_with("template.") {
            assert!(
                value.contains(&format!(
                    "index .app.metadata.annotations \"{NOTEBOOK_SUMMARY}\""
                )),
                "data.{key}"
            );
            assert!(
                value.contains(NOTIFICATION_TYPE),
                "data.{key} should point to nbv's Events"
            );
        }
    }
    assert_eq!(triggers, 1);
    let context: Value = serde_yaml_ng::from_str(data["context"].as_str().expect("context"))
        .expect("context is YAML");
    assert!(
        context["argocdUrl"]
            .as_str()
            .is_some_and(|url| url.starts_with("https://")),
        "set context.argocdUrl, or links render as <no value>/applications/..."
    );
}

/// notifications-engine never forgets a `oncePer` value: the trigger's must differ at
/// each failure nbv publishes, including the second failure of a one-notebook
/// Application, whose counts and summary are those of the first.
#[test]
fn the_notification_fires_again_when_a_failure_comes_back() {
    use nbv_core::aggregate::{
        AggregateIndex, AppId, AppRef, JobKey, JobPhase, ParentSource, StatusLimit,
    };

    let cm = &documents("config/argocd/notifications-cm.yaml")[0];
    let trigger: Value = serde_yaml_ng::from_str(
        cm["data"]["trigger.on-notebook-validation-failed"]
            .as_str()
            .expect("trigger"),
    )
    .expect("YAML");
    let once_per = trigger[0]["oncePer"].as_str();

    // What nbv publishes at the first failure, after a new run, and at the second failure.
    let app = AppId::new(Some("argocd"), "fraud").expect("name");
    let parent = Some(AppRef {
        app: app.clone(),
        source: ParentSource::TrackingId,
    });
    let job = JobKey::new("ml", "train");
    let mut index = AggregateIndex::new();
    let mut published: BTreeMap<String, String> = BTreeMap::new();
    let mut at_failures = Vec::new();
    for (minute, phase) in [
        (0, JobPhase::Failed),
        (5, JobPhase::Running),
        (10, JobPhase::Failed),
    ] {
        index.upsert(job.clone(), parent.clone(), phase);
        let now =
            chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 1, 24, 22, minute, 0).unwrap();
        let status = index.aggregate(&app).status(now, StatusLimit::DEFAULT);
        if let Some(patch) = status.application_patch(&published) {
            for (key, value) in patch["metadata"]["annotations"]
                .as_object()
                .expect("annotations")
            {
                published.insert(key.clone(), value.as_str().unwrap_or_default().to_owned());
            }
        }
        if phase == JobPhase::Failed {
            at_failures.push(published.clone());
        }
    }
    assert_eq!(
        at_failures[0][NOTEBOOK_SUMMARY],
        at_failures[1][NOTEBOOK_SUMMARY]
    );
    match once_per {
        // No oncePer: Argo CD notifies on every transition of the condition.
        None => {}
        Some(expression) => {
            let key = expression
                .strip_prefix("app.metadata.annotations['")
                .and_then(|rest| rest.strip_suffix("']"))
                .unwrap_or_else(|| {
                    panic!("oncePer {expression:?} is not one of nbv's annotations")
                });
            let values: Vec<&String> = at_failures.iter().map(|a| &a[key]).collect();
            assert_ne!(
                values[0], values[1],
                "oncePer {expression} is the same at both failures: the second notifies nobody"
            );
        }
    }
}
