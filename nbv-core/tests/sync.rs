//! Starting an Argo CD sync: sync windows as Argo CD evaluates them, and the decision.

use chrono::{DateTime, Duration, TimeZone, Timelike, Utc};
use nbv_core::sync::{
    AppTarget, Schedule, SyncDecision, SyncProgress, SyncRequest, SyncWindow, WindowVerdict,
    decide_sync, glob_match, sync_progress, window_verdict,
};
use proptest::prelude::*;
use serde_json::{Value, json};

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, h, m, 0).unwrap() // a Saturday
}

fn window(kind: &str, schedule: &str, duration: &str) -> SyncWindow {
    SyncWindow {
        kind: kind.into(),
        schedule: schedule.into(),
        duration: duration.into(),
        applications: vec!["*".into()],
        ..SyncWindow::default()
    }
}

fn target() -> AppTarget {
    AppTarget {
        name: "serving".into(),
        namespace: "ml".into(),
        server: "https://kubernetes.default.svc".into(),
        cluster_name: "in-cluster".into(),
    }
}

fn is_open(windows: &[SyncWindow], manual: bool, when: DateTime<Utc>) -> bool {
    window_verdict(windows, &target(), manual, when) == WindowVerdict::Open
}

#[test]
fn can_sync_follows_argo_cds_rules() {
    let deny = window("deny", "0 22 * * *", "8h");
    let deny_manual = SyncWindow {
        manual_sync: true,
        ..deny.clone()
    };
    let allow = window("allow", "0 9 * * *", "8h");
    let allow_manual = SyncWindow {
        manual_sync: true,
        ..allow.clone()
    };
    let night = at(23, 0);
    let day = at(12, 0);
    let evening = at(18, 0);

    // No window: always.
    assert!(is_open(&[], false, night));
    // An active deny blocks, manual or not, unless it allows manual syncs.
    assert!(!is_open(std::slice::from_ref(&deny), true, night));
    assert!(is_open(std::slice::from_ref(&deny_manual), true, night));
    assert!(!is_open(std::slice::from_ref(&deny_manual), false, night));
    // Every active deny must allow manual syncs.
    assert!(!is_open(&[deny_manual.clone(), deny.clone()], true, night));
    // An inactive deny blocks nothing.
    assert!(is_open(std::slice::from_ref(&deny), false, day));
    // Allow windows: inside, yes; outside, only a manual sync when each allows it.
    assert!(is_open(std::slice::from_ref(&allow), false, day));
    assert!(!is_open(std::slice::from_ref(&allow), true, evening));
    assert!(is_open(std::slice::from_ref(&allow_manual), true, evening));
    assert!(!is_open(
        &[allow_manual.clone(), allow.clone()],
        true,
        evening
    ));
    // An active allow next to an inactive one lets the sync start (Argo CD 3).
    let late_allow = window("allow", "0 20 * * *", "1h");
    assert!(is_open(&[allow.clone(), late_allow], false, day));
    // A deny beats an allow.
    let all_day_allow = window("allow", "0 0 * * *", "24h");
    assert!(!is_open(&[all_day_allow, deny], false, night));
}

#[test]
fn window_edges_are_strict_as_in_argo_cd() {
    let deny = window("deny", "0 22 * * *", "1h");
    assert!(
        is_open(std::slice::from_ref(&deny), false, at(22, 0)),
        "not yet active at its start"
    );
    assert!(!is_open(
        std::slice::from_ref(&deny),
        false,
        at(22, 0) + Duration::seconds(1)
    ));
    assert!(!is_open(std::slice::from_ref(&deny), false, at(22, 59)));
    assert!(
        is_open(&[deny], false, at(23, 0)),
        "no longer active at its end"
    );
}

#[test]
fn windows_match_by_application_namespace_and_cluster() {
    let only = |w: SyncWindow| SyncWindow {
        applications: Vec::new(),
        ..w
    };
    let deny = window("deny", "0 0 * * *", "24h");
    let by = |f: fn(&mut SyncWindow)| {
        let mut w = only(deny.clone());
        f(&mut w);
        w
    };
    let now = at(12, 0);
    assert!(!is_open(
        &[by(|w| w.namespaces = vec!["m?".into()])],
        false,
        now
    ));
    assert!(is_open(
        &[by(|w| w.namespaces = vec!["prod".into()])],
        false,
        now
    ));
    assert!(!is_open(
        &[by(|w| w.clusters = vec!["in-*".into()])],
        false,
        now
    ));
    assert!(!is_open(
        &[by(|w| w.clusters = vec!["https://kubernetes.*".into()])],
        false,
        now
    ));
    // A window without any list applies to nothing.
    assert!(is_open(&[only(deny.clone())], false, now));
    // OR by default, AND with andOperator.
    let either = by(|w| {
        w.applications = vec!["other".into()];
        w.namespaces = vec!["ml".into()];
    });
    assert!(!is_open(std::slice::from_ref(&either), false, now));
    assert!(is_open(
        &[SyncWindow {
            and_operator: true,
            ..either
        }],
        false,
        now
    ));
}

