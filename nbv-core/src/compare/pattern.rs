//! Custom timestamp patterns: the regular expressions Python and Rust read alike.
//!
//! nbv masks timestamps with Rust's `regex-lite`; notebook authors write and try their
//! patterns with Python's `re`. The two agree on a common core (literals, `.`, classes, groups,
//! alternation, greedy and lazy quantifiers, leftmost-first matching) and differ at
//! its edges: Python reads `\d` as any Unicode digit, `$` also before a final newline,
//! `{,3}` as a quantifier, `[[` as a literal; Rust has nested classes and set
//! operations; only Python has lookaround and backreferences. A pattern is accepted
//! only when it stays inside the common core, and is handed to both engines in one
//! rewritten form (`\d` spelt `[0-9]`), so they read the same expression.

use regex_lite::Regex;

/// Longest custom pattern accepted, in characters.
pub(super) const MAX_PATTERN_CHARS: usize = 256;
/// Longest rewritten pattern read back (by the validation Pod, from
/// `NBV_COMPARISON`): rewriting makes a pattern at most six times as long (`\w`, two
/// characters, becomes `[0-9A-Za-z_]`), and rewriting a rewritten pattern changes
/// nothing.
pub(super) const MAX_REWRITTEN_CHARS: usize = 6 * MAX_PATTERN_CHARS;
/// Largest repetition count accepted in `{n,m}`.
const MAX_REPEAT: u32 = 1000;
/// Characters that may be escaped with `\` (they then stand for themselves).
const ESCAPABLE: &str = "\\.^$*+?()[]{}|-";
/// What `\s` stands for: ASCII whitespace, written out (inside a class).
const SPACE_CLASS: &str = "\t\n\r\u{b}\u{c} ";
/// What `\d` stands for, inside a class.
const DIGIT_CLASS: &str = "0-9";
/// What `\w` stands for, inside a class.
const WORD_CLASS: &str = "0-9A-Za-z_";

/// `pattern` rewritten into the form both engines read alike, or what puts it outside
/// the accepted subset.
pub(super) fn rewrite(pattern: &str) -> Result<String, String> {
    rewrite_within(pattern, MAX_PATTERN_CHARS)
}

/// [`rewrite`], for a pattern of at most `max_chars` characters.
pub(super) fn rewrite_within(pattern: &str, max_chars: usize) -> Result<String, String> {
    if pattern.chars().count() > max_chars {
        return Err(format!("the pattern is longer than {max_chars} characters"));
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut depth = 0usize;
    // Whether the last element can take a quantifier.
    let mut atom = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let next = *chars.get(i + 1).ok_or("the pattern ends in a lone \\")?;
                out.push_str(&escape_outside(next)?);
                atom = true;
                i += 2;
                continue;
            }
            '(' => {
                if chars.get(i + 1) == Some(&'?') {
                    if chars.get(i + 2) != Some(&':') {
                        return Err("groups starting with (? other than (?:…) (lookaround, \
                                    named groups, inline flags) are not accepted"
                            .to_owned());
                    }
                    out.push_str("(?:");
                    i += 3;
                } else {
                    out.push('(');
                    i += 1;
                }
                depth += 1;
                atom = false;
                continue;
            }
            ')' => {
                if depth == 0 {
                    return Err("a ')' closes no group".to_owned());
                }
                depth -= 1;
                out.push(')');
                atom = true;
            }
            '[' => {
                let (class, end) = class(&chars, i)?;
                out.push_str(&class);
                atom = true;
                i = end;
                continue;
            }
            ']' | '}' => return Err(format!("a lone '{c}' is ambiguous; write \\{c}")),
            '$' => {
                return Err(
                    "'$' is not accepted: Python also matches it before a final \
                            newline, Rust does not"
                        .to_owned(),
                );
            }
            '*' | '+' | '?' | '{' => {
                if !atom {
                    return Err(format!("'{c}' repeats nothing"));
                }
                let end = if c == '{' {
                    let (text, end) = counted(&chars, i)?;
                    out.push_str(&text);
                    end
                } else {
                    out.push(c);
                    i + 1
                };
                i = end;
                if chars.get(i) == Some(&'?') {
                    out.push('?');
                    i += 1;
                }
                if matches!(chars.get(i), Some('*' | '+' | '?' | '{')) {
                    return Err(
                        "stacked or possessive quantifiers (e.g. a*+) are not accepted".to_owned(),
                    );
                }
                atom = false;
                continue;
            }
            '|' | '^' => {
                out.push(c);
                atom = false;
            }
            _ => {
                out.push(c);
                atom = true;
            }
        }
        i += 1;
    }
    if depth > 0 {
        return Err("a '(' is not closed".to_owned());
    }
    Ok(out)
}

