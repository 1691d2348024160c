//! Leader election: of all replicas, only the holder of a `coordination.k8s.io` Lease
//! runs the controllers.
//!
//! [`run_while_leader`] keeps trying to acquire the Lease, runs the work while it holds
//! it, and stops the work (drops its future) the moment it can no longer prove that it
//! holds it: when another replica took the Lease, and also when renewing it failed,
//! because a replica that cannot reach the API server must assume the Lease may expire
//! under it. Two replicas never run the work at the same time as long as clocks agree
//! within the renewal margin (`lease_duration - renew_every`).
//!
//! The Lease is managed with `kube-lease-manager` (server-side apply, so two replicas
//! cannot both acquire a free Lease). The replica needs `get`, `create` and `patch` on
//! `leases` in `coordination.k8s.io` in the Lease's namespace.

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use kube_lease_manager::{LeaseCreateMode, LeaseManager, LeaseManagerError, LeaseParams};

/// Where the Lease lives, who this replica is, and how long a Lease lasts.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_operator::runtime::leader::LeaderConfig;
///
/// let cfg = LeaderConfig::new("nbv-system", "nbv-operator", "nbv-operator-7d9f-abcde");
/// assert_eq!(cfg.lease_duration, Duration::from_secs(15));
/// assert_eq!(cfg.renew_every, Duration::from_secs(10));
/// assert!(cfg.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderConfig {
    /// Namespace of the Lease, usually the operator's own.
    pub namespace: String,
    /// Name of the Lease.
    pub lease_name: String,
    /// This replica's identity, unique among replicas (the Pod name).
    pub identity: String,
    /// How long the Lease stays valid after a renewal; another replica takes over at
    /// most this long after the leader stops renewing. Whole seconds, at least 2 s.
    pub lease_duration: Duration,
    /// How long after a renewal the leader renews again. Whole seconds, at least 1 s,
    /// shorter than `lease_duration`; the difference is the margin for clock skew and
    /// a slow API server.
    pub renew_every: Duration,
}

impl LeaderConfig {
    /// The default Lease duration (as client-go's leader election).
    pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
    /// The default renewal period (client-go's renew deadline).
    pub const DEFAULT_RENEW_EVERY: Duration = Duration::from_secs(10);

    /// A configuration with [`Self::DEFAULT_LEASE_DURATION`] and
    /// [`Self::DEFAULT_RENEW_EVERY`].
    ///
    /// # Examples
    ///
    /// ```
    /// let cfg = nbv_operator::runtime::leader::LeaderConfig::new("ns", "lease", "pod-a");
    /// assert_eq!(cfg.lease_name, "lease");
    /// ```
    pub fn new(
        namespace: impl Into<String>,
        lease_name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        LeaderConfig {
            namespace: namespace.into(),
            lease_name: lease_name.into(),
            identity: identity.into(),
            lease_duration: Self::DEFAULT_LEASE_DURATION,
            renew_every: Self::DEFAULT_RENEW_EVERY,
        }
    }

    /// Checks the configuration without contacting the API server.
    ///
    /// # Errors
    ///
    /// [`LeaderError::InvalidConfig`] naming the field: an empty name, a duration
    /// that is not whole seconds, `lease_duration` under 2 s, `renew_every` under 1 s
    /// or not shorter than `lease_duration`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_operator::runtime::leader::LeaderConfig;
    ///
    /// let mut cfg = LeaderConfig::new("ns", "lease", "pod-a");
    /// cfg.renew_every = cfg.lease_duration;
    /// let err = cfg.validate().unwrap_err();
    /// assert!(err.to_string().starts_with("leader election: renew_every (15s) must be shorter"));
    /// ```
    pub fn validate(&self) -> Result<(), LeaderError> {
        self.params().map(drop)
    }

