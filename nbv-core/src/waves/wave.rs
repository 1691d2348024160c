//! The [`Wave`] number and how it is read from annotations, exactly as Argo CD reads it.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::annotations;

/// An Argo CD sync wave: a signed 64-bit integer.
///
/// Argo CD reads `argocd.argoproj.io/sync-wave` with Go's `strconv.Atoi`, which on the
/// 64-bit platforms Argo CD ships for accepts an optional `+` or `-` followed by one or
/// more ASCII digits (leading zeros allowed), and nothing else: no surrounding spaces, no
/// `_` separators, no `0x` prefix. [`Wave::from_str`] accepts exactly the same strings.
///
/// [`Display`](fmt::Display) writes the canonical form (`+3` and `03` both display as
/// `3`), which is what nbv writes into `mlops.dev/wave-complete` and
/// `mlops.dev/wave-failed`.
///
/// # Examples
///
/// ```
/// use nbv_core::waves::Wave;
///
/// let wave: Wave = "+03".parse()?;
/// assert_eq!(wave, Wave::new(3));
/// assert_eq!(wave.to_string(), "3");
/// assert!(" 3".parse::<Wave>().is_err());
/// # Ok::<(), nbv_core::waves::InvalidWave>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Wave(i64);

impl Wave {
    /// The wave Argo CD assigns to a resource without a sync-wave annotation.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::waves::Wave;
    ///
    /// assert_eq!(Wave::DEFAULT.get(), 0);
    /// ```
    pub const DEFAULT: Wave = Wave(0);

    /// A wave with the given number.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::waves::Wave;
    ///
    /// assert_eq!(Wave::new(-2).to_string(), "-2");
    /// ```
    pub const fn new(number: i64) -> Self {
        Wave(number)
    }

    /// The wave number.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::waves::Wave;
    ///
    /// assert_eq!(Wave::new(7).get(), 7);
    /// ```
    pub const fn get(self) -> i64 {
        self.0
    }
}

impl From<i64> for Wave {
    fn from(number: i64) -> Self {
        Wave(number)
    }
}

impl fmt::Display for Wave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Wave {
    type Err = InvalidWave;

    /// Parses like Go's `strconv.Atoi` on a 64-bit platform.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
        // Checked by hand rather than left to `i64::from_str` so that the accepted
        // syntax is written down here, not inherited from a std implementation detail.
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(InvalidWave::new(text, InvalidWaveKind::NotAnInteger));
        }
        text.parse::<i64>()
            .map(Wave)
            .map_err(|_| InvalidWave::new(text, InvalidWaveKind::OutOfRange))
    }
}

/// Why a string is not a [`Wave`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InvalidWaveKind {
    /// Not an optional sign followed by one or more ASCII digits.
    NotAnInteger,
    /// Well-formed, but outside the signed 64-bit range.
    OutOfRange,
}

/// A string that is not a wave number, as Argo CD would reject it.
///
/// The offending value is kept for the message, cut to its first
/// [`InvalidWave::MAX_SHOWN_CHARS`] characters so that a huge annotation cannot make a
/// huge error.
///
/// # Examples
///
/// ```
/// use nbv_core::waves::{InvalidWaveKind, Wave};
///
/// let err = "3.5".parse::<Wave>().unwrap_err();
/// assert_eq!(err.kind(), InvalidWaveKind::NotAnInteger);
/// assert!(err.to_string().contains("\"3.5\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, thiserror::Error)]
#[error("{shown} {}", explain(*.kind))]
pub struct InvalidWave {
    kind: InvalidWaveKind,
    shown: String,
}

fn explain(kind: InvalidWaveKind) -> &'static str {
    match kind {
        InvalidWaveKind::NotAnInteger => {
            "is not a wave number: write an optional + or - followed by decimal digits, \
             without spaces (for example \"3\" or \"-1\")"
        }
        InvalidWaveKind::OutOfRange => {
            "is outside the range of a signed 64-bit integer, which is all Argo CD accepts \
             (from -9223372036854775808 to 9223372036854775807)"
        }
    }
}

