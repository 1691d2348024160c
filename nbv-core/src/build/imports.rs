//! The packages a notebook imports, for a requirements file generated when the
//! repository has none (`fallbackStrategy: auto`).
//!
//! The code cells' `import x` and `from x import y` lines are read as text: a notebook
//! need not parse as Python (magics, shell escapes), and an import inside a function or
//! a `try` is one the notebook may run.

use std::collections::BTreeSet;

use serde_json::Value;

use super::stdlib::is_stdlib;

/// Modules whose package on PyPI has another name. Any other module is taken to be
/// its own package's name.
const PACKAGE_OF: &[(&str, &str)] = &[
    ("Crypto", "pycryptodome"),
    ("Levenshtein", "python-Levenshtein"),
    ("OpenSSL", "pyOpenSSL"),
    ("PIL", "pillow"),
    ("attr", "attrs"),
    ("bs4", "beautifulsoup4"),
    ("cv2", "opencv-python"),
    ("dateutil", "python-dateutil"),
    ("docx", "python-docx"),
    ("dotenv", "python-dotenv"),
    ("fitz", "PyMuPDF"),
    ("git", "GitPython"),
    ("jwt", "PyJWT"),
    ("magic", "python-magic"),
    ("pptx", "python-pptx"),
    ("serial", "pyserial"),
    ("skimage", "scikit-image"),
    ("sklearn", "scikit-learn"),
    ("yaml", "pyyaml"),
    ("zmq", "pyzmq"),
];

/// Why a notebook's imports could not be read.
#[derive(Debug)]
pub(super) struct NotNotebook(pub(super) String);

/// The third-party packages `notebook` (its JSON text) imports: sorted, without
/// duplicates, Python's standard library and the modules `is_local` says the repository
/// holds left out.
pub(super) fn imported_packages(
    notebook: &str,
    is_local: impl Fn(&str) -> bool,
) -> Result<Vec<String>, NotNotebook> {
    let json: Value =
        serde_json::from_str(notebook).map_err(|e| NotNotebook(format!("is not JSON ({e})")))?;
    let cells = json
        .get("cells")
        .and_then(Value::as_array)
        .ok_or_else(|| NotNotebook("has no cells (not an nbformat 4 notebook)".into()))?;
    let mut packages = BTreeSet::new();
    for cell in cells {
        if cell.get("cell_type").and_then(Value::as_str) != Some("code") {
            continue;
        }
        for module in source_text(cell.get("source"))
            .lines()
            .flat_map(imported_modules)
        {
            if !is_stdlib(module) && !is_local(module) {
                packages.insert(package_of(module).to_owned());
            }
        }
    }
    Ok(packages.into_iter().collect())
}

/// A cell's source: a string, or the list of lines nbformat also allows.
fn source_text(source: Option<&Value>) -> String {
    match source {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The top-level modules one line of code imports (`import a.b, c as d` → `a`, `c`;
/// `from a.b import c` → `a`); relative imports name the notebook's own modules.
fn imported_modules(line: &str) -> Vec<&str> {
    let code = line.split('#').next().unwrap_or_default();
    let mut modules = Vec::new();
    for statement in code.split(';').map(str::trim) {
        if let Some(rest) = statement.strip_prefix("import ") {
            modules.extend(rest.split(',').filter_map(top_level));
        } else if let Some(rest) = statement.strip_prefix("from ")
            && let Some((module, _)) = rest.split_once(" import")
        {
            modules.extend(top_level(module));
        }
    }
    modules
}

/// The first component of `a.b.c as d`, when it is an identifier.
fn top_level(name: &str) -> Option<&str> {
    let dotted = name.split_whitespace().next()?;
    let first = dotted.split('.').next()?;
    let mut chars = first.chars();
    let starts = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    (starts && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(first)
}

/// The package that installs `module`.
fn package_of(module: &str) -> &str {
    PACKAGE_OF
        .iter()
        .find(|(m, _)| *m == module)
        .map_or(module, |(_, package)| package)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn notebook(cells: &[&str]) -> String {
        let cells: Vec<Value> = cells
            .iter()
            .map(|s| json!({"cell_type": "code", "source": s}))
            .collect();
        json!({"cells": cells, "nbformat": 4}).to_string()
    }

    #[test]
    fn reads_both_import_forms_and_maps_known_names() {
        let nb = notebook(&[
            "import numpy as np, pandas\nfrom sklearn.model_selection import train_test_split",
            "import os, sys\nfrom PIL import Image  # pictures\n%matplotlib inline",
            "def f():\n    import yaml; import cv2.data\nfrom . import helpers\nfrom .x import y",
        ]);
        let packages = imported_packages(&nb, |_| false).unwrap();
        assert_eq!(
            packages,
            [
                "numpy",
                "opencv-python",
                "pandas",
                "pillow",
                "pyyaml",
                "scikit-learn"
            ]
        );
    }

    #[test]
    fn leaves_out_markdown_and_local_modules() {
        let nb = json!({"cells": [
            {"cell_type": "markdown", "source": "import torch"},
            {"cell_type": "code", "source": ["import helpers\n", "import requests\n"]},
        ]})
        .to_string();
        let packages = imported_packages(&nb, |m| m == "helpers").unwrap();
        assert_eq!(packages, ["requests"]);
    }

    #[test]
    fn a_file_that_is_not_a_notebook_is_an_error() {
        assert!(imported_packages("not json", |_| false).is_err());
        assert!(imported_packages("{\"worksheets\": []}", |_| false).is_err());
    }

    #[test]
    fn text_that_only_mentions_import_is_not_an_import() {
        assert!(imported_modules("print('import this')").is_empty());
        assert!(imported_modules("important = 1").is_empty());
        assert_eq!(imported_modules("from  os.path import join"), ["os"]);
    }
}
