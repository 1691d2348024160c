//! What nbv may read in Argo CD's namespace, observed from the answers it gets there
//! rather than assumed: the GET of `argocd-cm` at start, then every event of the
//! AppProjects' watch. No request is made only to find out.
//!
//! A 403 means the Role of `config/rbac/argocd_role.yaml` is missing there (the
//! second install step under OLM): nbv says so once at start with a warning that
//! names the Role, its RoleBinding and the namespace, and again when it changes; the
//! core's [`ArgocdAccess`] then tells the jobs whose `sync` waits for it.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use kube::runtime::watcher;
use nbv_core::reconcile::{ArgocdAccess, MissingRole};
use tokio::sync::Notify;

use crate::runtime::api_error::{ApiErrorClass, classify, classify_status};

/// The request refused when `argocd-cm` may not be read.
const GET_ARGOCD_CM: &str = "get configmaps argocd-cm";
/// The requests refused when the AppProjects may not be read.
const LIST_APPPROJECTS: &str = "list/watch appprojects.argoproj.io";

/// What nbv may read in Argo CD's namespace, shared by the code that observes it and
/// the reconciles that report it. Cheap to clone.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::argocd::AccessWatch;
///
/// let access = AccessWatch::new("openshift-gitops");
/// assert!(!access.current().is_missing());
/// access.config_map_read(false);
/// access.projects_read(false);
/// assert!(access.current().is_missing());
/// assert!(access.missing_projects().unwrap().message().contains("nbv-operator-argocd"));
/// access.projects_read(true);
/// assert!(access.missing_projects().is_none());
/// ```
#[derive(Clone, Debug, Default)]
pub struct AccessWatch(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    state: RwLock<State>,
    /// Woken at each answer about the AppProjects.
    answered: Notify,
}

#[derive(Debug, Default)]
struct State {
    namespace: String,
    /// `Some(true)`: `argocd-cm` was read; `Some(false)`: refused; `None`: not tried.
    config_map: Option<bool>,
    /// The same for the AppProjects.
    projects: Option<bool>,
}