    /// The lease manager's parameters. `LeaseParams::new` panics on bad durations, so
    /// everything it asserts is checked here first.
    fn params(&self) -> Result<LeaseParams, LeaderError> {
        for (field, value) in [
            ("namespace", &self.namespace),
            ("lease_name", &self.lease_name),
            ("identity", &self.identity),
        ] {
            if value.is_empty() {
                return Err(invalid(field, "must not be empty".to_owned()));
            }
        }
        let duration = whole_seconds("lease_duration", self.lease_duration)?;
        let renew = whole_seconds("renew_every", self.renew_every)?;
        if duration < 2 {
            return Err(invalid(
                "lease_duration",
                format!("({duration}s) must be at least 2s"),
            ));
        }
        if renew == 0 {
            return Err(invalid("renew_every", "must be at least 1s".to_owned()));
        }
        if renew >= duration {
            return Err(invalid(
                "renew_every",
                format!(
                    "({renew}s) must be shorter than lease_duration ({duration}s), or the \
                     Lease expires before it is renewed"
                ),
            ));
        }
        // The manager renews `grace` seconds before expiry, that is `renew` seconds
        // after the previous renewal.
        Ok(LeaseParams::new(
            self.identity.clone(),
            duration,
            duration - renew,
        ))
    }
}

fn invalid(field: &'static str, reason: String) -> LeaderError {
    LeaderError::InvalidConfig { field, reason }
}

fn whole_seconds(field: &'static str, value: Duration) -> Result<u64, LeaderError> {
    if value.subsec_nanos() == 0 {
        Ok(value.as_secs())
    } else {
        Err(invalid(
            field,
            format!("({value:?}) must be a whole number of seconds: a Lease counts in seconds"),
        ))
    }
}

/// Leader election cannot go on.
///
/// Transient API errors are not here: they are logged and retried with backoff.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::leader::{LeaderConfig, LeaderError};
///
/// let err = LeaderConfig::new("ns", "", "pod-a").validate().unwrap_err();
/// assert!(matches!(err, LeaderError::InvalidConfig { field: "lease_name", .. }));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// A field of [`LeaderConfig`] has an unusable value.
    #[error("leader election: {field} {reason}")]
    InvalidConfig {
        /// The field at fault.
        field: &'static str,
        /// What is wrong and what is expected.
        reason: String,
    },
    /// The API server refused access to the Lease (HTTP 401 or 403): retrying will not
    /// help until the operator's RBAC is fixed.
    #[error(
        "leader election: access to Lease {namespace}/{lease} was refused ({source}); grant \
         the operator's service account get, create and patch on leases \
         (coordination.k8s.io) in namespace {namespace}"
    )]
    Forbidden {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        lease: String,
        /// The API server's answer.
        #[source]
        source: LeaseManagerError,
    },
    /// Releasing the Lease on the way out failed. The work had stopped; other replicas
    /// take over when the Lease expires instead of at once.
    #[error(
        "leader election: could not release Lease {namespace}/{lease} ({reason}); another \
         replica takes over when it expires"
    )]
    Release {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        lease: String,
        /// Why, from the API server or the timeout.
        reason: String,
    },
}

/// How long releasing the Lease may take on the way out before giving up on it.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(5);
/// First and last delay between attempts after an API error.
const MIN_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Why a leadership term ended.
enum TermEnd {
    Shutdown,
    WorkEnded,
    Error(LeaseManagerError),
}

