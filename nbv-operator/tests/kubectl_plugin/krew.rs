//! The krew manifest: `scripts/krew-manifest` renders `plugins/krew/nbv.yaml.tmpl` for
//! a release's archives, and what it writes must pass krew's own validation.
//!
//! [`violations`] carries out the checks of krew's `ValidatePlugin` (its package
//! `index/validation`) and of its `validate-krew-manifest`, which the krew index runs
//! on every manifest proposed to it: the apiVersion and kind, a name of word characters
//! and dashes that is the file's name, a one-line short description, a version that is
//! semver with a leading `v`, and for every platform a `uri`, a `sha256` of 64
//! lowercase hex digits, a `bin`, `files` either absent or with `from` and `to` each, and
//! a selector on `os` and `arch` only, matching a platform krew knows and no other
//! platform's. Real archives do not exist until a release, so the tests render the
//! template for dummy ones and check the digests against the archives.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::{TempDir, root};

const API_VERSION: &str = "krew.googlecontainertools.github.com/v1alpha2";
/// The platforms nbv builds: the Dockerfile's static musl targets, by krew's names.
const PLATFORMS: [(&str, &str); 2] = [("linux", "amd64"), ("linux", "arm64")];

/// Every way `manifest`, read from the file `file_name`, breaks krew's rules; empty
/// when krew accepts it.
fn violations(file_name: &str, manifest: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut fail = |message: String| found.push(message);
    let name = file_name.strip_suffix(".yaml").unwrap_or_else(|| {
        panic!("krew reads manifests named <plugin>.yaml, not {file_name}");
    });
    if manifest["apiVersion"] != API_VERSION {
        fail(format!(
            "apiVersion is {}, not {API_VERSION}",
            manifest["apiVersion"]
        ));
    }
    if manifest["kind"] != "Plugin" {
        fail(format!("kind is {}, not Plugin", manifest["kind"]));
    }
    let safe_name = regex_lite::Regex::new(r"^[A-Za-z0-9_-]+$").expect("regex");
    let windows_reserved = ["CON", "PRN", "AUX", "NUL"];
    let reserved = windows_reserved
        .iter()
        .any(|r| r.eq_ignore_ascii_case(name))
        || (name.len() == 4
            && ["COM", "LPT"]
                .iter()
                .any(|p| name[..3].eq_ignore_ascii_case(p))
            && name.as_bytes()[3].is_ascii_digit()
            && name.as_bytes()[3] != b'0');
    if !safe_name.is_match(name) || reserved {
        fail(format!("plugin name {name:?} is not allowed"));
    }
    if manifest["metadata"]["name"] != name {
        fail(format!(
            "metadata.name is {}, but the file says {name}",
            manifest["metadata"]["name"]
        ));
    }
    let spec = &manifest["spec"];
    match spec["shortDescription"].as_str() {
        None | Some("") => fail("no shortDescription".into()),
        Some(short) if short.contains(['\r', '\n']) => {
            fail("shortDescription has a line break".into())
        }
        // validate-krew-manifest's limits (it warns; the index's reviewers hold to them).
        Some(short) if short.len() > 70 => fail(format!("shortDescription is over 70: {short}")),
        Some(_) => {}
    }
    for field in ["description", "caveats"] {
        for line in spec[field].as_str().unwrap_or_default().lines() {
            if line.len() > 80 && line.trim().contains(' ') {
                fail(format!("a line of {field} is over 80 characters: {line}"));
            }
        }
    }
    let semver = regex_lite::Regex::new(
        r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$",
    )
    .expect("regex");
    match spec["version"].as_str() {
        Some(version) if semver.is_match(version) => {}
        other => fail(format!("version {other:?} is not semver with a leading v")),
    }
    let sha256 = regex_lite::Regex::new("^[a-f0-9]{64}$").expect("regex");
    let platforms = spec["platforms"].as_array().cloned().unwrap_or_default();
    if platforms.is_empty() {
        fail("no platforms".into());
    }
    let mut selected = BTreeSet::new();
    for (i, platform) in platforms.iter().enumerate() {
        let mut fail = |message: &str| found.push(format!("platforms[{i}]: {message}"));
        if platform["uri"].as_str().is_none_or(str::is_empty) {
            fail("no uri");
        }
        match platform["sha256"].as_str() {
            Some(digest) if sha256.is_match(digest) => {}
            other => fail(&format!("sha256 {other:?} is not 64 lowercase hex digits")),
        }
        if platform["bin"].as_str().is_none_or(str::is_empty) {
            fail("no bin");
        }
        match &platform["files"] {
            Value::Null => {}
            Value::Array(files) if !files.is_empty() => {
                for file in files {
                    if file["from"].as_str().is_none_or(str::is_empty)
                        || file["to"].as_str().is_none_or(str::is_empty)
                    {
                        fail("a file without from or to");
                    }
                }
            }
            _ => fail("files is set but not a non-empty list"),
        }
        let selector = &platform["selector"];
        if !selector["matchExpressions"].is_null() {
            fail("matchExpressions: this check knows matchLabels only");
        }
        let labels = selector["matchLabels"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if labels.is_empty() {
            fail("no selector.matchLabels");
        }
        if let Some(key) = labels.keys().find(|k| *k != "os" && *k != "arch") {
            fail(&format!("selector key {key:?} is not os or arch"));
        }
        // Platforms krew installs for (Go's GOOS and GOARCH names).
        let os = labels.get("os").and_then(Value::as_str).unwrap_or_default();
        let arch = labels
            .get("arch")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let known_os = ["linux", "darwin", "windows"].contains(&os);
        let known_arch = ["amd64", "arm64", "arm", "386", "ppc64le", "s390x"].contains(&arch);
        if !known_os || !known_arch {
            fail(&format!(
                "selector {os}/{arch} is not a platform krew knows"
            ));
        } else if !selected.insert((os.to_owned(), arch.to_owned())) {
            fail(&format!("a second platform selects {os}/{arch}"));
        }
    }
    found
}

/// A gzip-compressed tar archive `name` in `dir` holding `member` with `content`.
fn archive(dir: &Path, name: &str, member: &str, content: &str) -> PathBuf {
    let staging = dir.join(format!("{name}.d"));
    let file = staging.join(member);
    std::fs::create_dir_all(file.parent().expect("a member has a parent")).expect("mkdir");
    std::fs::write(&file, content).expect("write the member");
    let path = dir.join(name);
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&path)
        .arg("-C")
        .arg(&staging)
        .arg(member)
        .status()
        .expect("run tar");
    assert!(status.success(), "tar -czf {name} failed");
    path
}

