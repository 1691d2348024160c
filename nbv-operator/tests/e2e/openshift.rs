//! nbv on OpenShift, as far as the plain API server can tell: SCC `restricted-v2`
//! emulated by admission webhooks (`support::openshift`), in namespaces that carry
//! OpenShift's `openshift.io/sa.scc.*` annotations. What nbv ships is admitted, its
//! validation Pods are admitted and run, a Pod a policy refuses (a policy engine's
//! webhook, or `restricted-v2` once a service mesh injected its sidecar) fails its job
//! at once, and a ResourceQuota that demands limits admits nbv's Pods.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, ResourceQuota};
use kube::api::{Api, PostParams};
use nbv_core::api::Phase;
use serde_json::{Value, json};

use crate::notebooks::repository;
use crate::support::git::GitServer;
use crate::support::kubelet::Kubelet;
use crate::support::objects::{repository as root, yaml_documents};
use crate::support::openshift::{self, POLICY, Profile, mesh, policy, scc};
use crate::support::{
    OperatorOptions, RUN, Scenario, annotation, condition, eventually, job, message, phase,
};

/// The namespaces' UID block: OpenShift's first project gets one like it.
const UIDS: i64 = 1_000_680_000;

/// How long a refused Pod may take to fail its job: well under the retry backoff.
const AT_ONCE: Duration = Duration::from_secs(30);

/// A Pod of `template` (a Pod template's `metadata` and `spec`), named `name`.
fn pod_of(name: &str, template: &Value) -> Pod {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "labels": template["metadata"]["labels"]},
                         "spec": template["spec"]});
    if pod["metadata"]["labels"].is_null() {
        pod["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("labels");
    }
    serde_json::from_value(pod).unwrap_or_else(|e| panic!("the Pod of {name}: {e}"))
}

/// The Pod template of the first object of `kind` in `file` (at `path` in it).
fn template(file: &str, kind: &str, path: &[&str]) -> Value {
    let doc = yaml_documents(&root().join(file))
        .into_iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {file}"));
    path.iter().fold(doc, |v, key| match key.parse::<usize>() {
        Ok(i) => v[i].clone(),
        Err(_) => v[*key].clone(),
    })
}

/// Creates `pod` with `dryRun=All`: admission runs, nothing is stored.
async fn dry_run(s: &Scenario, pod: &Pod) -> Result<Pod, kube::Error> {
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    pods.create(&params, pod).await
}

