//! Properties of every Pod, whatever the job: restricted, labelled, valid.

use super::*;

// ---------------------------------------------------------------------------------------
// Properties of every Pod
// ---------------------------------------------------------------------------------------

/// Strings a hostile or careless author might write.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,30}",
        "\\PC{0,20}",
        Just("main; rm -rf /".to_owned()),
        Just("$(touch /tmp/pwned)".to_owned()),
        Just("`reboot`".to_owned()),
        Just("'\"\\\n${HOME}".to_owned()),
    ]
}

fn arbitrary_job() -> impl Strategy<Value = (NotebookValidationJob, Attempt)> {
    let name = "[a-z0-9]([-a-z0-9.]{0,100}[a-z0-9])?";
    // Control characters in a URL or path are refused (tested above); anything else
    // must be accepted and kept out of the scripts.
    let printable = || hostile_text().prop_map(|t| t.replace(char::is_control, "_"));
    let url = prop_oneof![
        printable().prop_map(|t| format!("https://example.com/{t}")),
        printable().prop_map(|t| format!("git@github.com:{t}")),
        printable().prop_map(|t| format!("ssh://git@example.com/{t}")),
    ];
    let git_ref = hostile_text().prop_map(|t| format!("r{t}"));
    let path = printable().prop_map(|t| format!("nb/{}.ipynb", t.replace("..", "_")));
    let secret = proptest::option::of("[a-z]{1,10}");
    let env = proptest::collection::vec(("[A-Z_]{1,10}", hostile_text()), 0..4);
    let volume = prop_oneof![
        Just(json!({"emptyDir": {}})),
        Just(json!({"persistentVolumeClaim": {"claimName": "models"}})),
        Just(json!({"configMap": {"name": "cfg"}})),
        Just(json!({"secret": {"secretName": "s"}})),
    ];
    let volumes = proptest::collection::vec(volume, 0..3);
    let timeout = proptest::option::of(prop_oneof![
        Just("90s".to_owned()),
        Just("1h30m".to_owned()),
        Just("1.5h".to_owned()),
        Just("500ms".to_owned()),
    ]);
    let service_account = proptest::option::of("[a-z]{1,10}");
    let attempt =
        (any::<i64>(), 0u32..3, any::<u32>()).prop_map(|(generation, rerun, retry)| Attempt {
            generation,
            rerun,
            retry,
        });
    (
        (name, url, git_ref, path, secret),
        (env, volumes, timeout, service_account, attempt),
    )
        .prop_map(
            |((name, url, git_ref, path, secret), (env, volumes, timeout, sa, attempt))| {
                let volumes: Vec<Value> = volumes
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut v)| {
                        v["name"] = json!(format!("v{i}"));
                        v
                    })
                    .collect();
                let mounts: Vec<Value> = (0..volumes.len())
                    .map(|i| json!({"name": format!("v{i}"), "mountPath": format!("/mnt/v{i}")}))
                    .collect();
                let env: Vec<Value> = env
                    .into_iter()
                    .map(|(n, v)| json!({"name": n, "value": v}))
                    .collect();
                let mut job = job_with(json!({
                    "notebook": {"git": {"url": url, "ref": git_ref, "credentialsSecret": secret},
                                 "path": path},
                    "podConfig": {"env": env, "volumes": volumes, "volumeMounts": mounts,
                                  "serviceAccountName": sa},
                    "timeout": timeout,
                }));
                job.metadata.name = Some(name);
                (job, attempt)
            },
        )
}

