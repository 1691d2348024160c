//! The validation Pod's name and the label values that find it again.
//!
//! Both are derived from the job and the attempt alone, so that a second reconcile, an
//! operator restart or another replica computes the same name and finds the Pod instead
//! of creating another.

use crate::kube_names::{MAX_LABEL_LEN, fnv1a, is_dns_label, is_label_value};
use crate::phase::Attempt;

/// Hex digits of the hash added to a shortened or rewritten name. 40 bits: a collision
/// between two jobs of one namespace needs about a million jobs with long names.
const HASH_DIGITS: usize = 10;

/// The name of the validation Pod of `attempt` of job `job_name`: `<job>-<attempt>`,
/// for example `train-g3-r1`.
///
/// The name is a valid DNS label (at most 63 characters, lowercase letters, digits and
/// `-`, starting and ending with a letter or digit), so it is also valid as the Pod's
/// hostname. A job name that does not fit (too long, or with `.`, which job names may
/// contain) is cut and rewritten, and a hash of the full job name is added so that two
/// jobs never share a Pod name; the attempt suffix is always kept whole.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::Attempt;
/// use nbv_core::pod::pod_name;
///
/// let attempt = Attempt::new(3, 1);
/// assert_eq!(pod_name("train", attempt), "train-g3-r1");
///
/// let long = pod_name(&"x".repeat(200), attempt);
/// assert!(long.len() <= 63 && long.ends_with("-g3-r1"));
/// assert_ne!(pod_name("my.job", attempt), pod_name("my-job", attempt));
/// ```
pub fn pod_name(job_name: &str, attempt: Attempt) -> String {
    let suffix = attempt.to_string();
    let room = MAX_LABEL_LEN - suffix.len() - 1;
    let prefix = if job_name.len() <= room && is_dns_label(job_name) {
        job_name.to_owned()
    } else {
        hashed(&dns_safe(job_name), room, job_name)
    };
    format!("{prefix}-{suffix}")
}

/// The value of the `mlops.dev/job` label for job `job_name`.
///
/// Job names are DNS subdomains of up to 253 characters; label values hold at most 63
/// characters. A name that is a valid label value is used as it is; a longer one is
/// cut and given a hash of the full name, so that the label still selects exactly the
/// Pods of one job.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::job_label_value;
///
/// assert_eq!(job_label_value("train.v2"), "train.v2");
/// let long = job_label_value(&"a".repeat(100));
/// assert_eq!(long.len(), 63);
/// assert_ne!(long, job_label_value(&"a".repeat(101)));
/// ```
pub fn job_label_value(job_name: &str) -> String {
    if is_label_value(job_name) {
        job_name.to_owned()
    } else {
        let safe: String = job_name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        hashed(&safe, MAX_LABEL_LEN, job_name)
    }
}

/// `name` rewritten to lowercase letters, digits and `-`.
fn dns_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `<safe cut to fit>-<hash of original>`, at most `room` bytes, starting and ending
/// with a letter or digit. `safe` is ASCII.
fn hashed(safe: &str, room: usize, original: &str) -> String {
    let hash = format!("{:0width$x}", fnv1a(original.as_bytes()), width = 16);
    let hash = &hash[..HASH_DIGITS];
    let keep = room.saturating_sub(HASH_DIGITS + 1);
    let cut = safe
        .get(..keep.min(safe.len()))
        .unwrap_or_default()
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    if cut.is_empty() {
        // Only the hash is left; it starts with a hex digit or letter, both valid.
        hash.to_owned()
    } else {
        format!("{cut}-{hash}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_stable() {
        // Changing the hash renames every long-named job's Pods: a running attempt
        // would be orphaned by an upgrade.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_name_of_symbols_only_keeps_the_hash() {
        let attempt = Attempt::new(1, 0);
        let name = pod_name("...", attempt);
        assert!(is_dns_label(&name), "{name}");
        assert_eq!(name.len(), HASH_DIGITS + "-g1-r0".len());
    }
}
