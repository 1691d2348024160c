//! The repository as the build gets it: nbv's own `clone` and `prepare` containers
//! where nbv clones, and the checks every route makes of `spec.notebook.git`.

use k8s_openapi::api::core::v1::{Container, EnvVar, Volume};

pub(super) use crate::build::PREPARED_DOCKERFILE;
use crate::build::{BuildPlan, PlanError};
use crate::pod::{PodDefaults, PodSpecError, build_clone};
use crate::redact::redact_secrets;

/// nbv in nbv's own image.
const NBV_IN_IMAGE: &str = "/nbv";
/// The variable `nbv build prepare` reads its [`SourceConfig`](crate::build::SourceConfig) from.
const SOURCE_ENV: &str = "NBV_BUILD";

/// The containers nbv runs before the build where it clones the repository itself.
pub(super) struct NbvSteps {
    /// `nbv pod clone`: the validation Pod's clone container.
    pub clone: Container,
    /// `nbv build prepare`: writes the Dockerfile into the checkout.
    pub prepare: Container,
    /// The Secret volume of SSH credentials, which `clone` mounts.
    pub ssh_volume: Option<Volume>,
}

/// The `clone` and `prepare` containers of `plan`, checking out into `dir` on the
/// volume `workspace` (name, mount path); `prepare` writes its one-line summary to
/// `summary`.
pub(super) fn nbv_steps(
    plan: &BuildPlan,
    dir: &'static str,
    workspace: (&'static str, &'static str),
    summary: &str,
    pods: &PodDefaults,
) -> Result<NbvSteps, PlanError> {
    let (clone, ssh_volume) = build_clone(&plan.git, dir, workspace, pods).map_err(git_error)?;
    let mut prepare = clone.clone();
    prepare.name = "prepare".to_owned();
    prepare.command = Some(
        [
            NBV_IN_IMAGE,
            "build",
            "prepare",
            "--source",
            dir,
            "--summary",
            summary,
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    let source = serde_json::to_string(&plan.source).expect("a SourceConfig is JSON");
    // Only what prepare reads: none of clone's credentials.
    prepare.env = Some(vec![env(SOURCE_ENV, &source), env("HOME", "/tmp")]);
    prepare.volume_mounts = clone.volume_mounts.as_ref().map(|mounts| {
        mounts
            .iter()
            .filter(|m| m.name == workspace.0)
            .cloned()
            .collect()
    });
    Ok(NbvSteps {
        clone,
        prepare,
        ssh_volume,
    })
}

/// Checks `spec.notebook.git` as nbv's own clone would, for the routes whose build
/// system clones: the same URLs, refs and Secrets are accepted.
pub(super) fn check_source(plan: &BuildPlan, pods: &PodDefaults) -> Result<(), PlanError> {
    build_clone(
        &plan.git,
        "/workspace/repo",
        ("workspace", "/workspace"),
        pods,
    )
    .map(drop)
    .map_err(git_error)
}

/// Refuses a clone URL that carries credentials (`https://user:token@host/…`): build
/// objects are kept after the build and readable by whoever may read them in the
/// namespace, so the URL would publish them. An SSH user name (`git@host`) is not one.
pub(super) fn refuse_credentials_in_url(plan: &BuildPlan) -> Result<(), PlanError> {
    let url = &plan.git.url;
    if !carries_credentials(url) {
        return Ok(());
    }
    Err(PlanError::Field {
        field: "spec.notebook.git.url".to_owned(),
        problem: format!(
            "{:?} carries credentials, which the build's objects would show to anyone who \
             can read them; remove them from the URL, put them in a Secret and name it in \
             spec.notebook.git.credentialsSecret",
            redact_secrets(url)
        ),
    })
}

/// Whether `url` has a password or token in its user-info part.
fn carries_credentials(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        // scp-like `git@host:path`: a user name, never a password.
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return false;
    };
    // Over HTTP a user-info part is a token (`https://ghp_…@github.com`) or a user and
    // password; over SSH it is the account, unless a password follows it.
    !scheme.eq_ignore_ascii_case("ssh") || userinfo.contains(':')
}

/// A refusal of `spec.notebook.git` as the job's failure names it.
fn git_error(error: PodSpecError) -> PlanError {
    let field = error.field();
    let message = error.to_string();
    let problem = message
        .strip_prefix(&field)
        .map_or(message.as_str(), str::trim_start);
    PlanError::Field {
        problem: problem.to_owned(),
        field,
    }
}

/// An environment variable with a literal value.
pub(super) fn env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: Some(value.to_owned()),
        value_from: None,
    }
}

#[cfg(test)]
mod tests {
    use super::carries_credentials;

    #[test]
    fn user_info_with_a_secret_is_told_from_an_ssh_account() {
        for url in [
            "https://user:tok@host/r.git",
            "https://ghp_abc@github.com/o/r.git",
            "HTTP://u:p@h/r",
            "ssh://git:pw@host/r.git",
        ] {
            assert!(carries_credentials(url), "{url}");
        }
        for url in [
            "https://github.com/o/r.git",
            "ssh://git@host/o/r.git",
            "git@github.com:o/r.git",
            "https://h/r@v2.git",
        ] {
            assert!(!carries_credentials(url), "{url}");
        }
    }
}
