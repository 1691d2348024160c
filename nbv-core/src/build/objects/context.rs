//! What a build system that clones the repository itself is given to build from:
//! nbv cannot search its checkout, so the job must name the Dockerfile or the
//! requirements file, and the builder reads the directory it is in.

use super::Route;
use crate::build::{BuildPlan, PlanError};

/// The requirements file's field, in messages.
const REQUIREMENTS_FIELD: &str = "podConfig.buildConfig.requirementsFile";
/// The file the Python Source-to-Image builder installs.
pub(super) const S2I_REQUIREMENTS: &str = "requirements.txt";

/// What the job names for a build system that clones by itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Named {
    /// `dockerfile`: its path from the repository's root, which is the context.
    Dockerfile(String),
    /// `requirementsFile`: the directory it is in (`None`: the root), the context.
    Requirements {
        /// The directory, relative to the root.
        dir: Option<String>,
        /// The file's name.
        file: String,
    },
}

impl Named {
    /// The build's context directory (`None`: the repository's root).
    pub fn context_dir(&self) -> Option<&str> {
        match self {
            Named::Dockerfile(_) => None,
            Named::Requirements { dir, .. } => dir.as_deref(),
        }
    }
}

/// The Dockerfile or requirements file `plan` names, for `route`, whose builder reads
/// one directory.
pub(super) fn named(plan: &BuildPlan, route: Route) -> Result<Named, PlanError> {
    let source = &plan.source;
    if let Some(dockerfile) = &source.dockerfile {
        let path = relative_path(dockerfile)
            .ok_or_else(|| not_a_path("podConfig.buildConfig.dockerfile", dockerfile))?;
        return Ok(Named::Dockerfile(path));
    }
    let Some(requirements) = &source.requirements_file else {
        return Err(PlanError::Field {
            field: REQUIREMENTS_FIELD.to_owned(),
            problem: format!(
                "the {route} strategy clones the repository itself and its builder reads one \
                 directory, so nbv cannot search requirementsSources or generate a \
                 Dockerfile there; name the requirements file (requirementsFile) or the \
                 Dockerfile (dockerfile), or use the tekton or kaniko strategy, whose build \
                 searches requirementsSources",
                route = plan.strategy
            ),
        });
    };
    let path =
        relative_path(requirements).ok_or_else(|| not_a_path(REQUIREMENTS_FIELD, requirements))?;
    let (dir, file) = match path.rsplit_once('/') {
        Some((dir, file)) => (Some(dir.to_owned()), file.to_owned()),
        None => (None, path),
    };
    let s2i = matches!(route, Route::OpenShift | Route::ShipwrightS2i);
    if s2i && file != S2I_REQUIREMENTS {
        return Err(PlanError::Field {
            field: REQUIREMENTS_FIELD.to_owned(),
            problem: format!(
                "{requirements:?}: the Python Source-to-Image builder installs the file named \
                 {S2I_REQUIREMENTS} in the context directory; rename the file, or use the \
                 tekton or kaniko strategy, which install any file"
            ),
        });
    }
    Ok(Named::Requirements { dir, file })
}

/// `path` as a relative path inside the repository without `.` or `..` segments, or
/// `None` when it is none.
fn relative_path(path: &str) -> Option<String> {
    if path.starts_with('/') || path.chars().any(char::is_control) {
        return None;
    }
    let segments: Vec<&str> = path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    if segments.is_empty() || segments.contains(&"..") {
        return None;
    }
    Some(segments.join("/"))
}

fn not_a_path(field: &str, path: &str) -> PlanError {
    PlanError::Field {
        field: field.to_owned(),
        problem: format!(
            "{path:?} is not a path inside the repository; give it relative to the \
             repository's root, without '..'"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::relative_path;

    #[test]
    fn paths_stay_inside_the_repository() {
        assert_eq!(
            relative_path("./env//requirements.txt").as_deref(),
            Some("env/requirements.txt")
        );
        assert_eq!(relative_path("Dockerfile").as_deref(), Some("Dockerfile"));
        for bad in ["/etc/passwd", "../x", "a/../../x", "", ".", "a\nb"] {
            assert_eq!(relative_path(bad), None, "{bad:?}");
        }
    }
}
