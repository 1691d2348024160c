//! Notebooks in a Git repository served by `git daemon` on loopback: what the validation
//! Pod's clone container fetches.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::process::{dies_with_the_test, free_port};

/// A notebook of code cells, in nbformat 4 with the `python3` kernel.
pub fn notebook(cells: &[&str]) -> Value {
    let cells: Vec<Value> = cells
        .iter()
        .map(|source| {
            json!({"cell_type": "code", "execution_count": null, "metadata": {},
                   "outputs": [], "source": source})
        })
        .collect();
    json!({
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5
    })
}

/// `git daemon` serving bare repositories from a temporary directory.
pub struct GitServer {
    root: PathBuf,
    port: u16,
    daemon: Child,
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=nbv e2e",
            "-c",
            "user.email=e2e@nbv.invalid",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?} in {}", dir.display());
}

impl GitServer {
    /// Starts the daemon on a free port.
    pub fn start() -> GitServer {
        let root = tempdir("git");
        let port = free_port();
        // git-daemon itself, not `git daemon`: the `git` wrapper would run it as a child
        // of its own, which the parent-death signal below would not reach.
        let exec_path = Command::new("git")
            .arg("--exec-path")
            .output()
            .expect("git --exec-path");
        let exec_path = String::from_utf8_lossy(&exec_path.stdout).trim().to_owned();
        let mut command = Command::new(Path::new(&exec_path).join("git-daemon"));
        command
            .args(["--reuseaddr", "--export-all", "--listen=127.0.0.1"])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", root.display()))
            .arg(&root)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        dies_with_the_test(&mut command);
        let daemon = command.spawn().expect("git daemon");
        for _ in 0..100 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        GitServer { root, port, daemon }
    }

    /// Creates repository `name` holding `files` (path, content) on branch `main`,
    /// and returns its `git://` URL.
    pub fn repository(&self, name: &str, files: &[(&str, String)]) -> String {
        let work = self.root.join(format!("{name}.work"));
        std::fs::create_dir_all(&work).expect("a work tree");
        git(&work, &["init", "-q"]);
        for (path, content) in files {
            let file = work.join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("dirs");
            std::fs::write(&file, content).expect("write a file");
        }
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "notebooks"]);
        git(
            &self.root,
            &[
                "clone",
                "-q",
                "--bare",
                &format!("{name}.work"),
                &format!("{name}.git"),
            ],
        );
        format!("git://127.0.0.1:{}/{name}.git", self.port)
    }

    /// The full commit id of branch `main` of repository `name`.
    pub fn head(&self, name: &str) -> String {
        let output = Command::new("git")
            .current_dir(self.root.join(format!("{name}.git")))
            .args(["rev-parse", "main"])
            .output()
            .expect("git rev-parse");
        assert!(output.status.success(), "git rev-parse main in {name}.git");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

impl Drop for GitServer {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A new empty directory under the system's temporary directory.
pub fn tempdir(what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "nbv-e2e-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}
