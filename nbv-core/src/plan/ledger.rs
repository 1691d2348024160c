//! Recording outcomes of effects, and when to try a failed one again.

use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};

use crate::api::{EffectFailure, EffectLedger};
use crate::phase::{InvalidRetryPolicy, RetryPolicy};
use crate::text::truncate;

use super::EffectKey;

/// How failed effects are retried: the exponential backoff of a
/// [`RetryPolicy`] (the one implementation nbv has, shared with the retries of
/// notebook runs), and given up once the attempts are spent.
///
/// # Examples
///
/// ```
/// use nbv_core::plan::EffectRetryPolicy;
///
/// let policy = EffectRetryPolicy::default();
/// assert_eq!(policy.max_attempts(), 5);
/// assert_eq!(policy.delay(1).num_seconds(), 10);
/// assert_eq!(policy.delay(2).num_seconds(), 20);
/// assert_eq!(policy.delay(30).num_seconds(), 300);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectRetryPolicy {
    /// Its `max_retries` are the attempts before giving up; its `backoff(n)` the wait
    /// after the `n`-th failure.
    backoff: RetryPolicy,
}

impl Default for EffectRetryPolicy {
    /// 5 attempts, 10 s after the first failure, doubling, at most 5 minutes apart.
    fn default() -> Self {
        EffectRetryPolicy {
            backoff: RetryPolicy::exponential(
                5,
                StdDuration::from_secs(10),
                StdDuration::from_secs(300),
            ),
        }
    }
}

impl EffectRetryPolicy {
    /// A policy of `max_attempts` attempts (at least 1), waiting `base` after the first
    /// failure and twice as long after each next one, at most `cap`.
    ///
    /// # Errors
    ///
    /// [`InvalidRetryPolicy`] naming the parameter out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::plan::EffectRetryPolicy;
    ///
    /// let quick = EffectRetryPolicy::new(2, Duration::from_secs(1), Duration::from_secs(5))?;
    /// assert_eq!(quick.max_attempts(), 2);
    /// assert!(EffectRetryPolicy::new(2, Duration::ZERO, Duration::from_secs(5)).is_err());
    /// # Ok::<(), nbv_core::phase::InvalidRetryPolicy>(())
    /// ```
    pub fn new(
        max_attempts: u32,
        base: StdDuration,
        cap: StdDuration,
    ) -> Result<Self, InvalidRetryPolicy> {
        Ok(EffectRetryPolicy {
            backoff: RetryPolicy::new(max_attempts.max(1), base, 2, cap)?,
        })
    }

    /// Attempts before an effect is given up.
    pub fn max_attempts(&self) -> u32 {
        self.backoff.max_retries().max(1)
    }

    /// Delay after the `attempts`-th failure: `base * 2^(attempts-1)`, at most `cap`.
    pub fn delay(&self, attempts: u32) -> Duration {
        let wait = self.backoff.backoff(attempts.max(1));
        Duration::from_std(wait).unwrap_or(Duration::MAX)
    }

    /// When a failed effect may be tried again.
    pub fn next_attempt(&self, failure: &EffectFailure) -> DateTime<Utc> {
        let last = failure.last_attempt.unwrap_or(DateTime::<Utc>::MIN_UTC);
        last.checked_add_signed(self.delay(failure.attempts))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }
}

/// How carrying out an effect went, as the ledger records it: the ledger's record,
/// not the action's result, which is a [`Carried`](crate::reconcile::Carried) (a
/// trigger's a [`TriggerOutcome`](crate::actions::TriggerOutcome)) that the settlement
/// turns into one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It took effect (or had already taken effect).
    Done,
    /// It failed with this error; it may be retried.
    Failed(String),
    /// It failed in a way no retry can fix (a refusal, a forbidden request): give it up
    /// now, so that it is reported once instead of failing the same way again.
    GiveUp(String),
}

impl Outcome {
    /// The error, when the effect failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::plan::Outcome;
    ///
    /// assert_eq!(Outcome::GiveUp("403 forbidden".into()).error(), Some("403 forbidden"));
    /// assert_eq!(Outcome::Done.error(), None);
    /// ```
    pub fn error(&self) -> Option<&str> {
        match self {
            Outcome::Failed(error) | Outcome::GiveUp(error) => Some(error),
            Outcome::Done => None,
        }
    }
}

/// The ledger after recording an outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The new ledger, to be written to `status.effects`.
    pub ledger: EffectLedger,
    /// `true` when this failure made nbv give the effect up.
    pub gave_up: bool,
}

/// Records the outcome of the effect `key` in `ledger` at `now`.
///
/// `Done` moves the key to `done` and forgets its failures. `Failed` takes the key out
/// of `done`, counts the attempt, keeps the error (cut to 1 KiB) and gives the effect
/// up when the policy's attempts are spent; `GiveUp` does the same and gives it up at
/// once. Recording `Done` twice changes nothing.
///
/// # Examples
///
/// ```
/// use chrono::Utc;
/// use nbv_core::api::EffectLedger;
/// use nbv_core::plan::{record, EffectKey, EffectRetryPolicy, Outcome};
///
/// let policy = EffectRetryPolicy::new(2, std::time::Duration::from_secs(10), std::time::Duration::from_secs(60)).unwrap();
/// let key = EffectKey::notify();
/// let r = record(EffectLedger::for_run("g1"), &key, Outcome::Failed("503".into()), Utc::now(), &policy);
/// assert!(!r.gave_up);
/// let r = record(r.ledger, &key, Outcome::Failed("503".into()), Utc::now(), &policy);
/// assert!(r.gave_up);
/// assert_eq!(r.ledger.failure("notify").unwrap().attempts, 2);
/// ```
pub fn record(
    mut ledger: EffectLedger,
    key: &EffectKey,
    outcome: Outcome,
    now: DateTime<Utc>,
    policy: &EffectRetryPolicy,
) -> Recorded {
    match outcome {
        Outcome::Done => {
            ledger.failed.retain(|f| f.key != key.as_str());
            ledger.done.insert(key.as_str().to_owned());
            Recorded {
                ledger,
                gave_up: false,
            }
        }
        Outcome::Failed(error) => fail(ledger, key, &error, false, now, policy),
        Outcome::GiveUp(error) => fail(ledger, key, &error, true, now, policy),
    }
}

/// Records a failed attempt; `final_` gives the effect up whatever attempts are left.
/// Longest `lastError` kept in the ledger, in bytes: the status stays small whatever an
/// API server answers.
const MAX_LAST_ERROR_BYTES: usize = 1024;

fn fail(
    mut ledger: EffectLedger,
    key: &EffectKey,
    error: &str,
    final_: bool,
    now: DateTime<Utc>,
    policy: &EffectRetryPolicy,
) -> Recorded {
    // A failed attempt means the effect is not in place (any more).
    ledger.done.remove(key.as_str());
    let error = truncate(error, MAX_LAST_ERROR_BYTES, "").into_owned();
    let max = policy.max_attempts();
    let index = match ledger.failed.iter().position(|f| f.key == key.as_str()) {
        Some(i) => i,
        None => {
            ledger.failed.push(EffectFailure {
                key: key.as_str().to_owned(),
                ..EffectFailure::default()
            });
            ledger.failed.len() - 1
        }
    };
    let failure = &mut ledger.failed[index];
    let was_given_up = failure.gave_up;
    failure.attempts = failure.attempts.saturating_add(1);
    failure.last_error = error;
    failure.last_attempt = Some(now);
    failure.gave_up = final_ || failure.attempts >= max;
    let gave_up = failure.gave_up && !was_given_up;
    Recorded { ledger, gave_up }
}