#[test]
fn time_zones_shift_the_schedule_by_their_offset() {
    // 22:00 in Berlin is 21:00 UTC in January.
    let mut deny = window("deny", "0 22 * * *", "1h");
    deny.time_zone = "Europe/Berlin".into();
    assert!(!is_open(std::slice::from_ref(&deny), false, at(21, 30)));
    assert!(is_open(std::slice::from_ref(&deny), false, at(22, 30)));
    // An unknown zone is UTC, as in Argo CD.
    deny.time_zone = "Mars/Olympus".into();
    assert!(is_open(std::slice::from_ref(&deny), false, at(21, 30)));
    assert!(!is_open(&[deny], false, at(22, 30)));
}

#[test]
fn a_blocked_sync_learns_when_the_windows_open() {
    let weekday_allow = window("allow", "0 9 * * mon-fri", "8h");
    // Saturday noon: the next allow window is Monday 09:00.
    let verdict = window_verdict(&[weekday_allow], &target(), true, at(12, 0));
    insta::assert_json_snapshot!(verdict);
    let deny = SyncWindow {
        description: "change freeze, ticket OPS-12".into(),
        ..window("deny", "*/5 * * * *", "5m")
    };
    // Denied but for the instants between two windows (an edge belongs to neither), which
    // are no time to start a sync in: the search gives up rather than name one.
    let verdict = window_verdict(&[deny], &target(), true, at(12, 0) + Duration::seconds(30));
    assert!(
        matches!(&verdict, WindowVerdict::Closed { opens_at: None, reason } if reason.contains("OPS-12")),
        "{verdict:?}"
    );
}

#[test]
fn an_invalid_window_blocks_every_sync() {
    for (schedule, duration) in [
        ("@daily", "1h"),
        ("0 0 * * 7", "1h"),
        ("0 0 * *", "1h"),
        ("0 24 * * *", "1h"),
        ("5-1 * * * *", "1h"),
        ("*/0 * * * *", "1h"),
        ("0 0 L * *", "1h"),
        ("0 0 * * *", "1d"),
        ("0 0 * * *", ""),
    ] {
        let verdict = window_verdict(
            &[window("allow", schedule, duration)],
            &target(),
            true,
            at(1, 0),
        );
        assert!(
            matches!(verdict, WindowVerdict::Invalid { .. }),
            "{schedule:?} {duration:?}: {verdict:?}"
        );
    }
    let verdict = window_verdict(
        &[window("deny", "0 0 * * 7", "1h")],
        &target(),
        true,
        at(1, 0),
    );
    insta::assert_json_snapshot!(verdict);
    // A window that does not apply is not parsed.
    let elsewhere = SyncWindow {
        applications: vec!["other".into()],
        ..window("deny", "bad", "x")
    };
    assert!(is_open(&[elsewhere], false, at(1, 0)));
}

#[test]
fn schedules_read_as_robfig_cron_reads_them() {
    let utc = chrono::FixedOffset::east_opt(0).unwrap();
    let next = |schedule: &str, from: DateTime<Utc>| {
        Schedule::parse(schedule)
            .unwrap()
            .next_after(&from.with_timezone(&utc))
            .map(|t| t.with_timezone(&Utc))
    };
    // Names, in any case; ranges; N/step meaning N-max/step.
    assert_eq!(
        next("30 8 * JAN-mar Sun", at(12, 0)),
        Some(Utc.with_ymd_and_hms(2026, 1, 25, 8, 30, 0).unwrap())
    );
    assert_eq!(next("10/20 * * * *", at(12, 0)), Some(at(12, 10)));
    // Day of month OR day of week when neither is a star…
    assert_eq!(
        next("0 0 1 * mon", at(12, 0)),
        Some(Utc.with_ymd_and_hms(2026, 1, 26, 0, 0, 0).unwrap())
    );
    // …AND when one is (`?` is a star too), and `*/2` is no longer a star.
    assert_eq!(
        next("0 0 1 * ?", at(12, 0)),
        Some(Utc.with_ymd_and_hms(2026, 2, 1, 0, 0, 0).unwrap())
    );
    assert_eq!(
        next("0 0 */2 * mon", at(12, 0)),
        Some(Utc.with_ymd_and_hms(2026, 1, 25, 0, 0, 0).unwrap())
    );
    // No start within five years: none (Argo CD then counts the window as active).
    assert_eq!(next("0 0 30 2 *", at(12, 0)), None);
    assert!(!is_open(
        &[window("deny", "0 0 30 2 *", "1m")],
        false,
        at(12, 0)
    ));
}

