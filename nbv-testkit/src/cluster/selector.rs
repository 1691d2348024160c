//! Label and field selectors, parsed like the API server parses `labelSelector` and
//! `fieldSelector`.

use std::collections::BTreeSet;

use serde_json::Value;

/// A malformed selector; answered with 400 BadRequest.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unable to parse selector \"{selector}\": {problem} at byte {at}")]
pub(crate) struct SelectorError {
    selector: String,
    problem: &'static str,
    at: usize,
}

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
    Exists(String),
    DoesNotExist(String),
}

impl Requirement {
    fn matches(&self, labels: &serde_json::Map<String, Value>) -> bool {
        let get = |k: &str| labels.get(k).and_then(Value::as_str);
        match self {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            // Kubernetes: `!=` and `notin` also match objects without the label.
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, set) => get(k).is_some_and(|v| set.contains(v)),
            Requirement::NotIn(k, set) => !get(k).is_some_and(|v| set.contains(v)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
        }
    }
}

/// A parsed `labelSelector`: comma-separated requirements that must all hold.
///
/// Supports `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`,
/// `key` and `!key`. The empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    pub(crate) fn parse(input: &str) -> Result<Self, SelectorError> {
        Parser { input, pos: 0 }.label_selector()
    }

    /// Whether the object's `metadata.labels` satisfy every requirement.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let empty = serde_json::Map::new();
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

/// A parsed `fieldSelector`: comma-separated `path=value`, `path==value` or `path!=value`.
///
/// Unlike the real API server, which accepts only a few fields per resource, any dotted
/// path into the object is accepted; strings compare as they are, numbers and booleans by
/// their JSON text, and a missing field compares as the empty string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector {
    requirements: Vec<(String, bool, String)>,
}

impl FieldSelector {
    pub(crate) fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        for (start, term) in split_unescaped(input) {
            if term.trim().is_empty() {
                continue;
            }
            let err = |problem| SelectorError {
                selector: input.to_owned(),
                problem,
                at: start,
            };
            let (path, equal, value) = if let Some((p, v)) = term.split_once("!=") {
                (p, false, v)
            } else if let Some((p, v)) = term.split_once("==") {
                (p, true, v)
            } else if let Some((p, v)) = term.split_once('=') {
                (p, true, v)
            } else {
                return Err(err("expected `=`, `==` or `!=`"));
            };
            let path = path.trim();
            if path.is_empty() {
                return Err(err("missing field path"));
            }
            requirements.push((path.to_owned(), equal, unescape(value)));
        }
        Ok(Self { requirements })
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.requirements.iter().all(|(path, equal, value)| {
            let actual = path
                .split('.')
                .try_fold(object, |v, segment| v.get(segment))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            (actual == *value) == *equal
        })
    }
}

/// Splits on commas not preceded by a backslash, with each term's byte offset.
fn split_unescaped(input: &str) -> Vec<(usize, &str)> {
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in input.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            ',' if !escaped => {
                terms.push((start, &input[start..i]));
                start = i + 1;
            }
            _ => escaped = false,
        }
    }
    terms.push((start, &input[start..]));
    terms
}

