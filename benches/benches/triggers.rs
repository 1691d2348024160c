//! Parsing `mlops.dev/on-success-trigger` against `serde_json::from_str` of the same
//! entries (no YAML, no validation): a typical two-entry value, ten entries, the
//! largest value that is parsed at all (64 KiB), and an alias bomb. Beside them, the
//! YAML parser nbv uses (`serde-saphyr`) reading the same YAML into the same plain
//! struct: what YAML costs before any of nbv's work.

use divan::{Bencher, black_box};
use nbv_benches::annotation::{
    Entry, JOB_NAMESPACE, alias_bomb, largest, many, to_json, to_yaml, typical,
};
use nbv_core::triggers::parse_triggers;

fn main() {
    nbv_benches::divan().main();
}

/// Two entries: restart an InferenceService, sync an Application.
mod typical_2_entries {
    use super::*;

    #[divan::bench]
    fn parse_triggers_yaml(bencher: Bencher) {
        let value = to_yaml(&typical());
        bencher.bench_local(|| parse_triggers(black_box(&value), JOB_NAMESPACE));
    }

    /// Baseline.
    #[divan::bench]
    fn serde_json_from_str(bencher: Bencher) {
        let value = to_json(&typical());
        bencher.bench_local(|| serde_json::from_str::<Vec<Entry>>(black_box(&value)));
    }

    /// The YAML parser alone: the same YAML into the same plain struct.
    #[divan::bench]
    fn serde_saphyr_from_str(bencher: Bencher) {
        let value = to_yaml(&typical());
        bencher.bench_local(|| serde_saphyr::from_str::<Vec<Entry>>(black_box(&value)));
    }
}

/// Ten entries: the annotation of the `plan` benchmark's job with 10 triggers.
mod ten_entries {
    use super::*;

    #[divan::bench]
    fn parse_triggers_yaml(bencher: Bencher) {
        let value = to_yaml(&many(10));
        bencher.bench_local(|| parse_triggers(black_box(&value), JOB_NAMESPACE));
    }

    /// Baseline.
    #[divan::bench]
    fn serde_json_from_str(bencher: Bencher) {
        let value = to_json(&many(10));
        bencher.bench_local(|| serde_json::from_str::<Vec<Entry>>(black_box(&value)));
    }

    /// The YAML parser alone: the same YAML into the same plain struct.
    #[divan::bench]
    fn serde_saphyr_from_str(bencher: Bencher) {
        let value = to_yaml(&many(10));
        bencher.bench_local(|| serde_saphyr::from_str::<Vec<Entry>>(black_box(&value)));
    }
}

/// As many entries as fit in 64 KiB of YAML.
mod largest_64_kib {
    use super::*;

    #[divan::bench]
    fn parse_triggers_yaml(bencher: Bencher) {
        let value = to_yaml(&largest());
        bencher.bench_local(|| parse_triggers(black_box(&value), JOB_NAMESPACE));
    }

    /// Baseline.
    #[divan::bench]
    fn serde_json_from_str(bencher: Bencher) {
        let value = to_json(&largest());
        bencher.bench_local(|| serde_json::from_str::<Vec<Entry>>(black_box(&value)));
    }

    /// The YAML parser alone: the same YAML into the same plain struct.
    #[divan::bench]
    fn serde_saphyr_from_str(bencher: Bencher) {
        let value = to_yaml(&largest());
        bencher.bench_local(|| serde_saphyr::from_str::<Vec<Entry>>(black_box(&value)));
    }
}

/// Nine levels of nine aliases (9^9 scalars once expanded), under 512 bytes.
mod alias_bomb_9_levels {
    use super::*;

    #[divan::bench]
    fn parse_triggers_yaml(bencher: Bencher) {
        let value = alias_bomb(9);
        bencher.bench_local(|| parse_triggers(black_box(&value), JOB_NAMESPACE));
    }

    /// For comparison: a general-purpose YAML parser, which expands aliases until its
    /// own limit stops it.
    #[divan::bench]
    fn serde_yaml_ng_from_str(bencher: Bencher) {
        let value = alias_bomb(9);
        bencher.bench_local(|| serde_yaml_ng::from_str::<serde_yaml_ng::Value>(black_box(&value)));
    }
}
