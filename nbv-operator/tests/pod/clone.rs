//! `nbv pod clone` and its credential helper.

use super::*;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .stdout(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// A repository with `notebooks/train.ipynb` and `golden/train.ipynb` on `main`, tagged
/// `v1`.
fn origin(dir: &Path) -> String {
    let origin = dir.join("origin");
    for sub in ["notebooks", "golden"] {
        std::fs::create_dir_all(origin.join(sub)).expect("dir");
    }
    std::fs::write(origin.join("notebooks/train.ipynb"), "{}").expect("write");
    std::fs::write(origin.join("golden/train.ipynb"), r#"{"cells": []}"#).expect("write");
    git(&origin, &["init", "--quiet", "--initial-branch=main"]);
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "--quiet", "-m", "notebook"]);
    git(&origin, &["tag", "v1"]);
    origin.to_string_lossy().into_owned()
}

/// Runs the clone container of `pod` with its environment, moved under `root`; the
/// local repository is a path, a transport the Pod does not allow, hence the override.
fn run_clone(pod: &Pod, root: &Path, extra: &[(&str, String)]) -> Output {
    let mut extra = extra.to_vec();
    extra.push(("GIT_ALLOW_PROTOCOL", "file".to_owned()));
    extra.push(("HOME", root.display().to_string()));
    command_of(
        NBV,
        &["pod", "clone"],
        container(pod, CLONE_CONTAINER),
        root,
        &extra,
    )
    .output()
    .expect("nbv runs")
}

#[test]
fn the_clone_checks_out_the_ref_copies_the_golden_notebook_and_never_runs_a_value() {
    require("git");
    let dir = temp_dir("clone");
    let url = origin(&dir);
    for git_ref in ["main", "v1"] {
        let root = dir.join(git_ref);
        let pod = pod_of(&job(json!({
            "notebook": {"git": {"url": "https://x/r.git", "ref": git_ref}, "path": "notebooks/train.ipynb"},
            "goldenNotebook": {"git": {"url": "https://x/r.git", "ref": git_ref}, "path": "golden/train.ipynb"},
        })));
        let output = run_clone(&pod, &root, &[("NBV_GIT_URL", url.clone())]);
        assert!(output.status.success(), "{git_ref}: {}", text(&output));
        assert!(root.join("workspace/repo/notebooks/train.ipynb").is_file());
        // The golden notebook is copied out of the checkout, into its own volume.
        let golden = std::fs::read_to_string(root.join("nbv-golden/golden.ipynb")).expect("copied");
        assert_eq!(golden, r#"{"cells": []}"#);
        // The notebook runs as another user: it writes next to itself.
        for writable in [
            "workspace/repo/notebooks",
            "workspace/repo/notebooks/train.ipynb",
        ] {
            let mode = std::fs::metadata(root.join(writable))
                .expect("exists")
                .permissions()
                .mode();
            assert_eq!(
                mode & 0o002,
                0o002,
                "{writable} is not writable by others: {mode:o}"
            );
        }
    }

    let pwned = dir.join("pwned");
    let pwned_text = pwned.to_string_lossy().into_owned();
    for hostile in [
        format!("main; touch {pwned_text}"),
        format!("$(touch {pwned_text})"),
        format!("`touch {pwned_text}`"),
        format!("main\" && touch \"{pwned_text}"),
        format!("--upload-pack=touch {pwned_text}"),
    ] {
        let root = dir.join("hostile");
        let _ = std::fs::remove_dir_all(&root);
        let pod = pod_of(&job(json!({})));
        let output = run_clone(
            &pod,
            &root,
            &[
                ("NBV_GIT_URL", url.clone()),
                ("NBV_GIT_REF", hostile.clone()),
            ],
        );
        assert!(!output.status.success(), "{hostile} was fetched");
        assert!(!pwned.exists(), "{hostile} ran a command");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_golden_notebook_that_leaves_the_repository_is_refused() {
    require("git");
    let dir = temp_dir("golden-link");
    let url = origin(&dir);
    let origin = dir.join("origin");
    std::os::unix::fs::symlink("/etc/hostname", origin.join("golden/escape.ipynb")).expect("link");
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "--quiet", "-m", "link"]);
    let pod = pod_of(&job(json!({
        "goldenNotebook": {"git": {"url": "https://example.com/org/repo.git", "ref": "main"}, "path": "golden/escape.ipynb"},
    })));
    let root = dir.join("root");
    let output = run_clone(&pod, &root, &[("NBV_GIT_URL", url)]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains("leaves the repository"),
        "{}",
        text(&output)
    );
    assert!(!root.join("nbv-golden/golden.ipynb").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the credential helper answers to git's request for `protocol://host`.
fn credential(url: &str, protocol: &str, host: &str) -> String {
    let mut child = Command::new(NBV)
        .args(["pod", "credential", "get"])
        .env_clear()
        .env("NBV_GIT_URL", url)
        .env("NBV_GIT_TOKEN", "s3cret")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("nbv runs");
    let request = format!("protocol={protocol}\nhost={host}\n\n");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(request.as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("nbv ends");
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn credentials_go_only_to_the_configured_scheme_and_host() {
    let url = "https://Git.Example.com/ml/models.git";
    assert_eq!(
        credential(url, "https", "git.example.com"),
        "username=x-access-token\npassword=s3cret\n"
    );
    // A redirect to another host, another port, or to plain HTTP gets nothing.
    for (protocol, host) in [
        ("https", "evil.example.net"),
        ("https", "git.example.com:8443"),
        ("http", "git.example.com"),
        ("https", "git.example.com.evil.net"),
    ] {
        assert_eq!(credential(url, protocol, host), "", "{protocol}://{host}");
    }
}

#[test]
fn an_ssh_clone_without_known_hosts_fails_closed() {
    require("git");
    let dir = temp_dir("ssh");
    let ssh = dir.join("ssh");
    std::fs::create_dir_all(&ssh).expect("dir");
    std::fs::write(ssh.join("ssh-privatekey"), "not a key").expect("write");
    let pod = pod_of(&job(json!({
        "notebook": {"git": {"url": "git@git.example.com:ml/m.git", "ref": "main", "credentialsSecret": "git-ssh"},
                     "path": "t.ipynb"},
    })));
    let output = run_clone(
        &pod,
        &dir.join("root"),
        &[("NBV_SSH_DIR", ssh.display().to_string())],
    );
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains("no known_hosts"),
        "{}",
        text(&output)
    );
    assert!(
        !dir.join("root/workspace/repo").exists(),
        "nothing was fetched"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
