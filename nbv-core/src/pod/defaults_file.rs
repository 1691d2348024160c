//! The Pod defaults file (`nbv run --pod-defaults`, usually a mounted ConfigMap): YAML
//! or JSON, read once at start and checked field by field, so that a mistake stops the
//! operator with the field named instead of producing Pods the API server refuses.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, ResourceRequirements, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::defaults::{CloneUser, MAX_UID, PodDefaults};
use super::syntax::{
    MAX_ANNOTATIONS_BYTES, image_problem, key_problem, label_value_problem, quantity_value,
};
use super::{ATTEMPT_LABEL, JOB_LABEL, MANAGED_BY_LABEL};
use crate::kube_names::is_dns_subdomain;
use crate::yaml::YamlError;

/// Label keys nbv sets on its Pods and selects them by: never configurable.
const RESERVED_LABELS: [&str; 3] = [MANAGED_BY_LABEL, JOB_LABEL, ATTEMPT_LABEL];
/// The prefix of nbv's own label keys, reserved for them.
const RESERVED_LABEL_PREFIX: &str = "mlops.dev/";

/// Why a Pod defaults file cannot be used.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::PodDefaults;
///
/// let error = PodDefaults::from_yaml("labels: {mlops.dev/job: x}").unwrap_err();
/// assert!(error.to_string().starts_with("labels.mlops.dev/job: nbv sets and selects"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidPodDefaults {
    /// The text is not YAML (or JSON).
    #[error("not YAML or JSON: {0}")]
    Syntax(String),
    /// The text exceeds a bound of [`crate::yaml`] (size, depth, aliasing).
    #[error("{0}")]
    Bounds(crate::yaml::BoundsError),
    /// A field is unknown or its value is not acceptable.
    #[error("{field}: {problem}")]
    Field {
        /// The field, as a path: `clone.resources.limits.cpu`, `tolerations[0].effct`.
        field: String,
        /// What is wrong and what to write instead.
        problem: String,
    },
}

fn invalid(field: impl Into<String>, problem: impl Into<String>) -> InvalidPodDefaults {
    InvalidPodDefaults::Field {
        field: field.into(),
        problem: problem.into(),
    }
}

impl PodDefaults {
    /// The defaults a Pod defaults file describes: nbv's [`Default`]s, with each field
    /// the file gives replacing the default of the same name (`clone.resources` as a
    /// whole, for example). An empty file changes nothing.
    ///
    /// ```yaml
    /// image: registry.example.com/mirror/nbv:0.2.0   # nbv's image, for its containers
    /// clone:
    ///   user: auto              # auto | none | a user id
    ///   resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: "1", memory: 1Gi}}
    /// notebook:
    ///   resources: {...}        # for what the job's podConfig.resources does not name
    /// imagePullSecrets: [{name: mirror-pull}]
    /// labels: {...}             # never nbv's own (app.kubernetes.io/managed-by, mlops.dev/*)
    /// annotations: {...}
    /// nodeSelector: {...}       # merged with the job's (Placement::merged_with)
    /// tolerations: [...]
    /// affinity: {...}
    /// priorityClassName: ...
    /// runtimeClassName: ...
    /// ```
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::{CloneUser, InvalidPodDefaults, PodDefaults};
    ///
    /// let defaults = PodDefaults::from_yaml("clone: {user: none}\nlabels: {team: ml}")?;
    /// assert_eq!(defaults.clone_user, CloneUser::Unset);
    /// assert_eq!(defaults.labels["team"], "ml");
    ///
    /// let error = PodDefaults::from_yaml("clone: {imag: x}").unwrap_err();
    /// assert!(matches!(error, InvalidPodDefaults::Field { ref field, .. } if field == "clone.imag"));
    /// # Ok::<(), InvalidPodDefaults>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidPodDefaults`] naming the first field that is unknown, of the wrong type,
    /// or not what Kubernetes accepts: an image reference, a quantity (or a request
    /// above its limit), a label or annotation key, a label value, a Secret or class
    /// name, a user id that is root or out of range; and nbv's own label keys.
    pub fn from_yaml(text: &str) -> Result<PodDefaults, InvalidPodDefaults> {
        let value: Value = crate::yaml::from_str(text).map_err(|e| match e {
            YamlError::Bounds(bounds) => InvalidPodDefaults::Bounds(bounds),
            YamlError::Yaml(e) => InvalidPodDefaults::Syntax(e.to_string()),
        })?;
        let mut defaults = PodDefaults::default();
        for (key, value) in object("", value)? {
            let field = key.as_str();
            match field {
                "image" => defaults.nbv_image = image(field, value)?,
                "clone" => {
                    for (key, value) in object(field, value)? {
                        let field = format!("clone.{key}");
                        match key.as_str() {
                            "image" => {
                                return Err(InvalidPodDefaults::Field {
                                    field,
                                    problem: "the clone runs in nbv's own image now; set the \
                                              top-level `image` (or --nbv-image) to a mirror \
                                              of nbv's image instead"
                                        .to_owned(),
                                });
                            }
                            "user" => defaults.clone_user = clone_user(&field, value)?,
                            "resources" => defaults.clone_resources = resources(&field, value)?,
                            _ => return Err(unknown(&field, "user, resources")),
                        }
                    }
                }
                "notebook" => {
                    for (key, value) in object(field, value)? {
                        let field = format!("notebook.{key}");
                        match key.as_str() {
                            "resources" => defaults.notebook_resources = resources(&field, value)?,
                            _ => return Err(unknown(&field, "resources")),
                        }
                    }
                }
                "imagePullSecrets" => defaults.image_pull_secrets = pull_secrets(field, value)?,
                "labels" => defaults.labels = labels(field, value)?,
                "annotations" => defaults.annotations = annotations(field, value)?,
                "nodeSelector" => defaults.placement.node_selector = node_selector(field, value)?,
                "tolerations" => {
                    defaults.placement.tolerations = typed::<Vec<Toleration>>(field, value)?
                }
                "affinity" => defaults.placement.affinity = Some(typed::<Affinity>(field, value)?),
                "priorityClassName" => {
                    defaults.placement.priority_class_name = Some(class_name(field, value)?);
                }
                "runtimeClassName" => {
                    defaults.placement.runtime_class_name = Some(class_name(field, value)?);
                }
                _ => {
                    return Err(unknown(
                        field,
                        "image, clone, notebook, imagePullSecrets, labels, annotations, nodeSelector, \
                         tolerations, affinity, priorityClassName, runtimeClassName",
                    ));
                }
            }
        }
        Ok(defaults)
    }

