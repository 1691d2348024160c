//! YAML literal blocks that carry a script byte for byte into a manifest.

/// The `|` header of a YAML literal block that reproduces `text` exactly: the chomping
/// indicator keeps the trailing newlines as they are (`|` one, `|-` none, `|+` several)
/// and an explicit indentation indicator is needed when the first line starts with a
/// space, since YAML would otherwise take that space as indentation.
pub(super) fn literal_block_header(text: &str) -> String {
    let trailing = text.len() - text.trim_end_matches('\n').len();
    let chomping = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let indentation = if text.starts_with(' ') { "4" } else { "" };
    format!("|{indentation}{chomping}")
}

/// Appends `text` indented by `indent`, leaving empty lines empty (no trailing spaces).
pub(super) fn push_literal_block(out: &mut String, text: &str, indent: &str) {
    for line in text.split_terminator('\n') {
        if !line.is_empty() {
            out.push_str(indent);
            out.push_str(line);
        }
        out.push('\n');
    }
}
