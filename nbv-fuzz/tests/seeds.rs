//! Every target over its seed inputs, under the runner's limits: quick, and part of
//! the workspace's tests, so that a change that breaks a target's invariant on a
//! known input fails `cargo test`.

use nbv_fuzz::runner::{self, CountingAllocator, Limits};
use nbv_fuzz::{Outcome, TARGETS};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn every_target_holds_on_its_seeds() {
    assert!(
        runner::allocator_installed(),
        "no memory limit without the allocator"
    );
    let artifacts = std::env::temp_dir().join("nbv-fuzz-seeds");
    let mut failures = Vec::new();
    for target in TARGETS {
        let seeds = runner::seeds(target);
        assert!(
            seeds.len() >= 3,
            "target {} has {} seeds in nbv-fuzz/seeds/{}/; give it some",
            target.name,
            seeds.len(),
            target.name
        );
        let mut read = 0;
        for input in &seeds {
            match runner::run_one(target, input, &Limits::default(), &artifacts) {
                Ok(Outcome::Read) => read += 1,
                Ok(_) => {}
                Err(finding) => failures.push(finding.to_string()),
            }
        }
        // Seeds that all fail to parse would test only the refusals.
        assert!(read > 0, "no seed of {} is read", target.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_broken_invariant_is_a_finding_saved_for_replay() {
    let target = nbv_fuzz::Target {
        name: "always_fails",
        run: |data| panic!("invariant broken on {} bytes", data.len()),
        dictionary: &[],
        max_len: 8,
    };
    let artifacts = std::env::temp_dir().join(format!("nbv-fuzz-test-{}", std::process::id()));
    let finding = runner::run_one(&target, b"abc", &Limits::default(), &artifacts)
        .expect_err("a panic is a finding");
    assert!(
        finding.to_string().contains("invariant broken on 3 bytes"),
        "{finding}"
    );
    let saved = finding.saved.expect("saved");
    assert_eq!(std::fs::read(&saved).unwrap(), b"abc");
    assert!(saved.starts_with(artifacts.join("always_fails")));
    let _ = std::fs::remove_dir_all(&artifacts);
}
