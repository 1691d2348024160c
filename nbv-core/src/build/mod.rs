//! Image builds (`podConfig.buildConfig`): the image a notebook needs, built by the
//! cluster's own build system before the run's validation Pod starts.
//!
//! [`SourceConfig`] holds what decides, inside the build, which requirements file or
//! Dockerfile is used.

mod dockerfile;
mod imports;
mod key;
mod objects;
mod observe;
mod plan;
mod recipe;
mod registry;
mod repo_path;
mod source;
mod stdlib;

pub use dockerfile::{
    PREPARED_DIR, PREPARED_DOCKERFILE, PREPARED_REQUIREMENTS, generate_dockerfile,
};
pub use key::BuildKey;
pub use objects::{
    BUILD_KEY_LABEL, BUILD_STRATEGY_LABEL, IMAGE_ANNOTATION, KANIKO_CONTAINER, Route,
    build_objects, cancel, expired, history_selector,
};
pub use observe::{BuildObserved, MAX_STATUS_TEXT, observe};
pub use plan::{
    BuildDefaults, BuildPlan, DEFAULT_BASE_IMAGE, DEFAULT_BUILD_TIMEOUT, PlanError,
    ShipwrightStrategy, Strategy,
};
pub use recipe::Recipe;
pub use registry::{INTERNAL_REGISTRY, image_stream, tagged_digest};
pub use source::{RepoView, SourceConfig, SourceError, candidates, choose};