/// The API server's refusal of `result` as `(code, message)`.
fn refusal(result: Result<Pod, kube::Error>) -> (u16, String) {
    match result {
        Err(kube::Error::Api(e)) => (e.code, e.message),
        Ok(pod) => panic!("admitted: {:?}", pod.spec),
        Err(e) => panic!("not an answer of the API server: {e}"),
    }
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn openshift_scc_emulation_refuses_a_fixed_uid_outside_the_namespace_s_range() {
    let s = Scenario::new("e2e-openshift-scc").await;
    let _profile = Profile::enter(&s.cluster, &s.client).await;
    openshift::namespace(&s.client, &s.namespace, UIDS, &[]).await;
    let container = json!({"name": "main", "image": "registry.k8s.io/pause:3.10"});

    let mut fixed = container.clone();
    fixed["securityContext"] = json!({"runAsUser": 65532});
    let (code, text) = refusal(
        dry_run(
            &s,
            &pod_of("fixed-uid", &json!({"spec": {"containers": [fixed]}})),
        )
        .await,
    );
    assert_eq!(code, 403, "{text}");
    assert!(
        text.contains(
            "unable to validate against any security context constraint: [provider \"anyuid\": \
             Forbidden: not usable by user or serviceaccount, provider restricted-v2: \
             .containers[0].runAsUser: Invalid value: 65532: must be in the ranges: \
             [1000680000, 1000689999]]"
        ),
        "{text}"
    );

    // With no UID, the range's first is assigned; the Pod is admitted.
    let admitted = dry_run(
        &s,
        &pod_of("no-uid", &json!({"spec": {"containers": [container]}})),
    )
    .await
    .expect("a Pod with no UID is admitted");
    let sc = admitted.spec.as_ref().unwrap().containers[0]
        .security_context
        .clone()
        .unwrap();
    assert_eq!(sc.run_as_user, Some(UIDS));
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(
        annotation(&admitted.metadata, scc::VALIDATED),
        Some(scc::NAME)
    );

    // Outside the profile's namespaces nothing changes.
    let plain = format!("{}-plain", s.namespace);
    crate::support::install::ensure_namespace(&s.client, &plain, json!({})).await;
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &plain);
    let mut fixed = json!({"name": "main", "image": "registry.k8s.io/pause:3.10"});
    fixed["securityContext"] = json!({"runAsUser": 65532});
    let stored = pods
        .create(
            &PostParams {
                dry_run: true,
                ..PostParams::default()
            },
            &pod_of("fixed-uid", &json!({"spec": {"containers": [fixed]}})),
        )
        .await
        .expect("a plain namespace admits a fixed UID");
    assert_eq!(annotation(&stored.metadata, scc::VALIDATED), None);
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn openshift_admits_the_manager_the_csv_and_the_wait_hook() {
    let s = Scenario::new("e2e-openshift-manifests").await;
    let _profile = Profile::enter(&s.cluster, &s.client).await;
    openshift::namespace(&s.client, &s.namespace, UIDS, &[]).await;
    let templates = [
        (
            "manager",
            template(
                "config/manager/deployment.yaml",
                "Deployment",
                &["spec", "template"],
            ),
        ),
        (
            "csv",
            template(
                "bundle/manifests/nbv-operator.clusterserviceversion.yaml",
                "ClusterServiceVersion",
                &[
                    "spec",
                    "install",
                    "spec",
                    "deployments",
                    "0",
                    "spec",
                    "template",
                ],
            ),
        ),
        (
            "wait-hook",
            template(
                "config/samples/serving/wait-hook.yaml",
                "Job",
                &["spec", "template"],
            ),
        ),
    ];
    let mut refused = Vec::new();
    for (name, template) in &templates {
        assert!(template["spec"].is_object(), "{name}: no Pod template");
        match dry_run(&s, &pod_of(name, template)).await {
            Ok(pod) => assert_eq!(
                annotation(&pod.metadata, scc::VALIDATED),
                Some(scc::NAME),
                "{name} went through the SCC webhook"
            ),
            Err(e) => refused.push(format!("{name}: {e}")),
        }
    }
    assert!(
        refused.is_empty(),
        "refused under restricted-v2: {refused:#?}"
    );
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn openshift_default_mode_job_succeeds_and_completes_its_wave() {
    let s = Scenario::new("e2e-openshift-run").await;
    let _profile = Profile::enter(&s.cluster, &s.client).await;
    openshift::namespace(&s.client, &s.namespace, UIDS, &[]).await;
    let git = GitServer::start();
    let url = repository(&git, "models");
    let kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));
    s.apply(job(
        "train",
        &url,
        "main",
        "passes.ipynb",
        json!({"argocd.argoproj.io/sync-wave": "3"}),
    ))
    .await;

    let train = s.ended("train", RUN).await;
    assert_eq!(phase(&train), Some(Phase::Succeeded), "{:?}", train.status);
    eventually("mlops.dev/wave-complete", RUN, || async {
        let job = s.job("train").await;
        (annotation(&job.metadata, "mlops.dev/wave-complete") == Some("3")).then_some(())
    })
    .await;
    // The Pod ran as the SCC assigned it: the namespace's first UID.
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let name = train.status.as_ref().unwrap().validation_pod_name.clone();
    let pod = pods
        .get(name.as_deref().expect("the validation Pod's name"))
        .await
        .expect("the validation Pod");
    assert_eq!(annotation(&pod.metadata, scc::VALIDATED), Some(scc::NAME));
    for c in pod.spec.as_ref().unwrap().containers.iter() {
        let sc = c.security_context.clone().unwrap_or_default();
        assert_eq!(sc.run_as_user, Some(UIDS), "{}", c.name);
    }
    // Nothing nbv asked for on OpenShift was forbidden by its role.
    s.report_requests("a job on OpenShift");
    drop(kubelet);
    s.clean_up().await;
}

/// Job `name` of wave 3, whose Pod the namespace's policy refuses, fails at once: phase
/// Failed, condition `PodAdmitted` False with `reason`, a `PodRefused` Warning, the
/// wave failed; its message and the Event's name each of `names`.
async fn refused_at_once(s: &Scenario, name: &str, reason: &str, names: &[&str]) {
    let job = s.ended(name, AT_ONCE).await;
    assert_eq!(phase(&job), Some(Phase::Failed), "{:?}", job.status);
    let text = message(&job);
    assert!(names.iter().all(|n| text.contains(n)), "{names:?}: {text}");
    let (status, why, detail) = condition(&job, "PodAdmitted").expect("condition PodAdmitted");
    assert_eq!(
        (status.as_str(), why.as_str()),
        ("False", reason),
        "{detail}"
    );
    assert!(
        names.iter().all(|n| detail.contains(n)),
        "{names:?}: {detail}"
    );
    let events = eventually("the PodRefused Event", AT_ONCE, || async {
        let e = s.events(name, "PodRefused").await;
        (!e.is_empty()).then_some(e)
    })
    .await;
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));
    let said = events[0].message.clone().unwrap_or_default();
    assert!(names.iter().all(|n| said.contains(n)), "{names:?}: {said}");
    eventually("mlops.dev/wave-failed", AT_ONCE, || async {
        let job = s.job(name).await;
        (annotation(&job.metadata, "mlops.dev/wave-failed") == Some("3")).then_some(())
    })
    .await;
}

