//! Numbers become text in the embedded VM as they do in gopher-lua.
//!
//! C Lua 5.1 converts a number with `sprintf("%.14g")` wherever it needs text
//! (`tostring`, `..`, `print`, `table.concat`, `io.write`), a conversion no metamethod
//! can intercept. nbv's Lua (`nbv-lua/lua`) routes that conversion through a hook,
//! `nbv_setnumber2str`; this module sets it, once per process, to
//! [`NumberFormat::GopherLua`], the rule of gopher-lua's `LNumber.String()`.
#![allow(unsafe_code)]

use std::ffi::c_char;
use std::sync::Once;

use nbv_core::health::NumberFormat;

/// The hook's signature: write the text of `n`, NUL-terminated, into `s`, at most
/// `size` bytes in all.
type Number2Str = unsafe extern "C" fn(s: *mut c_char, size: usize, n: f64);

unsafe extern "C" {
    /// `lua.h` of nbv's Lua: the conversion every Lua state of the process uses.
    fn nbv_setnumber2str(f: Option<Number2Str>);
}

/// Makes every VM of the process print numbers as gopher-lua does. Idempotent.
pub(super) fn use_gopher_lua_format() {
    static INSTALLED: Once = Once::new();
    // SAFETY: `gopher_lua` has the signature the C side declares, and the hook is
    // set before this process creates its first Lua state (every VM is built after
    // this call), so no state reads the pointer while it is written.
    INSTALLED.call_once(|| unsafe { nbv_setnumber2str(Some(gopher_lua)) });
}

/// The hook: [`NumberFormat::GopherLua`] of `n`, truncated to `size - 1` bytes (the
/// longest text it produces, `-2.2250738585072014e-308`, has 24; Lua's buffer 32).
unsafe extern "C" fn gopher_lua(s: *mut c_char, size: usize, n: f64) {
    if s.is_null() || size == 0 {
        return;
    }
    let text = NumberFormat::GopherLua.format(n);
    let len = text.len().min(size - 1);
    // SAFETY: Lua passes a buffer of `size` writable bytes (`LUAI_MAXNUMBER2STR`);
    // `len + 1 <= size` bytes are written, and the text is ASCII, so no character
    // is cut.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), s.cast::<u8>(), len);
        *s.add(len) = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_writes_nul_terminated_text_within_the_buffer() {
        let mut buffer = [0x7f_u8; 32];
        // SAFETY: a 32-byte buffer, as Lua passes.
        unsafe { gopher_lua(buffer.as_mut_ptr().cast(), buffer.len(), 1_234_567.5) };
        let end = buffer.iter().position(|&b| b == 0).unwrap();
        assert_eq!(&buffer[..end], b"1.2345675e+06");

        let mut small = [0x7f_u8; 4];
        // SAFETY: a 4-byte buffer announced as such.
        unsafe { gopher_lua(small.as_mut_ptr().cast(), small.len(), -0.125) };
        assert_eq!(&small, b"-0.\0");
    }
}
