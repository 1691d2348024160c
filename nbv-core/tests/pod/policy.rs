//! The cluster admin's pod policy: what a job may put in its validation Pod.
//!
//! Properties over generated jobs and policies (the default policy refuses nothing, a
//! stricter policy refuses whatever a looser one refuses, a policy listing exactly
//! what a job uses admits it, a refusal tells nothing of other namespaces), the
//! refusal messages as a snapshot, and the way a refusal and the API token reach the
//! Pod builder.

use std::collections::BTreeSet;

use nbv_core::build::DEFAULT_BASE_IMAGE;
use nbv_core::pod::{
    ImagePattern, ObjectRule, PlacementField, PodPolicy, PolicyRule,
    SERVICE_ACCOUNT_TOKEN_ANNOTATION, normalized_repository, parse_secret_rule,
    parse_service_account_rule, parse_volume_source,
};
use proptest::sample::{select, subsequence};

use super::*;

// ---------------------------------------------------------------------------------------
// Generated jobs: what a job uses, and the job that uses it
// ---------------------------------------------------------------------------------------

const IMAGES: [&str; 8] = [
    "quay.io/ml/nb:1",
    "quay.io/ml-other/nb:1",
    "python:3.11",
    "docker.io/library/python:3",
    "registry.example.com/team/a/b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "localhost:5000/x:1",
    "Quay.IO/ml/nb:2",
    "someone/papermill",
];
const SERVICE_ACCOUNTS: [&str; 4] = ["default", "runner", "admin", "builder"];
const SECRETS: [&str; 4] = ["git", "aws", "db", "push"];
const NAMESPACES: [&str; 2] = ["ml", "team-a"];

#[derive(Clone, Debug)]
enum VolumeKind {
    ConfigMap,
    EmptyDir,
    Claim,
    DownwardApi,
    Secret(String),
    ProjectedSecret(String),
    ProjectedToken,
    Csi(Option<String>),
}

