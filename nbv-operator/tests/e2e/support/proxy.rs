//! A fault-injecting proxy between one `nbv run` and the API server, on loopback.
//!
//! nbv reaches it with a kubeconfig of its own ([`Proxy::kubeconfig`]: the proxy's
//! address, a CA of the proxy's, nbv's token), so the real binary runs behind it as
//! it would behind any network. The proxy terminates TLS with a certificate of that
//! CA and sends each request on to the API server over TLS as a client, so it can
//! fault both layers:
//!
//! - **TCP**, below its TLS: [`Proxy::reset`] aborts every open connection with an RST;
//!   [`Proxy::stall`] stops the bytes of one direction (or both) of every connection,
//!   mid-stream, until released; [`Proxy::throttle`] lets through a few hundred bytes
//!   at a time; [`Proxy::partition`] stalls every connection, old and new, both ways
//!   (connections still open when it [`heal`](Proxy::heal)s go on with what was
//!   queued, as TCP would deliver it).
//! - **HTTP**, per request ([`Rule`]): an answer of its own (429 with `Retry-After`,
//!   500, 503) without asking the API server; a watch ended at once by an `ERROR`
//!   event of `410 Gone` (an expired resourceVersion, as the API server says it), or
//!   answered and then left silent (a watch whose connection stalled); the
//!   request carried out and its answer held back for a while (past the client's
//!   deadline) or lost with the connection (an RST after the API server acted); or the
//!   request taken and never sent on or answered.
//!
//! Each replica of nbv gets its own proxy, so one can be partitioned alone. The API
//! server sees nbv's own token, so its audit log records nbv's requests as nbv's: the
//! witness of what really reached it.

use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, watch};
use tokio::time::Sleep;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;

use super::cluster::{Cluster, token_of};
use super::git::tempdir;
use super::openshift::server::{acceptor, certificates};

/// A direction of the bytes on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From nbv to the API server (requests).
    Up,
    /// From the API server to nbv (answers, watch events).
    Down,
    /// Both.
    Both,
}

/// What a [`Rule`] does to a request it matches.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answers `code` itself (with `Retry-After: retry_after` seconds if given); the
    /// API server never sees the request.
    Status {
        /// The HTTP status.
        code: u16,
        /// `Retry-After`, in seconds.
        retry_after: Option<u64>,
    },
    /// Answers a watch with one `ERROR` event of `410 Gone` (`Expired`), and ends it.
    Gone,
    /// Sends the request on and, once the API server has answered, resets the
    /// connection instead of passing the answer on: the request took effect, nbv
    /// does not know it.
    ResetAfterForward,
    /// Sends the request on and holds the answer back for this long.
    DelayAnswer(Duration),
    /// Takes the request and never sends it on or answers it.
    Hang,
    /// Answers a watch with a `200` and then nothing, ever: a watch whose connection
    /// stalled without closing.
    Silent,
    /// Sends the request on with its API group (`/apis/GROUP/...`) replaced by one no
    /// API server serves, and passes the API server's own answer back: the cluster
    /// does not serve the group, as nbv sees it. It is sent as the administrator:
    /// RBAC authorizes a group by its name, served or not, and nbv's role names the
    /// real group, not the stand-in's, so nbv's own token would get a 403 where a
    /// cluster without the group answers 404.
    Unserved,
}

/// The group [`Fault::Unserved`] sends requests to: `.invalid` is never registered.
const UNSERVED_GROUP: &str = "unserved.e2e.invalid";

/// A fault for some requests: the first `times` requests whose method is `method`
/// (any if `None`), whose path contains `path`, and which are (or are not) watches.
#[derive(Clone, Debug)]
pub struct Rule {
    method: Option<Method>,
    path: String,
    watch: Option<bool>,
    times: usize,
    fault: Fault,
    /// What it matched, for the report.
    name: String,
}

impl Rule {
    /// Requests with `method` (any if `None`) whose path contains `path`, once.
    pub fn on(method: Option<Method>, path: impl Into<String>, fault: Fault) -> Rule {
        let path = path.into();
        Rule {
            name: format!(
                "{} {path}: {fault:?}",
                method.as_ref().map_or("*", Method::as_str)
            ),
            method,
            path,
            watch: None,
            times: 1,
            fault,
        }
    }

