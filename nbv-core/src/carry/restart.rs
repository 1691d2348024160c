//! The `restart` action as requests: what [`crate::actions::restart`] decides (a
//! rolling restart where the workload supports one, otherwise evicting the target's
//! pods that predate the run, one at a time), read and written one request at a time.

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::Value;

use crate::actions::restart::{
    MAX_OWNER_LOOKUPS, Owners, Pace, PodRef, Replicas, budget_refused, evicted, finished, pace,
    pods_by_label, pods_to_list, rolling_restart,
};
use crate::actions::{Run, TriggerOutcome, describe};
use crate::io::{ObjectRef, Request, Response, Step};
use crate::reconcile::{AnswerClass, ApiAnswer};
use crate::triggers::TargetRef;

use super::machine::{forward, unexpected};
use super::target::{PatchWrite, Read};
use super::{Failure, Machine};

/// Restarting a target for a run.
///
/// An InferenceService's pods carry its name in KServe's label: one `LIST` finds them
/// without reading it. Only a `LIST` that finds none reads the target, since a
/// misspelled name finds none either and would report success for a restart that
/// never happened. Any other kind is read first: a workload with a pod template is
/// restarted by a patch; the pods of anything else are listed by its selector, and
/// only those it owns (directly or through intermediate owners, read one by one) count.
///
/// Pods are evicted, never deleted, and one per firing: [`pace`] picks the pod (or
/// says what the restart waits for), one eviction is posted, and the trigger is
/// deferred until the next look, which lists the pods again. Before an eviction the
/// pods' controllers (ReplicaSets) are read, unless read already, so that a pod
/// evicted but not yet replaced counts as missing ([`Replicas`]). Nothing is
/// remembered between firings but what the cluster shows, so an operator restart
/// resumes where the cluster stands, and no pod is evicted twice (its uid is the
/// precondition, and a terminating pod is waited for).
#[derive(Clone, Debug)]
pub(super) struct Restart {
    target: TargetRef,
    run: Run,
    now: DateTime<Utc>,
    state: State,
    /// What the pods' controllers want, from every object read so far.
    replicas: Replicas,
    /// What the shell should log (an owner bound reached).
    pub(super) warnings: Vec<String>,
}

#[derive(Clone, Debug)]
enum State {
    /// `LIST` an InferenceService's pods by its label.
    ListByLabel {
        selector: String,
    },
    /// The label found no pod: `GET` the target to tell a misspelled name.
    ConfirmTarget {
        read: Read,
        pods: Vec<Pod>,
    },
    /// `GET` the target.
    ReadTarget(Read),
    /// `LIST` the pods the target selects.
    ListSelected {
        selector: String,
        owner_uid: Option<String>,
    },
    /// `GET` an intermediate owner of some pods.
    ReadOwner {
        owners: Owners,
        pods: Vec<Pod>,
        reference: OwnerReference,
    },
    /// `GET` a controller of some pods, for the number of pods it wants.
    ReadController {
        pods: Vec<Pod>,
        reference: OwnerReference,
    },
    /// Write a rolling restart.
    Patch(PatchWrite),
    /// `POST` an eviction of the pod, with its uid as precondition.
    Evict(PodRef),
    /// The eviction conflicted: `GET` the pod to see whether it is still the same one.
    StillThere {
        pod: PodRef,
        conflict: ApiAnswer,
    },
    Done(Result<TriggerOutcome, Failure>),
}

impl Restart {
    pub(super) fn start(target: &TargetRef, run: &Run, now: DateTime<Utc>) -> Restart {
        let state = match pods_by_label(target) {
            Some(query) => State::ListByLabel {
                selector: query.label_selector,
            },
            None => State::ReadTarget(Read::get(target)),
        };
        Restart {
            target: target.clone(),
            run: run.clone(),
            now,
            state,
            replicas: Replicas::default(),
            warnings: Vec::new(),
        }
    }

    fn namespace(&self) -> &str {
        self.target.namespace().as_str()
    }

    /// The pods a `LIST` answered, or why they cannot be read.
    fn listed(&self, selector: &str, response: Response) -> Result<Vec<Pod>, Failure> {
        let namespace = self.namespace();
        let request = format!("list Pods in {namespace} with labels {selector}");
        match response {
            Response::Objects(items) => items
                .into_iter()
                .map(serde_json::from_value::<Pod>)
                .collect::<Result<_, _>>()
                .map_err(|e| Failure::invalid(request, format!("cannot read a pod: {e}"))),
            Response::Failed(answer) => Err(Failure::of(
                request,
                format!("Pods in {namespace}"),
                &answer,
            )),
            other => Err(unexpected(&request, &other)),
        }
    }

