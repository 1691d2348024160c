//! What `nbv pod run` is asked to do, read from the notebook container's environment
//! (the variables [`validation_pod`](crate::pod::validation_pod) sets).

use serde::Deserialize;
use serde_json::Value;

use crate::checks::CheckPolicy;
use crate::compare::Settings;
use crate::models::Protocol;

/// The settings of one run.
///
/// | variable         | field                                              |
/// |------------------|----------------------------------------------------|
/// | `NBV_REPOSITORY` | [`repository`](Self::repository), `/workspace/repo` |
/// | `NBV_NOTEBOOK`   | [`notebook`](Self::notebook), required              |
/// | `NBV_OUTPUT`     | [`output`](Self::output), `/workspace/out.ipynb`    |
/// | `NBV_RESULT`     | [`result`](Self::result), `/dev/termination-log`    |
/// | `NBV_GOLDEN`, `NBV_GOLDEN_NAME`, `NBV_COMPARISON` | [`golden`](Self::golden) |
/// | `NBV_CHECKS`     | [`checks`](Self::checks)                            |
/// | `NBV_MODELS`     | [`models`](Self::models)                            |
///
/// # Examples
///
/// ```
/// use nbv_core::compare::Settings;
/// use nbv_core::pod::RunSettings;
///
/// let settings = RunSettings::from_env(|name| match name {
///     "NBV_NOTEBOOK" => Some("models/train.ipynb".to_owned()),
///     "NBV_GOLDEN" => Some("/nbv-golden/golden.ipynb".to_owned()),
///     "NBV_COMPARISON" => Some(Settings::default().to_json()),
///     _ => None,
/// })?;
/// assert_eq!(settings.output, "/workspace/out.ipynb");
/// assert_eq!(settings.golden.unwrap().path, "/nbv-golden/golden.ipynb");
/// assert!(RunSettings::from_env(|_| None).is_err()); // no notebook
/// # Ok::<(), nbv_core::pod::InvalidRunSettings>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RunSettings {
    /// Where the repository was cloned.
    pub repository: String,
    /// The notebook's path inside the repository (`spec.notebook.path`).
    pub notebook: String,
    /// Where papermill writes the executed notebook.
    pub output: String,
    /// Where the report goes: the container's termination message.
    pub result: String,
    /// The golden notebook to compare with, if any.
    pub golden: Option<GoldenSettings>,
    /// The checks of `spec.validationConfig`.
    pub checks: Option<CheckPolicy>,
    /// The prediction check of `spec.modelValidation`.
    pub models: Option<PredictionRequest>,
}

/// Where the golden notebook is and how to compare with it.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::RunSettings;
///
/// let settings = RunSettings::from_env(|name| match name {
///     "NBV_NOTEBOOK" => Some("train.ipynb".to_owned()),
///     "NBV_GOLDEN" => Some("/nbv-golden/golden.ipynb".to_owned()),
///     "NBV_GOLDEN_NAME" => Some("golden/train.ipynb".to_owned()),
///     _ => None,
/// })?;
/// assert_eq!(settings.golden.unwrap().name, "golden/train.ipynb");
/// # Ok::<(), nbv_core::pod::InvalidRunSettings>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GoldenSettings {
    /// Its path in the Pod.
    pub path: String,
    /// Its path in its repository (`spec.goldenNotebook.path`), which messages name:
    /// the Pod's path means nothing to the job's author. The Pod's path without one.
    pub name: String,
    /// How to compare.
    pub settings: Settings,
}

/// The prediction check: what to send each model and what it must answer.
///
/// # Examples
///
/// ```
/// use nbv_core::models::Protocol;
/// use nbv_core::pod::PredictionRequest;
///
/// let request: PredictionRequest = serde_json::from_str(r#"{"tolerance": 0.01,
///     "testData": {"instances": [[1, 2]]}, "expectedOutput": {"predictions": [1]},
///     "models": [{"model": "ml/iris", "name": "iris", "url": "http://iris.ml", "protocol": "v1"}]}"#)?;
/// assert_eq!(request.models[0].protocol, Protocol::V1);
/// assert_eq!(request.models[0].predict_url(), "http://iris.ml/v1/models/iris:predict");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PredictionRequest {
    /// How far a number may be from the expected one.
    pub tolerance: f64,
    /// The request body each model gets.
    #[serde(default)]
    pub test_data: Value,
    /// What each model must answer.
    #[serde(default)]
    pub expected_output: Value,
    /// The models the gate opened for.
    #[serde(default)]
    pub models: Vec<ModelEndpoint>,
}

