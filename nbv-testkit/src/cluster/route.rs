//! URL routing, as the API server lays out its paths.

use std::collections::BTreeMap;

use super::error::ApiError;

/// A discovery document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Discovery {
    /// `/version`
    Version,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/{group}`
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`
    Resources { group: String, version: String },
}

/// A request for a resource or one of its objects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

/// Where a path leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    Discovery(Discovery),
    Resource(ResourcePath),
}

fn not_found(path: &str) -> ApiError {
    ApiError::new(
        super::Reason::NotFound,
        format!("the server could not find the requested resource (path {path})"),
    )
}

/// Routes a request path (without query).
pub(crate) fn route(path: &str) -> Result<Route, ApiError> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(not_found(path));
    }
    let (group, version, rest) = match segments.as_slice() {
        ["version"] => return Ok(Route::Discovery(Discovery::Version)),
        ["api"] => return Ok(Route::Discovery(Discovery::CoreVersions)),
        ["apis"] => return Ok(Route::Discovery(Discovery::Groups)),
        ["apis", group] => return Ok(Route::Discovery(Discovery::Group((*group).to_owned()))),
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Err(not_found(path)),
    };
    let mut resource = ResourcePath {
        group: group.to_owned(),
        version: version.to_owned(),
        ..ResourcePath::default()
    };
    // `namespaces/{ns}` alone, or followed by `status`/`finalize`, is the Namespace object
    // itself; followed by anything else it scopes a namespaced resource.
    let tail = match rest {
        [] => {
            return Ok(Route::Discovery(Discovery::Resources {
                group: group.to_owned(),
                version: version.to_owned(),
            }));
        }
        ["namespaces", ns, plural, tail @ ..] if !matches!(*plural, "status" | "finalize") => {
            resource.namespace = Some((*ns).to_owned());
            resource.plural = (*plural).to_owned();
            tail
        }
        [plural, tail @ ..] => {
            resource.plural = (*plural).to_owned();
            tail
        }
    };
    match tail {
        [] => {}
        [name] => resource.name = Some((*name).to_owned()),
        [name, sub] => {
            resource.name = Some((*name).to_owned());
            resource.subresource = Some((*sub).to_owned());
        }
        _ => return Err(not_found(path)),
    }
    Ok(Route::Resource(resource))
}

/// Decodes a query string into its parameters (the last value wins on repeats).
pub(crate) fn parse_query(query: Option<&str>) -> BTreeMap<String, String> {
    query
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match route(path) {
            Ok(Route::Resource(r)) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn core_and_group_paths() {
        let r = res("/api/v1/namespaces/ml/pods/web/status");
        assert_eq!(
            (r.group.as_str(), r.version.as_str(), r.plural.as_str()),
            ("", "v1", "pods")
        );
        assert_eq!(r.namespace.as_deref(), Some("ml"));
        assert_eq!(r.name.as_deref(), Some("web"));
        assert_eq!(r.subresource.as_deref(), Some("status"));

        let r = res("/apis/apps/v1/deployments");
        assert_eq!(
            (r.group.as_str(), r.plural.as_str()),
            ("apps", "deployments")
        );
        assert!(r.namespace.is_none() && r.name.is_none());
    }

    #[test]
    fn namespace_objects_are_not_scopes() {
        let r = res("/api/v1/namespaces/ml");
        assert_eq!(
            (r.plural.as_str(), r.name.as_deref()),
            ("namespaces", Some("ml"))
        );
        assert!(r.namespace.is_none());
        let r = res("/api/v1/namespaces/ml/status");
        assert_eq!(r.subresource.as_deref(), Some("status"));
        assert!(r.namespace.is_none());
        let r = res("/api/v1/namespaces/ml/configmaps");
        assert_eq!(r.namespace.as_deref(), Some("ml"));
        assert_eq!(r.plural, "configmaps");
    }

    #[test]
    fn discovery_and_unknown_paths() {
        assert_eq!(route("/version"), Ok(Route::Discovery(Discovery::Version)));
        assert_eq!(
            route("/apis/apps/v1"),
            Ok(Route::Discovery(Discovery::Resources {
                group: "apps".into(),
                version: "v1".into()
            }))
        );
        for bad in [
            "/",
            "/healthz",
            "/api/v1/a/b/c/d",
            "/apis//v1/x",
            "/api/v1/namespaces/a/pods/b/c/d",
        ] {
            assert!(route(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn query_decoding() {
        let q = parse_query(Some("labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=true"));
        assert_eq!(
            q.get("labelSelector").map(String::as_str),
            Some("app=web,tier in (a)")
        );
        assert_eq!(q.get("watch").map(String::as_str), Some("true"));
        assert!(parse_query(None).is_empty());
    }
}
