//! # nbv-kube
//!
//! nbv-core's machines ask for I/O as [`Request`]s from a closed set; this crate carries
//! each out on a Kubernetes cluster with one kube call and answers it as the core reads
//! answers ([`Response`], failures as [`ApiAnswer`]). The `nbv` operator and the
//! embedding example (`nbv-core/examples/embed.rs`) share it: a shell that keeps watch
//! caches answers [`Request::Cached`] itself and hands everything else here.
//!
//! Every object is addressed through a `DynamicObject` API whose resource name is
//! guessed from its kind by [`ApiResource::from_gvk`] (lowercased and pluralised by
//! English rules). Every create and patch is made under the field manager given; a
//! delete or an eviction carries the uid precondition it is given; nothing is ever
//! replaced. An eviction is posted in the `policy` version the server serves for
//! `pods/eviction` (discovered once: `v1beta1` on Kubernetes 1.20, `v1` from 1.22).
//!
//! # Examples
//!
//! ```
//! use nbv_core::io::{ObjectRef, Request, Response};
//! use nbv_kube::KubeIo;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! # let (mock, mut server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
//! # tokio::spawn(async move {
//! #     let (request, reply) = server.next_request().await.expect("the read");
//! #     assert_eq!(request.uri().path(), "/api/v1/namespaces/serving");
//! #     let gone = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}"#;
//! #     reply.send_response(http::Response::builder().status(404).body(kube::client::Body::from(gone.to_vec())).unwrap());
//! # });
//! # let client = kube::Client::new(mock, "default");
//! let io = KubeIo::new(client, "my-operator");
//! let namespace = ObjectRef::cluster("v1", "Namespace", "serving");
//! // A 404 is an answer: there is no such object.
//! assert_eq!(io.run(Request::Get(namespace)).await, Response::Object(None));
//! // This crate keeps no cache.
//! let pod = ObjectRef::namespaced("v1", "Pod", "ml", "p");
//! assert_eq!(io.run(Request::Cached(pod)).await, Response::NotCached);
//! # }
//! ```

use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, Preconditions,
};
use kube::core::{ApiResource, GroupVersionKind};
use nbv_core::io::{ApiAnswer, ObjectRef, Request, Response, Subresource};
use nbv_core::reconcile::AnswerClass;
use serde_json::Value;

/// Carries requests out through a kube [`Client`](kube::Client). Cheap to clone.
#[derive(Clone)]
pub struct KubeIo {
    client: kube::Client,
    field_manager: String,
    /// The client evictions go through (by default the same).
    evictions: kube::Client,
    /// The Eviction version the server serves, once discovered.
    eviction_version: std::sync::Arc<std::sync::OnceLock<&'static str>>,
}

impl KubeIo {
    /// Requests through `client`, writing under `field_manager`.
    pub fn new(client: kube::Client, field_manager: impl Into<String>) -> Self {
        KubeIo {
            evictions: client.clone(),
            client,
            field_manager: field_manager.into(),
            eviction_version: std::sync::Arc::default(),
        }
    }

    /// Evictions through `client`: one built without kube's retries
    /// (`Config::default_retry` off), so that a 429 (a PodDisruptionBudget that
    /// refuses) comes back at once for nbv-core to wait on, rather than being retried
    /// by the client 15 times over minutes.
    pub fn with_eviction_client(mut self, client: kube::Client) -> Self {
        self.evictions = client;
        self
    }

