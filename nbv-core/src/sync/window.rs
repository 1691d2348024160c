//! Argo CD's sync windows: which apply to an Application, and whether they let a sync
//! start at a given time.
//!
//! The rules are those of Argo CD 3 (`pkg/apis/application/v1alpha1`, `SyncWindows`
//! `Matches`, `Active`, `InactiveAllows` and `CanSync`; the application controller's
//! `syncWindowPreventsSync`):
//!
//! - A window applies to an Application when one of its `applications` globs matches
//!   the Application's name, one of its `namespaces` globs its destination namespace,
//!   or one of its `clusters` globs its destination cluster name or server. With
//!   `andOperator: true`, every list that is given must match.
//! - A window is active at `t` when its schedule has a start `s` with
//!   `t - duration < s < t`, the schedule read in the window's `timeZone` (Argo CD
//!   applies that zone's UTC offset at `t` to the whole schedule; an unknown zone is
//!   UTC). A schedule with no start within five years counts as active: Argo CD's
//!   parser then answers the zero time, which is before every `t`.
//! - With no applicable window, a sync may start. An active `deny` window blocks it,
//!   unless the sync is manual and every active deny window has `manualSync: true`.
//!   Otherwise an active `allow` window lets it start. Otherwise, when allow windows
//!   apply but none is active, only a manual sync may start, and only if each of them
//!   has `manualSync: true`.
//! - A window whose schedule or duration does not parse makes the whole set invalid,
//!   and Argo CD then refuses every sync of the Application.
//!
//! A sync that nbv starts is *manual* in Argo CD's sense: Argo CD counts an operation
//! as automated only when `operation.initiatedBy.automated` is true, which only its own
//! auto-sync sets; nbv writes `initiatedBy.username`, like `argocd app sync`.

use chrono::{DateTime, Duration, FixedOffset, Offset, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use super::glob::glob_match;
use super::schedule::{Schedule, ScheduleError};
use crate::duration::parse_go;

/// One entry of an AppProject's `spec.syncWindows`, as Argo CD stores it.
///
/// # Examples
///
/// ```
/// use nbv_core::sync::SyncWindow;
///
/// let window: SyncWindow = serde_json::from_value(serde_json::json!({
///     "kind": "deny", "schedule": "0 22 * * *", "duration": "8h",
///     "applications": ["*"], "manualSync": true, "timeZone": "Europe/Berlin"
/// }))?;
/// assert!(window.manual_sync);
/// assert_eq!(window.time_zone, "Europe/Berlin");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncWindow {
    /// `allow` or `deny`.
    #[serde(default)]
    pub kind: String,
    /// When the window opens, in cron format (five fields).
    #[serde(default)]
    pub schedule: String,
    /// How long it stays open, as a Go duration (`1h30m`).
    #[serde(default)]
    pub duration: String,
    /// Globs of Application names it applies to.
    #[serde(default)]
    pub applications: Vec<String>,
    /// Globs of destination namespaces it applies to.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Globs of destination clusters (name or server URL) it applies to.
    #[serde(default)]
    pub clusters: Vec<String>,
    /// Whether manual syncs may start while it would block them.
    #[serde(default)]
    pub manual_sync: bool,
    /// The IANA time zone its schedule is read in (empty: UTC).
    #[serde(default)]
    pub time_zone: String,
    /// Whether every list given must match (instead of any one).
    #[serde(default, rename = "andOperator")]
    pub and_operator: bool,
    /// A free-text description (shown in nbv's messages).
    #[serde(default)]
    pub description: String,
}

/// What sync windows look at of an Application.
///
/// # Examples
///
/// ```
/// use nbv_core::sync::AppTarget;
///
/// let app = serde_json::json!({
///     "metadata": {"name": "serving"},
///     "spec": {"destination": {"server": "https://kubernetes.default.svc", "namespace": "ml"}}
/// });
/// let target = AppTarget::of(&app);
/// assert_eq!(target.name, "serving");
/// assert_eq!(target.namespace, "ml");
/// assert_eq!(target.cluster_name, "");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppTarget {
    /// `metadata.name`.
    pub name: String,
    /// `spec.destination.namespace`.
    pub namespace: String,
    /// `spec.destination.server`.
    pub server: String,
    /// `spec.destination.name`.
    pub cluster_name: String,
}

impl AppTarget {
    /// Reads the fields from an Application object (missing fields are empty).
    pub fn of(application: &serde_json::Value) -> AppTarget {
        let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_owned();
        let destination = &application["spec"]["destination"];
        AppTarget {
            name: text(&application["metadata"]["name"]),
            namespace: text(&destination["namespace"]),
            server: text(&destination["server"]),
            cluster_name: text(&destination["name"]),
        }
    }
}

