//! Where validation Pods are scheduled: the admin's placement merged with the job's.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, Toleration};

use crate::api::PodConfig;

/// Where validation Pods are scheduled, before the job's own `podConfig` is merged in
/// ([`Placement::merged_with`]).
///
/// # Examples
///
/// ```
/// use nbv_core::pod::PodDefaults;
///
/// let defaults = PodDefaults::from_yaml("runtimeClassName: nvidia")?;
/// assert_eq!(defaults.placement.runtime_class_name.as_deref(), Some("nvidia"));
/// # Ok::<(), nbv_core::pod::InvalidPodDefaults>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    /// `nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
    /// `tolerations`.
    pub tolerations: Vec<Toleration>,
    /// `affinity`.
    pub affinity: Option<Affinity>,
    /// `priorityClassName`.
    pub priority_class_name: Option<String>,
    /// `runtimeClassName` (for example the NVIDIA runtime of a GPU pool).
    pub runtime_class_name: Option<String>,
}

impl Placement {
    /// The placement of the Pod of a job with `config`, where these are the defaults:
    ///
    /// - `nodeSelector`: both, by key; the job's value wins for a key both set;
    /// - `tolerations`: the defaults' then the job's, each once;
    /// - `affinity`: for each of `nodeAffinity`, `podAffinity` and `podAntiAffinity`,
    ///   the job's when it gives one, else the defaults';
    /// - `priorityClassName`, `runtimeClassName`: the defaults' (a job has neither).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::PodConfig;
    /// use nbv_core::pod::Placement;
    ///
    /// let defaults = Placement {
    ///     node_selector: [("pool".to_owned(), "notebooks".to_owned())].into(),
    ///     ..Placement::default()
    /// };
    /// let job = PodConfig {
    ///     node_selector: Some([("pool".to_owned(), "gpu".to_owned()), ("zone".to_owned(), "a".to_owned())].into()),
    ///     ..PodConfig::default()
    /// };
    /// let merged = defaults.merged_with(&job);
    /// assert_eq!(merged.node_selector["pool"], "gpu");
    /// assert_eq!(merged.node_selector["zone"], "a");
    /// ```
    pub fn merged_with(&self, config: &PodConfig) -> Placement {
        let mut node_selector = self.node_selector.clone();
        node_selector.extend(
            config
                .node_selector
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        let mut tolerations = self.tolerations.clone();
        for toleration in config.tolerations.iter().flatten() {
            if !tolerations.contains(toleration) {
                tolerations.push(toleration.clone());
            }
        }
        let affinity = match (&self.affinity, &config.affinity) {
            (None, job) => job.clone(),
            (defaults, None) => defaults.clone(),
            (Some(defaults), Some(job)) => Some(Affinity {
                node_affinity: job
                    .node_affinity
                    .clone()
                    .or_else(|| defaults.node_affinity.clone()),
                pod_affinity: job
                    .pod_affinity
                    .clone()
                    .or_else(|| defaults.pod_affinity.clone()),
                pod_anti_affinity: job
                    .pod_anti_affinity
                    .clone()
                    .or_else(|| defaults.pod_anti_affinity.clone()),
            }),
        };
        Placement {
            node_selector,
            tolerations,
            affinity,
            priority_class_name: self.priority_class_name.clone(),
            runtime_class_name: self.runtime_class_name.clone(),
        }
    }
}
