//! Test support for nbv: run the operator and its adapters against an in-memory
//! Kubernetes API server in virtual time, without a cluster.
//!
//! - [`cluster`]: [`FakeCluster`], an in-memory API server under a real `kube::Client`,
//!   with a request log, a change history and fault injection.
//! - [`clock`]: [`clock::VirtualClock`], wall-clock time that follows Tokio's (pausable)
//!   clock.
//! - [`depth`]: what a reader bounding JSON nesting keeps (a test oracle).
//! - [`fixtures`]: manifests of jobs, trigger targets, Applications and namespaces.
//! - [`strategies`]: proptest strategies for jobs, statuses and annotations, valid and
//!   hostile.
//! - [`scenario`]: scenario files for deterministic simulation (`nbv simulate`).
//! - [`invariants`]: what must hold after any simulation, checked over the cluster's
//!   change history and request log.
//!
//! # Examples
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use nbv_testkit::FakeCluster;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cluster = FakeCluster::default();
//! cluster.apply_object(serde_json::json!({
//!     "apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "settings", "namespace": "default"},
//!     "data": {"mode": "fast"}
//! }))?;
//! let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
//! let cm = api.get("settings").await?;
//! assert_eq!(cm.data.unwrap()["mode"], "fast");
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod clock;
pub mod cluster;
pub mod depth;
pub mod fixtures;
pub mod invariants;
pub mod scenario;
pub mod schema;
pub mod strategies;

pub use cluster::FakeCluster;
