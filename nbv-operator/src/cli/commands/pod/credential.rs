//! git's credential helper for `nbv pod clone`: the job's credentials go to the host
//! the job named, over the scheme it named, and nowhere else (not to a host a
//! redirect leads to).

use std::io::{BufRead, Write};

/// `scheme://host[:port]` of a clone URL, lowercased: what git's credential requests
/// are matched against. `None` for URLs git asks no helper for (SSH) or that name no
/// host.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::pod::scope_of;
///
/// assert_eq!(scope_of("https://user@Git.Example.com:8443/ml/m.git").as_deref(),
///     Some("https://git.example.com:8443"));
/// assert_eq!(scope_of("git@github.com:ml/m.git"), None);
/// ```
pub fn scope_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| format!("{scheme}://{}", host.to_ascii_lowercase()))
}

/// Answers git's `get` with the username and password (or token) of the clone's
/// Secret when the request's protocol and host are the clone URL's; says nothing
/// otherwise, and to `store` and `erase`.
pub fn answer(operation: &str, input: &mut dyn BufRead, out: &mut dyn Write) -> u8 {
    if operation != "get" {
        return 0;
    }
    let mut protocol = String::new();
    let mut host = String::new();
    let mut line = String::new();
    while input.read_line(&mut line).unwrap_or(0) > 0 {
        let text = line.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            break;
        }
        if let Some((key, value)) = text.split_once('=') {
            match key {
                "protocol" => protocol = value.to_ascii_lowercase(),
                "host" => host = value.to_ascii_lowercase(),
                _ => {}
            }
        }
        line.clear();
    }
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let wanted = env("NBV_GIT_URL").and_then(|url| scope_of(&url));
    if wanted.as_deref() != Some(format!("{protocol}://{host}").as_str()) {
        return 0;
    }
    let Some(password) = env("NBV_GIT_PASSWORD").or_else(|| env("NBV_GIT_TOKEN")) else {
        return 0;
    };
    // A token alone works with any username (GitHub's x-access-token, for example).
    let username = env("NBV_GIT_USERNAME").unwrap_or_else(|| "x-access-token".to_owned());
    // A line break would end the answer early and let the Secret add fields of its own.
    if [&username, &password]
        .iter()
        .any(|v| v.contains(['\n', '\0']))
    {
        return 0;
    }
    let _ = write!(out, "username={username}\npassword={password}\n");
    0
}