/// An escape outside a class, rewritten.
fn escape_outside(c: char) -> Result<String, String> {
    Ok(match c {
        'd' => format!("[{DIGIT_CLASS}]"),
        'w' => format!("[{WORD_CLASS}]"),
        's' => format!("[{SPACE_CLASS}]"),
        _ => escape_literal(c)?,
    })
}

/// An escape that stands for one character, rewritten.
fn escape_literal(c: char) -> Result<String, String> {
    match c {
        'n' => Ok("\n".to_owned()),
        't' => Ok("\t".to_owned()),
        'r' => Ok("\r".to_owned()),
        _ if ESCAPABLE.contains(c) => Ok(format!("\\{c}")),
        'b' | 'B' | 'A' | 'Z' | 'z' => Err(format!(
            "\\{c} (an anchor or word boundary) is not accepted: the engines disagree on it"
        )),
        '0'..='9' => Err(format!("\\{c} (a backreference) is not accepted")),
        _ => Err(format!(
            "the escape \\{c} is not accepted; use \\d, \\w, \\s, \\n, \\t, \\r or escape one \
             of {ESCAPABLE}"
        )),
    }
}

/// One member of a class: a character (its value and how it is written) or one of the
/// `\d`, `\w`, `\s` shorthands (written out).
enum Member {
    Char(char, String),
    Shorthand(&'static str),
}

/// The class member at `chars[i]`, and the index after it.
fn member(chars: &[char], i: usize) -> Result<(Member, usize), String> {
    let c = *chars.get(i).ok_or("a '[' is not closed")?;
    match c {
        '[' => Err(
            "'[' inside a class (nested or POSIX classes) is not accepted; write \\[".to_owned(),
        ),
        '&' | '~' | '-' if chars.get(i + 1) == Some(&c) => Err(format!(
            "'{c}{c}' inside a class is not accepted (a set operation in Rust)"
        )),
        '\\' => {
            let next = *chars.get(i + 1).ok_or("the pattern ends in a lone \\")?;
            let member = match next {
                'd' => Member::Shorthand(DIGIT_CLASS),
                'w' => Member::Shorthand(WORD_CLASS),
                's' => Member::Shorthand(SPACE_CLASS),
                'n' => Member::Char('\n', "\n".to_owned()),
                't' => Member::Char('\t', "\t".to_owned()),
                'r' => Member::Char('\r', "\r".to_owned()),
                _ => Member::Char(next, escape_literal(next)?),
            };
            Ok((member, i + 2))
        }
        '-' | '^' => Ok((Member::Char(c, format!("\\{c}")), i + 1)),
        _ => Ok((Member::Char(c, c.to_string()), i + 1)),
    }
}

/// The class starting at `chars[start] == '['`, rewritten, and the index after it.
fn class(chars: &[char], start: usize) -> Result<(String, usize), String> {
    let mut out = String::from("[");
    let mut i = start + 1;
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        return Err("an empty class '[]' is not accepted; write \\] for a ']'".to_owned());
    }
    loop {
        if chars.get(i) == Some(&']') {
            return Ok((out + "]", i + 1));
        }
        let (low, next) = member(chars, i)?;
        i = next;
        let is_range = chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|c| *c != ']');
        match low {
            Member::Shorthand(text) if is_range => {
                return Err(format!("a range cannot start at a shorthand ({text})"));
            }
            Member::Shorthand(text) => out.push_str(text),
            Member::Char(_, written) if !is_range => out.push_str(&written),
            Member::Char(low, written) => {
                let (high, next) = member(chars, i + 1)?;
                i = next;
                let Member::Char(high, high_written) = high else {
                    return Err("a range cannot end at a shorthand (\\d, \\w, \\s)".to_owned());
                };
                if low > high {
                    return Err(format!("the range {low:?}-{high:?} is reversed"));
                }
                out.push_str(&written);
                out.push('-');
                out.push_str(&high_written);
            }
        }
    }
}

