//! What a build system that clones the repository itself is given to build from:
//! nbv cannot search its checkout, so the job must name the Dockerfile or the
//! requirements file, and the builder reads the directory it is in.

use super::Route;
use crate::build::repo_path;
use crate::build::{BuildPlan, PlanError};

/// The requirements file's field.
const REQUIREMENTS_FIELD: &str = "spec.podConfig.buildConfig.requirementsFile";
/// The Dockerfile's field.
const DOCKERFILE_FIELD: &str = "spec.podConfig.buildConfig.dockerfile";
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
        let path = clean(DOCKERFILE_FIELD, dockerfile)?;
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
    let path = clean(REQUIREMENTS_FIELD, requirements)?;
    let dir = repo_path::parent(&path);
    let file = path[dir.len()..].trim_start_matches('/').to_owned();
    let dir = (!dir.is_empty()).then(|| dir.to_owned());
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

/// `path` of `field` made canonical, or why it is not a file of the repository (the
/// plan checks this already; the objects never rely on it).
fn clean(field: &str, path: &str) -> Result<String, PlanError> {
    repo_path::clean(path).map_err(|problem| PlanError::Field {
        field: field.to_owned(),
        problem,
    })
}
