//! The processes the suite starts: on free loopback ports, and never outliving it.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `command`'s process is killed when the test thread that starts it ends
/// (`PR_SET_PDEATHSIG`), so a failing test leaves nothing running. Its own children are
/// not: start the program that does the work, not a wrapper that forks it.
pub fn dies_with_the_test(command: &mut Command) -> &mut Command {
    // SAFETY: prctl is async-signal-safe; it only asks the kernel to kill this child
    // when its parent goes.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        })
    }
}