/// Runs `work()` while this replica holds the Lease, until `shutdown` completes.
///
/// - Waits for the Lease (creating it if missing), then calls `work()` and polls its
///   future while the Lease is held.
/// - When the Lease is lost, or renewing it fails, drops the work's future and
///   competes for the Lease again; `work()` is called anew on the next term.
/// - When `shutdown` completes, drops the work and releases the Lease so that another
///   replica takes over at once, then returns.
/// - When the work's future completes by itself, releases the Lease and returns.
///
/// API errors other than 401/403 are logged and retried with exponential backoff
/// (1 s to 30 s), interrupted by `shutdown`.
///
/// # Errors
///
/// [`LeaderError::InvalidConfig`] before any request, [`LeaderError::Forbidden`] when
/// the API server refuses access to the Lease, [`LeaderError::Release`] when the Lease
/// could not be released on the way out.
///
/// # Examples
///
/// ```no_run
/// use nbv_operator::runtime::leader::{run_while_leader, LeaderConfig};
///
/// # async fn example(client: kube::Client) -> Result<(), nbv_operator::runtime::leader::LeaderError> {
/// let cfg = LeaderConfig::new("nbv-system", "nbv-operator", "pod-a");
/// run_while_leader(client, cfg, async { let _ = tokio::signal::ctrl_c().await; }, || async {
///     // run the controllers until dropped
///     std::future::pending::<()>().await
/// })
/// .await?;
/// # Ok(())
/// # }
/// ```
pub async fn run_while_leader<F, Fut>(
    client: kube::Client,
    cfg: LeaderConfig,
    shutdown: impl Future<Output = ()>,
    mut work: F,
) -> Result<(), LeaderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let params = cfg.params()?;
    let mut shutdown = pin!(shutdown);
    let mut backoff = MIN_BACKOFF;
    loop {
        let built = tokio::select! {
            biased;
            () = &mut shutdown => return Ok(()),
            built = LeaseManager::new(
                client.clone(),
                cfg.lease_name.clone(),
                cfg.namespace.clone(),
                params.clone(),
                LeaseCreateMode::AutoCreate,
            ) => built,
        };
        let error = match built {
            Ok(manager) => {
                match terms(&manager, &cfg, &mut shutdown, &mut work, &mut backoff).await {
                    TermEnd::Shutdown | TermEnd::WorkEnded => return release(&manager, &cfg).await,
                    TermEnd::Error(error) => error,
                }
            }
            Err(error) => error,
        };
        // The manager is dropped here: a new one starts from "not leader", so that it
        // reports the Lease as acquired again if this replica still holds it.
        if is_forbidden(&error) {
            return Err(LeaderError::Forbidden {
                namespace: cfg.namespace.clone(),
                lease: cfg.lease_name.clone(),
                source: error,
            });
        }
        tracing::warn!(
            lease = %cfg.lease_name,
            namespace = %cfg.namespace,
            %error,
            retry_in = ?backoff,
            "leader election failed; the work is stopped and the Lease will be tried again"
        );
        tokio::select! {
            biased;
            () = &mut shutdown => return Ok(()),
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Alternates between waiting for the Lease and working while holding it.
async fn terms<F, Fut>(
    manager: &LeaseManager,
    cfg: &LeaderConfig,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
    work: &mut F,
    backoff: &mut Duration,
) -> TermEnd
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    loop {
        // Follower: wait until the manager reports the Lease as ours.
        loop {
            tokio::select! {
                biased;
                () = &mut *shutdown => return TermEnd::Shutdown,
                changed = manager.changed() => match changed {
                    Ok(true) => break,
                    Ok(false) => continue,
                    Err(error) => return TermEnd::Error(error),
                },
            }
        }
        tracing::info!(lease = %cfg.lease_name, identity = %cfg.identity, "acquired the Lease; starting work");
        *backoff = MIN_BACKOFF;
        {
            let mut running = pin!(work());
            // Leader: `changed()` keeps renewing the Lease and returns when it is lost.
            // Leaving this block drops the work's future, which stops it.
            loop {
                tokio::select! {
                    biased;
                    () = &mut *shutdown => return TermEnd::Shutdown,
                    () = &mut running => return TermEnd::WorkEnded,
                    changed = manager.changed() => match changed {
                        Ok(true) => continue,
                        Ok(false) => break,
                        Err(error) => return TermEnd::Error(error),
                    },
                }
            }
        }
        tracing::warn!(lease = %cfg.lease_name, identity = %cfg.identity, "lost the Lease; work stopped");
    }
}

/// Releases the Lease, bounded by [`RELEASE_TIMEOUT`] so that shutdown never hangs on
/// an unreachable API server.
async fn release(manager: &LeaseManager, cfg: &LeaderConfig) -> Result<(), LeaderError> {
    let reason = match tokio::time::timeout(RELEASE_TIMEOUT, manager.release()).await {
        Ok(Ok(())) => {
            tracing::info!(lease = %cfg.lease_name, identity = %cfg.identity, "released the Lease");
            return Ok(());
        }
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!("no answer within {RELEASE_TIMEOUT:?}"),
    };
    Err(LeaderError::Release {
        namespace: cfg.namespace.clone(),
        lease: cfg.lease_name.clone(),
        reason,
    })
}

fn is_forbidden(error: &LeaseManagerError) -> bool {
    matches!(error, LeaseManagerError::KubeError(kube::Error::Api(status)) if matches!(status.code, 401 | 403))
}