/// A window that does not parse, with its position in `spec.syncWindows`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sync window {index} (kind {kind:?}, schedule {schedule:?}) is invalid: {source}")]
pub struct InvalidWindow {
    /// Position in `spec.syncWindows` (from 0).
    pub index: usize,
    /// Its kind.
    pub kind: String,
    /// Its schedule.
    pub schedule: String,
    /// What does not parse.
    pub source: ScheduleError,
}

/// Whether the windows let a sync start now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "verdict",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum WindowVerdict {
    /// A sync may start.
    Open,
    /// The windows block the sync.
    Closed {
        /// Why, naming the windows (by position in `spec.syncWindows`).
        reason: String,
        /// The first time a sync may start, if that is within the search horizon.
        opens_at: Option<DateTime<Utc>>,
    },
    /// A window applying to the Application does not parse; Argo CD refuses every sync.
    Invalid {
        /// What to fix.
        reason: String,
    },
}

/// A window that applies, parsed.
struct Applicable<'a> {
    index: usize,
    window: &'a SyncWindow,
    schedule: Schedule,
    duration: Duration,
}

impl Applicable<'_> {
    fn is_deny(&self) -> bool {
        self.window.kind == "deny"
    }

    fn is_allow(&self) -> bool {
        self.window.kind == "allow"
    }

    /// The window's UTC offset at `at`: its zone's offset then, UTC if unknown.
    fn offset(&self, at: DateTime<Utc>) -> FixedOffset {
        match self.window.time_zone.parse::<chrono_tz::Tz>() {
            Ok(zone) => zone.offset_from_utc_datetime(&at.naive_utc()).fix(),
            Err(_) => Utc.fix(),
        }
    }

    fn active(&self, at: DateTime<Utc>) -> bool {
        let local = at.with_timezone(&self.offset(at));
        match self.schedule.next_after(&(local - self.duration)) {
            Some(start) => start < local,
            None => true,
        }
    }

    /// Starts and ends of the window after `after` (at most `limit` starts).
    fn edges(&self, after: DateTime<Utc>, limit: usize) -> Vec<DateTime<Utc>> {
        let offset = self.offset(after);
        let mut from = after.with_timezone(&offset) - self.duration.abs();
        let mut edges = Vec::new();
        for _ in 0..limit {
            let Some(start) = self.schedule.next_after(&from) else {
                break;
            };
            for edge in [start, start + self.duration] {
                let edge = edge.with_timezone(&Utc);
                if edge > after {
                    edges.push(edge);
                }
            }
            from = start;
        }
        edges
    }
}

fn matches_any(globs: &[String], value: &str) -> bool {
    globs.iter().any(|glob| glob_match(glob, value))
}

/// Whether `window` applies to `target`, as Argo CD's `SyncWindows.Matches` decides.
///
/// # Examples
///
/// ```
/// use nbv_core::sync::{applies_to, AppTarget, SyncWindow};
///
/// let target = AppTarget { name: "serving".into(), namespace: "ml".into(), ..AppTarget::default() };
/// let by_namespace = SyncWindow { namespaces: vec!["m*".into()], ..SyncWindow::default() };
/// assert!(applies_to(&by_namespace, &target));
/// let both = SyncWindow { applications: vec!["other".into()], and_operator: true, ..by_namespace };
/// assert!(!applies_to(&both, &target));
/// ```
pub fn applies_to(window: &SyncWindow, target: &AppTarget) -> bool {
    let application = matches_any(&window.applications, &target.name);
    let namespace = matches_any(&window.namespaces, &target.namespace);
    let cluster = window.clusters.iter().any(|glob| {
        (!target.cluster_name.is_empty() && glob_match(glob, &target.cluster_name))
            || (!target.server.is_empty() && glob_match(glob, &target.server))
    });
    if window.and_operator {
        let given = [
            (!window.applications.is_empty(), application),
            (!window.namespaces.is_empty(), namespace),
            (!window.clusters.is_empty(), cluster),
        ];
        given.iter().any(|(is_given, _)| *is_given)
            && given
                .iter()
                .all(|(is_given, matched)| !is_given || *matched)
    } else {
        application || namespace || cluster
    }
}

/// How far ahead [`window_verdict`] looks for the time a closed window set opens:
/// this many starts of each applicable window.
pub const OPENING_SEARCH_STARTS: usize = 400;

