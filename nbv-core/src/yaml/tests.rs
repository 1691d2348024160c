use super::*;
use proptest::prelude::*;
use serde_yaml_ng::Value;

/// The classic billion laughs: nine levels of nine aliases, 9^9 scalars once expanded.
fn billion_laughs() -> String {
    let mut bomb = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..=9 {
        let aliases = vec![format!("*l{}", level - 1); 9].join(", ");
        bomb += &format!("l{level}: &l{level} [{aliases}]\n");
    }
    bomb
}

/// One anchor of 1 MiB, then `aliases` aliases of it: 10 GiB once expanded with
/// 10,000, though every alias is a node of its own, which go-yaml's node count allows.
fn large_anchor(aliases: usize) -> String {
    let mut text = format!("- &big {}\n", "x".repeat(1 << 20));
    text += &"- *big\n".repeat(aliases);
    text
}

fn is_aliasing(error: &YamlError) -> bool {
    matches!(
        error,
        YamlError::Bounds(
            BoundsError::ExcessiveAliasing { .. } | BoundsError::ExcessiveAliasedText { .. }
        )
    )
}

#[test]
fn billion_laughs_is_refused_before_expansion() {
    let bomb = billion_laughs();
    let error = from_str::<serde_json::Value>(&bomb).unwrap_err();
    assert!(matches!(
        error,
        YamlError::Bounds(BoundsError::ExcessiveAliasing { .. })
    ));
    assert!(
        error
            .to_string()
            .contains("document contains excessive aliasing"),
        "{error}"
    );
    let mut documents = documents(&bomb);
    assert!(
        documents
            .next()
            .is_some_and(|d| d.is_err_and(|e| is_aliasing(&e)))
    );
    assert!(documents.next().is_none());
}

#[test]
fn one_large_anchor_repeated_is_refused() {
    let text = large_anchor(10_000);
    let error = from_str::<serde_json::Value>(&text).unwrap_err();
    let YamlError::Bounds(BoundsError::ExcessiveAliasedText {
        aliased, written, ..
    }) = error
    else {
        panic!("expected the aliased text to be refused, got {error}");
    };
    // Refused within a few copies of the anchor, long before 10,000.
    assert!(aliased < 64 << 20, "{aliased}");
    assert!(written >= 1 << 20);
    assert!(
        documents(&text)
            .next()
            .is_some_and(|d| d.is_err_and(|e| is_aliasing(&e)))
    );
    // serde_yaml_ng alone copies the anchor for every alias: 17 MiB from 1 MiB here.
    let copied: Vec<String> = serde_yaml_ng::from_str(&large_anchor(16)).unwrap();
    assert_eq!(copied.iter().map(String::len).sum::<usize>(), 17 << 20);
    assert!(from_str::<Vec<String>>(&large_anchor(16)).is_err());
    // A few repetitions of a large anchor are fine.
    let few: Vec<String> = from_str(&large_anchor(2)).unwrap();
    assert_eq!(few.len(), 3);
}

#[test]
fn aliases_in_a_later_document_count_with_the_earlier_ones() {
    // Each document alone stays under the rule; a stream keeps all its documents.
    let one = format!("- &big {}\n{}", "x".repeat(100_000), "- *big\n".repeat(30));
    let stream = vec![one.as_str(); 20].join("---\n");
    assert!(from_str::<Vec<String>>(&one).is_ok());
    let results: Vec<_> = documents(&stream).collect();
    let read = results.iter().take_while(|r| r.is_ok()).count();
    assert!(read > 0 && read < 20, "{read}");
    assert!(matches!(results.last(), Some(Err(e)) if is_aliasing(e)));
}

#[test]
fn ten_thousand_levels_are_refused_at_the_depth_limit() {
    let flow = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let block = format!("{}x\n", "- ".repeat(10_000));
    let mappings = format!("{}x{}", "{a: ".repeat(10_000), "}".repeat(10_000));
    for text in [flow, block, mappings] {
        let error = from_str::<serde_json::Value>(&text).unwrap_err();
        assert!(
            matches!(
                error,
                YamlError::Bounds(BoundsError::TooDeep { max: MAX_DEPTH, .. })
            ),
            "{error}"
        );
        assert!(error.to_string().contains("nested more than 128 levels"));
    }
}