impl InvalidWave {
    /// How many characters of the offending value an error keeps.
    pub const MAX_SHOWN_CHARS: usize = 64;

    fn new(value: &str, kind: InvalidWaveKind) -> Self {
        let shown = crate::text::quoted_head(value, Self::MAX_SHOWN_CHARS);
        InvalidWave { kind, shown }
    }

    /// Why the value was rejected.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::waves::{InvalidWaveKind, Wave};
    ///
    /// let err = "99999999999999999999".parse::<Wave>().unwrap_err();
    /// assert_eq!(err.kind(), InvalidWaveKind::OutOfRange);
    /// ```
    pub fn kind(&self) -> InvalidWaveKind {
        self.kind
    }
}

/// A wave annotation whose value Argo CD would not accept.
///
/// Argo CD silently falls back to the Helm hook weight, then wave 0, on such a value;
/// nbv uses the same wave ([`effective_wave`]) and also reports the value, because a
/// silent fallback opens or closes a gate by surprise.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::sync_wave;
///
/// let annotations = BTreeMap::from([(
///     "argocd.argoproj.io/sync-wave".to_string(),
///     "three".to_string(),
/// )]);
/// let err = sync_wave(&annotations).unwrap_err();
/// assert_eq!(err.annotation(), "argocd.argoproj.io/sync-wave");
/// assert!(err.to_string().starts_with("annotation argocd.argoproj.io/sync-wave: \"three\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, thiserror::Error)]
#[error("annotation {annotation}: {source}")]
pub struct WaveAnnotationError {
    annotation: &'static str,
    source: InvalidWave,
}

impl WaveAnnotationError {
    /// The annotation key holding the bad value.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use nbv_core::waves::block_wave;
    ///
    /// let annotations = BTreeMap::from([("mlops.dev/block-wave".to_string(), "".to_string())]);
    /// assert_eq!(block_wave(&annotations).unwrap_err().annotation(), "mlops.dev/block-wave");
    /// ```
    pub fn annotation(&self) -> &'static str {
        self.annotation
    }

    /// What is wrong with the value.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use nbv_core::waves::{block_wave, InvalidWaveKind};
    ///
    /// let annotations = BTreeMap::from([("mlops.dev/block-wave".to_string(), "4 ".to_string())]);
    /// let err = block_wave(&annotations).unwrap_err();
    /// assert_eq!(err.invalid().kind(), InvalidWaveKind::NotAnInteger);
    /// ```
    pub fn invalid(&self) -> &InvalidWave {
        &self.source
    }
}

/// Reads a wave annotation: `Ok(None)` when absent, the wave when valid.
fn wave_annotation(
    annotations: &BTreeMap<String, String>,
    annotation: &'static str,
) -> Result<Option<Wave>, WaveAnnotationError> {
    annotations
        .get(annotation)
        .map(|value| {
            value
                .parse()
                .map_err(|source| WaveAnnotationError { annotation, source })
        })
        .transpose()
}

/// The job's `argocd.argoproj.io/sync-wave`, or `None` when it has none.
///
/// Argo CD treats an absent annotation as wave 0 ([`Wave::DEFAULT`]); nbv keeps the
/// difference because it records wave completion only for jobs that declare a wave.
///
/// # Errors
///
/// [`WaveAnnotationError`] when the annotation is present but not a wave number.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{sync_wave, Wave};
///
/// let mut annotations = BTreeMap::new();
/// assert_eq!(sync_wave(&annotations)?, None);
/// annotations.insert("argocd.argoproj.io/sync-wave".to_string(), "-1".to_string());
/// assert_eq!(sync_wave(&annotations)?, Some(Wave::new(-1)));
/// # Ok::<(), nbv_core::waves::WaveAnnotationError>(())
/// ```
pub fn sync_wave(
    annotations: &BTreeMap<String, String>,
) -> Result<Option<Wave>, WaveAnnotationError> {
    wave_annotation(annotations, annotations::ARGOCD_SYNC_WAVE)
}

