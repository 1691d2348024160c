//! `nbv wait` against a scripted API server: a real `kube::Client` and kube-runtime
//! watcher over a `tower_test` mock that answers the LIST and WATCH requests.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::channel::mpsc;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use nbv_core::api::Phase;
use nbv_operator::wait::{WaitArgs, WaitStatus, format_duration, parse_duration, wait};
use nbv_testkit::fixtures::JobBuilder;
use proptest::prelude::*;
use serde_json::{Value, json};

type Body = UnsyncBoxBody<Bytes, Infallible>;
type Handle = tower_test::mock::Handle<Request<kube::client::Body>, Response<Body>>;

/// One scripted answer, consumed in order.
enum Answer {
    /// A LIST answered with these jobs (one page) and this resourceVersion.
    List(Vec<Value>),
    /// A LIST page with a continue token: more pages follow.
    ListPage(Vec<Value>, &'static str),
    /// An error status for whatever was asked.
    Status(u16, &'static str),
    /// A WATCH whose events the test sends later; the body stays open.
    Watch(mpsc::UnboundedReceiver<Value>),
}

/// The requests the API server saw, as `METHOD path?query`.
type Log = Arc<Mutex<Vec<String>>>;

const JOBS_PATH: &str = "/apis/mlops.mlops.dev/v1alpha1/namespaces/ml/notebookvalidationjobs";

fn full(body: Value) -> Body {
    Full::new(Bytes::from(body.to_string())).boxed_unsync()
}

fn list_body(items: Vec<Value>, continue_token: Option<&str>) -> Value {
    let mut metadata = json!({"resourceVersion": "100"});
    if let Some(token) = continue_token {
        metadata["continue"] = json!(token);
    }
    json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1",
        "kind": "NotebookValidationJobList",
        "metadata": metadata,
        "items": items,
    })
}

/// Serves `answers` in order; once they run out, holds every request unanswered, as
/// an API server with nothing new to say.
fn api_server(mut handle: Handle, answers: Vec<Answer>) -> Log {
    let log = Log::default();
    let seen = Arc::clone(&log);
    tokio::spawn(async move {
        let mut answers = VecDeque::from(answers);
        let mut held = Vec::new();
        while let Some((request, respond)) = handle.next_request().await {
            let target = request
                .uri()
                .path_and_query()
                .map(ToString::to_string)
                .unwrap_or_default();
            if let Ok(mut log) = seen.lock() {
                log.push(format!("{} {target}", request.method()));
            }
            let watching = target.contains("watch=true");
            let response = match answers.pop_front() {
                Some(Answer::List(items)) if !watching => full(list_body(items, None)),
                Some(Answer::ListPage(items, token)) if !watching => {
                    full(list_body(items, Some(token)))
                }
                Some(Answer::Watch(events)) if watching => {
                    let lines = events
                        .map(|event| Ok(http_body::Frame::data(Bytes::from(format!("{event}\n")))));
                    StreamBody::new(lines).boxed_unsync()
                }
                Some(Answer::Status(code, reason)) => {
                    let status = json!({
                        "kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Failure", "reason": reason, "code": code,
                        "message": format!("notebookvalidationjobs.mlops.mlops.dev: {reason}"),
                    });
                    let mut response = Response::new(full(status));
                    *response.status_mut() =
                        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                    respond.send_response(response);
                    continue;
                }
                Some(_) => panic!("the script does not match request {target}"),
                None => {
                    held.push(respond);
                    continue;
                }
            };
            respond.send_response(Response::new(response));
        }
    });
    log
}

fn client(answers: Vec<Answer>) -> (kube::Client, Log) {
    let (service, handle) = tower_test::mock::pair::<Request<kube::client::Body>, Response<Body>>();
    let log = api_server(handle, answers);
    (kube::Client::new(service, "default"), log)
}

/// The job as the API server lists it.
fn listed(job: JobBuilder) -> Value {
    job.resource_version("1").build()
}

/// `ml/name`, in wave 3, blocking wave 4, its run in `phase`.
fn blocker(name: &str, phase: Phase) -> JobBuilder {
    JobBuilder::new("ml", name)
        .sync_wave(3)
        .block_wave(4)
        .phase(phase)
}