#[test]
fn a_deep_document_of_a_stream_is_refused_without_being_parsed() {
    // Two million levels: libyaml's time grows faster than the text with the depth;
    // the check stops at level 129, and the document is never handed to libyaml.
    let deep = format!("{}{}", "[".repeat(2_000_000), "]".repeat(2_000_000));
    let stream = format!("a: 1\n---\n{deep}\n");
    let mut documents = documents(&stream);
    let first = Value::deserialize(documents.next().unwrap().unwrap()).unwrap();
    assert_eq!(first, serde_yaml_ng::from_str::<Value>("a: 1").unwrap());
    assert!(matches!(
        documents.next(),
        Some(Err(YamlError::Bounds(BoundsError::TooDeep { .. })))
    ));
    assert!(documents.next().is_none());
}

#[test]
fn the_depth_limit_is_serde_yaml_ngs() {
    let at = |depth: usize| format!("{}x{}", "[".repeat(depth), "]".repeat(depth));
    assert_eq!(
        from_str::<Value>(&at(128)).unwrap(),
        serde_yaml_ng::from_str::<Value>(&at(128)).unwrap()
    );
    assert!(serde_yaml_ng::from_str::<Value>(&at(129)).is_err());
    assert!(from_str::<Value>(&at(129)).is_err());
}

#[test]
fn too_large_text_is_refused_unread() {
    let text = "a".repeat(MAX_INPUT_BYTES + 1);
    assert!(matches!(
        from_str::<String>(&text),
        Err(YamlError::Bounds(BoundsError::TooLarge { .. }))
    ));
    let exactly = &text[..MAX_INPUT_BYTES];
    assert_eq!(from_str::<String>(exactly).unwrap().len(), MAX_INPUT_BYTES);
}

#[test]
fn syntax_errors_keep_serde_yaml_ngs_message() {
    for text in [
        "a: [b, c\n",
        "a: b: c\n",
        "- a\nb: c\n",
        "a: 'b\n",
        "{a: 1}}",
    ] {
        let ours = from_str::<Value>(text).unwrap_err().to_string();
        let theirs = serde_yaml_ng::from_str::<Value>(text)
            .unwrap_err()
            .to_string();
        assert_eq!(ours, theirs, "{text:?}");
    }
    // In a stream, the documents before the bad one are read.
    let stream = "a: 1\n---\nb: 2\n---\nc: [\n";
    let results: Vec<_> = documents(stream)
        .map(|d| d.and_then(|d| Ok(Value::deserialize(d)?)))
        .collect();
    assert_eq!(results.len(), 3);
    assert!(results[0].is_ok() && results[1].is_ok());
    let expected = serde_yaml_ng::Deserializer::from_str(stream)
        .nth(2)
        .map(|d| Value::deserialize(d).unwrap_err().to_string());
    assert_eq!(results[2].as_ref().err().map(ToString::to_string), expected);
}

#[test]
fn a_recursive_alias_is_refused() {
    assert!(matches!(
        from_str::<Value>("a: &x {b: *x}"),
        Err(YamlError::Bounds(BoundsError::RecursiveAlias { .. }))
    ));
}

#[test]
fn what_serde_yaml_ng_reads_is_unchanged() {
    // YAML 1.2 booleans, tags, `<<` as an ordinary key, leading zeros: as before.
    let text = "on: yes\nt: !custom {a: 1}\n<<: {m: 1}\nz: 0755\nf: .inf\nbin: !!binary aGk=\n";
    assert_eq!(
        from_str::<Value>(text).unwrap(),
        serde_yaml_ng::from_str::<Value>(text).unwrap()
    );
    let text = "a: &x {k: v}\nb:\n  <<: *x\n  k: w\n";
    assert_eq!(
        from_str::<serde_json::Value>(text).unwrap(),
        serde_yaml_ng::from_str::<serde_json::Value>(text).unwrap()
    );
}

#[test]
fn empty_texts_read_as_serde_yaml_ng_reads_them() {
    for text in ["", "\n", "# only a comment\n", "---\n", "---\n...\n", "~"] {
        assert_eq!(
            from_str::<Value>(text).ok(),
            serde_yaml_ng::from_str::<Value>(text).ok(),
            "{text:?}"
        );
        assert_eq!(
            documents(text).count(),
            serde_yaml_ng::Deserializer::from_str(text).count(),
            "{text:?}"
        );
    }
}