    /// Carries `request` out with one API call. [`Request::Cached`] is answered
    /// [`Response::NotCached`]: this crate keeps no cache.
    pub async fn run(&self, request: Request) -> Response {
        let result = match request {
            Request::Cached(_) => return Response::NotCached,
            Request::Get(object) => match self.api(&object).get(&object.name).await {
                Ok(found) => Ok(Response::Object(Some(json(&found)))),
                Err(error) => match answer(&error) {
                    gone if gone.class() == AnswerClass::NotFound => Ok(Response::Object(None)),
                    failed => Err(failed),
                },
            },
            Request::List {
                kind,
                label_selector,
            } => self
                .api(&kind)
                .list(&ListParams::default().labels(&label_selector))
                .await
                .map(|list| Response::Objects(list.items.iter().map(json).collect()))
                .map_err(|e| answer(&e)),
            Request::Create { object, body } => match serde_json::from_value::<DynamicObject>(body)
            {
                Ok(body) => self
                    .api(&object)
                    .create(&self.post_params(), &body)
                    .await
                    .map(|created| Response::Object(Some(json(&created))))
                    .map_err(|e| answer(&e)),
                Err(e) => Err(ApiAnswer::no_answer(format!(
                    "the object to create cannot be sent: {e}"
                ))),
            },
            Request::Patch {
                object,
                subresource,
                patch,
            } => {
                let api = self.api(&object);
                let params = self.patch_params();
                let patch = Patch::Merge(&patch);
                match subresource {
                    Subresource::Object => api.patch(&object.name, &params, &patch).await,
                    Subresource::Status => api.patch_status(&object.name, &params, &patch).await,
                }
                .map(|stored| Response::Object(Some(json(&stored))))
                .map_err(|e| answer(&e))
            }
            Request::Delete { object, uid } => {
                let params = match uid {
                    Some(uid) => DeleteParams::default().preconditions(Preconditions {
                        uid: Some(uid),
                        resource_version: None,
                    }),
                    None => DeleteParams::default(),
                };
                self.api(&object)
                    .delete(&object.name, &params)
                    .await
                    .map(|_| Response::Deleted)
                    .map_err(|e| answer(&e))
            }
            Request::Evict { pod, uid } => self.evict(&pod, uid).await,
            Request::DeleteAll {
                kind,
                label_selector,
            } => self
                .api(&kind)
                .delete_collection(
                    &DeleteParams::background(),
                    &ListParams::default().labels(&label_selector),
                )
                .await
                .map(|deleted| {
                    let items = deleted.left().map(|list| list.items).unwrap_or_default();
                    Response::Objects(items.iter().map(json).collect())
                })
                .map_err(|e| answer(&e)),
        };
        result.unwrap_or_else(Response::Failed)
    }

    /// The API of `object`'s kind, in its namespace (or cluster-wide).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (mock, _server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    /// # let client = kube::Client::new(mock, "default");
    /// use nbv_core::io::ObjectRef;
    ///
    /// let io = nbv_kube::KubeIo::new(client, "my-operator");
    /// let web = ObjectRef::namespaced("apps/v1", "Deployment", "ml", "web");
    /// assert_eq!(io.api(&web).resource_url(), "/apis/apps/v1/namespaces/ml/deployments");
    /// # }
    /// ```
    pub fn api(&self, object: &ObjectRef) -> Api<DynamicObject> {
        let gvk = GroupVersionKind::gvk(object.group(), object.version(), &object.kind);
        let resource = ApiResource::from_gvk(&gvk);
        match &object.namespace {
            Some(namespace) => Api::namespaced_with(self.client.clone(), namespace, &resource),
            None => Api::all_with(self.client.clone(), &resource),
        }
    }

    /// `POST`s an Eviction of `pod` guarded by `uid`, in the version of the Eviction
    /// API the server serves ([`KubeIo::eviction_version`]).
    async fn evict(&self, pod: &ObjectRef, uid: String) -> Result<Response, ApiAnswer> {
        let version = self.eviction_version().await?;
        let namespace = pod.namespace.as_deref().unwrap_or_default();
        let body = serde_json::json!({
            "apiVersion": format!("policy/{version}"),
            "kind": "Eviction",
            "metadata": {"name": pod.name, "namespace": namespace},
            "deleteOptions": {"preconditions": {"uid": uid}},
        });
        let request = http::Request::post(format!(
            "/api/v1/namespaces/{namespace}/pods/{}/eviction",
            pod.name
        ))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&body).unwrap_or_default())
        .map_err(|e| ApiAnswer::no_answer(format!("the eviction cannot be sent: {e}")))?;
        self.evictions
            .request::<Value>(request)
            .await
            .map(|_| Response::Deleted)
            .map_err(|e| answer_with_causes(&e))
    }

    /// The version of `policy` Eviction the server serves: what discovery of core `v1`
    /// says of `pods/eviction` (`v1beta1` on Kubernetes 1.20, `v1` from 1.22), read
    /// once; `v1beta1` when discovery names none.
    async fn eviction_version(&self) -> Result<&'static str, ApiAnswer> {
        if let Some(version) = self.eviction_version.get() {
            return Ok(version);
        }
        let resources = self
            .client
            .list_core_api_resources("v1")
            .await
            .map_err(|e| answer(&e))?;
        let served = resources
            .resources
            .iter()
            .find(|r| r.name == "pods/eviction")
            .and_then(|r| r.version.as_deref());
        let version = if served == Some("v1") {
            "v1"
        } else {
            "v1beta1"
        };
        Ok(self.eviction_version.get_or_init(|| version))
    }

    fn post_params(&self) -> PostParams {
        PostParams {
            dry_run: false,
            field_manager: Some(self.field_manager.clone()),
        }
    }

    fn patch_params(&self) -> PatchParams {
        PatchParams {
            field_manager: Some(self.field_manager.clone()),
            ..PatchParams::default()
        }
    }
}