/// A blocker that completed its wave.
fn completed(name: &str) -> Value {
    listed(blocker(name, Phase::Succeeded).annotation("mlops.dev/wave-complete", "3"))
}

fn event(kind: &str, object: Value) -> Value {
    json!({"type": kind, "object": object})
}

/// Runs `nbv wait` for wave 4 in `ml` and returns the exit code and a transcript.
async fn run(client: kube::Client, timeout: Option<Duration>) -> (u8, String) {
    let args = WaitArgs {
        namespace: "ml".into(),
        wave: 4,
        timeout,
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    // A generous bound in virtual or real time: a wait that should have ended fails
    // the test instead of hanging it.
    let code = tokio::time::timeout(
        Duration::from_secs(24 * 3600),
        wait(client, &args, &mut out, &mut err),
    )
    .await
    .expect("nbv wait returned");
    let transcript = format!(
        "exit {code}\n--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&err)
    );
    (code, transcript)
}

fn lists(log: &Log) -> usize {
    log.lock()
        .map(|log| {
            log.iter()
                .filter(|r| r.starts_with("GET") && !r.contains("watch=true"))
                .count()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn opens_when_the_blocking_job_already_completed_its_wave() {
    let unrelated = listed(
        JobBuilder::new("ml", "lint")
            .sync_wave(1)
            .phase(Phase::Failed),
    );
    let (client, log) = client(vec![Answer::List(vec![completed("train"), unrelated])]);
    let (code, transcript) = run(client, None).await;
    assert_eq!(code, WaitStatus::Open.code(), "{transcript}");
    insta::assert_snapshot!(transcript);
    let log = log.lock().map(|l| l.clone()).unwrap_or_default();
    assert_eq!(log, [format!("GET {JOBS_PATH}?&limit=500")]);
}

#[tokio::test]
async fn opens_at_once_when_no_job_blocks_the_wave() {
    let other_wave = listed(
        JobBuilder::new("ml", "eval")
            .sync_wave(5)
            .block_wave(6)
            .phase(Phase::Failed),
    );
    let (client, _) = client(vec![Answer::List(vec![other_wave])]);
    let (code, transcript) = run(client, None).await;
    assert_eq!(code, 0, "{transcript}");
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn waits_then_opens_when_the_jobs_complete() {
    let (events, stream) = mpsc::unbounded();
    let (client, log) = client(vec![
        Answer::List(vec![listed(blocker("train", Phase::ValidationRunning))]),
        Answer::Watch(stream),
    ]);
    let script = [
        // Progress that changes nothing awaited prints nothing.
        event(
            "MODIFIED",
            listed(blocker("train", Phase::ValidationRunning).annotation("note", "x")),
        ),
        event("ADDED", listed(blocker("eval", Phase::Initializing))),
        event("MODIFIED", completed("train")),
        event("MODIFIED", completed("eval")),
    ];
    for event in script {
        events.unbounded_send(event).expect("the watch is open");
    }
    let (code, transcript) = run(client, None).await;
    assert_eq!(code, 0, "{transcript}");
    insta::assert_snapshot!(transcript);
    assert_eq!(lists(&log), 1, "a watch, not a loop of LISTs");
}

#[tokio::test]
async fn a_succeeded_job_without_its_wave_record_is_still_awaited() {
    let (events, stream) = mpsc::unbounded();
    let (client, _) = client(vec![
        Answer::List(vec![listed(
            blocker("train", Phase::Succeeded).annotation("mlops.dev/wave-complete", "2"),
        )]),
        Answer::Watch(stream),
    ]);
    events
        .unbounded_send(event("MODIFIED", completed("train")))
        .expect("the watch is open");
    let (code, transcript) = run(client, None).await;
    assert_eq!(code, 0, "{transcript}");
    assert!(
        transcript.contains("--- stdout\nwave 4 is waiting on 1 job: train\nwave 4 is open"),
        "{transcript}"
    );
}

#[tokio::test]
async fn deleting_the_last_blocking_job_opens_the_gate() {
    let (events, stream) = mpsc::unbounded();
    let (client, _) = client(vec![
        Answer::List(vec![listed(blocker("train", Phase::ValidationRunning))]),
        Answer::Watch(stream),
    ]);
    events
        .unbounded_send(event(
            "DELETED",
            listed(blocker("train", Phase::ValidationRunning)),
        ))
        .expect("the watch is open");
    let (code, transcript) = run(client, None).await;
    assert_eq!(code, 0, "{transcript}");
    assert!(
        transcript.ends_with("wave 4 is open: no job blocks it\n--- stderr\n"),
        "{transcript}"
    );
}

#[tokio::test]
async fn fails_fast_when_a_blocking_job_fails_its_wave() {
    let (events, stream) = mpsc::unbounded();
    let (client, _) = client(vec![
        Answer::List(vec![
            listed(blocker("train", Phase::ValidationRunning)),
            listed(blocker("eval", Phase::ValidationRunning)),
        ]),
        Answer::Watch(stream),
    ]);
    // The watch stays open after this event: only failing fast ends the wait.
    events
        .unbounded_send(event(
            "MODIFIED",
            listed(blocker("train", Phase::Failed).annotation("mlops.dev/wave-failed", "3")),
        ))
        .expect("the watch is open");
    let (code, transcript) = run(client, None).await;
    assert_eq!(code, WaitStatus::Failed.code(), "{transcript}");
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn an_unreadable_block_wave_fails_the_gate_safe() {
    let broken = listed(
        JobBuilder::new("ml", "train")
            .sync_wave(3)
            .block_wave("four"),
    );
    let missing_wave = listed(
        JobBuilder::new("ml", "eval")
            .block_wave(4)
            .phase(Phase::Succeeded),
    );
    let (client, _) = client(vec![Answer::List(vec![broken, missing_wave])]);
    let (code, transcript) = run(client, None).await;
    assert_eq!(code, 1, "{transcript}");
    insta::assert_snapshot!(transcript);
}

#[tokio::test(start_paused = true)]
async fn times_out_naming_the_jobs_still_awaited() {
    let (_events, stream) = mpsc::unbounded();
    let (client, _) = client(vec![
        Answer::List(vec![
            listed(blocker("train", Phase::ValidationRunning)),
            completed("eval"),
        ]),
        Answer::Watch(stream),
    ]);
    let started = tokio::time::Instant::now();
    let (code, transcript) = run(client, Some(Duration::from_secs(600))).await;
    assert_eq!(code, WaitStatus::TimedOut.code(), "{transcript}");
    assert_eq!(started.elapsed(), Duration::from_secs(600));
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn the_gate_is_not_evaluated_on_a_partial_list() {
    // The first page holds no blocking job: evaluating it alone would open the gate.
    let (_events, stream) = mpsc::unbounded();
    let (client, log) = client(vec![
        Answer::ListPage(
            vec![listed(
                JobBuilder::new("ml", "lint").phase(Phase::Succeeded),
            )],
            "page-2",
        ),
        Answer::List(vec![listed(blocker("train", Phase::ValidationRunning))]),
        Answer::Watch(stream),
    ]);
    let (code, transcript) = run(client, Some(Duration::from_secs(1))).await;
    assert_eq!(code, 2, "{transcript}");
    assert!(
        transcript.contains("--- stdout\nwave 4 is waiting on 1 job: train\n--- stderr"),
        "{transcript}"
    );
    let log = log.lock().map(|l| l.clone()).unwrap_or_default();
    assert_eq!(
        log[1],
        format!("GET {JOBS_PATH}?&limit=500&continue=page-2")
    );
}

#[tokio::test]
async fn refused_access_exits_3_with_the_rbac_to_grant() {
    let (client, _) = client(vec![Answer::Status(403, "Forbidden")]);
    let (code, transcript) = run(client, Some(Duration::from_secs(600))).await;
    assert_eq!(code, WaitStatus::Unreadable.code(), "{transcript}");
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn a_missing_crd_exits_3() {
    let (client, _) = client(vec![Answer::Status(404, "NotFound")]);
    let (code, transcript) = run(client, None).await;
    assert_eq!(code, 3, "{transcript}");
    assert!(
        transcript.contains("install the NotebookValidationJob CRD"),
        "{transcript}"
    );
}

#[tokio::test(start_paused = true)]
async fn transient_errors_are_reported_and_retried() {
    let (client, log) = client(vec![
        Answer::Status(500, "InternalError"),
        Answer::Status(429, "TooManyRequests"),
        Answer::List(vec![completed("train")]),
    ]);
    let (code, transcript) = run(client, Some(Duration::from_secs(600))).await;
    assert_eq!(code, 0, "{transcript}");
    insta::assert_snapshot!(transcript);
    assert_eq!(lists(&log), 3);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_before_any_list_names_the_last_error() {
    let answers = (0..100)
        .map(|_| Answer::Status(503, "ServiceUnavailable"))
        .collect();
    let (client, _) = client(answers);
    let (code, transcript) = run(client, Some(Duration::from_secs(5))).await;
    assert_eq!(code, 2, "{transcript}");
    let last = transcript.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("timed out after 5s before the jobs of namespace ml could be read; last error: cannot read"),
        "{transcript}"
    );
}

#[test]
fn durations_of_the_timeout_flag() {
    assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
    assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
    assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
    assert_eq!(
        parse_duration("1m30s250ms"),
        Ok(Duration::from_millis(90_250))
    );
    assert_eq!(parse_duration("0.5s"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    // Repeated and unordered units add up, as in Go.
    assert_eq!(parse_duration("1s1h1s"), Ok(Duration::from_secs(3602)));
    assert_eq!(parse_duration("0.0000000009s"), Ok(Duration::ZERO));
}

#[test]
fn rejected_durations_say_what_is_wrong() {
    let messages: Vec<String> = [
        "",
        "30",
        "s",
        "1.s",
        "1.5",
        "-1s",
        "1d",
        "1h 30m",
        "1µs",
        "99999999999999999999999h",
        ".5s",
    ]
    .iter()
    .map(|text| match parse_duration(text) {
        Ok(duration) => format!("{text:?} -> accepted as {duration:?}"),
        Err(err) => err.to_string(),
    })
    .collect();
    insta::assert_snapshot!(messages.join("\n"));
}

fn unit() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("h"), Just("m"), Just("s"), Just("ms")]
}

/// A valid duration term: digits, an optional fraction, a unit.
fn term() -> impl Strategy<Value = String> {
    ("[0-9]{1,6}", prop::option::of("[0-9]{1,12}"), unit()).prop_map(|(whole, fraction, unit)| {
        match fraction {
            Some(fraction) => format!("{whole}.{fraction}{unit}"),
            None => format!("{whole}{unit}"),
        }
    })
}

proptest! {
    /// Every duration prints as text that parses back to it exactly.
    #[test]
    fn formatting_round_trips(secs in any::<u64>(), nanos in 0u32..1_000_000_000) {
        let duration = Duration::new(secs, nanos);
        let text = format_duration(duration);
        prop_assert_eq!(parse_duration(&text), Ok(duration), "{}", text);
    }

    /// A duration is the sum of its terms.
    #[test]
    fn terms_add_up(left in prop::collection::vec(term(), 1..4), right in prop::collection::vec(term(), 1..4)) {
        let (left, right) = (left.concat(), right.concat());
        let whole = parse_duration(&format!("{left}{right}"));
        let parts = parse_duration(&left).and_then(|l| parse_duration(&right).map(|r| l + r));
        prop_assert_eq!(whole, parts);
    }

    /// Text outside the syntax is rejected, never misread: a valid duration with a
    /// character foreign to the syntax inserted anywhere.
    #[test]
    fn foreign_characters_are_rejected(
        terms in prop::collection::vec(term(), 1..4),
        at in any::<prop::sample::Index>(),
        foreign in "[^0-9.hms]",
    ) {
        let mut text = terms.concat();
        let at = at.index(text.len() + 1);
        text.insert_str(at, &foreign);
        prop_assert!(parse_duration(&text).is_err(), "{} was accepted", text);
    }

    /// Every text either parses or is rejected, quickly, whatever it holds.
    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        if let Ok(duration) = parse_duration(&text) {
            // Whatever is accepted is made of the syntax's characters only.
            prop_assert!(text.bytes().all(|b| b.is_ascii_digit() || b"hms.".contains(&b)), "{} -> {:?}", text, duration);
        }
    }
}
