//! `health_native` under libFuzzer; the target and its invariants are
//! `nbv_fuzz::targets::health_native` (nbv-fuzz/src/targets/health_native.rs).

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use nbv_fuzz::Outcome;

fuzz_target!(|data: &[u8]| -> Corpus {
    match nbv_fuzz::targets::health_native::run(data) {
        Outcome::Skipped => Corpus::Reject,
        Outcome::Read | Outcome::Refused => Corpus::Keep,
    }
});
