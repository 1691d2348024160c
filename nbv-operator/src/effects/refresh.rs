//! The `refresh` action on the cluster: the read and the patch that
//! [`nbv_core::actions::refresh`] decides (the run's completion time as an annotation,
//! and for an Application Argo CD's refresh request).

use kube::api::DynamicObject;
use nbv_core::actions::{Run, TriggerOutcome, refresh};
use nbv_core::triggers::TargetRef;

use super::target::as_json;
use super::{EffectError, Executor};

impl Executor {
    /// Refreshes `target` for `run`, as [`refresh::decide`] decides from the target
    /// (`read`, when deciding access already read it) and the executor's clock. The
    /// patch carries the `resourceVersion` read, so a write in between makes it a
    /// conflict, and the retry reads again.
    pub(super) async fn refresh(
        &self,
        target: &TargetRef,
        read: Option<DynamicObject>,
        run: &Run,
    ) -> Result<TriggerOutcome, EffectError> {
        let object = match read {
            Some(object) => object,
            None => self.read_target(target).await?,
        };
        let object = as_json(&object, target)?;
        self.carry_patch(
            target,
            refresh::decide(&object, target, run, self.clock.now()),
        )
        .await
    }
}
