//! Reading the annotation value as a plain YAML tree, with every hostile
//! construct rejected by the parser itself.
//!
//! We parse into our own small [`Node`] tree instead of deserialising
//! straight into a struct so that validation can look at every entry and
//! every field and report all problems at once, with entry indexes, and can
//! tell an unknown field (a warning) from a wrong type (an error).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::options::{DuplicateKeyPolicy, MergeKeyPolicy, NonFiniteFloatPolicy};
use serde_saphyr::{Error as YamlError, MessageFormatter, UserMessageFormatter};

use super::MAX_ANNOTATION_BYTES;
use super::error::{TriggerError, ValueKind, YamlLocation};
use super::text::sanitize;

/// Deepest nesting accepted. A trigger list needs two levels (list, entry);
/// the slack lets a wrong value such as `name: [a]` parse, so that it is
/// reported as a wrong type of that field rather than as a YAML error.
pub(crate) const MAX_DEPTH: usize = 16;

/// A YAML value, as far as trigger validation cares.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    /// Integers and floats, kept as text for messages.
    Number(String),
    String(String),
    List(Vec<Node>),
    /// Entries in document order (keys are unique: the parser rejects duplicates).
    Mapping(Vec<(Node, Node)>),
}

impl Node {
    /// A summary of this node for "expected X, found Y" messages.
    pub(crate) fn kind(&self) -> ValueKind {
        match self {
            Node::Null => ValueKind::Null,
            Node::Bool(b) => ValueKind::Boolean(*b),
            Node::Number(n) => ValueKind::Number(n.clone()),
            Node::String(s) => ValueKind::String(s.clone()),
            Node::List(_) => ValueKind::List,
            Node::Mapping(_) => ValueKind::Mapping,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_bool<E>(self, value: bool) -> Result<Node, E> {
        Ok(Node::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Node, E> {
        Ok(Node::Number(value.to_string()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Node, E> {
        Ok(Node::Number(value.to_string()))
    }

    fn visit_i128<E>(self, value: i128) -> Result<Node, E> {
        Ok(Node::Number(value.to_string()))
    }

    fn visit_u128<E>(self, value: u128) -> Result<Node, E> {
        Ok(Node::Number(value.to_string()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Node, E> {
        Ok(Node::Number(value.to_string()))
    }

    fn visit_str<E>(self, value: &str) -> Result<Node, E> {
        Ok(Node::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Node, E> {
        Ok(Node::String(value))
    }

    fn visit_bytes<E>(self, value: &[u8]) -> Result<Node, E> {
        // Only reachable through an explicit `!!binary` tag.
        Ok(Node::String(String::from_utf8_lossy(value).into_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Node::Mapping(entries))
    }
}

/// Parser settings: what makes hostile input cheap to reject.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            // Zero anchors and aliases: rejected at the first `&` or `*`,
            // before anything is expanded, so an alias bomb costs nothing.
            max_anchors: 0,
            max_aliases: 0,
            max_documents: 1,
            max_depth: MAX_DEPTH,
            flow_nesting_limit: MAX_DEPTH,
            // Generous for any value under the size limit (a node takes at
            // least one byte); the size check has already bounded the work.
            max_nodes: MAX_ANNOTATION_BYTES,
            max_events: 4 * MAX_ANNOTATION_BYTES,
            max_total_scalar_bytes: 2 * MAX_ANNOTATION_BYTES,
            max_merge_keys: 0,
        },
        duplicate_keys: DuplicateKeyPolicy::Error,
        merge_keys: MergeKeyPolicy::Error,
        // YAML 1.2 core booleans only: `yes`, `on`, `no` stay strings, so a
        // target named `on` is not silently turned into `true`.
        strict_booleans: true,
        // `.nan` and `.inf` are numbers (reported as a wrong type of the
        // field), not a parse error without an entry index.
        non_finite_float_policy: NonFiniteFloatPolicy::PassThrough,
    }
}

/// Parses `value` with the general YAML parser.
pub(crate) fn parse_general(value: &str) -> Result<Node, TriggerError> {
    serde_saphyr::from_str_with_options::<Node>(value, options()).map_err(|e| convert(&e))
}

/// Turns a parser error into a user-facing [`TriggerError`].
fn convert(error: &YamlError) -> TriggerError {
    let location = error.location().map(|l| YamlLocation {
        line: l.line(),
        column: l.column(),
    });
    let yaml = |message: String| TriggerError::Yaml { location, message };
    match error.without_snippet() {
        YamlError::Budget {
            breach:
                BudgetBreach::Anchors { .. }
                | BudgetBreach::Aliases { .. }
                | BudgetBreach::AliasAnchorRatio { .. }
                | BudgetBreach::RecordedAnchorEvents { .. }
                | BudgetBreach::RecordedAnchorBytes { .. },
            ..
        }
        | YamlError::UnknownAnchor { .. }
        | YamlError::AliasError { .. } => TriggerError::AliasNotAllowed { location },
        YamlError::DuplicateMappingKey { key, .. } => TriggerError::DuplicateKey {
            key: key.clone(),
            location,
        },
        YamlError::MergeKeyNotAllowed { .. }
        | YamlError::Budget {
            breach: BudgetBreach::MergeKeys { .. },
            ..
        } => yaml("YAML merge keys (<<) are not allowed; write every field out in full".into()),
        YamlError::Budget {
            breach: BudgetBreach::Depth { .. },
            ..
        } => yaml(format!(
            "nested more than {MAX_DEPTH} levels deep; a trigger list is a list of flat mappings"
        )),
        YamlError::Budget {
            breach: BudgetBreach::Documents { .. },
            ..
        } => yaml(
            "more than one YAML document (a line \"---\" starts a new one); put every trigger in \
             one list"
                .into(),
        ),
        YamlError::Budget { .. } => yaml("too many YAML nodes for a trigger list".into()),
        other => yaml(sanitize(&UserMessageFormatter.format_message(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // Through the subset reader first, as a trigger annotation is read.
    use crate::triggers::parse_tree as parse;

    #[test]
    fn scalars_follow_yaml_1_2_core() {
        let node = parse("[on, yes, true, 5, 1.5, ~, '5', .nan]").unwrap();
        assert_eq!(
            node,
            Node::List(vec![
                Node::String("on".into()),
                Node::String("yes".into()),
                Node::Bool(true),
                Node::Number("5".into()),
                Node::Number("1.5".into()),
                Node::Null,
                Node::String("5".into()),
                Node::Number("NaN".into()),
            ])
        );
    }

    #[test]
    fn hostile_constructs_are_rejected() {
        assert!(matches!(
            parse("- &a x\n- *a"),
            Err(TriggerError::AliasNotAllowed { .. })
        ));
        assert!(matches!(
            parse("- *a"),
            Err(TriggerError::AliasNotAllowed { .. })
        ));
        assert!(matches!(
            parse("- {a: 1, a: 2}"),
            Err(TriggerError::DuplicateKey { .. })
        ));
        assert!(matches!(
            parse("- {<<: {a: 1}}"),
            Err(TriggerError::Yaml { .. })
        ));
        assert!(matches!(parse("a\n---\nb"), Err(TriggerError::Yaml { .. })));
        let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
        assert!(matches!(parse(&deep), Err(TriggerError::Yaml { .. })));
    }

    #[test]
    fn syntax_errors_have_a_location() {
        let Err(TriggerError::Yaml { location, .. }) = parse("- [a, b\n") else {
            panic!("expected a YAML error");
        };
        assert_eq!(location.map(|l| l.line), Some(1));
    }
}