/// A client's error as the core reads an answer: the API server's error `Status`, or
/// no answer (a transport error, a timeout, a body that could not be read).
///
/// # Examples
///
/// ```
/// use nbv_core::io::ApiAnswer;
///
/// let quota = kube::Error::Api(Box::new(kube::core::Status::failure("exceeded quota: q", "Forbidden").with_code(403)));
/// assert_eq!(nbv_kube::answer(&quota), ApiAnswer::status(403, "Forbidden", "exceeded quota: q"));
/// ```
pub fn answer(error: &kube::Error) -> ApiAnswer {
    match error {
        kube::Error::Api(status) => {
            ApiAnswer::status(status.code, status.reason.clone(), status.message.clone())
        }
        other => ApiAnswer::no_answer(other.to_string()),
    }
}

/// [`answer`], with the causes of the `Status` in its message: an eviction refused by
/// a PodDisruptionBudget names the budget only there.
///
/// # Examples
///
/// ```
/// let status: kube::core::Status = serde_json::from_value(serde_json::json!({"status": "Failure", "code": 429,
///     "reason": "TooManyRequests", "message": "Cannot evict pod as it would violate the pod's disruption budget.",
///     "details": {"causes": [{"reason": "DisruptionBudget",
///                             "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]}})).unwrap();
/// let answer = nbv_kube::answer_with_causes(&kube::Error::Api(Box::new(status)));
/// assert!(answer.message().ends_with("(The disruption budget web needs 2 healthy pods and has 2 currently)"));
/// ```
pub fn answer_with_causes(error: &kube::Error) -> ApiAnswer {
    match error {
        kube::Error::Api(status) => {
            let causes: Vec<&str> = status
                .details
                .iter()
                .flat_map(|d| &d.causes)
                .map(|c| c.message.as_str())
                .filter(|m| !m.is_empty())
                .collect();
            let message = if causes.is_empty() {
                status.message.clone()
            } else {
                format!("{} ({})", status.message, causes.join("; "))
            };
            ApiAnswer::status(status.code, status.reason.clone(), message)
        }
        other => answer(other),
    }
}

/// An object as the core reads it.
fn json(object: &DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use http::{Request as HttpRequest, Response as HttpResponse};
    use kube::client::Body;
    use nbv_core::io::{ObjectRef, Request, Response};
    use serde_json::{Value, json};

    use super::KubeIo;

    /// Answers discovery of core `v1` with `pods/eviction` in `version`, then the
    /// eviction with 201, and returns the eviction's body.
    async fn evict_on(version: &'static str) -> Value {
        let (mock, mut server) = tower_test::mock::pair::<HttpRequest<Body>, HttpResponse<Body>>();
        let api = tokio::spawn(async move {
            let (request, reply) = server.next_request().await.expect("discovery");
            assert_eq!(request.uri().path(), "/api/v1");
            let resources = json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy",
                 "version": version, "kind": "Eviction", "verbs": ["create"]}]});
            reply.send_response(
                HttpResponse::builder()
                    .body(Body::from(serde_json::to_vec(&resources).unwrap()))
                    .unwrap(),
            );
            let (request, reply) = server.next_request().await.expect("the eviction");
            assert_eq!(request.method(), "POST");
            assert_eq!(
                request.uri().path(),
                "/api/v1/namespaces/ml/pods/p-1/eviction"
            );
            let body = request.into_body().collect_bytes().await.unwrap();
            let status = br#"{"kind":"Status","apiVersion":"v1","status":"Success","code":201}"#;
            reply.send_response(
                HttpResponse::builder()
                    .status(201)
                    .body(Body::from(status.to_vec()))
                    .unwrap(),
            );
            serde_json::from_slice::<Value>(&body).unwrap()
        });
        let io = KubeIo::new(kube::Client::new(mock, "default"), "nbv");
        let evict = Request::Evict {
            pod: ObjectRef::namespaced("v1", "Pod", "ml", "p-1"),
            uid: "u-1".into(),
        };
        assert_eq!(io.run(evict).await, Response::Deleted);
        api.await.unwrap()
    }

    #[tokio::test]
    async fn an_eviction_is_posted_in_the_version_the_server_serves() {
        let old = evict_on("v1beta1").await;
        assert_eq!(old["apiVersion"], "policy/v1beta1");
        assert_eq!(old["deleteOptions"]["preconditions"]["uid"], "u-1");
        assert_eq!(evict_on("v1").await["apiVersion"], "policy/v1");
    }
}
