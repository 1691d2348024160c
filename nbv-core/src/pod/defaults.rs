//! What a cluster admin sets for every validation Pod ([`PodDefaults`]), and the
//! decisions that depend on the platform (the clone container's user).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::placement::Placement;
use super::policy::PodPolicy;

/// How long a validation Pod may wait on an image pull or a missing Secret before the
/// attempt fails: long enough for a registry hiccup or for a Secret applied in the same
/// sync as the job, short enough that a typo is reported within minutes.
pub const DEFAULT_START_GRACE: Duration = Duration::from_secs(5 * 60);

/// The default image of nbv's own containers in the validation Pod (`nbv-tools`,
/// `clone`): nbv's image of this version. Releases set it by digest
/// (`nbv run --nbv-image`); a mirror's copy goes in the same place.
pub const DEFAULT_NBV_IMAGE: &str = concat!("ghcr.io/nbv-dev/nbv:", env!("CARGO_PKG_VERSION"));

/// `nobody`: the user [`CloneUser::Auto`] runs nbv's own containers as outside
/// OpenShift. Every Debian-based image, nbv's and mirrors' rebuilds of it, knows it
/// (ssh refuses to run as a user without an entry in `/etc/passwd`), and
/// `runAsNonRoot` admits it whatever the image's `USER` says.
pub const NOBODY_UID: i64 = 65534;

/// The largest user id Kubernetes accepts in `runAsUser`.
pub const MAX_UID: i64 = i32::MAX as i64;

/// The platform the operator runs on, detected once at start
/// ([`Platform::serving`]).
///
/// # Examples
///
/// ```
/// use nbv_core::pod::Platform;
///
/// assert_eq!(Platform::default(), Platform::Kubernetes);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Platform {
    /// Plain Kubernetes: Pod Security admission, no user assigned by the platform.
    #[default]
    Kubernetes,
    /// OpenShift (the API group `security.openshift.io` is served): the security
    /// context constraints assign each namespace a range of user ids, give a Pod that
    /// names no user the first of them, and refuse any fixed id outside the range.
    OpenShift,
}

/// Which `runAsUser` the clone containers get (the file's `clone.user`):
/// [`CloneUser::run_as_user`] decides, given the platform.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::{CloneUser, PodDefaults};
///
/// let defaults = PodDefaults::from_yaml("clone: {user: 1001}")?;
/// assert_eq!(defaults.clone_user, CloneUser::Uid(1001));
/// # Ok::<(), nbv_core::pod::InvalidPodDefaults>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CloneUser {
    /// None on OpenShift (the platform assigns one), [`NOBODY_UID`] elsewhere.
    #[default]
    Auto,
    /// Never set: the image's `USER`, or the platform's choice. For clone images that
    /// run as a non-root user of their own.
    Unset,
    /// This user id, on every platform.
    Uid(i64),
}

impl CloneUser {
    /// The `runAsUser` of the clone containers on `platform`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::{CloneUser, Platform, NOBODY_UID};
    ///
    /// assert_eq!(CloneUser::Auto.run_as_user(Platform::OpenShift), None);
    /// assert_eq!(CloneUser::Auto.run_as_user(Platform::Kubernetes), Some(NOBODY_UID));
    /// assert_eq!(CloneUser::Uid(1001).run_as_user(Platform::OpenShift), Some(1001));
    /// assert_eq!(CloneUser::Unset.run_as_user(Platform::Kubernetes), None);
    /// ```
    pub fn run_as_user(self, platform: Platform) -> Option<i64> {
        match (self, platform) {
            (CloneUser::Auto, Platform::OpenShift) | (CloneUser::Unset, _) => None,
            (CloneUser::Auto, Platform::Kubernetes) => Some(NOBODY_UID),
            (CloneUser::Uid(uid), _) => Some(uid),
        }
    }
}

