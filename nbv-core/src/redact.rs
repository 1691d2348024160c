//! Keeping credentials out of Event messages and the job's status, which anyone who
//! can read the namespace sees.

/// Removes what looks like a credential from `text`: the user-info part of URLs
/// (`https://user:token@host` → `https://***@host`) and the values of `token=`,
/// `password=`, `secret=` and similar `key=value` pairs.
///
/// Notebook errors often echo a clone URL or an environment; an Event is readable by
/// anyone who can list Events in the namespace, so nothing secret may reach it.
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
/// ```
pub fn redact_secrets(text: &str) -> String {
    // Each pass can expose work for the other: redacting `token=a/b` removes the `/`
    // that ended a URL's authority, so a later `user:pass@` joins it. Both passes only
    // ever shorten the text or leave it as it is, so this reaches a fixed point.
    let mut current = text.to_owned();
    loop {
        let next = redact_pairs(&redact_userinfo(&current));
        if next == current {
            return next;
        }
        current = next;
    }
}

fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first '/', whitespace or quote.
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                rest = &tail[at..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

const SECRET_KEYS: [&str; 8] = [
    "token",
    "password",
    "passwd",
    "secret",
    "apikey",
    "api_key",
    "access_key",
    "credentials",
];

fn redact_pairs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let lower = text.to_ascii_lowercase();
    let mut copied = 0;
    while let Some((i, c)) = chars.next() {
        if c != '=' && c != ':' {
            continue;
        }
        let key_start = lower[..i]
            .char_indices()
            .rev()
            .take_while(|(_, ch)| ch.is_ascii_alphanumeric() || *ch == '_' || *ch == '-')
            .last()
            .map_or(i, |(p, _)| p);
        let key = &lower[key_start..i];
        if !SECRET_KEYS.iter().any(|k| key.ends_with(k)) || key.is_empty() {
            continue;
        }
        // Value: skip one optional space after ':', then up to whitespace, '&', or quote.
        let mut start = i + 1;
        if c == ':' && text[start..].starts_with(' ') {
            start += 1;
        }
        let end = text[start..]
            .find(|ch: char| ch.is_whitespace() || matches!(ch, '&' | '"' | '\'' | ',' | ';'))
            .map_or(text.len(), |p| start + p);
        if end > start {
            out.push_str(&text[copied..start]);
            out.push_str("***");
            copied = end;
            while chars.peek().is_some_and(|(j, _)| *j < end) {
                chars.next();
            }
        }
    }
    out.push_str(&text[copied..]);
    out
}
