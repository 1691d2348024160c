//! Gathering the facts the confused-deputy rule needs, and no more.
//!
//! Facts only widen access, so the decision is first made without any; an Application
//! is read when the decision needs its destination or the action is a `sync` (which
//! needs the object anyway), and the target's `Namespace` only when everything else
//! refused. A missing Application or Namespace counts as "no permission" rather than
//! "not found", so that a refused job learns nothing about namespaces it may not act
//! in.

use serde_json::Value;

use crate::io::{ObjectRef, Request, Response, Step};
use crate::triggers::{
    ACCEPT_TRIGGERS_FROM, AccessFacts, Action, Grant, Refusal, Trigger, TriggerAccess,
    in_cluster_destination,
};

use super::machine::{forward, unexpected};
use super::target::Read;
use super::{Failure, Machine};

/// The decision, and the Application when reading it was part of deciding.
#[derive(Clone, Debug)]
pub(super) struct Authorized {
    pub(super) grant: Grant,
    pub(super) application: Option<Value>,
}

/// Deciding whether a trigger may act, reading only what the decision needs.
#[derive(Clone, Debug)]
pub(super) struct Authorize {
    trigger: Trigger,
    job_namespace: String,
    access: TriggerAccess,
    facts: AccessFacts,
    application: Option<Value>,
    /// The Application was not found: reported only once access is granted.
    application_missing: Option<Failure>,
    state: AuthorizeState,
}

#[derive(Clone, Debug)]
enum AuthorizeState {
    ReadApplication(Read),
    ReadNamespace(NamespaceOptIn),
    Done(Result<Authorized, Failure>),
}

impl Authorize {
    pub(super) fn start(trigger: &Trigger, job_namespace: &str, access: &TriggerAccess) -> Self {
        let mut authorize = Authorize {
            trigger: trigger.clone(),
            job_namespace: job_namespace.to_owned(),
            access: access.clone(),
            facts: AccessFacts::default(),
            application: None,
            application_missing: None,
            state: AuthorizeState::Done(Err(Failure::invalid("authorize", "not started"))),
        };
        authorize.state = if trigger.is_argo_application()
            && (trigger.action() == Action::Sync || authorize.decide().is_err())
        {
            AuthorizeState::ReadApplication(Read::target(trigger.target()))
        } else {
            authorize.after_application()
        };
        authorize
    }

    fn decide(&self) -> Result<Grant, Refusal> {
        self.access
            .authorize(&self.trigger, &self.job_namespace, &self.facts)
    }

    fn after_application(&mut self) -> AuthorizeState {
        if self.decide().is_err() {
            AuthorizeState::ReadNamespace(NamespaceOptIn::start(
                self.trigger.target().namespace().as_str(),
            ))
        } else {
            self.finish()
        }
    }

    fn finish(&mut self) -> AuthorizeState {
        AuthorizeState::Done(match (self.decide(), self.application_missing.take()) {
            (Err(refusal), _) => Err(Failure::Refused(refusal)),
            (Ok(_), Some(missing)) => Err(missing),
            (Ok(grant), None) => Ok(Authorized {
                grant,
                application: self.application.take(),
            }),
        })
    }
}

impl Machine for Authorize {
    type Output = Result<Authorized, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        match &mut self.state {
            AuthorizeState::ReadApplication(read) => forward(read.next()),
            AuthorizeState::ReadNamespace(opt_in) => forward(opt_in.next()),
            AuthorizeState::Done(result) => Step::Done(result.clone()),
        }
    }

    fn answer(&mut self, response: Response) {
        match &mut self.state {
            AuthorizeState::ReadApplication(read) => {
                read.answer(response);
                let Step::Done(read) = read.next() else {
                    return;
                };
                match read {
                    Ok(app) => {
                        self.facts.application_destination = in_cluster_destination(&app);
                        self.application = Some(app);
                    }
                    Err(missing @ Failure::NotFound { .. }) => {
                        self.application_missing = Some(missing);
                    }
                    Err(other) => {
                        self.state = AuthorizeState::Done(Err(other));
                        return;
                    }
                }
                self.state = self.after_application();
            }
            AuthorizeState::ReadNamespace(opt_in) => {
                opt_in.answer(response);
                let Step::Done(accepts) = opt_in.next() else {
                    return;
                };
                self.state = match accepts {
                    Ok(accepts) => {
                        self.facts.target_namespace_accepts = accepts;
                        self.finish()
                    }
                    Err(failure) => AuthorizeState::Done(Err(failure)),
                };
            }
            AuthorizeState::Done(_) => {}
        }
    }
}

/// Reading the opt-in annotation ([`ACCEPT_TRIGGERS_FROM`]) of a `Namespace`: its
/// value, or `None` when the namespace or the annotation is absent.
///
/// # Examples
///
/// ```
/// use nbv_core::carry::{Machine, NamespaceOptIn};
/// use nbv_core::io::{Response, Step};
///
/// let mut opt_in = NamespaceOptIn::start("serving");
/// assert!(matches!(opt_in.next(), Step::Io(_)));
/// opt_in.answer(Response::Object(None));
/// assert_eq!(opt_in.next(), Step::Done(Ok(None)), "a missing namespace accepts nothing");
/// ```
#[derive(Clone, Debug)]
pub struct NamespaceOptIn {
    namespace: String,
    done: Option<Result<Option<String>, Failure>>,
}

impl NamespaceOptIn {
    /// Reads the `Namespace` named `namespace`.
    pub fn start(namespace: &str) -> Self {
        NamespaceOptIn {
            namespace: namespace.to_owned(),
            done: None,
        }
    }
}

impl Machine for NamespaceOptIn {
    type Output = Result<Option<String>, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        match &self.done {
            None => Step::Io(Request::Get(ObjectRef::cluster(
                "v1",
                "Namespace",
                &self.namespace,
            ))),
            Some(result) => Step::Done(result.clone()),
        }
    }

    fn answer(&mut self, response: Response) {
        if self.done.is_some() {
            return;
        }
        let object = format!("Namespace {}", self.namespace);
        let request = format!("get {object}");
        self.done = Some(match response {
            Response::Object(namespace) => Ok(namespace.and_then(|ns| {
                ns["metadata"]["annotations"][ACCEPT_TRIGGERS_FROM]
                    .as_str()
                    .map(str::to_owned)
            })),
            Response::Failed(answer) => Err(Failure::of(request, object, &answer)),
            other => Err(unexpected(&request, &other)),
        });
    }
}
