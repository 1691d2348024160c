//! The syntax Kubernetes and container registries require of what an admin writes in
//! the Pod defaults: label and annotation keys, quantities, image references.
//!
//! Checked when the operator starts, so that a typo is an error naming the field then,
//! not a Pod the API server refuses later.

use std::sync::LazyLock;

use regex_lite::Regex;

use crate::kube_names::{MAX_SUBDOMAIN_LEN, is_dns_subdomain, is_label_value};

/// The most the annotations of an object may hold, keys and values together.
pub(super) const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

/// A Docker reference: `[domain[:port]/]path[:tag][@digest]` (the grammar of
/// distribution's `reference` package).
static IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    let domain_component = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
    let domain = format!(r"{domain_component}(?:\.{domain_component})*(?::[0-9]+)?");
    let path_component = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";
    let name = format!(r"(?:{domain}/)?{path_component}(?:/{path_component})*");
    let tag = r"[\w][\w.-]{0,127}";
    let digest = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
    Regex::new(&format!(
        r"^(?P<name>{name})(?::{tag})?(?:@(?P<digest>{digest}))?$"
    ))
    .expect("a valid pattern")
});

/// Why `key` is not a valid label or annotation key (a qualified name: an optional DNS
/// subdomain prefix and `/`, then a name of at most 63 characters), if it is not.
pub(super) fn key_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && !is_dns_subdomain(prefix)
    {
        return Some(format!(
            "the prefix {prefix:?} is not a DNS subdomain (lowercase letters, digits, `-` \
             and `.`, at most {MAX_SUBDOMAIN_LEN} characters)"
        ));
    }
    (!is_label_value(name)).then(|| {
        format!(
            "the name {name:?} must be 1 to 63 letters, digits, `-`, `_` or `.`, starting \
             and ending with a letter or digit"
        )
    })
}

/// Why `value` is not a valid label value (empty, or at most 63 letters, digits, `-`,
/// `_` and `.` starting and ending with a letter or digit), if it is not.
pub(super) fn label_value_problem(value: &str) -> Option<String> {
    (!value.is_empty() && !is_label_value(value)).then(|| {
        format!(
            "the value {value:?} must be empty or 1 to 63 letters, digits, `-`, `_` or `.`, \
             starting and ending with a letter or digit"
        )
    })
}

/// Why `image` is not an image reference a kubelet can pull, if it is not.
pub(crate) fn image_problem(image: &str) -> Option<String> {
    let Some(parts) = IMAGE.captures(image) else {
        return Some(format!(
            "{image:?} is not an image reference: [registry[:port]/]repository[:tag][@digest], \
             with a lowercase repository"
        ));
    };
    let name = parts.name("name").map_or("", |n| n.as_str());
    if name.len() > 255 {
        return Some(format!("{image:?}: the name is longer than 255 characters"));
    }
    // As container runtimes read it, a first component without `.` or `:` that is not
    // `localhost` is not a registry but part of the repository, which is lowercase.
    if let Some((first, _)) = name.split_once('/')
        && !(first.contains(['.', ':']) || first == "localhost")
        && first.bytes().any(|b| b.is_ascii_uppercase())
    {
        return Some(format!(
            "{image:?}: {first:?} is not a registry (no `.` or `:`), and a repository is lowercase"
        ));
    }
    let digest = parts.name("digest").map(|d| d.as_str());
    match digest.and_then(|d| d.split_once(':')) {
        Some(("sha256", hex))
            if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
        {
            Some(format!(
                "{image:?}: a sha256 digest is 64 lowercase hexadecimal digits"
            ))
        }
        _ => None,
    }
}

/// The repository of `image` as registries name it, without tag or digest
/// (`quay.io/ml/papermill` of `quay.io/ml/papermill:1@sha256:…`), or `None` when
/// `image` is not a reference ([`image_problem`]).
pub(crate) fn image_repository(image: &str) -> Option<&str> {
    if image_problem(image).is_some() {
        return None;
    }
    IMAGE
        .captures(image)
        .and_then(|parts| parts.name("name"))
        .map(|name| name.as_str())
}

/// The value of a Kubernetes quantity (`500m`, `1.5Gi`, `2e3`), or `None` when `text`
/// is not one. Values are compared as numbers, which is exact for the quantities of
/// requests and limits.
pub(super) fn quantity_value(text: &str) -> Option<f64> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let unsigned = number.strip_prefix(['+', '-']).unwrap_or(number);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !digits(whole) || !digits(fraction) {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exponent => {
            let exponent = exponent.strip_prefix(['e', 'E'])?;
            let unsigned = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if unsigned.is_empty() || !digits(unsigned) {
                return None;
            }
            10f64.powi(exponent.parse().ok()?)
        }
    };
    Some(value * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_as_kubernetes_reads_them() {
        for (text, value) in [
            ("1", 1.0),
            ("500m", 0.5),
            ("1.5", 1.5),
            (".5", 0.5),
            ("1Gi", 1_073_741_824.0),
            ("128Mi", 134_217_728.0),
            ("2k", 2000.0),
            ("1e3", 1000.0),
            ("1E-3", 0.001),
            ("+4", 4.0),
        ] {
            assert_eq!(quantity_value(text), Some(value), "{text}");
        }
        for bad in [
            "", "m", "1.2.3", "1 Gi", "1gi", "1KB", "one", "1e", "1e1.5", ".",
        ] {
            assert_eq!(quantity_value(bad), None, "{bad}");
        }
    }

    #[test]
    fn image_references_follow_the_registry_grammar() {
        for good in [
            "alpine/git",
            "alpine/git:2.47.2",
            super::super::DEFAULT_NBV_IMAGE,
            "registry.example.com:5000/mirror/alpine/git:2.47.2",
            "localhost/git@sha256:062a01ad7a0eb17cff382bc5e26086b4d710e56dfdfdf001109a49b6d9bd378c",
        ] {
            assert_eq!(image_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "Alpine/git",
            "alpine/git:",
            "alpine/git@sha256:abc",
            "alpine/git@sha256:062A01AD7A0EB17CFF382BC5E26086B4D710E56DFDFDF001109A49B6D9BD378C",
            "alpine git",
            "https://registry/git",
        ] {
            assert!(image_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn keys_are_qualified_names() {
        for good in [
            "team",
            "example.com/team",
            "cost-center",
            "a_b.c",
            "sidecar.istio.io/inject",
        ] {
            assert_eq!(key_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "/team",
            "Example.com/team",
            "a/b/c",
            "-team",
            "team-",
            &"x".repeat(64),
        ] {
            assert!(key_problem(bad).is_some(), "{bad:?}");
        }
        assert_eq!(label_value_problem(""), None);
        assert!(label_value_problem("a b").is_some());
    }
}