/// The counted repetition starting at `chars[start] == '{'`, and the index after it.
fn counted(chars: &[char], start: usize) -> Result<(String, usize), String> {
    let close = chars[start..]
        .iter()
        .position(|c| *c == '}')
        .map(|p| start + p)
        .ok_or("a '{' is not closed; write \\{ for a literal '{'")?;
    let inner: String = chars[start + 1..close].iter().collect();
    let bad = || format!("{{{inner}}} is not a repetition {{n}}, {{n,}} or {{n,m}}");
    let number = |t: &str| -> Result<u32, String> {
        if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let n: u32 = t.parse().map_err(|_| bad())?;
        if n > MAX_REPEAT {
            return Err(format!("repetitions above {MAX_REPEAT} are not accepted"));
        }
        Ok(n)
    };
    match inner.split_once(',') {
        None => {
            number(&inner)?;
        }
        Some((low, "")) => {
            number(low)?;
        }
        Some((low, high)) => {
            if number(low)? > number(high)? {
                return Err(format!("{{{inner}}} repeats at least more than at most"));
            }
        }
    }
    Ok((format!("{{{inner}}}"), close + 1))
}

/// Compiles a rewritten pattern and checks what no syntax check sees: a pattern that
/// matches the empty string would insert a marker between every two characters, and
/// one that matches inside the marker would never settle.
pub(super) fn compile(rewritten: &str, marker: &str) -> Result<Regex, String> {
    let regex = Regex::new(rewritten).map_err(|e| format!("it does not compile: {e}"))?;
    if regex.is_match("") {
        return Err("it matches the empty string".to_owned());
    }
    if regex.is_match(marker) {
        return Err(format!("it matches nbv's own marker {marker}"));
    }
    Ok(regex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_core_is_rewritten_for_both_engines() {
        assert_eq!(rewrite(r"\d{4}-\d{2}").unwrap(), "[0-9]{4}-[0-9]{2}");
        assert_eq!(rewrite(r"[\d.]+ms").unwrap(), "[0-9.]+ms");
        assert_eq!(rewrite(r"(?:a|b)+?x").unwrap(), "(?:a|b)+?x");
        assert_eq!(rewrite(r"[a-z\-]").unwrap(), r"[a-z\-]");
        assert_eq!(rewrite(r"[-a]").unwrap(), r"[\-a]");
        assert!(rewrite(r"^took \S").unwrap_err().contains("\\S"));
    }

    /// A pattern within the limit could be rewritten past it (each `\d` grows by three
    /// characters), and the validation Pod, reading the rewritten form back, refused
    /// what the operator had accepted. Found by the `timestamp_pattern` fuzz target.
    #[test]
    fn the_longest_rewrite_reads_back_unchanged() {
        for shorthand in [r"\d", r"\w", r"\s", r"[\w]", r"[\s-]"] {
            let unit = shorthand.chars().count();
            let pattern = shorthand.repeat(MAX_PATTERN_CHARS / unit);
            let rewritten = rewrite(&pattern).unwrap();
            assert!(rewritten.chars().count() > MAX_PATTERN_CHARS, "{shorthand}");
            assert!(
                rewritten.chars().count() <= MAX_REWRITTEN_CHARS,
                "{shorthand}"
            );
            assert_eq!(
                rewrite_within(&rewritten, MAX_REWRITTEN_CHARS).as_ref(),
                Ok(&rewritten)
            );
        }
        assert!(rewrite(&"a".repeat(MAX_PATTERN_CHARS + 1)).is_err());

        // What the operator sends the Pod, the Pod reads.
        let pattern = crate::compare::TimestampPattern::new(&r"\d".repeat(128)).unwrap();
        let settings = crate::compare::Settings {
            timestamp_patterns: vec![pattern],
            ..crate::compare::Settings::default()
        };
        let read: crate::compare::Settings = serde_json::from_str(&settings.to_json()).unwrap();
        assert_eq!(read, settings);
    }

    #[test]
    fn what_the_engines_read_differently_is_refused() {
        for bad in [
            r"(?=x)",
            r"(?<n>x)",
            r"(?i)x",
            r"(a)\1",
            r"\bx",
            "x$",
            "[[:digit:]]",
            "[a&&b]",
            "a{,3}",
            "a*+",
            "a**",
            "]",
            "x{",
            "(",
            ")",
            "[]",
            "[z-a]",
            r"\p{L}",
            r"\x41",
        ] {
            assert!(rewrite(bad).is_err(), "{bad:?}");
        }
        assert!(compile("a*", "<timestamp>").is_err());
        assert!(compile("[a-z]+", "<timestamp>").is_err());
        assert!(compile("[0-9]+", "<timestamp>").is_ok());
    }
}