impl VolumeKind {
    fn source(&self) -> &'static str {
        match self {
            VolumeKind::ConfigMap => "configMap",
            VolumeKind::EmptyDir => "emptyDir",
            VolumeKind::Claim => "persistentVolumeClaim",
            VolumeKind::DownwardApi => "downwardAPI",
            VolumeKind::Secret(_) => "secret",
            VolumeKind::ProjectedSecret(_) | VolumeKind::ProjectedToken => "projected",
            VolumeKind::Csi(_) => "csi",
        }
    }

    fn secret(&self) -> Option<&str> {
        match self {
            VolumeKind::Secret(s) | VolumeKind::ProjectedSecret(s) => Some(s),
            VolumeKind::Csi(s) => s.as_deref(),
            _ => None,
        }
    }

    fn json(&self, index: usize) -> Value {
        let name = format!("v{index}");
        match self {
            VolumeKind::ConfigMap => json!({"name": name, "configMap": {"name": "settings"}}),
            VolumeKind::EmptyDir => json!({"name": name, "emptyDir": {}}),
            VolumeKind::Claim => json!({"name": name, "persistentVolumeClaim": {"claimName": "d"}}),
            VolumeKind::DownwardApi => json!({"name": name, "downwardAPI": {"items": []}}),
            VolumeKind::Secret(s) => json!({"name": name, "secret": {"secretName": s}}),
            VolumeKind::ProjectedSecret(s) => {
                json!({"name": name, "projected": {"sources": [{"secret": {"name": s}}]}})
            }
            VolumeKind::ProjectedToken => json!({"name": name, "projected": {"sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}]}}),
            VolumeKind::Csi(secret) => {
                let mut csi = json!({"driver": "secrets-store.csi.k8s.io"});
                if let Some(s) = secret {
                    csi["nodePublishSecretRef"] = json!({"name": s});
                }
                json!({"name": name, "csi": csi})
            }
        }
    }
}

#[derive(Clone, Debug)]
struct BuildParts {
    base: Option<String>,
    output: Option<String>,
    push: Option<String>,
    service_account: Option<String>,
}

/// What a generated job uses; [`JobParts::job`] is the job.
#[derive(Clone, Debug)]
struct JobParts {
    namespace: String,
    image: String,
    service_account: Option<String>,
    clone_secret: Option<String>,
    golden_secret: Option<String>,
    credentials: Vec<String>,
    env_secret: Option<String>,
    env_from_secret: Option<String>,
    volumes: Vec<VolumeKind>,
    placement: BTreeSet<PlacementField>,
    token: bool,
    build: Option<BuildParts>,
}

impl JobParts {
    fn job(&self) -> NotebookValidationJob {
        let mut config = json!({"containerImage": self.image});
        if let Some(sa) = &self.service_account {
            config["serviceAccountName"] = json!(sa);
        }
        if !self.credentials.is_empty() {
            config["credentials"] = json!(self.credentials);
        }
        if let Some(s) = &self.env_secret {
            config["env"] = json!([{"name": "PLAIN", "value": "x"},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": s, "key": "token"}}}]);
        }
        if let Some(s) = &self.env_from_secret {
            config["envFrom"] =
                json!([{"configMapRef": {"name": "c"}}, {"secretRef": {"name": s}}]);
        }
        if !self.volumes.is_empty() {
            let volumes: Vec<Value> = self
                .volumes
                .iter()
                .enumerate()
                .map(|(i, v)| v.json(i))
                .collect();
            config["volumes"] = json!(volumes);
        }
        for field in &self.placement {
            let value = match field {
                PlacementField::NodeSelector => json!({"pool": "gpu"}),
                PlacementField::Tolerations => {
                    json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
                }
                PlacementField::Affinity => json!({"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]}]}]}}}),
            };
            config[field.as_str()] = value;
        }
        if let Some(build) = &self.build {
            let mut settings = serde_json::Map::new();
            for (key, value) in [
                ("outputImage", &build.output),
                ("pushSecret", &build.push),
                ("serviceAccount", &build.service_account),
            ] {
                if let Some(value) = value {
                    settings.insert(key.to_owned(), json!(value));
                }
            }
            let mut build_config = json!({"enabled": true, "strategy": "tekton",
                                          "strategyConfig": settings});
            if let Some(base) = &build.base {
                build_config["baseImage"] = json!(base);
            }
            config["buildConfig"] = build_config;
        }
        let mut git = json!({"url": "https://example.com/org/repo.git", "ref": "main"});
        if let Some(s) = &self.clone_secret {
            git["credentialsSecret"] = json!(s);
        }
        let mut spec = json!({"notebook": {"git": git, "path": "notebooks/train.ipynb"},
                              "podConfig": config});
        if let Some(s) = &self.golden_secret {
            spec["goldenNotebook"] = json!({"git": {"url": "https://example.com/org/golden.git",
                "ref": "main", "credentialsSecret": s}, "path": "golden.ipynb"});
        }
        let mut metadata = json!({"name": "train", "namespace": self.namespace, "uid": "u"});
        if self.token {
            metadata["annotations"] = json!({SERVICE_ACCOUNT_TOKEN_ANNOTATION: "true"});
        }
        serde_json::from_value(json!({
            "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
            "metadata": metadata, "spec": spec
        }))
        .expect("a job")
    }

    /// Every image the job runs or builds from.
    fn images(&self) -> Vec<String> {
        let mut images = vec![self.image.clone()];
        if let Some(build) = &self.build {
            images.push(
                build
                    .base
                    .clone()
                    .unwrap_or_else(|| DEFAULT_BASE_IMAGE.to_owned()),
            );
            images.extend(build.output.clone());
        }
        images
    }

    fn service_accounts(&self) -> BTreeSet<String> {
        let build = self.build.as_ref().and_then(|b| b.service_account.clone());
        self.service_account.iter().cloned().chain(build).collect()
    }

    fn secrets(&self) -> BTreeSet<String> {
        let mut secrets: BTreeSet<String> = self.credentials.iter().cloned().collect();
        secrets.extend(self.clone_secret.clone());
        secrets.extend(self.golden_secret.clone());
        secrets.extend(self.env_secret.clone());
        secrets.extend(self.env_from_secret.clone());
        secrets.extend(
            self.volumes
                .iter()
                .filter_map(|v| v.secret().map(str::to_owned)),
        );
        secrets.extend(self.build.as_ref().and_then(|b| b.push.clone()));
        secrets
    }

    fn asks_token(&self) -> bool {
        self.token
            || self
                .volumes
                .iter()
                .any(|v| matches!(v, VolumeKind::ProjectedToken))
    }

    /// The narrowest policy that admits the job: exactly what it uses.
    fn tight_policy(&self) -> PodPolicy {
        let images = self
            .images()
            .iter()
            .map(|i| {
                normalized_repository(i)
                    .expect("a reference")
                    .parse()
                    .expect("a pattern")
            })
            .collect();
        let rules = |names: BTreeSet<String>| {
            names
                .into_iter()
                .map(|name| ObjectRule {
                    namespace: Some(self.namespace.clone()),
                    name,
                })
                .collect()
        };
        PodPolicy {
            images: Some(images),
            service_accounts: Some(rules(self.service_accounts())),
            secrets: Some(rules(self.secrets())),
            denied_placement: PlacementField::ALL
                .into_iter()
                .filter(|f| !self.placement.contains(f))
                .collect(),
            volume_sources: Some(self.volumes.iter().map(|v| v.source().to_owned()).collect()),
            deny_api_token: !self.asks_token(),
        }
    }
}

fn a_secret() -> impl Strategy<Value = String> {
    select(SECRETS.to_vec()).prop_map(str::to_owned)
}

fn volume_kind() -> impl Strategy<Value = VolumeKind> {
    prop_oneof![
        Just(VolumeKind::ConfigMap),
        Just(VolumeKind::EmptyDir),
        Just(VolumeKind::Claim),
        Just(VolumeKind::DownwardApi),
        a_secret().prop_map(VolumeKind::Secret),
        a_secret().prop_map(VolumeKind::ProjectedSecret),
        Just(VolumeKind::ProjectedToken),
        proptest::option::of(a_secret()).prop_map(VolumeKind::Csi),
    ]
}

fn build_parts() -> impl Strategy<Value = BuildParts> {
    let image = || proptest::option::of(select(IMAGES.to_vec()).prop_map(str::to_owned));
    (
        image(),
        image(),
        proptest::option::of(a_secret()),
        proptest::option::of(select(SERVICE_ACCOUNTS.to_vec()).prop_map(str::to_owned)),
    )
        .prop_map(|(base, output, push, service_account)| BuildParts {
            base,
            // An output repository carries no tag.
            output: output.map(|o| normalized_repository(&o).expect("a reference")),
            push,
            service_account,
        })
}

fn job_parts() -> impl Strategy<Value = JobParts> {
    let secret = || proptest::option::of(a_secret());
    (
        (
            select(NAMESPACES.to_vec()).prop_map(str::to_owned),
            select(IMAGES.to_vec()).prop_map(str::to_owned),
            proptest::option::of(select(SERVICE_ACCOUNTS.to_vec()).prop_map(str::to_owned)),
            secret(),
            secret(),
            prop::collection::vec(a_secret(), 0..3),
        ),
        (
            secret(),
            secret(),
            prop::collection::vec(volume_kind(), 0..4),
            subsequence(PlacementField::ALL.to_vec(), 0..=3),
            any::<bool>(),
            proptest::option::of(build_parts()),
        ),
    )
        .prop_map(
            |(
                (namespace, image, service_account, clone_secret, golden_secret, credentials),
                (env_secret, env_from_secret, volumes, placement, token, build),
            )| JobParts {
                namespace,
                image,
                service_account,
                clone_secret,
                golden_secret,
                credentials,
                env_secret,
                env_from_secret,
                volumes,
                placement: placement.into_iter().collect(),
                token,
                build,
            },
        )
}

// ---------------------------------------------------------------------------------------
// Generated policies, and policies at least as strict
// ---------------------------------------------------------------------------------------

fn image_patterns() -> Vec<ImagePattern> {
    [
        "quay.io/ml",
        "quay.io",
        "docker.io",
        "docker.io/library/python",
        "registry.example.com/team",
        "localhost:5000",
    ]
    .iter()
    .map(|p| p.parse().expect("a pattern"))
    .collect()
}

fn object_rules(
    parse: fn(&str) -> Result<ObjectRule, nbv_core::pod::InvalidPodPolicy>,
    names: &[&str],
) -> Vec<ObjectRule> {
    let mut rules = Vec::new();
    for name in names {
        rules.push(parse(name).expect("a rule"));
        for namespace in NAMESPACES.iter().chain(["other"].iter()) {
            rules.push(parse(&format!("{namespace}/{name}")).expect("a rule"));
        }
    }
    rules
}

fn service_account_rules() -> Vec<ObjectRule> {
    object_rules(parse_service_account_rule, &SERVICE_ACCOUNTS)
}

fn secret_rules() -> Vec<ObjectRule> {
    object_rules(parse_secret_rule, &SECRETS)
}

fn volume_sources() -> Vec<String> {
    [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ]
    .iter()
    .map(|s| parse_volume_source(s).expect("a source"))
    .collect()
}

/// `Some` subset of `alphabet`, or `None` (everything).
fn allow_list<T: Clone + std::fmt::Debug + 'static>(
    alphabet: Vec<T>,
) -> BoxedStrategy<Option<Vec<T>>> {
    let len = alphabet.len();
    prop_oneof![
        1 => Just(None),
        3 => subsequence(alphabet, 0..=len).prop_map(Some),
    ]
    .boxed()
}

/// An allow-list no wider than `allowed`: a subset of it, or of `alphabet` when it
/// allows everything.
fn narrower<T: Clone + std::fmt::Debug + 'static>(
    allowed: Option<Vec<T>>,
    alphabet: Vec<T>,
) -> BoxedStrategy<Option<Vec<T>>> {
    match allowed {
        Some(list) => {
            let len = list.len();
            subsequence(list, 0..=len).prop_map(Some).boxed()
        }
        None => allow_list(alphabet),
    }
}

fn policy() -> impl Strategy<Value = PodPolicy> {
    (
        allow_list(image_patterns()),
        allow_list(service_account_rules()),
        allow_list(secret_rules()),
        subsequence(PlacementField::ALL.to_vec(), 0..=3),
        allow_list(volume_sources()),
        any::<bool>(),
    )
        .prop_map(
            |(images, service_accounts, secrets, placement, volume_sources, deny_api_token)| {
                PodPolicy {
                    images,
                    service_accounts: service_accounts.map(|v| v.into_iter().collect()),
                    secrets: secrets.map(|v| v.into_iter().collect()),
                    denied_placement: placement.into_iter().collect(),
                    volume_sources: volume_sources.map(|v| v.into_iter().collect()),
                    deny_api_token,
                }
            },
        )
}

/// The set as a list, `None` kept.
fn to_vec<T: Clone>(set: &Option<BTreeSet<T>>) -> Option<Vec<T>> {
    set.as_ref().map(|s| s.iter().cloned().collect())
}

/// A policy and another at least as strict in every rule.
fn policy_and_stricter() -> impl Strategy<Value = (PodPolicy, PodPolicy)> {
    policy().prop_flat_map(|loose| {
        (
            Just(loose.clone()),
            narrower(loose.images.clone(), image_patterns()),
            narrower(to_vec(&loose.service_accounts), service_account_rules()),
            narrower(to_vec(&loose.secrets), secret_rules()),
            subsequence(PlacementField::ALL.to_vec(), 0..=3),
            narrower(to_vec(&loose.volume_sources), volume_sources()),
            any::<bool>(),
        )
            .prop_map(
                |(loose, images, service_accounts, secrets, more_denied, sources, deny)| {
                    let mut denied_placement = loose.denied_placement.clone();
                    denied_placement.extend(more_denied);
                    let strict = PodPolicy {
                        images,
                        service_accounts: service_accounts.map(|v| v.into_iter().collect()),
                        secrets: secrets.map(|v| v.into_iter().collect()),
                        denied_placement,
                        volume_sources: sources.map(|v| v.into_iter().collect()),
                        deny_api_token: loose.deny_api_token || deny,
                    };
                    (loose, strict)
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_default_policy_refuses_nothing(parts in job_parts()) {
        prop_assert_eq!(PodPolicy::default().check(&parts.job()), Ok(()));
    }

    #[test]
    fn a_job_refused_by_a_policy_is_refused_by_any_stricter_one(
        (loose, strict) in policy_and_stricter(),
        parts in job_parts(),
    ) {
        let job = parts.job();
        if loose.check(&job).is_err() {
            prop_assert!(strict.check(&job).is_err(), "{:?} admits what {:?} refuses", strict, loose);
        }
    }

    #[test]
    fn a_policy_allowing_exactly_what_a_job_uses_admits_it(parts in job_parts()) {
        let policy = parts.tight_policy();
        prop_assert_eq!(policy.check(&parts.job()), Ok(()), "{:?}", policy);
    }

    #[test]
    fn a_refusal_names_a_field_and_tells_nothing_of_other_namespaces(
        policy in policy(),
        parts in job_parts(),
    ) {
        if let Err(refusal) = policy.check(&parts.job()) {
            prop_assert!(
                refusal.field.starts_with("spec.") || refusal.field.starts_with("metadata.annotations["),
                "{}", refusal
            );
            let message = refusal.to_string();
            prop_assert!(message.starts_with(&format!("{}: ", refusal.field)), "{}", message);
            prop_assert!(message.contains(refusal.rule.flag())
                || (refusal.rule == PolicyRule::Secrets && message.contains("--deny-secrets")), "{}", message);
            // Names allowed only in other namespaces are never listed.
            for (rules, flag) in [
                (&policy.service_accounts, "--allowed-service-accounts"),
                (&policy.secrets, "--allowed-secrets"),
            ] {
                let Some(rules) = rules else { continue };
                let here: BTreeSet<&str> = rules
                    .iter()
                    .filter(|r| r.namespace.as_deref().is_none_or(|ns| ns == parts.namespace))
                    .map(|r| r.name.as_str())
                    .collect();
                for name in listed(&message, flag) {
                    prop_assert!(
                        here.contains(name.as_str()) || name == "default" || name == "none",
                        "{} lists {} of another namespace", message, name
                    );
                }
            }
        }
    }
}

/// The entries a refusal lists after `flag: `, up to the closing parenthesis.
fn listed(message: &str, flag: &str) -> Vec<String> {
    let Some(start) = message.find(&format!("{flag}: ")) else {
        return Vec::new();
    };
    let rest = &message[start + flag.len() + 2..];
    let list = &rest[..rest.find(')').unwrap_or(rest.len())];
    list.split(", ").map(str::to_owned).collect()
}

// ---------------------------------------------------------------------------------------
// Image patterns
// ---------------------------------------------------------------------------------------

#[test]
fn image_patterns_match_at_path_boundaries_as_runtimes_read_references() {
    let pattern = |p: &str| p.parse::<ImagePattern>().expect(p);
    assert!(pattern("quay.io/ml").allows("quay.io/ml/nb:1"));
    assert!(pattern("quay.io/ml/").allows(
        "quay.io/ml/team/nb@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    ));
    assert!(pattern("quay.io/ml/*").allows("quay.io/ml"));
    assert!(!pattern("quay.io/ml").allows("quay.io/ml-evil/nb:1"));
    assert!(!pattern("quay.io/ml").allows("quay.io.evil.com/ml/nb:1"));
    assert!(
        pattern("QUAY.io/ml").allows("quay.IO/ml/nb"),
        "registries are host names"
    );
    assert!(
        !pattern("quay.io/ml").allows("quay.io/ML/nb"),
        "not a reference"
    );
    assert!(pattern("docker.io/library/python").allows("python:3"));
    assert!(pattern("docker.io").allows("someone/papermill"));
    assert!(pattern("index.docker.io/library").allows("python"));
    assert!(!pattern("docker.io/library").allows("someone/papermill"));
    assert!(pattern("localhost:5000").allows("localhost:5000/x:1"));
    assert!(!pattern("localhost:5000").allows("localhost:5001/x:1"));
    assert!(
        !pattern("quay.io").allows(""),
        "an empty image is no reference"
    );
    assert!(!pattern("quay.io").allows("quay.io/ml/nb:1 ; rm -rf /"));
    for invalid in [
        "python",
        "library/python",
        "quay.io/ml:1",
        "quay.io/ml@sha256:00",
        "quay.io/ML",
        "",
        "/x",
    ] {
        let error = invalid.parse::<ImagePattern>().expect_err(invalid);
        assert_eq!(error.setting, "--allowed-images", "{error}");
    }
}

#[test]
fn invalid_policy_entries_name_the_flag() {
    let mut report = String::new();
    let errors = [
        "python".parse::<ImagePattern>().expect_err("no registry"),
        "quay.io/ml:latest"
            .parse::<ImagePattern>()
            .expect_err("a tag"),
        parse_service_account_rule("Admin").expect_err("uppercase"),
        parse_secret_rule("ml/a/b").expect_err("two slashes"),
        "tolerance".parse::<PlacementField>().expect_err("unknown"),
        parse_volume_source("hostPath").expect_err("never"),
    ];
    for error in errors {
        report.push_str(&format!("{error}\n"));
    }
    insta::assert_snapshot!("invalid_entries", report);
}

// ---------------------------------------------------------------------------------------
// Refusals, as a job's author reads them
// ---------------------------------------------------------------------------------------

/// A policy that restricts every rule, with entries for another namespace that a
/// refusal must not show.
fn strict_policy() -> PodPolicy {
    PodPolicy {
        images: Some(vec![
            "quay.io/ml-team".parse().expect("a pattern"),
            "registry.example.com".parse().expect("a pattern"),
        ]),
        service_accounts: Some(
            ["notebook-runner", "other/admin"]
                .iter()
                .map(|s| parse_service_account_rule(s).expect("a rule"))
                .collect(),
        ),
        secrets: Some(
            ["git-credentials", "ml/s3-readonly", "other/db"]
                .iter()
                .map(|s| parse_secret_rule(s).expect("a rule"))
                .collect(),
        ),
        denied_placement: PlacementField::ALL.into_iter().collect(),
        volume_sources: Some(
            [
                "configMap",
                "emptyDir",
                "persistentVolumeClaim",
                "projected",
                "secret",
            ]
            .iter()
            .map(|s| parse_volume_source(s).expect("a source"))
            .collect(),
        ),
        deny_api_token: true,
    }
}

#[test]
fn refusal_messages() {
    let allowed = json!({"podConfig": {"containerImage": "quay.io/ml-team/papermill:1"}});
    let with = |patch: Value| {
        let mut spec = allowed.clone();
        merge(&mut spec, patch);
        spec
    };
    let csi_allowed = PodPolicy {
        volume_sources: None,
        ..strict_policy()
    };
    let no_secrets = PodPolicy {
        secrets: Some(BTreeSet::new()),
        ..strict_policy()
    };
    let cases: Vec<(PodPolicy, Value, Option<&str>)> = vec![
        (
            strict_policy(),
            json!({"podConfig": {"containerImage": "docker.io/someone/papermill:1"}}),
            None,
        ),
        (
            strict_policy(),
            json!({"podConfig": {"containerImage": "python:3.11"}}),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"buildConfig": {"enabled": true}}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"buildConfig": {"enabled": true,
            "baseImage": "quay.io/ml-team/base:1",
            "strategyConfig": {"outputImage": "ghcr.io/someone/out"}}}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"buildConfig": {"enabled": true,
            "baseImage": "quay.io/ml-team/base:1",
            "strategyConfig": {"pushSecret": "registry-admin"}}}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"buildConfig": {"enabled": true,
            "baseImage": "quay.io/ml-team/base:1",
            "strategyConfig": {"serviceAccount": "pipeline"}}}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"notebook": {"git": {"credentialsSecret": "deploy-key"}}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"credentials": ["s3-readonly", "aws-admin"]}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"env": [
            {"name": "T", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"envFrom": [{"secretRef": {"name": "db"}}]}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"serviceAccountName": "admin"}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"nodeSelector": {"pool": "gpu"}}})),
            None,
        ),
        (
            strict_policy(),
            with(
                json!({"podConfig": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}}),
            ),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"affinity": {"podAntiAffinity": {}}}})),
            None,
        ),
        (
            strict_policy(),
            with(json!({"podConfig": {"volumes": [
            {"name": "cfg", "configMap": {"name": "c"}},
            {"name": "vault", "csi": {"driver": "secrets-store.csi.k8s.io"}}]}})),
            None,
        ),
        (
            strict_policy(),
            with(
                json!({"podConfig": {"volumes": [{"name": "s", "secret": {"secretName": "db"}}]}}),
            ),
            None,
        ),
        (
            strict_policy(),
            with(
                json!({"podConfig": {"volumes": [{"name": "p", "projected": {"sources": [
            {"secret": {"name": "git-credentials"}}, {"secret": {"name": "db"}}]}}]}}),
            ),
            None,
        ),
        (
            strict_policy(),
            with(
                json!({"podConfig": {"volumes": [{"name": "p", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token"}}]}}]}}),
            ),
            None,
        ),
        (
            csi_allowed,
            with(json!({"podConfig": {"volumes": [{"name": "vault", "csi": {
            "driver": "secrets-store.csi.k8s.io", "nodePublishSecretRef": {"name": "vault-creds"}}}]}})),
            None,
        ),
        (
            strict_policy(),
            with(
                json!({"goldenNotebook": {"git": {"url": "https://example.com/g.git",
            "ref": "main", "credentialsSecret": "golden-key"}, "path": "g.ipynb"}}),
            ),
            None,
        ),
        (
            no_secrets,
            with(json!({"podConfig": {"credentials": ["git-credentials"]}})),
            None,
        ),
        (strict_policy(), allowed.clone(), Some("true")),
    ];
    let mut report = String::new();
    for (policy, spec, token) in cases {
        let mut job = job_with(spec.clone());
        if let Some(value) = token {
            job.metadata.annotations = Some(
                [(
                    SERVICE_ACCOUNT_TOKEN_ANNOTATION.to_owned(),
                    value.to_owned(),
                )]
                .into(),
            );
        }
        let refusal = policy.check(&job).expect_err("refused");
        assert!(!refusal.to_string().contains("other/"), "{refusal}");
        assert!(!refusal.to_string().contains("\"other\""), "{refusal}");
        report.push_str(&format!(
            "{spec}{}\n  {} ({:?})\n  {refusal}\n",
            token
                .map(|t| format!(" + annotation {t:?}"))
                .unwrap_or_default(),
            refusal.field,
            refusal.rule,
        ));
    }
    assert_eq!(strict_policy().check(&job_with(allowed)), Ok(()));
    insta::assert_snapshot!("refusal_messages", report);
}

// ---------------------------------------------------------------------------------------
// The policy and the token in the Pod builder
// ---------------------------------------------------------------------------------------

#[test]
fn a_refused_job_fails_before_its_pod_naming_the_field_and_the_rule() {
    let defaults = PodDefaults {
        policy: strict_policy(),
        ..PodDefaults::default()
    };
    let job = job_with(json!({"podConfig": {"serviceAccountName": "admin"}}));
    let err = validation_pod(&job, ATTEMPT, None, None, &defaults).expect_err("refused");
    assert!(matches!(&err, PodSpecError::Policy(r) if r.rule == PolicyRule::Images));
    assert_eq!(
        err.field(),
        "spec.podConfig.containerImage",
        "the first field: the image"
    );
    let failure = err.failure();
    assert_eq!(failure.reason.as_str(), "PodPolicyDenied");
    assert_eq!(failure.kind, nbv_core::phase::FailureKind::Permanent);

    let job = job_with(
        json!({"podConfig": {"containerImage": "quay.io/ml-team/nb:1",
                                            "serviceAccountName": "admin"}}),
    );
    let err = validation_pod(&job, ATTEMPT, None, None, &defaults).expect_err("refused");
    assert_eq!(err.field(), "spec.podConfig.serviceAccountName");
    // The same job under the default policy is a Pod.
    validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).expect("a pod");
    // An empty image is no image to allow: it is refused for what it is.
    let empty = job_with(json!({"podConfig": {"containerImage": ""}}));
    let err = validation_pod(&empty, ATTEMPT, None, None, &defaults).expect_err("refused");
    assert_eq!(err, PodSpecError::EmptyImage);
}

#[test]
fn a_pod_gets_an_api_token_only_when_its_job_asks() {
    let token = |job: &NotebookValidationJob| {
        pod_of(job)
            .spec
            .expect("spec")
            .automount_service_account_token
    };
    let mut job = job_with(json!({}));
    assert_eq!(token(&job), Some(false), "no service account, no token");
    job = job_with(json!({"podConfig": {"serviceAccountName": "notebook-runner"}}));
    assert_eq!(
        token(&job),
        Some(false),
        "a named service account, still no token"
    );
    job.metadata.annotations = Some(
        [(
            SERVICE_ACCOUNT_TOKEN_ANNOTATION.to_owned(),
            "true".to_owned(),
        )]
        .into(),
    );
    assert_eq!(token(&job), Some(true), "asked for");
    let spec = pod_of(&job).spec.expect("spec");
    assert_eq!(
        spec.service_account_name.as_deref(),
        Some("notebook-runner")
    );

    job.metadata.annotations = Some(
        [(
            SERVICE_ACCOUNT_TOKEN_ANNOTATION.to_owned(),
            "yes".to_owned(),
        )]
        .into(),
    );
    let err = validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default())
        .expect_err("not a boolean");
    assert_eq!(
        err.field(),
        "metadata.annotations[mlops.dev/automount-service-account-token]"
    );
    assert_eq!(err.failure().reason.as_str(), "InvalidAnnotation");
    assert!(err.to_string().contains("\"yes\""), "{err}");
}

#[test]
fn every_upstream_sample_keeps_to_the_default_policy_and_gets_no_token() {
    let mut pods = 0;
    for job in sample_jobs() {
        assert_eq!(PodPolicy::default().check(&job), Ok(()));
        let models = nbv_testkit::fixtures::served_models(&job);
        // A sample with a field nbv does not know fails by name (tests/pod/spec.rs).
        let Ok(pod) = validation_pod(
            &job,
            ATTEMPT,
            None,
            models.as_deref(),
            &PodDefaults::default(),
        ) else {
            continue;
        };
        pods += 1;
        assert_eq!(
            pod.spec.expect("spec").automount_service_account_token,
            Some(false),
            "{:?}",
            job.metadata.name
        );
    }
    assert!(pods >= 10, "{pods} samples became Pods");
}