/// Whether the `windows` of an AppProject let a sync of `target` start at `at`
/// (`manual`: the sync is not Argo CD's auto-sync; nbv's are manual). See the module
/// documentation for the rules. When they block it, the verdict says which windows and
/// the first time a sync may start, looked for among the next
/// [`OPENING_SEARCH_STARTS`] starts and ends of each applicable window.
///
/// Pure: the time is an argument.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::sync::{window_verdict, AppTarget, SyncWindow, WindowVerdict};
///
/// let nightly_freeze = SyncWindow {
///     kind: "deny".into(), schedule: "0 22 * * *".into(), duration: "8h".into(),
///     applications: vec!["*".into()], ..SyncWindow::default()
/// };
/// let target = AppTarget { name: "serving".into(), ..AppTarget::default() };
/// let midnight = Utc.with_ymd_and_hms(2026, 1, 24, 0, 0, 0).unwrap();
/// match window_verdict(&[nightly_freeze.clone()], &target, true, midnight) {
///     WindowVerdict::Closed { opens_at, .. } => {
///         assert_eq!(opens_at, Some(Utc.with_ymd_and_hms(2026, 1, 24, 6, 0, 0).unwrap()));
///     }
///     other => panic!("{other:?}"),
/// }
/// let noon = Utc.with_ymd_and_hms(2026, 1, 24, 12, 0, 0).unwrap();
/// assert_eq!(window_verdict(&[nightly_freeze], &target, true, noon), WindowVerdict::Open);
/// ```
pub fn window_verdict(
    windows: &[SyncWindow],
    target: &AppTarget,
    manual: bool,
    at: DateTime<Utc>,
) -> WindowVerdict {
    let mut applicable = Vec::new();
    for (index, window) in windows.iter().enumerate() {
        if !applies_to(window, target) {
            continue;
        }
        let parsed = Schedule::parse(&window.schedule).and_then(|schedule| {
            let duration =
                parse_go(&window.duration).map_err(|e| ScheduleError::Duration(e.into_text()))?;
            Ok((schedule, duration))
        });
        match parsed {
            Ok((schedule, duration)) => applicable.push(Applicable {
                index,
                window,
                schedule,
                duration,
            }),
            Err(source) => {
                let invalid = InvalidWindow {
                    index,
                    kind: window.kind.clone(),
                    schedule: window.schedule.clone(),
                    source,
                };
                return WindowVerdict::Invalid {
                    reason: format!(
                        "{invalid}; Argo CD refuses every sync of this Application until \
                         the AppProject's syncWindows are fixed"
                    ),
                };
            }
        }
    }
    let at = whole_second(at);
    match blocking(&applicable, manual, at) {
        None => WindowVerdict::Open,
        Some(reason) => {
            let mut edges: Vec<DateTime<Utc>> = applicable
                .iter()
                .flat_map(|w| w.edges(at, OPENING_SEARCH_STARTS))
                .collect();
            edges.sort_unstable();
            edges.dedup();
            // At an edge itself a window is neither started nor ended (the comparison
            // is strict), so each edge is judged one second later.
            let opens_at = edges
                .into_iter()
                .find(|edge| blocking(&applicable, manual, *edge + Duration::seconds(1)).is_none());
            WindowVerdict::Closed { reason, opens_at }
        }
    }
}

fn whole_second(at: DateTime<Utc>) -> DateTime<Utc> {
    at - Duration::nanoseconds(i64::from(at.timestamp_subsec_nanos()))
}

fn describe(window: &Applicable<'_>) -> String {
    let w = window.window;
    let mut text = format!(
        "{} window {} ({} for {}{})",
        w.kind,
        window.index,
        w.schedule,
        w.duration,
        if w.time_zone.is_empty() {
            String::new()
        } else {
            format!(", {}", w.time_zone)
        }
    );
    if !w.description.is_empty() {
        text.push_str(&format!(": {}", w.description));
    }
    text
}

/// Why the applicable windows block a sync at `at`, or `None` when they do not.
fn blocking(windows: &[Applicable<'_>], manual: bool, at: DateTime<Utc>) -> Option<String> {
    if windows.is_empty() {
        return None;
    }
    let active: Vec<&Applicable<'_>> = windows.iter().filter(|w| w.active(at)).collect();
    let denies: Vec<&&Applicable<'_>> = active.iter().filter(|w| w.is_deny()).collect();
    if !denies.is_empty() {
        if manual && denies.iter().all(|w| w.window.manual_sync) {
            return None;
        }
        let names: Vec<String> = denies.iter().map(|w| describe(w)).collect();
        return Some(format!("blocked by the active {}", names.join(", ")));
    }
    if active.iter().any(|w| w.is_allow()) {
        return None;
    }
    let inactive_allows: Vec<&Applicable<'_>> = windows
        .iter()
        .filter(|w| w.is_allow() && !w.active(at))
        .collect();
    if inactive_allows.is_empty()
        || (manual && inactive_allows.iter().all(|w| w.window.manual_sync))
    {
        return None;
    }
    let names: Vec<String> = inactive_allows.iter().map(|w| describe(w)).collect();
    Some(format!(
        "outside every allow window (syncs may start only inside {})",
        names.join(", ")
    ))
}
