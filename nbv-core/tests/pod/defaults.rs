//! The Pod defaults: the file an admin writes, and what they do to every Pod (user,
//! requests and limits, labels, placement).

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use nbv_core::pod::{
    CloneUser, GOLDEN_CLONE_CONTAINER, InvalidPodDefaults, NOBODY_UID, Placement, merge_resources,
};

use super::*;

/// A file with every field, as docs/configuration.md describes it.
const FULL: &str = r#"
image: registry.example.com:5000/mirror/nbv:0.2.0@sha256:062a01ad7a0eb17cff382bc5e26086b4d710e56dfdfdf001109a49b6d9bd378c
clone:
  user: auto
  resources:
    requests: {cpu: 50m, memory: 64Mi}
    limits: {cpu: 1, memory: 512Mi}
notebook:
  resources:
    requests: {cpu: "1", memory: 2Gi}
    limits: {cpu: "4", memory: 8Gi}
imagePullSecrets:
  - name: mirror-pull
labels:
  cost-center: ml-42
  example.com/team: vision
annotations:
  vault.hashicorp.com/agent-inject: "true"
  sidecar.istio.io/inject: "false"
nodeSelector:
  node-role.kubernetes.io/notebooks: ""
tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
affinity:
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        preference:
          matchExpressions:
            - {key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}
priorityClassName: notebook-validation
runtimeClassName: nvidia
"#;

fn defaults(text: &str) -> PodDefaults {
    PodDefaults::from_yaml(text).unwrap_or_else(|e| panic!("{e}"))
}

fn field_of(text: &str) -> (String, String) {
    match PodDefaults::from_yaml(text) {
        Err(InvalidPodDefaults::Field { field, problem }) => (field, problem),
        other => panic!("{text:?}: expected a field error, got {other:?}"),
    }
}

fn quantity(requirements: &ResourceRequirements, limits: bool, name: &str) -> Option<String> {
    let side = if limits {
        &requirements.limits
    } else {
        &requirements.requests
    };
    side.as_ref()?.get(name).map(|q| q.0.clone())
}

#[test]
fn a_full_file_sets_every_setting_and_an_empty_one_none() {
    for empty in ["", "{}", "---\n", "null"] {
        assert_eq!(defaults(empty), PodDefaults::default(), "{empty:?}");
    }
    let full = defaults(FULL);
    assert!(full.nbv_image.starts_with("registry.example.com:5000/"));
    assert_eq!(full.clone_user, CloneUser::Auto);
    assert_eq!(
        quantity(&full.clone_resources, true, "cpu").as_deref(),
        Some("1")
    );
    assert_eq!(full.image_pull_secrets, ["mirror-pull"]);
    assert_eq!(full.labels["example.com/team"], "vision");
    assert_eq!(full.annotations["vault.hashicorp.com/agent-inject"], "true");
    assert_eq!(full.placement.tolerations.len(), 1);
    assert_eq!(full.placement.runtime_class_name.as_deref(), Some("nvidia"));
    // JSON is YAML too.
    let json = serde_json::to_string(&serde_yaml_ng::from_str::<Value>(FULL).expect("YAML"))
        .expect("JSON");
    assert_eq!(defaults(&json), full);

    for (text, user) in [
        ("clone: {user: none}", CloneUser::Unset),
        ("clone: {user: 1001}", CloneUser::Uid(1001)),
        ("clone: {user: auto}", CloneUser::Auto),
    ] {
        assert_eq!(defaults(text).clone_user, user, "{text}");
    }
}