    /// What the target's `pods` (as listed, only its own) call for next: before an
    /// eviction, the controllers not read yet are read.
    fn decide(&self, pods: Vec<Pod>) -> State {
        let pace = pace(&pods, &self.replicas, self.run.completed_at, self.now);
        if matches!(pace, Pace::Evict(_))
            && let Some(reference) = self.replicas.next_lookup(&pods)
        {
            return State::ReadController { pods, reference };
        }
        self.paced(pace)
    }

    fn paced(&self, pace: Pace) -> State {
        State::Done(match pace {
            Pace::Evict(pod) => return State::Evict(pod),
            Pace::Wait { reason, until } => Ok(TriggerOutcome::Deferred {
                reason,
                until: Some(until),
            }),
            Pace::Stuck(reason) => Err(Failure::invalid(
                format!("restart {}", describe(&self.target)),
                reason,
            )),
            Pace::Finished { newer } => Ok(finished(&self.target, &self.run, newer)),
        })
    }

    /// The next owner to read for `pods`, or the decision once all are settled.
    fn owners(&mut self, owners: Owners, pods: Vec<Pod>) -> State {
        if let Some(reference) = owners.next_lookup(&pods) {
            return State::ReadOwner {
                owners,
                pods,
                reference,
            };
        }
        if owners.bounded(&pods) {
            self.warnings.push(format!(
                "{}: more than {MAX_OWNER_LOOKUPS} intermediate owners; remaining pods are spared",
                describe(&self.target)
            ));
        }
        let owned = owners.owned(pods);
        self.decide(owned)
    }

    /// Why reading the owner `reference` (an intermediate owner or a controller) gave
    /// no object: the `GET`'s failure, or an answer a `GET` does not give.
    fn unread(&self, reference: &OwnerReference, response: Response) -> State {
        let object = format!("{} {}/{}", reference.kind, self.namespace(), reference.name);
        let request = format!("get {object}");
        State::Done(Err(match response {
            Response::Failed(answer) => Failure::of(request, object, &answer),
            other => unexpected(&request, &other),
        }))
    }

    /// What comes after reading the target (`object`).
    fn read(&mut self, object: Value) -> State {
        self.replicas.learn_object(&object);
        match pods_to_list(&object, &self.target) {
            Err(refused) => State::Done(Err(refused.into())),
            Ok(None) => State::Patch(PatchWrite::start(
                &self.target,
                rolling_restart(&object, &self.target, &self.run),
            )),
            Ok(Some(query)) => State::ListSelected {
                selector: query.label_selector,
                owner_uid: query.owner_uid,
            },
        }
    }
}