    /// These defaults with nbv's image `image` (`nbv run --nbv-image`), checked as in
    /// the file's `image`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::PodDefaults;
    ///
    /// let mirrored = PodDefaults::default().with_nbv_image("mirror.example.com/nbv:0.2.0")?;
    /// assert_eq!(mirrored.nbv_image, "mirror.example.com/nbv:0.2.0");
    /// assert!(PodDefaults::default().with_nbv_image("NBV").is_err());
    /// # Ok::<(), nbv_core::pod::InvalidPodDefaults>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidPodDefaults`] for `image` when `image` is not an image reference.
    pub fn with_nbv_image(mut self, image: &str) -> Result<PodDefaults, InvalidPodDefaults> {
        self.nbv_image = self::image("image", Value::from(image))?;
        Ok(self)
    }
}

fn unknown(field: &str, known: &str) -> InvalidPodDefaults {
    invalid(field, format!("unknown field; the fields here are {known}"))
}

/// The entries of the object at `field` (an empty file or `null` has none).
fn object(field: &str, value: Value) -> Result<Map<String, Value>, InvalidPodDefaults> {
    match value {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(map),
        other => Err(invalid(
            if field.is_empty() { "(file)" } else { field },
            format!("must be a mapping, not {}", kind(&other)),
        )),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn string(field: &str, value: Value) -> Result<String, InvalidPodDefaults> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(invalid(
            field,
            format!("must be a string, not {} (quote it)", kind(&other)),
        )),
    }
}

/// A map of strings to strings, each entry checked by `check(key, value)`.
fn string_map(
    field: &str,
    value: Value,
    check: impl Fn(&str, &str) -> Option<String>,
) -> Result<BTreeMap<String, String>, InvalidPodDefaults> {
    let mut out = BTreeMap::new();
    for (key, value) in object(field, value)? {
        let entry = format!("{field}.{key}");
        let value = string(&entry, value)?;
        if let Some(problem) = check(&key, &value) {
            return Err(invalid(entry, problem));
        }
        out.insert(key, value);
    }
    Ok(out)
}

fn labels(field: &str, value: Value) -> Result<BTreeMap<String, String>, InvalidPodDefaults> {
    string_map(field, value, |key, value| {
        if RESERVED_LABELS.contains(&key) || key.starts_with(RESERVED_LABEL_PREFIX) {
            return Some(format!(
                "nbv sets and selects its Pods by this label; the keys {} and {RESERVED_LABEL_PREFIX}* are nbv's",
                RESERVED_LABELS.join(", ")
            ));
        }
        key_problem(key).or_else(|| label_value_problem(value))
    })
}

fn node_selector(
    field: &str,
    value: Value,
) -> Result<BTreeMap<String, String>, InvalidPodDefaults> {
    string_map(field, value, |key, value| {
        key_problem(key).or_else(|| label_value_problem(value))
    })
}

fn annotations(field: &str, value: Value) -> Result<BTreeMap<String, String>, InvalidPodDefaults> {
    let map = string_map(field, value, |key, _| key_problem(key))?;
    let size: usize = map.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > MAX_ANNOTATIONS_BYTES {
        return Err(invalid(
            field,
            format!("{size} bytes; an object's annotations hold at most {MAX_ANNOTATIONS_BYTES}"),
        ));
    }
    Ok(map)
}

fn image(field: &str, value: Value) -> Result<String, InvalidPodDefaults> {
    let image = string(field, value)?;
    match image_problem(&image) {
        Some(problem) => Err(invalid(field, problem)),
        None => Ok(image),
    }
}

