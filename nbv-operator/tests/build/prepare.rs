//! Each recipe, as the build step finds it in the checkout.

use nbv_core::api::FallbackStrategy;

use super::*;

#[test]
fn the_nearest_requirements_file_is_copied_and_installed() {
    let dir = temp_dir("requirements");
    let repo = dir.join("repo");
    // Bytes as they are, not text: a requirements file need not be UTF-8.
    let tier: &[u8] = b"numpy==2.1.0 # caf\xe9\r\n";
    write(
        &repo,
        &[("requirements.txt", "pandas\n"), (NOTEBOOK, &notebook("1"))],
    );
    std::fs::write(repo.join("notebooks/requirements.txt"), tier).expect("file");
    let summary = dir.join("summary");
    let settings = serde_json::to_string(&config()).expect("JSON");
    let output = prepare(
        &repo,
        Some(&settings),
        &["--summary", summary.to_str().expect("UTF-8")],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "requirements from notebooks/requirements.txt\n"
    );
    assert_eq!(
        std::fs::read_to_string(&summary).expect("summary"),
        stdout(&output)
    );
    assert_eq!(prepared_requirements(&repo).as_deref(), Some(tier));
    let dockerfile = prepared_dockerfile(&repo);
    assert!(dockerfile.starts_with("FROM quay.io/jupyter/minimal-notebook:latest\n"));
    assert!(dockerfile.contains("COPY .nbv-build/requirements.txt "));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_repositorys_dockerfile_is_copied_as_it_is() {
    let dir = temp_dir("dockerfile");
    let repo = dir.join("repo");
    let own = "FROM python:3.12\r\nRUN pip install numpy\n";
    write(
        &repo,
        &[
            ("docker/Dockerfile", own),
            ("notebooks/Dockerfile", "FROM python:3.11\n"),
            ("requirements.txt", "pandas\n"),
        ],
    );
    let mut c = config();
    c.dockerfile = Some("docker/Dockerfile".into());
    let output = prepare_with(&repo, &c);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "Dockerfile docker/Dockerfile\n");
    assert_eq!(prepared_dockerfile(&repo), own);
    assert_eq!(prepared_requirements(&repo), None);

    c.dockerfile = None;
    c.prefer_dockerfile = true;
    let output = prepare_with(&repo, &c);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "Dockerfile notebooks/Dockerfile\n");
    assert_eq!(prepared_dockerfile(&repo), "FROM python:3.11\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn auto_installs_what_the_notebook_imports() {
    let dir = temp_dir("imports");
    let repo = dir.join("repo");
    write(
        &repo,
        &[(
            NOTEBOOK,
            &notebook("import numpy as np\nimport os\nfrom sklearn import svm\nimport yaml"),
        )],
    );
    let mut c = config();
    c.fallback = FallbackStrategy::Auto;
    let output = prepare_with(&repo, &c);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "requirements generated from the notebook's imports: numpy, pyyaml, scikit-learn\n"
    );
    let requirements =
        String::from_utf8(prepared_requirements(&repo).expect("generated")).expect("UTF-8");
    assert!(
        requirements.ends_with("\nnumpy\npyyaml\nscikit-learn\n"),
        "{requirements}"
    );
    assert!(prepared_dockerfile(&repo).contains("pip install --no-cache-dir -r "));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn warn_builds_the_base_image_with_papermill() {
    let dir = temp_dir("warn");
    let repo = dir.join("repo");
    write(&repo, &[(NOTEBOOK, &notebook("import numpy"))]);
    let output = prepare_with(&repo, &config());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("no requirements file (looked at notebooks/tier2/"),
        "{}",
        stdout(&output)
    );
    assert_eq!(prepared_requirements(&repo), None);
    let dockerfile = prepared_dockerfile(&repo);
    assert!(!dockerfile.contains("COPY"), "{dockerfile}");
    assert!(dockerfile.contains("papermill==2.7.0"), "{dockerfile}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fail_without_requirements_exits_1_and_writes_nothing() {
    let dir = temp_dir("fail");
    let repo = dir.join("repo");
    write(&repo, &[(NOTEBOOK, &notebook("import numpy"))]);
    let mut c = config();
    c.fallback = FallbackStrategy::Fail;
    let output = prepare_with(&repo, &c);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("spec.podConfig.buildConfig.fallbackStrategy is fail"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).is_empty());
    assert!(!repo.join(".nbv-build").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_named_file_exits_1_naming_the_field() {
    let dir = temp_dir("missing");
    let repo = dir.join("repo");
    write(&repo, &[("requirements.txt", "numpy\n")]);
    let mut c = config();
    c.requirements_file = Some("env/requirements.txt".into());
    let output = prepare_with(&repo, &c);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output)
            .contains("spec.podConfig.buildConfig.requirementsFile: env/requirements.txt"),
        "{}",
        stderr(&output)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_prepared_directory_in_the_repository_is_replaced() {
    let dir = temp_dir("replaced");
    let repo = dir.join("repo");
    write(
        &repo,
        &[
            ("requirements.txt", "numpy\n"),
            (".nbv-build/Dockerfile", "FROM evil\n"),
            (".nbv-build/stale", ""),
        ],
    );
    let output = prepare_with(&repo, &config());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!repo.join(".nbv-build/stale").exists());
    assert!(prepared_dockerfile(&repo).starts_with("FROM quay.io/"));
    let _ = std::fs::remove_dir_all(&dir);
}
