//! The end-to-end suite: `nbv run` as a process, as a user runs it, against a real
//! Kubernetes API server.
//!
//! Its tests are `#[ignore]`d, so that `cargo test` lists them as not run;
//! `scripts/control-plane e2e` brings up etcd and kube-apiserver on loopback and runs
//! them with `--ignored` (as `.ci/run` does). `NBV_E2E=1` with a kubeconfig runs them
//! against any other cluster; asked for without it (or the model scenarios without
//! `NBV_E2E_MODEL_PYTHON`, the nbval scenario without `NBV_NBVAL_SAMPLES`), they fail,
//! naming what is missing. See docs/testing.md.
//!
//! The control plane has no scheduler, controller-manager or kubelet: the suite plays
//! the kubelet for nbv's validation Pods (`support::kubelet`, running the Pods' own
//! commands under a real papermill), Tekton's and Shipwright's controllers for nbv's
//! image builds (`support::builds`), Argo CD and KServe where a scenario needs them,
//! the other controller of `--gitops-only`, and OpenShift's SCC admission and a policy
//! engine as admission webhooks (`support::openshift`).

mod support;

mod argocd;
mod builds;
mod checks;
mod gitops;
mod golden;
mod leader;
mod load;
mod memory;
mod models;
mod nbval;
mod notebooks;
mod observability;
mod openshift;
// Compares with `nbv simulate`, which exists only with the `simulate` feature.
#[cfg(feature = "simulate")]
mod parity;
mod refusals;
mod resilience;
