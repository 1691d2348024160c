//! The notebook container's requests and limits: the job's, completed from the Pod
//! defaults.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::syntax::quantity_value;

/// The requests and limits of the notebook container of a job that asks for `job`
/// (`podConfig.resources`), where the admin configured `defaults`.
///
/// Resource by resource (`cpu`, `memory`, `nvidia.com/gpu`, …):
///
/// - a quantity the job gives is kept as it is;
/// - a limit it does not give comes from `defaults`, raised to the job's request when
///   it is below it (the API server refuses a request above its limit);
/// - a request it does not give comes from `defaults` only when the job gives no limit
///   either: with a limit alone, the API server sets the request to the limit, as the
///   job asked;
/// - resources only `defaults` names are added as configured.
///
/// So a job that asks for more memory gets it, and every container still has limits
/// for a namespace whose ResourceQuota demands them.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::ResourceRequirements;
/// use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
/// use nbv_core::pod::merge_resources;
///
/// let q = |s: &str| Quantity(s.to_owned());
/// let defaults = ResourceRequirements {
///     requests: Some([("cpu".to_owned(), q("500m")), ("memory".to_owned(), q("1Gi"))].into()),
///     limits: Some([("cpu".to_owned(), q("2")), ("memory".to_owned(), q("4Gi"))].into()),
///     ..Default::default()
/// };
/// let job = ResourceRequirements {
///     requests: Some([("memory".to_owned(), q("8Gi"))].into()),
///     ..Default::default()
/// };
/// let merged = merge_resources(Some(&job), &defaults);
/// let limits = merged.limits.unwrap();
/// assert_eq!(limits["memory"], q("8Gi")); // raised to the job's request
/// assert_eq!(limits["cpu"], q("2"));
/// assert_eq!(merged.requests.unwrap()["cpu"], q("500m"));
/// ```
pub fn merge_resources(
    job: Option<&ResourceRequirements>,
    defaults: &ResourceRequirements,
) -> ResourceRequirements {
    let empty = BTreeMap::new();
    let side = |r: Option<&ResourceRequirements>, limits: bool| {
        r.and_then(|r| if limits { &r.limits } else { &r.requests }.as_ref())
            .unwrap_or(&empty)
            .clone()
    };
    let (job_requests, job_limits) = (side(job, false), side(job, true));
    let mut requests = job_requests.clone();
    let mut limits = job_limits.clone();
    for (name, default) in side(Some(defaults), false) {
        if !job_requests.contains_key(&name) && !job_limits.contains_key(&name) {
            requests.insert(name, default);
        }
    }
    for (name, default) in side(Some(defaults), true) {
        if job_limits.contains_key(&name) {
            continue;
        }
        let bounded = match job_requests.get(&name) {
            Some(request) if compare(&default, request).is_some_and(|o| o.is_lt()) => {
                request.clone()
            }
            _ => default,
        };
        limits.insert(name, bounded);
    }
    ResourceRequirements {
        requests: (!requests.is_empty()).then_some(requests),
        limits: (!limits.is_empty()).then_some(limits),
        claims: job.and_then(|j| j.claims.clone()),
    }
}

/// How `a` compares with `b`; `None` when either is not a quantity.
fn compare(a: &Quantity, b: &Quantity) -> Option<std::cmp::Ordering> {
    quantity_value(&a.0)?.partial_cmp(&quantity_value(&b.0)?)
}
