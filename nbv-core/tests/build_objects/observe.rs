//! What each route's watched object says, over status snippets in `testdata/`.

use nbv_core::build::{BuildObserved, MAX_STATUS_TEXT, Route, observe};
use serde_json::{Value, json};

use crate::testdata;

fn pending() -> BuildObserved {
    BuildObserved::Pending
}
fn running() -> BuildObserved {
    BuildObserved::Running
}
fn succeeded(digest: Option<&str>, summary: Option<&str>) -> BuildObserved {
    BuildObserved::Succeeded {
        digest: digest.map(str::to_owned),
        summary: summary.map(str::to_owned),
    }
}
fn failed(reason: &str, message: &str) -> BuildObserved {
    BuildObserved::Failed {
        reason: reason.to_owned(),
        message: message.to_owned(),
    }
}

/// Checks every case of `testdata/<file>` and that the table covers them all; the
/// case named `timeout`, and only it, timed out.
fn check(route: Route, file: &str, table: &[(&str, BuildObserved)]) {
    let cases = testdata(file);
    let cases = cases.as_object().expect("a map of cases");
    assert_eq!(
        cases.len(),
        table.len(),
        "{file}: every case has an expectation"
    );
    for (case, expected) in table {
        let object = cases
            .get(*case)
            .unwrap_or_else(|| panic!("{file} has no case {case}"));
        let observed = observe(route, object);
        assert_eq!(&observed, expected, "{file}: {case}");
        assert_eq!(observed.timed_out(), *case == "timeout", "{file}: {case}");
    }
}

#[test]
fn tekton_pipeline_runs() {
    let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    check(
        Route::Tekton,
        "tekton.yaml",
        &[
            ("created", pending()),
            ("pending", pending()),
            ("running", running()),
            (
                "succeeded",
                succeeded(
                    Some(digest),
                    Some(
                        "requirements notebooks/tier2/requirements.txt on quay.io/jupyter/minimal-notebook:latest",
                    ),
                ),
            ),
            ("succeeded-bad-digest", succeeded(None, None)),
            (
                "failed",
                failed(
                    "Failed",
                    "Tasks Completed: 1 (Failed: 1, Cancelled 0), Skipped: 0; clone failed for https://***@github.com/o/r.git",
                ),
            ),
            (
                "timeout",
                failed(
                    "PipelineRunTimeout",
                    "PipelineRun \"nbv-build-x\" failed to finish within \"15m0s\"",
                ),
            ),
            (
                "cancelled",
                failed("Cancelled", "PipelineRun \"nbv-build-x\" was cancelled"),
            ),
        ],
    );
}

#[test]
fn shipwright_build_runs() {
    let table = [
        ("created", pending()),
        ("pending", pending()),
        ("running", running()),
        (
            "succeeded",
            succeeded(
                Some("sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"),
                None,
            ),
        ),
        (
            "failed",
            failed(
                "DockerfileNotFound",
                "buildrun step build-and-push failed in pod nbv-build-x-pod, for detailed information: kubectl --namespace ml logs nbv-build-x-pod --container=step-build-and-push\n\
                 step-build-and-push: no Dockerfile in context notebooks/tier2 (password=*** was set)",
            ),
        ),
        (
            "timeout",
            failed(
                "BuildRunTimeout",
                "BuildRun nbv-build-x failed to finish within 15m0s",
            ),
        ),
        (
            "cancelled",
            failed(
                "BuildRunCanceled",
                "The user requested the BuildRun to be canceled.",
            ),
        ),
    ];
    check(Route::Shipwright, "shipwright.yaml", &table);
    check(Route::ShipwrightS2i, "shipwright.yaml", &table);
}

#[test]
fn openshift_builds() {
    check(
        Route::OpenShift,
        "openshift.yaml",
        &[
            ("new", pending()),
            ("pending", pending()),
            ("running", running()),
            (
                "complete",
                succeeded(
                    Some("sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"),
                    None,
                ),
            ),
            (
                "failed",
                failed(
                    "GenericBuildFailed",
                    "Generic Build failure - check logs for details.\nERROR: Could not find a version that satisfies the requirement torch==0.0.1",
                ),
            ),
            (
                "error",
                failed("FetchSourceFailed", "Failed to fetch the input source."),
            ),
            (
                "timeout",
                failed(
                    "DeadlineExceeded",
                    "Pod was active on the node longer than the specified deadline",
                ),
            ),
            (
                "cancelled",
                failed("CancelledBuild", "The build was cancelled by the user."),
            ),
        ],
    );
}

#[test]
fn kaniko_pods() {
    check(
        Route::Kaniko,
        "kaniko.yaml",
        &[
            ("created", pending()),
            ("scheduling", pending()),
            ("cloning", running()),
            ("building", running()),
            (
                "succeeded",
                succeeded(
                    Some("sha256:89abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567"),
                    Some("requirements notebooks/requirements.txt"),
                ),
            ),
            (
                "clone-failed",
                failed(
                    "CloneFailed",
                    "clone failed (Error)\nfatal: could not read Username for 'https://github.com': terminal prompts disabled",
                ),
            ),
            (
                "prepare-failed",
                failed(
                    "PrepareFailed",
                    "prepare failed (Error)\nno requirements file found (searched notebooks/tier2, notebooks, .)",
                ),
            ),
            (
                "build-failed",
                failed(
                    "BuildFailed",
                    "kaniko failed (Error)\nINFO[0010] RUN pip install -r requirements.txt\nERROR: No matching distribution found for torch==0.0.1\nerror building image: error building stage: exit status 1",
                ),
            ),
            (
                "timeout",
                failed(
                    "DeadlineExceeded",
                    "the build did not finish within its timeout\nPod was active on the node longer than the specified deadline",
                ),
            ),
        ],
    );
}

#[test]
fn a_long_log_keeps_its_tail_redacted_within_the_bound() {
    let log = format!(
        "{}\nclone https://bot:ghp_abcdef@github.com/o/r.git\nthe last line",
        "pip noise\n".repeat(2000)
    );
    let objects: [(Route, Value); 2] = [
        (
            Route::OpenShift,
            json!({"status": {"phase": "Failed", "reason": "GenericBuildFailed", "logSnippet": log}}),
        ),
        (
            Route::Kaniko,
            json!({"status": {"phase": "Failed", "containerStatuses": [
                {"name": "kaniko", "state": {"terminated": {"exitCode": 1, "message": log}}}
            ]}}),
        ),
    ];
    for (route, object) in objects {
        let BuildObserved::Failed { message, .. } = observe(route, &object) else {
            panic!("{route}: not a failure");
        };
        assert!(
            message.len() <= MAX_STATUS_TEXT,
            "{route}: {} bytes",
            message.len()
        );
        assert!(
            message.ends_with("https://***@github.com/o/r.git\nthe last line"),
            "{route}"
        );
        assert!(!message.contains("ghp_abcdef"), "{route}");
    }
}

#[test]
fn a_reason_is_bounded_too() {
    let reason = "R".repeat(10_000);
    let object = json!({"status": {"phase": "Failed", "reason": reason}});
    let BuildObserved::Failed { reason, .. } = observe(Route::OpenShift, &object) else {
        panic!("not a failure");
    };
    assert!(reason.len() <= 128);
}
