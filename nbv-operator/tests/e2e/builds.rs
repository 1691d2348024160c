//! Image builds (`podConfig.buildConfig`) on a real API server, with Tekton's and
//! Shipwright's own CRDs: nbv's build objects must pass their schemas. The suite plays
//! the build systems' controllers (`support::builds`): a Tekton build runs its
//! `clone` and `prepare` steps for real (`nbv pod clone` against `git daemon`, then
//! `nbv build prepare`) and "pushes" the prepared Dockerfile, its digest the SHA-256
//! of what was prepared; kaniko build Pods run the same way under the kubelet, a fake
//! executor writing the digest. The validation Pod then runs `repository@digest` under
//! the real papermill.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, ListParams};
use nbv_core::api::{BuildPhase, CellStatus, NotebookValidationJob, Phase};
use serde_json::{Value, json};

use crate::support::builds::{Builds, Hook, digest_of};
use crate::support::container::image_digest;
use crate::support::git::{GitServer, notebook, tempdir};
use crate::support::kubelet::Kubelet;
use crate::support::objects::resource;
use crate::support::proxy::{Fault, Proxy, Rule};
use crate::support::{Operator, OperatorOptions, Scenario, annotation, job, message, phase};

/// How long a job with a build takes at most: nbv looks at a running build every 30 s,
/// then the validation Pod clones and runs papermill.
const BUILT: Duration = Duration::from_secs(240);

/// The notebook the builds are for: it imports `yaml` (PyYAML, which papermill's
/// virtualenv has), so that `fallbackStrategy: auto` finds a package to install.
fn imports_yaml() -> String {
    let cells = [
        "import yaml",
        "assert yaml.safe_load('accuracy: 0.93') == {'accuracy': 0.93}",
        "print('accuracy', 0.93)",
    ];
    serde_json::to_string_pretty(&notebook(&cells)).expect("json")
}

/// The test repository: `withreqs/` has a requirements file beside its notebook;
/// `bare/` has none, nor has the repository's root.
fn repository(git: &GitServer) -> String {
    git.repository(
        "models",
        &[
            ("withreqs/train.ipynb", imports_yaml()),
            ("withreqs/requirements.txt", "pyyaml\n".to_owned()),
            ("bare/train.ipynb", imports_yaml()),
        ],
    )
}

/// What every build scenario runs: the cluster, the repository, the kubelet, the build
/// systems' controllers and nbv.
struct Builders {
    s: Scenario,
    git: GitServer,
    url: String,
    builds: Builds,
    _kubelet: Kubelet,
    _operator: Operator,
    _proxy: Option<Proxy>,
}

impl Builders {
    async fn start(prefix: &str) -> Builders {
        Builders::start_with(prefix, &[]).await
    }

    /// The same, nbv run with more `flags`.
    async fn start_with(prefix: &str, flags: &[&str]) -> Builders {
        Builders::started(prefix, flags, &[]).await
    }

    /// The same on a cluster that does not serve the API `groups`, as nbv sees it: nbv
    /// runs behind a proxy that sends their requests to a group no server serves.
    async fn start_without(prefix: &str, groups: &[&str]) -> Builders {
        Builders::started(prefix, &[], groups).await
    }

    async fn started(prefix: &str, flags: &[&str], unserved: &[&str]) -> Builders {
        let s = Scenario::new(prefix).await;
        let git = GitServer::start();
        let url = repository(&git);
        let kubelet = Kubelet::start(s.client.clone(), &s.namespace);
        let builds = Builds::start(s.client.clone(), &s.namespace);
        let mut options = OperatorOptions::default_mode(&s.namespace).with(flags);
        let proxy = (!unserved.is_empty()).then(|| {
            let proxy = Proxy::start(&s.cluster);
            for group in unserved {
                let rule = Rule::on(None, format!("/apis/{group}/"), Fault::Unserved);
                proxy.inject(rule.times(usize::MAX));
            }
            options.kubeconfig = Some(proxy.kubeconfig().to_owned());
            proxy
        });
        let operator = s.operator(&options);
        Builders {
            s,
            git,
            url,
            builds,
            _kubelet: kubelet,
            _operator: operator,
            _proxy: proxy,
        }
    }

    /// Applies a job of `notebook` at `git_ref` with `build_config`.
    async fn job(&self, name: &str, git_ref: &str, notebook: &str, build_config: Value) {
        let mut job = job(name, &self.url, git_ref, notebook, json!({}));
        job["spec"]["podConfig"]["buildConfig"] = build_config;
        self.s.apply(job).await;
    }

