//! The init containers that clone the notebook's repository and, when the job compares
//! with a golden notebook in another repository or at another ref, the golden one.
//!
//! Both run `nbv pod clone` in nbv's own image, which drives its `git` (and `ssh`):
//! no third-party image. The golden repository gets its own container: each container
//! sees only its own Secret's credentials, and the container that failed tells which
//! repository could not be cloned. The golden notebook lands in its own volume, which
//! the notebook container mounts read-only.

use k8s_openapi::api::core::v1::{
    Container, EnvVar, EnvVarSource, SecretKeySelector, SecretVolumeSource, Volume, VolumeMount,
};

use crate::api::GitSource;
use crate::redact::redact_secrets;

use super::PodDefaults;
use super::container::{
    GOLDEN_DIR, GOLDEN_VOLUME, NBV_IN_IMAGE, WORKSPACE, WORKSPACE_VOLUME, env, mount,
    restricted_container,
};
use super::error::PodSpecError;

/// Name of the init container that clones the repository.
pub const CLONE_CONTAINER: &str = "clone";
/// Name of the init container that clones the golden notebook's repository.
pub const GOLDEN_CLONE_CONTAINER: &str = "clone-golden";

/// One clone the Pod makes: which container, into which directory of the workspace,
/// with which volume for SSH credentials, for which field of the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Checkout {
    /// The init container's name.
    pub container: &'static str,
    /// Where the checkout goes (`NBV_CHECKOUT`).
    pub dir: &'static str,
    /// The volume holding [`dir`](Self::dir), and where it is mounted.
    pub volume: (&'static str, &'static str),
    /// The volume of SSH credentials, mounted in this container only.
    pub ssh_volume: &'static str,
    /// The field of the source, for messages: `spec.notebook`.
    pub origin: &'static str,
}

/// The notebook's repository.
pub(super) const NOTEBOOK_CHECKOUT: Checkout = Checkout {
    container: CLONE_CONTAINER,
    dir: "/workspace/repo",
    volume: (WORKSPACE_VOLUME, WORKSPACE),
    ssh_volume: "nbv-git-ssh",
    origin: "spec.notebook",
};
/// The golden notebook's repository, when it is not the notebook's at the same ref.
pub(super) const GOLDEN_CHECKOUT: Checkout = Checkout {
    container: GOLDEN_CLONE_CONTAINER,
    dir: "/nbv-golden/repo",
    volume: (GOLDEN_VOLUME, GOLDEN_DIR),
    ssh_volume: "nbv-golden-ssh",
    origin: "spec.goldenNotebook",
};
/// The checkouts a Pod may have, in the order they run.
pub(super) const CHECKOUTS: [Checkout; 2] = [NOTEBOOK_CHECKOUT, GOLDEN_CHECKOUT];
/// Where the SSH credentials are mounted; `nbv pod clone` reads this path.
const SSH_DIR: &str = "/etc/nbv/git-ssh";
/// Where the clone container copies the golden notebook when it is in the notebook's
/// checkout (`NBV_GOLDEN_TO`).
pub(super) const GOLDEN_COPY: &str = "/nbv-golden/golden.ipynb";
/// Transports git may use: the URL schemes nbv accepts. Without this, a URL such as
/// `ext::sh -c …` would run a command.
const ALLOWED_PROTOCOLS: &str = "https:http:ssh:git";

/// Environment variables of the clone container that carry the job's values.
pub(super) const URL_ENV: &str = "NBV_GIT_URL";
/// See [`URL_ENV`].
pub(super) const REF_ENV: &str = "NBV_GIT_REF";

/// How the clone container reaches the repository, chosen from the URL's scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum GitAccess {
    /// No credentials.
    Anonymous,
    /// HTTPS with `username`/`password` or `token` from a Secret, via a credential
    /// helper that reads the environment.
    Https {
        /// The Secret's name.
        secret: String,
    },
    /// SSH with `ssh-privatekey` (and optionally `known_hosts`) from a Secret volume.
    Ssh {
        /// The Secret's name.
        secret: String,
    },
}

