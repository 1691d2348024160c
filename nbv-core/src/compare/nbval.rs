//! nbval's cell markers: what a notebook's author says of a code cell's outputs, in
//! the comments and tags authors already write for nbval (the pytest plugin that
//! re-runs notebooks against their stored outputs), read as nbval 0.11 reads them.
//!
//! - a comment line `# NBVAL_IGNORE_OUTPUT`, `# NBVAL_CHECK_OUTPUT`,
//!   `# NBVAL_RAISES_EXCEPTION` or `# NBVAL_SKIP` anywhere in the cell's source (the
//!   line, trimmed, is `#`s and the marker alone: `#NBVAL_SKIP` counts,
//!   `# NBVAL_SKIP: slow` does not); `# PYTEST_VALIDATE_IGNORE_OUTPUT`, nbval's old
//!   name, is `# NBVAL_IGNORE_OUTPUT`;
//! - a tag of the cell: the markers in lower case with dashes (`nbval-ignore-output`,
//!   `nbval-check-output`, `nbval-raises-exception`, `nbval-skip`), and papermill's
//!   `raises-exception`.
//!
//! A comment overrides a tag; of two comments (or two tags) that disagree on whether
//! outputs are checked, the last one counts.

use serde_json::Value;

/// The markers read from one notebook's code cell.
///
/// # Examples
///
/// ```
/// use nbv_core::compare::CellMarks;
/// use serde_json::json;
///
/// let cell = json!({"cell_type": "code", "metadata": {"tags": ["nbval-ignore-output"]},
///                   "source": ["# NBVAL_RAISES_EXCEPTION\n", "1 / 0\n"]});
/// let marks = CellMarks::of(&cell);
/// assert_eq!(marks.check_output, Some(false));
/// assert!(marks.raises_exception && !marks.skip);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellMarks {
    /// `NBVAL_SKIP`: the cell is not compared at all.
    pub skip: bool,
    /// `Some(false)` for `NBVAL_IGNORE_OUTPUT`, `Some(true)` for `NBVAL_CHECK_OUTPUT`,
    /// `None` when the cell says neither.
    pub check_output: Option<bool>,
    /// `NBVAL_RAISES_EXCEPTION` or papermill's `raises-exception`: the cell is expected
    /// to raise.
    pub raises_exception: bool,
}

/// One marker, whichever way it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marker {
    IgnoreOutput,
    CheckOutput,
    RaisesException,
    Skip,
}

/// A comment's text (after the `#`s, trimmed) → its marker.
fn comment_marker(text: &str) -> Option<Marker> {
    match text {
        "NBVAL_IGNORE_OUTPUT" | "PYTEST_VALIDATE_IGNORE_OUTPUT" => Some(Marker::IgnoreOutput),
        "NBVAL_CHECK_OUTPUT" => Some(Marker::CheckOutput),
        "NBVAL_RAISES_EXCEPTION" => Some(Marker::RaisesException),
        "NBVAL_SKIP" => Some(Marker::Skip),
        _ => None,
    }
}

/// A tag → its marker.
fn tag_marker(tag: &str) -> Option<Marker> {
    match tag {
        "nbval-ignore-output" | "pytest-validate-ignore-output" => Some(Marker::IgnoreOutput),
        "nbval-check-output" => Some(Marker::CheckOutput),
        "nbval-raises-exception" | "raises-exception" => Some(Marker::RaisesException),
        "nbval-skip" => Some(Marker::Skip),
        _ => None,
    }
}

/// Python's `str.splitlines` boundaries: a source saved with `\r` or a form feed
/// splits where nbval splits it.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{0b}'
            | '\u{0c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// The markers of the comment lines of `source`, in order.
fn comment_markers(source: &str) -> impl Iterator<Item = Marker> + '_ {
    source.split(is_line_break).filter_map(|line| {
        let comment = line.trim().strip_prefix('#')?;
        comment_marker(comment.trim_start_matches('#').trim())
    })
}

