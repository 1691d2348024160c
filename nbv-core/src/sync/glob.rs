//! The glob patterns of sync windows, read as Argo CD reads them.
//!
//! Argo CD matches a window's `applications`, `namespaces` and `clusters` with
//! `glob.Match` (gobwas/glob, no separators, no negation): `*` is any run of characters
//! (`/` and `.` included), `?` one character, `[abc]`, `[a-z]` and `[!a-z]` a character
//! class, `{a,b}` alternatives (which may themselves hold patterns) and `\` escapes the
//! next character. A pattern that does not compile (an unclosed `[` or `{`) matches
//! nothing, as in Argo CD, which logs the error and answers "no match".
//!
//! Matching takes time linear in the text for any pattern (at most the pattern's size
//! times the text's), and `{}` nested more than 32 deep does not compile: a pattern in
//! an AppProject cannot stall the worker that reads it.

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
    let Some(tokens) = parse_sequence(&chars, &mut at, 0) else {
        return false;
    };
    if at != chars.len() {
        return false;
    }
    let text: Vec<char> = text.chars().collect();
    matches(&tokens, &text)
}

/// How deep `{}` may nest: deeper, the pattern does not compile (and matches nothing),
/// so that neither parsing nor matching needs a stack as deep as the pattern is long.
const MAX_NESTING: usize = 32;

/// Parses tokens until the end, or (inside `{}`, at `depth` > 0) until an unescaped `,`
/// or `}`.
fn parse_sequence(chars: &[char], at: &mut usize, depth: usize) -> Option<Vec<Token>> {
    if depth > MAX_NESTING {
        return None;
    }
    let in_braces = depth > 0;
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
                    alternatives.push(parse_sequence(chars, at, depth + 1)?);
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

/// One instruction of a compiled pattern: the pattern as a small automaton whose
/// states are run side by side, so that matching costs at most (instructions × text
/// length) steps, whatever the pattern. A backtracking matcher is exponential in the
/// number of `*` and `{}` (`*a*a*a*a*b` against a long run of `a`), and one AppProject
/// may hold such a pattern.
#[derive(Debug, Clone)]
enum Op {
    /// One character that satisfies the test.
    Char(CharTest),
    /// Go on at both instructions.
    Split(usize, usize),
    /// Go on at the instruction.
    Jump(usize),
    /// The whole pattern matched.
    Match,
}

#[derive(Debug, Clone)]
enum CharTest {
    Literal(char),
    Any,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl CharTest {
    fn accepts(&self, c: char) -> bool {
        match self {
            CharTest::Literal(l) => *l == c,
            CharTest::Any => true,
            CharTest::Class { negated, ranges } => {
                ranges.iter().any(|(low, high)| (*low..=*high).contains(&c)) != *negated
            }
        }
    }
}

/// Appends the instructions of `tokens` to `program`.
fn compile(tokens: &[Token], program: &mut Vec<Op>) {
    for token in tokens {
        match token {
            Token::Literal(c) => program.push(Op::Char(CharTest::Literal(*c))),
            Token::AnyOne => program.push(Op::Char(CharTest::Any)),
            Token::Class { negated, ranges } => program.push(Op::Char(CharTest::Class {
                negated: *negated,
                ranges: ranges.clone(),
            })),
            Token::AnyRun => {
                // loop: split(any, out); any; jump(loop)
                let at = program.len();
                program.push(Op::Split(at + 1, at + 3));
                program.push(Op::Char(CharTest::Any));
                program.push(Op::Jump(at));
            }
            Token::Alternatives(alternatives) => {
                // split(a, next); a; jump(end); next: split(b, …); …; end:
                let mut exits = Vec::new();
                for (i, alternative) in alternatives.iter().enumerate() {
                    let last = i + 1 == alternatives.len();
                    let split = program.len();
                    if !last {
                        program.push(Op::Split(split + 1, usize::MAX));
                    }
                    compile(alternative, program);
                    if !last {
                        exits.push(program.len());
                        program.push(Op::Jump(usize::MAX));
                        let next = program.len();
                        program[split] = Op::Split(split + 1, next);
                    }
                }
                let end = program.len();
                for exit in exits {
                    program[exit] = Op::Jump(end);
                }
            }
        }
    }
}

/// Whether `tokens` match the whole of `text`, in O(instructions × characters).
fn matches(tokens: &[Token], text: &[char]) -> bool {
    let mut program = Vec::new();
    compile(tokens, &mut program);
    program.push(Op::Match);
    let mut current = States::new(program.len());
    let mut next = States::new(program.len());
    current.add(&program, 0);
    for &c in text {
        next.clear();
        for &pc in &current.list {
            if let Op::Char(test) = &program[pc]
                && test.accepts(c)
            {
                next.add(&program, pc + 1);
            }
        }
        if next.list.is_empty() {
            return false;
        }
        std::mem::swap(&mut current, &mut next);
    }
    current
        .list
        .iter()
        .any(|&pc| matches!(program[pc], Op::Match))
}

/// The instructions the automaton is at, each once.
struct States {
    list: Vec<usize>,
    /// The round in which each instruction was last reached.
    seen: Vec<u32>,
    round: u32,
}

impl States {
    fn new(size: usize) -> States {
        States {
            list: Vec::with_capacity(size),
            seen: vec![0; size],
            round: 1,
        }
    }

    fn clear(&mut self) {
        self.list.clear();
        self.round += 1;
    }

    /// Adds `pc` and every instruction reachable from it without reading a character.
    /// An explicit stack: a `*` inside many `{}` reaches far.
    fn add(&mut self, program: &[Op], pc: usize) {
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if std::mem::replace(&mut self.seen[pc], self.round) == self.round {
                continue;
            }
            match program[pc] {
                Op::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Op::Jump(to) => stack.push(to),
                Op::Char(_) | Op::Match => self.list.push(pc),
            }
        }
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
