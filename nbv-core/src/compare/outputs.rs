//! What of a notebook is compared: its code cells and, of each, the outputs as a list
//! of items (one per stream run, per MIME type of a rich output, per error).

use serde_json::Value;

use super::{CellMarks, Settings};

/// papermill marks the cells it inserts into a failed notebook with this tag; they are
/// not the notebook's and do not count in cell indices.
const PAPERMILL_ERROR_TAG: &str = "papermill-error-cell-tag";

/// A code cell: its index in the notebook, its execution count, its output items, its
/// nbval markers and whether it was executed.
pub(super) struct CodeCell {
    pub index: u64,
    pub execution_count: Value,
    pub items: Vec<Item>,
    pub marks: CellMarks,
    /// It has an execution count or an output (before `ignoreOutputTypes` leaves any
    /// out): a golden cell that has neither was never run and expects nothing.
    pub executed: bool,
}

/// One compared piece of output.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Item {
    /// `stream:stdout`, `execute_result:text/plain`, `display_data:image/png`, `error`.
    pub label: String,
    /// The text (for binary MIME types, the base64 data).
    pub text: String,
    /// Whether `text` is binary data (compared byte for byte, whitespace aside).
    pub binary: bool,
}

/// The code cells of `notebook`, indexed as in the notebook (papermill's error cells
/// left out), with the outputs `settings` compare.
pub(super) fn code_cells(notebook: &Value, settings: &Settings) -> Vec<CodeCell> {
    let mut cells = Vec::new();
    let mut index = 0u64;
    for cell in notebook
        .get("cells")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let tags = cell.pointer("/metadata/tags").and_then(Value::as_array);
        if tags.is_some_and(|t| t.iter().any(|t| t.as_str() == Some(PAPERMILL_ERROR_TAG))) {
            continue;
        }
        let position = index;
        index += 1;
        if cell.get("cell_type").and_then(Value::as_str) != Some("code") {
            continue;
        }
        let outputs = cell
            .get("outputs")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let execution_count = cell.get("execution_count").cloned().unwrap_or(Value::Null);
        cells.push(CodeCell {
            index: position,
            executed: !execution_count.is_null() || !outputs.is_empty(),
            execution_count,
            items: items(outputs, settings),
            marks: CellMarks::of(cell),
        });
    }
    cells
}

/// Whether the ignore list `ignored` leaves out `kind` (an output type or a MIME type).
fn ignored(kind: &str, settings: &Settings) -> bool {
    settings.ignore_output_types.iter().any(|entry| {
        entry == kind
            || entry
                .strip_suffix("/*")
                .is_some_and(|top| kind.split_once('/').is_some_and(|(t, _)| t == top))
    })
}

/// Whether a MIME type's data is binary (base64) rather than text.
fn is_binary(mime: &str) -> bool {
    (mime.starts_with("image/") && mime != "image/svg+xml") || mime == "application/pdf"
}

/// nbformat's multiline strings: a string or a list of strings.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(parts) if parts.iter().all(Value::is_string) => {
            parts.iter().filter_map(Value::as_str).collect()
        }
        other => other.to_string(),
    }
}

fn items(outputs: &[Value], settings: &Settings) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    for output in outputs {
        let output_type = output
            .get("output_type")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        if ignored(output_type, settings) {
            continue;
        }
        match output_type {
            "stream" => {
                let name = output
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("stdout");
                let label = format!("stream:{name}");
                let text = output.get("text").map(text_of).unwrap_or_default();
                // A kernel may split one print over several messages: consecutive
                // stream outputs of one name are one text.
                match items.last_mut() {
                    Some(last) if last.label == label => last.text.push_str(&text),
                    _ => items.push(Item {
                        label,
                        text,
                        binary: false,
                    }),
                }
            }
            "error" => {
                let part = |key| output.get(key).map(text_of).unwrap_or_default();
                items.push(Item {
                    label: "error".to_owned(),
                    text: format!("{}: {}", part("ename"), part("evalue")),
                    binary: false,
                });
            }
            _ => {
                let Some(data) = output.get("data").and_then(Value::as_object) else {
                    continue;
                };
                let mut mimes: Vec<&String> = data.keys().collect();
                mimes.sort();
                for mime in mimes {
                    if ignored(mime, settings) {
                        continue;
                    }
                    items.push(Item {
                        label: format!("{output_type}:{mime}"),
                        text: text_of(&data[mime.as_str()]),
                        binary: is_binary(mime),
                    });
                }
            }
        }
    }
    items
}