/// nbformat's multiline string: a string or a list of strings.
fn source_of(cell: &Value) -> String {
    match cell.get("source") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

impl CellMarks {
    /// The markers of `cell` (an nbformat 4 cell): its source's comment lines and its
    /// tags. A cell without either has none; tags that are not a list of strings are
    /// not read.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::compare::CellMarks;
    /// use serde_json::json;
    ///
    /// // The comment overrides the tag.
    /// let cell = json!({"metadata": {"tags": ["nbval-ignore-output"]},
    ///                   "source": "import time\n#NBVAL_CHECK_OUTPUT\nprint(1)"});
    /// assert_eq!(CellMarks::of(&cell).check_output, Some(true));
    /// // Only the marker alone on its line counts.
    /// let cell = json!({"source": "# NBVAL_SKIP because it is slow\nprint(1)"});
    /// assert_eq!(CellMarks::of(&cell), CellMarks::default());
    /// ```
    pub fn of(cell: &Value) -> CellMarks {
        let tags = cell
            .pointer("/metadata/tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(tag_marker);
        let from_tags = CellMarks::from_markers(tags);
        let from_comments = CellMarks::from_markers(comment_markers(&source_of(cell)));
        CellMarks {
            skip: from_comments.skip || from_tags.skip,
            check_output: from_comments.check_output.or(from_tags.check_output),
            raises_exception: from_comments.raises_exception || from_tags.raises_exception,
        }
    }

    fn from_markers(markers: impl Iterator<Item = Marker>) -> CellMarks {
        markers.fold(CellMarks::default(), |marks, marker| match marker {
            Marker::IgnoreOutput => CellMarks {
                check_output: Some(false),
                ..marks
            },
            Marker::CheckOutput => CellMarks {
                check_output: Some(true),
                ..marks
            },
            Marker::RaisesException => CellMarks {
                raises_exception: true,
                ..marks
            },
            Marker::Skip => CellMarks {
                skip: true,
                ..marks
            },
        })
    }

    /// The markers of a cell as two notebooks mark it: a cell is marked when either
    /// marks it (outputs are ignored when either ignores them).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::compare::CellMarks;
    ///
    /// let run = CellMarks { check_output: Some(true), ..CellMarks::default() };
    /// let golden = CellMarks { check_output: Some(false), ..CellMarks::default() };
    /// assert_eq!(run.or(golden).check_output, Some(false));
    /// ```
    pub fn or(self, other: CellMarks) -> CellMarks {
        let check_output = match (self.check_output, other.check_output) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), _) | (_, Some(true)) => Some(true),
            (None, None) => None,
        };
        CellMarks {
            skip: self.skip || other.skip,
            check_output,
            raises_exception: self.raises_exception || other.raises_exception,
        }
    }
}

/// What a golden cell expects of the run's cell at its position.
///
/// # Examples
///
/// ```
/// use nbv_core::compare::{CellMarks, Expectation};
///
/// let unmarked = CellMarks::default();
/// assert_eq!(Expectation::of(unmarked, true), Expectation::Outputs { raises_exception: false });
/// // A golden cell never executed expects nothing, as in nbval.
/// assert_eq!(Expectation::of(unmarked, false), Expectation::Anything);
/// let ignore = CellMarks { check_output: Some(false), ..CellMarks::default() };
/// assert_eq!(Expectation::of(ignore, true), Expectation::Ran);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// Nothing is compared: the cell is marked `NBVAL_SKIP`, or the golden cell was
    /// never executed (no execution count, no outputs).
    Anything,
    /// The outputs are not compared (`NBVAL_IGNORE_OUTPUT`); the execution count is,
    /// unless `ignoreExecutionCount`.
    Ran,
    /// The outputs are compared (the default; `NBVAL_CHECK_OUTPUT` says it again).
    /// `raises_exception`: the cell is marked to raise; its error output is compared
    /// like any other (`ename: evalue`), as nbval compares it.
    Outputs {
        /// Whether the cell is marked `NBVAL_RAISES_EXCEPTION` or `raises-exception`.
        raises_exception: bool,
    },
}

