//! Keeping credentials out of everything nbv writes where others read it: the job's
//! status, Events, the parent Application's annotations, logs.
//!
//! There is one redaction, [`redact_secrets`], and it is applied where text crosses
//! into those places: the validation Pod's report as nbv reads it
//! ([`RunReport::parse`](crate::pod::RunReport::parse)), every string of a status patch
//! ([`reconcile::status_patch`](crate::reconcile::status_patch)), every failure
//! message, Event and Application annotation nbv writes. Notebook errors often echo a
//! clone URL, an environment or a request with its headers, and anyone who can read
//! the namespace reads them.

use std::sync::LazyLock;

use regex_lite::{Captures, Regex};
use serde_json::Value;

/// What stands where a secret was.
pub const REDACTED: &str = "***";

/// Removes what looks like a credential from `text`, each kind by its shape:
///
/// - the user-info part of URLs: `https://user:token@host` → `https://***@host`;
/// - the value of a key whose name ends in a secret's name (`token`, `password`,
///   `secret`, `apikey`, `credentials`, `auth`, …), however it is written: `key=value`,
///   `key = value`, `key: value`, `"key": "value"`, `'key': 'value'`;
/// - the credentials of an HTTP `Authorization` header and any `Bearer` token;
/// - tokens of well-known shapes wherever they stand: GitHub (`ghp_`, `gho_`, `ghu_`,
///   `ghs_`, `ghr_`, `github_pat_`), GitLab (`glpat-`), Slack (`xoxb-`, …), Hugging Face
///   (`hf_`), OpenAI-style `sk-` keys, AWS access key ids (`AKIA…`, `ASIA…`), JSON Web
///   Tokens (`eyJ….eyJ….…`) and PEM private keys.
///
/// The result is a fixed point: redacting it again changes nothing.
///
/// # Examples
///
/// ```
/// use nbv_core::redact::redact_secrets;
///
/// assert_eq!(
///     redact_secrets("clone https://bot:ghp_abc@github.com/o/r.git failed"),
///     "clone https://***@github.com/o/r.git failed"
/// );
/// assert_eq!(redact_secrets("auth failed: token=abc123 rejected"), "auth failed: token=*** rejected");
/// assert_eq!(redact_secrets(r#"{"password": "hunter2"}"#), r#"{"password": "***"}"#);
/// assert_eq!(redact_secrets("Authorization: Bearer abc.def"), "Authorization: Bearer ***");
/// assert_eq!(
///     redact_secrets("pushed with glpat-AbCdEfGhIjKlMnOpQrSt"),
///     "pushed with ***"
/// );
/// ```
pub fn redact_secrets(text: &str) -> String {
    // Each pass can expose work for another: redacting `token=a/b` removes the `/` that
    // ended a URL's authority, so a later `user:pass@` joins it. Every pass only ever
    // shortens the text or leaves it as it is, so this reaches a fixed point.
    let mut current = text.to_owned();
    loop {
        let next = redact_once(&current);
        if next == current {
            return next;
        }
        current = next;
    }
}

/// Redacts every string of `value` (not the keys of its objects) in place.
///
/// # Examples
///
/// ```
/// use nbv_core::redact::redact_strings;
/// use serde_json::json;
///
/// let mut status = json!({"message": "token=abc", "results": [{"errorMessage": "password: x"}]});
/// redact_strings(&mut status);
/// assert_eq!(status, json!({"message": "token=***", "results": [{"errorMessage": "password: ***"}]}));
/// ```
pub fn redact_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            let redacted = redact_secrets(text);
            if redacted != *text {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_strings),
        Value::Object(fields) => fields.values_mut().for_each(redact_strings),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn redact_once(text: &str) -> String {
    let text = redact_userinfo(text);
    let text = PRIVATE_KEY.replace_all(&text, REDACTED);
    let text = TOKEN.replace_all(&text, REDACTED);
    let text = AUTHORIZATION.replace_all(&text, |c: &Captures| {
        format!("{}{}{REDACTED}", &c[1], c.get(2).map_or("", |m| m.as_str()))
    });
    let text = BEARER.replace_all(&text, |c: &Captures| format!("{}{REDACTED}", &c[1]));
    PAIR.replace_all(&text, |c: &Captures| {
        let whole = c.get(0).expect("the match");
        // A path of the job (`spec.….credentialsSecret: …`) is how nbv names a field,
        // not a secret's value.
        let names_a_field = ["spec.", "status.", "metadata."]
            .iter()
            .any(|p| c[2].starts_with(p));
        // The value without its quotes (which stay, so that JSON stays JSON).
        let value = (3..=7).find_map(|i| c.get(i)).filter(|v| !v.is_empty());
        match value {
            Some(value) if !names_a_field => {
                let (start, end) = (value.start() - whole.start(), value.end() - whole.start());
                let text = whole.as_str();
                format!("{}{REDACTED}{}", &text[..start], &text[end..])
            }
            _ => whole.as_str().to_owned(),
        }
    })
    .into_owned()
}

