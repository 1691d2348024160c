//! What a watch cache keeps of a Pod (`observed_part`) reads the same as the Pod.

use nbv_core::pod::{observed_part, reported_predictions};

use super::status::{arbitrary_status, at, classification_cases};
use super::*;

/// The Pods whose specs the readers look into: every upstream sample's, and jobs with
/// each kind of credentials, a golden notebook in another repository, checks, a
/// prediction check, a memory limit and a timeout.
fn specs() -> Vec<Pod> {
    let mut jobs = sample_jobs();
    jobs.extend([
        job_with(json!({
            "notebook": {"git": {"credentialsSecret": "git-creds"}},
            "podConfig": {"resources": {"limits": {"memory": "2Gi", "cpu": "2"}}},
            "timeout": "30m",
        })),
        job_with(json!({"notebook": {"git": {
            "url": "git@github.com:org/repo.git", "credentialsSecret": "git-ssh"}}})),
        job_with(json!({
            "notebook": {"git": {"credentialsSecret": "git-creds"}},
            "goldenNotebook": {"git": {"url": "git@example.com:org/golden.git", "ref": "v1",
                                       "credentialsSecret": "golden-ssh"},
                               "path": "golden.ipynb"},
        })),
        job_with(json!({"validationConfig": {"level": "production", "strictMode": true}})),
    ]);
    let pods: Vec<Pod> = jobs
        .iter()
        .filter_map(|job| {
            let models = nbv_testkit::fixtures::served_models(job);
            validation_pod(
                job,
                ATTEMPT,
                None,
                models.as_deref(),
                &PodDefaults::default(),
            )
            .ok()
        })
        .collect();
    // The cases reach every part of the spec the readers look at.
    let notebook_env = |name: &str| {
        pods.iter()
            .any(|pod| env_value(container(pod, NOTEBOOK_CONTAINER), name).is_some())
    };
    for switch in ["NBV_GOLDEN", "NBV_CHECKS", "NBV_MODELS"] {
        assert!(notebook_env(switch), "no Pod of the cases sets {switch}");
    }
    let spec = |pod: &Pod| pod.spec.clone().expect("spec");
    assert!(
        pods.iter()
            .any(|p| spec(p).volumes.iter().flatten().any(|v| v.secret.is_some()))
    );
    assert!(pods.iter().any(|p| {
        spec(p)
            .init_containers
            .iter()
            .flatten()
            .flat_map(|c| c.env.iter().flatten())
            .any(|e| {
                e.value_from
                    .as_ref()
                    .is_some_and(|v| v.secret_key_ref.is_some())
            })
    }));
    pods
}

/// `pod` as the API server serves it, with `status`: created at `at(0)`, with what the
/// server and other controllers add (managed fields, an annotation, a foreign label).
fn served(pod: &Pod, status: &Value) -> Pod {
    let mut value = serde_json::to_value(pod).expect("JSON");
    value["metadata"]["creationTimestamp"] = json!("2026-01-24T22:00:00Z");
    value["metadata"]["resourceVersion"] = json!("4711");
    value["metadata"]["uid"] = json!("pod-uid");
    value["metadata"]["annotations"] = json!({"kubernetes.io/psp": "restricted"});
    value["metadata"]["labels"]["security.openshift.io/scc"] = json!("restricted-v2");
    value["metadata"]["managedFields"] =
        json!([{"manager": "nbv", "operation": "Apply", "fieldsType": "FieldsV1"}]);
    value["spec"]["nodeName"] = json!("worker-1");
    let mut status = status.clone();
    status["hostIP"] = json!("10.0.0.3");
    status["podIP"] = json!("10.128.0.7");
    status["qosClass"] = json!("Burstable");
    value["status"] = status;
    serde_json::from_value(value).expect("a pod")
}

/// Every reader of a Pod answers the same for `pod` and its observed part.
fn reads_the_same(pod: &Pod, minutes: i64) -> Result<(), TestCaseError> {
    let kept = observed_part(pod);
    let grace = DEFAULT_START_GRACE;
    prop_assert_eq!(
        observe_pod(&kept, at(minutes), grace),
        observe_pod(pod, at(minutes), grace)
    );
    prop_assert_eq!(reported_predictions(&kept), reported_predictions(pod));
    prop_assert_eq!(pod_ref(&kept), pod_ref(pod));
    let job = job_with(json!({}));
    prop_assert_eq!(is_controlled_by(&kept, &job), is_controlled_by(pod, &job));
    prop_assert_eq!(&kept.metadata.name, &pod.metadata.name);
    prop_assert_eq!(&kept.metadata.uid, &pod.metadata.uid);
    prop_assert_eq!(
        &kept.metadata.resource_version,
        &pod.metadata.resource_version
    );
    prop_assert_eq!(
        &kept.metadata.owner_references,
        &pod.metadata.owner_references
    );
    prop_assert!(kept.metadata.managed_fields.is_none());
    prop_assert_eq!(observed_part(&kept), kept);
    Ok(())
}

#[test]
fn every_classified_status_reads_the_same_from_the_observed_part() {
    let specs = specs();
    for (case, status, minutes) in classification_cases() {
        for pod in &specs {
            let pod = served(pod, &status);
            if let Err(e) = reads_the_same(&pod, minutes) {
                panic!("{case}, pod of {:?}: {e}", pod.metadata.labels);
            }
        }
    }
}

#[test]
fn the_observed_part_is_a_fraction_of_the_pod() {
    let status = &classification_cases()
        .into_iter()
        .find(|(case, _, _)| *case == "succeeded")
        .expect("the succeeded case")
        .1;
    for pod in specs() {
        let pod = served(&pod, status);
        let full = serde_json::to_vec(&pod).expect("JSON").len();
        let kept_text = serde_json::to_string(&observed_part(&pod)).expect("JSON");
        let kept = kept_text.len();
        // What is left is the identity and the report: no command, no value of the
        // environment, whatever the spec holds.
        assert!(kept < 2_048 && kept < full, "{kept} of {full} bytes kept");
        for spec_only in ["\"command\"", "\"value\"", "\"volumeMounts\""] {
            assert!(
                !kept_text.contains(spec_only),
                "{spec_only} kept: {kept_text}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_status_reads_the_same_from_the_observed_part(
        status in arbitrary_status(),
        which in any::<prop::sample::Index>(),
        minutes in 0i64..120,
        scheduled in prop_oneof![
            Just(json!(null)),
            Just(json!({"type": "PodScheduled", "status": "False", "message": "0/3 nodes"})),
            Just(json!({"type": "Ready", "status": "False", "reason": "PodCompleted"})),
        ],
    ) {
        let specs = specs();
        let mut status = status;
        if !scheduled.is_null() {
            status["conditions"].as_array_mut().expect("conditions").push(scheduled);
        }
        let pod = served(&specs[which.index(specs.len())], &status);
        reads_the_same(&pod, minutes)?;
    }
}
