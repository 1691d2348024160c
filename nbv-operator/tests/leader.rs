//! Leader election against an in-process Lease API: real `kube::Client`s and
//! kube-lease-manager over `tower_test` mocks that share one Lease.
//!
//! The lease manager measures expiry with the system clock, so these tests run in real
//! time with a 4 s Lease renewed every second (a renewal may be up to 3 s late on a
//! loaded machine before another replica may take over); each takes a few seconds.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use kube::client::Body;
use nbv_operator::runtime::leader::{LeaderConfig, LeaderError, run_while_leader};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

const NAMESPACE: &str = "nbv-system";
const LEASE: &str = "nbv-operator";
const LEASES_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/nbv-system/leases";

/// One Lease, as the API server stores it; `None` until created.
#[derive(Clone, Default)]
struct LeaseApi {
    lease: Arc<Mutex<Option<Value>>>,
    /// Answer every request with 403, as without RBAC.
    refuse: bool,
    /// While set, answer every request with 500, as an API server that is down.
    failing: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
}

fn reply(code: StatusCode, body: &Value) -> Response<Body> {
    let mut response = Response::new(Body::from(body.to_string().into_bytes()));
    *response.status_mut() = code;
    response
}

fn status(code: StatusCode, reason: &str) -> Response<Body> {
    reply(
        code,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "reason": reason, "code": code.as_u16(), "message": format!("leases: {reason}")}),
    )
}

/// Applies the fields of `patch.spec` to `lease.spec`; `null` removes a field.
fn merge_spec(lease: &mut Value, patch: &Value) {
    let Some(fields) = patch.get("spec").and_then(Value::as_object) else {
        return;
    };
    if !lease["spec"].is_object() {
        lease["spec"] = json!({});
    }
    if let Some(spec) = lease["spec"].as_object_mut() {
        for (key, value) in fields {
            if value.is_null() {
                spec.remove(key);
            } else {
                spec.insert(key.clone(), value.clone());
            }
        }
    }
}

impl LeaseApi {
    fn holder(&self) -> Option<String> {
        let lease = self.lease.lock().expect("lease lock");
        lease.as_ref()?["spec"]["holderIdentity"]
            .as_str()
            .map(str::to_owned)
    }

    /// Another replica takes the Lease and keeps renewing it (every 500 ms, for an
    /// hour each time) until the returned task is aborted.
    fn take_over(&self, holder: &str) -> JoinHandle<()> {
        self.renew_for(holder);
        let (api, holder) = (self.clone(), holder.to_owned());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                api.renew_for(&holder);
            }
        })
    }

    fn renew_for(&self, holder: &str) {
        let now = chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string();
        let mut lease = self.lease.lock().expect("lease lock");
        if let Some(lease) = lease.as_mut() {
            merge_spec(
                lease,
                &json!({"spec": {"holderIdentity": holder, "acquireTime": now, "renewTime": now,
                                 "leaseDurationSeconds": 3600}}),
            );
        }
    }

    async fn answer(&self, request: Request<Body>) -> Response<Body> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let content_type = request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = request
            .into_body()
            .collect_bytes()
            .await
            .unwrap_or_default();
        if self.refuse {
            return status(StatusCode::FORBIDDEN, "Forbidden");
        }
        if self.failing.load(Ordering::SeqCst) {
            return status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError");
        }
        let named = path == format!("{LEASES_PATH}/{LEASE}");
        let mut lease = self.lease.lock().expect("lease lock");
        match (method, named) {
            (Method::GET, true) => match lease.as_ref() {
                Some(lease) => reply(StatusCode::OK, lease),
                None => status(StatusCode::NOT_FOUND, "NotFound"),
            },
            (Method::POST, false) if path == LEASES_PATH => {
                if lease.is_some() {
                    return status(StatusCode::CONFLICT, "AlreadyExists");
                }
                let mut created: Value = serde_json::from_slice(&body).unwrap_or_default();
                created["metadata"]["namespace"] = json!(NAMESPACE);
                created["metadata"]["resourceVersion"] = json!("1");
                *lease = Some(created.clone());
                reply(StatusCode::CREATED, &created)
            }
            (Method::PATCH, true) => {
                let Some(current) = lease.as_mut() else {
                    return status(StatusCode::NOT_FOUND, "NotFound");
                };
                let patch: Value = serde_json::from_slice(&body).unwrap_or_default();
                // Server-side apply without force: taking a field owned by another
                // manager with another value is a conflict.
                if content_type.starts_with("application/apply-patch") {
                    let held = current["spec"]["holderIdentity"].as_str();
                    let wanted = patch["spec"]["holderIdentity"].as_str();
                    if held.is_some() && wanted.is_some() && held != wanted {
                        return status(StatusCode::CONFLICT, "Conflict");
                    }
                }
                merge_spec(current, &patch);
                reply(StatusCode::OK, current)
            }
            _ => status(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed"),
        }
    }

    /// A client of this API, as one replica has.
    fn client(&self) -> kube::Client {
        let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let api = self.clone();
        tokio::spawn(async move {
            while let Some((request, respond)) = handle.next_request().await {
                respond.send_response(api.answer(request).await);
            }
        });
        kube::Client::new(service, "default")
    }
}

