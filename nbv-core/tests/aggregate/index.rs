//! The incremental index, against a from-scratch model.

use super::*;

// ---------------------------------------------------------------------------------------
// The index, against a from-scratch model
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Upsert {
        job: usize,
        app: Option<usize>,
        phase: JobPhase,
    },
    Remove {
        job: usize,
    },
    /// A relist: only the jobs in `keep` still exist.
    Retain {
        keep: BTreeSet<usize>,
    },
}

const JOBS: usize = 8;
const APPS: usize = 3;

fn job_key(i: usize) -> JobKey {
    // Two namespaces share names, so per-Application grouping must not use names alone.
    JobKey::new(["ml", "ops"][i % 2], format!("job-{}", i / 2))
}

fn app_id(i: usize) -> AppId {
    [
        AppId::new(None, "a").unwrap(),
        AppId::new(Some("team"), "a").unwrap(),
        AppId::new(None, "b").unwrap(),
    ][i]
        .clone()
}

fn job_phase() -> impl Strategy<Value = JobPhase> {
    prop_oneof![
        Just(JobPhase::Running),
        Just(JobPhase::Succeeded),
        Just(JobPhase::Failed)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..JOBS, proptest::option::of(0..APPS), job_phase())
            .prop_map(|(job, app, phase)| Op::Upsert { job, app, phase }),
        1 => (0..JOBS).prop_map(|job| Op::Remove { job }),
        1 => proptest::collection::btree_set(0..JOBS, 0..JOBS).prop_map(|keep| Op::Retain { keep }),
    ]
}

/// The model: the set of live jobs, and an aggregate recomputed from scratch.
type Model = HashMap<usize, (Option<usize>, JobPhase)>;

/// (total, succeeded, failed, running, failed jobs) of `app`, from scratch.
fn recompute(model: &Model, app: usize) -> (u64, u64, u64, u64, Vec<String>) {
    let mut counts = (0, 0, 0, 0, BTreeSet::new());
    for (job, (parent, phase)) in model {
        if *parent != Some(app) {
            continue;
        }
        counts.0 += 1;
        match phase {
            JobPhase::Succeeded => counts.1 += 1,
            JobPhase::Failed => {
                counts.2 += 1;
                counts.4.insert(job_key(*job).to_string());
            }
            JobPhase::Running => counts.3 += 1,
        }
    }
    (
        counts.0,
        counts.1,
        counts.2,
        counts.3,
        counts.4.into_iter().collect(),
    )
}

fn observed(agg: &Aggregate) -> (u64, u64, u64, u64, Vec<String>) {
    (
        agg.total(),
        agg.succeeded(),
        agg.failed(),
        agg.running(),
        agg.failed_jobs().map(str::to_owned).collect(),
    )
}

proptest! {
    #[test]
    fn index_matches_a_from_scratch_recomputation(ops in proptest::collection::vec(op(), 0..60)) {
        let mut index = AggregateIndex::new();
        let mut model = Model::new();
        for op in ops {
            let before: Vec<_> = (0..APPS).map(|a| recompute(&model, a)).collect();
            let changed = match op {
                Op::Upsert { job, app, phase } => {
                    model.insert(job, (app, phase));
                    index.upsert(job_key(job), app.map(app_id).and_then(|a| parent(&a)), phase)
                }
                Op::Remove { job } => {
                    model.remove(&job);
                    index.remove(&job_key(job))
                }
                Op::Retain { keep } => {
                    model.retain(|job, _| keep.contains(job));
                    let keys: BTreeSet<JobKey> = keep.iter().map(|j| job_key(*j)).collect();
                    index.retain(|job| keys.contains(job))
                }
            };
            // Exactly the Applications whose aggregate changed are reported, sorted.
            let expected: Vec<AppId> = (0..APPS)
                .filter(|a| before[*a] != recompute(&model, *a))
                .map(app_id)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            prop_assert_eq!(changed, expected);
            for a in 0..APPS {
                let agg = index.aggregate(&app_id(a));
                prop_assert_eq!(observed(agg), recompute(&model, a));
                prop_assert_eq!(agg.total(), agg.succeeded() + agg.failed() + agg.running());
            }
            // Only Applications with jobs are remembered.
            let known: BTreeSet<AppId> = index.applications().cloned().collect();
            let live: BTreeSet<AppId> = (0..APPS)
                .filter(|a| recompute(&model, *a).0 > 0)
                .map(app_id)
                .collect();
            prop_assert_eq!(known, live);
        }
    }
}
