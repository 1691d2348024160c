//! The Pod of every upstream sample, and the specs nbv refuses.

use super::*;

// ---------------------------------------------------------------------------------------
// The Pod of every upstream sample
// ---------------------------------------------------------------------------------------

#[test]
fn every_upstream_sample_becomes_a_pod() {
    let jobs = sample_jobs();
    assert!(
        jobs.len() >= 12,
        "expected the upstream samples, found {}",
        jobs.len()
    );
    let names: BTreeSet<_> = jobs.iter().map(|j| j.metadata.name.clone()).collect();
    assert_eq!(names.len(), jobs.len(), "sample job names are unique");
    let mut refused = BTreeSet::new();
    for job in &jobs {
        let name = job.metadata.name.as_deref().expect("named");
        // As after the model gate opened for every model the sample names.
        let models = nbv_testkit::fixtures::served_models(job);
        let pod = validation_pod(
            job,
            Attempt::new(1, 0),
            None,
            models.as_deref(),
            &PodDefaults::default(),
        );
        match pod {
            Ok(pod) => assert_pod_snapshot!(format!("sample_{name}"), pod),
            // A check nbv does not carry out yet fails the job by name.
            Err(PodSpecError::NotImplemented { field, .. }) => {
                refused.insert((name.to_owned(), field));
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    let refused: Vec<(&str, &str)> = refused
        .iter()
        .map(|(n, f)| (n.as_str(), f.as_str()))
        .collect();
    insta::assert_debug_snapshot!(refused);
}

#[test]
fn a_built_image_replaces_the_container_image() {
    let job = job_with(json!({}));
    let pod = validation_pod(
        &job,
        ATTEMPT,
        Some("registry/built:abc"),
        None,
        &PodDefaults::default(),
    )
    .expect("a pod");
    assert_eq!(
        container(&pod, NOTEBOOK_CONTAINER).image.as_deref(),
        Some("registry/built:abc")
    );
    // An empty built image is no image: fall back to the spec's.
    let pod =
        validation_pod(&job, ATTEMPT, Some(" "), None, &PodDefaults::default()).expect("a pod");
    assert_eq!(
        container(&pod, NOTEBOOK_CONTAINER).image.as_deref(),
        Some("quay.io/example/papermill:1")
    );
}

#[test]
fn https_credentials_come_from_the_secret_as_optional_keys() {
    let pod = pod_of(&job_with(
        json!({"notebook": {"git": {"credentialsSecret": "git-creds"}}}),
    ));
    let clone = container(&pod, CLONE_CONTAINER);
    let refs: Vec<_> = clone
        .env
        .iter()
        .flatten()
        .filter_map(|e| {
            let key = e.value_from.as_ref()?.secret_key_ref.as_ref()?;
            Some((
                e.name.as_str(),
                key.name.as_str(),
                key.key.as_str(),
                key.optional,
            ))
        })
        .collect();
    assert_eq!(
        refs,
        [
            ("NBV_GIT_USERNAME", "git-creds", "username", Some(true)),
            ("NBV_GIT_PASSWORD", "git-creds", "password", Some(true)),
            ("NBV_GIT_TOKEN", "git-creds", "token", Some(true)),
        ]
    );
    // The notebook never sees the Git credentials.
    let notebook = container(&pod, NOTEBOOK_CONTAINER);
    assert!(
        notebook
            .env
            .iter()
            .flatten()
            .all(|e| e.value_from.is_none())
    );
}

#[test]
fn ssh_credentials_are_a_volume_of_the_clone_container_alone() {
    let pod = pod_of(&job_with(json!({"notebook": {"git": {
        "url": "git@github.com:org/repo.git", "credentialsSecret": "git-ssh"}}})));
    let volumes = pod
        .spec
        .as_ref()
        .and_then(|s| s.volumes.clone())
        .unwrap_or_default();
    let ssh = volumes
        .iter()
        .find(|v| v.secret.as_ref().and_then(|s| s.secret_name.as_deref()) == Some("git-ssh"))
        .expect("the Secret volume");
    let mounted_in: Vec<_> = containers(&pod)
        .into_iter()
        .filter(|c| c.volume_mounts.iter().flatten().any(|m| m.name == ssh.name))
        .map(|c| {
            (
                c.name.as_str(),
                c.volume_mounts
                    .iter()
                    .flatten()
                    .find(|m| m.name == ssh.name)
                    .and_then(|m| m.read_only),
            )
        })
        .collect();
    assert_eq!(mounted_in, [(CLONE_CONTAINER, Some(true))]);
}

#[test]
fn the_notebook_container_reports_through_its_termination_message() {
    let pod = pod_of(&job_with(json!({"podConfig": {
        "credentials": ["aws"], "envFrom": [{"configMapRef": {"name": "settings"}}],
        "env": [{"name": "HOME", "value": "/data"}, {"name": "NBV_NOTEBOOK", "value": "other.ipynb"}]
    }})));
    let notebook = container(&pod, NOTEBOOK_CONTAINER);
    assert_eq!(
        notebook.termination_message_path.as_deref(),
        Some("/dev/termination-log")
    );
    assert_eq!(
        notebook.termination_message_policy.as_deref(),
        Some("FallbackToLogsOnError")
    );
    assert_eq!(
        env_value(notebook, "NBV_RESULT"),
        Some("/dev/termination-log")
    );
    // The job may override nbv's defaults, not the script's settings.
    assert_eq!(env_value(notebook, "HOME"), Some("/data"));
    assert_eq!(
        env_value(notebook, "NBV_NOTEBOOK"),
        Some("notebooks/train.ipynb")
    );
    let env_from = serde_json::to_value(&notebook.env_from).expect("JSON");
    assert_eq!(
        env_from,
        json!([{"secretRef": {"name": "aws"}}, {"configMapRef": {"name": "settings"}}])
    );
    let spec = pod.spec.as_ref().expect("spec");
    assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
    assert_eq!(spec.automount_service_account_token, Some(false));
}

#[test]
fn a_hostile_ref_and_path_stay_data() {
    let job = job_with(json!({"notebook": {
        "git": {"url": "https://example.com/r.git; rm -rf /", "ref": "main; rm -rf /"},
        "path": "$(rm -rf /)/`reboot`/x'\"; rm -rf /.ipynb"
    }}));
    let pod = pod_of(&job);
    assert_pod_snapshot!("hostile_values", pod);
    let clone = container(&pod, CLONE_CONTAINER);
    assert_eq!(env_value(clone, "NBV_GIT_REF"), Some("main; rm -rf /"));
    assert_eq!(
        env_value(clone, "NBV_GIT_URL"),
        Some("https://example.com/r.git; rm -rf /")
    );
    let reference = pod_of(&job_with(json!({})));
    for (hostile, plain) in containers(&pod).into_iter().zip(containers(&reference)) {
        assert_eq!(hostile.command, plain.command, "{}", hostile.name);
        assert_eq!(hostile.args, None);
    }
}

// ---------------------------------------------------------------------------------------
// Specs nbv refuses
// ---------------------------------------------------------------------------------------

#[test]
fn refused_specs_name_the_field_and_the_fix() {
    let cases = [
        json!({"podConfig": {"volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
            {"name": "host", "hostPath": {"path": "/var/run/docker.sock"}}]}}),
        json!({"podConfig": {"volumes": [{"name": "share", "nfs": {"server": "s", "path": "/"}}]}}),
        json!({"podConfig": {"volumes": [{"name": "nbv-workspace", "emptyDir": {}}]}}),
        json!({"podConfig": {"volumes": [{"name": "d", "emptyDir": {}}],
                             "volumeMounts": [{"name": "d", "mountPath": "/workspace/"}]}}),
        json!({"podConfig": {"volumeMounts": [{"name": "missing", "mountPath": "/data"}]}}),
        json!({"podConfig": {"containerImage": ""}}),
        json!({"timeout": "30 minutes"}),
        json!({"timeout": "0s"}),
        json!({"notebook": {"git": {"url": "ext::sh -c touch% /tmp/pwned"}}}),
        json!({"notebook": {"git": {"url": "https://bot:ghp_secret@example.com\n/r.git"}}}),
        json!({"notebook": {"git": {"ref": "--upload-pack=touch /tmp/pwned"}}}),
        json!({"notebook": {"git": {"url": "http://example.com/r.git", "credentialsSecret": "c"}}}),
        json!({"notebook": {"path": "/etc/passwd.ipynb"}}),
        json!({"notebook": {"path": "notebooks/../../x.ipynb"}}),
    ];
    let mut report = String::new();
    for spec in cases {
        let err = validation_pod(
            &job_with(spec.clone()),
            ATTEMPT,
            None,
            None,
            &PodDefaults::default(),
        )
        .expect_err("refused");
        assert!(!err.to_string().contains("ghp_secret"), "{err}");
        report.push_str(&format!("{spec}\n  {}\n  {}\n", err.field(), err));
    }
    let mut anonymous = job_with(json!({}));
    anonymous.metadata.uid = None;
    let err = validation_pod(&anonymous, ATTEMPT, None, None, &PodDefaults::default())
        .expect_err("refused");
    report.push_str(&format!("no uid\n  {}\n  {err}\n", err.field()));
    insta::assert_snapshot!("refused_specs", report);
}

#[test]
fn a_host_path_volume_is_refused_by_its_index() {
    let job = job_with(json!({"podConfig": {"volumes": [
        {"name": "a", "emptyDir": {}}, {"name": "b", "configMap": {"name": "c"}},
        {"name": "host", "hostPath": {"path": "/"}}]}}));
    let err =
        validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).expect_err("refused");
    assert_eq!(err.field(), "spec.podConfig.volumes[2].hostPath");
    assert!(matches!(
        err,
        PodSpecError::ForbiddenVolume { index: 2, .. }
    ));
    assert_eq!(err.failure().reason.as_str(), "PodSpecInvalid");
}

/// Every NotebookValidationJob in the repository's examples.
fn example_jobs() -> Vec<NotebookValidationJob> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut stack = vec![root];
    let mut jobs = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("examples").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            ) {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable");
            for doc in serde_yaml_ng::Deserializer::from_str(&text) {
                let Ok(value) = <Value as serde::Deserialize>::deserialize(doc) else {
                    continue;
                };
                if value["kind"] != "NotebookValidationJob" {
                    continue;
                }
                let mut job: NotebookValidationJob = serde_json::from_value(value).expect("a job");
                job.metadata
                    .namespace
                    .get_or_insert_with(|| "default".to_owned());
                job.metadata.uid = Some("uid-example".to_owned());
                jobs.push(job);
            }
        }
    }
    jobs
}