fn config(identity: &str) -> LeaderConfig {
    LeaderConfig {
        namespace: NAMESPACE.into(),
        lease_name: LEASE.into(),
        identity: identity.into(),
        lease_duration: Duration::from_secs(4),
        renew_every: Duration::from_secs(1),
    }
}

/// What a replica's work reports: `(identity, true)` when it starts and
/// `(identity, false)` when its future is dropped.
type Reports = mpsc::UnboundedSender<(String, bool)>;

struct Stopped(String, Reports, Arc<AtomicUsize>);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.2.fetch_sub(1, Ordering::SeqCst);
        let _ = self.1.send((self.0.clone(), false));
    }
}

struct Replica {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), LeaderError>>,
}

/// Starts a replica whose work runs until dropped. `working` counts the replicas
/// working right now; `most` is the most ever seen at once.
fn replica(
    api: &LeaseApi,
    identity: &str,
    reports: &Reports,
    working: &Arc<AtomicUsize>,
    most: &Arc<AtomicUsize>,
) -> Replica {
    let (stop, stopped) = oneshot::channel::<()>();
    let (identity, reports) = (identity.to_owned(), reports.clone());
    let (working, most) = (Arc::clone(working), Arc::clone(most));
    let cfg = config(&identity);
    let task = tokio::spawn(run_while_leader(
        api.client(),
        cfg,
        async move {
            let _ = stopped.await;
        },
        move || {
            let (identity, reports) = (identity.clone(), reports.clone());
            let (working, most) = (Arc::clone(&working), Arc::clone(&most));
            async move {
                let now = working.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                let _guard = Stopped(identity.clone(), reports.clone(), working);
                let _ = reports.send((identity, true));
                std::future::pending::<()>().await;
            }
        },
    ));
    Replica { stop, task }
}

async fn next(reports: &mut mpsc::UnboundedReceiver<(String, bool)>) -> (String, bool) {
    tokio::time::timeout(Duration::from_secs(15), reports.recv())
        .await
        .expect("a report within 15 s")
        .expect("the reporters are alive")
}

async fn shut_down(replica: Replica) -> Result<(), LeaderError> {
    let _ = replica.stop.send(());
    tokio::time::timeout(Duration::from_secs(15), replica.task)
        .await
        .expect("run_while_leader returns after shutdown")
        .expect("the task did not panic")
}

#[tokio::test]
async fn creates_the_lease_runs_the_work_and_releases_on_shutdown() {
    let api = LeaseApi::default();
    let (reports, mut seen) = mpsc::unbounded_channel();
    let (working, most) = Default::default();
    let a = replica(&api, "pod-a", &reports, &working, &most);

    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), true));
    assert_eq!(api.holder().as_deref(), Some("pod-a"));
    let duration = api
        .lease
        .lock()
        .expect("lease lock")
        .as_ref()
        .map(|l| l["spec"]["leaseDurationSeconds"].clone());
    assert_eq!(duration, Some(json!(4)));

    // Renewals keep the Lease: the work is still running five renewals later, past
    // the Lease's duration.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(working.load(Ordering::SeqCst), 1);
    assert_eq!(api.holder().as_deref(), Some("pod-a"));

    assert!(shut_down(a).await.is_ok());
    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), false));
    assert_eq!(
        api.holder(),
        None,
        "the Lease is released for the next replica"
    );
}

#[tokio::test]
async fn the_work_stops_when_another_holder_takes_the_lease() {
    let api = LeaseApi::default();
    let (reports, mut seen) = mpsc::unbounded_channel();
    let (working, most) = Default::default();
    let a = replica(&api, "pod-a", &reports, &working, &most);
    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), true));

    let pod_b = api.take_over("pod-b");
    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), false));
    assert_eq!(working.load(Ordering::SeqCst), 0);

    // pod-b keeps renewing: pod-a neither works nor takes the Lease back.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(seen.try_recv().is_err());
    assert_eq!(api.holder().as_deref(), Some("pod-b"));

    assert!(shut_down(a).await.is_ok());
    assert_eq!(
        api.holder().as_deref(),
        Some("pod-b"),
        "pod-a released nothing it did not hold"
    );
    pod_b.abort();
}