/// robfig splits a field's parts with `strings.FieldsFunc` (empty parts dropped) and
/// reads numbers with `strconv.Atoi` (a leading `+` allowed, up to `i64::MAX`); nbv
/// refused all three. Found by the `cron` fuzz target.
#[test]
fn empty_parts_and_plus_signs_read_as_robfig_reads_them() {
    let utc = chrono::FixedOffset::east_opt(0).unwrap();
    let next = |schedule: &str| {
        Schedule::parse(schedule)
            .unwrap_or_else(|e| panic!("{e}"))
            .next_after(&at(12, 0).with_timezone(&utc))
            .map(|t| t.with_timezone(&Utc))
    };
    assert_eq!(next("0 0, 30 2 *"), next("0 0 30 2 *"));
    assert_eq!(next(",30,, 13,, * * *"), Some(at(13, 30)));
    assert_eq!(next("+30 +13 * * *"), Some(at(13, 30)));
    assert_eq!(next("*/+20 13 * * *"), Some(at(13, 0)));
    // Steps up to i64::MAX (a step past the end selects the start), and a star
    // ignores what follows its `-`.
    assert_eq!(next("30/9223372036854775807 13 * * *"), Some(at(13, 30)));
    assert_eq!(next("30 13 * * *-x-1"), Some(at(13, 30)));
    assert!(Schedule::parse("*/9223372036854775808 * * * *").is_err());
    for refused in [
        "+ 0 * * *",
        "++1 * * * *",
        "-1 * * * *",
        "*/-1 * * * *",
        ", * * * *",
    ] {
        assert!(Schedule::parse(refused).is_err(), "{refused:?}");
    }
}