fn release_name(os: &str, arch: &str) -> String {
    format!("nbv-v{}-{os}-{arch}.tar.gz", env!("CARGO_PKG_VERSION"))
}

/// `scripts/krew-manifest -o <dir>/nbv.yaml ARCHIVES`: the manifest, or the script's
/// error message.
fn render(dir: &Path, archives: &[PathBuf]) -> Result<Value, String> {
    let out = dir.join("nbv.yaml");
    let output = Command::new(root().join("scripts/krew-manifest"))
        .arg("-o")
        .arg(&out)
        .args(archives)
        .output()
        .expect("run scripts/krew-manifest");
    let message = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        assert!(!out.exists(), "a refused manifest was written anyway");
        return Err(message);
    }
    let text = std::fs::read_to_string(&out).expect("the manifest was written");
    assert!(!text.contains('@'), "placeholders left:\n{text}");
    serde_yaml_ng::from_str(&text).map_err(|e| format!("not YAML: {e}\n{text}"))
}

/// One dummy archive per platform nbv builds, each with different content.
fn release(dir: &Path) -> Vec<PathBuf> {
    PLATFORMS
        .iter()
        .map(|(os, arch)| {
            archive(
                dir,
                &release_name(os, arch),
                "nbv",
                &format!("nbv {os}/{arch}"),
            )
        })
        .collect()
}

