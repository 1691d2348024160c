//! Fuzz targets for the parts of nbv that read what someone else wrote, and a mutation
//! fuzzer that runs them on the stable toolchain.
//!
//! Each target is one function from bytes to an [`Outcome`] that panics when an
//! invariant breaks: a wrong answer, not only a crash. The same functions are called by
//! the cargo-fuzz binaries of `fuzz/` (nightly, libFuzzer, coverage-guided) and by the
//! `nbv-fuzz` binary of this crate ([`runner`]: stable, mutation-based, with a time
//! limit per input and a memory limit), so there is one implementation of each.
//!
//! Seed inputs live in `nbv-fuzz/seeds/<target>/`; `cargo test -p nbv-fuzz` runs every
//! target over them.

pub mod runner;
pub mod targets;

/// What a target made of an input; the runner keeps inputs that were read as seeds
/// for further mutation (the only feedback it has without coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The parser accepted the input and every invariant held.
    Read,
    /// The parser refused the input, as it should have.
    Refused,
    /// The input is outside the target's domain (e.g. not UTF-8 for a text parser).
    Skipped,
}

/// One fuzz target.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Its name: the cargo-fuzz binary, the seed directory and `--target` use it.
    pub name: &'static str,
    /// The function that checks one input, panicking when an invariant breaks.
    pub run: fn(&[u8]) -> Outcome,
    /// Tokens the mutator inserts: the syntax the parser cares about.
    pub dictionary: &'static [&'static str],
    /// The longest input generated, in bytes.
    pub max_len: usize,
}

/// Every target, in the order the runner runs them.
pub const TARGETS: &[Target] = &[
    targets::triggers::TARGET,
    targets::sync_wave::TARGET,
    targets::health_native::TARGET,
    targets::merge_patch::TARGET,
    targets::redact::TARGET,
    targets::termination_message::TARGET,
    targets::yaml::TARGET,
    targets::glob::TARGET,
    targets::cron::TARGET,
    targets::timestamp_pattern::TARGET,
    targets::application::TARGET,
    targets::inference_service::TARGET,
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// `data` as text, for the targets that read strings (Kubernetes stores only UTF-8).
pub(crate) fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// `data` cut at its first NUL byte: two inputs from one (a pattern and a text).
pub(crate) fn two_texts(data: &[u8]) -> Option<(&str, &str)> {
    let cut = data.iter().position(|b| *b == 0)?;
    Some((text(&data[..cut])?, text(&data[cut + 1..])?))
}
