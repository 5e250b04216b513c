//! `--fork` (the default, as in mold and wild): the link runs in a child process, and the process the build tool
//! started exits as soon as the child reports that the output is complete. The child's own exit (unmapping every
//! input and freeing the heap, a sizeable part of a large link, done by one thread in the kernel) then happens off
//! the caller's critical path. `--no-fork` links in the original process, so that its CPU time and peak memory can
//! be measured.
//!
//! The child reports its exit status as one byte on a pipe after closing its standard output and error (a build
//! tool that reads them through pipes would otherwise wait for the child's exit too). If the child dies without
//! reporting, the parent takes its status from `waitpid` and dies of the same signal.

use std::process::ExitCode;

/// Which side of the fork this process is on.
pub enum Side {
    /// The original process: exit with this status.
    Parent(ExitCode),
    /// The linking child: report the status through the notifier when done.
    Child(Notifier),
    /// Forking failed: link in this process.
    Unforked,
}

/// The child's end of the status pipe.
pub struct Notifier(libc::c_int);

/// Forks. Must be called while the process has a single thread (before the worker pool starts).
pub fn split() -> Side {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Side::Unforked;
    }
    let [read_end, write_end] = fds;
    // SAFETY: the process is single-threaded here (the caller's contract), so the child may run any code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing descriptors this function opened.
        unsafe {
            libc::close(read_end);
            libc::close(write_end);
        }
        return Side::Unforked;
    }
    if pid == 0 {
        // SAFETY: as above.
        unsafe { libc::close(read_end) };
        return Side::Child(Notifier(write_end));
    }
    // SAFETY: as above.
    unsafe { libc::close(write_end) };
    forward_signals(pid);
    Side::Parent(wait_for(pid, read_end))
}

static CHILD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// A build tool that stops the linker signals the process it started, the parent: the signal goes on to the child
/// (which removes its temporary output and dies of it, `cleanup`), and the parent then dies of the child's signal
/// (`wait_for`). Without this the child would finish the link after the build was stopped.
fn forward_signals(child: libc::pid_t) {
    extern "C" fn forward(sig: libc::c_int) {
        // SAFETY: kill is async-signal-safe; CHILD is our own child.
        unsafe { libc::kill(CHILD.load(std::sync::atomic::Ordering::Relaxed), sig) };
    }
    CHILD.store(child, std::sync::atomic::Ordering::Relaxed);
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that only calls kill; SA_RESTART is not set, so the parent's read of the
        // status pipe returns EINTR and is retried.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_IGN
            {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = forward as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut act.sa_mask);
                libc::sigaction(sig, &act, std::ptr::null_mut());
            }
        }
    }
}

fn wait_for(pid: libc::pid_t, read_end: libc::c_int) -> ExitCode {
    let mut byte = [0u8; 1];
    loop {
        // SAFETY: reads at most one byte into a one-byte buffer.
        let n = unsafe { libc::read(read_end, byte.as_mut_ptr().cast(), 1) };
        if n == 1 {
            return ExitCode::from(byte[0]);
        }
        if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    // The child exited (or was killed) without reporting.
    let mut status: libc::c_int = 0;
    // SAFETY: waits for our own child; status is a plain integer out-parameter.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return ExitCode::from(1);
        }
    }
    if libc::WIFEXITED(status) {
        return ExitCode::from(libc::WEXITSTATUS(status) as u8);
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: restoring the default action and raising the child's signal ends this process the same way.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return ExitCode::from(128u8.wrapping_add(sig as u8));
    }
    ExitCode::from(1)
}

impl Notifier {
    /// Reports `code` to the waiting parent after pointing standard output and error at `/dev/null`.
    pub fn done(self, code: u8) {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: opening /dev/null and duplicating it over descriptors 1 and 2, which this process owns.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if null >= 0 {
                libc::dup2(null, 1);
                libc::dup2(null, 2);
                libc::close(null);
            }
            libc::write(self.0, [code].as_ptr().cast(), 1);
            libc::close(self.0);
        }
    }
}