/// One model to ask.
///
/// # Examples
///
/// ```
/// use nbv_core::models::Protocol;
/// use nbv_core::pod::ModelEndpoint;
///
/// let model = ModelEndpoint { model: "ml/iris".into(), name: "iris".into(),
///     url: "http://iris.ml.svc/".into(), protocol: Protocol::V2 };
/// assert_eq!(model.predict_url(), "http://iris.ml.svc/v2/models/iris/infer");
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ModelEndpoint {
    /// `namespace/name`, as reported.
    pub model: String,
    /// The model's name in the server's paths.
    pub name: String,
    /// The server's base URL.
    pub url: String,
    /// The inference protocol.
    #[serde(default)]
    pub protocol: Protocol,
}

impl ModelEndpoint {
    /// The URL of the prediction request.
    pub fn predict_url(&self) -> String {
        format!(
            "{}{}",
            self.url.trim_end_matches('/'),
            crate::models::predict_path(self.protocol, &self.name)
        )
    }
}

/// A variable of the notebook container that nbv cannot read.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::RunSettings;
///
/// let err = RunSettings::from_env(|name| match name {
///     "NBV_NOTEBOOK" => Some("a.ipynb".to_owned()),
///     "NBV_CHECKS" => Some("{".to_owned()),
///     _ => None,
/// }).unwrap_err();
/// assert!(err.to_string().starts_with("NBV_CHECKS:"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: {problem}")]
pub struct InvalidRunSettings {
    /// The environment variable.
    pub variable: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

impl RunSettings {
    /// The settings from the environment, `lookup` reading one variable.
    ///
    /// # Errors
    ///
    /// [`InvalidRunSettings`] when `NBV_NOTEBOOK` is unset or empty, or a JSON variable
    /// is not what nbv writes (a Pod spec edited by hand, or another version's).
    pub fn from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<RunSettings, InvalidRunSettings> {
        let read = |name: &str, default: &str| {
            lookup(name)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_owned())
        };
        let notebook = read("NBV_NOTEBOOK", "");
        if notebook.is_empty() {
            return Err(InvalidRunSettings {
                variable: "NBV_NOTEBOOK",
                problem: "is not set: the notebook's path in the repository".to_owned(),
            });
        }
        let golden = match lookup("NBV_GOLDEN").filter(|g| !g.is_empty()) {
            None => None,
            Some(path) => {
                let settings = match lookup("NBV_COMPARISON").filter(|c| !c.is_empty()) {
                    None => Settings::default(),
                    Some(text) => json("NBV_COMPARISON", &text)?,
                };
                let name = lookup("NBV_GOLDEN_NAME")
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| path.clone());
                Some(GoldenSettings {
                    path,
                    name,
                    settings,
                })
            }
        };
        let optional = |name: &'static str| lookup(name).filter(|v| !v.is_empty());
        Ok(RunSettings {
            repository: read("NBV_REPOSITORY", "/workspace/repo"),
            notebook,
            output: read("NBV_OUTPUT", "/workspace/out.ipynb"),
            result: read("NBV_RESULT", "/dev/termination-log"),
            golden,
            checks: optional("NBV_CHECKS")
                .map(|t| json("NBV_CHECKS", &t))
                .transpose()?,
            models: optional("NBV_MODELS")
                .map(|t| json("NBV_MODELS", &t))
                .transpose()?,
        })
    }
}

fn json<T: serde::de::DeserializeOwned>(
    variable: &'static str,
    text: &str,
) -> Result<T, InvalidRunSettings> {
    serde_json::from_str(text).map_err(|e| InvalidRunSettings {
        variable,
        problem: e.to_string(),
    })
}
