//! The kube-runtime controller: what nbv watches, and the loop that runs reconciles.
//!
//! Watched through kube-runtime's watch cache, never polled:
//! - NotebookValidationJobs (all namespaces, or `--watch-namespace`). Every event of
//!   this watch also feeds the publisher's board, its only source: changes, deletions
//!   (a job deleted without a finalizer is never reconciled again) and new listings
//!   (jobs deleted while the watch was down are then forgotten). The cache keeps each
//!   job packed ([`CachedJob`]); a reconcile unpacks the one it works on;
//! - in default mode, the validation Pods nbv created, selected by nbv's label: the
//!   reconciler reads a Pod from this cache, not with a GET per event. The cache keeps
//!   only what nbv reads of each Pod
//!   ([`PodCache`]);
//! - Argo CD Applications in the configured Application namespaces, into a cache the
//!   publisher reads (their current annotations), so publishing needs no GET, and that
//!   the `sync` and `refresh` triggers and the report of a sync's result read. It
//!   keeps only the Applications nbv acts on, and starts once the jobs are listed
//!   ([`crate::operator::application_watch`]);
//! - Argo CD AppProjects in Argo CD's namespace, for their sync windows only: the
//!   cache keeps each project's name and `spec.syncWindows` and drops the rest.
//!
//! At start, Argo CD's namespace is found unless `--argocd-namespace` gives it (in
//! `argocd`, then `openshift-gitops`: a GET of the Namespace, and of its `argocd-cm`
//! where it exists: [`crate::operator::argocd::namespace`]),
//! and its tracking settings are read unless flags give them all: one LIST of the Argo
//! CD operator's `ArgoCD` resources there, else one GET of `argocd-cm` (unless the
//! search just read it). Whether nbv may read `argocd-cm` and the AppProjects there is
//! followed by [`AccessWatch`], which warns once when the Role is missing.
//!
//! Nothing else is cached: in particular not every Pod of the cluster (the upstream
//! operator's `Owns(Pod)` watch did that).
//!
//! The job and Pod watches are built here and handed to the controller as streams
//! (kube's `unstable-runtime` feature: `Controller::for_stream`, `owns_stream`), so
//! each object kind is watched once and its cache is shared with the code that needs
//! it.

use std::future::Future;
use std::sync::Arc;

use futures::{FutureExt, Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use nbv_core::aggregate::TrackingSettings;
use nbv_core::annotations::ON_SUCCESS_TRIGGER;
use nbv_core::api::NotebookValidationJob;
use nbv_core::phase::RetryPolicy;
use nbv_core::plan::EffectRetryPolicy;
use nbv_core::pod::{MANAGED_BY, MANAGED_BY_LABEL};

use crate::operator::application_watch::{ApplicationWatch, Namer, watch_applications};
use crate::operator::applications::Applications;
use crate::operator::argocd::{AccessWatch, namespace, tracking_settings};
use crate::operator::config::OperatorConfig;
use crate::operator::effects::{Executor, ExecutorConfig, FIELD_MANAGER};
use crate::operator::metrics::{ClusterView, JobScope, Metrics};
use crate::operator::models::ModelWatch;
use crate::operator::projection::{CachedJob, JobFacts, Parents, PodCache, named_applications};
use crate::operator::publisher::{JobFeed, Publisher};
use crate::operator::reconcile::context::Context;
use crate::operator::reconcile::{Cluster, JobIo, ParsedTriggers, error_policy, reconcile};
use crate::operator::resources::appproject_resource;
use crate::operator::resync::{self, Listings, RECONCILE_CONCURRENCY};
use crate::runtime::backoff::WatchBackoff;
use crate::runtime::clock::Clock;

/// Drives a reflector's stream until `shutdown`, logging its errors (`what`: the kind
/// watched; Argo CD's kinds are absent where Argo CD is not installed).
fn drive<E: std::fmt::Display + Send + 'static, T: Send + 'static>(
    stream: impl Stream<Item = Result<T, E>> + Send + 'static,
    what: &'static str,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let stream = stream.for_each(move |event| async move {
        if let Err(error) = event {
            tracing::debug!(%error, "{what} watch error (is Argo CD installed?)");
        }
    });
    tokio::spawn(async move {
        tokio::select! {
            _ = stream => {}
            _ = shutdown => {}
        }
    });
}