fn sha256_hex(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("read the archive");
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn the_rendered_manifest_is_one_krew_accepts_for_this_version() {
    let dir = TempDir::new("krew");
    let archives = release(dir.path());
    let manifest = render(dir.path(), &archives).unwrap_or_else(|e| panic!("{e}"));

    assert_eq!(violations("nbv.yaml", &manifest), Vec::<String>::new());
    assert_eq!(
        manifest["spec"]["version"],
        format!("v{}", env!("CARGO_PKG_VERSION")),
        "the manifest's version is the crate's"
    );
    assert_eq!(
        manifest["spec"]["homepage"].as_str(),
        Some(env!("CARGO_PKG_REPOSITORY"))
    );

    let platforms = manifest["spec"]["platforms"].as_array().expect("platforms");
    assert_eq!(platforms.len(), PLATFORMS.len());
    for ((os, arch), archive) in PLATFORMS.iter().zip(&archives) {
        let platform = platforms
            .iter()
            .find(|p| p["selector"]["matchLabels"] == serde_json::json!({"os": os, "arch": arch}))
            .unwrap_or_else(|| panic!("no platform {os}/{arch}"));
        assert_eq!(platform["sha256"], sha256_hex(archive), "{os}/{arch}");
        let uri = platform["uri"].as_str().unwrap_or_default();
        assert_eq!(
            uri,
            format!(
                "{}/releases/download/v{}/{}",
                env!("CARGO_PKG_REPOSITORY"),
                env!("CARGO_PKG_VERSION"),
                release_name(os, arch)
            )
        );
        // The binary, under the name kubectl runs and nbv recognises as its plugin name.
        assert_eq!(platform["bin"], nbv_operator::cli::KUBECTL_PLUGIN);
        assert_eq!(
            platform["files"],
            serde_json::json!([{"from": "nbv", "to": nbv_operator::cli::KUBECTL_PLUGIN}])
        );
    }
}

#[test]
fn the_check_refuses_what_krew_refuses() {
    let dir = TempDir::new("krew-refuses");
    let good = render(dir.path(), &release(dir.path())).unwrap_or_else(|e| panic!("{e}"));
    type Break = fn(&mut Value);
    let breaks: [(&str, Break); 12] = [
        ("apiVersion", |m| {
            m["apiVersion"] = "krew.googlecontainertools.github.com/v1alpha1".into()
        }),
        ("kind", |m| m["kind"] = "Plugins".into()),
        ("name", |m| m["metadata"]["name"] = "kubectl-nbv".into()),
        ("version without v", |m| {
            m["spec"]["version"] = env!("CARGO_PKG_VERSION").into()
        }),
        ("version not semver", |m| {
            m["spec"]["version"] = "v0.2".into()
        }),
        ("short description", |m| {
            m["spec"]["shortDescription"] = "two\nlines".into()
        }),
        ("no platforms", |m| {
            m["spec"]["platforms"] = serde_json::json!([])
        }),
        ("sha256", |m| {
            m["spec"]["platforms"][0]["sha256"] = "ABC".into()
        }),
        ("bin", |m| m["spec"]["platforms"][0]["bin"] = "".into()),
        ("files", |m| {
            m["spec"]["platforms"][0]["files"] = serde_json::json!([{"from": "nbv"}])
        }),
        ("selector key", |m| {
            m["spec"]["platforms"][0]["selector"]["matchLabels"]["libc"] = "musl".into()
        }),
        ("overlap", |m| {
            let first = m["spec"]["platforms"][0]["selector"].clone();
            m["spec"]["platforms"][1]["selector"] = first;
        }),
    ];
    for (what, break_it) in breaks {
        let mut manifest = good.clone();
        break_it(&mut manifest);
        assert!(
            !violations("nbv.yaml", &manifest).is_empty(),
            "a manifest with a broken {what} passed"
        );
    }
    assert!(
        !violations("kubectl-nbv.yaml", &good).is_empty(),
        "file name"
    );
}

#[test]
fn the_script_refuses_archives_krew_would_install_wrongly() {
    let [amd64, arm64] = [
        release_name("linux", "amd64"),
        release_name("linux", "arm64"),
    ];
    type Archives = fn(&Path, &str, &str) -> Vec<PathBuf>;
    let cases: [(&str, Archives, &str); 6] = [
        (
            "a platform without its archive",
            |d, amd64, _| vec![archive(d, amd64, "nbv", "a")],
            "no archive for the template's platform linux/arm64",
        ),
        (
            "another version",
            |d, _, arm64| {
                vec![
                    archive(d, "nbv-v0.0.1-linux-amd64.tar.gz", "nbv", "a"),
                    archive(d, arm64, "nbv", "b"),
                ]
            },
            "but the workspace's is",
        ),
        (
            "a platform the template lacks",
            |d, amd64, arm64| {
                vec![
                    archive(d, amd64, "nbv", "a"),
                    archive(d, arm64, "nbv", "b"),
                    archive(d, &release_name("darwin", "arm64"), "nbv", "c"),
                ]
            },
            "the template has no platform darwin/arm64",
        ),
        (
            "the binary in a directory",
            |d, amd64, arm64| {
                vec![
                    archive(d, amd64, "dist/nbv", "a"),
                    archive(d, arm64, "nbv", "b"),
                ]
            },
            "no file nbv at its top level",
        ),
        (
            "the binary under another name",
            |d, amd64, arm64| {
                vec![
                    archive(d, amd64, "kubectl-nbv", "a"),
                    archive(d, arm64, "nbv", "b"),
                ]
            },
            "no file nbv at its top level",
        ),
        (
            "two archives for one platform",
            |d, amd64, arm64| {
                let once = archive(d, amd64, "nbv", "a");
                vec![once.clone(), once, archive(d, arm64, "nbv", "b")]
            },
            "a second archive for linux/amd64",
        ),
    ];
    for (what, archives, message) in cases {
        let case = TempDir::new("krew-case");
        let archives = archives(case.path(), &amd64, &arm64);
        match render(case.path(), &archives) {
            Ok(_) => panic!("{what}: rendered"),
            Err(error) => assert!(error.contains(message), "{what}: {error}"),
        }
    }
}

#[test]
fn the_template_has_a_platform_for_each_binary_nbv_builds_and_no_other() {
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).expect("Dockerfile");
    for target in ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"] {
        assert!(
            dockerfile.contains(target),
            "the Dockerfile no longer builds {target}"
        );
    }
    let template = std::fs::read_to_string(root().join("plugins/krew/nbv.yaml.tmpl"))
        .expect("plugins/krew/nbv.yaml.tmpl");
    let placeholder = regex_lite::Regex::new("@(SHA256_[A-Z0-9_]+)@").expect("regex");
    let placeholders: BTreeSet<&str> = placeholder
        .captures_iter(&template)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .collect();
    let expected: BTreeSet<String> = PLATFORMS
        .iter()
        .map(|(os, arch)| format!("SHA256_{}_{}", os.to_uppercase(), arch.to_uppercase()))
        .collect();
    assert_eq!(
        placeholders,
        expected.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
    // No manifest with made-up digests next to the template.
    assert!(!root().join("plugins/krew/nbv.yaml").exists());
}