#[test]
fn each_bad_field_is_named() {
    let cases = [
        ("colne: {}", "colne", "unknown field"),
        ("clone: {imag: x}", "clone.imag", "unknown field"),
        ("image: Alpine/Nbv", "image", "not an image reference"),
        (
            "image: 'alpine/git@sha256:abc'",
            "image",
            "not an image reference",
        ),
        ("image: 3", "image", "must be a string"),
        ("clone: {user: root}", "clone.user", "must be auto, none"),
        ("clone: {user: 0}", "clone.user", "0 is root"),
        ("clone: {user: -5}", "clone.user", "must be auto, none"),
        (
            "clone: {user: 4294967296}",
            "clone.user",
            "must be auto, none",
        ),
        (
            "clone: {resources: {limits: {cpu: lots}}}",
            "clone.resources.limits.cpu",
            "not a quantity",
        ),
        (
            "clone: {resources: {limits: {memory: -1Gi}}}",
            "clone.resources.limits.memory",
            "negative",
        ),
        (
            "clone: {resources: {limts: {}}}",
            "clone.resources.limts",
            "unknown field",
        ),
        (
            "notebook: {resources: {requests: {memory: 8Gi}, limits: {memory: 4Gi}}}",
            "notebook.resources.requests.memory",
            "above the limit",
        ),
        ("notebook: {image: x}", "notebook.image", "unknown field"),
        (
            "labels: {app.kubernetes.io/managed-by: me}",
            "labels.app.kubernetes.io/managed-by",
            "nbv",
        ),
        ("labels: {mlops.dev/job: x}", "labels.mlops.dev/job", "nbv"),
        (
            "labels: {mlops.dev/anything: x}",
            "labels.mlops.dev/anything",
            "nbv",
        ),
        (
            "labels: {Bad_Prefix.io/x: y}",
            "labels.Bad_Prefix.io/x",
            "prefix",
        ),
        ("labels: {team: 'two words'}", "labels.team", "value"),
        (
            "labels: {enabled: true}",
            "labels.enabled",
            "must be a string",
        ),
        ("annotations: {'a b': x}", "annotations.a b", "name"),
        ("nodeSelector: {pool: 'a/b'}", "nodeSelector.pool", "value"),
        (
            "imagePullSecrets: [pull]",
            "imagePullSecrets[0]",
            "must be a mapping",
        ),
        (
            "imagePullSecrets: [{nam: pull}]",
            "imagePullSecrets[0].nam",
            "unknown field",
        ),
        (
            "imagePullSecrets: [{name: Pull}]",
            "imagePullSecrets[0].name",
            "not a name",
        ),
        (
            "tolerations: [{key: gpu, efect: NoSchedule}]",
            "tolerations[0].efect",
            "unknown field",
        ),
        ("tolerations: {key: gpu}", "tolerations", "sequence"),
        (
            "affinity: {nodeAffinity: {requiredDuringScheduling: {}}}",
            "affinity.nodeAffinity.requiredDuringScheduling",
            "unknown field",
        ),
        ("priorityClassName: High", "priorityClassName", "not a name"),
        (
            "runtimeClassName: [nvidia]",
            "runtimeClassName",
            "must be a string",
        ),
        ("- a list", "(file)", "must be a mapping"),
    ];
    for (text, field, problem) in cases {
        let (got_field, got_problem) = field_of(text);
        assert_eq!(got_field, field, "{text}: {got_problem}");
        assert!(
            got_problem.contains(problem),
            "{text}: {got_problem:?} does not say {problem:?}"
        );
    }
    assert!(matches!(
        PodDefaults::from_yaml("clone: [unclosed"),
        Err(InvalidPodDefaults::Syntax(_))
    ));
}

#[test]
fn a_file_beyond_the_yaml_bounds_is_refused_with_the_bound_named() {
    use nbv_core::yaml::BoundsError;

    // One 1 MiB label value repeated 10,000 times: 10 GiB if it were expanded.
    let repeated = format!(
        "annotations: {{big: &big {}}}\nlabels:\n{}",
        "x".repeat(1 << 20),
        (0..10_000)
            .map(|i| format!("  l{i}: *big\n"))
            .collect::<String>()
    );
    let deep = format!("affinity: {}{}", "[".repeat(10_000), "]".repeat(10_000));
    for (text, bound) in [
        (repeated, "document contains excessive aliasing"),
        (deep, "nested more than 128 levels deep"),
    ] {
        let error = PodDefaults::from_yaml(&text).unwrap_err();
        assert!(
            matches!(
                error,
                InvalidPodDefaults::Bounds(
                    BoundsError::ExcessiveAliasedText { .. } | BoundsError::TooDeep { .. }
                )
            ),
            "{error}"
        );
        assert!(error.to_string().contains(bound), "{error}");
    }
}

