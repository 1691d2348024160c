//! Debian's Prometheus server on loopback, scraping `nbv run` and loading nbv's alert
//! rules (`config/monitoring/promtool/nbv.rules.yaml`), and its HTTP API.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::objects::repository;
use super::operator::http_get;
use super::process::{dies_with_the_test, free_port};

/// A running `prometheus`, killed when dropped (and when the test process dies).
pub struct Prometheus {
    child: Child,
    addr: SocketAddr,
    dir: PathBuf,
}

/// `text` percent-encoded for a URL query.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// nbv's rules with every `for` set to `0s`: the expressions are what a real
/// Prometheus evaluates here; how long they must hold is promtool's to test
/// (`config/monitoring/promtool/nbv.rules.test.yaml`), not worth minutes of this suite.
fn rules_without_delays() -> String {
    let path = repository().join("config/monitoring/promtool/nbv.rules.yaml");
    let text = std::fs::read_to_string(&path).expect("the rule file");
    let mut rules: Value = serde_yaml_ng::from_str(&text).expect("the rule file is YAML");
    for group in rules["groups"].as_array_mut().expect("groups") {
        for rule in group["rules"].as_array_mut().expect("rules") {
            if rule.get("for").is_some() {
                rule["for"] = Value::from("0s");
            }
        }
    }
    serde_yaml_ng::to_string(&rules).expect("YAML")
}

impl Prometheus {
    /// Starts Prometheus scraping `target` every second as job `nbv-operator-metrics`
    /// (the name the ServiceMonitor gives it), evaluating the rules every second. It
    /// scrapes as the Prometheus Operator does from nbv's ServiceMonitor: over HTTPS
    /// (trusting the CA of `ca_file`) with the bearer token `token`.
    /// Panics, saying how to install it, when `prometheus` is not installed.
    pub fn start_secure(target: SocketAddr, token: &str, ca_file: &Path) -> Prometheus {
        let secure = [
            "    scheme: https".to_owned(),
            "    authorization:".to_owned(),
            format!("      credentials: {token}"),
            "    tls_config:".to_owned(),
            format!("      ca_file: {}", ca_file.display()),
        ]
        .map(|line| line + "\n")
        .concat();
        let binary = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .expect("the Prometheus scenario needs Debian's prometheus: run scripts/monitoring-tools install");
        let port = free_port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let dir =
            std::env::temp_dir().join(format!("nbv-e2e-prometheus-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("Prometheus's directory");
        std::fs::write(dir.join("nbv.rules.yaml"), rules_without_delays()).expect("rules");
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - {rules}\n\
             scrape_configs:\n  - job_name: nbv-operator-metrics\n{secure}    static_configs:\n      - targets: ['{target}']\n",
            rules = dir.join("nbv.rules.yaml").display()
        );
        std::fs::write(dir.join("prometheus.yml"), config).expect("config");
        let log = std::fs::File::create(dir.join("prometheus.log")).expect("log");
        let mut command = Command::new(binary);
        command
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log);
        dies_with_the_test(&mut command);
        let child = command.spawn().expect("start prometheus");
        Prometheus { child, addr, dir }
    }

    /// `GET path` of the HTTP API, as JSON, once it answers.
    async fn get(&self, path: &str) -> Value {
        for _ in 0..100 {
            if let Some(body) = http_get(self.addr, path)
                && let Ok(value) = serde_json::from_str::<Value>(&body)
            {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("Prometheus did not answer {path}; its log:\n{}", self.log());
    }

    /// The result of an instant query (`data.result`); panics on a query error.
    pub async fn query(&self, promql: &str) -> Vec<Value> {
        let answer = self
            .get(&format!("/api/v1/query?query={}", encode(promql)))
            .await;
        assert_eq!(answer["status"], "success", "query {promql:?}: {answer}");
        answer["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The alerts in state `firing`, by name.
    pub async fn firing(&self) -> Vec<String> {
        let answer = self.get("/api/v1/alerts").await;
        answer["data"]["alerts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| a["state"] == "firing")
            .filter_map(|a| a["labels"]["alertname"].as_str().map(str::to_owned))
            .collect()
    }

    /// The health of its scrape targets (`up`, `down`, `unknown`).
    pub async fn target_health(&self) -> Vec<String> {
        let answer = self.get("/api/v1/targets").await;
        answer["data"]["activeTargets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["health"].as_str().map(str::to_owned))
            .collect()
    }

    /// The last lines of its log.
    pub fn log(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- log of prometheus ---\n{}", self.log());
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