/// Tokens recognisable by their shape alone.
static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\b(?:",
        r"gh[pousr]_[A-Za-z0-9]{16,}",
        r"|github_pat_[A-Za-z0-9_]{16,}",
        r"|glpat-[A-Za-z0-9_-]{16,}",
        r"|xox[abeoprs]-[A-Za-z0-9-]{10,}",
        r"|hf_[A-Za-z0-9]{16,}",
        r"|sk-[A-Za-z0-9_-]{20,}",
        r"|(?:AKIA|ASIA)[A-Z0-9]{16}",
        r"|eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
        r")",
    ))
    .expect("the token shapes compile")
});

/// A PEM private key, to its end line (or the end of the text, when it was cut).
static PRIVATE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)-----BEGIN[A-Z ]*PRIVATE KEY-----.*?(?:-----END[A-Z ]*PRIVATE KEY-----|\z)")
        .expect("the private key shape compiles")
});

/// `Authorization: <scheme> <credentials>` (an HTTP header, or such a key written
/// any way): the credentials go, the scheme stays.
static AUTHORIZATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(\bauthorization["']?\s*[:=]\s*["']?)((?:basic|bearer|digest|negotiate|token)\s+)?[^\s"',;]+"#,
    )
    .expect("the authorization shape compiles")
});

/// A bearer token anywhere.
static BEARER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/-]{8,}=*").expect("the bearer shape compiles")
});

/// `key=value`, `key: value`, `"key": "value"`, `\"key\": \"value\"` (JSON inside a
/// string), …, for a key whose name ends in a secret's name. Group 2 is the key, 3 to 7
/// the value without its quotes. A quoted value cut short (a truncated message) runs to
/// the end of the line.
static PAIR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?i)(\\?["']?)([A-Za-z0-9_.-]*"#,
        r"(?:token|password|passwd|pwd|secret|apikey|api_key|api-key|access_key|accesskey",
        r"|credentials|credential|private_key|privatekey|auth))",
        r#"\\?["']?\s*[:=]\s*"#,
        r#"(?:\\"([^"\n]*?)(?:\\"|\n|\z)"#,
        r#"|"([^"\n]*)(?:"|\n|\z)"#,
        r#"|\\'([^'\n]*?)(?:\\'|\n|\z)"#,
        r#"|'([^'\n]*)(?:'|\n|\z)"#,
        r#"|([^\s&,;"'{}\[\]\\]+))"#,
    ))
    .expect("the key-value shape compiles")
});

fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        match userinfo_end(tail) {
            Some(at) => {
                out.push_str(REDACTED);
                rest = &tail[at..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// Where the user-info of the URL whose authority starts `tail` ends (its `@`), if it
/// has one. The authority ends at the first `/`, whitespace or quote; but a password
/// written without percent-encoding may hold a `/`, so `user:pa/ss@host` counts too
/// when what follows the first `:` is no port.
fn userinfo_end(tail: &str) -> Option<usize> {
    let word = tail
        .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
        .unwrap_or(tail.len());
    let word = &tail[..word];
    let authority = &word[..word.find('/').unwrap_or(word.len())];
    if let Some(at) = authority.rfind('@') {
        return Some(at);
    }
    let colon = authority.find(':')?;
    let port = &authority[colon + 1..];
    if port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.find('@').filter(|&at| at > colon)
}