impl State {
    fn refused(&self) -> Vec<&'static str> {
        [
            (self.config_map == Some(false)).then_some(GET_ARGOCD_CM),
            (self.projects == Some(false)).then_some(LIST_APPPROJECTS),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

impl AccessWatch {
    /// Nothing observed yet in Argo CD's `namespace`.
    pub fn new(namespace: &str) -> Self {
        AccessWatch(Arc::new(Shared {
            state: RwLock::new(State {
                namespace: namespace.to_owned(),
                ..State::default()
            }),
            answered: Notify::new(),
        }))
    }

    /// Records whether reading `argocd-cm` was allowed (`false`: 403).
    pub fn config_map_read(&self, allowed: bool) {
        self.write().config_map = Some(allowed);
    }

    /// Records whether reading the AppProjects was allowed (`false`: 403), and logs a
    /// change after the first observation.
    pub fn projects_read(&self, allowed: bool) {
        let mut state = self.write();
        let before = state.projects.replace(allowed);
        self.0.answered.notify_waiters();
        if before.is_some_and(|was| was != allowed) {
            if allowed {
                tracing::info!(namespace = %state.namespace, "nbv may read the AppProjects now: sync triggers respect their sync windows again");
            } else {
                let missing = MissingRole::new(state.namespace.clone(), state.refused());
                tracing::warn!("{}", missing.message());
            }
        }
    }

    /// Whether reading `argocd-cm` was refused (403).
    pub fn config_map_refused(&self) -> bool {
        self.read().config_map == Some(false)
    }

    /// What nbv may read, for the jobs' `ArgoCDAccess` condition.
    pub fn current(&self) -> ArgocdAccess {
        let state = self.read();
        match state.projects {
            None => ArgocdAccess::Unknown,
            Some(true) => ArgocdAccess::Granted {
                namespace: state.namespace.clone(),
            },
            Some(false) => {
                ArgocdAccess::Missing(MissingRole::new(state.namespace.clone(), state.refused()))
            }
        }
    }

    /// The missing Role, when the AppProjects may not be read (a `sync` then waits).
    pub fn missing_projects(&self) -> Option<MissingRole> {
        match self.current() {
            ArgocdAccess::Missing(missing) => Some(missing),
            _ => None,
        }
    }

    /// Waits for the first answer about the AppProjects (from their watch, at most
    /// `patience`), then logs ONE warning naming the missing Role if anything was
    /// refused. No answer (Argo CD's CRDs are not installed, the API server is down)
    /// says nothing about the Role, and nothing is logged.
    pub async fn warn_if_missing(self, patience: Duration) {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let answered = self.0.answered.notified();
            if self.read().projects.is_some() {
                break;
            }
            if tokio::time::timeout_at(deadline, answered).await.is_err() {
                break;
            }
        }
        let state = self.read();
        let refused = state.refused();
        if !refused.is_empty() {
            tracing::warn!(
                "{}",
                MissingRole::new(state.namespace.clone(), refused).message()
            );
        }
    }

    /// Records what an event of the AppProjects' watch says: a 403 of the list or the
    /// watch is a missing Role; any listed object, or a completed listing, access.
    pub fn observe<T>(&self, event: &Result<watcher::Event<T>, watcher::Error>) {
        match event {
            Ok(watcher::Event::Init) => {}
            Ok(_) => self.projects_read(true),
            Err(error) => {
                let forbidden = match error {
                    watcher::Error::InitialListFailed(e)
                    | watcher::Error::WatchStartFailed(e)
                    | watcher::Error::WatchFailed(e) => classify(e) == ApiErrorClass::Forbidden,
                    watcher::Error::WatchError(status) => {
                        classify_status(status) == ApiErrorClass::Forbidden
                    }
                    watcher::Error::NoResourceVersion => false,
                };
                if forbidden {
                    self.projects_read(false);
                }
            }
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.0.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.0.state.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Mutex;

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    /// The log lines, written to a shared buffer.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let mut buffer = self.0.lock().unwrap_or_else(|e| e.into_inner());
            buffer.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'w> MakeWriter<'w> for Lines {
        type Writer = Lines;
        fn make_writer(&'w self) -> Self::Writer {
            self.clone()
        }
    }

    fn forbidden() -> Result<watcher::Event<()>, watcher::Error> {
        let status =
            kube::core::Status::failure("appprojects.argoproj.io is forbidden", "Forbidden")
                .with_code(403);
        Err(watcher::Error::InitialListFailed(kube::Error::Api(
            Box::new(status),
        )))
    }

    #[tokio::test(start_paused = true)]
    async fn one_warning_names_the_role_and_a_change_is_logged_once() {
        let lines = Lines::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(lines.clone())
            .with_ansi(false)
            .finish();
        let _default = tracing::subscriber::set_default(subscriber);

        let access = AccessWatch::new("openshift-gitops");
        access.config_map_read(false);
        let warning = tokio::spawn(access.clone().warn_if_missing(Duration::from_secs(60)));
        tokio::task::yield_now().await;
        // The watch is refused, again and again as it retries.
        for _ in 0..3 {
            access.observe(&forbidden());
        }
        warning.await.unwrap_or_else(|e| panic!("{e}"));
        assert!(access.current().is_missing());
        // The Role is applied: the next listing goes through.
        access.observe(&Ok(watcher::Event::<()>::Init));
        assert!(
            access.current().is_missing(),
            "Init comes before the listing"
        );
        access.observe(&Ok(watcher::Event::<()>::InitDone));
        assert_eq!(
            access.current(),
            ArgocdAccess::Granted {
                namespace: "openshift-gitops".into()
            }
        );

        let text = String::from_utf8_lossy(&lines.0.lock().unwrap_or_else(|e| e.into_inner()))
            .into_owned();
        let warnings: Vec<&str> = text.lines().filter(|l| l.contains("WARN")).collect();
        assert_eq!(warnings.len(), 1, "{text}");
        for part in [
            "get configmaps argocd-cm, list/watch appprojects.argoproj.io",
            "namespace openshift-gitops",
            "Role nbv-operator-argocd and RoleBinding nbv-operator-argocd",
            "config/rbac/argocd_role.yaml",
        ] {
            assert!(warnings[0].contains(part), "{part}: {}", warnings[0]);
        }
        assert_eq!(
            text.lines()
                .filter(|l| l.contains("may read the AppProjects now"))
                .count(),
            1,
            "{text}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn no_answer_is_no_warning() {
        let lines = Lines::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(lines.clone())
            .finish();
        let _default = tracing::subscriber::set_default(subscriber);
        let access = AccessWatch::new("argocd");
        // A 404 (no Argo CD CRDs) says nothing about the Role.
        let status = kube::core::Status::failure("not found", "NotFound").with_code(404);
        access.observe(&Err::<watcher::Event<()>, _>(
            watcher::Error::InitialListFailed(kube::Error::Api(Box::new(status))),
        ));
        access.clone().warn_if_missing(Duration::from_secs(5)).await;
        assert_eq!(access.current(), ArgocdAccess::Unknown);
        let text = String::from_utf8_lossy(&lines.0.lock().unwrap_or_else(|e| e.into_inner()))
            .into_owned();
        assert!(!text.contains("WARN"), "{text}");
    }
}
