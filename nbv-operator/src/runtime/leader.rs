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
//! "Renewing failed" includes "renewing did not finish": every request about the Lease
//! fails after [`LeaderConfig::request_deadline`], half the renewal margin. Without
//! it, a renewal whose connection stalls (kube's client has no read timeout) would wait
//! forever while the work went on, and another replica would take the expired Lease
//! and work too. With it, the work stops at the latest `renew_every +
//! request_deadline` after the last renewal, before the Lease can expire.
//!
//! The Lease is managed with `kube-lease-manager` (server-side apply, so two replicas
//! cannot both acquire a free Lease). The replica needs `get`, `create` and `patch` on
//! `leases` in `coordination.k8s.io` in the Lease's namespace.

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use tower::Layer;

use kube_lease_manager::{LeaseCreateMode, LeaseManager, LeaseManagerError, LeaseParams};

use crate::runtime::deadline::DeadlineLayer;

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

    /// How long one request about the Lease may take: half the renewal margin
    /// (`lease_duration - renew_every`), so that a leader whose renewal does not
    /// complete stops working with half the margin left for clock skew.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_operator::runtime::leader::LeaderConfig;
    ///
    /// let mut cfg = LeaderConfig::new("ns", "lease", "pod-a");
    /// cfg.renew_every = Duration::from_secs(5);
    /// assert_eq!(cfg.request_deadline(), Duration::from_secs(5));
    /// ```
    pub fn request_deadline(&self) -> Duration {
        self.lease_duration.saturating_sub(self.renew_every) / 2
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
    let client = with_deadline(client, cfg.request_deadline());
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

/// `client`, each of whose requests fails after `limit` ([`DeadlineLayer`]).
fn with_deadline(client: kube::Client, limit: Duration) -> kube::Client {
    let namespace = client.default_namespace().to_owned();
    let service = tower::service_fn(move |request| {
        let client = client.clone();
        async move { client.send(request).await }
    });
    kube::Client::new(DeadlineLayer::new(limit).layer(service), namespace)
}

fn is_forbidden(error: &LeaseManagerError) -> bool {
    matches!(error, LeaseManagerError::KubeError(kube::Error::Api(status)) if matches!(status.code, 401 | 403))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use http_body_util::BodyExt;
    use kube::client::Body;
    use serde_json::{Value, json};

    use super::*;

    /// An API server that keeps one Lease; once `stall` is set, it takes PATCHes of the
    /// Lease and never answers them (a connection that stalled mid-request).
    fn lease_server(stall: Arc<AtomicBool>) -> kube::Client {
        let lease: Arc<Mutex<Option<Value>>> = Arc::default();
        let service = tower::service_fn(move |request: http::Request<Body>| {
            let (lease, stall) = (lease.clone(), stall.clone());
            async move {
                let (parts, body) = request.into_parts();
                let body = body.collect().await?.to_bytes();
                let answer = |code: u16, value: Value| {
                    http::Response::builder()
                        .status(code)
                        .body(Body::from(value.to_string().into_bytes()))
                        .expect("a response")
                };
                let not_found = json!({"kind": "Status", "apiVersion": "v1",
                    "status": "Failure", "reason": "NotFound", "code": 404});
                let response = match parts.method {
                    http::Method::GET => match lease.lock().unwrap().clone() {
                        Some(l) => answer(200, l),
                        None => answer(404, not_found),
                    },
                    http::Method::POST => {
                        let mut created: Value = serde_json::from_slice(&body)?;
                        created["metadata"]["namespace"] = json!("ns");
                        created["metadata"]["resourceVersion"] = json!("1");
                        *lease.lock().unwrap() = Some(created.clone());
                        answer(201, created)
                    }
                    http::Method::PATCH => {
                        if stall.load(Ordering::SeqCst) {
                            std::future::pending::<()>().await;
                        }
                        let patch: Value = serde_json::from_slice(&body)?;
                        let mut guard = lease.lock().unwrap();
                        let stored = guard.as_mut().expect("the Lease was created");
                        for (key, value) in patch["spec"].as_object().into_iter().flatten() {
                            stored["spec"][key] = value.clone();
                        }
                        answer(200, stored.clone())
                    }
                    _ => answer(405, json!({})),
                };
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
            }
        });
        kube::Client::new(service, "ns")
    }

    /// A leader whose renewal never gets an answer stops working before its Lease
    /// expires: the renewal fails at its deadline instead of waiting forever while
    /// the work goes on (and another replica takes the expired Lease and works too).
    #[tokio::test]
    async fn a_renewal_that_never_completes_stops_the_work_before_the_lease_expires() {
        let stall = Arc::new(AtomicBool::new(false));
        let client = lease_server(stall.clone());
        let cfg = LeaderConfig {
            lease_duration: Duration::from_secs(4),
            renew_every: Duration::from_secs(2),
            ..LeaderConfig::new("ns", "lease", "pod-a")
        };
        let (started_tx, started_rx) = tokio::sync::oneshot::channel::<Instant>();
        let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<Instant>();
        let mut started_tx = Some(started_tx);
        let mut stopped_tx = Some(stopped_tx);
        let work = move || {
            let started = started_tx.take();
            let stopped = stopped_tx.take();
            async move {
                // Sends when dropped: the moment the work is stopped.
                struct OnDrop(Option<tokio::sync::oneshot::Sender<Instant>>);
                impl Drop for OnDrop {
                    fn drop(&mut self) {
                        if let Some(tx) = self.0.take() {
                            let _ = tx.send(Instant::now());
                        }
                    }
                }
                let _guard = OnDrop(stopped);
                if let Some(tx) = started {
                    let _ = tx.send(Instant::now());
                }
                std::future::pending::<()>().await
            }
        };
        let election = tokio::spawn(run_while_leader(
            client,
            cfg.clone(),
            std::future::pending(),
            work,
        ));
        let acquired = tokio::time::timeout(Duration::from_secs(10), started_rx)
            .await
            .expect("the Lease acquired")
            .expect("the work started");
        // From now on, no renewal completes; the last one was at `acquired` at the
        // latest.
        stall.store(true, Ordering::SeqCst);
        let stopped = tokio::time::timeout(Duration::from_secs(30), stopped_rx)
            .await
            .expect("the work is stopped while the renewal hangs")
            .expect("the work stopped");
        election.abort();
        let worked = stopped - acquired;
        assert!(
            worked < cfg.lease_duration,
            "the work stopped {worked:?} after the last renewal, after the Lease ({:?}) \
             expired and another replica could lead",
            cfg.lease_duration
        );
    }
}
