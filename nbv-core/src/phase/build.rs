//! The image build of a run: `Initializing` → `Building` → `BuildComplete`, or `Failed`.

use chrono::{DateTime, Utc};

use crate::api::{BuildPhase, BuildStatus, NotebookValidationJobStatus, Phase};

use super::pod_events::fail;
use super::record::{build_phase, enter, out_of_phase};
use super::{Failure, Ignored, Reason, messages, truncate_message};

type Status = NotebookValidationJobStatus;

pub(super) fn build_started(
    s: &mut Status,
    phase: Phase,
    build_name: &str,
    now: DateTime<Utc>,
) -> Result<(), Ignored> {
    match phase {
        Phase::Initializing => match build_phase(s) {
            Some(BuildPhase::Pending) => {
                let build = s.build_status.get_or_insert_with(BuildStatus::default);
                build.phase = Some(BuildPhase::Running);
                build.build_name = Some(build_name.to_owned());
                build.start_time = Some(now);
                enter(s, Phase::Building, messages::building(build_name), now);
                Ok(())
            }
            None => Err(Ignored::BuildNotRequested),
            Some(_) => Err(out_of_phase("BuildStarted", phase)),
        },
        Phase::Building => {
            let build = s.build_status.get_or_insert_with(BuildStatus::default);
            match build.build_name.as_deref() {
                Some(current) if current == build_name => Ok(()),
                Some(current) => Err(Ignored::OtherBuild {
                    event: build_name.to_owned(),
                    current: current.to_owned(),
                }),
                // Adopted from another operator without a name: record it.
                None => {
                    build.build_name = Some(build_name.to_owned());
                    enter(s, Phase::Building, messages::building(build_name), now);
                    Ok(())
                }
            }
        }
        _ => Err(out_of_phase("BuildStarted", phase)),
    }
}

pub(super) fn build_succeeded(
    s: &mut Status,
    phase: Phase,
    image: &str,
    now: DateTime<Utc>,
) -> Result<(), Ignored> {
    if phase == Phase::BuildComplete {
        // The same result observed again.
        let same = s
            .build_status
            .as_ref()
            .and_then(|b| b.image_reference.as_deref())
            == Some(image);
        return if same {
            Ok(())
        } else {
            Err(out_of_phase("BuildSucceeded", phase))
        };
    }
    ensure_build_underway(s, phase, "BuildSucceeded")?;
    let build = s.build_status.get_or_insert_with(BuildStatus::default);
    build.phase = Some(BuildPhase::Complete);
    build.image_reference = Some(image.to_owned());
    build.completion_time = Some(now);
    enter(s, Phase::BuildComplete, messages::built(image), now);
    Ok(())
}

pub(super) fn build_failed(
    s: &mut Status,
    phase: Phase,
    reason: &Reason,
    message: &str,
    now: DateTime<Utc>,
) -> Result<(), Ignored> {
    ensure_build_underway(s, phase, "BuildFailed")?;
    let failure = Failure::permanent(reason.clone(), message);
    let build = s.build_status.get_or_insert_with(BuildStatus::default);
    build.phase = Some(BuildPhase::Failed);
    build.message = Some(truncate_message(message).into_owned());
    build.completion_time = Some(now);
    // A build that was never attempted did not fail: the job did.
    let text = if *reason == Reason::BUILD_NOT_SUPPORTED {
        messages::failed(&failure)
    } else {
        messages::build_failed(&failure)
    };
    fail(s, &failure, text, None, now);
    Ok(())
}

/// Whether a build may end now (`event` names the observation, for the error): it
/// runs, or it was requested and ends between two observations, never having looked
/// "running".
fn ensure_build_underway(s: &Status, phase: Phase, event: &'static str) -> Result<(), Ignored> {
    match phase {
        Phase::Building => Ok(()),
        Phase::Initializing => match build_phase(s) {
            Some(BuildPhase::Pending) => Ok(()),
            None => Err(Ignored::BuildNotRequested),
            Some(_) => Err(out_of_phase(event, phase)),
        },
        _ => Err(out_of_phase(event, phase)),
    }
}
