//! The in-memory API server through a real `kube::Client`: verbs, semantics, errors,
//! faults, the request log and virtual time.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::core::Status;
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_testkit::cluster::{
    Actor, ApiResourceSpec, ClusterError, FakeCluster, Fault, FaultEffect, FaultMatch, PatchType,
    Reason, StatusCode, Times, Verb, VerbKind,
};
use nbv_testkit::fixtures::JobBuilder;
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn api_error(err: kube::Error) -> Box<Status> {
    match err {
        kube::Error::Api(status) => status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn pod(name: &str, labels: Value) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]}
    }))
    .expect("valid pod")
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]}
            }
        }
    }))
    .expect("valid deployment")
}

fn application_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Application"),
        "applications",
    )
}

mod eviction;
mod objects;
mod observability;
mod writes;
