//! The HTTP endpoints, over a real TCP connection on 127.0.0.1.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use nbv_core::api::Phase;
use nbv_operator::operator::metrics::Metrics;
use nbv_operator::operator::server::{OPENMETRICS_CONTENT_TYPE, Readiness, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A response as read off the wire.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Sends one HTTP/1.1 request and reads the response until the server closes.
async fn request(addr: SocketAddr, method: &str, path: &str) -> Reply {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let request = format!("{method} {path} HTTP/1.1\r\nHost: nbv\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    let raw = String::from_utf8(raw).expect("UTF-8 response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.lines();
    let status_line = lines.next().expect("a status line");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status code");
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_owned(),
    }
}

struct Running {
    addr: SocketAddr,
    readiness: Readiness,
    metrics: Arc<Metrics>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

async fn start() -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local address");
    let readiness = Readiness::default();
    let metrics = Arc::new(Metrics::new());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(
        listener,
        Arc::clone(&metrics),
        readiness.clone(),
        async move {
            let _ = stopped.await;
        },
    ));
    Running {
        addr,
        readiness,
        metrics,
        stop,
        task,
    }
}

#[tokio::test]
async fn healthz_answers_ok_while_the_process_runs() {
    let server = start().await;
    let reply = request(server.addr, "GET", "/healthz").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, "ok\n");
}

#[tokio::test]
async fn readyz_flips_from_503_to_200_and_back() {
    let server = start().await;
    let before = request(server.addr, "GET", "/readyz").await;
    assert_eq!((before.status, before.body.as_str()), (503, "not ready\n"));

    server.readiness.set_ready(true);
    let ready = request(server.addr, "GET", "/readyz").await;
    assert_eq!((ready.status, ready.body.as_str()), (200, "ready\n"));

    server.readiness.set_ready(false);
    assert_eq!(request(server.addr, "GET", "/readyz").await.status, 503);
}

#[tokio::test]
async fn metrics_are_served_as_openmetrics_text() {
    let server = start().await;
    server
        .metrics
        .validation_finished(Phase::Succeeded, Some(Duration::from_secs(30)));
    let reply = request(server.addr, "GET", "/metrics").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some(OPENMETRICS_CONTENT_TYPE));
    assert!(
        reply
            .body
            .contains("notebook_validation_total{phase=\"Succeeded\"} 1\n"),
        "{}",
        reply.body
    );
    assert!(reply.body.ends_with("# EOF\n"));
}

#[tokio::test]
async fn other_paths_are_not_found_and_other_methods_not_allowed() {
    let server = start().await;
    for path in ["/", "/metrics/", "/healthz/x", "/debug/pprof"] {
        assert_eq!(
            request(server.addr, "GET", path).await.status,
            404,
            "{path}"
        );
    }
    assert_eq!(request(server.addr, "POST", "/metrics").await.status, 405);
    assert_eq!(request(server.addr, "DELETE", "/readyz").await.status, 405);
}

#[tokio::test]
async fn shutdown_ends_serve_and_closes_the_port() {
    let server = start().await;
    assert_eq!(request(server.addr, "GET", "/healthz").await.status, 200);
    server
        .stop
        .send(())
        .expect("the server is listening for the signal");
    let ended = tokio::time::timeout(Duration::from_secs(10), server.task)
        .await
        .expect("serve returns after the shutdown signal")
        .expect("the task did not panic");
    assert!(ended.is_ok(), "{ended:?}");
    assert!(TcpStream::connect(server.addr).await.is_err());
}
