//! The samples and examples: jobs, the wait hook, Applications and notifications read what
//! nbv writes.

use super::*;

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
        ..
    } = cli.command
    else {
        panic!("the hook does not run `nbv wait`: {args:?}");
    };
    assert!(
        timeout.is_some(),
        "a hook without --timeout can hold a sync forever"
    );
    // Named, though in-cluster it is the default: the hook reads as it behaves.
    let namespace = namespace.expect("the hook names its namespace with --namespace");
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