/// Removes field-selector escapes (`\,`, `\=`, `\\`).
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A single-pass recursive-descent parser over the selector text: linear in its length.
struct Parser<'a> {
    input: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, problem: &'static str) -> SelectorError {
        SelectorError {
            selector: self.input.to_owned(),
            problem,
            at: self.pos,
        }
    }

    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    fn skip_spaces(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.input.len() - trimmed.len();
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    /// A label key or value: letters, digits, `-`, `_`, `.`, `/`.
    fn word(&mut self) -> &str {
        let start = self.pos;
        let len = self
            .rest()
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')))
            .unwrap_or(self.rest().len());
        self.pos += len;
        &self.input[start..self.pos]
    }

    fn label_selector(mut self) -> Result<LabelSelector, SelectorError> {
        let mut requirements = Vec::new();
        self.skip_spaces();
        if self.rest().is_empty() {
            return Ok(LabelSelector::default());
        }
        loop {
            requirements.push(self.requirement()?);
            self.skip_spaces();
            if self.rest().is_empty() {
                return Ok(LabelSelector { requirements });
            }
            if !self.eat(",") {
                return Err(self.err("expected `,` between requirements"));
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        self.skip_spaces();
        if self.eat("!") {
            self.skip_spaces();
            let key = self.key()?;
            return Ok(Requirement::DoesNotExist(key));
        }
        let key = self.key()?;
        self.skip_spaces();
        if self.eat("!=") {
            return Ok(Requirement::NotEquals(key, self.value()));
        }
        if self.eat("==") || self.eat("=") {
            return Ok(Requirement::Equals(key, self.value()));
        }
        if self.rest().is_empty() || self.rest().starts_with(',') {
            return Ok(Requirement::Exists(key));
        }
        let op = self.word().to_owned();
        match op.as_str() {
            "in" => Ok(Requirement::In(key, self.set()?)),
            "notin" => Ok(Requirement::NotIn(key, self.set()?)),
            _ => Err(self.err("expected `=`, `==`, `!=`, `in` or `notin`")),
        }
    }

    fn key(&mut self) -> Result<String, SelectorError> {
        let key = self.word();
        if key.is_empty() {
            Err(self.err("expected a label key"))
        } else {
            Ok(key.to_owned())
        }
    }

    fn value(&mut self) -> String {
        self.skip_spaces();
        self.word().to_owned()
    }

    fn set(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        self.skip_spaces();
        if !self.eat("(") {
            return Err(self.err("expected `(` to open a set of values"));
        }
        let mut values = BTreeSet::new();
        loop {
            values.insert(self.value());
            self.skip_spaces();
            if self.eat(")") {
                return Ok(values);
            }
            if !self.eat(",") {
                return Err(self.err("expected `,` or `)` in a set of values"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "n", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_operators() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        let cases = [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app=db", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app in (web, db)", true),
            ("app in (db)", false),
            ("app notin (db)", true),
            ("missing notin (db)", true),
            ("app", true),
            ("missing", false),
            ("!missing", true),
            ("!app", false),
            ("app=web,tier=front", true),
            ("app=web, tier=back", false),
        ];
        for (selector, expected) in cases {
            let parsed = LabelSelector::parse(selector).unwrap();
            assert_eq!(parsed.matches(&o), expected, "selector {selector:?}");
        }
    }

    #[test]
    fn prefixed_keys_and_empty_values() {
        let o = obj(json!({"app.kubernetes.io/part-of": "", "x": "1"}));
        assert!(
            LabelSelector::parse("app.kubernetes.io/part-of=")
                .unwrap()
                .matches(&o)
        );
        assert!(
            LabelSelector::parse("app.kubernetes.io/part-of")
                .unwrap()
                .matches(&o)
        );
    }

    #[test]
    fn malformed_label_selectors_are_errors() {
        for bad in ["app in web", "app in (web", "=x", "app ~ x", "a=b c=d", "!"] {
            assert!(
                LabelSelector::parse(bad).is_err(),
                "{bad:?} should not parse"
            );
        }
        let err = LabelSelector::parse("app in web").unwrap_err();
        assert!(err.to_string().contains("expected `(`"), "{err}");
    }

    #[test]
    fn field_selectors() {
        let o = json!({"metadata": {"name": "a,b", "namespace": "ns"}, "spec": {"replicas": 3}});
        let m = |s: &str| FieldSelector::parse(s).unwrap().matches(&o);
        assert!(m("metadata.namespace=ns"));
        assert!(m("metadata.name=a\\,b"));
        assert!(m("metadata.namespace!=other,spec.replicas=3"));
        assert!(!m("metadata.namespace==other"));
        assert!(m("status.phase="));
        assert!(FieldSelector::parse("metadata.name").is_err());
        assert!(FieldSelector::parse("=x").is_err());
    }
}
