//! The image build of a run: `Initializing` → `Building` → `BuildComplete`, or `Failed`.

use chrono::{DateTime, Utc};

use crate::api::{BuildStatus, NotebookValidationJobStatus, Phase};

use super::pod_events::fail;
use super::record::{enter, out_of_phase};
use super::{
    Build, BuildStage, Failure, Ignored, Reason, Run, RunState, messages, truncate_message,
};

type Status = NotebookValidationJobStatus;

/// The build started: `Initializing` with a pending build enters `Building`. `s` holds
/// `state` already; the new state is written into it and returned.
pub(super) fn build_started(
    state: &RunState,
    s: &mut Status,
    build_name: &str,
    now: DateTime<Utc>,
) -> Result<RunState, Ignored> {
    match state {
        RunState::Initializing(run) => match run.build.stage {
            BuildStage::Pending => {
                let next = RunState::Building(Run {
                    build: Build {
                        stage: BuildStage::Running,
                        name: Some(build_name.to_owned()),
                        ..run.build.clone()
                    },
                    ..run.clone()
                });
                next.write(s);
                let build = s.build_status.get_or_insert_with(BuildStatus::default);
                build.start_time = Some(now);
                enter(s, Phase::Building, messages::building(build_name), now);
                Ok(next)
            }
            BuildStage::NotRequested => Err(Ignored::BuildNotRequested),
            _ => Err(out_of_phase("BuildStarted", Phase::Initializing)),
        },
        RunState::Building(run) => match run.build.name.as_deref() {
            Some(current) if current == build_name => Ok(state.clone()),
            Some(current) => Err(Ignored::OtherBuild {
                event: build_name.to_owned(),
                current: current.to_owned(),
            }),
            // Adopted from another operator without a name: record it.
            None => {
                let next = RunState::Building(Run {
                    build: Build {
                        name: Some(build_name.to_owned()),
                        ..run.build.clone()
                    },
                    ..run.clone()
                });
                next.write(s);
                enter(s, Phase::Building, messages::building(build_name), now);
                Ok(next)
            }
        },
        _ => Err(out_of_phase("BuildStarted", phase_of(state))),
    }
}

/// The build produced `image`: the run enters `BuildComplete`.
pub(super) fn build_succeeded(
    state: &RunState,
    s: &mut Status,
    image: &str,
    now: DateTime<Utc>,
) -> Result<RunState, Ignored> {
    if let RunState::BuildComplete(run) = state {
        // The same result observed again.
        return if run.build.image.as_deref() == Some(image) {
            Ok(state.clone())
        } else {
            Err(out_of_phase("BuildSucceeded", Phase::BuildComplete))
        };
    }
    let run = ensure_build_underway(state, "BuildSucceeded")?;
    let next = RunState::BuildComplete(Run {
        build: Build {
            stage: BuildStage::Complete,
            image: Some(image.to_owned()),
            ..run.build.clone()
        },
        ..run.clone()
    });
    next.write(s);
    let build = s.build_status.get_or_insert_with(BuildStatus::default);
    build.completion_time = Some(now);
    enter(s, Phase::BuildComplete, messages::built(image), now);
    Ok(next)
}

/// The build failed: the run fails, permanently.
pub(super) fn build_failed(
    state: &RunState,
    s: &mut Status,
    reason: &Reason,
    message: &str,
    now: DateTime<Utc>,
) -> Result<RunState, Ignored> {
    let run = ensure_build_underway(state, "BuildFailed")?;
    let failure = Failure::permanent(reason.clone(), message);
    let run = Run {
        build: Build {
            stage: BuildStage::Failed,
            ..run.build.clone()
        },
        ..run.clone()
    };
    // A build that was never attempted did not fail: the job did.
    let text = if *reason == Reason::BUILD_NOT_SUPPORTED || *reason == Reason::POD_POLICY_DENIED {
        messages::failed(&failure)
    } else {
        messages::build_failed(&failure)
    };
    let next = fail(&run, s, &failure, text, None, now);
    let build = s.build_status.get_or_insert_with(BuildStatus::default);
    build.message = Some(truncate_message(message).into_owned());
    build.completion_time = Some(now);
    Ok(next)
}

/// The run whose build may end now (`event` names the observation, for the error): it
/// runs, or it was requested and ends between two observations, never having looked
/// "running".
fn ensure_build_underway<'a>(state: &'a RunState, event: &'static str) -> Result<&'a Run, Ignored> {
    match state {
        RunState::Building(run) => Ok(run),
        RunState::Initializing(run) => match run.build.stage {
            BuildStage::Pending => Ok(run),
            BuildStage::NotRequested => Err(Ignored::BuildNotRequested),
            _ => Err(out_of_phase(event, Phase::Initializing)),
        },
        _ => Err(out_of_phase(event, phase_of(state))),
    }
}

/// The phase of a state the machine admitted an event in (which has a run).
pub(super) fn phase_of(state: &RunState) -> Phase {
    state.phase().unwrap_or(Phase::Initializing)
}
