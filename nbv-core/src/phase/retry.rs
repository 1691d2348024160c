//! How often and how late a run retries after a transient failure.

use std::time::Duration;

/// How a run retries after a transient failure: at most
/// [`max_retries`](Self::max_retries) retries, the `n`-th one
/// `base × factorⁿ⁻¹` (at most `cap`) after the failure that caused it.
///
/// The default is upstream's: 3 retries, 1 min base, factor 2 (1m, 2m, 4m), capped at
/// 1 h (which 3 retries never reach). A policy can only be built valid: the base is
/// positive (a zero backoff would retry in a tight loop), the factor at least 1 (so
/// backoffs never shrink), the cap at least the base, and `max_retries` fits
/// `status.retryCount` (an `int32`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::phase::RetryPolicy;
///
/// let policy = RetryPolicy::default();
/// assert_eq!(policy.max_retries(), 3);
/// assert_eq!(policy.backoff(3), Duration::from_secs(240));
///
/// let quick = RetryPolicy::new(5, Duration::from_secs(10), 3, Duration::from_secs(60))?;
/// assert_eq!(quick.backoff(2), Duration::from_secs(30));
/// assert_eq!(quick.backoff(4), Duration::from_secs(60)); // 270 s, capped
/// # Ok::<(), nbv_core::phase::InvalidRetryPolicy>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RetryPolicy {
    max_retries: u32,
    base: Duration,
    factor: u32,
    cap: Duration,
}

impl RetryPolicy {
    /// 3 retries after 1m, 2m and 4m (cap 1 h).
    pub const DEFAULT: RetryPolicy = RetryPolicy {
        max_retries: 3,
        base: Duration::from_secs(60),
        factor: 2,
        cap: Duration::from_secs(3600),
    };

    /// Doubling backoff from `base` up to `cap`, for constants known to be in range
    /// (`base` not zero, `cap` not below it).
    pub(crate) const fn exponential(max_retries: u32, base: Duration, cap: Duration) -> Self {
        RetryPolicy {
            max_retries,
            base,
            factor: 2,
            cap,
        }
    }

    /// A policy of at most `max_retries` retries, the `n`-th one `base × factorⁿ⁻¹`
    /// (at most `cap`) after the failure.
    ///
    /// # Errors
    ///
    /// [`InvalidRetryPolicy`] naming the first parameter out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::phase::{InvalidRetryPolicy, RetryPolicy};
    ///
    /// let err = RetryPolicy::new(3, Duration::ZERO, 2, Duration::from_secs(60)).unwrap_err();
    /// assert_eq!(err, InvalidRetryPolicy::ZeroBase);
    /// ```
    pub fn new(
        max_retries: u32,
        base: Duration,
        factor: u32,
        cap: Duration,
    ) -> Result<Self, InvalidRetryPolicy> {
        if i32::try_from(max_retries).is_err() {
            return Err(InvalidRetryPolicy::TooManyRetries { max_retries });
        }
        if base.is_zero() {
            return Err(InvalidRetryPolicy::ZeroBase);
        }
        if factor == 0 {
            return Err(InvalidRetryPolicy::ZeroFactor);
        }
        if cap < base {
            return Err(InvalidRetryPolicy::CapBelowBase { base, cap });
        }
        Ok(RetryPolicy {
            max_retries,
            base,
            factor,
            cap,
        })
    }

    /// Retries a run may make after its first attempt.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::RetryPolicy;
    ///
    /// assert_eq!(RetryPolicy::default().max_retries(), 3);
    /// ```
    pub const fn max_retries(&self) -> u32 {
        self.max_retries
    }

    /// Backoff before the first retry.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::phase::RetryPolicy;
    ///
    /// assert_eq!(RetryPolicy::default().base(), Duration::from_secs(60));
    /// ```
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// Each retry waits this many times longer than the one before (up to the cap).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::RetryPolicy;
    ///
    /// assert_eq!(RetryPolicy::default().factor(), 2);
    /// ```
    pub const fn factor(&self) -> u32 {
        self.factor
    }

    /// Longest backoff.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::phase::RetryPolicy;
    ///
    /// assert_eq!(RetryPolicy::default().cap(), Duration::from_secs(3600));
    /// ```
    pub const fn cap(&self) -> Duration {
        self.cap
    }

