//! The content hash that names a build and tags its image.

use std::fmt;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// How many hexadecimal digits of the key name a build object: 80 bits, enough that
/// two builds of one namespace never meet, short enough for a name.
const NAME_DIGITS: usize = 20;

/// The SHA-256 of everything that determines a built image, in a canonical encoding:
/// equal inputs give equal keys, and any change of an input gives another key. The
/// image is tagged with it and the build object named after it, so that every job
/// asking for the same image finds one build.
///
/// # Examples
///
/// ```
/// use nbv_core::build::BuildKey;
/// use serde_json::json;
///
/// let key = BuildKey::of(&json!({"base": "python:3.12", "requirements": "r.txt"}));
/// // Objects hash the same whatever the order of their members.
/// assert_eq!(key, BuildKey::of(&json!({"requirements": "r.txt", "base": "python:3.12"})));
/// assert_ne!(key, BuildKey::of(&json!({"requirements": "r.txt", "base": "python:3.13"})));
/// assert_eq!(key.as_str().len(), 64);
/// assert_eq!(key.short().len(), 20);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuildKey(String);

impl BuildKey {
    /// The key of `inputs`. serde_json's maps are sorted by key, so the encoding of
    /// an object does not depend on the order its members were inserted in.
    pub fn of(inputs: &Value) -> Self {
        let digest = Sha256::digest(inputs.to_string().as_bytes());
        BuildKey(digest.iter().map(|byte| format!("{byte:02x}")).collect())
    }

    /// Reads a key written as 64 lowercase hexadecimal digits (a label's value).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::BuildKey;
    ///
    /// let key = BuildKey::of(&serde_json::json!(1));
    /// assert_eq!(BuildKey::parse(key.as_str()), Some(key));
    /// assert_eq!(BuildKey::parse("ABC"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        (text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| BuildKey(text.to_owned()))
    }

    /// The whole key: 64 lowercase hexadecimal digits (an image tag, a label's value).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key's first 20 digits, which name the build objects.
    pub fn short(&self) -> &str {
        &self.0[..NAME_DIGITS]
    }
}

impl fmt::Display for BuildKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
