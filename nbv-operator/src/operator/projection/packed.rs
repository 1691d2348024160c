//! An object's JSON text deflated against a dictionary of what such objects share:
//! how the caches keep what they read only now and then.

use std::borrow::Cow;

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use serde::Serialize;

/// Raw deflate (no zlib header or checksum: the text never leaves the process) with
/// the largest window, so that the whole dictionary can be referred to.
const WINDOW_BITS: u8 = 15;

/// An object's text as a cache holds it.
#[derive(Clone)]
pub(super) enum Packed {
    /// Deflated against the dictionary it was packed with; `len` is the length of the
    /// text.
    Deflated { bytes: Box<[u8]>, len: u32 },
    /// The text itself, where deflating failed (it does not, but an object is never
    /// lost for it).
    Plain(Box<[u8]>),
}

thread_local! {
    /// Where an object is written out and deflated before the result is copied out at
    /// its exact size. Kept for the object's life, an allocation carved from a larger
    /// one (a text buffer, a deflate buffer shrunk in place) would leave freed memory
    /// around it, in pages the allocator then cannot give back: the buffers are reused
    /// instead, and what the cache keeps is allocated apart.
    static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<u8>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };

    /// The compressor, reset for each object. A new one allocates some 300 KiB of
    /// state: allocated and freed for each object, with what the cache keeps allocated
    /// in between, it left most of its pages resident until the next trim (300 MiB at
    /// the peak of a listing of 1,000 Pods).
    static COMPRESSOR: std::cell::RefCell<Option<Compress>> = const { std::cell::RefCell::new(None) };
}

impl Packed {
    /// `object` written out as JSON and deflated against `dictionary` (the same
    /// dictionary must read it back: [`Packed::text`]).
    pub(super) fn of(object: &impl Serialize, dictionary: &'static [u8]) -> Packed {
        SCRATCH.with_borrow_mut(|(text, deflated)| {
            text.clear();
            // Serializing a decoded object cannot fail (no map has non-string keys);
            // were it to, the object would be kept with an empty text, which reads back
            // as not readable rather than as some other object.
            if serde_json::to_writer(&mut *text, object).is_err() {
                text.clear();
            }
            match deflate(text, deflated, dictionary) {
                Some(len) => Packed::Deflated {
                    bytes: Box::from(deflated.as_slice()),
                    len,
                },
                None => Packed::Plain(Box::from(text.as_slice())),
            }
        })
    }

    /// The bytes kept.
    pub(super) fn size(&self) -> usize {
        match self {
            Packed::Deflated { bytes, .. } | Packed::Plain(bytes) => bytes.len(),
        }
    }

    /// The text, inflated with the `dictionary` it was packed with.
    pub(super) fn text(&self, dictionary: &[u8]) -> Result<Cow<'_, [u8]>, &'static str> {
        match self {
            Packed::Plain(text) => Ok(Cow::Borrowed(text)),
            Packed::Deflated { bytes, len } => {
                inflate(bytes, *len as usize, dictionary).map(Cow::Owned)
            }
        }
    }
}

/// Deflates `text` into `out`; the length of the text, or `None` if it failed.
fn deflate(text: &[u8], out: &mut Vec<u8>, dictionary: &[u8]) -> Option<u32> {
    let len = u32::try_from(text.len()).ok()?;
    COMPRESSOR.with_borrow_mut(|kept| {
        let compress = kept.get_or_insert_with(|| {
            Compress::new_with_window_bits(Compression::default(), false, WINDOW_BITS)
        });
        compress.reset();
        compress.set_dictionary(dictionary).ok()?;
        out.clear();
        // Deflate never grows a text by more than a few bytes per 16 KiB block.
        out.reserve(text.len() + text.len() / 1024 + 64);
        match compress.compress_vec(text, out, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => Some(len),
            _ => None,
        }
    })
}

fn inflate(bytes: &[u8], len: usize, dictionary: &[u8]) -> Result<Vec<u8>, &'static str> {
    let mut decompress = Decompress::new_with_window_bits(false, WINDOW_BITS);
    decompress
        .set_dictionary(dictionary)
        .map_err(|_| "the dictionary was refused")?;
    let mut text = Vec::with_capacity(len);
    match decompress.decompress_vec(bytes, &mut text, FlushDecompress::Finish) {
        Ok(Status::StreamEnd) if text.len() == len => Ok(text),
        Ok(_) => Err("the packed text ends early or is longer than recorded"),
        Err(_) => Err("the packed text is not valid deflate data"),
    }
}