    /// The wait before retry number `retry` (1 for the first retry); zero for `0`,
    /// which is no retry. Never decreases as `retry` grows, never exceeds the cap.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::phase::RetryPolicy;
    ///
    /// let minutes = |n| RetryPolicy::DEFAULT.backoff(n).as_secs() / 60;
    /// assert_eq!([minutes(1), minutes(2), minutes(3)], [1, 2, 4]);
    /// assert_eq!(RetryPolicy::DEFAULT.backoff(0), Duration::ZERO);
    /// ```
    pub fn backoff(&self, retry: u32) -> Duration {
        if retry == 0 {
            return Duration::ZERO;
        }
        // Saturate instead of overflowing: a product past the cap is the cap.
        self.factor
            .checked_pow(retry - 1)
            .and_then(|multiplier| self.base.checked_mul(multiplier))
            .map_or(self.cap, |backoff| backoff.min(self.cap))
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::DEFAULT
    }
}

/// The wait before retry number `retry` under `policy`; see [`RetryPolicy::backoff`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::phase::{backoff, RetryPolicy};
///
/// assert_eq!(backoff(2, &RetryPolicy::default()), Duration::from_secs(120));
/// ```
pub fn backoff(retry: u32, policy: &RetryPolicy) -> Duration {
    policy.backoff(retry)
}

/// A [`RetryPolicy`] parameter out of range.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::phase::{InvalidRetryPolicy, RetryPolicy};
///
/// let err = RetryPolicy::new(3, Duration::from_secs(60), 0, Duration::from_secs(60)).unwrap_err();
/// assert_eq!(err, InvalidRetryPolicy::ZeroFactor);
/// assert!(err.to_string().starts_with("retry policy: factor is 0"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidRetryPolicy {
    /// `max_retries` does not fit `status.retryCount`.
    #[error(
        "retry policy: max_retries {max_retries} does not fit status.retryCount (int32); \
         use at most 2147483647"
    )]
    TooManyRetries {
        /// The rejected value.
        max_retries: u32,
    },
    /// The base backoff is zero.
    #[error(
        "retry policy: base backoff is zero, which would retry in a tight loop; \
         use a positive duration such as 1m"
    )]
    ZeroBase,
    /// The factor is zero.
    #[error(
        "retry policy: factor is 0, which would make later backoffs shorter than the first; \
         use 1 for a constant backoff or 2 to double it each time"
    )]
    ZeroFactor,
    /// The cap is shorter than the base.
    #[error(
        "retry policy: cap {cap:?} is shorter than base {base:?}; use a cap of at least {base:?}"
    )]
    CapBelowBase {
        /// The base backoff.
        base: Duration,
        /// The rejected cap.
        cap: Duration,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_policy_is_valid_and_upstreams() {
        let d = RetryPolicy::DEFAULT;
        assert_eq!(
            RetryPolicy::new(d.max_retries(), d.base(), d.factor(), d.cap()),
            Ok(d)
        );
        assert_eq!(
            (1..=4).map(|n| d.backoff(n).as_secs()).collect::<Vec<_>>(),
            [60, 120, 240, 480]
        );
    }

    #[test]
    fn every_parameter_is_checked() {
        let s = Duration::from_secs;
        assert_eq!(
            RetryPolicy::new(u32::MAX, s(1), 2, s(1)),
            Err(InvalidRetryPolicy::TooManyRetries {
                max_retries: u32::MAX
            })
        );
        assert_eq!(
            RetryPolicy::new(1, s(1), 0, s(1)),
            Err(InvalidRetryPolicy::ZeroFactor)
        );
        assert_eq!(
            RetryPolicy::new(1, s(2), 1, s(1)),
            Err(InvalidRetryPolicy::CapBelowBase {
                base: s(2),
                cap: s(1)
            })
        );
        assert!(RetryPolicy::new(i32::MAX as u32, s(1), 1, s(1)).is_ok());
    }

    #[test]
    fn huge_exponents_saturate_at_the_cap() {
        let p = RetryPolicy::new(i32::MAX as u32, Duration::MAX, u32::MAX, Duration::MAX).unwrap();
        assert_eq!(p.backoff(u32::MAX), Duration::MAX);
        assert_eq!(p.backoff(2), Duration::MAX);
    }
}
