//! OpenShift GitOps: Argo CD in `openshift-gitops`, configured through its `ArgoCD`
//! resource, and nbv's Role there installed from `config/openshift-gitops` (or missing,
//! as under OLM until the second install step).

use nbv_testkit::cluster::{Fault, FaultMatch, Times};

use super::scenario::{application_in, apply, get_opt, namespace, rfc3339, run_operator_with};
use super::*;

const GITOPS: &str = "openshift-gitops";

const SYNC: &str =
    "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, action: sync}";

/// OpenShift GitOps' default instance, whose `ArgoCD` resource says `label` while its
/// `argocd-cm` still says `annotation` (the operator rewrites it at its next reconcile):
/// jobs tracked by their instance label find their Application only if nbv reads the
/// resource.
fn openshift_gitops(cluster: &FakeCluster) {
    cluster.register(ApiResourceSpec::namespaced(
        "argoproj.io",
        "v1beta1",
        "ArgoCD",
        "argocds",
    ));
    for ns in [OPERATOR_NAMESPACE, GITOPS, ML] {
        namespace(cluster, ns, json!({}));
    }
    apply(
        cluster,
        json!({"apiVersion": "argoproj.io/v1beta1", "kind": "ArgoCD",
               "metadata": {"name": GITOPS, "namespace": GITOPS},
               "spec": {"resourceTrackingMethod": "label"}}),
    );
    apply(
        cluster,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "argocd-cm", "namespace": GITOPS},
               "data": {"application.resourceTrackingMethod": "annotation"}}),
    );
    apply(
        cluster,
        json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
               "metadata": {"name": "default", "namespace": GITOPS}, "spec": {}}),
    );
    application_in(cluster, GITOPS, "self-healing-platform", ML);
    application_in(cluster, GITOPS, "serving", ML);
}

/// A job of `self-healing-platform` (instance label) that syncs `serving` on success,
/// run to success by another controller, and one without a sync.
async fn complete_jobs(cluster: &FakeCluster) {
    let start = cluster.now();
    for (name, triggers) in [("train", Some(SYNC)), ("report", None)] {
        let mut job = JobBuilder::new(ML, name)
            .instance("self-healing-platform")
            .image("quay.io/ml/sklearn-notebook:1")
            .phase(Phase::ValidationRunning)
            .started_at(start);
        if let Some(triggers) = triggers {
            job = job.on_success_trigger(triggers);
        }
        apply(cluster, job.build());
    }
    tokio::time::sleep(Duration::from_secs(30)).await;
    for name in ["train", "report"] {
        cluster
            .set_status(
                "notebookvalidationjobs",
                Some(ML),
                name,
                json!({"phase": "Succeeded", "startTime": rfc3339(start),
                       "completionTime": rfc3339(cluster.now()), "message": "done"}),
            )
            .unwrap_or_else(|e| panic!("cannot set the status of {name}: {e}"));
    }
    tokio::time::sleep(Duration::from_secs(120)).await;
}

