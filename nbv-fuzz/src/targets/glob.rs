//! A sync window's glob and a name to match, cut at the first NUL byte.
//!
//! - `glob_match` never panics and (with the runner's time limit) stays fast on every
//!   pattern and text: it is meant to be linear in the text.
//! - On short patterns and texts, it answers what a plain backtracking matcher written
//!   here from the documented rules answers (`*`, `?`, `[a-z]`, `[!a-z]`, `{a,b}`,
//!   `\` escapes; a pattern that does not compile matches nothing).

use nbv_core::sync::glob_match;

use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "glob",
    run,
    dictionary: &[
        "\0",
        "*",
        "?",
        "[",
        "]",
        "[!",
        "[a-z]",
        "-",
        "{",
        "}",
        ",",
        "{a,b}",
        "\\",
        "\\*",
        "*a*a*a*a*a*a*a*a*b",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "{{{{{{{{",
        "}}}}}}}}",
        "prod-",
        "https://",
        ".example.com",
        "\u{e9}",
        "\u{1f600}",
    ],
    max_len: 2048,
};

/// Longest pattern and text, in characters, checked against the backtracking matcher
/// (whose time grows exponentially with the pattern).
const SHORT: usize = 12;
/// How deep `{}` may nest (documented): deeper does not compile.
const MAX_NESTING: usize = 32;

#[derive(Debug)]
enum Node {
    Char(char),
    One,
    Run,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Either(Vec<Vec<Node>>),
}

/// The pattern as a list of nodes, or `None` when it does not compile.
fn compile(pattern: &[char]) -> Option<Vec<Node>> {
    let (nodes, rest) = sequence(pattern, 0)?;
    rest.is_empty().then_some(nodes)
}

/// Nodes up to the end, or inside braces up to an unescaped `,` or `}`.
fn sequence(mut p: &[char], depth: usize) -> Option<(Vec<Node>, &[char])> {
    let mut nodes = Vec::new();
    loop {
        let Some((&c, rest)) = p.split_first() else {
            return (depth == 0).then_some((nodes, p));
        };
        if depth > 0 && (c == ',' || c == '}') {
            return Some((nodes, p));
        }
        p = rest;
        nodes.push(match c {
            '*' => Node::Run,
            '?' => Node::One,
            '\\' => {
                let (&escaped, rest) = p.split_first()?;
                p = rest;
                Node::Char(escaped)
            }
            '[' => {
                let (class, rest) = class(p)?;
                p = rest;
                class
            }
            '{' => {
                if depth + 1 > MAX_NESTING {
                    return None;
                }
                let mut options = Vec::new();
                loop {
                    let (option, rest) = sequence(p, depth + 1)?;
                    options.push(option);
                    let (&end, rest) = rest.split_first()?;
                    p = rest;
                    if end == '}' {
                        break;
                    }
                }
                Node::Either(options)
            }
            other => Node::Char(other),
        });
    }
}

/// A class after its `[`: members up to `]`; `a-b` is a range unless `-` comes last.
fn class(mut p: &[char]) -> Option<(Node, &[char])> {
    let negated = p.first() == Some(&'!');
    if negated {
        p = &p[1..];
    }
    let mut ranges = Vec::new();
    loop {
        let (&c, rest) = p.split_first()?;
        p = rest;
        let low = match c {
            ']' if ranges.is_empty() => return None,
            ']' => return Some((Node::Class { negated, ranges }, p)),
            '\\' => {
                let (&escaped, rest) = p.split_first()?;
                p = rest;
                ranges.push((escaped, escaped));
                continue;
            }
            low => low,
        };
        match p {
            ['-', high, rest @ ..] if *high != ']' => {
                if *high < low {
                    return None;
                }
                ranges.push((low, *high));
                p = rest;
            }
            _ => ranges.push((low, low)),
        }
    }
}

/// Whether `nodes` match all of `text`, by trying every way.
fn backtrack(nodes: &[Node], text: &[char]) -> bool {
    let Some((node, rest)) = nodes.split_first() else {
        return text.is_empty();
    };
    match node {
        Node::Run => (0..=text.len()).any(|n| backtrack(rest, &text[n..])),
        Node::Either(options) => options.iter().any(|option| {
            // The option, then what follows the braces, as one sequence.
            (0..=text.len()).any(|n| backtrack(option, &text[..n]) && backtrack(rest, &text[n..]))
        }),
        single => {
            let Some((&c, text)) = text.split_first() else {
                return false;
            };
            let accepts = match single {
                Node::Char(l) => *l == c,
                Node::One => true,
                Node::Class { negated, ranges } => {
                    ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
                }
                Node::Run | Node::Either(_) => unreachable!("handled above"),
            };
            accepts && backtrack(rest, text)
        }
    }
}

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some((pattern, text)) = crate::two_texts(data) else {
        return Outcome::Skipped;
    };
    let matched = glob_match(pattern, text);
    let pattern: Vec<char> = pattern.chars().collect();
    let chars: Vec<char> = text.chars().collect();
    if pattern.len() <= SHORT && chars.len() <= SHORT {
        let expected = compile(&pattern).is_some_and(|nodes| backtrack(&nodes, &chars));
        let pattern: String = pattern.iter().collect();
        assert_eq!(
            matched, expected,
            "glob_match({pattern:?}, {text:?}) = {matched}, the backtracking matcher says {expected}"
        );
    }
    if matched {
        Outcome::Read
    } else {
        Outcome::Refused
    }
}
