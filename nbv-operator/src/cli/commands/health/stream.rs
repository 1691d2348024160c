//! The objects of a YAML or JSON stream, in order.
//!
//! A stream is either YAML documents separated by `---`, or JSON values one after
//! another (`{...}{...}` or one per line). Each document is one object, whatever it
//! holds: a JSON array or a `kind: List` is handed to the script as it is, never split
//! into its items (Argo CD never runs a health check on a list). Empty
//! documents (a leading `---`, a trailing one, a `null`) are skipped; the position of
//! every document, skipped or not, is its 1-based index in the stream.

use serde::Deserialize;
use serde_json::Value;

/// One object of a stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Document {
    /// Position in the stream, from 1.
    pub(crate) index: usize,
    /// The object.
    pub(crate) object: Value,
}

/// A document that cannot be parsed. Parsers cannot resynchronize after a syntax
/// error, so the stream ends there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unparsable {
    /// Position in the stream, from 1.
    pub(crate) index: usize,
    /// What the parser objects to, with its location.
    pub(crate) message: String,
}

/// The objects read before the end of the stream or the first unparsable document.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Stream {
    pub(crate) documents: Vec<Document>,
    pub(crate) unparsable: Option<Unparsable>,
}

/// Splits `text` into objects.
///
/// Text that starts like JSON (`{` or `[`) is read as a JSON stream first; if that
/// fails, it is read as YAML (a flow mapping such as `{phase: Failed}` is YAML, not
/// JSON), and if that fails too, the JSON reading and its error are kept, since the
/// text looked like JSON.
pub(crate) fn parse(text: &str) -> Stream {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !matches!(text.trim_start().chars().next(), Some('{' | '[')) {
        return yaml(text);
    }
    let json = json(text);
    if json.unparsable.is_none() {
        return json;
    }
    let yaml = yaml(text);
    if yaml.unparsable.is_none() {
        yaml
    } else {
        json
    }
}

fn json(text: &str) -> Stream {
    let mut stream = Stream::default();
    let values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    for (position, value) in values.enumerate() {
        let index = position + 1;
        match value {
            Ok(Value::Null) => {}
            Ok(object) => stream.documents.push(Document { index, object }),
            Err(error) => {
                stream.unparsable = Some(Unparsable {
                    index,
                    message: format!("document {index} is not valid JSON: {error}"),
                });
                break;
            }
        }
    }
    stream
}

fn yaml(text: &str) -> Stream {
    let mut stream = Stream::default();
    for (position, document) in nbv_core::yaml::documents(text).enumerate() {
        let index = position + 1;
        match document.and_then(|d| Ok(Value::deserialize(d)?)) {
            Ok(Value::Null) => {}
            Ok(object) => stream.documents.push(Document { index, object }),
            Err(error) => {
                // After an error the parser keeps reporting it for ever: stop here.
                stream.unparsable = Some(Unparsable {
                    index,
                    message: format!("document {index} is not valid YAML: {error}"),
                });
                break;
            }
        }
    }
    stream
}