    /// The namespace's objects of a build system's kind.
    fn api(&self, group: &str, version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.s.client.clone(),
            &self.s.namespace,
            &resource(group, version, kind, plural),
        )
    }

    fn pipeline_runs(&self) -> Api<DynamicObject> {
        self.api("tekton.dev", "v1", "PipelineRun", "pipelineruns")
    }

    async fn list(&self, api: &Api<DynamicObject>) -> Vec<DynamicObject> {
        api.list(&ListParams::default().labels("app.kubernetes.io/managed-by=nbv"))
            .await
            .expect("list build objects")
            .items
    }

    /// Where nbv pushes the images of this namespace's jobs (its default).
    fn repository(&self) -> String {
        format!(
            "image-registry.openshift-image-registry.svc:5000/{}/nbv-notebooks",
            self.s.namespace
        )
    }

    /// The image of the notebook container of the job's validation Pod.
    async fn pod_image(&self, job: &NotebookValidationJob) -> String {
        let name = job
            .status
            .as_ref()
            .and_then(|s| s.validation_pod_name.clone())
            .expect("a validation Pod");
        let pods: Api<Pod> = Api::namespaced(self.s.client.clone(), &self.s.namespace);
        let pod = pods.get(&name).await.expect("the validation Pod");
        pod.spec
            .expect("a Pod spec")
            .containers
            .into_iter()
            .find(|c| c.name == nbv_core::pod::NOTEBOOK_CONTAINER)
            .and_then(|c| c.image)
            .expect("the notebook container's image")
    }

    async fn finish(self, what: &str) {
        self.s.report_requests(what);
        self.s.clean_up().await;
    }
}

/// The reasons of the job's conditions.
fn reasons(job: &NotebookValidationJob) -> Vec<String> {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.reason)
        .collect()
}

/// A build object's `Succeeded` condition: (status, reason, message).
fn succeeded(object: &DynamicObject) -> (String, String, String) {
    let conditions = object.data["status"]["conditions"].as_array();
    let c = conditions
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Succeeded")
        .unwrap_or_else(|| panic!("no Succeeded condition: {}", object.data["status"]));
    let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
    (text("status"), text("reason"), text("message"))
}

/// The value of a PipelineRun's result `name`.
fn result(run: &DynamicObject, name: &str) -> String {
    run.data["status"]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == name)
        .and_then(|r| r["value"].as_str())
        .unwrap_or_else(|| panic!("no result {name}: {}", run.data["status"]))
        .to_owned()
}

