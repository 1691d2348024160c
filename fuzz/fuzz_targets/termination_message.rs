//! `termination_message` under libFuzzer; the target and its invariants are
//! `nbv_fuzz::targets::termination_message` (nbv-fuzz/src/targets/termination_message.rs).

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use nbv_fuzz::Outcome;

fuzz_target!(|data: &[u8]| -> Corpus {
    match nbv_fuzz::targets::termination_message::run(data) {
        Outcome::Skipped => Corpus::Reject,
        Outcome::Read | Outcome::Refused => Corpus::Keep,
    }
});
