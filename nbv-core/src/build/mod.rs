//! Image builds (`podConfig.buildConfig`): the image a notebook needs, built by the
//! cluster's own build system before the run's validation Pod starts.
//!
//! [`SourceConfig`] holds what decides, inside the build, which requirements file or
//! Dockerfile is used.

mod source;

pub use source::SourceConfig;