#[test]
fn the_default_image_is_nbvs_own_of_this_version_and_the_clone_image_is_refused() {
    let tag = nbv_core::pod::DEFAULT_NBV_IMAGE
        .rsplit_once(':')
        .expect("a tag")
        .1;
    assert_eq!(tag, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        PodDefaults::default().with_nbv_image(nbv_core::pod::DEFAULT_NBV_IMAGE),
        Ok(PodDefaults::default())
    );
    let (field, problem) = field_of("clone: {image: docker.io/alpine/git:2.47.2}");
    assert_eq!(field, "clone.image");
    assert!(problem.contains("top-level `image`"), "{problem}");
}

/// A job whose Pod has both clone containers.
fn golden_job() -> NotebookValidationJob {
    job_with(json!({"goldenNotebook": {
        "git": {"url": "https://example.com/org/golden.git", "ref": "v1"},
        "path": "golden.ipynb"
    }}))
}

fn security_user_ids(pod: &Pod) -> Vec<(String, Option<i64>, Option<i64>)> {
    let spec = pod.spec.as_ref().expect("spec");
    let pod_context = spec.security_context.as_ref().expect("pod context");
    let mut ids = vec![(
        "pod".to_owned(),
        pod_context.run_as_user,
        pod_context.run_as_group.or(pod_context.fs_group),
    )];
    for c in containers(pod) {
        let context = c.security_context.as_ref().expect("container context");
        ids.push((c.name.clone(), context.run_as_user, context.run_as_group));
    }
    ids
}

#[test]
fn the_clone_user_follows_the_setting_and_the_platform() {
    let job = golden_job();
    let pod_with = |clone_user, platform| {
        let defaults = PodDefaults {
            clone_user,
            platform,
            ..PodDefaults::default()
        };
        validation_pod(&job, ATTEMPT, None, None, &defaults).expect("a pod")
    };
    for (user, platform, clone_uid) in [
        (CloneUser::Auto, Platform::OpenShift, None),
        (CloneUser::Auto, Platform::Kubernetes, Some(NOBODY_UID)),
        (CloneUser::Unset, Platform::Kubernetes, None),
        (CloneUser::Uid(1001), Platform::OpenShift, Some(1001)),
    ] {
        let pod = pod_with(user, platform);
        for (name, uid, gid) in security_user_ids(&pod) {
            // nbv's own containers (nbv's image) take the setting; the notebook's, not.
            let expected = [TOOLS_CONTAINER, CLONE_CONTAINER, GOLDEN_CLONE_CONTAINER]
                .contains(&name.as_str())
                .then_some(clone_uid)
                .flatten();
            assert_eq!(uid, expected, "{user:?} on {platform:?}: {name}");
            assert_eq!(gid, None, "{user:?} on {platform:?}: {name} pins a group");
        }
    }
}

