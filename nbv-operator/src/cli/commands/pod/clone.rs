//! `nbv pod clone`: the clone init containers, with the git and ssh of nbv's image.
//!
//! Every value of the job comes from the environment and reaches git as one argument:
//! nothing is parsed by a shell, and credentials never appear in a command line, a URL
//! or a file. Credentials are answered by `nbv pod credential`, for the clone's own
//! scheme and host only; an SSH clone needs the server's key in the Secret's
//! `known_hosts` (fail closed: an unknown server is never trusted).

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::credential::scope_of;

/// Where the SSH credentials' Secret is mounted (tests point `NBV_SSH_DIR` elsewhere).
const SSH_DIR: &str = "/etc/nbv/git-ssh";

/// Why a clone failed; exit code 2 for a refusal of the job's settings, 1 otherwise.
#[derive(Debug, thiserror::Error)]
enum CloneError {
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Failed(String),
}

pub fn clone(out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match try_clone(out, err) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "nbv: {e}");
            match e {
                CloneError::Refused(_) => 2,
                CloneError::Failed(_) => 1,
            }
        }
    }
}

/// Files this process and git create get every permission bit their creator asks for.
#[allow(unsafe_code)]
fn open_umask() {
    // SAFETY: umask only sets this process's file creation mask; it cannot fail.
    unsafe {
        libc::umask(0);
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn required(name: &str) -> Result<String, CloneError> {
    env(name).ok_or_else(|| CloneError::Refused(format!("{name} is not set")))
}

fn try_clone(out: &mut dyn Write, err: &mut dyn Write) -> Result<(), CloneError> {
    let url = required("NBV_GIT_URL")?;
    let git_ref = required("NBV_GIT_REF")?;
    let checkout = PathBuf::from(required("NBV_CHECKOUT")?);
    if git_ref.starts_with('-') {
        return Err(CloneError::Refused(format!(
            "the ref {git_ref} starts with \"-\"; git would read it as an option"
        )));
    }
    // The notebook container runs as another user than this one: what is created here
    // (the checkout, which notebooks write next to) must be writable by it. The
    // volumes are emptyDirs private to the Pod.
    open_umask();
    let mut git = Git::new(&checkout);
    if let Some(ssh) = ssh_command()? {
        git.env("GIT_SSH_COMMAND", &ssh);
    }
    git.run(&[
        "-c",
        "init.defaultBranch=nbv",
        "init",
        "--quiet",
        path(&checkout)?,
    ])?;
    if env("NBV_GIT_PASSWORD")
        .or_else(|| env("NBV_GIT_TOKEN"))
        .is_some()
    {
        let scope = scope_of(&url).ok_or_else(|| {
            CloneError::Refused(format!(
                "credentials for {}: only HTTPS URLs take a username and password or token",
                nbv_core::redact::redact_secrets(&url)
            ))
        })?;
        let exe = std::env::current_exe()
            .map_err(|e| CloneError::Failed(format!("cannot find nbv's own path: {e}")))?;
        let helper = format!("{} pod credential", shell_quoted(path(&exe)?));
        git.run_in(&["config", &format!("credential.{scope}.helper"), &helper])?;
    }
    git.run_in(&["remote", "add", "--", "origin", &url])?;
    if git
        .run_in(&["fetch", "--quiet", "--depth", "1", "--", "origin", &git_ref])
        .is_ok()
    {
        git.run_in(&["checkout", "--quiet", "--detach", "FETCH_HEAD"])?;
    } else {
        // Some servers refuse a shallow fetch of a commit id; fetch everything and look it up.
        let _ = writeln!(
            err,
            "nbv: fetching {git_ref} alone failed; fetching the whole repository"
        );
        git.run_in(&["fetch", "--quiet", "--tags", "--", "origin"])?;
        git.run_in(&[
            "checkout",
            "--quiet",
            "--detach",
            &format!("{git_ref}^{{commit}}"),
        ])?;
    }
    let commit = git.output_in(&["rev-parse", "HEAD"])?;
    let _ = writeln!(
        out,
        "nbv: checked out {git_ref} at commit {}",
        commit.trim()
    );
    if let (Some(golden), Some(to)) = (env("NBV_GOLDEN_COPY"), env("NBV_GOLDEN_TO")) {
        copy_golden(&checkout, &golden, Path::new(&to))?;
    }
    Ok(())
}

/// Copies the golden notebook out of the checkout into the golden volume, which the
/// notebook container mounts read-only. A missing golden notebook is left to `nbv pod
/// run` to report; one that leaves the checkout (a symbolic link) is refused.
fn copy_golden(checkout: &Path, golden: &str, to: &Path) -> Result<(), CloneError> {
    let root = checkout
        .canonicalize()
        .map_err(|e| CloneError::Failed(format!("{}: {e}", checkout.display())))?;
    let Ok(source) = checkout.join(golden).canonicalize() else {
        return Ok(());
    };
    if !source.starts_with(&root) {
        return Err(CloneError::Refused(format!(
            "the golden notebook {golden} leaves the repository (a symbolic link)"
        )));
    }
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| CloneError::Failed(format!("{}: {e}", dir.display())))?;
    }
    std::fs::copy(&source, to)
        .map(|_| ())
        .map_err(|e| CloneError::Failed(format!("cannot copy the golden notebook {golden}: {e}")))
}

