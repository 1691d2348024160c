//! `inference_service` under libFuzzer; the target and its invariants are
//! `nbv_fuzz::targets::inference_service` (nbv-fuzz/src/targets/inference_service.rs).

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use nbv_fuzz::Outcome;

fuzz_target!(|data: &[u8]| -> Corpus {
    match nbv_fuzz::targets::inference_service::run(data) {
        Outcome::Skipped => Corpus::Reject,
        Outcome::Read | Outcome::Refused => Corpus::Keep,
    }
});
