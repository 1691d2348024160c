//! The glob patterns of sync windows, read as Argo CD reads them.
//!
//! Argo CD matches a window's `applications`, `namespaces` and `clusters` with
//! `glob.Match` (gobwas/glob, no separators, no negation): `*` is any run of characters
//! (`/` and `.` included), `?` one character, `[abc]`, `[a-z]` and `[!a-z]` a character
//! class, `{a,b}` alternatives (which may themselves hold patterns) and `\` escapes the
//! next character. A pattern that does not compile (an unclosed `[` or `{`) matches
//! nothing, as in Argo CD, which logs the error and answers "no match".

/// One element of a compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    AnyOne,
    AnyRun,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Alternatives(Vec<Vec<Token>>),
}

/// Whether `text` matches `pattern` (see the module documentation).
///
/// # Examples
///
/// ```
/// use nbv_core::sync::glob_match;
///
/// assert!(glob_match("prod-*", "prod-models"));
/// assert!(glob_match("https://*.example.com", "https://k8s.eu.example.com"));
/// assert!(glob_match("{ml,serving}", "serving"));
/// assert!(!glob_match("[a-c]x", "dx"));
/// assert!(!glob_match("[unclosed", "[unclosed"));
/// ```
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let chars: Vec<char> = pattern.chars().collect();
    let mut at = 0;
    let Some(tokens) = parse_sequence(&chars, &mut at, false) else {
        return false;
    };
    if at != chars.len() {
        return false;
    }
    let text: Vec<char> = text.chars().collect();
    matches(&tokens, &text)
}

/// Parses tokens until the end, or (inside `{}`) until an unescaped `,` or `}`.
fn parse_sequence(chars: &[char], at: &mut usize, in_braces: bool) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    while let Some(&c) = chars.get(*at) {
        match c {
            ',' | '}' if in_braces => return Some(tokens),
            '*' => {
                *at += 1;
                // Runs of `*` are one `*`.
                if tokens.last() != Some(&Token::AnyRun) {
                    tokens.push(Token::AnyRun);
                }
            }
            '?' => {
                *at += 1;
                tokens.push(Token::AnyOne);
            }
            '\\' => {
                let escaped = *chars.get(*at + 1)?;
                *at += 2;
                tokens.push(Token::Literal(escaped));
            }
            '[' => {
                *at += 1;
                tokens.push(parse_class(chars, at)?);
            }
            '{' => {
                *at += 1;
                let mut alternatives = Vec::new();
                loop {
                    alternatives.push(parse_sequence(chars, at, true)?);
                    match chars.get(*at) {
                        Some(',') => *at += 1,
                        Some('}') => {
                            *at += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                tokens.push(Token::Alternatives(alternatives));
            }
            literal => {
                *at += 1;
                tokens.push(Token::Literal(literal));
            }
        }
    }
    (!in_braces).then_some(tokens)
}

/// Parses a character class after its `[`, up to and including its `]`.
fn parse_class(chars: &[char], at: &mut usize) -> Option<Token> {
    let negated = chars.get(*at) == Some(&'!');
    if negated {
        *at += 1;
    }
    let mut ranges = Vec::new();
    loop {
        let c = *chars.get(*at)?;
        *at += 1;
        match c {
            ']' => return (!ranges.is_empty()).then_some(Token::Class { negated, ranges }),
            '\\' => {
                let escaped = *chars.get(*at)?;
                *at += 1;
                ranges.push((escaped, escaped));
            }
            low if chars.get(*at) == Some(&'-')
                && chars.get(*at + 1).is_some_and(|c| *c != ']') =>
            {
                let high = chars[*at + 1];
                *at += 2;
                if high < low {
                    return None;
                }
                ranges.push((low, high));
            }
            single => ranges.push((single, single)),
        }
    }
}

/// Backtracking match of `tokens` against the whole of `text`.
fn matches(tokens: &[Token], text: &[char]) -> bool {
    let Some((first, rest)) = tokens.split_first() else {
        return text.is_empty();
    };
    match first {
        Token::Literal(c) => text.first() == Some(c) && matches(rest, &text[1..]),
        Token::AnyOne => !text.is_empty() && matches(rest, &text[1..]),
        Token::AnyRun => (0..=text.len()).any(|skip| matches(rest, &text[skip..])),
        Token::Class { negated, ranges } => text.first().is_some_and(|c| {
            let inside = ranges.iter().any(|(low, high)| (low..=high).contains(&c));
            inside != *negated && matches(rest, &text[1..])
        }),
        Token::Alternatives(alternatives) => alternatives.iter().any(|alternative| {
            let mut joined = alternative.clone();
            joined.extend_from_slice(rest);
            matches(&joined, text)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn patterns_as_gobwas_reads_them() {
        let cases = [
            ("*", "", true),
            ("*", "a/b.c", true),
            ("a*b", "ab", true),
            ("a*b", "axxb", true),
            ("a*b", "axxbc", false),
            ("?", "", false),
            ("?", "é", true),
            ("[!a]", "b", true),
            ("[!a]", "a", false),
            ("[a-]", "-", true),
            ("\\*", "*", true),
            ("\\*", "x", false),
            ("{a,b*}", "bcd", true),
            ("{a,b*}x", "ax", true),
            ("{}", "", true),
            ("{a", "a", false),
            ("a}", "a}", true),
            ("[z-a]", "m", false),
            ("prod", "production", false),
        ];
        for (pattern, text, expected) in cases {
            assert_eq!(
                glob_match(pattern, text),
                expected,
                "{pattern:?} ~ {text:?}"
            );
        }
    }
}