/// The brute-force reference of "active": some start minute in (t - d, t).
fn active_by_scan(
    minute: u32,
    hour: Option<u32>,
    duration_minutes: i64,
    when: DateTime<Utc>,
) -> bool {
    let mut probe = when - Duration::minutes(duration_minutes);
    probe = probe - Duration::seconds(i64::from(probe.second()));
    while probe < when {
        let starts = probe.minute() == minute && hour.is_none_or(|h| probe.hour() == h);
        if starts && probe > when - Duration::minutes(duration_minutes) {
            return true;
        }
        probe += Duration::minutes(1);
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn activity_matches_a_minute_by_minute_scan(
        minute in 0u32..60,
        hour in proptest::option::of(0u32..24),
        duration in 1i64..600,
        offset in 0i64..(3 * 24 * 3600),
    ) {
        let schedule = match hour {
            Some(h) => format!("{minute} {h} * * *"),
            None => format!("{minute} * * * *"),
        };
        let deny = window("deny", &schedule, &format!("{duration}m"));
        let when = at(0, 0) + Duration::seconds(offset);
        prop_assert_eq!(!is_open(&[deny], false, when), active_by_scan(minute, hour, duration, when));
    }

    #[test]
    fn a_closed_set_opens_when_it_says_and_not_before(
        deny_hour in 0u32..24, deny_len in 1i64..20,
        allow_hour in 0u32..24, allow_len in 1i64..20,
        weekday in 0u32..7, manual in any::<bool>(),
        offset in 0i64..(7 * 24 * 3600),
    ) {
        let windows = [
            window("deny", &format!("0 {deny_hour} * * *"), &format!("{deny_len}h")),
            window("allow", &format!("0 {allow_hour} * * {weekday}"), &format!("{allow_len}h")),
        ];
        let when = at(0, 0) + Duration::seconds(offset);
        if let WindowVerdict::Closed { opens_at, .. } = window_verdict(&windows, &target(), manual, when) {
            let Some(opens_at) = opens_at else {
                // Never within the search: an allow window inside the daily deny. Whole
                // hours open and close these windows, so half-hourly probes see any gap.
                for k in 0..(8 * 48) {
                    let probe = when + Duration::minutes(30 * k) + Duration::seconds(1);
                    prop_assert!(!is_open(&windows, manual, probe), "open at {probe}");
                }
                return Ok(());
            };
            prop_assert!(opens_at > when);
            prop_assert!(is_open(&windows, manual, opens_at + Duration::seconds(1)));
            // Sampled points before it are still closed.
            let span = (opens_at - when).num_seconds();
            for k in 1..8 {
                let probe = when + Duration::seconds(span * k / 8);
                if probe < opens_at {
                    prop_assert!(!is_open(&windows, manual, probe), "open at {probe} before {opens_at}");
                }
            }
        }
    }

    #[test]
    fn a_literal_pattern_matches_itself_and_a_star_everything(text in "[ -~]{0,20}") {
        let escaped: String = text.chars().flat_map(|c| ['\\', c]).collect();
        prop_assert!(glob_match(&escaped, &text));
        prop_assert!(glob_match("*", &text));
        let prefix = format!("{escaped}*");
        let longer = format!("{text}tail");
        prop_assert!(glob_match(&prefix, &longer));
    }
}

/// A glob piece and the regular expression that means the same.
fn glob_piece() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        ("a", "a"),
        ("b", "b"),
        ("*", ".*"),
        ("?", "."),
        ("[ab]", "[ab]"),
        ("[!a]", "[^a]"),
        ("[a-b]", "[a-b]"),
        ("\\*", "\\*"),
        ("{a,b*}", "(?:a|b.*)"),
        ("{,a?}", "(?:|a.)"),
        ("{*a,{b,?}}", "(?:.*a|(?:b|.))"),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_glob_matches_what_its_regular_expression_matches(
        pieces in prop::collection::vec(glob_piece(), 0..8),
        text in "[ab*]{0,12}",
    ) {
        let glob: String = pieces.iter().map(|(g, _)| *g).collect();
        let regex: String = pieces.iter().map(|(_, r)| *r).collect();
        let regex = regex_lite::Regex::new(&format!("^(?s:{regex})$")).expect("regex");
        prop_assert_eq!(glob_match(&glob, &text), regex.is_match(&text), "{} ~ {}", glob, text);
    }
}

/// Runs `f` on its own thread; `None` if it has not returned within a minute. Not a
/// measurement: the patterns below took hours or more to match by backtracking.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(60))
        .ok()
}

#[test]
fn a_pattern_of_many_stars_cannot_stall_the_matcher() {
    // 30 `*a` then `b`, against 200 `a`: a backtracking matcher tries every way of
    // splitting the text among the stars (about 10^40) before it says no.
    let pattern = format!("{}b", "*a".repeat(30));
    let text = "a".repeat(200);
    assert_eq!(
        within_a_minute(move || glob_match(&pattern, &text)),
        Some(false)
    );
    // The same through alternatives, which nest.
    let pattern = format!("{}b", "{*a,a*}".repeat(30));
    let text = "a".repeat(200);
    assert_eq!(
        within_a_minute(move || glob_match(&pattern, &text)),
        Some(false)
    );
}

#[test]
fn braces_nested_too_deep_match_nothing_without_overflowing_the_stack() {
    let deep = |n: usize| format!("{}a{}", "{".repeat(n), "}".repeat(n));
    assert!(glob_match(&deep(32), "a"));
    assert!(!glob_match(&deep(33), "a"));
    // Far deeper than any stack: refused before it is walked.
    assert!(!glob_match(&deep(1_000_000), "a"));
}

// The decision.

fn completed_at() -> DateTime<Utc> {
    at(22, 30)
}

fn request() -> SyncRequest {
    SyncRequest::of_run("ml", "train", completed_at(), "nbv-operator")
}

fn application(status: Value) -> Value {
    json!({
        "metadata": {"name": "serving", "namespace": "argocd", "resourceVersion": "42"},
        "spec": {
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "ml"},
            "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}
        },
        "status": status,
    })
}

fn succeeded_sync(sync: Value, started: &str, automated: bool) -> Value {
    json!({"operationState": {
        "phase": "Succeeded", "startedAt": started,
        "operation": {"sync": sync, "initiatedBy": {"automated": automated}}
    }})
}

