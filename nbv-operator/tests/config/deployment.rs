//! The Deployment and the Dockerfile run the binary with flags, variables and ports it
//! really has, as any non-root user.

use super::*;

#[test]
fn the_deployment_runs_nbv_run_as_the_image_user_with_real_flags() {
    let manifests = manifests();
    let deployment = find(&manifests, "Deployment", "nbv-operator");
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];

    // The arguments parse as `nbv run`.
    let args: Vec<&str> = container["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let cli = Cli::try_parse_from(std::iter::once("nbv").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("the Deployment's args {args:?} do not parse: {e}"));
    let Command::Run(run) = cli.command else {
        panic!("the Deployment does not run `nbv run`: {args:?}");
    };

    // Every NBV_ variable is one that `nbv run` reads, and parses.
    let command = Cli::command();
    let run_command = command
        .get_subcommands()
        .find(|c| c.get_name() == "run")
        .expect("nbv has a run subcommand");
    let known: BTreeSet<String> = run_command
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    let env: BTreeMap<String, &Value> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| Some((e["name"].as_str()?.to_owned(), e)))
        .collect();
    for name in env.keys().filter(|n| n.starts_with("NBV_")) {
        assert!(
            known.contains(name),
            "the Deployment sets {name}, which nbv run does not read; known: {known:?}"
        );
    }
    for (name, field) in [
        ("POD_NAME", "metadata.name"),
        ("POD_NAMESPACE", "metadata.namespace"),
    ] {
        assert_eq!(
            env.get(name)
                .map(|e| &e["valueFrom"]["fieldRef"]["fieldPath"]),
            Some(&Value::from(field)),
            "{name} must come from the downward API ({field}): leader election uses it"
        );
    }

    // Probes and the metrics port are where `nbv run` listens.
    assert!(!run.no_leader_election, "two replicas need leader election");
    assert!(
        deployment["spec"]["replicas"]
            .as_u64()
            .is_some_and(|r| r >= 2)
    );
    let port = &container["ports"][0];
    assert_eq!(port["name"], "metrics");
    assert_eq!(
        port["containerPort"].as_u64(),
        Some(u64::from(run.metrics_addr.port()))
    );
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    for probe in ["livenessProbe", "readinessProbe"] {
        assert_eq!(container[probe]["httpGet"]["port"], "metrics", "{probe}");
    }
    let service = find(&manifests, "Service", "nbv-operator-metrics");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "metrics");
    assert_eq!(
        service["spec"]["selector"],
        deployment["spec"]["selector"]["matchLabels"]
    );

    // Hardened: the restricted Pod Security Standard, with the image's user on
    // Kubernetes and the namespace's on OpenShift (no user pinned: see
    // no_shipped_manifest_pins_a_user_or_group).
    let security = &container["securityContext"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["capabilities"]["drop"], serde_json::json!(["ALL"]));
    for kind in ["requests", "limits"] {
        for resource in ["cpu", "memory"] {
            assert!(
                container["resources"][kind][resource].is_string(),
                "no {kind}.{resource}"
            );
        }
    }
    assert!(
        pod["terminationGracePeriodSeconds"]
            .as_u64()
            .is_some_and(|s| s > 5),
        "the Lease release takes up to 5 s"
    );
    let account = find(&manifests, "ServiceAccount", "nbv-operator");
    assert_eq!(pod["serviceAccountName"], account["metadata"]["name"]);
    assert_eq!(
        deployment["metadata"]["namespace"],
        account["metadata"]["namespace"]
    );
    assert_eq!(
        container["image"],
        format!("ghcr.io/nbv-dev/nbv:{}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_dockerfile_builds_the_nbv_binary_and_runs_it_as_any_non_root_user() {
    let dockerfile = read("Dockerfile");
    let lines: Vec<&str> = dockerfile
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));

    // The binary's name comes from nbv-operator's [[bin]].
    let manifest: toml_lite::Manifest = toml_lite::parse(&read("nbv-operator/Cargo.toml"));
    assert_eq!(manifest.bin_name.as_deref(), Some("nbv"));
    assert!(has("cargo build --release --locked -p nbv-operator"));
    // Both builds leave out the simulation and its test kit (`.ci/run` checks the tree).
    let builds: Vec<&&str> = lines.iter().filter(|l| l.contains("cargo build")).collect();
    assert_eq!(
        builds.len(),
        2,
        "the dependency layer and the image: {builds:?}"
    );
    // The image leaves out the `simulate` feature: not a default, and not asked for.
    let operator = read("nbv-operator/Cargo.toml");
    assert!(
        operator.lines().any(|l| l.trim() == "default = []"),
        "nbv-operator's default features must stay empty (the image builds with them)"
    );
    for build in builds {
        assert!(
            !build.contains("--features") && !build.contains("--all-features"),
            "the image must be built without the `simulate` feature: {build}"
        );
    }
    // Static, against musl: the validation Pod runs the copied /nbv in the user's image
    // (docs/notebooks.md, "The nbv binary in the validation Pod"). Every build is for
    // the builder's musl target, whose C (nbv-lua's Lua, ring) musl-gcc compiles.
    for build in lines.iter().filter(|l| l.contains("cargo build")) {
        assert!(
            build.contains("--target \"$(cat /rust-target)\""),
            "every build is for the musl target: {build}"
        );
    }
    for needle in [
        "amd64) echo x86_64-unknown-linux-musl ;;",
        "arm64) echo aarch64-unknown-linux-musl ;;",
        "rustup target add \"$(cat /rust-target)\"",
        "apt-get install -y --no-install-recommends musl-tools file",
        "CC_x86_64_unknown_linux_musl=musl-gcc",
        "CC_aarch64_unknown_linux_musl=musl-gcc",
    ] {
        assert!(has(needle), "the builder lacks `{needle}`");
    }
    assert!(has(
        "install -m 0755 \"target/$(cat /rust-target)/release/nbv\" /out/nbv"
    ));
    // The build checks that the binary runs and is static, and runs it in an empty image.
    assert!(has("&& /out/nbv --version"));
    assert!(has("grep -Eq 'static-pie linked|statically linked'"));
    assert!(has("grep -Eq 'statically linked|not a dynamic executable'"));
    let scratch = lines
        .iter()
        .position(|l| *l == "FROM scratch AS static")
        .expect("a stage that runs nbv in an empty image");
    assert_eq!(lines[scratch + 1], "COPY --from=builder /out/nbv /nbv");
    assert_eq!(lines[scratch + 2], "RUN [\"/nbv\", \"--version\"]");
    assert!(
        has("COPY --from=static /nbv /nbv"),
        "the runtime takes nbv from the checked stage, so that the check is built"
    );
    assert!(
        has("ln -s /nbv /out/usr/local/bin/nbv") && has("COPY --from=builder /out/usr/ /usr/"),
        "`nbv` must also be on PATH (docs/wait.md runs command: [nbv])"
    );
    assert!(has("ENTRYPOINT [\"/nbv\"]"));
    // The runtime has what `nbv pod clone` runs: git, ssh and CA certificates.
    assert!(has("FROM debian:bookworm-slim"));
    assert!(has(
        "&& apt-get install -y --no-install-recommends git openssh-client ca-certificates"
    ));
    assert!(has("&& rm -rf /var/lib/apt/lists/*"));
    // A numeric non-root user, for runAsNonRoot without a passwd lookup, in group 0 as
    // OpenShift's arbitrary users are; /etc/passwd writable by that group, so that
    // `nbv pod clone` can add the entry ssh needs for such a user.
    assert!(has("USER 65532:0"));
    assert!(has("&& chmod g=u /etc/passwd"));
    assert!(has(
        "&& echo 'nonroot:x:65532:0:nonroot:/tmp:/usr/sbin/nologin' >> /etc/passwd"
    ));
    for label in ["title", "description", "source", "licenses"] {
        assert!(
            dockerfile.contains(&format!("org.opencontainers.image.{label}=")),
            "the OCI label {label}"
        );
    }

    // The toolchain is the workspace's rust-version.
    let workspace = read("Cargo.toml");
    let rust_version = workspace
        .lines()
        .find_map(|l| l.trim().strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"'))
        .expect("the workspace declares rust-version");
    assert!(
        has(&format!("FROM rust:{rust_version}-bookworm AS builder")),
        "the builder must be rust:{rust_version}-bookworm"
    );

    // Both builds see every workspace member, or cargo cannot load the workspace: the
    // dependency layer copies each member's manifest (or the whole member) before the
    // first `cargo build`, and the crates of the image are copied whole.
    let members = workspace
        .lines()
        .find_map(|l| l.trim().strip_prefix("members = "))
        .expect("the workspace lists its members");
    let first_build = lines
        .iter()
        .position(|l| l.contains("cargo build"))
        .expect("the Dockerfile runs cargo build");
    let before = &lines[..first_build];
    for member in members.trim_matches(|c| c == '[' || c == ']').split(',') {
        let member = member.trim().trim_matches('"');
        let copied = |line: &&str| {
            *line == format!("COPY {member}/Cargo.toml {member}/")
                || *line == format!("COPY {member} {member}")
        };
        assert!(
            before.iter().any(copied),
            "the Dockerfile's dependency layer does not copy the workspace member {member}"
        );
        assert!(
            has(&format!("COPY {member} {member}")),
            "the Dockerfile does not copy {member}"
        );
    }
    // The placeholder crates of the dependency layer have only src/lib.rs and
    // src/main.rs: a target declared with another path would not load there.
    for krate in ["nbv-core", "nbv-operator", "nbv-testkit"] {
        let manifest = read(&format!("{krate}/Cargo.toml"));
        for line in manifest.lines().map(str::trim) {
            assert!(
                !line.starts_with("[[") || line == "[[bin]]",
                "{krate}/Cargo.toml declares {line}: give the Dockerfile's dependency layer a placeholder for it"
            );
            if let Some(path) = line.strip_prefix("path = ") {
                assert!(
                    ["\"src/main.rs\"", "\"src/lib.rs\""].contains(&path),
                    "{krate}/Cargo.toml: target path {path} has no placeholder in the Dockerfile"
                );
            }
        }
    }
    let ignored = read(".dockerignore");
    assert!(
        ignored.lines().any(|l| l.trim() == "target/"),
        ".dockerignore must keep target/ out of the context"
    );
}