/// The hook types Argo CD knows (gitops-engine `HookType`); an object whose
/// `argocd.argoproj.io/hook` names one is an Argo CD hook, and Helm's hook weight no
/// longer sets its wave.
const ARGOCD_HOOK_TYPES: [&str; 6] = [
    "PreSync",
    "Sync",
    "PostSync",
    "SyncFail",
    "PostDelete",
    "Skip",
];

/// The wave Argo CD puts a job in, and the wave annotations it could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveWave {
    /// The wave, or `None` when the job declares none (neither `sync-wave` nor
    /// `helm.sh/hook-weight`): nbv records waves only for jobs that declare one.
    pub wave: Option<Wave>,
    /// Wave annotations present but not wave numbers, to report.
    pub problems: Vec<WaveAnnotationError>,
}

/// The job's wave, as gitops-engine's `syncwaves.Wave` computes it: a valid
/// `argocd.argoproj.io/sync-wave`; otherwise, unless the job is an Argo CD hook
/// (`argocd.argoproj.io/hook`), a valid `helm.sh/hook-weight`; otherwise 0. A job with
/// neither annotation declares no wave (`None`); one whose annotations are present but
/// invalid is in the wave Argo CD falls back to, and the invalid values are reported.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{effective_wave, Wave};
///
/// let helm = BTreeMap::from([("helm.sh/hook-weight".to_string(), "5".to_string())]);
/// assert_eq!(effective_wave(&helm).wave, Some(Wave::new(5)));
///
/// let bad = BTreeMap::from([
///     ("argocd.argoproj.io/sync-wave".to_string(), "three".to_string()),
///     ("helm.sh/hook-weight".to_string(), "-2".to_string()),
/// ]);
/// let read = effective_wave(&bad);
/// assert_eq!(read.wave, Some(Wave::new(-2)));
/// assert_eq!(read.problems.len(), 1);
///
/// assert_eq!(effective_wave(&BTreeMap::new()).wave, None);
/// ```
pub fn effective_wave(annotations: &BTreeMap<String, String>) -> EffectiveWave {
    let mut problems = Vec::new();
    let declared = match sync_wave(annotations) {
        Ok(Some(wave)) => {
            return EffectiveWave {
                wave: Some(wave),
                problems,
            };
        }
        Ok(None) => false,
        Err(problem) => {
            problems.push(problem);
            true
        }
    };
    let is_argo_hook = annotations
        .get(annotations::ARGOCD_HOOK)
        .is_some_and(|hooks| {
            hooks
                .split(',')
                .any(|hook| ARGOCD_HOOK_TYPES.contains(&hook.trim()))
        });
    let weight = if is_argo_hook {
        Ok(None)
    } else {
        wave_annotation(annotations, annotations::HELM_HOOK_WEIGHT)
    };
    let wave = match weight {
        Ok(Some(weight)) => Some(weight),
        Ok(None) => declared.then_some(Wave::DEFAULT),
        Err(problem) => {
            problems.push(problem);
            Some(Wave::DEFAULT)
        }
    };
    EffectiveWave { wave, problems }
}

/// The wave named by the job's `mlops.dev/block-wave`, or `None` when it has none.
///
/// Parsed with the same rules as the sync-wave annotation.
///
/// # Errors
///
/// [`WaveAnnotationError`] when the annotation is present but not a wave number.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{block_wave, Wave};
///
/// let annotations = BTreeMap::from([("mlops.dev/block-wave".to_string(), "4".to_string())]);
/// assert_eq!(block_wave(&annotations)?, Some(Wave::new(4)));
/// # Ok::<(), nbv_core::waves::WaveAnnotationError>(())
/// ```
pub fn block_wave(
    annotations: &BTreeMap<String, String>,
) -> Result<Option<Wave>, WaveAnnotationError> {
    wave_annotation(annotations, annotations::BLOCK_WAVE)
}

/// The wave recorded in the job's `mlops.dev/wave-complete`, or `None` when absent.
pub(crate) fn wave_complete(
    annotations: &BTreeMap<String, String>,
) -> Result<Option<Wave>, WaveAnnotationError> {
    wave_annotation(annotations, annotations::WAVE_COMPLETE)
}
