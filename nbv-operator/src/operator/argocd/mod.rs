//! Finding Argo CD and what nbv may read of it, at start.
//!
//! - [`namespace`]: where Argo CD runs when `--argocd-namespace` does not say
//!   (`argocd`, then OpenShift GitOps' `openshift-gitops`);
//! - [`tracking_settings`]: how Argo CD tracks resources, from the flags, the Argo CD
//!   operator's `ArgoCD` resource, or `argocd-cm`;
//! - [`AccessWatch`]: whether nbv may read `argocd-cm` and the AppProjects there (the
//!   Role of `config/rbac/argocd_role.yaml`, a separate install step under OLM).

mod access;
pub mod namespace;
mod tracking;

pub use access::AccessWatch;
pub use namespace::ARGOCD_CM;
pub use tracking::{argocd_resource, tracking_settings};