fn condition(job: &Value, type_: &str) -> Value {
    job["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_).cloned())
        .unwrap_or(Value::Null)
}

#[tokio::test(start_paused = true)]
async fn on_openshift_gitops_nbv_finds_argocd_and_the_shipped_role_allows_what_it_calls() {
    let cluster = FakeCluster::default();
    let config = OperatorConfig {
        gitops_only: true,
        discover_argocd_namespace: true,
        application_namespaces: Vec::new(),
        ..OperatorConfig::default()
    };
    let log = run_operator_with(&cluster, config, |cluster| async move {
        openshift_gitops(&cluster);
        complete_jobs(&cluster).await;
    })
    .await;

    // Found in openshift-gitops: the sync of an Application named without a namespace
    // went there, and the status was published on the parent found by label, which only
    // the ArgoCD resource says.
    let serving = get_opt(&cluster, "applications", GITOPS, "serving").unwrap_or_default();
    assert!(serving["operation"]["sync"].is_object(), "{serving:#}");
    let platform =
        get_opt(&cluster, "applications", GITOPS, "self-healing-platform").unwrap_or_default();
    assert!(
        platform["metadata"]["annotations"]["mlops.dev/notebook-summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("2/2 succeeded")),
        "{:#}",
        platform["metadata"]
    );
    let train = get_opt(&cluster, "notebookvalidationjobs", ML, "train").unwrap_or_default();
    assert_eq!(condition(&train, "ArgoCDAccess"), Value::Null, "{train:#}");

    // Every request is allowed by the ClusterRole, the Lease's Role and
    // config/openshift-gitops' Role, except the search's GET of argocd-cm in `argocd`,
    // where nbv has no Role on such a cluster: a 403 there means "not here".
    let mut granted = permissions("role.yaml");
    granted.extend(permissions("leader_election_role.yaml"));
    granted.extend(permissions("../openshift-gitops/argocd-role.yaml"));
    assert!(
        granted
            .iter()
            .any(|p| p.scope == Scope::Namespace(GITOPS.to_owned())),
        "config/openshift-gitops/argocd-role.yaml grants nothing in {GITOPS}"
    );
    let probe = |a: &Access| {
        a.resource == "configmaps" && a.namespace.as_deref() == Some("argocd") && a.verb == "get"
    };
    let requested: BTreeSet<Access> = accesses(&log).into_iter().filter(|a| !probe(a)).collect();
    let problems: Vec<String> = violations(&granted, &requested, |_| true);
    assert!(problems.is_empty(), "- {}", problems.join("\n- "));
    for (resource, verb) in [
        ("configmaps", "get"),
        ("argocds", "list"),
        ("appprojects", "watch"),
    ] {
        assert!(
            requested.iter().any(|a| a.resource == resource
                && a.verb == verb
                && a.namespace.as_deref() == Some(GITOPS)),
            "no {verb} {resource} in {GITOPS}: {requested:#?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn without_the_role_a_syncing_job_says_which_role_is_missing_until_it_is_there() {
    let cluster = FakeCluster::default();
    // As under OLM before the second install step: nothing in openshift-gitops may be
    // read but the Applications (the ClusterRole's).
    for resource in ["appprojects", "argocds", "configmaps"] {
        cluster.inject(Fault::new(
            FaultMatch::any().resource(resource),
            Fault::status(403),
            Times::Always,
        ));
    }
    // Found all the same: openshift-gitops exists, argocd does not.
    let config = OperatorConfig {
        gitops_only: true,
        discover_argocd_namespace: true,
        application_namespaces: Vec::new(),
        ..OperatorConfig::default()
    };
    let observed = Arc::new(std::sync::Mutex::new(Value::Null));
    let seen = observed.clone();
    run_operator_with(&cluster, config, |cluster| async move {
        openshift_gitops(&cluster);
        complete_jobs(&cluster).await;
        let serving = get_opt(&cluster, "applications", GITOPS, "serving").unwrap_or_default();
        let train = get_opt(&cluster, "notebookvalidationjobs", ML, "train").unwrap_or_default();
        let report = get_opt(&cluster, "notebookvalidationjobs", ML, "report").unwrap_or_default();
        *seen.lock().unwrap_or_else(|e| e.into_inner()) =
            json!({"serving": serving, "train": train, "report": report});
        // The admin applies config/openshift-gitops: the watch's next attempt lists the
        // AppProjects, and the waiting sync goes ahead.
        cluster.clear_faults();
        tokio::time::sleep(Duration::from_secs(300)).await;
    })
    .await;

    let before = observed.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(
        before["serving"]["operation"].is_null(),
        "nbv synced without the sync windows: {:#}",
        before["serving"]
    );
    let missing = condition(&before["train"], "ArgoCDAccess");
    assert_eq!(missing["status"], "False", "{:#}", before["train"]);
    assert_eq!(missing["reason"], "ArgoCDRoleMissing");
    let message = missing["message"].as_str().unwrap_or_default();
    for part in [
        "Role nbv-operator-argocd and RoleBinding nbv-operator-argocd",
        "config/rbac/argocd_role.yaml",
        "namespace openshift-gitops",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    assert_eq!(
        condition(&before["report"], "ArgoCDAccess"),
        Value::Null,
        "a job without a sync is not told"
    );
    let events: Vec<Value> = cluster
        .objects_of("Event")
        .into_iter()
        .filter(|e| e["reason"] == "ArgoCDRoleMissing")
        .collect();
    assert_eq!(
        events.len(),
        1,
        "one Event, not one per reconcile: {events:#?}"
    );
    assert_eq!(events[0]["involvedObject"]["name"], "train");

    let serving = get_opt(&cluster, "applications", GITOPS, "serving").unwrap_or_default();
    assert!(serving["operation"]["sync"].is_object(), "{serving:#}");
    let train = get_opt(&cluster, "notebookvalidationjobs", ML, "train").unwrap_or_default();
    let found = condition(&train, "ArgoCDAccess");
    assert_eq!(found["status"], "True", "{train:#}");
    assert_eq!(found["reason"], "ArgoCDRoleFound");
}
