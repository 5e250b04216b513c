//! The temporary output file (`output_file`) is removed when the link dies of `SIGINT`, `SIGTERM` or `SIGHUP`, or
//! panics, so that an interrupted build leaves nothing beside its outputs. A `SIGKILL` cannot be caught: its
//! leftover is replaced by the next link to the same output, which uses the same temporary name
//! (`output_file::temp_path`).
//!
//! The path is kept as a C string behind an atomic pointer: the signal handler may only read it and call
//! `unlink(2)`, which is async-signal-safe.

use std::ffi::CString;
use std::path::Path;
use std::sync::Once;
use std::sync::atomic::{AtomicPtr, Ordering};

static TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static HANDLERS: Once = Once::new();

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// From now on `path` is removed if the process dies of one of the signals above or panics.
pub fn register(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    // Leaked: the handler may read it at any time, and a link registers one or two paths.
    TEMP.store(c.into_raw(), Ordering::SeqCst);
    HANDLERS.call_once(|| {
        for sig in SIGNALS {
            // SAFETY: installs a handler that only calls async-signal-safe functions; SA_RESETHAND restores the
            // default action, so the re-raised signal then ends the process as it would have.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                act.sa_flags = libc::SA_RESETHAND;
                libc::sigemptyset(&mut act.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                // A signal the caller ignores (nohup) stays ignored.
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction != libc::SIG_IGN
                {
                    libc::sigaction(sig, &act, std::ptr::null_mut());
                }
            }
        }
    });
}

/// The registered file has been renamed into place or removed: nothing to clean up any more.
pub fn clear() {
    TEMP.store(std::ptr::null_mut(), Ordering::SeqCst);
}

/// Removes the registered file, if any (a panic, a signal).
pub fn remove_now() {
    let p = TEMP.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: `p` is a leaked, NUL-terminated C string (`register`).
        unsafe { libc::unlink(p) };
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    remove_now();
    // SAFETY: raise is async-signal-safe; the action is the default again (SA_RESETHAND).
    unsafe { libc::raise(sig) };
}

/// Removes the temporary output before a panic's message is printed: the panic ends the link.
pub fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        remove_now();
        default(info);
    }));
}
