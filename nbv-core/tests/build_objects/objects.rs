//! Each route's objects for one plan: snapshots, the build systems' schemas, the
//! metadata every object carries, and what a route refuses.

use k8s_openapi::api::core::v1::Pod;
use nbv_core::build::BuildDefaults;
use nbv_core::build::{
    BUILD_KEY_LABEL, BUILD_STRATEGY_LABEL, BuildPlan, IMAGE_ANNOTATION, PlanError, Route, Strategy,
    build_objects,
};
use nbv_core::pod::{JOB_LABEL, MANAGED_BY_LABEL, PodDefaults};
use serde_json::{Value, json};

use crate::{assert_valid, plan, schema_errors};

const ROUTES: [(Route, Strategy); 5] = [
    (Route::Tekton, Strategy::Tekton),
    (Route::Kaniko, Strategy::Kaniko),
    (Route::Shipwright, Strategy::Shipwright),
    (Route::OpenShift, Strategy::S2i),
    (Route::ShipwrightS2i, Strategy::S2i),
];

/// Pod defaults with an image that does not change with nbv's version.
fn pods() -> PodDefaults {
    PodDefaults {
        nbv_image: "registry.example.com/nbv:test".to_owned(),
        ..PodDefaults::default()
    }
}

fn objects(plan: &BuildPlan, route: Route) -> Result<Vec<Value>, PlanError> {
    let objects = build_objects(plan, route, &pods(), &BuildDefaults::default())?;
    for (object, body) in &objects {
        assert_eq!(body["apiVersion"], object.api_version.as_str());
        assert_eq!(body["kind"], object.kind.as_str());
        assert_eq!(body["metadata"]["name"], object.name.as_str());
        assert_eq!(body["metadata"]["namespace"], "ml");
    }
    let watched = &objects.last().expect("a route makes objects").0;
    assert_eq!(
        watched,
        &route.watched(plan),
        "the watched object comes last"
    );
    Ok(objects.into_iter().map(|(_, body)| body).collect())
}

/// Checks `body` against the schema of its kind, where a reference has one.
fn validate(body: &Value) {
    match (body["apiVersion"].as_str(), body["kind"].as_str()) {
        (Some("tekton.dev/v1"), Some("PipelineRun")) => {
            assert_valid("tekton/300-pipelinerun.yaml", "v1", body);
            // The run's schema takes an inline pipeline as it is: check it, and its
            // tasks, against the Pipeline's and the Task's own.
            for (crd, kind, spec) in inline_specs(body) {
                let doc = json!({"apiVersion": "tekton.dev/v1", "kind": kind,
                    "metadata": {"name": "inline"}, "spec": spec});
                assert_valid(crd, "v1", &doc);
            }
        }
        (Some("shipwright.io/v1beta1"), Some("Build")) => {
            assert_valid("shipwright/shipwright.io_builds.yaml", "v1beta1", body);
        }
        (Some("shipwright.io/v1beta1"), Some("BuildRun")) => {
            assert_valid("shipwright/shipwright.io_buildruns.yaml", "v1beta1", body);
        }
        (Some("v1"), Some("Pod")) => {
            // Kubernetes' own types: a field they do not know would be lost.
            let pod: Pod = serde_json::from_value(body.clone()).expect("a Pod");
            assert_eq!(
                &serde_json::to_value(pod).unwrap(),
                body,
                "every field is a Pod's"
            );
        }
        // build.openshift.io has no reference schema here.
        (Some("build.openshift.io/v1"), Some("BuildConfig" | "Build")) => {}
        other => panic!("unexpected object {other:?}"),
    }
}