#[test]
fn every_container_has_requests_and_limits() {
    let job = golden_job();
    let pod = validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).expect("pod");
    assert_eq!(containers(&pod).len(), 4);
    for c in containers(&pod) {
        let resources = c.resources.as_ref().expect("resources");
        for limits in [false, true] {
            for name in ["cpu", "memory"] {
                assert!(
                    quantity(resources, limits, name).is_some(),
                    "{}: no {} {name}",
                    c.name,
                    if limits { "limit" } else { "request" }
                );
            }
        }
    }
    // The job's own resources win for the notebook; the defaults fill the rest.
    let job = job_with(json!({"podConfig": {"resources": {
        "requests": {"memory": "16Gi"}, "limits": {"nvidia.com/gpu": "1"}
    }}}));
    let pod = pod_of(&job);
    let notebook = container(&pod, NOTEBOOK_CONTAINER)
        .resources
        .as_ref()
        .expect("resources");
    assert_eq!(quantity(notebook, false, "memory").as_deref(), Some("16Gi"));
    assert_eq!(quantity(notebook, true, "memory").as_deref(), Some("16Gi"));
    assert_eq!(
        quantity(notebook, true, "nvidia.com/gpu").as_deref(),
        Some("1")
    );
    // A limit alone: the API server copies it into the request, as the job asked.
    assert_eq!(quantity(notebook, false, "nvidia.com/gpu"), None);
    assert_eq!(quantity(notebook, false, "cpu").as_deref(), Some("500m"));
    assert_eq!(quantity(notebook, true, "cpu").as_deref(), Some("2"));
}

#[test]
fn configured_labels_annotations_secrets_and_placement_reach_the_pod() {
    let mut configured = defaults(FULL);
    // Set in code, not from a file: nbv's labels still win.
    configured
        .labels
        .insert(MANAGED_BY_LABEL.to_owned(), "someone-else".to_owned());
    configured
        .labels
        .insert(JOB_LABEL.to_owned(), "other".to_owned());
    let job = job_with(json!({"podConfig": {
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
        "tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "spot", "operator": "Exists"}
        ]
    }}));
    let pod = validation_pod(&job, ATTEMPT, None, None, &configured).expect("a pod");
    let labels = pod.metadata.labels.clone().expect("labels");
    assert_eq!(labels[MANAGED_BY_LABEL], MANAGED_BY);
    assert_eq!(labels[JOB_LABEL], job_label_value("train"));
    assert_eq!(labels["cost-center"], "ml-42");
    assert_pod_snapshot!("configured_defaults", pod);
}

#[test]
fn placement_merges_by_the_documented_rule() {
    let configured = defaults(FULL).placement;
    let job: NotebookValidationJob = job_with(json!({"podConfig": {
        "nodeSelector": {"node-role.kubernetes.io/notebooks": "gpu", "zone": "a"},
        "tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "spot", "operator": "Exists"}
        ],
        "affinity": {"podAntiAffinity": {}}
    }}));
    let merged = configured.merged_with(&job.spec.pod_config);
    // nodeSelector by key, the job's value winning.
    assert_eq!(
        merged.node_selector,
        BTreeMap::from([
            (
                "node-role.kubernetes.io/notebooks".to_owned(),
                "gpu".to_owned()
            ),
            ("zone".to_owned(), "a".to_owned()),
        ])
    );
    // Tolerations: the defaults', then the job's, each once.
    let keys: Vec<_> = merged
        .tolerations
        .iter()
        .map(|t| t.key.as_deref().unwrap_or_default())
        .collect();
    assert_eq!(keys, ["nvidia.com/gpu", "spot"]);
    // Affinity part by part.
    let affinity = merged.affinity.expect("affinity");
    assert!(
        affinity.node_affinity.is_some(),
        "the defaults' nodeAffinity"
    );
    assert!(
        affinity.pod_anti_affinity.is_some(),
        "the job's podAntiAffinity"
    );
    assert_eq!(
        merged.priority_class_name.as_deref(),
        Some("notebook-validation")
    );
    // Without defaults, the job's placement as it is.
    let alone = Placement::default().merged_with(&job.spec.pod_config);
    assert_eq!(alone.tolerations.len(), 2);
    assert_eq!(alone.affinity, job.spec.pod_config.affinity);
}

fn arbitrary_side() -> impl Strategy<Value = BTreeMap<String, Quantity>> {
    let name = prop::sample::select(vec!["cpu", "memory", "nvidia.com/gpu"]);
    let amount = prop_oneof![
        (1u32..4000).prop_map(|m| format!("{m}m")),
        (1u32..64).prop_map(|g| format!("{g}Gi")),
        (1u32..8).prop_map(|n| n.to_string()),
    ];
    proptest::collection::btree_map(
        name.prop_map(str::to_owned),
        amount.prop_map(Quantity),
        0..3,
    )
}