/// A syntax error that the bounds check does not see (an empty key, which libyaml
/// refuses) used to make the documents endless: serde_yaml_ng repeats its error for
/// ever, and each repetition was handed out as one more document. Found by the `yaml`
/// fuzz target, which reads on past errors.
#[test]
fn the_documents_end_after_an_error_the_check_did_not_see() {
    let text = "tests:\nexpectedHealth:\n: 65535 a]]=]]titest255s:\n";
    assert!(
        check(text).is_ok(),
        "the check no longer passes it: pick another"
    );
    assert!(serde_yaml_ng::from_str::<Value>(text).is_err());
    let read: Vec<bool> = documents(text)
        .take(10)
        .map(|d| d.and_then(|d| Ok(Value::deserialize(d)?)).is_ok())
        .collect();
    assert!(
        read.len() <= 2,
        "{} documents (or more) from one: {read:?}",
        read.len()
    );
    assert!(read.iter().all(|ok| !ok), "{read:?}");
    for text in ["", "\n", "---\n", "a: 1\n---\nb: [\n"] {
        assert!(documents(text).take(10).count() <= 2, "{text:?}");
    }
}

/// What each document of a text reads as, up to the first error.
type Read = Vec<Result<Value, String>>;

/// Every document of `text`, read through [`documents`] and through serde_yaml_ng alone.
fn both(text: &str) -> (Read, Read) {
    // As the callers do: after an error, serde_yaml_ng repeats it for ever.
    let mut ours = Vec::new();
    for document in documents(text) {
        let result = document
            .and_then(|d| Ok(Value::deserialize(d)?))
            .map_err(|e| e.to_string());
        let failed = result.is_err();
        ours.push(result);
        if failed {
            break;
        }
    }
    let mut theirs = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let result = Value::deserialize(document).map_err(|e| e.to_string());
        let failed = result.is_err();
        theirs.push(result);
        if failed {
            break;
        }
    }
    (ours, theirs)
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9 ._/-]{0,12}",
        Just("yes".to_owned()),
        Just("on".to_owned()),
        Just("True".to_owned()),
        Just("~".to_owned()),
        Just("0x1F".to_owned()),
        Just("1_000".to_owned()),
        Just("0755".to_owned()),
        Just("-.inf".to_owned()),
        Just("1e3".to_owned()),
        Just("'quoted: text'".to_owned()),
        Just("\"esc\\tape \\u00e9\"".to_owned()),
        Just("!!str 12".to_owned()),
        Just("!custom value".to_owned()),
        Just("<<".to_owned()),
        Just("".to_owned()),
        "-?[0-9]{1,8}(\\.[0-9]{1,3})?",
    ]
}

/// A YAML node in block or flow style, without anchors or aliases.
fn node() -> impl Strategy<Value = Node> {
    let leaf = scalar().prop_map(Node::Scalar);
    leaf.prop_recursive(5, 40, 5, |inner| {
        prop_oneof![
            (prop::collection::vec(inner.clone(), 0..5), any::<bool>())
                .prop_map(|(items, flow)| Node::Sequence(items, flow)),
            (
                prop::collection::vec(("[a-z<][a-z<]{0,6}", inner), 0..5),
                any::<bool>()
            )
                .prop_map(|(entries, flow)| Node::Mapping(entries, flow)),
            "[a-z ]{0,20}".prop_map(|text| Node::Literal(text, true)),
            "[a-z ]{0,20}".prop_map(|text| Node::Literal(text, false)),
        ]
    })
}

#[derive(Clone, Debug)]
enum Node {
    Scalar(String),
    Literal(String, bool),
    Sequence(Vec<Node>, bool),
    Mapping(Vec<(String, Node)>, bool),
}