/// OpenShift's restricted-v2 refuses a user, group or fsGroup outside the namespace's
/// range, which no manifest can know: none is pinned in any YAML under config/
/// (manifests, samples, monitoring, kustomize patches alike). Kubernetes' runAsNonRoot
/// works with the image's numeric USER instead.
#[test]
fn no_shipped_manifest_pins_a_user_or_group() {
    let files: Vec<String> = config_files()
        .into_iter()
        .filter(|f| [".yaml", ".yml", ".json"].iter().any(|e| f.ends_with(e)))
        .collect();
    assert!(
        files.iter().any(|f| f.starts_with("config/samples/"))
            && files.iter().any(|f| f.starts_with("config/monitoring/"))
            && files.contains(&"config/manager/deployment.yaml".to_owned()),
        "the scan covers config/: {files:?}"
    );
    let mut pinned = Vec::new();
    for file in &files {
        for (number, line) in read(file).lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with('#') {
                continue;
            }
            for key in ["runAsUser", "runAsGroup", "fsGroup"] {
                if code.contains(&format!("{key}:")) || code.contains(&format!("\"{key}\"")) {
                    pinned.push(format!("{file}:{}: {}", number + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        pinned.is_empty(),
        "fixed users or groups:\n{}",
        pinned.join("\n")
    );

    // The Pods still refuse root, by the image's numeric user.
    let manifests = manifests();
    let operator = find(&manifests, "Deployment", "nbv-operator");
    let hook = manifests
        .iter()
        .map(|(_, m)| m)
        .find(|m| m["kind"] == "Job" && m["metadata"]["name"] == "wait-for-models")
        .expect("the wait hook");
    for pod in [operator, hook].map(|w| &w["spec"]["template"]["spec"]) {
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        for container in pod["containers"].as_array().into_iter().flatten() {
            let security = &container["securityContext"];
            assert_eq!(security["allowPrivilegeEscalation"], false);
            assert_eq!(security["readOnlyRootFilesystem"], true);
            assert_eq!(security["capabilities"]["drop"], serde_json::json!(["ALL"]));
            for kind in ["requests", "limits"] {
                for resource in ["cpu", "memory"] {
                    assert!(
                        !container["resources"][kind][resource].is_null(),
                        "{}: no {kind}.{resource} (a ResourceQuota on limits refuses it)",
                        container["name"]
                    );
                }
            }
        }
    }
}

/// Just enough of a Cargo manifest: the `[[bin]]` name.
mod toml_lite {
    pub struct Manifest {
        pub bin_name: Option<String>,
    }

    pub fn parse(text: &str) -> Manifest {
        let mut in_bin = false;
        let mut bin_name = None;
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                in_bin = line == "[[bin]]";
            } else if in_bin && let Some(value) = line.strip_prefix("name = ") {
                bin_name = Some(value.trim_matches('"').to_owned());
            }
        }
        Manifest { bin_name }
    }
}

/// `nbv simulate` exists exactly when the `simulate` feature is on: the image, built
/// without it, has no simulation (`.ci/run` runs this test both ways).
#[test]
fn nbv_simulate_exists_only_with_the_simulate_feature() {
    let simulate = Cli::command()
        .get_subcommands()
        .any(|c| c.get_name() == "simulate");
    assert_eq!(simulate, cfg!(feature = "simulate"));
}

/// Without the feature, `nbv simulate` is an unknown subcommand that says how to get it;
/// other unknown subcommands get clap's message alone.
#[test]
fn nbv_simulate_without_the_feature_says_how_to_get_it() {
    let parsed = Cli::try_parse_from(["nbv", "simulate", "--random", "2"]);
    assert_eq!(
        parsed.is_ok(),
        cfg!(feature = "simulate"),
        "{:?}",
        parsed.as_ref().err().map(ToString::to_string)
    );
    if let Err(error) = parsed {
        let hint =
            nbv_operator::cli::left_out(&error).unwrap_or_else(|| panic!("no hint for {error}"));
        assert!(
            hint.contains("cargo run -p nbv-operator --features simulate -- simulate"),
            "{hint}"
        );
    }
    let error = Cli::try_parse_from(["nbv", "simulation"]).expect_err("no such subcommand");
    assert_eq!(nbv_operator::cli::left_out(&error), None);
}
