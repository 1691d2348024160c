//! The rules Kubernetes sets for names and label values (RFC 1123 DNS labels and
//! subdomains), shared by the validation Pod, the Events and the condition types.

/// Longest DNS label (RFC 1123) and longest label value.
pub const MAX_LABEL_LEN: usize = 63;
/// The longest DNS subdomain: most object names, a label key's prefix.
pub const MAX_SUBDOMAIN_LEN: usize = 253;

/// Whether `value` is a DNS label: 1 to 63 characters, lowercase ASCII letters, digits
/// and `-`, starting and ending with a letter or digit.
///
/// # Examples
///
/// ```
/// use nbv_core::kube_names::is_dns_label;
///
/// assert!(is_dns_label("train-g3-r1"));
/// assert!(!is_dns_label("Train"));
/// assert!(!is_dns_label("a.b"));
/// assert!(!is_dns_label("-a"));
/// ```
pub fn is_dns_label(value: &str) -> bool {
    let bytes = value.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.len() <= MAX_LABEL_LEN
        && bytes.first().is_some_and(alnum)
        && bytes.last().is_some_and(alnum)
        && bytes.iter().all(|b| alnum(b) || *b == b'-')
}

/// Whether `value` is a DNS subdomain (RFC 1123), as the names of most objects are: at
/// most 253 characters, `.`-separated labels of lowercase letters, digits and `-`,
/// each starting and ending with a letter or digit.
///
/// # Examples
///
/// ```
/// use nbv_core::kube_names::is_dns_subdomain;
///
/// assert!(is_dns_subdomain("nbv-operator.v0.2.0"));
/// assert!(!is_dns_subdomain("Pull"));
/// assert!(!is_dns_subdomain("a..b"));
/// assert!(!is_dns_subdomain(""));
/// ```
pub fn is_dns_subdomain(value: &str) -> bool {
    value.len() <= MAX_SUBDOMAIN_LEN && is_dns_subdomain_in(value.as_bytes(), 0, value.len())
}

/// Whether `value` is a non-empty label value: at most 63 characters, ASCII letters,
/// digits, `-`, `_` and `.`, starting and ending with a letter or digit.
pub(crate) fn is_label_value(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_LABEL_LEN
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Whether `bytes[start..end]` is a non-empty sequence of `.`-separated labels
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
pub(crate) const fn is_dns_subdomain_in(bytes: &[u8], start: usize, end: usize) -> bool {
    let mut label_start = start;
    let mut i = start;
    while i <= end {
        if i == end || bytes[i] == b'.' {
            if i == label_start {
                return false;
            }
            if !is_lower_alnum(bytes[label_start]) || !is_lower_alnum(bytes[i - 1]) {
                return false;
            }
            label_start = i + 1;
        } else {
            let c = bytes[i];
            if !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-') {
                return false;
            }
        }
        i += 1;
    }
    true
}

const fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// 64-bit FNV-1a: tiny, and stable across Rust versions and platforms (unlike
/// `std`'s `DefaultHasher`), which a name that must be recomputed later requires.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