/// Requests no greater than limits, as the API server demands of a job's and the file
/// checks of the defaults.
fn consistent() -> impl Strategy<Value = ResourceRequirements> {
    (arbitrary_side(), arbitrary_side()).prop_map(|(requests, mut limits)| {
        for (name, request) in &requests {
            let value = |q: &Quantity| {
                // The same scale as the strategy above: millis, Gi, units.
                let s = q.0.as_str();
                if let Some(m) = s.strip_suffix('m') {
                    m.parse::<f64>().unwrap_or(0.0) / 1000.0
                } else if let Some(g) = s.strip_suffix("Gi") {
                    g.parse::<f64>().unwrap_or(0.0) * 1_073_741_824.0
                } else {
                    s.parse().unwrap_or(0.0)
                }
            };
            if limits.get(name).is_some_and(|l| value(l) < value(request)) {
                limits.insert(name.clone(), request.clone());
            }
        }
        ResourceRequirements {
            requests: Some(requests),
            limits: Some(limits),
            ..ResourceRequirements::default()
        }
    })
}

proptest! {
    #[test]
    fn merged_resources_keep_the_jobs_and_never_ask_more_than_their_limits(
        job in proptest::option::of(consistent()),
        configured in consistent(),
    ) {
        let merged = merge_resources(job.as_ref(), &configured);
        let side = |r: &ResourceRequirements, limits: bool| {
            if limits { r.limits.clone() } else { r.requests.clone() }.unwrap_or_default()
        };
        for limits in [false, true] {
            let merged_side = side(&merged, limits);
            // Every quantity the job gives is kept.
            for (name, q) in job.as_ref().map(|j| side(j, limits)).unwrap_or_default() {
                prop_assert_eq!(merged_side.get(&name), Some(&q));
            }
            // Every resource the defaults name is there, but a request where the job
            // gives only a limit (the API server copies the limit).
            let job_limited = |name: &String| {
                job.as_ref().is_some_and(|j| {
                    side(j, true).contains_key(name) && !side(j, false).contains_key(name)
                })
            };
            for name in side(&configured, limits).keys() {
                prop_assert!(
                    merged_side.contains_key(name) != (!limits && job_limited(name)),
                    "{name}"
                );
            }
        }
        // The file's check, applied to the result: no request above its limit.
        let yaml = serde_json::json!({"notebook": {"resources": {
            "requests": side(&merged, false), "limits": side(&merged, true)
        }}});
        prop_assert!(PodDefaults::from_yaml(&yaml.to_string()).is_ok(), "{:?}", merged);
    }

    #[test]
    fn nbv_labels_win_over_any_configured_ones(
        extra in proptest::collection::btree_map(
            prop_oneof![
                Just(MANAGED_BY_LABEL.to_owned()),
                Just(JOB_LABEL.to_owned()),
                Just(ATTEMPT_LABEL.to_owned()),
                "[a-z]{1,10}",
            ],
            "[a-z]{0,10}",
            0..6,
        )
    ) {
        let configured = PodDefaults { labels: extra.clone(), ..PodDefaults::default() };
        let pod = validation_pod(&job_with(json!({})), ATTEMPT, None, None, &configured)
            .expect("a pod");
        let labels = pod.metadata.labels.expect("labels");
        prop_assert_eq!(labels[MANAGED_BY_LABEL].as_str(), MANAGED_BY);
        prop_assert_eq!(labels[JOB_LABEL].clone(), job_label_value("train"));
        prop_assert_eq!(labels[ATTEMPT_LABEL].clone(), ATTEMPT.to_string());
        for (key, value) in extra {
            if ![MANAGED_BY_LABEL, JOB_LABEL, ATTEMPT_LABEL].contains(&key.as_str()) {
                prop_assert_eq!(labels.get(&key), Some(&value));
            }
        }
    }
}
