//! `triggers` under libFuzzer; the target and its invariants are
//! `nbv_fuzz::targets::triggers` (nbv-fuzz/src/targets/triggers.rs).

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use nbv_fuzz::Outcome;

fuzz_target!(|data: &[u8]| -> Corpus {
    match nbv_fuzz::targets::triggers::run(data) {
        Outcome::Skipped => Corpus::Reject,
        Outcome::Read | Outcome::Refused => Corpus::Keep,
    }
});