/// What nbv adds to a Pod beyond the user's own fields stays under 4 KiB: the Pod's
/// JSON less the job's spec (everything the user wrote, which the Pod may copy), for
/// every upstream sample and example nbv builds a Pod for.
#[test]
fn the_pod_spec_nbv_adds_stays_under_4_kib() {
    const TARGET: usize = 4096;
    let jobs: Vec<NotebookValidationJob> =
        sample_jobs().into_iter().chain(example_jobs()).collect();
    let mut built = 0;
    let mut largest = (0, String::new());
    for job in &jobs {
        let Ok(pod) = validation_pod(job, ATTEMPT, None, None, &PodDefaults::default()) else {
            continue;
        };
        built += 1;
        let pod_bytes = serde_json::to_string(&pod).expect("json").len();
        let user_bytes = serde_json::to_string(&job.spec).expect("json").len();
        let added = pod_bytes.saturating_sub(user_bytes);
        let name = job.metadata.name.clone().unwrap_or_default();
        assert!(
            added <= TARGET,
            "{name}: nbv adds {added} bytes to the Pod (target {TARGET})"
        );
        if added > largest.0 {
            largest = (added, name);
        }
    }
    assert!(
        built >= 10,
        "only {built} of {} jobs made a Pod",
        jobs.len()
    );
    println!(
        "largest addition: {} bytes ({}), over {built} Pods",
        largest.0, largest.1
    );
}
