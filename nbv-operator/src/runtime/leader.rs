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
//! request_deadline` after the last renewal, before the Lease can expire. And the
//! work runs only while this replica's own last successful write of the Lease is that
//! fresh: the Lease manager also reports the Lease as held when it merely reads this
//! replica's name in it (a new manager after an error), which is stale when the
//! renewals are the thing failing.
//!
//! The Lease is managed with `kube-lease-manager` (server-side apply, so two replicas
//! cannot both acquire a free Lease). The replica needs `get`, `create` and `patch` on
//! `leases` in `coordination.k8s.io` in the Lease's namespace.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
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
    let renewals = Renewals::default();
    let client = fenced(client, &cfg, &renewals);
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
                let term = terms(
                    &manager,
                    &cfg,
                    &renewals,
                    &mut shutdown,
                    &mut work,
                    &mut backoff,
                );
                match term.await {
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
    renewals: &Renewals,
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
        tracing::info!(lease = %cfg.lease_name, identity = %cfg.identity, "acquired the Lease");
        *backoff = MIN_BACKOFF;
        let mut fresh = renewals.0.subscribe();
        let mut running = None;
        // Leader: `changed()` keeps renewing the Lease and returns when it is lost. Its
        // future is kept across the loop (dropping it could cut a renewal in half).
        let mut changed = Box::pin(manager.changed());
        let lost = loop {
            // The work runs only while the last renewal this replica made is fresh:
            // the manager also takes the Lease as held when it merely reads this
            // replica's name in it, which after failed renewals is stale.
            let valid_until = *fresh.borrow_and_update();
            let valid = valid_until.is_some_and(|until| Instant::now() < until);
            if valid && running.is_none() {
                tracing::info!(lease = %cfg.lease_name, identity = %cfg.identity, "renewed the Lease; starting work");
                running = Some(Box::pin(work()));
            } else if !valid && running.is_some() {
                tracing::warn!(lease = %cfg.lease_name, identity = %cfg.identity,
                    "the Lease was not renewed in time; work stopped until a renewal succeeds");
                running = None;
            }
            let expiry = valid_until.filter(|_| valid).unwrap_or_else(Instant::now);
            tokio::select! {
                biased;
                () = &mut *shutdown => return TermEnd::Shutdown,
                () = async { running.as_mut().expect("running").await }, if running.is_some() => {
                    return TermEnd::WorkEnded;
                }
                result = &mut changed => match result {
                    Ok(true) => changed = Box::pin(manager.changed()),
                    Ok(false) => break running.is_some(),
                    Err(error) => return TermEnd::Error(error),
                },
                _ = fresh.changed() => {}
                () = tokio::time::sleep_until(expiry), if valid => {}
            }
        };
        // Leaving the loop dropped the work's future, which stops it.
        drop(running);
        if lost {
            tracing::warn!(lease = %cfg.lease_name, identity = %cfg.identity, "lost the Lease; work stopped");
        }
    }
}

/// Until when the work may run: the last successful write of the Lease by this
/// replica, plus what is left of the Lease once the margin for a slow request is
/// taken off.
#[derive(Clone, Default)]
struct Renewals(Arc<tokio::sync::watch::Sender<Option<Instant>>>);

/// `client` for the Lease: each request fails after [`LeaderConfig::request_deadline`]
/// ([`DeadlineLayer`]), and each successful PATCH of the Lease (an acquisition or a
/// renewal, which sets `renewTime` to a time before it was sent) makes the work valid
/// until `lease_duration - request_deadline` after it was sent.
fn fenced(client: kube::Client, cfg: &LeaderConfig, renewals: &Renewals) -> kube::Client {
    let namespace = client.default_namespace().to_owned();
    let lease_path = format!(
        "/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}",
        cfg.namespace, cfg.lease_name
    );
    let validity = cfg.lease_duration.saturating_sub(cfg.request_deadline());
    let renewals = renewals.clone();
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let (client, renewals) = (client.clone(), renewals.clone());
        let renewal = request.method() == http::Method::PATCH && request.uri().path() == lease_path;
        async move {
            let sent = Instant::now();
            let answer = client.send(request).await?;
            if renewal && answer.status().is_success() {
                renewals.0.send_replace(Some(sent + validity));
            }
            Ok::<_, kube::Error>(answer)
        }
    });
    kube::Client::new(
        DeadlineLayer::new(cfg.request_deadline()).layer(service),
        namespace,
    )
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

    /// When each work term started and stopped (`None` while it runs).
    type Terms = Arc<Mutex<Vec<(Instant, Option<Instant>)>>>;

    /// Work that records its terms in `terms`.
    fn recorded_work(
        terms: Terms,
    ) -> impl FnMut() -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
        move || {
            let terms = terms.clone();
            Box::pin(async move {
                // Records the stop when dropped: the moment the work is stopped.
                struct Term(Terms, usize);
                impl Drop for Term {
                    fn drop(&mut self) {
                        self.0.lock().unwrap()[self.1].1 = Some(Instant::now());
                    }
                }
                let index = {
                    let mut terms = terms.lock().unwrap();
                    terms.push((Instant::now(), None));
                    terms.len() - 1
                };
                let _term = Term(terms, index);
                std::future::pending::<()>().await
            })
        }
    }

    /// A leader whose renewals never get an answer any more stops working before its
    /// Lease expires, and does not work again on it: the renewal fails at its deadline
    /// instead of waiting forever while the work goes on, and the replica does not
    /// take its own name in the unrenewed Lease as a new term.
    #[tokio::test]
    async fn no_work_outlasts_the_last_renewal_of_the_lease() {
        let stall = Arc::new(AtomicBool::new(false));
        let client = lease_server(stall.clone());
        let cfg = LeaderConfig {
            lease_duration: Duration::from_secs(4),
            renew_every: Duration::from_secs(2),
            ..LeaderConfig::new("ns", "lease", "pod-a")
        };
        let terms = Terms::default();
        let election = tokio::spawn(run_while_leader(
            client,
            cfg.clone(),
            std::future::pending(),
            recorded_work(terms.clone()),
        ));
        tokio::time::timeout(Duration::from_secs(10), async {
            while terms.lock().unwrap().is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the Lease acquired and the work started");
        // From now on no renewal completes: the last one is no later than now.
        stall.store(true, Ordering::SeqCst);
        let last_renewal = Instant::now();
        // Two Leases long: a replica that works on would show it by now.
        tokio::time::sleep(2 * cfg.lease_duration).await;
        election.abort();
        let terms = terms.lock().unwrap().clone();
        for (started, stopped) in &terms {
            let end = stopped.unwrap_or_else(Instant::now);
            assert!(
                end < last_renewal + cfg.lease_duration,
                "work from {:?} to {:?} after the last renewal, past the Lease ({:?}), \
                 when another replica may lead; terms: {terms:?}",
                started.saturating_duration_since(last_renewal),
                end - last_renewal,
                cfg.lease_duration
            );
        }
    }
}