/// The checks of the restricted Pod Security profile that a Pod spec can fail.
fn assert_restricted(pod: &Pod) {
    let spec = pod.spec.as_ref().expect("spec");
    let security = spec
        .security_context
        .as_ref()
        .expect("pod security context");
    assert_eq!(security.run_as_non_root, Some(true));
    assert_eq!(
        security.seccomp_profile.as_ref().map(|s| s.type_.as_str()),
        Some("RuntimeDefault")
    );
    assert_ne!(security.run_as_user, Some(0));
    assert_ne!(spec.host_network, Some(true));
    assert_ne!(spec.host_pid, Some(true));
    assert_ne!(spec.host_ipc, Some(true));
    for c in containers(pod) {
        let security = c
            .security_context
            .as_ref()
            .expect("container security context");
        assert_eq!(
            security.allow_privilege_escalation,
            Some(false),
            "{}",
            c.name
        );
        assert_ne!(security.privileged, Some(true), "{}", c.name);
        assert_ne!(security.run_as_user, Some(0), "{}", c.name);
        let caps = security.capabilities.as_ref().expect("capabilities");
        assert_eq!(
            caps.drop.as_deref(),
            Some(&["ALL".to_owned()][..]),
            "{}",
            c.name
        );
        assert!(
            caps.add.as_deref().unwrap_or_default().is_empty(),
            "{}",
            c.name
        );
        for port in c.ports.iter().flatten() {
            assert_eq!(port.host_port, None, "{}", c.name);
        }
    }
    let allowed = [
        "name",
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    for volume in spec.volumes.iter().flatten() {
        let fields = serde_json::to_value(volume).expect("JSON");
        for key in fields.as_object().expect("object").keys() {
            assert!(
                allowed.contains(&key.as_str()),
                "volume {}: {key}",
                volume.name
            );
        }
    }
}

proptest! {
    #[test]
    fn every_pod_is_restricted_named_owned_and_keeps_values_out_of_scripts(
        (job, attempt) in arbitrary_job()
    ) {
        let pod = validation_pod(&job, attempt, None, None, &PodDefaults::default());
        prop_assert!(pod.is_ok(), "{:?}", pod);
        let pod = pod.expect("checked");
        assert_restricted(&pod);
        // On OpenShift, with the default `auto` clone user, no user or group is pinned
        // anywhere: restricted-v2 assigns them from the namespace's range.
        let openshift = PodDefaults { platform: Platform::OpenShift, ..PodDefaults::default() };
        let assigned = validation_pod(&job, attempt, None, None, &openshift).expect("a pod");
        assert_restricted(&assigned);
        let spec = assigned.spec.as_ref().expect("spec");
        let context = spec.security_context.as_ref().expect("pod context");
        prop_assert_eq!((context.run_as_user, context.run_as_group, context.fs_group), (None, None, None));
        for c in containers(&assigned) {
            let context = c.security_context.as_ref().expect("container context");
            prop_assert_eq!((context.run_as_user, context.run_as_group), (None, None), "{}", c.name);
            let resources = c.resources.as_ref().expect("resources");
            prop_assert!(resources.requests.is_some() && resources.limits.is_some(), "{}", c.name);
        }

        let name = pod.metadata.name.as_deref().expect("named");
        prop_assert!(is_dns_label(name), "{name}");
        prop_assert_eq!(name, pod_name(job.metadata.name.as_deref().unwrap_or_default(), attempt));
        prop_assert!(name.ends_with(&format!("-{attempt}")), "{}", name);
        prop_assert_eq!(pod_ref(&pod).map(|r| r.attempt), Ok(attempt));

        let labels = pod.metadata.labels.clone().unwrap_or_default();
        prop_assert_eq!(labels.get(MANAGED_BY_LABEL).map(String::as_str), Some(MANAGED_BY));
        prop_assert_eq!(labels.get(ATTEMPT_LABEL).cloned(), Some(attempt.to_string()));
        prop_assert_eq!(
            labels.get(JOB_LABEL).cloned(),
            Some(job_label_value(job.metadata.name.as_deref().unwrap_or_default()))
        );
        prop_assert!(is_controlled_by(&pod, &job));
        let owner = &pod.metadata.owner_references.as_deref().unwrap_or_default()[0];
        prop_assert_eq!((owner.kind.as_str(), owner.block_owner_deletion), ("NotebookValidationJob", Some(true)));

        // Commands do not depend on the job: every value reaches the scripts through
        // the environment.
        let reference = pod_of(&job_with(json!({})));
        for (c, r) in containers(&pod).into_iter().zip(containers(&reference)) {
            prop_assert_eq!(&c.command, &r.command);
            prop_assert_eq!(&c.args, &None);
        }
        let git = &job.spec.notebook.git;
        let clone = container(&pod, CLONE_CONTAINER);
        prop_assert_eq!(env_value(clone, "NBV_GIT_URL"), Some(git.url.as_str()));
        prop_assert_eq!(env_value(clone, "NBV_GIT_REF"), Some(git.git_ref.as_str()));
        let notebook = container(&pod, NOTEBOOK_CONTAINER);
        prop_assert_eq!(env_value(notebook, "NBV_NOTEBOOK"), Some(job.spec.notebook.path.as_str()));
    }

    #[test]
    fn distinct_jobs_and_attempts_get_distinct_pods(
        pairs in proptest::collection::vec(
            ("[a-z0-9]([-a-z0-9.]{0,80}[a-z0-9])?", -3i64..3, 0u32..3, 0u32..3), 1..40)
    ) {
        let mut seen = BTreeMap::new();
        for (job, generation, rerun, retry) in pairs {
            let attempt = Attempt { generation, rerun, retry };
            let name = pod_name(&job, attempt);
            prop_assert!(is_dns_label(&name), "{name}");
            if let Some(previous) = seen.insert(name.clone(), (job.clone(), attempt)) {
                prop_assert_eq!(previous, (job, attempt), "{} is shared", name);
            }
        }
    }

    #[test]
    fn job_labels_are_valid_and_tell_jobs_apart(a in "[a-z0-9]([-a-z0-9.]{0,250}[a-z0-9])?",
                                                b in "[a-z0-9]([-a-z0-9.]{0,250}[a-z0-9])?") {
        for name in [&a, &b] {
            let label = job_label_value(name);
            prop_assert!(label.len() <= 63 && !label.is_empty(), "{label}");
            prop_assert!(label.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c)));
            prop_assert!(label.as_bytes()[0].is_ascii_alphanumeric());
            prop_assert!(label.as_bytes()[label.len() - 1].is_ascii_alphanumeric());
        }
        if a != b {
            prop_assert_ne!(job_label_value(&a), job_label_value(&b));
        }
    }
}
