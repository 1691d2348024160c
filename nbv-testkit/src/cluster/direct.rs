//! Direct access for test setup and assertions: reads and writes that are not API
//! requests (and so are not in the request log), committed like any other change.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::log::Verb;

use super::ops::{DeleteOpts, WriteOpts, object_key};
use super::store::WriteCtx;
use super::{Actor, ApiError, ApiResourceSpec, ClusterError, FakeCluster, meta};

#[cfg(doc)]
use super::Reason;

impl FakeCluster {
    fn spec(&self, resource: &str) -> Result<ApiResourceSpec, ClusterError> {
        self.shared
            .lock()
            .registry
            .resolve(resource)
            .cloned()
            .ok_or_else(|| ClusterError::UnknownResource {
                resource: resource.to_owned(),
            })
    }

    fn spec_of_object(&self, object: &Value) -> Result<ApiResourceSpec, ClusterError> {
        let field = |f: &str| object.get(f).and_then(Value::as_str).unwrap_or_default();
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        if api_version.is_empty() || kind.is_empty() {
            return Err(ApiError::bad_request(
                "the object needs apiVersion and kind to find its resource type",
            )
            .into());
        }
        self.shared
            .lock()
            .registry
            .by_api_version_kind(api_version, kind)
            .cloned()
            .ok_or_else(|| ClusterError::UnknownResource {
                resource: format!("{api_version}/{kind}"),
            })
    }

    fn direct(&self, verb: Verb) -> WriteCtx {
        WriteCtx {
            verb,
            actor: Actor::Direct,
            now: self.now(),
        }
    }

    /// Creates the object, or replaces it when one with its kind, namespace and name
    /// exists, without an API request. Unlike a client, this may set `.status` of any
    /// resource and never fails on a stale `resourceVersion`; the server still owns `uid`,
    /// `creationTimestamp`, `generation` and `resourceVersion`, and watches see the change.
    ///
    /// # Errors
    ///
    /// [`ClusterError::UnknownResource`] for an unregistered `apiVersion`/`kind`;
    /// [`ClusterError::Api`] for an object without name or a namespaced object without
    /// namespace.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    /// use serde_json::json;
    ///
    /// let cluster = FakeCluster::default();
    /// let pod = json!({
    ///     "apiVersion": "v1", "kind": "Pod",
    ///     "metadata": {"name": "web", "namespace": "default"},
    ///     "status": {"phase": "Running"}
    /// });
    /// let stored = cluster.apply_object(pod)?;
    /// assert_eq!(stored["status"]["phase"], "Running");
    /// assert_eq!(stored["metadata"]["resourceVersion"], "1");
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn apply_object(&self, object: Value) -> Result<Value, ClusterError> {
        let spec = self.spec_of_object(&object)?;
        let namespace = meta::meta_str(&object, "namespace")
            .unwrap_or_default()
            .to_owned();
        let name = meta::meta_str(&object, "name")
            .unwrap_or_default()
            .to_owned();
        let key = object_key(&spec, &namespace, &name);
        let mut state = self.shared.lock();
        let exists = !name.is_empty() && state.store.get(&key).is_some();
        let stored = if exists {
            let mut object = object;
            meta::set_meta(&mut object, "resourceVersion", None);
            state.store.replace(
                &spec,
                &key,
                object,
                self.direct(Verb::Update),
                WriteOpts::default(),
            )?
        } else {
            state.store.create(
                &spec,
                &namespace,
                object,
                self.direct(Verb::Create),
                WriteOpts::default(),
            )?
        };
        Ok(stored)
    }