    /// Only watches (`true`) or only other requests (`false`).
    pub fn watch(mut self, watch: bool) -> Rule {
        self.watch = Some(watch);
        self
    }

    /// For the first `times` matching requests.
    pub fn times(mut self, times: usize) -> Rule {
        self.times = times;
        self
    }

    fn matches(&self, method: &Method, path: &str, watch: bool) -> bool {
        self.times > 0
            && self.method.as_ref().is_none_or(|m| m == method)
            && path.contains(&self.path)
            && self.watch.is_none_or(|w| w == watch)
    }
}

/// The state of the wire, shared by every connection.
#[derive(Clone, Copy, Debug, Default)]
struct Wire {
    stall_up: bool,
    stall_down: bool,
    partitioned: bool,
    /// The pause after each write towards nbv, when throttled.
    throttle: Option<Duration>,
}

impl Wire {
    fn blocks(&self, direction: Direction) -> bool {
        self.partitioned
            || match direction {
                Direction::Up => self.stall_up,
                Direction::Down => self.stall_down,
                Direction::Both => self.stall_up || self.stall_down,
            }
    }
}

struct Shared {
    wire: Mutex<Wire>,
    rules: Mutex<Vec<Rule>>,
    resets: watch::Sender<u64>,
    /// Each fault applied: when (since the start) and what.
    applied: Mutex<Vec<(Duration, String)>>,
    started: Instant,
}

impl Shared {
    fn wire(&self) -> Wire {
        *self.wire.lock().unwrap()
    }

    fn record(&self, what: String) {
        let at = self.started.elapsed();
        eprintln!("proxy, {:>6.1} s: {what}", at.as_secs_f64());
        self.applied.lock().unwrap().push((at, what));
    }

    /// The fault for a request, using up one of its rule's `times`.
    fn fault_for(&self, method: &Method, path: &str, watch: bool) -> Option<Fault> {
        let mut rules = self.rules.lock().unwrap();
        let rule = rules.iter_mut().find(|r| r.matches(method, path, watch))?;
        rule.times -= 1;
        let fault = rule.fault.clone();
        drop(rules);
        self.record(format!("{fault:?} for {method} {path}"));
        Some(fault)
    }
}

