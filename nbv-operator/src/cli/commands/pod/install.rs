//! `nbv pod install DIR`: the `nbv-tools` init container's copy.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use nbv_core::pod::{RUNNER, RUNNER_FILE};

/// Copies the running binary to `DIR/nbv` and the runner to `DIR/runner.py`, readable
/// and executable by any user: the notebook container runs as another one.
pub fn install(dir: &Path, err: &mut dyn Write) -> u8 {
    match try_install(dir) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "nbv: cannot install nbv into {}: {e}", dir.display());
            1
        }
    }
}

fn try_install(dir: &Path) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    std::fs::create_dir_all(dir)?;
    // Written under another name and renamed: a half-copied binary is never run.
    let partial = dir.join(".nbv.partial");
    std::fs::copy(&exe, &partial)?;
    std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755))?;
    std::fs::rename(&partial, dir.join("nbv"))?;
    let runner = dir.join(RUNNER_FILE);
    std::fs::write(&runner, RUNNER)?;
    std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o644))?;
    Ok(())
}