/// The inline Pipeline and Tasks of a PipelineRun, with the CRD that defines each.
fn inline_specs(run: &Value) -> Vec<(&'static str, &'static str, Value)> {
    let pipeline = run["spec"]["pipelineSpec"].clone();
    let mut specs: Vec<_> = pipeline["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|task| ("tekton/300-task.yaml", "Task", task["taskSpec"].clone()))
        .collect();
    specs.push(("tekton/300-pipeline.yaml", "Pipeline", pipeline));
    specs
}

#[test]
fn every_route_makes_valid_objects_owned_by_the_job() {
    for (route, strategy) in ROUTES {
        let plan = plan(strategy);
        let objects = objects(&plan, route).unwrap_or_else(|e| panic!("{route}: {e}"));
        for body in &objects {
            validate(body);
            let metadata = &body["metadata"];
            assert_eq!(metadata["labels"][MANAGED_BY_LABEL], "nbv");
            assert_eq!(metadata["labels"][BUILD_KEY_LABEL], plan.key.short());
            assert_eq!(metadata["labels"][BUILD_STRATEGY_LABEL], route.as_str());
            assert_eq!(metadata["labels"][JOB_LABEL], "train");
            assert_eq!(metadata["annotations"][BUILD_KEY_LABEL], plan.key.as_str());
            assert_eq!(
                metadata["annotations"][IMAGE_ANNOTATION],
                plan.image.as_str()
            );
            let owner = &metadata["ownerReferences"][0];
            assert_eq!(owner["kind"], "NotebookValidationJob");
            assert_eq!(owner["apiVersion"], "mlops.mlops.dev/v1alpha1");
            assert_eq!(owner["uid"], plan.job_uid.as_str());
            assert_eq!(owner["controller"], true);
            assert_eq!(owner["blockOwnerDeletion"], false);
        }
        insta::assert_yaml_snapshot!(route.as_str(), objects);
    }
}

#[test]
fn a_named_dockerfile_is_built_where_the_build_system_clones() {
    let mut plan = plan(Strategy::Shipwright);
    plan.source.dockerfile = Some("./docker/Dockerfile".to_owned());
    plan.source.requirements_file = None;
    plan.push_secret = None;
    plan.service_account = None;
    plan.git.credentials_secret = None;
    for route in [Route::Shipwright, Route::OpenShift, Route::ShipwrightS2i] {
        let objects = objects(&plan, route).unwrap_or_else(|e| panic!("{route}: {e}"));
        objects.iter().for_each(validate);
        insta::assert_yaml_snapshot!(format!("{route}-dockerfile"), objects);
    }
}

#[test]
fn tekton_and_kaniko_work_without_optional_settings() {
    let mut plan = plan(Strategy::Tekton);
    plan.push_secret = None;
    plan.service_account = None;
    plan.git.url = "git@github.com:example/models.git".to_owned();
    plan.git.credentials_secret = Some("deploy-key".to_owned());
    for route in [Route::Tekton, Route::Kaniko] {
        let objects = objects(&plan, route).unwrap();
        objects.iter().for_each(validate);
        let text = serde_json::to_string(&objects).unwrap();
        assert!(
            !text.contains("dockerconfig") && !text.contains("nbv-push-secret"),
            "{route}"
        );
        assert!(!text.contains("serviceAccountName"), "{route}");
        // The SSH key: a Secret volume of the clone alone.
        assert!(text.contains(r#""secretName":"deploy-key""#), "{route}");
    }
}

#[test]
fn the_steps_get_the_job_values_as_variables_never_as_script() {
    let plan = plan(Strategy::Tekton);
    let run = &objects(&plan, Route::Tekton).unwrap()[0];
    let steps = run["spec"]["pipelineSpec"]["tasks"][0]["taskSpec"]["steps"]
        .as_array()
        .unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["clone", "prepare", "build"]);
    let script = steps[2]["script"].as_str().unwrap();
    assert!(!script.contains(&plan.image) && !script.contains(&plan.repository));
    let env = |step: &Value, name: &str| {
        step["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .map(|e| e["value"].clone())
    };
    assert_eq!(env(&steps[2], "IMAGE"), Some(plan.image.clone().into()));
    let source: Value =
        serde_json::from_str(env(&steps[1], "NBV_BUILD").unwrap().as_str().unwrap()).unwrap();
    assert_eq!(source, serde_json::to_value(&plan.source).unwrap());
    // prepare sees none of clone's credentials.
    assert!(env(&steps[1], "NBV_GIT_TOKEN").is_none() && env(&steps[0], "NBV_GIT_TOKEN").is_some());
    assert_eq!(
        steps[1]["command"],
        serde_json::json!([
            "/nbv",
            "build",
            "prepare",
            "--source",
            "/workspace/source/repo",
            "--summary",
            "$(results.SUMMARY.path)"
        ])
    );
}

#[test]
fn builds_that_clone_themselves_need_a_named_file() {
    let mut plan = plan(Strategy::Shipwright);
    plan.source.requirements_file = None;
    plan.source.requirements_sources = Some(vec!["env/requirements.txt".to_owned()]);
    for route in [Route::Shipwright, Route::OpenShift, Route::ShipwrightS2i] {
        let Err(PlanError::Field { field, problem }) = objects(&plan, route) else {
            panic!("{route} accepted a plan it cannot search for");
        };
        assert_eq!(field, "spec.podConfig.buildConfig.requirementsFile");
        assert!(problem.contains("tekton or kaniko"), "{problem}");
    }
    for route in [Route::Tekton, Route::Kaniko] {
        assert!(
            objects(&plan, route).is_ok(),
            "{route} searches in its prepare step"
        );
    }
}

#[test]
fn source_to_image_installs_requirements_txt_only() {
    let mut plan = plan(Strategy::S2i);
    plan.source.requirements_file = Some("env/notebook-deps.txt".to_owned());
    for route in [Route::OpenShift, Route::ShipwrightS2i] {
        let Err(PlanError::Field { field, problem }) = objects(&plan, route) else {
            panic!("{route} accepted a file its builder does not install");
        };
        assert_eq!(field, "spec.podConfig.buildConfig.requirementsFile");
        assert!(problem.contains("requirements.txt"), "{problem}");
    }
    // A Dockerfile strategy reads the directory, whatever the file is called.
    assert!(objects(&plan, Route::Shipwright).is_ok());
    plan.source.requirements_file = Some("../outside/requirements.txt".to_owned());
    assert!(matches!(
        objects(&plan, Route::OpenShift),
        Err(PlanError::Field { field, .. }) if field == "spec.podConfig.buildConfig.requirementsFile"
    ));
}

#[test]
fn sources_nbv_would_not_clone_are_refused_on_every_route() {
    for (route, strategy) in ROUTES {
        let mut plan = plan(strategy);
        plan.git.url = "ext::sh -c touch% /tmp/x".to_owned();
        assert!(
            matches!(objects(&plan, route), Err(PlanError::Field { field, .. }) if field == "spec.notebook.git.url"),
            "{route}"
        );
        let mut plan = crate::plan(strategy);
        plan.git.git_ref = "--upload-pack=touch /tmp/x".to_owned();
        assert!(
            matches!(objects(&plan, route), Err(PlanError::Field { field, .. }) if field == "spec.notebook.git.ref"),
            "{route}"
        );
        let mut plan = crate::plan(strategy);
        plan.git.url = "http://example.com/models.git".to_owned();
        assert!(
            matches!(objects(&plan, route), Err(PlanError::Field { field, .. }) if field == "spec.notebook.git.credentialsSecret"),
            "{route}: credentials over plain HTTP"
        );
    }
}

#[test]
fn tekton_refuses_values_it_would_substitute() {
    let mut plan = plan(Strategy::Tekton);
    plan.source.requirements_file = Some("$(params.x)/requirements.txt".to_owned());
    assert!(matches!(
        objects(&plan, Route::Tekton),
        Err(PlanError::Field { .. })
    ));
    assert!(objects(&plan, Route::Kaniko).is_ok());
}

#[test]
fn the_build_runs_no_longer_than_the_plan_allows() {
    let plan = plan(Strategy::Tekton);
    let timeouts = [
        (
            Route::Tekton,
            "/spec/timeouts/pipeline",
            Value::from("900s"),
        ),
        (
            Route::Kaniko,
            "/spec/activeDeadlineSeconds",
            Value::from(900),
        ),
        (
            Route::OpenShift,
            "/spec/completionDeadlineSeconds",
            Value::from(900),
        ),
    ];
    for (route, pointer, expected) in timeouts {
        let watched = objects(&plan, route).unwrap().pop().unwrap();
        assert_eq!(watched.pointer(pointer), Some(&expected), "{route}");
    }
    let build = &objects(&plan, Route::Shipwright).unwrap()[0];
    assert_eq!(build["spec"]["timeout"], "900s");
}

#[test]
fn the_schema_check_refuses_what_the_build_systems_do_not_know() {
    let plan = plan(Strategy::Tekton);
    let mut run = objects(&plan, Route::Tekton).unwrap().remove(0);
    run["spec"]["pipelineSpec"]["tasks"][0]["taskSpec"]["steps"][0]["terminationMessagePolicy"] =
        "File".into();
    let (crd, kind, spec) = inline_specs(&run).remove(0);
    let task = json!({"apiVersion": "tekton.dev/v1", "kind": kind, "metadata": {"name": "t"}, "spec": spec});
    let errors = schema_errors(crd, "v1", &task);
    assert!(!errors.is_empty(), "a Step has no terminationMessagePolicy");
    let mut build = objects(&plan, Route::Shipwright).unwrap().remove(0);
    build["spec"]["output"]["pushSecret"] = serde_json::json!({"name": "quay-push"});
    let errors = schema_errors("shipwright/shipwright.io_builds.yaml", "v1beta1", &build);
    assert!(!errors.is_empty(), "pushSecret is a name");
}