impl Expectation {
    /// The expectation of a cell with `marks` (of both notebooks, [`CellMarks::or`])
    /// whose golden cell was `executed` (has an execution count or an output).
    ///
    /// See the [type's examples](Expectation).
    pub fn of(marks: CellMarks, executed: bool) -> Expectation {
        if marks.skip || !executed {
            Expectation::Anything
        } else if marks.check_output == Some(false) {
            Expectation::Ran
        } else {
            Expectation::Outputs {
                raises_exception: marks.raises_exception,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn marks(source: &str, tags: &[&str]) -> CellMarks {
        CellMarks::of(&json!({"cell_type": "code", "metadata": {"tags": tags}, "source": source}))
    }

    const IGNORE: CellMarks = CellMarks {
        skip: false,
        check_output: Some(false),
        raises_exception: false,
    };

    #[test]
    fn a_marker_counts_on_any_comment_line_written_as_nbval_reads_it() {
        for source in [
            "# NBVAL_IGNORE_OUTPUT",
            "#NBVAL_IGNORE_OUTPUT\nx",
            "x = 1\n   ## NBVAL_IGNORE_OUTPUT  \ny",
            "x = 1\r# NBVAL_IGNORE_OUTPUT\ry",
            "x = 1\r\n# PYTEST_VALIDATE_IGNORE_OUTPUT\r\n",
            "x\u{0c}# NBVAL_IGNORE_OUTPUT",
        ] {
            assert_eq!(marks(source, &[]), IGNORE, "{source:?}");
        }
    }

    #[test]
    fn text_around_a_marker_or_a_marker_in_code_is_no_marker() {
        for source in [
            "# NBVAL_IGNORE_OUTPUT please",
            "x = 1  # NBVAL_IGNORE_OUTPUT",
            "print('# NBVAL_SKIP')",
            "# nbval_skip",
            "# NBVAL-SKIP",
            "\"\"\"\nNBVAL_SKIP\n\"\"\"",
        ] {
            assert_eq!(marks(source, &[]), CellMarks::default(), "{source:?}");
        }
    }

    #[test]
    fn each_marker_as_a_comment_and_as_a_tag() {
        let cases = [
            ("NBVAL_IGNORE_OUTPUT", "nbval-ignore-output", IGNORE),
            (
                "NBVAL_CHECK_OUTPUT",
                "nbval-check-output",
                CellMarks {
                    check_output: Some(true),
                    ..CellMarks::default()
                },
            ),
            (
                "NBVAL_RAISES_EXCEPTION",
                "nbval-raises-exception",
                CellMarks {
                    raises_exception: true,
                    ..CellMarks::default()
                },
            ),
            (
                "NBVAL_SKIP",
                "nbval-skip",
                CellMarks {
                    skip: true,
                    ..CellMarks::default()
                },
            ),
        ];
        for (comment, tag, expected) in cases {
            assert_eq!(marks(&format!("# {comment}\nx"), &[]), expected);
            assert_eq!(marks("x", &[tag]), expected);
        }
        assert!(marks("x", &["raises-exception"]).raises_exception);
        // Tags are not comments, and not case-folded.
        assert_eq!(
            marks("x", &["NBVAL_SKIP", "Nbval-skip"]),
            CellMarks::default()
        );
    }

    #[test]
    fn comments_override_tags_and_the_last_of_each_counts() {
        assert_eq!(
            marks("# NBVAL_CHECK_OUTPUT", &["nbval-ignore-output"]).check_output,
            Some(true)
        );
        assert_eq!(
            marks("# NBVAL_IGNORE_OUTPUT", &["nbval-check-output"]).check_output,
            Some(false)
        );
        assert_eq!(
            marks("# NBVAL_IGNORE_OUTPUT\n# NBVAL_CHECK_OUTPUT", &[]).check_output,
            Some(true)
        );
        assert_eq!(
            marks("", &["nbval-check-output", "nbval-ignore-output"]).check_output,
            Some(false)
        );
        // Markers of other kinds add up.
        assert_eq!(
            marks(
                "# NBVAL_IGNORE_OUTPUT\n# NBVAL_RAISES_EXCEPTION",
                &["nbval-skip"]
            ),
            CellMarks {
                skip: true,
                check_output: Some(false),
                raises_exception: true
            }
        );
    }

    #[test]
    fn a_cell_without_source_or_with_odd_tags_has_no_marks() {
        for cell in [
            json!({"cell_type": "code"}),
            json!({"source": 3, "metadata": {"tags": "nbval-skip"}}),
            json!({"source": ["# NBVAL", " _SKIP"], "metadata": {"tags": [1, null]}}),
        ] {
            assert_eq!(CellMarks::of(&cell), CellMarks::default(), "{cell}");
        }
        // A list source is joined before it is split into lines.
        assert!(CellMarks::of(&json!({"source": ["# NBVAL", "_SKIP\n", "x"]})).skip);
    }

    #[test]
    fn skip_wins_then_ignore_then_outputs() {
        let all = CellMarks {
            skip: true,
            check_output: Some(false),
            raises_exception: true,
        };
        assert_eq!(Expectation::of(all, true), Expectation::Anything);
        assert_eq!(
            Expectation::of(CellMarks { skip: false, ..all }, true),
            Expectation::Ran
        );
        assert_eq!(
            Expectation::of(
                CellMarks {
                    skip: false,
                    check_output: Some(true),
                    ..all
                },
                true
            ),
            Expectation::Outputs {
                raises_exception: true
            }
        );
    }
}
