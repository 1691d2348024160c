//! The few lines of YAML a trigger list is nearly always written in, read without the
//! general parser.
//!
//! A general YAML parser costs about 500 instructions per byte of a trigger list (its
//! tokens, events, spans, budgets and scalar resolution), twenty times what JSON costs.
//! Yet the lists users write, and the one nbv writes
//! ([`TriggerSet::to_annotation_value`](super::TriggerSet::to_annotation_value)), are
//! block sequences of one-line `key: value` pairs, or of one-line flow mappings:
//!
//! ```yaml
//! - apiVersion: serving.kserve.io/v1beta1
//!   kind: InferenceService
//!   name: "fraud-model"
//! - {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}
//! ```
//!
//! [`parse`] reads exactly that subset and nothing else: every line is empty, starts an
//! entry (`- `) or continues a block entry (two spaces); every key is a plain word;
//! every value is a plain word that YAML can only read as a string, or a quoted string
//! without escapes. It answers `None` at the first byte outside the subset (a comment,
//! a tab, an anchor, a multi-line or non-string scalar, a duplicate key, any other
//! indentation...), and the general parser then reads the whole value, with its
//! checks and its error messages. So the fast path changes no result: where it answers,
//! the general parser gives the same tree (a property test checks this on generated
//! near-subset text), and every error still comes from the general parser.

use super::yaml::Node;

/// Plain scalars that YAML 1.2 reads as something other than a string (or might, in
/// another case): compared ignoring ASCII case, which leaves more to the general parser
/// than strictly needed.
const NOT_STRINGS: [&str; 12] = [
    "true", "false", "null", "nan", "inf", "infinity", "yes", "no", "on", "off", "y", "n",
];

/// Reads `value` if it is written entirely in the subset; `None` otherwise.
pub(crate) fn parse(value: &str) -> Option<Node> {
    let mut entries = Vec::new();
    // The block mapping being read, if the last entry is one.
    let mut open: Option<Vec<(Node, Node)>> = None;
    for line in value.split('\n') {
        if line.is_empty() {
            continue;
        }
        if let Some(entry) = line.strip_prefix("- ") {
            if let Some(pairs) = open.take() {
                entries.push(Node::Mapping(pairs));
            }
            let mut pairs = Vec::new();
            match entry.strip_prefix('{') {
                Some(flow) => {
                    for pair in flow.strip_suffix('}')?.split(", ") {
                        push_pair(&mut pairs, pair)?;
                    }
                    entries.push(Node::Mapping(pairs));
                }
                None => {
                    push_pair(&mut pairs, entry)?;
                    open = Some(pairs);
                }
            }
        } else {
            push_pair(open.as_mut()?, line.strip_prefix("  ")?)?;
        }
    }
    if let Some(pairs) = open {
        entries.push(Node::Mapping(pairs));
    }
    // Only blank lines: the general parser says what that is.
    (!entries.is_empty()).then_some(Node::List(entries))
}

/// Appends the pair `key: value`; `None` if either is outside the subset or the key
/// is already there.
fn push_pair(pairs: &mut Vec<(Node, Node)>, text: &str) -> Option<()> {
    let (key, value) = text.split_once(": ")?;
    let key = plain(key)?;
    let value = plain(value).or_else(|| quoted(value))?;
    if pairs
        .iter()
        .any(|(known, _)| matches!(known, Node::String(known) if known == key))
    {
        return None;
    }
    pairs.push((Node::String(key.to_owned()), Node::String(value.to_owned())));
    Some(())
}

/// A plain scalar YAML reads as this very string in block and flow context alike: an
/// ASCII letter, then letters, digits, `.`, `/`, `-` and `_`, and not a word of
/// [`NOT_STRINGS`].
fn plain(text: &str) -> Option<&str> {
    let mut bytes = text.bytes();
    let starts_with_letter = bytes.next().is_some_and(|b| b.is_ascii_alphabetic());
    let rest_ok =
        bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'/' | b'-' | b'_'));
    let special = NOT_STRINGS
        .iter()
        .any(|word| word.eq_ignore_ascii_case(text));
    (starts_with_letter && rest_ok && !special).then_some(text)
}

