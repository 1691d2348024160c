//! What the `normalized` strategy puts in place of what it masks. Custom timestamp
//! patterns are checked against these too, so they sit below both.

/// What a masked timestamp becomes. It holds no digit, so no built-in pattern matches
/// it, and a custom pattern that matches it is refused: masking twice changes nothing.
pub const MARKER: &str = "<timestamp>";
/// What a masked object address becomes.
pub const ADDRESS_MARKER: &str = "0x<address>";
