//! Ctrl-C and SIGTERM: an interrupted run removes the temporary files it was writing
//! (`skillbundle::fs::atomic_file`), then ends as the signal ends a program, so that neither
//! the workspace nor the output directory keeps a `.skillbundle-*.partial` file.
//!
//! The two signals are blocked in every thread (threads inherit the mask of `main`,
//! which sets it before any other starts) and taken by one thread with `sigwait`, so
//! the cleanup runs as ordinary code, not in a signal handler.

/// Take SIGINT and SIGTERM from here on. Call first thing in `main`.
#[cfg(unix)]
pub fn install() {
    // SAFETY: plain libc calls on a signal set owned by this function and then by the
    // waiting thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let waiter = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut signal = 0;
                if libc::sigwait(&set, &mut signal) != 0 {
                    return;
                }
                skillbundle::fs::atomic_file::remove_in_progress();
                // End as the signal would have: default action, delivered to this thread.
                libc::signal(signal, libc::SIG_DFL);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::raise(signal);
                libc::_exit(128 + signal);
            });
        if waiter.is_err() {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

#[cfg(not(unix))]
pub fn install() {}
