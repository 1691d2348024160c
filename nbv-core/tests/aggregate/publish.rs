//! The publish policy, simulated on a virtual clock.

use super::*;

// ---------------------------------------------------------------------------------------
// Publish policy, simulated on a virtual clock
// ---------------------------------------------------------------------------------------

/// The result of driving [`decide_publish`] like a shell would.
struct Simulation {
    publishes: Vec<(DateTime<Utc>, u32)>,
    final_version: u32,
    last_change: Option<DateTime<Utc>>,
    end: DateTime<Utc>,
}

/// Changes arrive at `start + offsets[i]` ms; the shell calls the policy at start, on
/// every change and at every time the policy asked to be woken, publishing on `Now`.
fn simulate(mut offsets: Vec<i64>) -> Simulation {
    offsets.sort_unstable();
    let start = at(12, 0, 0);
    let changes: Vec<DateTime<Utc>> = offsets
        .iter()
        .map(|ms| start + TimeDelta::milliseconds(*ms))
        .collect();
    let end = changes.last().copied().unwrap_or(start) + TimeDelta::minutes(12);

    let mut publishes = Vec::new();
    let (mut version, mut last_publish, mut last_change, mut pending) = (0u32, None, None, false);
    let mut wake: Option<DateTime<Utc>> = Some(start);
    let mut next_change = 0;
    loop {
        let change_at = changes.get(next_change).copied();
        let now = match (change_at, wake) {
            (Some(c), Some(w)) => c.min(w),
            (Some(c), None) => c,
            (None, Some(w)) => w,
            (None, None) => break,
        };
        if now > end {
            break;
        }
        if change_at == Some(now) {
            next_change += 1;
            version += 1;
            last_change = Some(now);
            pending = true;
        }
        // A shell re-evaluates after each publish to learn when to wake next.
        loop {
            match decide_publish(last_publish, last_change, now, pending) {
                PublishDecision::Now => {
                    publishes.push((now, version));
                    last_publish = Some(now);
                    pending = false;
                }
                PublishDecision::At(t) | PublishDecision::Idle { resync_at: t } => {
                    assert!(t > now, "the policy asked to be woken in the past");
                    wake = Some(t);
                    break;
                }
            }
            assert!(publishes.len() < 100_000, "runaway publishing");
        }
    }
    Simulation {
        publishes,
        final_version: version,
        last_change,
        end,
    }
}

proptest! {
    #[test]
    fn publish_policy_limits_rate_and_never_goes_stale(
        offsets in proptest::collection::vec(
            prop_oneof![0i64..30 * 60_000, 0i64..120_000], 0..40)
    ) {
        let sim = simulate(offsets);
        let times: Vec<DateTime<Utc>> = sim.publishes.iter().map(|p| p.0).collect();
        prop_assert!(!times.is_empty());
        for pair in times.windows(2) {
            prop_assert!(pair[1] - pair[0] >= MIN_INTERVAL, "publishes at {} and {}", pair[0], pair[1]);
            prop_assert!(pair[1] - pair[0] <= RESYNC_INTERVAL, "silent from {} to {}", pair[0], pair[1]);
        }
        prop_assert!(sim.end - *times.last().unwrap() <= RESYNC_INTERVAL);
        if let Some(changed) = sim.last_change {
            // The final state is published within a minute of the last change.
            let trailing = sim.publishes.iter().find(|(t, _)| *t >= changed);
            let Some((t, version)) = trailing else {
                return Err(TestCaseError::fail("final state never published"));
            };
            prop_assert!(*t - changed <= MIN_INTERVAL);
            prop_assert_eq!(*version, sim.final_version);
        }
        // What is shown at the end is the true state.
        prop_assert_eq!(sim.publishes.last().unwrap().1, sim.final_version);
    }
}

#[test]
fn publish_policy_edges() {
    let t = at(12, 0, 0);
    // Exactly at the boundary, publishing is allowed.
    assert_eq!(
        decide_publish(Some(t), None, t + MIN_INTERVAL, true),
        PublishDecision::Now
    );
    assert_eq!(
        decide_publish(Some(t), None, t + RESYNC_INTERVAL, false),
        PublishDecision::Now
    );
    // A change recorded only as a timestamp counts as pending.
    assert_eq!(
        decide_publish(
            Some(t),
            Some(t + TimeDelta::seconds(1)),
            t + TimeDelta::seconds(2),
            false
        ),
        PublishDecision::At(t + MIN_INTERVAL)
    );
    // A change before the last publish is already published.
    assert_eq!(
        decide_publish(Some(t), Some(t - TimeDelta::seconds(1)), t, false),
        PublishDecision::Idle {
            resync_at: t + RESYNC_INTERVAL
        }
    );
    // A last publish in the future never stalls publishing.
    assert_eq!(
        decide_publish(Some(t + TimeDelta::hours(1)), None, t, true),
        PublishDecision::Now
    );
    // The end of time does not overflow.
    let last = DateTime::<Utc>::MAX_UTC;
    assert_eq!(
        decide_publish(Some(last), None, last, true),
        PublishDecision::Now
    );
}