#[tokio::test]
async fn a_failed_renewal_stops_the_work_until_the_lease_is_confirmed_again() {
    let api = LeaseApi::default();
    let (reports, mut seen) = mpsc::unbounded_channel();
    let (working, most) = Default::default();
    let a = replica(&api, "pod-a", &reports, &working, &most);
    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), true));

    // The API server goes down: pod-a cannot prove it still holds the Lease.
    api.failing.store(true, Ordering::SeqCst);
    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), false));

    // It comes back: pod-a still holds the Lease (or takes it again) and works anew.
    api.failing.store(false, Ordering::SeqCst);
    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), true));
    assert_eq!(api.holder().as_deref(), Some("pod-a"));

    assert!(shut_down(a).await.is_ok());
    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), false));
}

#[tokio::test]
async fn two_replicas_never_work_at_once_and_hand_over_on_shutdown() {
    let api = LeaseApi::default();
    let (reports, mut seen) = mpsc::unbounded_channel();
    let (working, most) = Default::default();
    let a = replica(&api, "pod-a", &reports, &working, &most);
    let b = replica(&api, "pod-b", &reports, &working, &most);

    let (first, started) = next(&mut seen).await;
    assert!(started);
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(
        seen.try_recv().is_err(),
        "no other start or stop while {first} leads"
    );
    assert_eq!(api.holder().as_deref(), Some(first.as_str()));

    let (leader, follower, second) = if first == "pod-a" {
        (a, b, "pod-b")
    } else {
        (b, a, "pod-a")
    };
    assert!(shut_down(leader).await.is_ok());
    assert_eq!(next(&mut seen).await, (first.clone(), false));
    assert_eq!(next(&mut seen).await, (second.to_owned(), true));
    assert_eq!(api.holder().as_deref(), Some(second));

    assert!(shut_down(follower).await.is_ok());
    assert_eq!(next(&mut seen).await, (second.to_owned(), false));
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "at most one replica worked at any time"
    );
}

#[tokio::test]
async fn work_that_ends_by_itself_releases_the_lease() {
    let api = LeaseApi::default();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let result = tokio::time::timeout(
        Duration::from_secs(15),
        run_while_leader(
            api.client(),
            config("pod-a"),
            std::future::pending(),
            move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async {}
            },
        ),
    )
    .await
    .expect("returns once the work ends");
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(api.holder(), None);
}

#[tokio::test]
async fn refused_access_is_an_error_that_names_the_rbac_to_grant() {
    let api = LeaseApi {
        refuse: true,
        ..LeaseApi::default()
    };
    let result = tokio::time::timeout(
        Duration::from_secs(15),
        run_while_leader(
            api.client(),
            config("pod-a"),
            std::future::pending(),
            || async { panic!("no work without the Lease") },
        ),
    )
    .await
    .expect("a refusal is not retried");
    let err = result.expect_err("403 on the Lease");
    assert!(matches!(err, LeaderError::Forbidden { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with("leader election: access to Lease nbv-system/nbv-operator was refused"),
        "{message}"
    );
    assert!(message.ends_with("grant the operator's service account get, create and patch on leases (coordination.k8s.io) in namespace nbv-system"), "{message}");
}

#[tokio::test]
async fn invalid_durations_are_rejected_before_any_request() {
    let cases = [
        (
            Duration::from_secs(2),
            Duration::from_secs(2),
            "renew_every",
        ),
        (
            Duration::from_secs(1),
            Duration::from_secs(1),
            "lease_duration",
        ),
        (
            Duration::from_millis(2500),
            Duration::from_secs(1),
            "lease_duration",
        ),
        (Duration::from_secs(15), Duration::ZERO, "renew_every"),
    ];
    for (lease_duration, renew_every, field) in cases {
        let api = LeaseApi::default();
        let cfg = LeaderConfig {
            lease_duration,
            renew_every,
            ..config("pod-a")
        };
        let result = run_while_leader(api.client(), cfg, std::future::pending(), || async {}).await;
        match result {
            Err(LeaderError::InvalidConfig { field: got, .. }) => assert_eq!(got, field),
            other => panic!("{lease_duration:?}/{renew_every:?}: {other:?}"),
        }
        assert_eq!(api.requests.load(Ordering::SeqCst), 0);
    }
}

#[tokio::test]
async fn shutdown_while_following_returns_without_touching_the_leaders_lease() {
    let api = LeaseApi::default();
    let (reports, mut seen) = mpsc::unbounded_channel();
    let (working, most) = Default::default();
    let a = replica(&api, "pod-a", &reports, &working, &most);
    assert_eq!(next(&mut seen).await, ("pod-a".to_owned(), true));
    let b = replica(&api, "pod-b", &reports, &working, &most);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(shut_down(b).await.is_ok());
    assert_eq!(api.holder().as_deref(), Some("pod-a"));
    assert!(seen.try_recv().is_err(), "pod-b never worked");
    assert!(shut_down(a).await.is_ok());
}