/// The transport of a clone URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheme {
    Https,
    Http,
    Git,
    Ssh,
}

fn scheme(url: &str) -> Option<Scheme> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if lower.starts_with("https://") {
        Some(Scheme::Https)
    } else if lower.starts_with("http://") {
        Some(Scheme::Http)
    } else if lower.starts_with("ssh://") || url.starts_with("git@") {
        Some(Scheme::Ssh)
    } else if lower.starts_with("git://") {
        Some(Scheme::Git)
    } else {
        None
    }
}

impl GitAccess {
    /// How to clone `git`, or why it cannot be cloned safely.
    pub(super) fn of(git: &GitSource, origin: &'static str) -> Result<GitAccess, PodSpecError> {
        let bad_url = || PodSpecError::GitUrl {
            origin,
            url: redact_secrets(&git.url),
        };
        let scheme = scheme(&git.url).ok_or_else(bad_url)?;
        if git.url.chars().any(char::is_control) {
            return Err(bad_url());
        }
        if git.git_ref.is_empty() || git.git_ref.starts_with('-') {
            return Err(PodSpecError::GitRef {
                origin,
                git_ref: git.git_ref.clone(),
            });
        }
        let Some(secret) = git.credentials_secret.clone().filter(|s| !s.is_empty()) else {
            return Ok(GitAccess::Anonymous);
        };
        match scheme {
            Scheme::Https => Ok(GitAccess::Https { secret }),
            Scheme::Ssh => Ok(GitAccess::Ssh { secret }),
            Scheme::Http => Err(PodSpecError::CredentialsInClear {
                origin,
                scheme: "http",
            }),
            Scheme::Git => Err(PodSpecError::CredentialsInClear {
                origin,
                scheme: "git",
            }),
        }
    }

