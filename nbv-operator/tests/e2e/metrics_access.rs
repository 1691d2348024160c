//! nbv's secure `/metrics` on the real API server: HTTPS with the certificate of
//! `--metrics-cert-dir`, and the metrics only to a bearer token whose user the API
//! server allows `get /metrics` (TokenReview, then SubjectAccessReview), as granted by
//! the shipped ClusterRole `nbv-metrics-reader`. The probes stay open to the kubelet.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Api, DeleteParams};
use serde_json::json;

use crate::support::cluster::token_of;
use crate::support::git::tempdir;
use crate::support::objects::{apply, repository, yaml_documents};
use crate::support::openshift::server::certificates;
use crate::support::{OperatorOptions, Scenario, eventually};

/// A directory with a CA (`ca.crt`) and, signed by it for 127.0.0.1, the certificate
/// and key nbv reads (`tls.crt`, `tls.key`).
pub fn metrics_certificate() -> PathBuf {
    let dir = tempdir("metrics-tls");
    certificates(&dir);
    std::fs::copy(dir.join("server.crt"), dir.join("tls.crt")).expect("tls.crt");
    std::fs::copy(dir.join("server.key"), dir.join("tls.key")).expect("tls.key");
    dir
}

/// Binds the shipped ClusterRole `nbv-metrics-reader` (installed from config/rbac) to
/// `user`, as a user binds it to Prometheus's service account.
pub async fn bind_metrics_reader(client: &kube::Client, name: &str, user: &str) {
    for doc in yaml_documents(&repository().join("config/rbac/metrics_reader_role.yaml")) {
        apply(client, &doc, None).await;
    }
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "nbv-metrics-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    });
    apply(client, &binding, None).await;
}

/// `curl` of `https://ADDR/PATH` trusting `ca`, with `token` if any: the HTTP status
/// (0 when no HTTP answer came) and the body.
fn curl(addr: SocketAddr, path: &str, ca: &Path, token: Option<&str>) -> (u16, String) {
    let mut command = Command::new("curl");
    command
        .args(["--silent", "--max-time", "10", "--cacert"])
        .arg(ca)
        .args(["--write-out", "\n%{http_code}"])
        .arg(format!("https://{addr}{path}"));
    if let Some(token) = token {
        command
            .arg("-H")
            .arg(format!("Authorization: Bearer {token}"));
    }
    let output = command
        .output()
        .expect("run curl (scripts/control-plane install)");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_owned())
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn metrics_are_served_over_https_only_to_a_token_allowed_to_get_them() {
    let s = Scenario::new("e2e-metrics-access").await;
    let audit = s.cluster.required_audit();
    let dir = metrics_certificate();
    let ca = dir.join("ca.crt");
    let operator = s.operator(&OperatorOptions {
        secure_metrics: Some(Some(dir.clone())),
        ..OperatorOptions::gitops_only(&s.namespace)
    });
    let addr = operator.metrics_addr();
    // The probes answer over HTTPS, without a token (the kubelet sends none).
    eventually("nbv to serve HTTPS", Duration::from_secs(30), || async {
        (curl(addr, "/healthz", &ca, None).0 == 200).then_some(())
    })
    .await;
    // Plain HTTP gets no answer.
    let plain = Command::new("curl")
        .args(["--silent", "--max-time", "5", "--write-out", "%{http_code}"])
        .arg(format!("http://{addr}/metrics"))
        .output()
        .expect("run curl");
    assert_eq!(String::from_utf8_lossy(&plain.stdout).trim(), "000");

    let (code, body) = curl(addr, "/metrics", &ca, None);
    assert_eq!(code, 401, "no token: {body}");
    let (code, body) = curl(addr, "/metrics", &ca, Some("not-a-token-the-server-knows"));
    assert_eq!(code, 401, "an unknown token: {body}");

    let hook = s
        .cluster
        .wait_hook_kubeconfig()
        .expect("the wait hook's identity");
    let token = token_of(hook);
    let (code, body) = curl(addr, "/metrics", &ca, Some(&token));
    assert_eq!(code, 403, "a user without the role: {body}");
    assert!(body.contains("nbv-metrics-reader"), "{body}");

    let mark = audit.mark();
    let binding = format!("{}-metrics-reader", s.namespace);
    bind_metrics_reader(&s.client, &binding, "system:serviceaccount:ml:nbv-wait").await;
    // A refusal is remembered for 10 s; then the binding counts.
    let body = eventually(
        "the bound user to read /metrics",
        Duration::from_secs(30),
        || async {
            let (code, body) = curl(addr, "/metrics", &ca, Some(&token));
            (code == 200).then_some(body)
        },
    )
    .await;
    assert!(body.contains("nbv_build_info"), "{body}");
    // An allowed token is remembered for a minute: more scrapes cost no review.
    for _ in 0..5 {
        assert_eq!(curl(addr, "/metrics", &ca, Some(&token)).0, 200);
    }
    let requests = audit.since(mark);
    let reviews = requests.count("create", "tokenreviews");
    let accesses = requests.count("create", "subjectaccessreviews");
    eprintln!(
        "after the binding: {reviews} TokenReview(s), {accesses} SubjectAccessReview(s) for 6+ scrapes"
    );
    assert!((1..=3).contains(&reviews), "{reviews} TokenReviews");
    assert!(
        (1..=3).contains(&accesses),
        "{accesses} SubjectAccessReviews"
    );

    // The administrator may read everything.
    let admin = token_of(s.cluster.admin_kubeconfig());
    assert_eq!(curl(addr, "/metrics", &ca, Some(&admin)).0, 200);

    let bindings: Api<ClusterRoleBinding> = Api::all(s.client.clone());
    let _ = bindings.delete(&binding, &DeleteParams::default()).await;
    s.report_requests("secure metrics");
}
