//! Memory of `nbv run` in default mode when every job has its validation Pod, on the
//! real API server.
//!
//! Each job is loaded with the Pod of its first attempt as nbv builds it
//! (`validation_pod`, owned by the job), ended `Succeeded` with a notebook report of
//! twelve cells as its termination message, and the job ended `Succeeded` naming it:
//! a cluster where every job has run once and nbv keeps the finished Pods. The Pod's
//! spec is either the one `validation_pod` builds (`NBV_E2E_MEMORY_POD_SPEC=full`, the
//! scripts inline) or that spec with each container's script replaced by a one-line
//! command (the default: a spec of a few KiB, as when the scripts come from the image).
//!
//! At each job count of `NBV_E2E_MEMORY_POD_JOBS` (default 1,000), nbv starts once in
//! default mode over the new jobs (which writes what it owes them), then restarts in
//! default mode and in `--gitops-only`; with `NBV_E2E_MEMORY_BEFORE` (the path of
//! another build of nbv) each restart is also measured with that build, in the same
//! run and over the same objects. Memory per job is read from the restarts, as in the
//! parent module. Figures are printed; the bound asserted is the parent's.

use std::path::PathBuf;
use std::time::Instant;

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use nbv_core::api::NotebookValidationJob;
use nbv_core::phase::Attempt;
use nbv_core::pod::{PodDefaults, validation_pod};
use serde_json::{Value, json};

use super::{KIB_PER_JOB_BOUND, LOAD_CONCURRENCY, Start, job, measure, mib};
use crate::support::{OperatorOptions, Scenario, ended};

/// The attempt every loaded job ran.
const ATTEMPT: Attempt = Attempt::new(1, 0);

fn counts() -> Vec<usize> {
    let Ok(value) = std::env::var("NBV_E2E_MEMORY_POD_JOBS") else {
        return vec![1_000];
    };
    value
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .unwrap_or_else(|_| panic!("NBV_E2E_MEMORY_POD_JOBS: {value:?}"))
        })
        .collect()
}

/// Whether the Pods carry the spec `validation_pod` builds, scripts inline.
fn full_spec() -> bool {
    std::env::var("NBV_E2E_MEMORY_POD_SPEC").as_deref() == Ok("full")
}

/// The notebook's report as a run of twelve cells leaves it in the termination
/// message.
fn report() -> String {
    let cells: Vec<Value> = (0..12)
        .map(|i| json!({"i": i * 2, "s": "ok", "t": 0.37 + f64::from(i) * 1.9}))
        .collect();
    json!({"cells": cells}).to_string()
}

/// A container's status as the kubelet leaves it when the container ended well.
fn terminated(name: &str, image: &str, message: &str) -> Value {
    json!({"name": name, "image": image, "imageID": format!("{image}@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
           "containerID": "containerd://5e0c2f6b8a1d4e7f9c3b2a1d0e9f8c7b6a5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
           "ready": false, "restartCount": 0, "started": false,
           "state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": message,
                                    "startedAt": "2026-12-07T00:00:05Z", "finishedAt": "2026-12-07T00:01:12Z",
                                    "containerID": "containerd://5e0c2f6b8a1d4e7f9c3b2a1d0e9f8c7b6a5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f"}}})
}

/// The Pod nbv creates for `job`'s first attempt; with a short command in place of
/// each script unless the full spec is asked for.
fn pod_of(job: &NotebookValidationJob, full: bool) -> Pod {
    let mut pod = validation_pod(job, ATTEMPT, None, None, &PodDefaults::default())
        .expect("the job's validation Pod");
    if !full {
        let spec = pod.spec.as_mut().expect("a spec");
        let containers = spec
            .init_containers
            .iter_mut()
            .flatten()
            .chain(spec.containers.iter_mut());
        for container in containers {
            container.command = Some(vec![
                "/bin/sh".to_owned(),
                format!("/opt/nbv/{}.sh", container.name),
            ]);
        }
    }
    pod
}