impl Node {
    fn flow(&self) -> String {
        match self {
            Node::Scalar(s) => s.clone(),
            Node::Literal(text, _) => format!("{text:?}"),
            Node::Sequence(items, _) => format!(
                "[{}]",
                items.iter().map(Node::flow).collect::<Vec<_>>().join(", ")
            ),
            Node::Mapping(entries, _) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", v.flow()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The node as the value after `key:` or `-`, at `indent`.
    fn block(&self, indent: usize) -> String {
        let pad = " ".repeat(indent);
        match self {
            Node::Sequence(items, false) if !items.is_empty() => {
                let mut out = String::from("\n");
                for item in items {
                    out += &format!("{pad}-{}\n", item.block(indent + 2));
                }
                out.pop();
                out
            }
            Node::Mapping(entries, false) if !entries.is_empty() => {
                let mut out = String::from("\n");
                for (key, value) in entries {
                    out += &format!("{pad}{key}:{}\n", value.block(indent + 2));
                }
                out.pop();
                out
            }
            Node::Literal(text, literal) => {
                format!(" {}\n{pad}{text}", if *literal { "|" } else { ">-" })
            }
            other => format!(" {}", other.flow()),
        }
    }

    fn document(&self) -> String {
        let text = self.block(0);
        text.strip_prefix('\n').unwrap_or(&text).to_owned()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A text without aliases within the bounds reads exactly as serde_yaml_ng reads it,
    /// document by document, errors included.
    #[test]
    fn texts_without_aliases_read_as_serde_yaml_ng_reads_them(
        nodes in prop::collection::vec(node(), 1..4),
        comment in any::<bool>(),
    ) {
        let mut text = nodes.iter().map(Node::document).collect::<Vec<_>>().join("\n---\n");
        if comment {
            text = format!("# a comment\n{text}\n# the end\n");
        }
        let (ours, theirs) = both(&text);
        // Invalid text is invalid in both; the message may differ where serde_yaml_ng
        // would have found another problem first in a document that is not YAML (the
        // bounds check reads such a document no further than its syntax error).
        let outcome = |results: &[Result<Value, String>]| -> Vec<Option<Value>> {
            results.iter().map(|r| r.as_ref().ok().cloned()).collect()
        };
        prop_assert_eq!(outcome(&ours), outcome(&theirs), "{}", text);
    }

    /// Values written out by serde_yaml_ng, or as JSON, read back the same.
    #[test]
    fn written_values_read_back_the_same(node in node()) {
        let Ok(value) = serde_yaml_ng::from_str::<Value>(&node.flow()) else {
            return Ok(());
        };
        let yaml = serde_yaml_ng::to_string(&value).unwrap();
        prop_assert_eq!(from_str::<Value>(&yaml).unwrap(), value.clone());
        if let Ok(json) = serde_json::to_string(&value) {
            prop_assert_eq!(
                from_str::<Value>(&json).map_err(|e| e.to_string()),
                serde_yaml_ng::from_str::<Value>(&json).map_err(|e| e.to_string())
            );
        }
    }
}

/// The YAML files under `dir`, at any depth, but not in build output or git.
fn yaml_files(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if !matches!(name.to_str(), Some("target" | ".git" | "node_modules")) {
                yaml_files(&path, found);
            }
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            found.push(path);
        }
    }
}

#[test]
fn every_yaml_file_of_the_repository_reads_as_before() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    yaml_files(&root, &mut files);
    assert!(files.len() > 100, "{} YAML files found", files.len());
    // And Argo CD's own health-check corpus, where a copy is given (as for the
    // health_cli test that runs its suites).
    if let Some(corpus) = std::env::var_os("NBV_ARGOCD_CUSTOMIZATIONS") {
        yaml_files(std::path::Path::new(&corpus), &mut files);
    }
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let (ours, theirs) = both(&text);
        assert_eq!(ours, theirs, "{}", file.display());
    }
}

/// The Rust sources under `dir`, at any depth.
fn rust_files(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// serde_yaml_ng's and serde_saphyr's readers, which expand aliases without bound.
const UNBOUNDED_READERS: [&str; 6] = [
    "serde_yaml_ng::from_str",
    "serde_yaml_ng::from_slice",
    "serde_yaml_ng::from_reader",
    "serde_yaml_ng::Deserializer::from_",
    "serde_saphyr::from_",
    "serde_saphyr::read",
];

#[test]
fn every_yaml_reader_of_the_workspace_goes_through_this_module() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let this_module = root.join("nbv-core/src/yaml");
    let triggers = root.join("nbv-core/src/triggers/yaml.rs");
    // Products only: tests compare against serde_yaml_ng on purpose, and benchmarks
    // measure the parsers themselves. The trigger annotation has its own stricter
    // reader (no aliases at all), built on serde_saphyr with a budget.
    let mut files = Vec::new();
    for krate in [
        "nbv-core",
        "nbv-kube",
        "nbv-lua",
        "nbv-operator",
        "nbv-testkit",
    ] {
        rust_files(&root.join(krate).join("src"), &mut files);
    }
    assert!(files.len() > 50, "{} sources found", files.len());
    let mut offenders = Vec::new();
    for file in files
        .iter()
        .filter(|f| !f.starts_with(&this_module) && **f != triggers)
    {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if UNBOUNDED_READERS.iter().any(|reader| code.contains(reader)) {
                offenders.push(format!("{}:{}: {code}", file.display(), number + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "read YAML with nbv_core::yaml::from_str or nbv_core::yaml::documents:\n{}",
        offenders.join("\n")
    );
}