/// The `GIT_SSH_COMMAND` for the Secret's key, when the Secret is mounted.
fn ssh_command() -> Result<Option<String>, CloneError> {
    let dir = PathBuf::from(env("NBV_SSH_DIR").unwrap_or_else(|| SSH_DIR.to_owned()));
    let key = dir.join("ssh-privatekey");
    if !key.is_file() {
        return Ok(None);
    }
    let known_hosts = dir.join("known_hosts");
    if std::fs::metadata(&known_hosts)
        .map(|m| m.len())
        .unwrap_or(0)
        == 0
    {
        return Err(CloneError::Refused(
            "the credentials Secret has no known_hosts: nbv does not clone over SSH from a \
             server whose key it cannot verify. Add the server's key under the Secret's key \
             known_hosts (ssh-keyscan HOST prints it; check it out of band)"
                .to_owned(),
        ));
    }
    ensure_passwd_entry()?;
    Ok(Some(format!(
        "ssh -i {} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile={}",
        shell_quoted(path(&key)?),
        shell_quoted(path(&known_hosts)?),
    )))
}

/// ssh refuses to run as a user id without an `/etc/passwd` entry ("No user exists
/// for uid"), and OpenShift runs containers as an id from the namespace's range that
/// no image knows. nbv's image makes `/etc/passwd` group-writable (the container's
/// group is 0): the entry is added there.
fn ensure_passwd_entry() -> Result<(), CloneError> {
    let passwd = env("NBV_PASSWD_FILE").unwrap_or_else(|| "/etc/passwd".to_owned());
    // /proc/self belongs to the process's own user and group.
    let me = std::fs::metadata("/proc/self")
        .map_err(|e| CloneError::Failed(format!("cannot read this process's user id: {e}")))?;
    let (uid, gid) = (me.uid(), me.gid());
    let known = std::fs::read_to_string(&passwd).unwrap_or_default();
    if known
        .lines()
        .any(|l| l.split(':').nth(2) == Some(uid.to_string().as_str()))
    {
        return Ok(());
    }
    let entry = format!("nbv:x:{uid}:{gid}:nbv clone:/tmp:/sbin/nologin\n");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&passwd)
        .and_then(|mut f| f.write_all(entry.as_bytes()))
        .map_err(|e| {
            CloneError::Failed(format!(
                "cannot clone over SSH: ssh needs an {passwd} entry for user id {uid}, and this \
                 image has none and cannot add one ({e}). Run nbv's own image for the clone \
                 (its {passwd} is group-writable), or clone over HTTPS"
            ))
        })
}

fn path(p: &Path) -> Result<&str, CloneError> {
    p.to_str()
        .ok_or_else(|| CloneError::Refused(format!("{} is not UTF-8", p.display())))
}

/// `text` quoted for the shell git runs helpers and `GIT_SSH_COMMAND` with.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// git, with the environment of every call.
struct Git {
    repo: PathBuf,
    env: Vec<(String, String)>,
}

impl Git {
    fn new(repo: &Path) -> Git {
        Git {
            repo: repo.to_owned(),
            // git writes reflog entries as someone; an arbitrary user id has no name.
            env: [
                ("GIT_COMMITTER_NAME", "nbv"),
                ("GIT_COMMITTER_EMAIL", "nbv@localhost"),
                ("GIT_CONFIG_NOSYSTEM", "1"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .to_vec(),
        }
    }

    fn env(&mut self, name: &str, value: &str) {
        self.env.push((name.to_owned(), value.to_owned()));
    }

    fn command(&self, dir: Option<&Path>, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        command
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        command
    }

    fn run(&self, args: &[&str]) -> Result<(), CloneError> {
        status(self.command(None, args), args)
    }

    fn run_in(&self, args: &[&str]) -> Result<(), CloneError> {
        status(self.command(Some(&self.repo), args), args)
    }

    fn output_in(&self, args: &[&str]) -> Result<String, CloneError> {
        let output = self
            .command(Some(&self.repo), args)
            .output()
            .map_err(|e| CloneError::Failed(format!("cannot run git: {e}")))?;
        if !output.status.success() {
            return Err(CloneError::Failed(format!("git {} failed", args[0])));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

fn status(mut command: Command, args: &[&str]) -> Result<(), CloneError> {
    let status = command
        .status()
        .map_err(|e| CloneError::Failed(format!("cannot run git: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        let name = args
            .iter()
            .find(|a| !a.starts_with('-') && !a.contains('='))
            .unwrap_or(&"");
        Err(CloneError::Failed(format!("git {name} failed ({status})")))
    }
}