    /// The object `name` of `resource` (a plural, a kind, or either with `.group`, as
    /// `kubectl get` accepts; `events` is the core group's). `namespace` is ignored for
    /// cluster-scoped resources.
    ///
    /// # Errors
    ///
    /// [`ClusterError::UnknownResource`] when `resource` names no registered type.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// assert_eq!(cluster.get("deployments.apps", Some("default"), "web")?, None);
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn get(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, ClusterError> {
        let spec = self.spec(resource)?;
        let key = object_key(&spec, namespace.unwrap_or_default(), name);
        Ok(self.shared.lock().store.get(&key).cloned())
    }

    /// Every object of `resource`, in `namespace` or (with `None`) in all namespaces,
    /// ordered by namespace and name.
    ///
    /// # Errors
    ///
    /// [`ClusterError::UnknownResource`] when `resource` names no registered type.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    /// use serde_json::json;
    ///
    /// let cluster = FakeCluster::default();
    /// for ns in ["a", "b"] {
    ///     cluster.apply_object(json!({
    ///         "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": ns}
    ///     }))?;
    /// }
    /// assert_eq!(cluster.list("configmaps", None)?.len(), 2);
    /// assert_eq!(cluster.list("ConfigMap", Some("b"))?.len(), 1);
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn list(
        &self,
        resource: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, ClusterError> {
        let spec = self.spec(resource)?;
        let namespace = namespace.filter(|_| spec.namespaced);
        Ok(self
            .shared
            .lock()
            .store
            .list(&spec.key(), namespace)
            .cloned()
            .collect())
    }

    /// Deletes an object as an API DELETE with background propagation would: with
    /// finalizers it only gets a `deletionTimestamp`; otherwise it is removed and its
    /// dependents (by `ownerReferences`) are deleted too. Returns the object's last state.
    ///
    /// # Errors
    ///
    /// [`ClusterError::UnknownResource`], or [`ClusterError::Api`] with
    /// [`Reason::NotFound`] when there is no such object.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    /// use serde_json::json;
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.apply_object(json!({
    ///     "apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "x", "namespace": "default", "finalizers": ["keep"]}
    /// }))?;
    /// let marked = cluster.delete("configmaps", Some("default"), "x")?;
    /// assert!(marked["metadata"]["deletionTimestamp"].is_string());
    /// assert!(cluster.get("configmaps", Some("default"), "x")?.is_some());
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn delete(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ClusterError> {
        let spec = self.spec(resource)?;
        let key = object_key(&spec, namespace.unwrap_or_default(), name);
        let deletion = self.shared.lock().store.delete(
            &spec,
            &key,
            self.direct(Verb::Delete),
            &DeleteOpts::default(),
        )?;
        Ok(deletion.object().clone())
    }

    /// Replaces the `.status` of an object (as the controller that owns it would),
    /// bumping its resourceVersion and notifying watches. Returns the stored object.
    ///
    /// # Errors
    ///
    /// [`ClusterError::UnknownResource`], or [`ClusterError::Api`] with
    /// [`Reason::NotFound`] when there is no such object.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    /// use serde_json::json;
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.apply_object(json!({
    ///     "apiVersion": "apps/v1", "kind": "Deployment",
    ///     "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 1}
    /// }))?;
    /// let stored = cluster.set_status("deployments", Some("default"), "web", json!({"readyReplicas": 1}))?;
    /// assert_eq!(stored["status"]["readyReplicas"], 1);
    /// assert_eq!(stored["metadata"]["generation"], 1);
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn set_status(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
        status: Value,
    ) -> Result<Value, ClusterError> {
        let spec = self.spec(resource)?;
        let key = object_key(&spec, namespace.unwrap_or_default(), name);
        let stored =
            self.shared
                .lock()
                .store
                .set_status(&spec, &key, status, self.direct(Verb::Update))?;
        Ok(stored)
    }

    /// Every object whose `kind` is `kind` (any group, version and namespace).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    /// use serde_json::json;
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.apply_object(json!({
    ///     "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"}
    /// }))?;
    /// assert_eq!(cluster.objects_of("Event").len(), 1);
    /// assert!(cluster.objects_of("Pod").is_empty());
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn objects_of(&self, kind: &str) -> Vec<Value> {
        self.shared
            .lock()
            .store
            .all()
            .filter(|(_, o)| o.get("kind").and_then(Value::as_str) == Some(kind))
            .map(|(_, o)| o.clone())
            .collect()
    }

    fn spec_of<K>(&self) -> Result<ApiResourceSpec, ClusterError>
    where
        K: kube::Resource<DynamicType = ()>,
    {
        let (api_version, kind) = (K::api_version(&()), K::kind(&()));
        self.shared
            .lock()
            .registry
            .by_api_version_kind(&api_version, &kind)
            .cloned()
            .ok_or_else(|| ClusterError::UnknownResource {
                resource: format!("{api_version}/{kind}"),
            })
    }

    /// Creates a typed object without an API request (see [`FakeCluster::apply_object`]
    /// for what direct access may do), returning it as stored.
    ///
    /// # Errors
    ///
    /// [`ClusterError::Api`] with [`Reason::AlreadyExists`] when it exists; otherwise as
    /// [`FakeCluster::apply_object`].
    ///
    /// # Examples
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("a".into());
    /// cm.metadata.namespace = Some("default".into());
    /// let stored = cluster.create(&cm)?;
    /// assert!(stored.metadata.uid.is_some());
    /// assert!(cluster.create(&cm).is_err());
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn create<K>(&self, object: &K) -> Result<K, ClusterError>
    where
        K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let spec = self.spec_of::<K>()?;
        let value = serde_json::to_value(object)?;
        let namespace = meta::meta_str(&value, "namespace")
            .unwrap_or_default()
            .to_owned();
        let stored = self.shared.lock().store.create(
            &spec,
            &namespace,
            value,
            self.direct(Verb::Create),
            WriteOpts::default(),
        )?;
        Ok(serde_json::from_value(stored)?)
    }

    /// Creates or replaces a typed object without an API request (see
    /// [`FakeCluster::apply_object`]), returning it as stored.
    ///
    /// # Errors
    ///
    /// As [`FakeCluster::apply_object`].
    ///
    /// # Examples
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("a".into());
    /// cm.metadata.namespace = Some("default".into());
    /// cluster.apply(&cm)?;
    /// cm.data = Some([("k".to_owned(), "v".to_owned())].into());
    /// let stored = cluster.apply(&cm)?;
    /// assert_eq!(stored.metadata.resource_version.as_deref(), Some("2"));
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn apply<K>(&self, object: &K) -> Result<K, ClusterError>
    where
        K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let mut value = serde_json::to_value(object)?;
        // Typed objects always know their type, even when serialized without it.
        if let Some(map) = value.as_object_mut() {
            map.insert(
                "apiVersion".into(),
                Value::String(K::api_version(&()).into_owned()),
            );
            map.insert("kind".into(), Value::String(K::kind(&()).into_owned()));
        }
        Ok(serde_json::from_value(self.apply_object(value)?)?)
    }

    /// The typed object `name` (`namespace` is ignored for cluster-scoped kinds).
    ///
    /// # Errors
    ///
    /// [`ClusterError::UnknownResource`] when `K` is not registered;
    /// [`ClusterError::Json`] when the stored object does not deserialize as `K`.
    ///
    /// # Examples
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::Namespace;
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.apply_object(serde_json::json!({
    ///     "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}
    /// }))?;
    /// let ns: Option<Namespace> = cluster.get_typed(None, "ml")?;
    /// assert_eq!(ns.and_then(|n| n.metadata.name).as_deref(), Some("ml"));
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn get_typed<K>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>, ClusterError>
    where
        K: kube::Resource<DynamicType = ()> + DeserializeOwned,
    {
        let spec = self.spec_of::<K>()?;
        let key = object_key(&spec, namespace.unwrap_or_default(), name);
        let value = self.shared.lock().store.get(&key).cloned();
        Ok(value.map(serde_json::from_value).transpose()?)
    }
}