/// Operator-wide settings of validation Pods: the file given by `nbv run
/// --pod-defaults` ([`PodDefaults::from_yaml`]) and the platform detected at start.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::{CloneUser, PodDefaults, Platform};
///
/// let defaults = PodDefaults { nbv_image: "registry.example.com/nbv:1".into(), ..PodDefaults::default() };
/// assert_eq!(defaults.clone_user, CloneUser::Auto);
/// assert_eq!(defaults.platform, Platform::Kubernetes);
/// assert_eq!(defaults.clone_run_as_user(), Some(65534));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PodDefaults {
    /// nbv's image, run by the Pod's `nbv-tools` and clone init containers: its `/nbv`
    /// is copied into the Pod, and its `git` and `ssh` clone.
    pub nbv_image: String,
    /// The clone containers' user setting.
    pub clone_user: CloneUser,
    /// The platform, which [`CloneUser::Auto`] depends on.
    pub platform: Platform,
    /// Requests and limits of each clone container.
    pub clone_resources: ResourceRequirements,
    /// Requests and limits of the notebook container, for each resource the job's
    /// `podConfig.resources` does not name ([`merge_resources`](super::merge_resources)).
    pub notebook_resources: ResourceRequirements,
    /// `imagePullSecrets` of every Pod (names of Secrets in the job's namespace).
    pub image_pull_secrets: Vec<String>,
    /// Labels added to every Pod; nbv's own labels are never among them.
    pub labels: BTreeMap<String, String>,
    /// Annotations added to every Pod.
    pub annotations: BTreeMap<String, String>,
    /// Scheduling, merged with the job's `podConfig`.
    pub placement: Placement,
    /// How long a Pod may wait on an image pull or a container it cannot configure
    /// before [`observe_pod`](super::observe_pod) fails the attempt.
    pub start_grace: Duration,
    /// What jobs may put in their Pods (the policy flags of `nbv run`); the default
    /// allows everything a job can express.
    pub policy: PodPolicy,
}

impl PodDefaults {
    /// The `runAsUser` of the clone containers: [`CloneUser::run_as_user`] on the
    /// detected platform.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::{Platform, PodDefaults};
    ///
    /// let openshift = PodDefaults { platform: Platform::OpenShift, ..PodDefaults::default() };
    /// assert_eq!(openshift.clone_run_as_user(), None);
    /// ```
    pub fn clone_run_as_user(&self) -> Option<i64> {
        self.clone_user.run_as_user(self.platform)
    }
}

/// `requests` and `limits` from `(resource, quantity)` pairs.
pub(super) fn requirements(
    requests: &[(&str, &str)],
    limits: &[(&str, &str)],
) -> ResourceRequirements {
    let map = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Quantity((*v).to_owned())))
            .collect::<BTreeMap<_, _>>()
    };
    ResourceRequirements {
        requests: Some(map(requests)),
        limits: Some(map(limits)),
        ..ResourceRequirements::default()
    }
}

impl Default for PodDefaults {
    /// The clone containers get what a shallow clone of a large repository needs; the
    /// notebook container what a small notebook needs: limits on every container, so
    /// that a namespace whose ResourceQuota covers limits admits the Pod.
    fn default() -> Self {
        PodDefaults {
            nbv_image: DEFAULT_NBV_IMAGE.to_owned(),
            clone_user: CloneUser::Auto,
            platform: Platform::Kubernetes,
            clone_resources: requirements(
                &[("cpu", "100m"), ("memory", "128Mi")],
                &[("cpu", "1"), ("memory", "1Gi")],
            ),
            notebook_resources: requirements(
                &[("cpu", "500m"), ("memory", "1Gi")],
                &[("cpu", "2"), ("memory", "4Gi")],
            ),
            image_pull_secrets: Vec::new(),
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            placement: Placement::default(),
            start_grace: DEFAULT_START_GRACE,
            policy: PodPolicy::default(),
        }
    }
}

/// The API group whose presence tells OpenShift apart: its security context
/// constraints.
pub const OPENSHIFT_SECURITY_GROUP: &str = "security.openshift.io";

impl Platform {
    /// The platform of a cluster that serves the API groups `groups` (the names of
    /// its discovery document, `/apis`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::Platform;
    ///
    /// assert_eq!(Platform::serving(["apps", "security.openshift.io"]), Platform::OpenShift);
    /// assert_eq!(Platform::serving(["apps", "batch"]), Platform::Kubernetes);
    /// ```
    pub fn serving<'a>(groups: impl IntoIterator<Item = &'a str>) -> Platform {
        if groups.into_iter().any(|g| g == OPENSHIFT_SECURITY_GROUP) {
            Platform::OpenShift
        } else {
            Platform::Kubernetes
        }
    }
}
