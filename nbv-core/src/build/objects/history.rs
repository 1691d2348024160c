//! The finished builds nbv keeps: the newest few of each route, for their logs and
//! status; older ones are deleted.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Route, meta, openshift};
use crate::build::{BuildObserved, observe};
use crate::io::ObjectRef;
use crate::pod::{MANAGED_BY, MANAGED_BY_LABEL};

/// The label selector of the build objects nbv made by `route`, finished or not: list
/// the kind of [`Route::watched`] with it and give the answer to [`expired`].
///
/// # Examples
///
/// ```
/// use nbv_core::build::{history_selector, Route};
///
/// assert_eq!(
///     history_selector(Route::Kaniko),
///     "app.kubernetes.io/managed-by=nbv,mlops.dev/build-strategy=kaniko"
/// );
/// ```
pub fn history_selector(route: Route) -> String {
    format!(
        "{MANAGED_BY_LABEL}={MANAGED_BY},{}={}",
        meta::BUILD_STRATEGY_LABEL,
        route.as_str()
    )
}

/// The objects to delete among `objects` (the watched objects of `route`, as listed
/// with [`history_selector`]): the finished ones older than the newest `keep` finished
/// ones (by `creationTimestamp`), never one that is still building and never the one
/// named `current` (the run's own: [`Route::watched`]'s name), with the objects that go
/// with each (the Shipwright Build of a
/// BuildRun, the BuildConfig of an OpenShift Build).
///
/// # Examples
///
/// ```
/// use nbv_core::build::{expired, Route};
/// use serde_json::json;
///
/// let run = |name: &str, created: &str, status: &str| json!({
///     "metadata": {"name": name, "namespace": "ml", "creationTimestamp": created},
///     "status": {"conditions": [{"type": "Succeeded", "status": status}]},
/// });
/// let objects = [
///     run("a", "2026-01-01T00:00:00Z", "True"),
///     run("b", "2026-01-02T00:00:00Z", "False"),
///     run("c", "2026-01-03T00:00:00Z", "True"),
///     run("d", "2026-01-04T00:00:00Z", "Unknown"),
/// ];
/// let gone = expired(Route::Tekton, &objects, 1, "b");
/// // c is the newest finished one, b is current, d is still running.
/// assert_eq!(gone.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["a"]);
/// ```
pub fn expired(route: Route, objects: &[Value], keep: usize, current: &str) -> Vec<ObjectRef> {
    let mut finished: Vec<(Option<DateTime<Utc>>, &str, &str, &Value)> = objects
        .iter()
        .filter(|o| o["kind"].as_str().is_none_or(|k| k == route.watched_kind()))
        .filter(|o| {
            matches!(
                observe(route, o),
                BuildObserved::Succeeded { .. } | BuildObserved::Failed { .. }
            )
        })
        .filter_map(|o| {
            let name = o["metadata"]["name"].as_str()?;
            let namespace = o["metadata"]["namespace"].as_str()?;
            let created = o["metadata"]["creationTimestamp"]
                .as_str()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc));
            Some((created, name, namespace, o))
        })
        .collect();
    // Newest first; a name breaks a tie so that the answer does not depend on order.
    finished.sort_by(|a, b| (b.0, b.1).cmp(&(a.0, a.1)));
    let mut gone = Vec::new();
    for (_, name, namespace, object) in finished.into_iter().skip(keep) {
        if name == current {
            continue;
        }
        gone.push(ObjectRef::namespaced(
            route.api(),
            route.watched_kind(),
            namespace,
            name,
        ));
        let companion = match route {
            Route::Shipwright | Route::ShipwrightS2i => object["spec"]["build"]["name"]
                .as_str()
                .map(|build| ("Build", build)),
            Route::OpenShift => openshift::build_config_of(object).map(|c| ("BuildConfig", c)),
            Route::Tekton | Route::Kaniko => None,
        };
        if let Some((kind, companion)) = companion.filter(|(_, c)| *c != current) {
            gone.push(ObjectRef::namespaced(
                route.api(),
                kind,
                namespace,
                companion,
            ));
        }
    }
    gone
}
