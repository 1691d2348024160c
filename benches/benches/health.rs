//! The Argo CD health of a job: the native mapping against the shipped Lua script run
//! in nbv's embedded Lua (a fresh, sandboxed VM per evaluation, as Argo CD's
//! controller does), on the same object.

use divan::{Bencher, black_box};
use nbv_benches::object::{failed, failed_at_last_cell};
use nbv_core::health::{Variant, assess, assess_advanced};
use nbv_lua::LuaHealthRunner;

fn main() {
    nbv_benches::divan().main();
}

/// The basic script on a failed job with a message and a retry count.
mod basic_failed {
    use super::*;

    #[divan::bench]
    fn native(bencher: Bencher) {
        let obj = failed();
        bencher.bench_local(|| assess(black_box(&obj)));
    }

    /// Baseline.
    #[divan::bench]
    fn lua(bencher: Bencher) {
        let (obj, runner) = (failed(), LuaHealthRunner::default());
        let script = Variant::Basic.health_script();
        bencher.bench_local(|| runner.evaluate(&script, black_box(&obj)));
    }
}

/// The advanced script on a failed job with 40 cell results, the last one failed.
mod advanced_40_cells {
    use super::*;

    #[divan::bench]
    fn native(bencher: Bencher) {
        let obj = failed_at_last_cell(40);
        bencher.bench_local(|| assess_advanced(black_box(&obj)));
    }

    /// Baseline.
    #[divan::bench]
    fn lua(bencher: Bencher) {
        let (obj, runner) = (failed_at_last_cell(40), LuaHealthRunner::default());
        let script = Variant::Advanced.health_script();
        bencher.bench_local(|| runner.evaluate(&script, black_box(&obj)));
    }
}