/// The status the kubelet leaves on `pod` once its notebook ran.
fn succeeded(pod: &Pod) -> Value {
    let spec = pod.spec.as_ref().expect("a spec");
    let image = |c: &k8s_openapi::api::core::v1::Container| c.image.clone().unwrap_or_default();
    let init: Vec<Value> = spec
        .init_containers
        .iter()
        .flatten()
        .map(|c| terminated(&c.name, &image(c), ""))
        .collect();
    let report = report();
    let main: Vec<Value> = spec
        .containers
        .iter()
        .map(|c| terminated(&c.name, &image(c), &report))
        .collect();
    json!({
        "phase": "Succeeded", "hostIP": "10.0.3.17", "podIP": "10.128.4.211",
        "podIPs": [{"ip": "10.128.4.211"}], "qosClass": "Burstable",
        "startTime": "2026-12-07T00:00:01Z",
        "conditions": [
            {"type": "PodReadyToStartContainers", "status": "False", "lastTransitionTime": "2026-12-07T00:01:13Z"},
            {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-12-07T00:00:05Z"},
            {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": "2026-12-07T00:01:13Z"},
            {"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastTransitionTime": "2026-12-07T00:01:13Z"},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-07T00:00:01Z"}],
        "initContainerStatuses": init,
        "containerStatuses": main,
    })
}

/// Creates jobs `from..to`, each with its validation Pod ended `Succeeded`, and ends
/// each job `Succeeded` naming its Pod. Returns the size of one Pod as served.
async fn load(s: &Scenario, from: usize, to: usize, full: bool) -> usize {
    let jobs = s.jobs();
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let started = Instant::now();
    let sizes: Vec<usize> = stream::iter(from..to)
        .map(|i| {
            let (jobs, pods) = (jobs.clone(), pods.clone());
            async move {
                let object: NotebookValidationJob = serde_json::from_value(job(i)).expect("a job");
                let name = object.metadata.name.clone().expect("a name");
                let created = jobs
                    .create(&PostParams::default(), &object)
                    .await
                    .unwrap_or_else(|e| panic!("create {name}: {e}"));
                let pod = pod_of(&created, full);
                let pod_name = pod.metadata.name.clone().expect("a Pod name");
                pods.create(&PostParams::default(), &pod)
                    .await
                    .unwrap_or_else(|e| panic!("create Pod {pod_name}: {e}"));
                let served = pods
                    .patch_status(
                        &pod_name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": succeeded(&pod)})),
                    )
                    .await
                    .unwrap_or_else(|e| panic!("end Pod {pod_name}: {e}"));
                let mut status = ended("Succeeded", "Validation completed successfully");
                status["validationPodName"] = json!(pod_name);
                jobs.patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({ "status": status })),
                )
                .await
                .unwrap_or_else(|e| panic!("write the status of {name}: {e}"));
                serde_json::to_vec(&served).expect("JSON").len()
            }
        })
        .buffer_unordered(LOAD_CONCURRENCY)
        .collect()
        .await;
    eprintln!(
        "memory, Pods: loaded jobs {from}..{to} with their Pods in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    sizes.first().copied().unwrap_or_default()
}

/// The restarts measured at one count, by build.
struct Count {
    jobs: usize,
    starts: Vec<(&'static str, Start)>,
}

fn per_job(start: &Start, idle: &Start) -> f64 {
    (start.rss_kib as f64 - idle.rss_kib as f64) / start.jobs as f64
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn memory_with_a_pod_per_job() {
    let s = Scenario::new("e2e-memory-pods").await;
    let full = full_spec();
    let before = std::env::var_os("NBV_E2E_MEMORY_BEFORE").map(PathBuf::from);
    let builds: Vec<(&'static str, Option<PathBuf>)> = match &before {
        Some(path) => vec![("after", None), ("before", Some(path.clone()))],
        None => vec![("after", None)],
    };
    let options = |gitops: bool, program: &Option<PathBuf>| {
        let base = if gitops {
            OperatorOptions::gitops_only(&s.namespace)
        } else {
            OperatorOptions::default_mode(&s.namespace)
        };
        OperatorOptions {
            program: program.clone(),
            ..base
        }
    };
    let mut idle = Vec::new();
    for (build, program) in &builds {
        idle.push((
            *build,
            measure(&s, &options(false, program), "no jobs", 0, 0).await,
        ));
    }
    let mut loaded = 0;
    let mut size = 0;
    let mut counts = Vec::new();
    for jobs in self::counts() {
        size = load(&s, loaded, jobs, full).await;
        loaded = jobs;
        // The jobs added are new to nbv: the first start writes what it owes them.
        measure(
            &s,
            &options(false, &None),
            "first start, default mode",
            jobs,
            jobs,
        )
        .await;
        let mut starts = Vec::new();
        for (build, program) in &builds {
            let default = measure(
                &s,
                &options(false, program),
                &format!("restart, default mode ({build})"),
                jobs,
                jobs,
            )
            .await;
            starts.push((*build, default));
            let gitops = measure(
                &s,
                &options(true, program),
                &format!("restart, --gitops-only ({build})"),
                jobs,
                jobs,
            )
            .await;
            starts.push((*build, gitops));
        }
        counts.push(Count { jobs, starts });
    }

    eprintln!(
        "\nmemory, Pods: one Pod is {size} bytes of JSON as served ({} spec)",
        if full { "full" } else { "short" }
    );
    eprintln!(
        "| jobs (each with a Pod) | build | mode | RSS settled | RSS per job | peak (VmHWM) | ready |"
    );
    eprintln!("|---:|---|---|---:|---:|---:|---:|");
    for (build, start) in &idle {
        eprintln!(
            "| 0 | {build} | no jobs | {:.1} MiB | – | {:.1} MiB | {:.1} s |",
            mib(start.rss_kib),
            mib(start.hwm_kib),
            start.ready.as_secs_f64()
        );
    }
    for count in &counts {
        for (build, start) in &count.starts {
            let idle = &idle.iter().find(|(b, _)| b == build).expect("idle").1;
            eprintln!(
                "| {} | {build} | {} | {:.1} MiB | {:.2} KiB | {:.1} MiB | {:.1} s |",
                count.jobs,
                if start.what.contains("gitops") {
                    "--gitops-only"
                } else {
                    "default"
                },
                mib(start.rss_kib),
                per_job(start, idle),
                mib(start.hwm_kib),
                start.ready.as_secs_f64()
            );
        }
    }
    // What one more job costs, from the restarts at the first and last counts.
    if let [first, .., last] = counts.as_slice() {
        for (i, (build, start)) in last.starts.iter().enumerate() {
            let earlier = &first.starts[i].1;
            eprintln!(
                "memory, Pods: {build}, {}: {:.2} KiB settled and {:.2} KiB at the peak per job from {} to {} jobs",
                if start.what.contains("gitops") {
                    "--gitops-only"
                } else {
                    "default mode"
                },
                (start.rss_kib as f64 - earlier.rss_kib as f64) / (last.jobs - first.jobs) as f64,
                (start.hwm_kib as f64 - earlier.hwm_kib as f64) / (last.jobs - first.jobs) as f64,
                first.jobs,
                last.jobs,
            );
        }
    }

    let last = counts.last().expect("a count");
    let (_, restart) = last
        .starts
        .iter()
        .find(|(build, start)| *build == "after" && !start.what.contains("gitops"))
        .expect("a restart in default mode");
    let idle = &idle[0].1;
    let per_job = per_job(restart, idle);
    assert!(
        per_job < KIB_PER_JOB_BOUND,
        "nbv keeps {per_job:.1} KiB per job with its Pod in default mode (bound {KIB_PER_JOB_BOUND} KiB)"
    );

    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let _ = pods
        .delete_collection(&Default::default(), &ListParams::default())
        .await;
    s.clean_up().await;
}
