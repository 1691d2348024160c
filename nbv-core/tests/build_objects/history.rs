//! Cancelling a build, and the finished builds kept.

use nbv_core::build::{Route, Strategy, cancel, expired, history_selector};
use nbv_core::io::{ObjectRef, Request, Subresource};
use serde_json::{Value, json};

use crate::plan;

#[test]
fn each_build_system_is_cancelled_its_own_way() {
    let plan = plan(Strategy::Tekton);
    let patch = |route: Route| match cancel(route, &plan) {
        Request::Patch {
            object,
            subresource: Subresource::Object,
            patch,
        } => {
            assert_eq!(object, route.watched(&plan), "{route}");
            patch
        }
        other => panic!("{route}: {other}"),
    };
    assert_eq!(
        patch(Route::Tekton),
        json!({"spec": {"status": "Cancelled"}})
    );
    for route in [Route::Shipwright, Route::ShipwrightS2i] {
        assert_eq!(patch(route), json!({"spec": {"state": "BuildRunCanceled"}}));
    }
    assert_eq!(
        patch(Route::OpenShift),
        json!({"status": {"cancelled": true}})
    );
    assert_eq!(
        cancel(Route::Kaniko, &plan),
        Request::Delete {
            object: ObjectRef::namespaced("v1", "Pod", "ml", plan.name.clone()),
            uid: None
        }
    );
}

#[test]
fn the_selector_finds_one_route_of_nbv() {
    assert_eq!(
        history_selector(Route::Tekton),
        "app.kubernetes.io/managed-by=nbv,mlops.dev/build-strategy=tekton"
    );
    assert_ne!(
        history_selector(Route::Shipwright),
        history_selector(Route::ShipwrightS2i)
    );
}

/// A watched object of `route` created on day `day`, `finished` or not.
fn object(route: Route, name: &str, day: u32, finished: bool) -> Value {
    let created = format!("2026-01-{day:02}T00:00:00Z");
    let metadata = json!({"name": name, "namespace": "ml", "creationTimestamp": created});
    let (condition, phase) = if finished {
        ("True", "Complete")
    } else {
        ("Unknown", "Running")
    };
    match route {
        Route::Tekton => json!({"metadata": metadata,
            "status": {"conditions": [{"type": "Succeeded", "status": condition, "reason": "Running"}]}}),
        Route::Shipwright | Route::ShipwrightS2i => json!({"metadata": metadata,
            "spec": {"build": {"name": name}},
            "status": {"conditions": [{"type": "Succeeded", "status": condition, "reason": "Running"}]}}),
        Route::OpenShift => {
            let config = name.trim_end_matches("-1");
            let mut metadata = metadata;
            metadata["annotations"] = json!({"openshift.io/build-config.name": config});
            json!({"metadata": metadata, "status": {"phase": phase}})
        }
        Route::Kaniko => json!({"metadata": metadata,
            "status": {"phase": if finished { "Failed" } else { "Running" }}}),
    }
}

#[test]
fn the_newest_finished_builds_are_kept_and_never_the_current_or_a_running_one() {
    let routes = [
        Route::Tekton,
        Route::Kaniko,
        Route::Shipwright,
        Route::OpenShift,
        Route::ShipwrightS2i,
    ];
    for route in routes {
        let name = |n: &str| {
            if route == Route::OpenShift {
                format!("{n}-1")
            } else {
                n.to_owned()
            }
        };
        // Listed in no particular order.
        let objects = [
            object(route, &name("d"), 4, true),
            object(route, &name("a"), 1, true),
            object(route, &name("old-running"), 0, false),
            object(route, &name("c"), 3, true),
            object(route, &name("b"), 2, true),
            object(route, &name("e"), 5, true),
        ];
        let gone = expired(route, &objects, 2, &name("b"));
        let watched: Vec<&str> = gone
            .iter()
            .filter(|o| o.kind == objects_kind(route))
            .map(|o| o.name.as_str())
            .collect();
        // e and d are the newest two; b is current; old-running is still building.
        assert_eq!(watched, [name("c"), name("a")], "{route}");
        let companions: Vec<(&str, &str)> = gone
            .iter()
            .filter(|o| o.kind != objects_kind(route))
            .map(|o| (o.kind.as_str(), o.name.as_str()))
            .collect();
        let expected: Vec<(&str, &str)> = match route {
            Route::Shipwright | Route::ShipwrightS2i => vec![("Build", "c"), ("Build", "a")],
            Route::OpenShift => vec![("BuildConfig", "c"), ("BuildConfig", "a")],
            Route::Tekton | Route::Kaniko => vec![],
        };
        assert_eq!(companions, expected, "{route}");
        assert!(
            gone.iter()
                .all(|o| o.namespace.as_deref() == Some("ml") && o.api_version == route.api())
        );
        assert!(
            expired(route, &objects, 10, "").is_empty(),
            "{route}: fewer than kept"
        );
        assert_eq!(
            expired(route, &objects, 0, "").len(),
            5 * (1 + expected.len() / 2),
            "{route}"
        );
    }
}

fn objects_kind(route: Route) -> &'static str {
    match route {
        Route::Tekton => "PipelineRun",
        Route::Kaniko => "Pod",
        Route::Shipwright | Route::ShipwrightS2i => "BuildRun",
        Route::OpenShift => "Build",
    }
}

proptest::proptest! {
    #[test]
    fn expiry_leaves_the_newest_finished_the_current_and_the_running(
        builds in proptest::collection::vec((1u32..28, proptest::bool::ANY), 0..12),
        keep in 0usize..5,
        current in 0usize..12,
    ) {
        let objects: Vec<Value> = builds
            .iter()
            .enumerate()
            .map(|(i, (day, finished))| object(Route::Tekton, &format!("b{i}"), *day, *finished))
            .collect();
        let current = format!("b{current}");
        let gone: Vec<String> = expired(Route::Tekton, &objects, keep, &current)
            .into_iter()
            .map(|o| o.name)
            .collect();
        // The finished builds, newest first (a name breaks a tie, the later first).
        let mut finished: Vec<(u32, String)> = builds
            .iter()
            .enumerate()
            .filter(|(_, (_, finished))| *finished)
            .map(|(i, (day, _))| (*day, format!("b{i}")))
            .collect();
        finished.sort_by(|a, b| b.cmp(a));
        let expected: Vec<String> = finished
            .into_iter()
            .skip(keep)
            .map(|(_, name)| name)
            .filter(|name| *name != current)
            .collect();
        proptest::prop_assert_eq!(gone, expected);
    }
}