/// Starts a reflector of the AppProjects in `namespace` that keeps only what sync
/// windows need (name, namespace, resourceVersion and `spec.syncWindows`), driven
/// until `shutdown`, and returns its store. Each event tells `access` whether nbv may
/// read them.
fn watch_projects(
    client: &kube::Client,
    namespace: &str,
    access: AccessWatch,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Store<DynamicObject> {
    let resource = appproject_resource();
    let writer = reflector::store::Writer::<DynamicObject>::new(resource.clone());
    let reader = writer.as_reader();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let stream = watcher(api, crate::runtime::watch::config())
        .patient_backoff()
        .modify(|project| {
            let windows = project.data["spec"]["syncWindows"].take();
            project.data = serde_json::json!({"spec": {"syncWindows": windows}});
            project.metadata = kube::api::ObjectMeta {
                name: project.metadata.name.take(),
                namespace: project.metadata.namespace.take(),
                resource_version: project.metadata.resource_version.take(),
                ..kube::api::ObjectMeta::default()
            };
        })
        .reflect(writer)
        .inspect(move |event| access.observe(event));
    drive(stream, "AppProject", shutdown);
    reader
}

/// Argo CD's namespace (found unless given: `config` is updated with it) and its
/// tracking settings, and the [`AccessWatch`] of what nbv may read there, which warns
/// once (in the background) when the Role of `config/rbac/argocd_role.yaml` is missing.
async fn find_argocd(
    client: &kube::Client,
    config: &mut OperatorConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> (TrackingSettings, AccessWatch) {
    let given = (!config.discover_argocd_namespace).then_some(config.argocd_namespace.as_str());
    let found = namespace::discover(client, given).await;
    *config = std::mem::take(config).with_argocd_namespace(&found.namespace);
    let access = AccessWatch::new(&config.argocd_namespace);
    if found.forbidden {
        access.config_map_read(false);
    } else if found.argocd_cm.is_some() {
        access.config_map_read(true);
    }
    let tracking = tracking_settings(
        client,
        &config.argocd_namespace,
        &config.tracking,
        found.argocd_cm,
        &access,
    )
    .await;
    let warning = access.clone().warn_if_missing(ACCESS_PATIENCE);
    tokio::spawn(async move {
        tokio::select! {
            () = warning => {}
            () = shutdown => {}
        }
    });
    (tracking, access)
}

/// How long the start waits for the AppProjects' watch to say whether nbv may read
/// them, before it stops waiting to warn about a missing Role.
const ACCESS_PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// The jobs' watch, into `cache`, as the stream of changed jobs the controller
/// reconciles. Each job is packed for the cache ([`CachedJob::pack_with_facts`], its
/// parent found with `tracking` and kept once per Application); every event is handed
/// to the publisher through `feed` first, and a deleted job is reported, since without
/// a finalizer it is never reconciled again. The Applications each job names are
/// named to the Applications' cache through `namer`. Only changed jobs pass on: a
/// listing's are counted in `listings` once it is complete, for the sweep.
fn watch_jobs(
    api: Api<NotebookValidationJob>,
    cache: reflector::store::Writer<CachedJob>,
    context: Arc<Context>,
    feed: JobFeed,
    namer: Namer,
    listings: Listings,
) -> impl Stream<Item = Result<CachedJob, watcher::Error>> + Send + 'static {
    let tracking = context.settings.tracking.clone();
    let argocd_namespace = context.config.argocd_namespace.clone();
    let mut parents = Parents::default();
    watcher(api, crate::runtime::watch::config())
        .patient_backoff()
        .map_ok(move |event| {
            // A job's Applications are named before the publisher is fed, which may
            // look them up at once.
            let facts = match &event {
                watcher::Event::Apply(job) | watcher::Event::InitApply(job) => {
                    let facts = JobFacts::of(job, &tracking);
                    let namespace = job.namespace().unwrap_or_default();
                    let names = named_applications(
                        &facts,
                        job.annotations()
                            .get(ON_SUCCESS_TRIGGER)
                            .map(String::as_str),
                        &namespace,
                        &argocd_namespace,
                    );
                    namer.name(&ObjectRef::new(&job.name_any()).within(&namespace), names);
                    Some(facts)
                }
                _ => None,
            };
            feed.observe(&event);
            if let watcher::Event::Delete(job) = &event {
                context.job_deleted(job);
                context.metrics.job_deleted(job);
            }
            let mut pack = |job: NotebookValidationJob, facts: Option<JobFacts>| {
                let facts = facts.unwrap_or_else(|| JobFacts::of(&job, &tracking));
                CachedJob::pack_with_facts(job, facts, &mut parents)
            };
            match event {
                watcher::Event::Apply(job) => watcher::Event::Apply(pack(job, facts)),
                watcher::Event::Delete(job) => watcher::Event::Delete(pack(job, facts)),
                watcher::Event::Init => watcher::Event::Init,
                watcher::Event::InitApply(job) => watcher::Event::InitApply(pack(job, facts)),
                watcher::Event::InitDone => watcher::Event::InitDone,
            }
        })
        // The cache is updated before each event passes on to the controller.
        .reflect(cache)
        // A changed job is reconciled at once; the jobs of a listing are handed over by
        // the sweep once it is complete, at the pace they are reconciled (`resync`).
        .try_filter_map(move |event| {
            let changed = match event {
                watcher::Event::Apply(job) => Some(job),
                watcher::Event::InitDone => {
                    listings.complete();
                    None
                }
                watcher::Event::Init | watcher::Event::InitApply(_) | watcher::Event::Delete(_) => {
                    None
                }
            };
            futures::future::ready(Ok(changed))
        })
}

/// The Pod a Pod watch's event says changed, whose job is to be reconciled: not the
/// Pods of a listing. After a start the sweep of the jobs' listing reconciles every
/// job, and each Pod of the listing would add a request for its job to the
/// controller's scheduler, which keeps the room of the largest set it ever held (with
/// 10,000 Pods, more than the Pods' cache itself). A Pod that changed while its watch
/// was relisting is seen by its job's next reconcile (a running Pod's job is
/// reconciled every 30 s at the latest).
fn changed_pod(event: watcher::Event<Pod>) -> Option<Pod> {
    match event {
        watcher::Event::Apply(pod) | watcher::Event::Delete(pod) => Some(pod),
        watcher::Event::Init | watcher::Event::InitApply(_) | watcher::Event::InitDone => None,
    }
}

/// `K` in `namespace` (`--watch-namespace`), or in every namespace.
fn watched<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Everything the controller needs that is not the cluster.
pub struct Runtime {
    /// The controller configuration.
    pub config: OperatorConfig,
    /// Metrics to update.
    pub metrics: Arc<Metrics>,
    /// The time source.
    pub clock: Arc<dyn Clock>,
    /// `reportingInstance` of Events (the pod name).
    pub instance: String,
    /// Wraps the I/O of every reconcile: the simulation injects its faults and its
    /// deliberate bugs here. `None` in `nbv run`.
    pub io_layer: Option<IoLayer>,
    /// The client evictions go through, when it is not `client`: `nbv run` gives one
    /// without kube's own retries, so that a PodDisruptionBudget's 429 comes back at
    /// once and the restart waits as nbv-core decides
    /// ([`nbv_kube::KubeIo::with_eviction_client`]).
    pub evictions: Option<kube::Client>,
}

/// What wraps the I/O of the reconciles (see [`Runtime::io_layer`]).
pub type IoLayer = Arc<dyn Fn(Arc<dyn JobIo>) -> Arc<dyn JobIo> + Send + Sync>;

/// `shutdown`, or the end of the term `ended` stands for (its sender is dropped), as
/// one future every task can wait on.
fn within_term(
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
    ended: tokio::sync::oneshot::Receiver<()>,
) -> futures::future::Shared<std::pin::Pin<Box<dyn Future<Output = ()> + Send + Sync>>> {
    let either: std::pin::Pin<Box<dyn Future<Output = ()> + Send + Sync>> = Box::pin(async move {
        tokio::select! {
            () = shutdown => {}
            _ = ended => {}
        }
    });
    either.shared()
}

/// Runs the controller against `client` until `shutdown` resolves. The same function
/// runs in production (`nbv run`) and in simulation (`nbv simulate`).
pub async fn run(
    client: kube::Client,
    runtime: Runtime,
    shutdown: impl Future<Output = ()> + Send + Sync + Clone + 'static,
) {
    let Runtime {
        mut config,
        metrics,
        clock,
        instance,
        io_layer,
        evictions,
    } = runtime;
    // nbv_leader is 1 exactly while this function runs: only the Lease holder runs it.
    let _leading = metrics.leading();
    // Everything spawned below ends with this function, not only with the process: a
    // replica that lost the Lease drops this future, and its watches and its publisher
    // (with any patch it is sending) must stop with it, or a deposed leader goes on
    // writing while another replica leads.
    let (_term, term_ended) = tokio::sync::oneshot::channel::<()>();
    let shutdown = within_term(shutdown, term_ended);
    let (tracking, access) = find_argocd(&client, &mut config, shutdown.clone()).await;
    // The jobs' complete listings: they start the sweep, and the first one the
    // Applications' watch (the Applications the jobs name are known by then).
    let listings = Listings::default();
    let ApplicationWatch {
        store: applications,
        namer,
        woken: fetched,
        listed,
        reading,
    } = watch_applications(
        &client,
        &config.application_namespaces,
        listings.follow(),
        shutdown.clone(),
    );
    let projects = watch_projects(
        &client,
        &config.argocd_namespace,
        access.clone(),
        shutdown.clone(),
    );
    let executor = Executor::new(
        client.clone(),
        ExecutorConfig {
            trigger_access: config.trigger_access.clone(),
            field_manager: FIELD_MANAGER.to_owned(),
            reporting_instance: instance,
            argocd_namespace: config.argocd_namespace.clone(),
        },
    )
    .with_applications(applications.clone(), config.application_namespaces.clone())
    .with_projects(projects)
    .with_argocd_access(access)
    .with_eviction_client(evictions)
    .with_clock(clock.clone());
    let applications = Applications::new(
        Some(applications),
        config.application_namespaces.clone(),
        listed,
        reading,
    );
    let (publisher, feed) = Publisher::new(
        clock.clone(),
        executor.clone(),
        metrics.clone(),
        applications.clone(),
        tracking.clone(),
    );

    let jobs: Api<NotebookValidationJob> = watched(&client, config.watch_namespace.as_deref());
    // `--max-retries` is range-checked when the flags are parsed; a configuration built
    // in code with a value out of range stops here rather than running with another.
    let retry_policy = match RetryPolicy::new(
        config.max_retries,
        std::time::Duration::from_secs(60),
        2,
        std::time::Duration::from_secs(3600),
    ) {
        Ok(policy) => policy,
        Err(error) => {
            tracing::error!(%error, "the controller does not start");
            return;
        }
    };
    let job_cache = reflector::store::Writer::<CachedJob>::default();
    let job_store = job_cache.as_reader();
    let publishing = publisher.run(shutdown.clone());
    let stop = shutdown.clone();
    tokio::spawn(async move {
        // Dropped at once when the term ends, even in the middle of a patch.
        tokio::select! {
            () = publishing => {}
            () = stop => {}
        }
    });

    let pod_defaults = if config.gitops_only {
        config.pod_defaults.clone()
    } else {
        crate::operator::pod_settings::for_cluster(&client, config.pod_defaults.clone()).await
    };
    let mut pod_stream = None;
    let mut pod_store = None;
    if !config.gitops_only {
        // Only the Pods nbv created, selected by label: never every Pod of the cluster.
        let api: Api<Pod> = watched(&client, config.watch_namespace.as_deref());
        let selector = format!("{MANAGED_BY_LABEL}={MANAGED_BY}");
        // Each Pod is cut down to what nbv reads of it before the cache keeps it: a
        // finished Pod stays as long as its job, one per job. The cache is updated
        // before the event passes on to wake the Pod's job.
        let pod_cache = PodCache::default();
        pod_store = Some(pod_cache.clone());
        pod_stream = Some(
            watcher(api, crate::runtime::watch::config().labels(&selector))
                .patient_backoff()
                .map_ok(move |event| {
                    pod_cache.apply(&event);
                    event
                })
                .try_filter_map(|event| futures::future::ready(Ok(changed_pod(event)))),
        );
    }
    let observed = metrics.clone();
    let _observing = observed.observe(ClusterView {
        jobs: job_store.clone(),
        pods: pod_store.clone(),
        clock: clock.clone(),
    });
    // Jobs that wait for a model are reconciled again when it changes.
    let (wake, woken) = futures::channel::mpsc::unbounded();
    let models = Arc::new(ModelWatch::new(
        client.clone(),
        config.watch_namespace.clone(),
        wake,
    ));
    let settings = Arc::new(nbv_core::job::Settings {
        gitops_only: config.gitops_only,
        retry: retry_policy,
        max_retries: config.max_retries,
        effect_retry: EffectRetryPolicy::default(),
        requeue: config.requeue,
        pod_defaults,
        pod_admission_timeout: config.pod_admission_timeout,
        trigger_access: config.trigger_access.clone(),
        argocd_namespace: config.argocd_namespace.clone(),
        application_namespaces: config.application_namespaces.clone(),
        tracking: tracking.clone(),
        build: config.build.clone(),
    });
    let cluster: Arc<dyn JobIo> = Arc::new(Cluster::new(
        executor.clone(),
        pod_store,
        applications.clone(),
        models.clone(),
    ));
    let io = match io_layer {
        Some(layer) => layer(cluster),
        None => cluster,
    };
    let context = Arc::new(Context {
        settings,
        io,
        models,
        config,
        executor,
        applications,
        metrics,
        clock,
        parsed_triggers: ParsedTriggers::default(),
        reconciles: Arc::default(),
    });
    // Every job, after each listing and every resync, handed over as fast as the
    // controller reconciles (`resync`); a job is requeued alone only when it has
    // something due sooner.
    let (swept, sweeps) = futures::channel::mpsc::unbounded();
    tokio::spawn(resync::sweep(
        job_store.clone(),
        listings.follow(),
        context.reconciles.clone(),
        context.config.requeue.resync,
        swept,
    ));
    // Every request for a reconcile is told to the queue's gauge on its way in, and
    // every start on its way out (`nbv_reconcile_queue_depth`; see `ReconcileQueue`).
    let queued = context.metrics.clone();
    let _queueing = queued.queueing();
    let metrics = context.metrics.clone();
    let job_stream = watch_jobs(jobs, job_cache, context.clone(), feed, namer, listings)
        .inspect_ok(move |job| metrics.queue().requested(job.namespace(), job.name()));
    let by_ref = |metrics: &Arc<Metrics>| {
        let metrics = metrics.clone();
        move |job: &ObjectRef<CachedJob>| {
            let namespace = job.namespace.as_deref().unwrap_or_default();
            metrics.queue().requested(namespace, &job.name);
        }
    };
    let mut controller = Controller::for_stream(job_stream, job_store)
        .reconcile_on(woken.inspect(by_ref(&context.metrics)))
        .reconcile_on(fetched.inspect(by_ref(&context.metrics)))
        .reconcile_on(sweeps.inspect(by_ref(&context.metrics)));
    if let Some(pod_stream) = pod_stream {
        let metrics = context.metrics.clone();
        controller = controller.owns_stream(pod_stream.inspect_ok(move |pod| {
            for owner in pod_owners(pod) {
                metrics
                    .queue()
                    .requested(owner.namespace.as_deref().unwrap_or_default(), &owner.name);
            }
        }));
    }
    let results = context.metrics.clone();
    controller
        .with_config(ControllerConfig::default().concurrency(RECONCILE_CONCURRENCY))
        .graceful_shutdown_on(shutdown)
        // Each reconcile runs in its job's scope: the metrics it updates carry the
        // job's namespace (upstream's families) and, if asked, its name. The runner
        // calls this when it takes the job off the queue.
        .run(
            |job, context| {
                context.metrics.queue().started(job.namespace(), job.name());
                JobScope::new(job.namespace(), job.name()).run(reconcile(job, context))
            },
            error_policy,
            context,
        )
        .for_each(move |result| {
            // A job deleted while it waited leaves the queue without a reconcile.
            if let Err(kube::runtime::controller::Error::ObjectNotFound(job)) = &result {
                results
                    .queue()
                    .started(job.namespace.as_deref().unwrap_or_default(), &job.name);
            }
            async move {
                if let Err(error) = result {
                    tracing::debug!(%error, "reconcile error");
                }
            }
        })
        .await;
}

/// The jobs a changed Pod asks the controller for: its owners that are jobs, as
/// kube-runtime's `owns_stream` finds them.
fn pod_owners(pod: &Pod) -> impl Iterator<Item = ObjectRef<CachedJob>> + '_ {
    let namespace = pod.metadata.namespace.as_deref();
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .filter_map(move |owner| ObjectRef::from_owner_ref(namespace, owner, ()))
}