/// `Kind namespace/name` (or `Kind name`, or `Kind`) of an object, from the fields it
/// has; `None` when it has none of them.
pub(crate) fn identity(object: &Value) -> Option<String> {
    let text = |value: &Value| value.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let kind = object.get("kind").and_then(text);
    let metadata = object.get("metadata");
    let name = metadata.and_then(|m| m.get("name")).and_then(text);
    let namespace = metadata.and_then(|m| m.get("namespace")).and_then(text);
    let name = match (namespace, name) {
        (Some(namespace), Some(name)) => Some(format!("{namespace}/{name}")),
        (None, name) => name,
        (Some(namespace), None) => Some(format!("{namespace}/(no name)")),
    };
    match (kind, name) {
        (Some(kind), Some(name)) => Some(format!("{kind} {name}")),
        (kind, name) => kind.or(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn objects(stream: &Stream) -> Vec<Value> {
        stream.documents.iter().map(|d| d.object.clone()).collect()
    }

    #[test]
    fn yaml_documents_keep_their_order_and_position() {
        let stream = parse("---\na: 1\n---\n---\nb: [x]\n...\n---\nc: {d: true}\n---\n");
        assert_eq!(
            objects(&stream),
            [
                json!({"a": 1}),
                json!({"b": ["x"]}),
                json!({"c": {"d": true}})
            ]
        );
        // The empty document between the first two still counts.
        let indexes: Vec<usize> = stream.documents.iter().map(|d| d.index).collect();
        assert_eq!(indexes, [1, 3, 4]);
        assert_eq!(stream.unparsable, None);
    }

    #[test]
    fn a_json_array_is_one_object() {
        let stream = parse(r#"[{"kind": "A"}, {"kind": "B"}]"#);
        assert_eq!(objects(&stream), [json!([{"kind": "A"}, {"kind": "B"}])]);
    }

    #[test]
    fn json_values_one_after_another_are_a_stream() {
        let stream = parse("{\"a\": 1}{\"b\": 2}\n\n{\"c\": 3}\n");
        assert_eq!(
            objects(&stream),
            [json!({"a": 1}), json!({"b": 2}), json!({"c": 3})]
        );
    }

    #[test]
    fn a_yaml_flow_mapping_is_not_mistaken_for_broken_json() {
        let stream = parse("{status: {phase: Failed}}\n---\nstatus: {}\n");
        assert_eq!(
            objects(&stream),
            [
                json!({"status": {"phase": "Failed"}}),
                json!({"status": {}})
            ]
        );
    }

    #[test]
    fn a_broken_document_ends_the_stream_after_the_good_ones() {
        let stream = parse("a: 1\n---\nb: [unclosed\n---\nc: 3\n");
        assert_eq!(objects(&stream), [json!({"a": 1})]);
        let unparsable = stream.unparsable.expect("the second document is broken");
        assert_eq!(unparsable.index, 2);
        assert!(
            unparsable
                .message
                .starts_with("document 2 is not valid YAML: "),
            "{unparsable:?}"
        );

        let stream = parse("{\"a\": 1}\n{\"b\": }\n");
        assert_eq!(objects(&stream), [json!({"a": 1})]);
        let unparsable = stream.unparsable.expect("the second value is broken");
        assert!(
            unparsable
                .message
                .starts_with("document 2 is not valid JSON: "),
            "{unparsable:?}"
        );
    }

    #[test]
    fn empty_input_has_no_object() {
        for text in ["", "\n", "---\n", "# only a comment\n", "null", "\u{feff}"] {
            assert_eq!(parse(text), Stream::default(), "{text:?}");
        }
    }

    #[test]
    fn identity_names_what_the_object_has() {
        let full = json!({"kind": "Job", "metadata": {"namespace": "ml", "name": "train"}});
        assert_eq!(identity(&full).as_deref(), Some("Job ml/train"));
        let cluster = json!({"kind": "Node", "metadata": {"name": "n1"}});
        assert_eq!(identity(&cluster).as_deref(), Some("Node n1"));
        assert_eq!(identity(&json!({"kind": "Job"})).as_deref(), Some("Job"));
        assert_eq!(identity(&json!({"status": {}})), None);
        assert_eq!(identity(&json!([1, 2])), None);
        assert_eq!(identity(&json!({"kind": 3, "metadata": "x"})), None);
    }

    /// JSON values without `null` (an empty document is skipped by design).
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-zA-Z0-9 :.-]{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    fn object() -> impl Strategy<Value = Value> {
        prop::collection::btree_map("[a-z]{1,6}", value(), 0..4)
            .prop_map(|map| Value::Object(map.into_iter().collect()))
    }

    proptest! {
        /// Whatever the objects, both spellings of a stream give them back, all of
        /// them, in order, numbered from 1.
        #[test]
        fn both_stream_formats_give_back_every_object_in_order(
            objects_in in prop::collection::vec(object(), 0..6),
            separator in prop_oneof![Just(""), Just("\n"), Just(" \n\t")],
        ) {
            let json_text: Vec<String> = objects_in.iter().map(Value::to_string).collect();
            let json_stream = parse(&json_text.join(separator));
            prop_assert_eq!(objects(&json_stream), objects_in.clone());
            prop_assert_eq!(json_stream.unparsable, None);

            let yaml_text: Vec<String> = objects_in
                .iter()
                .map(|o| serde_yaml_ng::to_string(o).unwrap_or_default())
                .collect();
            let yaml_stream = parse(&yaml_text.join("---\n"));
            prop_assert_eq!(objects(&yaml_stream), objects_in.clone());
            let indexes: Vec<usize> = yaml_stream.documents.iter().map(|d| d.index).collect();
            prop_assert_eq!(indexes, (1..=objects_in.len()).collect::<Vec<_>>());
        }

        /// A top-level array is never split: it is one object.
        #[test]
        fn an_array_is_always_one_object(items in prop::collection::vec(object(), 0..5)) {
            let array = Value::from(items);
            let stream = parse(&array.to_string());
            prop_assert_eq!(objects(&stream), vec![array]);
        }

        /// Any text: parsing ends (bounded), and the positions only grow.
        #[test]
        fn any_text_parses_without_panicking(text in "[-\\[\\]{}:#'\" \na-z0-9.,|>&*!]{0,64}") {
            let stream = parse(&text);
            let indexes: Vec<usize> = stream.documents.iter().map(|d| d.index).collect();
            prop_assert!(indexes.windows(2).all(|w| w[0] < w[1]));
            if let (Some(last), Some(broken)) = (indexes.last(), &stream.unparsable) {
                prop_assert!(*last < broken.index);
            }
        }
    }
}
