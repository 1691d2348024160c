//! HTTPS for the operator's endpoints: the certificate (a mounted one, or one made at
//! start), and a listener that hands axum connections whose TLS handshake is done.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take for its TLS handshake: a slow or silent one is dropped
/// and holds up nobody else (each handshake runs on its own task).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the endpoints' certificate could not be had.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// A file of the certificate directory could not be read.
    #[error("cannot read {path}: {source}; --metrics-cert-dir must hold tls.crt and tls.key (PEM)")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A file holds no usable PEM certificate or key.
    #[error("{path} holds no PEM {what}; --metrics-cert-dir must hold tls.crt and tls.key")]
    Pem {
        /// The file.
        path: PathBuf,
        /// `certificate` or `private key`.
        what: &'static str,
    },
    /// rustls refused the pair (a key that does not match the certificate, an unsupported
    /// key type).
    #[error("the certificate and key cannot serve TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// Making a certificate failed.
    #[error("cannot make a self-signed certificate: {0}")]
    Generate(#[from] rcgen::Error),
}

/// The TLS settings of the endpoints: the certificate and key of `dir` (`tls.crt`,
/// `tls.key`, as a `kubernetes.io/tls` Secret or OpenShift's service CA mounts them),
/// read again when they change (a renewed certificate needs no restart), else a
/// self-signed certificate for `names`, made now and kept in memory only.
///
/// # Errors
///
/// A file missing or unreadable, no PEM in it, or a pair rustls cannot use.
pub fn server_config(
    dir: Option<&Path>,
    names: &[String],
) -> Result<Arc<rustls::ServerConfig>, CertificateError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth();
    let mut config = match dir {
        Some(dir) => builder.with_cert_resolver(Arc::new(Reloading::new(dir, provider, RECHECK)?)),
        None => {
            let (chain, key) = self_signed(names)?;
            builder.with_single_cert(chain, key)?
        }
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// How often the certificate files are looked at for a change, at most.
const RECHECK: Duration = Duration::from_secs(10);

/// The certificate of a directory, read again at a handshake once its files changed
/// (a Secret volume swaps them at once). A pair that cannot be used keeps the last good
/// one in service, and says so in the log.
#[derive(Debug)]
struct Reloading {
    dir: PathBuf,
    provider: Arc<rustls::crypto::CryptoProvider>,
    recheck: Duration,
    state: std::sync::Mutex<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    key: Arc<rustls::sign::CertifiedKey>,
    stamp: Option<(SystemTime, SystemTime)>,
    checked: Instant,
}

impl Reloading {
    fn new(
        dir: &Path,
        provider: Arc<rustls::crypto::CryptoProvider>,
        recheck: Duration,
    ) -> Result<Self, CertificateError> {
        let stamp = stamp(dir);
        let key = certified(dir, &provider)?;
        Ok(Reloading {
            dir: dir.to_owned(),
            provider,
            recheck,
            state: std::sync::Mutex::new(Loaded {
                key,
                stamp,
                checked: Instant::now(),
            }),
        })
    }

    /// The certificate to serve now.
    fn current(&self) -> Arc<rustls::sign::CertifiedKey> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.checked.elapsed() >= self.recheck {
            state.checked = Instant::now();
            let now = stamp(&self.dir);
            if now != state.stamp {
                match certified(&self.dir, &self.provider) {
                    Ok(key) => {
                        tracing::info!(dir = %self.dir.display(), "the metrics certificate changed; serving the new one");
                        state.key = key;
                        state.stamp = now;
                    }
                    Err(error) => {
                        tracing::warn!(%error, "the metrics certificate changed but cannot be used; keeping the last one")
                    }
                }
            }
        }
        state.key.clone()
    }
}

impl rustls::server::ResolvesServerCert for Reloading {
    fn resolve(
        &self,
        _hello: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.current())
    }
}

/// When the two files last changed (`None` if either cannot be read).
fn stamp(dir: &Path) -> Option<(SystemTime, SystemTime)> {
    let modified = |name: &str| std::fs::metadata(dir.join(name)).ok()?.modified().ok();
    Some((modified("tls.crt")?, modified("tls.key")?))
}

fn certified(
    dir: &Path,
    provider: &rustls::crypto::CryptoProvider,
) -> Result<Arc<rustls::sign::CertifiedKey>, CertificateError> {
    let (chain, key) = read_pair(dir)?;
    Ok(Arc::new(rustls::sign::CertifiedKey::from_der(
        chain, key, provider,
    )?))
}

type Pair = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn read_pair(dir: &Path) -> Result<Pair, CertificateError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path)
            .map(|bytes| (path.clone(), bytes))
            .map_err(|source| CertificateError::Read { path, source })
    };
    let (cert_path, cert) = read("tls.crt")?;
    let (key_path, key) = read("tls.key")?;
    let chain: Vec<_> = CertificateDer::pem_slice_iter(&cert)
        .filter_map(Result::ok)
        .collect();
    if chain.is_empty() {
        return Err(CertificateError::Pem {
            path: cert_path,
            what: "certificate",
        });
    }
    let key = PrivateKeyDer::from_pem_slice(&key).map_err(|_| CertificateError::Pem {
        path: key_path,
        what: "private key",
    })?;
    Ok((chain, key))
}