#[test]
fn decisions_snapshot() {
    let later = "2026-01-24T22:31:00Z";
    let earlier = "2026-01-24T22:00:00Z";
    let marker = json!([{"name": "nbv-run", "value": "ml/train@2026-01-24T22:30:00Z"}]);
    let cases: Vec<(&str, Value)> = vec![
        ("no operation ever", application(json!({}))),
        (
            "a stuck operation state",
            application(json!({"operationState": {"phase": "Running"}})),
        ),
        ("an operation requested", {
            let mut app = application(json!({}));
            app["operation"] = json!({"sync": {}});
            app
        }),
        ("this run's sync requested", {
            let mut app = application(json!({}));
            app["operation"] = json!({"sync": {}, "info": marker.clone()});
            app
        }),
        (
            "this run's sync ran",
            application(json!({"operationState": {
                "phase": "Running", "operation": {"sync": {}, "info": marker}
            }})),
        ),
        (
            "a full sync after the run",
            application(succeeded_sync(json!({}), later, false)),
        ),
        (
            "an auto-sync after the run",
            application(succeeded_sync(json!({"revision": "abc123"}), later, true)),
        ),
        (
            "a full sync before the run",
            application(succeeded_sync(json!({}), earlier, false)),
        ),
        (
            "a dry run after the run",
            application(succeeded_sync(json!({"dryRun": true}), later, false)),
        ),
        (
            "a partial sync after the run",
            application(succeeded_sync(
                json!({"resources": [{"kind": "Deployment", "name": "web"}]}),
                later,
                false,
            )),
        ),
        (
            "a rollback after the run",
            application(succeeded_sync(json!({"revision": "0ld"}), later, false)),
        ),
        (
            "a failed sync after the run",
            application(json!({"operationState": {
                "phase": "Failed", "startedAt": later, "operation": {"sync": {}}
            }})),
        ),
        ("being deleted", {
            let mut app = application(json!({}));
            app["metadata"]["deletionTimestamp"] = json!(later);
            app
        }),
    ];
    let decisions: Vec<(String, SyncDecision)> = cases
        .iter()
        .map(|(name, app)| {
            (
                (*name).to_owned(),
                decide_sync(app, None, &request(), at(22, 35)),
            )
        })
        .collect();
    insta::assert_json_snapshot!(decisions);
}

#[test]
fn a_window_defers_the_sync_and_says_until_when() {
    let freeze = SyncWindow {
        namespaces: vec!["ml".into()],
        applications: Vec::new(),
        ..window("deny", "0 22 * * *", "2h")
    };
    let decision = decide_sync(
        &application(json!({})),
        Some(std::slice::from_ref(&freeze)),
        &request(),
        at(22, 35),
    );
    assert_eq!(
        decision,
        SyncDecision::Blocked {
            reason: "blocked by the active deny window 0 (0 22 * * * for 2h)".into(),
            opens_at: Some(Utc.with_ymd_and_hms(2026, 1, 25, 0, 0, 0).unwrap()),
        }
    );
    // nbv's sync is manual: a deny window that allows manual syncs lets it through.
    let manual = SyncWindow {
        manual_sync: true,
        ..freeze
    };
    assert!(matches!(
        decide_sync(
            &application(json!({})),
            Some(&[manual]),
            &request(),
            at(22, 35)
        ),
        SyncDecision::Start { .. }
    ));
}

#[test]
fn progress_of_the_sync_nbv_started() {
    let marker = request().marker;
    let info = json!([{"name": "nbv-run", "value": marker}]);
    let mut requested = application(json!({}));
    requested["operation"] = json!({"sync": {}, "info": info.clone()});
    assert_eq!(
        sync_progress(&requested, &marker),
        SyncProgress::InProgress {
            phase: "Requested".into()
        }
    );
    let running = application(
        json!({"operationState": {"phase": "Running", "operation": {"info": info.clone()}}}),
    );
    assert_eq!(
        sync_progress(&running, &marker),
        SyncProgress::InProgress {
            phase: "Running".into()
        }
    );
    let done = application(
        json!({"operationState": {"phase": "Succeeded", "message": "successfully synced", "operation": {"info": info}}}),
    );
    assert_eq!(
        sync_progress(&done, &marker),
        SyncProgress::Finished {
            succeeded: true,
            phase: "Succeeded".into(),
            message: "successfully synced".into()
        }
    );
    assert_eq!(
        sync_progress(&application(json!({})), &marker),
        SyncProgress::Replaced
    );
}