/// A job of wave 3 that nobody runs (its Pod is refused before any kubelet could).
fn refused_job(name: &str, image: &str) -> Value {
    let mut job = job(
        name,
        "https://git.example.com/ml/models.git",
        "main",
        "train.ipynb",
        json!({"argocd.argoproj.io/sync-wave": "3"}),
    );
    job["spec"]["podConfig"]["containerImage"] = json!(image);
    job
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn openshift_a_pod_a_policy_engine_denies_fails_its_job_and_wave_at_once() {
    let s = Scenario::new("e2e-openshift-policy").await;
    let _profile = Profile::enter(&s.cluster, &s.client).await;
    openshift::namespace(&s.client, &s.namespace, UIDS, &[POLICY]).await;
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));
    s.apply(refused_job(
        "latest",
        "quay.io/jupyter/minimal-notebook:latest",
    ))
    .await;
    refused_at_once(
        &s,
        "latest",
        "AdmissionWebhookDenied",
        &[policy::WEBHOOK, policy::POLICY],
    )
    .await;
    s.clean_up().await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn openshift_a_pod_restricted_v2_refuses_after_a_sidecar_is_injected_fails_at_once() {
    let s = Scenario::new("e2e-openshift-mesh").await;
    let _profile = Profile::enter(&s.cluster, &s.client).await;
    openshift::namespace(&s.client, &s.namespace, UIDS, &[mesh::LABEL]).await;
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));
    s.apply(refused_job(
        "meshed",
        "quay.io/jupyter/minimal-notebook:2026-01-05",
    ))
    .await;
    refused_at_once(
        &s,
        "meshed",
        "SecurityContextConstraints",
        &[
            "unable to validate against any security context constraint",
            "provider restricted-v2: .initContainers[",
            "\"NET_ADMIN\": capability may not be added",
        ],
    )
    .await;
    s.clean_up().await;
}

/// A quota over requests and limits of CPU and memory, as the controller-manager would
/// have counted it: nothing used yet.
fn quota() -> Value {
    let hard = json!({"requests.cpu": "4", "requests.memory": "8Gi",
                      "limits.cpu": "8", "limits.memory": "16Gi", "pods": "20"});
    let used = json!({"requests.cpu": "0", "requests.memory": "0",
                      "limits.cpu": "0", "limits.memory": "0", "pods": "0"});
    json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute"},
           "spec": {"hard": hard}, "status": {"hard": hard, "used": used}})
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn openshift_a_quota_that_demands_limits_admits_nbv_s_pods() {
    let s = Scenario::new("e2e-openshift-quota").await;
    let _profile = Profile::enter(&s.cluster, &s.client).await;
    openshift::namespace(&s.client, &s.namespace, UIDS, &[]).await;
    s.apply(quota()).await;
    let quotas: Api<ResourceQuota> = Api::namespaced(s.client.clone(), &s.namespace);
    assert!(
        quotas
            .get("compute")
            .await
            .unwrap()
            .status
            .and_then(|st| st.used)
            .is_some(),
        "the quota's status is written, so its admission enforces it"
    );

    // The negative control: a Pod without limits is refused by the quota.
    let bare = pod_of(
        "no-limits",
        &json!({"spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]}}),
    );
    let (code, text) = refusal(dry_run(&s, &bare).await);
    assert_eq!(code, 403, "{text}");
    assert!(
        text.contains("failed quota: compute: must specify"),
        "{text}"
    );

    let git = GitServer::start();
    let url = repository(&git, "models");
    let kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));
    s.apply(job("train", &url, "main", "passes.ipynb", json!({})))
        .await;
    let train = s.ended("train", RUN).await;
    assert_eq!(phase(&train), Some(Phase::Succeeded), "{:?}", train.status);
    let used = quotas
        .get("compute")
        .await
        .unwrap()
        .status
        .unwrap()
        .used
        .unwrap();
    assert_ne!(
        used.get("pods").map(|q| q.0.as_str()),
        Some("0"),
        "the validation Pod was counted against the quota: {used:?}"
    );
    s.report_requests("a job under a quota");
    drop(kubelet);
    s.clean_up().await;
}
