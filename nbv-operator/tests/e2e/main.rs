//! The end-to-end suite: `nbv run` as a process, as a user runs it, against a real
//! Kubernetes API server.
//!
//! Its scenarios are `#[ignore]`d, so that `cargo test` lists them as not run (its pure
//! tests are not, and run everywhere); `scripts/control-plane e2e` brings up etcd and
//! kube-apiserver on loopback and runs them with `--ignored` (as `.ci/run` does).
//! `NBV_E2E=1` with a kubeconfig runs them against any other cluster. Asked for without
//! what they need (a cluster, the papermill or model server virtualenv, nbval's
//! samples, Prometheus; on another cluster, the suite's own control plane for the
//! restart and audit-log scenarios), they fail, naming what is missing: no scenario
//! returns early and passes. See docs/testing.md.
//!
//! The control plane has no scheduler, controller-manager or kubelet: the suite plays
//! the kubelet for nbv's validation Pods (`support::kubelet`, running the Pods' own
//! commands under a real papermill), Tekton's and Shipwright's controllers for nbv's
//! image builds (`support::builds`), Argo CD and KServe where a scenario needs them,
//! the other controller of `--gitops-only`, and OpenShift's SCC admission and a policy
//! engine as admission webhooks (`support::openshift`).

mod support;

mod actions;
mod argocd;
mod availability;
mod builds;
mod chart;
mod checks;
mod gitops;
mod golden;
mod leader;
mod load;
mod manager;
mod memory;
mod metrics_access;
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
mod wire;