fn self_signed(names: &[String]) -> Result<Pair, CertificateError> {
    let made = rcgen::generate_simple_self_signed(names.to_vec())?;
    let key = PrivateKeyDer::try_from(made.key_pair.serialize_der()).map_err(|_| {
        CertificateError::Pem {
            path: PathBuf::from("(generated)"),
            what: "private key",
        }
    })?;
    Ok((vec![made.cert.der().clone()], key))
}

/// A listener of TLS connections for `axum::serve`: TCP connections are accepted on
/// one task, each handshake runs on a task of its own (bounded by
/// [`HANDSHAKE_TIMEOUT`]), and `accept` returns the connections whose handshake
/// succeeded. A failed handshake (a plain-HTTP client, a port scan) is dropped.
pub struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Serves TLS with `config` on `listener`.
    ///
    /// # Errors
    ///
    /// The listener's own address cannot be read.
    pub fn new(listener: TcpListener, config: Arc<rustls::ServerConfig>) -> io::Result<Self> {
        let local = listener.local_addr()?;
        let (done, ready) = mpsc::channel(64);
        let acceptor = TlsAcceptor::from(config);
        let accepting = tokio::spawn(async move {
            loop {
                let (stream, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of file descriptors and the like: pause rather than spin.
                        tracing::warn!(%error, "accepting a connection to the metrics endpoint failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let (acceptor, done) = (acceptor.clone(), done.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = done.send((tls, peer)).await;
                        }
                        Ok(Err(error)) => {
                            tracing::debug!(%error, %peer, "TLS handshake failed");
                        }
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener {
            local,
            ready,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accepting task never ends while the listener lives.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{CertificateError, Reloading, server_config};

    #[test]
    fn without_a_directory_a_self_signed_certificate_is_made() {
        let names = ["nbv-operator-metrics.nbv-system.svc".to_owned()];
        let config = server_config(None, &names).expect("a self-signed certificate");
        assert_eq!(config.alpn_protocols, [b"http/1.1".to_vec()]);
    }

    #[test]
    fn a_directory_without_the_pair_names_the_file_and_the_flag() {
        let dir = std::env::temp_dir().join(format!("nbv-tls-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let error = server_config(Some(&dir), &[]).unwrap_err();
        assert!(matches!(error, CertificateError::Read { .. }), "{error}");
        let text = error.to_string();
        assert!(
            text.contains("tls.crt") && text.contains("--metrics-cert-dir"),
            "{text}"
        );

        std::fs::write(dir.join("tls.crt"), "not PEM").unwrap();
        std::fs::write(dir.join("tls.key"), "not PEM").unwrap();
        let error = server_config(Some(&dir), &[]).unwrap_err();
        assert!(
            matches!(
                error,
                CertificateError::Pem {
                    what: "certificate",
                    ..
                }
            ),
            "{error}"
        );

        // A certificate and key that do not belong together.
        let made = rcgen::generate_simple_self_signed(vec!["a".to_owned()]).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["b".to_owned()]).unwrap();
        std::fs::write(dir.join("tls.crt"), made.cert.pem()).unwrap();
        std::fs::write(dir.join("tls.key"), other.key_pair.serialize_pem()).unwrap();
        assert!(server_config(Some(&dir), &[]).is_err());

        std::fs::write(dir.join("tls.key"), made.key_pair.serialize_pem()).unwrap();
        server_config(Some(&dir), &[]).expect("a matching pair");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_renewed_certificate_is_served_and_a_broken_one_is_not() {
        let dir = std::env::temp_dir().join(format!("nbv-tls-reload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |made: &rcgen::CertifiedKey| {
            std::fs::write(dir.join("tls.crt"), made.cert.pem()).unwrap();
            std::fs::write(dir.join("tls.key"), made.key_pair.serialize_pem()).unwrap();
        };
        let first = rcgen::generate_simple_self_signed(vec!["first".to_owned()]).unwrap();
        write(&first);
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let reloading = Reloading::new(&dir, provider, Duration::ZERO).unwrap();
        assert_eq!(reloading.current().cert[0], *first.cert.der());

        // File times have a coarse resolution on some file systems.
        std::thread::sleep(Duration::from_millis(1100));
        let second = rcgen::generate_simple_self_signed(vec!["second".to_owned()]).unwrap();
        write(&second);
        assert_eq!(
            reloading.current().cert[0],
            *second.cert.der(),
            "the renewed one"
        );

        std::thread::sleep(Duration::from_millis(1100));
        std::fs::write(dir.join("tls.key"), "not PEM").unwrap();
        assert_eq!(
            reloading.current().cert[0],
            *second.cert.der(),
            "the last good one"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