/// A running proxy. Dropping it stops it and closes every connection.
pub struct Proxy {
    shared: Arc<Shared>,
    kubeconfig: PathBuf,
    dir: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Proxy {
    /// Starts a proxy in front of `cluster`'s API server for nbv's kubeconfig.
    pub fn start(cluster: &Cluster) -> Proxy {
        let operator =
            std::fs::read_to_string(cluster.operator_kubeconfig()).expect("read nbv's kubeconfig");
        let field = |key: &str| {
            operator
                .lines()
                .find_map(|l| l.trim().strip_prefix(key).map(str::trim))
                .unwrap_or_else(|| panic!("no `{key}` in nbv's kubeconfig"))
                .to_owned()
        };
        let upstream: http::Uri = field("server:").parse().expect("the API server's URL");
        let upstream_ca = PathBuf::from(field("certificate-authority:"));
        let admin_token = token_of(cluster.admin_kubeconfig());
        let dir = tempdir("proxy");
        certificates(&dir);
        let tls = acceptor(&dir);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the proxy's port");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("the proxy's address");
        let kubeconfig = dir.join("kubeconfig");
        let ours = operator
            .lines()
            .map(|l| {
                let indent = &l[..l.len() - l.trim_start().len()];
                if l.trim_start().starts_with("server:") {
                    format!("{indent}server: https://{addr}")
                } else if l.trim_start().starts_with("certificate-authority:") {
                    format!(
                        "{indent}certificate-authority: {}",
                        dir.join("ca.crt").display()
                    )
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&kubeconfig, ours + "\n").expect("write the proxy's kubeconfig");
        let shared = Arc::new(Shared {
            wire: Mutex::default(),
            rules: Mutex::default(),
            resets: watch::channel(0).0,
            applied: Mutex::default(),
            started: Instant::now(),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let state = shared.clone();
        std::thread::Builder::new()
            .name("e2e-proxy".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("the proxy's runtime");
                runtime.block_on(async move {
                    let upstream = Upstream::new(upstream, &upstream_ca, admin_token);
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                    tokio::select! {
                        () = serve(listener, tls, state, upstream) => {}
                        _ = stopped => {}
                    }
                });
                // Dropping the runtime drops every connection.
                runtime.shutdown_background();
            })
            .expect("the proxy's thread");
        Proxy {
            shared,
            kubeconfig,
            dir,
            stop: Some(stop),
        }
    }

    /// The kubeconfig that sends nbv through the proxy.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Adds a rule for the requests to come.
    pub fn inject(&self, rule: Rule) {
        self.shared.record(format!("armed {}", rule.name));
        self.shared.rules.lock().unwrap().push(rule);
    }

    /// The rules not used up yet, by name and times left.
    pub fn unused(&self) -> Vec<(String, usize)> {
        self.shared
            .rules
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.times > 0)
            .map(|r| (r.name.clone(), r.times))
            .collect()
    }

    /// Drops every rule (their faults stop).
    pub fn clear_rules(&self) {
        self.shared.rules.lock().unwrap().clear();
        self.shared.record("rules cleared".to_owned());
    }

    /// Every fault applied so far, with when (since the proxy started).
    pub fn applied(&self) -> Vec<(Duration, String)> {
        self.shared.applied.lock().unwrap().clone()
    }

    /// Aborts every open connection with an RST.
    pub fn reset(&self) {
        self.shared.record("reset every connection".to_owned());
        self.shared.resets.send_modify(|n| *n += 1);
    }

    /// Stops (`true`) or lets through again (`false`) the bytes going `direction`.
    pub fn stall(&self, direction: Direction, stalled: bool) {
        {
            let mut wire = self.shared.wire.lock().unwrap();
            if matches!(direction, Direction::Up | Direction::Both) {
                wire.stall_up = stalled;
            }
            if matches!(direction, Direction::Down | Direction::Both) {
                wire.stall_down = stalled;
            }
        }
        self.shared.record(format!(
            "{} {direction:?}",
            if stalled { "stall" } else { "release" }
        ));
    }

    /// Slows the answers down to about 512 bytes per `pause` (`None`: full speed).
    pub fn throttle(&self, pause: Option<Duration>) {
        self.shared.wire.lock().unwrap().throttle = pause;
        self.shared.record(format!("throttle {pause:?}"));
    }

    /// Cuts nbv off from the API server: nothing passes on any connection, old or new.
    pub fn partition(&self) {
        self.shared.wire.lock().unwrap().partitioned = true;
        self.shared.record("partition".to_owned());
    }

    /// Ends the partition.
    pub fn heal(&self) {
        self.shared.wire.lock().unwrap().partitioned = false;
        self.shared.record("heal".to_owned());
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The API server, as the proxy's client reaches it.
#[derive(Clone)]
struct Upstream {
    base: http::Uri,
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// `Authorization` of the administrator ([`Fault::Unserved`]).
    admin: http::HeaderValue,
}

impl Upstream {
    fn new(base: http::Uri, ca: &Path, admin_token: String) -> Upstream {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(ca).expect("read the API server's CA") {
            roots
                .add(cert.expect("parse the API server's CA"))
                .expect("trust the API server's CA");
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_only()
            .enable_http1()
            .build();
        Upstream {
            base,
            client: Client::builder(TokioExecutor::new()).build(connector),
            admin: format!("Bearer {admin_token}")
                .parse()
                .expect("a header value"),
        }
    }

    async fn send(
        &self,
        parts: http::request::Parts,
        body: Bytes,
    ) -> Result<Response<Incoming>, String> {
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let uri = format!("{}{}", self.base.to_string().trim_end_matches('/'), path);
        let mut request = Request::builder().method(parts.method).uri(uri);
        for (name, value) in &parts.headers {
            if !is_hop_by_hop(name) {
                request = request.header(name, value);
            }
        }
        let request = request.body(Full::new(body)).map_err(|e| e.to_string())?;
        self.client
            .request(request)
            .await
            .map_err(|e| e.to_string())
    }
}

fn is_hop_by_hop(name: &http::HeaderName) -> bool {
    matches!(
        name.as_str(),
        "host" | "connection" | "keep-alive" | "transfer-encoding" | "upgrade" | "te"
    )
}

type Answer = Response<BoxBody<Bytes, hyper::Error>>;

async fn serve(
    listener: tokio::net::TcpListener,
    tls: TlsAcceptor,
    shared: Arc<Shared>,
    upstream: Upstream,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (tls, shared, upstream) = (tls.clone(), shared.clone(), upstream.clone());
        tokio::spawn(connection(stream, tls, shared, upstream));
    }
}

/// One connection from nbv, until it closes or is reset.
async fn connection(stream: TcpStream, tls: TlsAcceptor, shared: Arc<Shared>, upstream: Upstream) {
    let _ = stream.set_nodelay(true);
    let fd = stream.as_raw_fd();
    let mut resets = shared.resets.subscribe();
    let kill = Arc::new(Notify::new());
    let io = FaultyIo::new(stream, shared.clone());
    let served = {
        let (shared, kill) = (shared.clone(), kill.clone());
        async move {
            let Ok(tls) = tls.accept(io).await else {
                return;
            };
            let service = hyper::service::service_fn(move |request| {
                let (shared, upstream, kill) = (shared.clone(), upstream.clone(), kill.clone());
                async move { Ok::<_, hyper::Error>(handle(&shared, &upstream, &kill, request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
        }
    };
    let mut served = Box::pin(served);
    tokio::select! {
        () = &mut served => return,
        _ = resets.changed() => {}
        () = kill.notified() => {}
    }
    // An RST, not a FIN: linger 0, then close (dropping the connection's future drops
    // the socket, and with it whatever nbv sent that is still queued).
    abort(fd);
    drop(served);
}

/// SO_LINGER 0 on `fd`: closing it sends an RST.
fn abort(fd: RawFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `fd` is the socket of a connection still owned (open) by the caller.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

async fn handle(
    shared: &Shared,
    upstream: &Upstream,
    kill: &Notify,
    request: Request<Incoming>,
) -> Answer {
    let (mut parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let watch = parts
        .uri
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    let fault = shared.fault_for(&parts.method, &path, watch);
    let body = match body.collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return status(StatusCode::BAD_REQUEST, None, "unreadable request"),
    };
    match fault {
        Some(Fault::Status { code, retry_after }) => {
            let code = StatusCode::from_u16(code).expect("a status code");
            return status(code, retry_after, "injected by the e2e proxy");
        }
        Some(Fault::Gone) => return gone(),
        Some(Fault::Silent) => return silent(),
        Some(Fault::Hang) => std::future::pending::<()>().await,
        Some(Fault::Unserved) => {
            parts.uri = unserved(&parts.uri);
            let admin = upstream.admin.clone();
            parts.headers.insert(http::header::AUTHORIZATION, admin);
        }
        _ => {}
    }
    let answer = match upstream.send(parts, body).await {
        Ok(answer) => answer,
        Err(error) => {
            return status(StatusCode::BAD_GATEWAY, None, &error);
        }
    };
    match fault {
        Some(Fault::ResetAfterForward) => {
            kill.notify_one();
            std::future::pending::<()>().await;
        }
        Some(Fault::DelayAnswer(pause)) => tokio::time::sleep(pause).await,
        _ => {}
    }
    let (mut head, body) = answer.into_parts();
    for name in [
        "connection",
        "keep-alive",
        "transfer-encoding",
        "upgrade",
        "te",
    ] {
        head.headers.remove(name);
    }
    Response::from_parts(head, body.boxed())
}

/// `uri` with its API group replaced by [`UNSERVED_GROUP`]; any other path as it is.
fn unserved(uri: &http::Uri) -> http::Uri {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    match path
        .strip_prefix("/apis/")
        .and_then(|rest| rest.split_once('/'))
    {
        Some((_group, rest)) => format!("/apis/{UNSERVED_GROUP}/{rest}")
            .parse()
            .expect("a path"),
        None => uri.clone(),
    }
}

/// An error answer of the API server's shape (a `Status`).
fn status(code: StatusCode, retry_after: Option<u64>, message: &str) -> Answer {
    let reason = match code.as_u16() {
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        _ => "",
    };
    let body = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16(),
        "details": {"retryAfterSeconds": retry_after},
    });
    let mut answer = Response::new(full(body.to_string()));
    *answer.status_mut() = code;
    answer.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    if let Some(seconds) = retry_after {
        answer
            .headers_mut()
            .insert(http::header::RETRY_AFTER, seconds.into());
    }
    answer
}

/// A watch that ends with `410 Gone` as the API server sends it: a `200` whose only
/// event is an `ERROR` carrying the `Expired` Status.
fn gone() -> Answer {
    let event = serde_json::json!({"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 1 (2)", "reason": "Expired", "code": 410}});
    let mut answer = Response::new(full(format!("{event}\n")));
    answer.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    answer
}

/// A watch's `200` whose body never yields an event.
fn silent() -> Answer {
    let never = http_body_util::StreamBody::new(futures::stream::pending::<
        Result<hyper::body::Frame<Bytes>, hyper::Error>,
    >());
    let mut answer = Response::new(never.boxed());
    answer.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    answer
}

fn full(text: String) -> BoxBody<Bytes, hyper::Error> {
    Full::new(Bytes::from(text))
        .map_err(|never| match never {})
        .boxed()
}

/// A TCP connection whose bytes the wire's state stalls or slows.
struct FaultyIo {
    stream: TcpStream,
    shared: Arc<Shared>,
    /// Naps while a direction is stalled (the wire is looked at again after each).
    read_nap: Option<Pin<Box<Sleep>>>,
    write_nap: Option<Pin<Box<Sleep>>>,
}

/// How often a stalled connection looks at the wire again.
const NAP: Duration = Duration::from_millis(20);
/// The most bytes a throttled connection writes at once.
const THROTTLED_CHUNK: usize = 512;

impl FaultyIo {
    fn new(stream: TcpStream, shared: Arc<Shared>) -> FaultyIo {
        FaultyIo {
            stream,
            shared,
            read_nap: None,
            write_nap: None,
        }
    }
}

/// Pending until the nap in `slot` is over (then woken to look again).
fn nap(slot: &mut Option<Pin<Box<Sleep>>>, pause: Duration, cx: &mut Context<'_>) -> Poll<()> {
    let sleep = slot.get_or_insert_with(|| Box::pin(tokio::time::sleep(pause)));
    if sleep.as_mut().poll(cx).is_ready() {
        *slot = None;
        return Poll::Ready(());
    }
    Poll::Pending
}

impl AsyncRead for FaultyIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        while this.shared.wire().blocks(Direction::Up) {
            if nap(&mut this.read_nap, NAP, cx).is_pending() {
                return Poll::Pending;
            }
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for FaultyIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        loop {
            let wire = this.shared.wire();
            if wire.blocks(Direction::Down) {
                if nap(&mut this.write_nap, NAP, cx).is_pending() {
                    return Poll::Pending;
                }
                continue;
            }
            match wire.throttle {
                // The pause after the last write must be over first.
                Some(pause) if this.write_nap.is_some() => {
                    if nap(&mut this.write_nap, pause, cx).is_pending() {
                        return Poll::Pending;
                    }
                }
                Some(pause) => {
                    let chunk = &buf[..buf.len().min(THROTTLED_CHUNK)];
                    let written = Pin::new(&mut this.stream).poll_write(cx, chunk);
                    if matches!(written, Poll::Ready(Ok(_))) {
                        this.write_nap = Some(Box::pin(tokio::time::sleep(pause)));
                    }
                    return written;
                }
                None => {
                    this.write_nap = None;
                    return Pin::new(&mut this.stream).poll_write(cx, buf);
                }
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
