//! The validation Pod defaults: the examples of docs/configuration.md are files nbv
//! accepts, the Deployment's commented settings are real, and `nbv run` reads the file
//! and `--nbv-image` as documented, and refuses the removed `--clone-image`.

use nbv_core::pod::{CloneUser, DEFAULT_NBV_IMAGE, PodDefaults};
use nbv_operator::operator::pod_settings::{PodSettingsError, load};

use super::*;

/// The YAML examples of the section "Validation Pod defaults".
fn documented_examples() -> Vec<String> {
    let docs = read("docs/configuration.md");
    let start = docs
        .find("### Validation Pod defaults")
        .expect("docs/configuration.md documents the Pod defaults");
    let section = &docs[start..];
    let section = &section[..section[4..].find("\n### ").map_or(section.len(), |e| e + 4)];
    section
        .split("```yaml\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_documented_examples_are_files_nbv_accepts() {
    let examples = documented_examples();
    assert!(
        examples.len() >= 2,
        "an OpenShift and an air-gapped example"
    );
    for example in &examples {
        PodDefaults::from_yaml(example).unwrap_or_else(|e| panic!("{e}\n{example}"));
    }
    let air_gapped = examples
        .iter()
        .map(|e| PodDefaults::from_yaml(e).expect("checked"))
        .find(|d| !d.image_pull_secrets.is_empty())
        .expect("an air-gapped example with a pull secret");
    assert!(
        air_gapped.nbv_image.contains("@sha256:"),
        "pinned by digest"
    );
    assert_ne!(air_gapped.nbv_image, DEFAULT_NBV_IMAGE, "a mirror");
    let docs = read("docs/configuration.md");
    let (name, _) = DEFAULT_NBV_IMAGE.rsplit_once(':').expect("a tag");
    assert!(docs.contains(name), "the default image is documented");
}

#[test]
fn the_deployments_commented_pod_settings_are_real() {
    let deployment = read("config/manager/deployment.yaml");
    let commented: Vec<&str> = deployment
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# - name: "))
        .collect();
    assert!(
        commented.contains(&"NBV_POD_DEFAULTS"),
        "the Deployment shows NBV_POD_DEFAULTS"
    );
    let command = Cli::command();
    let known: BTreeSet<String> = command
        .get_subcommands()
        .find(|c| c.get_name() == "run")
        .expect("nbv run")
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    for name in commented.iter().filter(|n| n.starts_with("NBV_")) {
        assert!(known.contains(*name), "{name} is not read by nbv run");
    }
    // The file is mounted where the variable points.
    let value_of = |name: &str| {
        let lines: Vec<&str> = deployment.lines().map(str::trim).collect();
        let at = lines
            .iter()
            .position(|l| *l == format!("# - name: {name}"))
            .expect("shown");
        lines[at + 1]
            .strip_prefix("#   value: ")
            .expect("a value")
            .to_owned()
    };
    let path = value_of("NBV_POD_DEFAULTS");
    assert!(
        deployment.contains(&format!("#     mountPath: {path}")),
        "the ConfigMap is mounted at {path}"
    );
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("nbv-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn nbv_run_reads_the_file_and_the_nbv_image_flag() {
    let cli = Cli::try_parse_from([
        "nbv",
        "run",
        "--pod-defaults",
        "/etc/nbv/pod-defaults.yaml",
        "--nbv-image",
        "mirror.example.com/nbv:2",
    ])
    .expect("parses");
    let Command::Run(run) = cli.command else {
        panic!("nbv run");
    };
    assert_eq!(
        run.pod_defaults.as_deref(),
        Some(Path::new("/etc/nbv/pod-defaults.yaml"))
    );
    assert_eq!(run.nbv_image.as_deref(), Some("mirror.example.com/nbv:2"));

    assert_eq!(
        load(None, None, None).expect("defaults"),
        PodDefaults::default()
    );

    let good = temp_file(
        "good.yaml",
        "image: a.example.com/nbv:1\nclone:\n  user: none\n",
    );
    let defaults = load(Some(&good), None, None).expect("valid");
    assert_eq!(
        (defaults.nbv_image.as_str(), defaults.clone_user),
        ("a.example.com/nbv:1", CloneUser::Unset)
    );
    // The flag wins over the file.
    let flagged = load(Some(&good), Some("b.example.com/nbv:2"), None).expect("valid");
    assert_eq!(flagged.nbv_image, "b.example.com/nbv:2");
    let error = load(Some(&good), Some("B/Nbv"), None).expect_err("not an image");
    assert!(matches!(error, PodSettingsError::NbvImage(_)));
    assert!(
        error
            .to_string()
            .starts_with("--nbv-image (NBV_IMAGE): image:")
    );
    // The removed flag is refused by name, not ignored.
    let error = load(None, None, Some("docker.io/alpine/git:2")).expect_err("removed");
    assert!(matches!(error, PodSettingsError::CloneImageRemoved));
    assert!(error.to_string().contains("--nbv-image"));

    let bad = temp_file(
        "bad.yaml",
        "tolerations:\n  - key: gpu\n    efect: NoSchedule\n",
    );
    let error = load(Some(&bad), None, None).expect_err("invalid");
    let message = error.to_string();
    assert!(message.contains(&bad.display().to_string()), "{message}");
    assert!(
        message.contains("tolerations[0].efect: unknown field"),
        "{message}"
    );

    let missing = std::env::temp_dir().join("nbv-no-such-pod-defaults.yaml");
    let error = load(Some(&missing), None, None).expect_err("missing");
    assert!(matches!(error, PodSettingsError::Read { .. }), "{error}");
    for path in [good, bad] {
        let _ = std::fs::remove_file(path);
    }
}

/// `auto` asks the cluster: OpenShift serves `security.openshift.io` (its SCCs), and
/// then no clone user is set; a plain cluster gets `nobody`. An explicit user needs
/// no question.
#[tokio::test]
async fn the_clone_user_follows_the_platform_the_cluster_serves() {
    use nbv_core::pod::{NOBODY_UID, OPENSHIFT_SECURITY_GROUP, Platform};
    use nbv_operator::operator::pod_settings::for_cluster;
    use nbv_testkit::cluster::{ApiResourceSpec, FakeCluster};

    let plain = FakeCluster::default();
    let defaults = for_cluster(&plain.client(), PodDefaults::default()).await;
    assert_eq!(defaults.platform, Platform::Kubernetes);
    assert_eq!(defaults.clone_run_as_user(), Some(NOBODY_UID));

    let openshift = FakeCluster::default();
    openshift.register(ApiResourceSpec::cluster_scoped(
        OPENSHIFT_SECURITY_GROUP,
        "v1",
        "SecurityContextConstraints",
        "securitycontextconstraints",
    ));
    let defaults = for_cluster(&openshift.client(), PodDefaults::default()).await;
    assert_eq!(defaults.platform, Platform::OpenShift);
    assert_eq!(defaults.clone_run_as_user(), None);

    let explicit = PodDefaults {
        clone_user: CloneUser::Uid(1001),
        ..PodDefaults::default()
    };
    let defaults = for_cluster(&openshift.client(), explicit).await;
    assert_eq!(
        (defaults.platform, defaults.clone_run_as_user()),
        (Platform::Kubernetes, Some(1001)),
        "not asked"
    );
}
