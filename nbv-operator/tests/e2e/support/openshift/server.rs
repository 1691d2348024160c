//! The webhooks' HTTPS server on loopback, with a certificate of its own CA (made with
//! `openssl`, as `scripts/control-plane` makes the API server's). It runs on a thread
//! and runtime of its own for the whole test process: each test has its own runtime,
//! and the webhooks must outlive the test that started them.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use serde_json::Value;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::review::{self, Hook};
use super::scc::Allocation;
use crate::support::cluster::client_for;
use crate::support::git::tempdir;

/// A running server: where it listens, and the CA the API server must trust.
pub struct Server {
    /// `https://127.0.0.1:PORT`.
    pub url: String,
    /// The CA's certificate, PEM.
    pub ca: Vec<u8>,
}

/// Starts the server; the API server reaches it with the administrator's kubeconfig's
/// rights to read namespaces.
pub fn start(admin_kubeconfig: &Path) -> Server {
    let dir = tempdir("webhooks");
    certificates(&dir);
    let acceptor = acceptor(&dir);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the webhooks' port");
    listener.set_nonblocking(true).expect("non-blocking");
    let addr: SocketAddr = listener.local_addr().expect("the webhooks' address");
    let kubeconfig = admin_kubeconfig.to_owned();
    std::thread::Builder::new()
        .name("e2e-webhooks".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the webhooks' runtime");
            runtime.block_on(serve(listener, acceptor, kubeconfig));
        })
        .expect("the webhooks' thread");
    let ca = std::fs::read(dir.join("ca.crt")).expect("the webhooks' CA");
    // Everything is in memory now; keys do not outlive their use.
    let _ = std::fs::remove_dir_all(&dir);
    Server {
        url: format!("https://{addr}"),
        ca,
    }
}

async fn serve(listener: std::net::TcpListener, acceptor: TlsAcceptor, kubeconfig: PathBuf) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
    let client = client_for(&kubeconfig).await;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (acceptor, client) = (acceptor.clone(), client.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let service = hyper::service::service_fn(move |request| {
                let client = client.clone();
                async move { Ok::<_, hyper::Error>(handle(&client, request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

async fn handle(client: &kube::Client, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let Some(hook) = Hook::at(request.uri().path()) else {
        return reply(
            StatusCode::NOT_FOUND,
            Bytes::from_static(b"no such webhook"),
        );
    };
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => return reply(StatusCode::BAD_REQUEST, Bytes::from(e.to_string())),
    };
    let review: Value = match serde_json::from_slice(&body) {
        Ok(review) => review,
        Err(e) => return reply(StatusCode::BAD_REQUEST, Bytes::from(e.to_string())),
    };
    let allocation = match hook {
        Hook::DisallowLatestTag | Hook::SidecarInjector => Err(String::new()),
        Hook::SccMutate | Hook::SccValidate => allocation(client, review::namespace(&review)).await,
    };
    let answer = review::answer(hook, &review, allocation);
    reply(StatusCode::OK, Bytes::from(answer.to_string()))
}

/// The namespace's allocation, from its annotations.
async fn allocation(client: &kube::Client, namespace: &str) -> Result<Allocation, String> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = namespaces
        .get(namespace)
        .await
        .map_err(|e| format!("error fetching namespace {namespace:?}: {e}"))?;
    Allocation::from_annotations(&ns.metadata.annotations.unwrap_or_else(BTreeMap::new))
}

fn reply(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// A CA and a certificate for 127.0.0.1 signed by it, in `dir`.
pub fn certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let output = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("run openssl");
        assert!(
            output.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    openssl(
        &[
            &[
                "req",
                "-x509",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=nbv-e2e-webhooks-ca",
            ][..],
            &ec,
            &["-keyout", "ca.key", "-out", "ca.crt"],
            &["-addext", "basicConstraints=critical,CA:TRUE"],
            &["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req", "-nodes", "-subj", "/CN=nbv-e2e-webhooks"][..],
            &ec,
            &["-keyout", "server.key", "-out", "server.csr"],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n\
         extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n",
    )
    .expect("write server.ext");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        "-out",
        "server.crt",
    ]);
}

pub fn acceptor(dir: &Path) -> TlsAcceptor {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("server.crt"))
        .expect("read server.crt")
        .collect::<Result<_, _>>()
        .expect("parse server.crt");
    let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).expect("read server.key");
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("the webhooks' certificate");
    TlsAcceptor::from(Arc::new(config))
}
