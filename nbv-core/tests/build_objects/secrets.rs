//! No credential of the job reaches a build object: a clone URL that carries one is
//! refused on every route, and nothing else of the job looks like one.

use nbv_core::build::{BuildDefaults, PlanError, Route, Strategy, build_objects};
use nbv_core::pod::PodDefaults;
use nbv_core::redact::redact_secrets;
use proptest::prelude::*;
use serde_json::Value;

use crate::plan;

const ROUTES: [Route; 5] = [
    Route::Tekton,
    Route::Kaniko,
    Route::Shipwright,
    Route::OpenShift,
    Route::ShipwrightS2i,
];

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

proptest! {
    #[test]
    fn a_credential_in_the_url_never_reaches_an_object(
        route in proptest::sample::select(ROUTES.to_vec()),
        token in "[A-Za-z0-9_]{12,24}",
        user in proptest::option::of("[a-z]{1,8}"),
        host in "[a-z]{1,10}\\.(com|org|io)",
        secret in proptest::option::of("[a-z][a-z0-9-]{0,20}"),
    ) {
        let mut plan = plan(Strategy::Tekton);
        let userinfo = match &user {
            Some(user) => format!("{user}:{token}"),
            None => token.clone(),
        };
        plan.git.url = format!("https://{userinfo}@{host}/o/models.git");
        plan.git.credentials_secret = secret;
        let refused = build_objects(&plan, route, &PodDefaults::default(), &BuildDefaults::default());
        let Err(PlanError::Field { field, problem }) = refused else {
            panic!("{route} accepted {}", plan.git.url);
        };
        prop_assert_eq!(field, "spec.notebook.git.url");
        prop_assert!(!problem.contains(&token), "the refusal repeats the token: {}", problem);
    }

    #[test]
    fn no_string_of_an_object_needs_redacting(
        route in proptest::sample::select(ROUTES.to_vec()),
        host in "[a-z]{1,10}\\.(com|org|io)",
        ssh in any::<bool>(),
        secret in "[a-z][a-z0-9-]{0,20}",
        dir in "[a-z]{1,8}",
    ) {
        let mut plan = plan(Strategy::Tekton);
        plan.git.url = if ssh {
            format!("git@{host}:o/models.git")
        } else {
            format!("https://{host}/o/models.git")
        };
        plan.git.credentials_secret = Some(secret.clone());
        plan.source.requirements_file = Some(format!("{dir}/requirements.txt"));
        let objects = build_objects(&plan, route, &PodDefaults::default(), &BuildDefaults::default())
            .unwrap_or_else(|e| panic!("{route}: {e}"));
        let mut all = Vec::new();
        for (_, body) in &objects {
            strings(body, &mut all);
        }
        // The Secret is referenced by its name on every route; the name is no credential.
        prop_assert!(all.contains(&secret), "{} does not name the Secret", route);
        for text in all {
            prop_assert_eq!(redact_secrets(&text), text.clone(), "{} would need redacting", text);
        }
    }
}