impl Machine for Restart {
    type Output = Result<TriggerOutcome, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        let namespace = self.target.namespace().as_str();
        let list = |selector: &str| Request::List {
            kind: ObjectRef::namespaced("v1", "Pod", namespace, ""),
            label_selector: selector.to_owned(),
        };
        match &mut self.state {
            State::ListByLabel { selector } | State::ListSelected { selector, .. } => {
                Step::Io(list(selector))
            }
            State::ConfirmTarget { read, .. } | State::ReadTarget(read) => forward(read.next()),
            State::ReadOwner { reference, .. } | State::ReadController { reference, .. } => {
                Step::Io(Request::Get(ObjectRef::namespaced(
                    reference.api_version.clone(),
                    reference.kind.clone(),
                    namespace,
                    reference.name.clone(),
                )))
            }
            State::Patch(write) => write.next(),
            State::Evict(pod) => Step::Io(Request::Evict {
                pod: pod_ref(namespace, &pod.name),
                uid: pod.uid.clone(),
            }),
            State::StillThere { pod, .. } => Step::Io(Request::Get(pod_ref(namespace, &pod.name))),
            State::Done(result) => Step::Done(result.clone()),
        }
    }

    fn answer(&mut self, response: Response) {
        let state = std::mem::replace(&mut self.state, State::Done(Ok(done_placeholder())));
        self.state = match state {
            State::ListByLabel { selector } => match self.listed(&selector, response) {
                Ok(pods) if pods.is_empty() => State::ConfirmTarget {
                    read: Read::get(&self.target),
                    pods,
                },
                Ok(pods) => self.decide(pods),
                Err(failure) => State::Done(Err(failure)),
            },
            State::ConfirmTarget { mut read, pods } => {
                read.answer(response);
                match read.next() {
                    Step::Io(_) => State::ConfirmTarget { read, pods },
                    Step::Done(Ok(_)) => self.decide(pods),
                    Step::Done(Err(failure)) => State::Done(Err(failure)),
                }
            }
            State::ReadTarget(mut read) => {
                read.answer(response);
                match read.next() {
                    Step::Io(_) => State::ReadTarget(read),
                    Step::Done(Ok(object)) => self.read(object),
                    Step::Done(Err(failure)) => State::Done(Err(failure)),
                }
            }
            State::ListSelected {
                selector,
                owner_uid,
            } => match self.listed(&selector, response) {
                Ok(pods) => match owner_uid {
                    Some(uid) => self.owners(Owners::new(&uid), pods),
                    None => self.decide(pods),
                },
                Err(failure) => State::Done(Err(failure)),
            },
            State::ReadOwner {
                mut owners,
                pods,
                reference,
            } => match response {
                Response::Object(found) => {
                    if let Some(found) = &found {
                        self.replicas.learn_object(found);
                    }
                    let metadata = found.and_then(|found| {
                        serde_json::from_value::<ObjectMeta>(found["metadata"].clone()).ok()
                    });
                    owners.learn(&reference, metadata.as_ref());
                    self.owners(owners, pods)
                }
                other => self.unread(&reference, other),
            },
            State::ReadController { pods, reference } => match response {
                Response::Object(found) => {
                    self.replicas.learn(&reference.uid, found.as_ref());
                    self.decide(pods)
                }
                other => self.unread(&reference, other),
            },
            State::Patch(mut write) => {
                write.answer(response);
                match write.next() {
                    Step::Done(result) => State::Done(result),
                    Step::Io(_) => State::Patch(write),
                }
            }
            State::Evict(pod) => {
                let object = format!("Pod {}/{}", self.namespace(), pod.name);
                let (completed_at, now) = (self.run.completed_at, self.now);
                match response {
                    Response::Deleted | Response::Object(_) => {
                        self.paced(evicted(&pod.name, completed_at, now))
                    }
                    Response::Failed(answer) => match answer.class() {
                        // Gone already: the old pod no longer runs. Its replacement is
                        // waited for all the same.
                        AnswerClass::NotFound => self.paced(evicted(&pod.name, completed_at, now)),
                        // A PodDisruptionBudget does not allow it now (or is not
                        // processed yet): wait and try again, never delete instead.
                        _ if matches!(answer, ApiAnswer::Status { code: 429, .. }) => self.paced(
                            budget_refused(&pod.name, answer.message(), completed_at, now),
                        ),
                        // A conflict is what a failed uid precondition answers, but not
                        // only that: only a pod of that name with another uid (or none)
                        // proves that the old pod is gone.
                        AnswerClass::Conflict => State::StillThere {
                            pod,
                            conflict: answer,
                        },
                        _ => State::Done(Err(Failure::of(
                            format!("evict {object}"),
                            object,
                            &answer,
                        ))),
                    },
                    other => State::Done(Err(unexpected(&format!("evict {object}"), &other))),
                }
            }
            State::StillThere { pod, conflict } => {
                let object = format!("Pod {}/{}", self.namespace(), pod.name);
                match response {
                    Response::Object(current) => {
                        let same = current.is_some_and(|current| {
                            current["metadata"]["uid"].as_str() == Some(pod.uid.as_str())
                        });
                        if same {
                            // Still the old pod: the restart is retried.
                            State::Done(Err(Failure::of(
                                format!("evict {object}"),
                                object,
                                &conflict,
                            )))
                        } else {
                            self.paced(evicted(&pod.name, self.run.completed_at, self.now))
                        }
                    }
                    Response::Failed(answer) => {
                        State::Done(Err(Failure::of(format!("get {object}"), object, &answer)))
                    }
                    other => State::Done(Err(unexpected(&format!("get {object}"), &other))),
                }
            }
            done @ State::Done(_) => done,
        };
    }
}

/// A placeholder while a state is taken apart; always replaced before it is seen.
fn done_placeholder() -> TriggerOutcome {
    TriggerOutcome::Done {
        summary: String::new(),
    }
}

/// A pod of `namespace` as the requests address it.
fn pod_ref(namespace: &str, name: &str) -> ObjectRef {
    ObjectRef::namespaced("v1", "Pod", namespace, name)
}
