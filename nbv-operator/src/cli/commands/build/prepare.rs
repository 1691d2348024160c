//! `nbv build prepare --source DIR [--summary FILE]`: the build step that decides, with
//! nbv-core, what the image is made from and writes it under `DIR/.nbv-build/`.

use std::io::Write;
use std::path::Path;

use nbv_core::build::{
    PREPARED_DIR, PREPARED_DOCKERFILE, PREPARED_REQUIREMENTS, Recipe, SourceConfig, choose,
    generate_dockerfile,
};

use super::checkout::Checkout;

/// The variable holding the build's `SourceConfig`, as JSON.
const SETTINGS_VAR: &str = "NBV_BUILD";

/// Why preparing failed: bad usage exits 2, anything else 1.
#[derive(Debug, thiserror::Error)]
enum PrepareError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Failed(String),
}

pub fn prepare(
    source: &Path,
    summary_file: Option<&Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    match try_prepare(source, summary_file) {
        Ok(summary) => {
            let _ = writeln!(out, "{summary}");
            0
        }
        Err(e) => {
            let _ = writeln!(err, "nbv: {e}");
            match e {
                PrepareError::Usage(_) => 2,
                PrepareError::Failed(_) => 1,
            }
        }
    }
}

/// The build's settings, from [`SETTINGS_VAR`].
fn settings() -> Result<SourceConfig, PrepareError> {
    let text = std::env::var(SETTINGS_VAR)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| {
            PrepareError::Usage(format!(
                "{SETTINGS_VAR} is not set: it holds the build's source settings as JSON \
                 (notebookPath, baseImage, autoGenerate, preferDockerfile, fallback, ...), \
                 which nbv writes into the build it creates"
            ))
        })?;
    serde_json::from_str(&text).map_err(|e| {
        PrepareError::Usage(format!(
            "{SETTINGS_VAR} is not the build's source settings as JSON: {e}"
        ))
    })
}

/// Decides and writes; returns the summary line.
fn try_prepare(source: &Path, summary_file: Option<&Path>) -> Result<String, PrepareError> {
    let config = settings()?;
    let checkout = Checkout::open(source).map_err(PrepareError::Usage)?;
    let chosen = choose(&config, &checkout);
    // A file refused (a link out of the checkout, a file too large) explains the
    // decision better than the decision's own error, and is an error even when another
    // file was chosen: the repository is not what its author thinks it is.
    if let Some(refusal) = checkout.refusal() {
        return Err(PrepareError::Failed(refusal));
    }
    let recipe = chosen.map_err(|e| PrepareError::Failed(e.to_string()))?;
    let read = |path: &str| {
        checkout
            .read_bytes(path)
            .map_err(|e| PrepareError::Failed(format!("{path}: {e}")))
    };
    // Everything is read before .nbv-build is replaced: the repository may name a file
    // inside it.
    let dockerfile = match &recipe {
        Recipe::Dockerfile { path } => read(path)?,
        _ => generate_dockerfile(&config.base_image, &recipe)
            .map_err(|e| PrepareError::Failed(e.to_string()))?
            .unwrap_or_default()
            .into_bytes(),
    };
    let requirements = match &recipe {
        Recipe::Requirements { path } => Some(read(path)?),
        _ => recipe.generated_requirements().map(String::into_bytes),
    };
    write_prepared(checkout.root(), &dockerfile, requirements.as_deref())?;
    let summary = recipe.summary();
    if let Some(file) = summary_file {
        std::fs::write(file, format!("{summary}\n")).map_err(|e| {
            PrepareError::Failed(format!(
                "cannot write the summary to {}: {e}",
                file.display()
            ))
        })?;
    }
    Ok(summary)
}

/// Writes `root/.nbv-build/` anew: whatever the repository has there (a directory, a
/// file, a link) is replaced, so nothing is written through a link.
fn write_prepared(
    root: &Path,
    dockerfile: &[u8],
    requirements: Option<&[u8]>,
) -> Result<(), PrepareError> {
    let failed = |what: &str, e: std::io::Error| {
        PrepareError::Failed(format!("cannot write {what} in the checkout: {e}"))
    };
    let dir = root.join(PREPARED_DIR);
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&dir),
        Ok(_) => std::fs::remove_file(&dir),
        Err(_) => Ok(()),
    }
    .map_err(|e| failed(PREPARED_DIR, e))?;
    std::fs::create_dir(&dir).map_err(|e| failed(PREPARED_DIR, e))?;
    write_new(&root.join(PREPARED_DOCKERFILE), dockerfile)
        .map_err(|e| failed(PREPARED_DOCKERFILE, e))?;
    if let Some(requirements) = requirements {
        write_new(&root.join(PREPARED_REQUIREMENTS), requirements)
            .map_err(|e| failed(PREPARED_REQUIREMENTS, e))?;
    }
    Ok(())
}

/// Writes a file that must not exist yet.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(bytes)
}