/// A single- or double-quoted scalar without escapes: printable ASCII other than its
/// quote (and, in double quotes, the backslash).
fn quoted(text: &str) -> Option<&str> {
    let quote = *text.as_bytes().first()?;
    if !matches!(quote, b'"' | b'\'') || text.len() < 2 {
        return None;
    }
    let inner = text
        .strip_prefix(quote as char)?
        .strip_suffix(quote as char)?;
    inner
        .bytes()
        .all(|b| matches!(b, b' '..=b'~') && b != quote && b != b'\\')
        .then_some(inner)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::triggers::yaml;

    fn pairs(pairs: &[(&str, &str)]) -> Node {
        Node::Mapping(
            pairs
                .iter()
                .map(|(k, v)| (Node::String((*k).into()), Node::String((*v).into())))
                .collect(),
        )
    }

    #[test]
    fn reads_block_and_flow_entries() {
        let value = "\n- apiVersion: serving.kserve.io/v1beta1\n  kind: InferenceService\n  \
                     name: \"fraud-model\"\n\n- {apiVersion: apps/v1, kind: Deployment, name: 'web'}\n";
        assert_eq!(
            parse(value),
            Some(Node::List(vec![
                pairs(&[
                    ("apiVersion", "serving.kserve.io/v1beta1"),
                    ("kind", "InferenceService"),
                    ("name", "fraud-model"),
                ]),
                pairs(&[
                    ("apiVersion", "apps/v1"),
                    ("kind", "Deployment"),
                    ("name", "web")
                ]),
            ]))
        );
        assert_eq!(parse(value).map(Ok), Some(yaml::parse_general(value)));
    }

    #[test]
    fn leaves_everything_else_to_the_general_parser() {
        for value in [
            "- name: web # the model server",
            "- name: true",
            "- name: NULL",
            "- name: 1e3",
            "- name: web\n  name: api",
            "- name: &a web",
            "- name: \"a\\\"b\"",
            "- name:\tweb",
            "- name: web\r\n",
            "- name: web\n   kind: x",
            "---\n- name: web",
            "- {name: web,kind: x}",
            "- { name: web }",
            "- {name: web}\n  kind: x",
            "- name:",
            "- name: multi\n  line",
            "  - name: web",
            "[]",
            "name: web",
            "\n\n",
        ] {
            assert_eq!(parse(value), None, "{value:?}");
        }
    }

    /// Text near the subset: its tokens, and the characters and words that leave it.
    fn near_subset() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            Just("apiVersion"),
            Just("kind"),
            Just("name"),
            Just("apps/v1"),
            Just("a.b-c_d"),
            Just("True"),
            Just("nuLL"),
            Just("NaN"),
            Just("Infinity"),
            Just("yes"),
            Just("y"),
            Just("e5"),
            Just("1e3"),
            Just("0x1f"),
            Just("-a"),
            Just(".inf"),
            Just("~"),
            Just("\"q, r: s\""),
            Just("\"x}\""),
            Just("'it''s'"),
            Just("\"a\\tb\""),
            Just("'a\"b'"),
            Just("\"\""),
            Just("\"#c\""),
            Just("&x"),
            Just("*x"),
            Just("!!str"),
            Just("[a]"),
        ];
        let glue = prop_oneof![
            Just(": "),
            Just(":"),
            Just(", "),
            Just(","),
            Just(" "),
            Just("  "),
            Just("- "),
            Just("-"),
            Just("- {"),
            Just("{"),
            Just("}"),
            Just("\n"),
            Just("\n  "),
            Just("\n- "),
            Just("\n   "),
            Just("\t"),
            Just("\r"),
            Just(" #"),
            Just("\n---\n"),
        ];
        proptest::collection::vec((glue, word), 1..24)
            .prop_map(|parts| parts.into_iter().map(|(g, w)| format!("{g}{w}")).collect())
    }

    /// Valid entries in every layout of the subset.
    fn in_subset() -> impl Strategy<Value = String> {
        let value = prop_oneof![
            Just("web".to_owned()),
            Just("serving.kserve.io/v1beta1".to_owned()),
            Just("\"1e3\"".to_owned()),
            Just("'on'".to_owned()),
            Just("\"a: b, c # d\"".to_owned()),
        ];
        let entry =
            (proptest::collection::vec(value, 1..5), any::<bool>()).prop_map(|(values, flow)| {
                let keys = ["apiVersion", "kind", "name", "namespace", "action"];
                let pairs: Vec<String> = keys
                    .iter()
                    .zip(&values)
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect();
                if flow && !values.iter().any(|v| v.contains(", ")) {
                    format!("- {{{}}}\n", pairs.join(", "))
                } else {
                    format!("- {}\n", pairs.join("\n  "))
                }
            });
        proptest::collection::vec(entry, 1..5).prop_map(|entries| entries.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Wherever the subset reader answers, the general parser reads the same tree.
        #[test]
        fn agrees_with_the_general_parser(value in near_subset()) {
            if let Some(node) = parse(&value) {
                prop_assert_eq!(yaml::parse_general(&value), Ok(node), "{:?}", value);
            }
        }

        /// The layouts of the subset are read by it, as the general parser reads them.
        #[test]
        fn reads_the_subset(value in in_subset()) {
            let node = parse(&value);
            prop_assert!(node.is_some(), "{:?}", value);
            prop_assert_eq!(yaml::parse_general(&value), Ok(node.unwrap_or(Node::Null)));
        }
    }
}