fn clone_user(field: &str, value: Value) -> Result<CloneUser, InvalidPodDefaults> {
    let problem = "must be auto, none, or a user id from 1 to 2147483647";
    match value {
        Value::String(s) if s == "auto" => Ok(CloneUser::Auto),
        Value::String(s) if s == "none" => Ok(CloneUser::Unset),
        Value::Number(n) => match n.as_i64() {
            Some(0) => Err(invalid(
                field,
                format!("0 is root, which runAsNonRoot refuses; {problem}"),
            )),
            Some(uid) if (1..=MAX_UID).contains(&uid) => Ok(CloneUser::Uid(uid)),
            _ => Err(invalid(field, format!("{n}: {problem}"))),
        },
        other => Err(invalid(field, format!("{other}: {problem}"))),
    }
}

fn class_name(field: &str, value: Value) -> Result<String, InvalidPodDefaults> {
    let name = string(field, value)?;
    if is_dns_subdomain(&name) {
        Ok(name)
    } else {
        Err(invalid(
            field,
            format!("{name:?} is not a name: lowercase letters, digits, `-` and `.`"),
        ))
    }
}

fn pull_secrets(field: &str, value: Value) -> Result<Vec<String>, InvalidPodDefaults> {
    let Value::Array(items) = value else {
        return Err(invalid(
            field,
            format!("must be a list of {{name: <Secret>}}, not {}", kind(&value)),
        ));
    };
    let mut names = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        let entry = format!("{field}[{index}]");
        let mut name = None;
        for (key, value) in object(&entry, item)? {
            let key_field = format!("{entry}.{key}");
            match key.as_str() {
                "name" => name = Some(class_name(&key_field, value)?),
                _ => return Err(unknown(&key_field, "name")),
            }
        }
        names.push(name.ok_or_else(|| invalid(format!("{entry}.name"), "is missing"))?);
    }
    Ok(names)
}

/// `requests` and `limits`, each a map of resource names to quantities (strings or
/// numbers, as Kubernetes reads them); no request above its limit.
fn resources(field: &str, value: Value) -> Result<ResourceRequirements, InvalidPodDefaults> {
    let mut requirements = ResourceRequirements::default();
    for (key, value) in object(field, value)? {
        let side = format!("{field}.{key}");
        let mut quantities = BTreeMap::new();
        for (resource, value) in object(&side, value)? {
            let entry = format!("{side}.{resource}");
            if let Some(problem) = key_problem(&resource) {
                return Err(invalid(entry, format!("not a resource name: {problem}")));
            }
            let text = match value {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(invalid(
                        entry,
                        format!("must be a quantity, not {}", kind(&other)),
                    ));
                }
            };
            match quantity_value(&text) {
                Some(v) if v >= 0.0 => {}
                Some(_) => return Err(invalid(entry, format!("{text:?} is negative"))),
                None => {
                    return Err(invalid(
                        entry,
                        format!(
                            "{text:?} is not a quantity: a number with an optional suffix, \
                                 as 500m, 2, 1.5Gi, 512Mi"
                        ),
                    ));
                }
            }
            quantities.insert(resource, Quantity(text));
        }
        match key.as_str() {
            "requests" => requirements.requests = Some(quantities),
            "limits" => requirements.limits = Some(quantities),
            _ => return Err(unknown(&side, "requests, limits")),
        }
    }
    let empty = BTreeMap::new();
    let limits = requirements.limits.as_ref().unwrap_or(&empty);
    for (resource, request) in requirements.requests.iter().flatten() {
        let Some(limit) = limits.get(resource) else {
            continue;
        };
        if quantity_value(&request.0) > quantity_value(&limit.0) {
            return Err(invalid(
                format!("{field}.requests.{resource}"),
                format!("{} is above the limit {}", request.0, limit.0),
            ));
        }
    }
    Ok(requirements)
}

/// `value` read as a Kubernetes type, refusing fields the type does not have (which
/// the type's own reading would drop without a word).
fn typed<T: DeserializeOwned + Serialize>(
    field: &str,
    value: Value,
) -> Result<T, InvalidPodDefaults> {
    let read: T =
        serde_json::from_value(value.clone()).map_err(|e| invalid(field, e.to_string()))?;
    let written = serde_json::to_value(&read).map_err(|e| invalid(field, e.to_string()))?;
    match dropped(field, &value, &written) {
        Some(path) => Err(invalid(path, "unknown field")),
        None => Ok(read),
    }
}

/// The first field of `input` that `output` lost, as a path under `path`.
fn dropped(path: &str, input: &Value, output: &Value) -> Option<String> {
    match (input, output) {
        (Value::Object(input), Value::Object(output)) => input.iter().find_map(|(key, value)| {
            let field = format!("{path}.{key}");
            match output.get(key) {
                _ if value.is_null() => None,
                None => Some(field),
                Some(kept) => dropped(&field, value, kept),
            }
        }),
        (Value::Array(input), Value::Array(output)) => input
            .iter()
            .zip(output)
            .enumerate()
            .find_map(|(i, (value, kept))| dropped(&format!("{path}[{i}]"), value, kept)),
        _ => None,
    }
}
