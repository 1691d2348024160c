//! The jobs' cache keeps every job packed: whatever job the API server hands nbv, the
//! reconciler reads back exactly that job (less what every cache drops), and the
//! gauges count what the job says.

use nbv_core::aggregate::{TrackingMethod, TrackingSettings};
use nbv_core::api::NotebookValidationJob;
use nbv_operator::operator::projection::{CachedJob, JobFacts, trim_metadata};
use nbv_testkit::strategies;
use proptest::prelude::*;

fn tracking() -> impl Strategy<Value = TrackingSettings> {
    prop_oneof![
        Just(TrackingMethod::Annotation),
        Just(TrackingMethod::Label),
        Just(TrackingMethod::AnnotationAndLabel),
    ]
    .prop_map(|method| TrackingSettings {
        method,
        ..TrackingSettings::default()
    })
}

proptest! {
    #[test]
    fn a_packed_job_unpacks_to_the_trimmed_job(manifest in strategies::job(), tracking in tracking()) {
        // Some generated statuses do not decode (a time that is not one); the watch
        // never hands nbv those.
        let decoded = serde_json::from_value::<NotebookValidationJob>(manifest);
        prop_assume!(decoded.is_ok());
        let job = decoded.expect("decoded");
        let cached = CachedJob::pack(job.clone(), &tracking);
        let mut expected = job;
        trim_metadata(&mut expected.metadata);
        prop_assert_eq!(cached.job().expect("unpacked"), expected.clone());
        prop_assert_eq!(cached.name(), expected.metadata.name.as_deref().unwrap_or_default());
        prop_assert_eq!(cached.namespace(), expected.metadata.namespace.as_deref().unwrap_or_default());
        prop_assert_eq!(cached.facts(), &JobFacts::of(&expected, &tracking));
    }
}