/// The build of `task` (a PipelineRun's taskSpec) replayed here: the repository
/// cloned at `git_ref`, `nbv build prepare` run with its prepare step's `NBV_BUILD`;
/// the digest of what it prepared, and its summary.
fn replay(url: &str, git_ref: &str, task: &Value) -> (String, String) {
    let prepare = task["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == "prepare")
        .expect("a prepare step");
    let settings = prepare["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == "NBV_BUILD")
        .and_then(|e| e["value"].as_str())
        .expect("the prepare step's NBV_BUILD");
    let dir = tempdir("replay");
    let checkout = dir.join("repo");
    let status = std::process::Command::new("git")
        .args(["clone", "-q", "--branch", git_ref, url])
        .arg(&checkout)
        .status()
        .expect("git clone");
    assert!(status.success(), "git clone {url}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_nbv"))
        .args(["build", "prepare", "--source"])
        .arg(&checkout)
        .env("NBV_BUILD", settings)
        .output()
        .expect("nbv build prepare");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let digest = image_digest(&checkout.join(".nbv-build/Dockerfile")).expect("a digest");
    let _ = std::fs::remove_dir_all(&dir);
    (digest, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The object of `objects` that belongs to job `job` (its `mlops.dev/job` label).
fn of_job(objects: &[DynamicObject], job: &str) -> DynamicObject {
    objects
        .iter()
        .find(|o| {
            o.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("mlops.dev/job"))
                .map(String::as_str)
                == Some(job)
        })
        .unwrap_or_else(|| panic!("the build object of job {job}"))
        .clone()
}

fn is_digest(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn assert_succeeded(job: &NotebookValidationJob) {
    assert_eq!(phase(job), Some(Phase::Succeeded), "{:?}", job.status);
    let results = job.status.as_ref().and_then(|s| s.results.clone());
    let results = results.unwrap_or_default();
    assert_eq!(results.len(), 3, "one result per code cell: {results:?}");
    assert!(
        results.iter().all(|r| r.status == CellStatus::Success),
        "{results:?}"
    );
}

fn assert_failed(job: &NotebookValidationJob, reason: &str) {
    assert_eq!(phase(job), Some(Phase::Failed), "{:?}", job.status);
    assert!(
        reasons(job).iter().any(|r| r == reason),
        "a condition with reason {reason}: {:?}",
        job.status
    );
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_tekton_build_is_the_image_the_validation_pod_runs() {
    let b = Builders::start("e2e-build-tekton").await;
    let config = json!({"enabled": true, "strategy": "tekton"});
    b.job("tekton", "main", "withreqs/train.ipynb", config)
        .await;
    let job = b.s.ended("tekton", BUILT).await;
    assert_succeeded(&job);

    let runs = b.list(&b.pipeline_runs()).await;
    assert_eq!(runs.len(), 1, "one PipelineRun");
    let run = &runs[0];
    let name = run.metadata.name.clone().unwrap_or_default();
    assert!(name.starts_with("nbv-build-"), "{name}");
    let labels = run.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get("mlops.dev/job").map(String::as_str),
        Some("tekton")
    );
    assert_eq!(
        labels.get("mlops.dev/build-strategy").map(String::as_str),
        Some("tekton")
    );
    let key = annotation(&run.metadata, "mlops.dev/build-key").expect("the build key");
    assert_eq!(key.len(), 64, "{key}");
    assert!(
        name.ends_with(&key[..20]),
        "{name} is named by its key {key}"
    );
    assert_eq!(succeeded(run).0, "True");
    // What Tekton's schema kept of nbv's PipelineRun (it prunes what it does not know).
    let task = &run.data["spec"]["pipelineSpec"]["tasks"][0]["taskSpec"];
    let steps: Vec<&str> = task["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(steps, ["clone", "prepare", "build"], "{task}");
    assert!(task["steps"][2]["script"].is_string(), "{task}");

    let digest = result(run, "IMAGE_DIGEST");
    assert!(is_digest(&digest), "{digest}");
    assert_eq!(
        Some(result(run, "IMAGE_URL").as_str()),
        annotation(&run.metadata, "mlops.dev/image")
    );
    let summary = result(run, "SUMMARY");
    assert_eq!(
        summary.trim(),
        "requirements from withreqs/requirements.txt"
    );
    let (replayed, replayed_summary) = replay(&b.url, "main", task);
    assert_eq!(
        digest, replayed,
        "the digest of what this job's prepare step writes"
    );
    assert_eq!(summary, replayed_summary);

    let image = format!("{}@{digest}", b.repository());
    assert_eq!(b.pod_image(&job).await, image);
    let build = job
        .status
        .clone()
        .and_then(|s| s.build_status)
        .expect("buildStatus");
    assert_eq!(build.phase, Some(BuildPhase::Complete), "{build:?}");
    assert_eq!(build.build_name.as_deref(), Some(name.as_str()));
    assert_eq!(build.strategy.as_deref(), Some("tekton"));
    assert_eq!(build.image_reference.as_deref(), Some(image.as_str()));
    assert_eq!(build.message.as_deref(), Some(summary.trim()));
    assert!(
        build.start_time.is_some() && build.completion_time.is_some(),
        "{build:?}"
    );
    assert!(build.duration.is_some(), "{build:?}");
    b.finish("a Tekton build, then its image validated").await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn ten_jobs_at_one_commit_share_one_build() {
    let b = Builders::start("e2e-build-shared").await;
    let commit = b.git.head("models");
    let names: Vec<String> = (0..10).map(|i| format!("shared-{i}")).collect();
    for name in &names {
        let config = json!({"enabled": true, "strategy": "tekton"});
        b.job(name, &commit, "withreqs/train.ipynb", config).await;
    }
    let mut images = Vec::new();
    let mut builds = Vec::new();
    for name in &names {
        let job = b.s.ended(name, BUILT + Duration::from_secs(120)).await;
        assert_succeeded(&job);
        images.push(b.pod_image(&job).await);
        builds.push(job.status.and_then(|s| s.build_status?.build_name));
    }
    let runs = b.list(&b.pipeline_runs()).await;
    assert_eq!(runs.len(), 1, "ten jobs at one commit, one PipelineRun");
    let digest = result(&runs[0], "IMAGE_DIGEST");
    let image = format!("{}@{digest}", b.repository());
    assert!(images.iter().all(|i| *i == image), "{images:?} ≠ {image}");
    assert!(
        builds.iter().all(|n| *n == runs[0].metadata.name),
        "{builds:?}"
    );
    b.finish("ten jobs sharing one build").await;
}

/// `--build-history` deletes old build objects; their images stay in the registry. On
/// OpenShift the internal registry records each push in the namespace's ImageStream,
/// which nbv reads before it builds: a job with the same inputs runs the image by
/// digest, and no BuildConfig or Build is made again.
#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn an_image_in_the_registry_is_reused_once_its_build_objects_are_gone() {
    let b = Builders::start("e2e-build-registry").await;
    let commit = b.git.head("models");
    let config = json!({"enabled": true, "strategy": "s2i",
                        "requirementsFile": "withreqs/requirements.txt"});
    b.job("first", &commit, "withreqs/train.ipynb", config.clone())
        .await;
    let first = b.s.ended("first", BUILT).await;
    assert_succeeded(&first);
    let image = b.pod_image(&first).await;

    // The build objects are cleaned away, as an old build's are.
    let builds = b.api("build.openshift.io", "v1", "Build", "builds");
    let configs = b.api("build.openshift.io", "v1", "BuildConfig", "buildconfigs");
    for api in [&builds, &configs] {
        for object in b.list(api).await {
            let name = object.metadata.name.clone().unwrap_or_default();
            api.delete(&name, &Default::default())
                .await
                .expect("delete a build object");
        }
    }
    let streams = b.api("image.openshift.io", "v1", "ImageStream", "imagestreams");
    let stream = streams
        .get("nbv-notebooks")
        .await
        .expect("the registry's ImageStream");
    assert_eq!(
        stream.data["status"]["tags"].as_array().map(Vec::len),
        Some(1)
    );

    b.job("second", &commit, "withreqs/train.ipynb", config)
        .await;
    let second = b.s.ended("second", BUILT).await;
    assert_succeeded(&second);
    assert_eq!(
        b.pod_image(&second).await,
        image,
        "the first run's image, by digest"
    );
    assert!(b.list(&builds).await.is_empty(), "no Build made again");
    assert!(
        b.list(&configs).await.is_empty(),
        "no BuildConfig made again"
    );
    let build = second
        .status
        .clone()
        .and_then(|s| s.build_status)
        .expect("buildStatus");
    assert_eq!(build.phase, Some(BuildPhase::Complete));
    assert!(
        build
            .message
            .as_deref()
            .is_some_and(|m| m.contains("already in the registry")),
        "{build:?}"
    );
    b.finish("an image reused from the registry").await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_failed_build_fails_the_job_naming_the_field() {
    let b = Builders::start("e2e-build-failed").await;
    let config = json!({"enabled": true, "strategy": "tekton",
                        "requirementsFile": "missing/requirements.txt"});
    b.job("missing", "main", "withreqs/train.ipynb", config)
        .await;
    let job = b.s.ended("missing", BUILT).await;
    assert_failed(&job, "BuildFailed");
    let text = message(&job);
    assert!(
        text.contains("requirementsFile") && text.contains("missing/requirements.txt"),
        "{text}"
    );
    let status = job.status.clone().unwrap_or_default();
    assert!(status.validation_pod_name.is_none(), "no validation Pod");
    let build = status.build_status.expect("buildStatus");
    assert_eq!(build.phase, Some(BuildPhase::Failed), "{build:?}");
    let runs = b.list(&b.pipeline_runs()).await;
    assert_eq!(runs.len(), 1);
    let (ok, reason, detail) = succeeded(&runs[0]);
    assert_eq!(
        (ok.as_str(), reason.as_str()),
        ("False", "Failed"),
        "{detail}"
    );
    assert!(detail.contains("step-prepare"), "{detail}");
    b.finish("a build whose prepare step fails").await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_build_past_its_timeout_fails_the_job() {
    let b = Builders::start("e2e-build-timeout").await;
    // Its build step never ends: Tekton's own timeout ends the PipelineRun.
    b.builds.hook("stalls", Hook::Stall);
    // Its build runs past any timeout of Tekton's: nbv cancels it, 60 s after its
    // timeout.
    b.builds.hook("held", Hook::Hold);
    for name in ["stalls", "held"] {
        let config = json!({"enabled": true, "strategy": "tekton", "timeout": "1s"});
        b.job(name, "main", "withreqs/train.ipynb", config).await;
    }
    let stalls = b.s.ended("stalls", BUILT).await;
    assert_failed(&stalls, "BuildTimedOut");
    let held = b.s.ended("held", BUILT).await;
    assert_failed(&held, "BuildTimedOut");
    let build = held
        .status
        .clone()
        .and_then(|s| s.build_status)
        .expect("buildStatus");
    let (start, end) = (build.start_time.unwrap(), build.completion_time.unwrap());
    eprintln!(
        "the held build ended {} s after it started (timeout 1 s, then 60 s of grace)",
        (end - start).num_seconds()
    );
    assert!(
        end - start >= chrono::Duration::seconds(60),
        "cancelled {} s after it started, before its timeout and grace had passed",
        (end - start).num_seconds()
    );

    let runs = b.list(&b.pipeline_runs()).await;
    let run_of = |job: &str| of_job(&runs, job);
    let stalled = run_of("stalls");
    assert_eq!(stalled.data["spec"]["timeouts"]["pipeline"], "1s");
    let (_, reason, _) = succeeded(&stalled);
    assert_eq!(reason, "PipelineRunTimeout");
    let held_run = run_of("held");
    assert_eq!(
        held_run.data["spec"]["status"], "Cancelled",
        "nbv cancelled it"
    );
    let pipeline_runs = b.pipeline_runs();
    let held_name = held_run.metadata.name.clone().unwrap_or_default();
    crate::support::eventually(
        "the held PipelineRun to end Cancelled",
        Duration::from_secs(30),
        || async {
            let run = pipeline_runs.get(&held_name).await.ok()?;
            (succeeded(&run).1 == "Cancelled").then_some(())
        },
    )
    .await;
    b.finish("two builds past their timeout").await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn s2i_without_openshift_builds_on_shipwright() {
    // The cluster s2i falls back on: nbv sees no build.openshift.io (the API server's
    // own answer for a group it does not serve), though the suite installed one.
    let b = Builders::start_without("e2e-build-s2i", &["build.openshift.io"]).await;
    // Shipwright's message when a strategy's step fails.
    let step_failed = "buildrun step step-build-and-push failed, for detailed information: \
                       kubectl --namespace ml logs s2i-fails-pod --container=step-build-and-push";
    b.builds
        .hook("s2i-fails", Hook::Fail("Failed".into(), step_failed.into()));
    for name in ["s2i", "s2i-fails"] {
        let config = json!({"enabled": true, "strategy": "s2i",
                            "requirementsFile": "withreqs/requirements.txt"});
        b.job(name, "main", "withreqs/train.ipynb", config).await;
    }
    let job = b.s.ended("s2i", BUILT).await;
    assert_succeeded(&job);
    let fails = b.s.ended("s2i-fails", BUILT).await;
    assert_failed(&fails, "BuildFailed");
    assert!(
        message(&fails).contains("step-build-and-push"),
        "{}",
        message(&fails)
    );

    let runs = b
        .list(&b.api("shipwright.io", "v1beta1", "BuildRun", "buildruns"))
        .await;
    assert_eq!(runs.len(), 2, "one BuildRun a job");
    let run = of_job(&runs, "s2i");
    let labels = run.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get("mlops.dev/build-strategy").map(String::as_str),
        Some("shipwright-s2i")
    );
    let build_name = run.data["spec"]["build"]["name"]
        .as_str()
        .expect("spec.build.name");
    let build = b
        .api("shipwright.io", "v1beta1", "Build", "builds")
        .get(build_name)
        .await
        .expect("the Build");
    let strategy = &build.data["spec"]["strategy"];
    assert_eq!(strategy["name"], "source-to-image", "{strategy}");
    assert_eq!(strategy["kind"], "ClusterBuildStrategy", "{strategy}");
    assert_eq!(
        build.data["status"]["registered"], "True",
        "{}",
        build.data["status"]
    );
    let digest = run.data["status"]["output"]["digest"]
        .as_str()
        .expect("a digest");
    assert_eq!(digest, digest_of(&build.data["spec"]));
    assert_eq!(
        b.pod_image(&job).await,
        format!("{}@{digest}", b.repository())
    );
    // OpenShift's builds are tried once per build, not at every look at it: a build
    // not found is looked for where the fallback builds it before anything is created.
    if let Some(requests) = b.s.requests() {
        let tries = requests.count("create", "buildconfigs");
        assert!(
            tries <= 2,
            "{tries} creations of a BuildConfig for two builds"
        );
    }
    b.finish("two s2i builds on Shipwright").await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn s2i_on_openshift_is_a_build_config_and_its_build() {
    let b = Builders::start("e2e-build-openshift").await;
    // The last lines of a failed S2I build's log, as OpenShift keeps them.
    let log = "ERROR: Could not find a version that satisfies the requirement pyyaml==99\n\
               error: build error: error building at STEP \"RUN /tmp/scripts/assemble\": exit status 1";
    b.builds
        .hook("fails", Hook::Fail("GenericBuildFailed".into(), log.into()));
    b.builds.hook("held", Hook::Hold);
    for name in ["s2i", "fails", "held"] {
        let mut config = json!({"enabled": true, "strategy": "s2i",
                                "requirementsFile": "withreqs/requirements.txt",
                                // Each job its own build: their inputs differ.
                                "baseImage": format!("registry.access.redhat.com/ubi9/python-311:{name}")});
        if name == "held" {
            config["timeout"] = json!("1s");
        }
        b.job(name, "main", "withreqs/train.ipynb", config).await;
    }

    let job = b.s.ended("s2i", BUILT).await;
    assert_succeeded(&job);
    let builds = b.api("build.openshift.io", "v1", "Build", "builds");
    let all = b.list(&builds).await;
    assert_eq!(all.len(), 3, "one Build a job");
    let build = of_job(&all, "s2i");
    let spec = &build.data["spec"];
    assert_eq!(spec["strategy"]["type"], "Source", "{spec}");
    assert_eq!(
        spec["strategy"]["sourceStrategy"]["from"]["name"],
        "registry.access.redhat.com/ubi9/python-311:s2i"
    );
    assert_eq!(spec["source"]["contextDir"], "withreqs", "{spec}");
    assert_eq!(spec["source"]["git"]["uri"], b.url.as_str(), "{spec}");
    let config_name =
        build.metadata.labels.clone().unwrap_or_default()["openshift.io/build-config.name"].clone();
    let configs = b.api("build.openshift.io", "v1", "BuildConfig", "buildconfigs");
    let config = configs.get(&config_name).await.expect("the BuildConfig");
    assert_eq!(config.data["spec"]["runPolicy"], "Serial");
    assert_eq!(build.data["status"]["phase"], "Complete");
    let digest = build.data["status"]["output"]["to"]["imageDigest"]
        .as_str()
        .expect("an image digest");
    assert_eq!(digest, digest_of(spec));
    assert_eq!(
        b.pod_image(&job).await,
        format!("{}@{digest}", b.repository())
    );

    let fails = b.s.ended("fails", BUILT).await;
    assert_failed(&fails, "BuildFailed");
    let text = message(&fails);
    assert!(
        text.contains("GenericBuildFailed") && text.contains("pyyaml==99"),
        "the build's reason and log snippet: {text}"
    );

    // Past its timeout and a minute's grace, nbv cancels it as `oc cancel-build` does.
    let held = b.s.ended("held", BUILT).await;
    assert_failed(&held, "BuildTimedOut");
    let held_name = of_job(&b.list(&builds).await, "held")
        .metadata
        .name
        .unwrap_or_default();
    crate::support::eventually(
        "the held Build to end Cancelled",
        Duration::from_secs(30),
        || async {
            let build = builds.get(&held_name).await.ok()?;
            let status = &build.data["status"];
            (status["cancelled"] == true && status["phase"] == "Cancelled").then_some(())
        },
    )
    .await;
    b.finish("three s2i builds on OpenShift").await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_strategy_whose_api_is_not_served_fails_the_job_at_once() {
    let groups = ["tekton.dev", "shipwright.io", "build.openshift.io"];
    let b = Builders::start_without("e2e-build-unserved", &groups).await;
    let jobs = [
        ("tekton", json!({"strategy": "tekton"}), "tekton.dev/v1"),
        (
            "shipwright",
            json!({"strategy": "shipwright", "dockerfile": "Dockerfile"}),
            "shipwright.io/v1beta1",
        ),
        (
            "s2i",
            json!({"strategy": "s2i", "requirementsFile": "withreqs/requirements.txt"}),
            "shipwright.io/v1beta1",
        ),
    ];
    for (name, config, _) in &jobs {
        let mut config = config.clone();
        config["enabled"] = json!(true);
        b.job(name, "main", "withreqs/train.ipynb", config).await;
    }
    for (name, _, api) in &jobs {
        // At once: a build not created is not looked at again 30 s later.
        let job = b.s.ended(name, Duration::from_secs(25)).await;
        assert_failed(&job, "BuildApiNotServed");
        let text = message(&job);
        assert!(
            text.contains(&format!("strategy {name} needs the API {api}"))
                && text.contains("podConfig.buildConfig.strategy"),
            "names the strategy, the API and the field: {text}"
        );
    }
    b.finish("three strategies whose APIs are not served").await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_missing_requirements_file_under_each_fallback_strategy() {
    let b = Builders::start("e2e-build-fallback").await;
    for strategy in ["warn", "fail", "auto"] {
        let config = json!({"enabled": true, "strategy": "tekton", "fallbackStrategy": strategy});
        b.job(strategy, "main", "bare/train.ipynb", config).await;
    }
    let summary = |job: &NotebookValidationJob| {
        job.status
            .as_ref()
            .and_then(|s| s.build_status.as_ref()?.message.clone())
            .unwrap_or_default()
    };
    let warn = b.s.ended("warn", BUILT).await;
    assert_succeeded(&warn);
    let text = summary(&warn);
    assert!(
        text.contains("the base image as it is") && text.contains("fallbackStrategy warn"),
        "{text}"
    );
    let fail = b.s.ended("fail", BUILT).await;
    assert_failed(&fail, "BuildFailed");
    let text = message(&fail);
    assert!(
        text.contains("fallbackStrategy is fail")
            && text.contains("bare/requirements.txt")
            && text.contains("looked at"),
        "names what was looked at: {text}"
    );
    let auto = b.s.ended("auto", BUILT).await;
    assert_succeeded(&auto);
    let text = summary(&auto);
    assert!(
        text.contains("requirements generated from the notebook's imports: pyyaml"),
        "{text}"
    );
    b.finish("three fallback strategies").await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_kaniko_build_is_the_image_the_validation_pod_runs() {
    // Images go to another registry than OpenShift's (nbv's flag).
    let flags = [
        "--build-repository",
        "registry.e2e.invalid/{namespace}/notebooks",
    ];
    let b = Builders::start_with("e2e-build-kaniko", &flags).await;
    let repository = format!("registry.e2e.invalid/{}/notebooks", b.s.namespace);
    let config = json!({"enabled": true, "strategy": "kaniko"});
    b.job("kaniko", "main", "withreqs/train.ipynb", config)
        .await;
    let job = b.s.ended("kaniko", BUILT).await;
    assert_succeeded(&job);

    let pods: Api<Pod> = Api::namespaced(b.s.client.clone(), &b.s.namespace);
    let builders = pods
        .list(&ListParams::default().labels("mlops.dev/build-strategy=kaniko"))
        .await
        .expect("list Pods")
        .items;
    assert_eq!(builders.len(), 1, "one kaniko Pod");
    let statuses = builders[0]
        .status
        .clone()
        .and_then(|s| s.container_statuses)
        .unwrap_or_default();
    let digest = statuses
        .iter()
        .find(|c| c.name == "kaniko")
        .and_then(|c| c.state.as_ref()?.terminated.as_ref()?.message.clone())
        .expect("the kaniko container's termination message");
    assert!(is_digest(&digest), "{digest}");
    let image = format!("{repository}@{digest}");
    let kaniko = builders[0].spec.clone().expect("a Pod spec").containers;
    let args = kaniko[0].args.clone().unwrap_or_default();
    assert!(
        args.iter()
            .any(|a| a.starts_with(&format!("--destination={repository}:"))),
        "{args:?}"
    );
    assert_eq!(b.pod_image(&job).await, image);
    let build = job
        .status
        .clone()
        .and_then(|s| s.build_status)
        .expect("buildStatus");
    assert_eq!(build.phase, Some(BuildPhase::Complete), "{build:?}");
    assert_eq!(build.strategy.as_deref(), Some("kaniko"));
    assert_eq!(build.image_reference.as_deref(), Some(image.as_str()));
    assert_eq!(
        build.message.as_deref(),
        Some("requirements from withreqs/requirements.txt")
    );
    b.finish("a kaniko build, then its image validated").await;
}
