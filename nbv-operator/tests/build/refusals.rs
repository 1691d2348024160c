//! What the step refuses: links out of the checkout, files too large, bad usage.

use nbv_core::api::FallbackStrategy;

use super::*;

#[test]
fn a_requirements_file_linking_out_of_the_checkout_is_refused() {
    let dir = temp_dir("link-file");
    let repo = dir.join("repo");
    write(&dir, &[("outside.txt", "secret\n")]);
    write(&repo, &[("requirements.txt", "numpy\n")]);
    std::fs::create_dir_all(repo.join("notebooks/tier2")).expect("dirs");
    std::os::unix::fs::symlink(
        dir.join("outside.txt"),
        repo.join("notebooks/tier2/requirements.txt"),
    )
    .expect("link");
    let output = prepare_with(&repo, &config());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("notebooks/tier2/requirements.txt leaves the repository"),
        "{}",
        stderr(&output)
    );
    assert!(!repo.join(".nbv-build").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_linking_out_of_the_checkout_is_refused() {
    let dir = temp_dir("link-dir");
    let repo = dir.join("repo");
    write(&dir, &[("elsewhere/requirements.txt", "numpy\n")]);
    std::os::unix::fs::symlink(dir.join("elsewhere"), repo.join("notebooks")).expect("link");
    let mut c = config();
    c.notebook_path = "notebooks/train.ipynb".into();
    let output = prepare_with(&repo, &c);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("leaves the repository"),
        "{}",
        stderr(&output)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_link_inside_the_checkout_is_followed() {
    let dir = temp_dir("link-inside");
    let repo = dir.join("repo");
    write(&repo, &[("env/base.txt", "numpy\n")]);
    std::fs::create_dir_all(repo.join("notebooks/tier2")).expect("dirs");
    std::os::unix::fs::symlink(
        "../../env/base.txt",
        repo.join("notebooks/tier2/requirements.txt"),
    )
    .expect("link");
    let output = prepare_with(&repo, &config());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        prepared_requirements(&repo).as_deref(),
        Some(&b"numpy\n"[..])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_prepared_directory_linking_out_is_not_written_through() {
    let dir = temp_dir("link-prepared");
    let repo = dir.join("repo");
    std::fs::create_dir_all(dir.join("outside")).expect("dir");
    write(&repo, &[("requirements.txt", "numpy\n")]);
    std::os::unix::fs::symlink(dir.join("outside"), repo.join(".nbv-build")).expect("link");
    let output = prepare_with(&repo, &config());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        dir.join("outside")
            .read_dir()
            .expect("dir")
            .next()
            .is_none()
    );
    assert!(
        !std::fs::symlink_metadata(repo.join(".nbv-build"))
            .expect("prepared")
            .is_symlink()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_notebook_over_16_mib_is_refused() {
    let dir = temp_dir("large");
    let repo = dir.join("repo");
    write(&repo, &[(NOTEBOOK, "")]);
    // Sparse: no disk is spent on the zeros.
    std::fs::File::options()
        .write(true)
        .open(repo.join(NOTEBOOK))
        .and_then(|f| f.set_len(16 * 1024 * 1024 + 1))
        .expect("a large file");
    let mut c = config();
    c.fallback = FallbackStrategy::Auto;
    let output = prepare_with(&repo, &c);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("larger than 16 MiB"),
        "{}",
        stderr(&output)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_or_malformed_settings_are_bad_usage() {
    let dir = temp_dir("settings");
    let repo = dir.join("repo");
    let output = prepare(&repo, None, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("NBV_BUILD is not set"),
        "{}",
        stderr(&output)
    );
    let output = prepare(&repo, Some("{\"notebookPath\": 1}"), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("NBV_BUILD is not the build's source settings"),
        "{}",
        stderr(&output)
    );
    let settings = serde_json::to_string(&config()).expect("JSON");
    let output = prepare(&dir.join("absent"), Some(&settings), &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let output = Command::new(NBV)
        .args(["build", "prepare"])
        .output()
        .expect("nbv runs");
    assert_eq!(output.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
