//! `nbv crd`: the CustomResourceDefinition, as YAML.

use std::io::Write;

/// The CRD as the YAML document `nbv crd` prints.
pub fn render() -> String {
    let crd = nbv_core::api::crd();
    // Serializing a generated, plain-data CRD cannot fail.
    serde_yaml_ng::to_string(&crd).unwrap_or_default()
}

/// Prints the CRD.
pub fn run(out: &mut impl Write) -> u8 {
    match out.write_all(render().as_bytes()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}