    /// The volume the access needs in the Pod for `checkout`, if any.
    pub(super) fn volume(&self, checkout: Checkout) -> Option<Volume> {
        let GitAccess::Ssh { secret } = self else {
            return None;
        };
        Some(Volume {
            name: checkout.ssh_volume.to_owned(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(secret.clone()),
                // The kubelet writes Secret files as root (choosing their owner,
                // `defaultUser`, is alpha), and the container runs as another user:
                // 0400 would make the key unreadable to git. The volume is mounted
                // read-only in the clone container alone, where only git runs, and ssh
                // accepts a key file it does not own.
                default_mode: Some(0o444),
                optional: Some(false),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        })
    }
}

/// The clone container of `checkout`: `nbv pod clone` in nbv's image. With
/// `golden_copy` (the golden notebook's path in this checkout), it also copies the
/// golden notebook to [`GOLDEN_COPY`].
pub(super) fn clone_container(
    git: &GitSource,
    access: &GitAccess,
    checkout: Checkout,
    golden_copy: Option<&str>,
    defaults: &PodDefaults,
) -> Container {
    let mut vars = vec![
        env(URL_ENV, &git.url),
        env(REF_ENV, &git.git_ref),
        env("NBV_CHECKOUT", checkout.dir),
        env("HOME", "/tmp"),
        env("GIT_TERMINAL_PROMPT", "0"),
        env("GIT_ALLOW_PROTOCOL", ALLOWED_PROTOCOLS),
    ];
    let (volume, path) = checkout.volume;
    let mut mounts = vec![mount(volume, path, false)];
    if let Some(golden) = golden_copy {
        vars.extend([
            env("NBV_GOLDEN_COPY", golden),
            env("NBV_GOLDEN_TO", GOLDEN_COPY),
        ]);
        mounts.push(mount(GOLDEN_VOLUME, GOLDEN_DIR, false));
    }
    match access {
        GitAccess::Anonymous => {}
        GitAccess::Https { secret } => {
            // Each key is optional: a Secret holds username and password, or a token.
            vars.extend([
                secret_env("NBV_GIT_USERNAME", secret, "username"),
                secret_env("NBV_GIT_PASSWORD", secret, "password"),
                secret_env("NBV_GIT_TOKEN", secret, "token"),
            ]);
        }
        GitAccess::Ssh { .. } => mounts.push(VolumeMount {
            name: checkout.ssh_volume.to_owned(),
            mount_path: SSH_DIR.to_owned(),
            read_only: Some(true),
            ..VolumeMount::default()
        }),
    }
    let mut container = restricted_container(checkout.container, &defaults.nbv_image);
    container.command = Some([NBV_IN_IMAGE, "pod", "clone"].map(str::to_owned).to_vec());
    container.env = Some(vars);
    container.volume_mounts = Some(mounts);
    container.resources = Some(defaults.clone_resources.clone());
    if let Some(security) = container.security_context.as_mut() {
        security.run_as_user = defaults.clone_run_as_user();
    }
    container
}

/// The clone container of an image build's checkout of `spec.notebook.git`: the
/// validation Pod's own, cloning into `dir` on the volume `workspace` (name, mount
/// path), checked the same way; with the Secret volume its SSH credentials need.
pub(crate) fn build_clone(
    git: &GitSource,
    dir: &'static str,
    workspace: (&'static str, &'static str),
    defaults: &PodDefaults,
) -> Result<(Container, Option<Volume>), PodSpecError> {
    let checkout = Checkout {
        dir,
        volume: workspace,
        ..NOTEBOOK_CHECKOUT
    };
    let access = GitAccess::of(git, checkout.origin)?;
    let container = clone_container(git, &access, checkout, None, defaults);
    Ok((container, access.volume(checkout)))
}

fn secret_env(name: &str, secret: &str, key: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.to_owned(),
                key: key.to_owned(),
                optional: Some(true),
            }),
            ..EnvVarSource::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(url: &str, secret: Option<&str>) -> GitSource {
        GitSource {
            url: url.to_owned(),
            git_ref: "main".to_owned(),
            credentials_secret: secret.map(str::to_owned),
        }
    }

    #[test]
    fn the_scheme_decides_how_credentials_are_used() {
        let secret = Some("creds");
        assert_eq!(
            GitAccess::of(&source("https://h/r.git", secret), "spec.notebook"),
            Ok(GitAccess::Https {
                secret: "creds".to_owned()
            })
        );
        for ssh in ["git@h:o/r.git", "ssh://git@h/o/r.git", "SSH://h/r"] {
            assert_eq!(
                GitAccess::of(&source(ssh, secret), "spec.notebook"),
                Ok(GitAccess::Ssh {
                    secret: "creds".to_owned()
                }),
                "{ssh}"
            );
        }
        assert_eq!(
            GitAccess::of(&source("https://h/r.git", None), "spec.notebook"),
            Ok(GitAccess::Anonymous)
        );
        assert_eq!(
            GitAccess::of(&source("git://h/r.git", Some("")), "spec.notebook"),
            Ok(GitAccess::Anonymous)
        );
    }

    #[test]
    fn unsafe_sources_are_refused() {
        for url in [
            "ext::sh -c touch% /tmp/x",
            "file:///etc",
            "/srv/repo",
            "-u/x",
            "https://h/r\n.git",
        ] {
            assert!(
                matches!(
                    GitAccess::of(&source(url, None), "spec.notebook"),
                    Err(PodSpecError::GitUrl { .. })
                ),
                "{url:?}"
            );
        }
        assert!(matches!(
            GitAccess::of(&source("http://h/r.git", Some("creds")), "spec.notebook"),
            Err(PodSpecError::CredentialsInClear { scheme: "http", .. })
        ));
        let mut dash = source("https://h/r.git", None);
        dash.git_ref = "--upload-pack=touch /tmp/x".to_owned();
        assert!(matches!(
            GitAccess::of(&dash, "spec.notebook"),
            Err(PodSpecError::GitRef { .. })
        ));
    }
}
