//! Image builds (`podConfig.buildConfig`): the image a notebook needs, built by the
//! cluster's own build system before the run's validation Pod starts.
//!
//! [`SourceConfig`] holds what decides, inside the build, which requirements file or
//! Dockerfile is used.

mod key;
mod plan;
mod source;

pub use key::BuildKey;
pub use plan::{
    BuildDefaults, BuildPlan, DEFAULT_BASE_IMAGE, DEFAULT_BUILD_TIMEOUT, PlanError,
    ShipwrightStrategy, Strategy,
};
pub use source::SourceConfig;
