//! The one redaction: no secret of a known shape survives it, however it is written,
//! and text without secrets passes unchanged.

use nbv_core::pod::RunReport;
use nbv_core::redact::{redact_secrets, redact_strings};
use proptest::prelude::*;
use serde_json::json;

/// A secret's value: starts with `Zq9` so that no context text contains it by chance.
fn value() -> impl Strategy<Value = String> {
    "[A-Za-z0-9/+_-]{8,32}".prop_map(|v| format!("Zq9{v}"))
}

/// Names of keys whose values are secrets, as programs spell them.
fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "token",
        "TOKEN",
        "GITHUB_TOKEN",
        "access_token",
        "password",
        "Password",
        "db.password",
        "passwd",
        "secret",
        "client_secret",
        "AWS_SECRET_ACCESS_KEY",
        "apikey",
        "api_key",
        "X-Api-Key",
        "credentials",
        "auth",
        "private_key",
    ])
    .prop_map(str::to_owned)
}

/// `key` and `value` written one of the ways programs print them.
fn pair(key: &str, value: &str, style: usize) -> String {
    match style % 12 {
        0 => format!("{key}={value}"),
        1 => format!("{key} = {value}"),
        2 => format!("{key}: {value}"),
        3 => format!(r#""{key}": "{value}""#),
        4 => format!(r#"{{"{key}":"{value}"}}"#),
        5 => format!("'{key}': '{value}'"),
        6 => format!(r#"{{\"{key}\": \"{value}\"}}"#),
        7 => format!("--{key}={value}"),
        8 => format!("https://example.com/x?{key}={value}&page=2"),
        9 => format!("export {key}=\"{value}\""),
        10 => format!("{key}:\n  {value}"),
        // Cut before its closing quote, as a capped message is.
        _ => format!(r#""{key}": "{value}"#),
    }
}

/// A well-known token shape, with `value` (base62 only) in it.
fn shaped(kind: usize, value: &str) -> String {
    let alnum: String = value.chars().filter(char::is_ascii_alphanumeric).collect();
    let alnum = format!("{alnum}{}", "A1b2C3d4E5f6G7h8I9j0".repeat(2));
    let upper: String = alnum
        .chars()
        .map(|c| c.to_ascii_uppercase())
        .filter(char::is_ascii_alphanumeric)
        .take(16)
        .collect();
    match kind % 11 {
        0 => format!("ghp_{}", &alnum[..36]),
        1 => format!("ghs_{}", &alnum[..36]),
        2 => format!("github_pat_11A{}_{}", &alnum[..20], &alnum[..30]),
        3 => format!("glpat-{}", &alnum[..20]),
        4 => format!("xoxb-1234-5678-{}", &alnum[..24]),
        5 => format!("hf_{}", &alnum[..34]),
        6 => format!("sk-{}", &alnum[..40]),
        7 => format!("AKIA{upper}"),
        8 => format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{}.{}", &alnum[..20], &alnum[..24]),
        9 => format!("Authorization: Bearer {value}"),
        _ => format!(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE{value}\n-----END RSA PRIVATE KEY-----"
        ),
    }
}

/// Text around a secret: words, punctuation, line breaks.
fn context() -> impl Strategy<Value = String> {
    "[a-z .,:()\n]{0,30}"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn no_value_of_a_secret_key_survives(
        before in context(), after in context(), key in key(), value in value(), style in 0usize..12,
    ) {
        let text = format!("{before} {} {after}", pair(&key, &value, style));
        let out = redact_secrets(&text);
        prop_assert!(!out.contains(&value), "{:?} → {:?}", text, out);
    }

    #[test]
    fn no_token_of_a_known_shape_survives(
        before in context(), after in context(), value in value(), kind in 0usize..11,
    ) {
        let token = shaped(kind, &value);
        let text = format!("{before} {token} {after}");
        let out = redact_secrets(&text);
        // The part that is secret: the value itself in a header or a key, else the
        // token's end (past its well-known prefix).
        let secret = if kind % 11 >= 9 { value.as_str() } else { &token[token.len() - 12..] };
        prop_assert!(!out.contains(secret), "{:?} → {:?}", text, out);
    }

    #[test]
    fn no_credentials_in_a_url_survive(
        before in context(), user in "[a-z]{1,8}", value in value(), host in "[a-z]{1,10}\\.(com|io)",
    ) {
        let text = format!("{before} fatal: could not read from https://{user}:{value}@{host}/org/repo.git");
        let out = redact_secrets(&text);
        prop_assert!(!out.contains(&value), "{:?} → {:?}", text, out);
        prop_assert!(out.contains(&host));
    }

    #[test]
    fn redaction_is_a_fixed_point(
        before in context(), key in key(), value in value(), style in 0usize..12, kind in 0usize..11,
    ) {
        let text = format!("{before} {} {}", pair(&key, &value, style), shaped(kind, &value));
        let once = redact_secrets(&text);
        prop_assert_eq!(redact_secrets(&once), once);
    }

    #[test]
    fn every_string_of_a_document_is_redacted(key in key(), value in value(), style in 0usize..12) {
        let secret = pair(&key, &value, style);
        let mut document = json!({"message": secret, "results": [{"errorMessage": secret}], "n": 1});
        redact_strings(&mut document);
        prop_assert!(!document.to_string().contains(&value), "{}", document);
        prop_assert_eq!(&document["n"], &json!(1));
    }
}

#[test]
fn what_nbv_writes_about_itself_is_left_alone() {
    for text in [
        "spec.notebook.git.credentialsSecret: Secret \"git-creds\" has no key username",
        "the Secret \"git-creds\" is missing in namespace ml",
        "image quay.io/ml/train@sha256:3b2c0ab1c9f5e3d2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0",
        "clone https://github.com/org/repo.git at main",
        "Failed at cell 3: KeyError: 'token'",
        "the token expired; a new one is requested",
        "a bearer of news",
        "1 effect(s) of run g1@2026-12-07T06:45:14Z took effect",
    ] {
        assert_eq!(redact_secrets(text), text);
    }
}

#[test]
fn a_report_from_the_pod_is_redacted_as_nbv_reads_it() {
    // A Pod's report is read as written, whatever wrote it: nbv's own writer redacts,
    // a modified image may not.
    let text = r#"{"cells":[{"i":0,"s":"err","e":"HTTPError: 401 for https://u:Zq9pass@h/x"}],
                   "error":{"kind":"cell","cell":0,"ename":"HTTPError","evalue":"Authorization: Bearer Zq9abcdefgh"}}"#;
    let report = RunReport::parse(text).expect("a report");
    let read = serde_json::to_string(&report).expect("json");
    assert!(!read.contains("Zq9"), "{read}");
    assert!(read.contains("HTTPError"), "{read}");
}
