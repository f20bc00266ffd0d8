//! Stop signals (SIGINT, SIGTERM, SIGHUP): one policy for every command of
//! the process, measured runs, `quick`, the lab and the durability tools.
//!
//! - A signal the parent set to be ignored stays ignored: `nohup tankbench …`
//!   must survive the hangup, and a shell starts background jobs with SIGINT
//!   ignored.
//! - The first stop signal sets a process-wide flag ([`stop_requested`]) that
//!   long work polls to end cleanly (a report of what was done, a teardown),
//!   and records which signal it was ([`stop_signal`], for exit code 128 + N).
//! - A second stop signal takes the signal's default action (the process
//!   ends at once), unless the command gave its own async-signal-safe action
//!   for it ([`StopHandlers::on_second`], e.g. `quick` removing its scratch
//!   directory before it exits).
//!
//! The first installation wins: a command that installs its handlers before
//! a run starts keeps them, and the run's own call changes nothing.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering::SeqCst};

/// The signals that ask tankbench to stop.
pub(crate) const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

static STOP: AtomicBool = AtomicBool::new(false);
/// The first stop signal's number; 0 before any (or for a stop asked for by
/// code, [`request_stop`]).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// How many stop signals arrived.
static SEEN: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The command's action after a first signal, as a function address; 0:
/// none.
static ON_FIRST: AtomicUsize = AtomicUsize::new(0);
/// The command's action for a second signal, as a function address; 0: the
/// signal's default action.
static ON_SECOND: AtomicUsize = AtomicUsize::new(0);

/// A command's action for a stop signal. It runs inside the signal handler:
/// it may only make async-signal-safe calls (signal-safety(7)); an action for
/// a second signal should end the process (`libc::_exit`).
pub(crate) type SignalAction = extern "C" fn(libc::c_int);
/// The action for a second stop signal (the older name of [`SignalAction`]).
pub(crate) type SecondSignalAction = SignalAction;

/// Which signals to route, and what a second one does.
#[derive(Debug, Clone, Copy)]
pub struct StopHandlers {
    signals: &'static [libc::c_int],
    on_first: Option<SignalAction>,
    on_second: Option<SignalAction>,
}

impl Default for StopHandlers {
    fn default() -> Self {
        StopHandlers {
            signals: &STOP_SIGNALS,
            on_first: None,
            on_second: None,
        }
    }
}

impl StopHandlers {
    /// SIGINT, SIGTERM and SIGHUP; a second signal takes its default action.
    pub fn new() -> Self {
        Self::default()
    }

    /// Route only these signals (e.g. SIGINT and SIGTERM).
    pub fn signals(mut self, signals: &'static [libc::c_int]) -> Self {
        self.signals = signals;
        self
    }

    /// Also run `action` after the first stop signal has set the flag (a
    /// note to the user, say). The handler keeps errno as it found it, so
    /// the action may write.
    pub(crate) fn on_first(mut self, action: SignalAction) -> Self {
        self.on_first = Some(action);
        self
    }

    /// Run `action` on a second stop signal instead of the default action.
    pub(crate) fn on_second(mut self, action: SecondSignalAction) -> Self {
        self.on_second = Some(action);
        self
    }

    /// Install the handlers, unless stop handlers are already installed in
    /// this process (the first installation wins). Returns whether these were
    /// installed.
    pub fn install(self) -> bool {
        if INSTALLED.swap(true, SeqCst) {
            return false;
        }
        ON_FIRST.store(self.on_first.map_or(0, |f| f as usize), SeqCst);
        ON_SECOND.store(self.on_second.map_or(0, |f| f as usize), SeqCst);
        for &sig in self.signals {
            // SAFETY: an all-zero sigaction is a valid value of that plain C
            // struct before its fields are set; sigaction(2) reads `sa` and
            // writes the old action into `old`, both valid for the call. The
            // handler only touches atomics and, on a second signal, calls
            // async-signal-safe functions (signal-safety(7)).
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
        true
    }
}

extern "C" fn on_stop_signal(sig: libc::c_int) {
    if SEEN.fetch_add(1, SeqCst) == 0 {
        // Record the signal before the flag, so a poller that sees the flag
        // finds the signal too.
        let _ = SIGNAL.compare_exchange(0, sig, SeqCst, SeqCst);
        STOP.store(true, SeqCst);
        let action = ON_FIRST.load(SeqCst);
        if action != 0 {
            // The interrupted code may be about to read errno (after a failed
            // write, say): the action's calls must not change it.
            // SAFETY: errno is thread-local; reading and restoring it is
            // safe. ON_FIRST only ever holds 0 or the address of a
            // `SignalAction` stored by `install`.
            unsafe {
                let errno = *libc::__errno_location();
                let action: SignalAction = std::mem::transmute(action);
                action(sig);
                *libc::__errno_location() = errno;
            }
        }
        return;
    }
    let action = ON_SECOND.load(SeqCst);
    if action != 0 {
        // SAFETY: ON_SECOND only ever holds 0 or the address of a
        // `SignalAction` stored by `install`.
        let action: SignalAction = unsafe { std::mem::transmute(action) };
        action(sig);
        return;
    }
    // SAFETY: signal(2) and raise(3) are async-signal-safe; restoring the
    // default action and raising the signal again ends the process as the
    // signal would have without tankbench's handler.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// The scratch file a second stop signal removes before the process ends
/// (slog's, the local probe's): a leaked C string, for a handler that may
/// only make async-signal-safe calls. Null: none.
static SCRATCH_FILE: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
/// Whether a second stop signal waits for the cleanup the first one started
/// (a scratch file on an NFS export can only be removed by a call over the
/// network, which the run makes within one operation's deadline).
static SECOND_WAITS: AtomicBool = AtomicBool::new(false);

/// Name the scratch file this process just created, for
/// [`remove_scratch_file_and_exit`]. Call it right after the exclusive
/// create: a file that is not the process's own must never be named.
pub(crate) fn register_scratch_file(path: &std::path::Path) {
    let Ok(c) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
    else {
        return;
    };
    let old = SCRATCH_FILE.swap(c.into_raw(), SeqCst);
    if !old.is_null() {
        // SAFETY: `old` came from `CString::into_raw` above; a handler only
        // reads the current pointer.
        drop(unsafe { std::ffi::CString::from_raw(old) });
    }
}

/// The scratch file is gone (removed by the run): a later second signal
/// just ends the process. The string is leaked: a handler may be reading it.
pub(crate) fn forget_scratch_file() {
    SCRATCH_FILE.store(std::ptr::null_mut(), SeqCst);
}

/// Whether a second stop signal waits (true) for the cleanup the first
/// started instead of ending the process.
pub(crate) fn second_signal_waits(waits: bool) {
    SECOND_WAITS.store(waits, SeqCst);
}

/// A second stop signal's action for a command with a scratch file: remove
/// the file [`register_scratch_file`] named and end the process with 128 +
/// the signal; or nothing, while [`second_signal_waits`] says the run's own
/// cleanup must do it.
pub(crate) extern "C" fn remove_scratch_file_and_exit(sig: libc::c_int) {
    if SECOND_WAITS.load(SeqCst) {
        return;
    }
    let path = SCRATCH_FILE.load(SeqCst);
    // SAFETY: unlink(2) and _exit(2) are async-signal-safe; the path is null
    // or a NUL-terminated string leaked by `register_scratch_file`, never
    // freed while it is the current one.
    unsafe {
        if !path.is_null() {
            libc::unlink(path);
        }
        libc::_exit(128 + sig);
    }
}

/// Whether a stop was asked for (a stop signal, or [`request_stop`]).
pub fn stop_requested() -> bool {
    STOP.load(SeqCst)
}

/// The first stop signal that arrived, if a signal asked for the stop.
pub fn stop_signal() -> Option<libc::c_int> {
    match SIGNAL.load(SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// How many stop signals have arrived.
pub fn signals_seen() -> usize {
    SEEN.load(SeqCst)
}

/// Ask for a stop as a signal does, from code (one atomic store, so a
/// caller's own signal handler may call it too).
pub fn request_stop() {
    STOP.store(true, SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disposition(sig: libc::c_int) -> usize {
        // SAFETY: sigaction(2) with no new action only writes the current one
        // into `old`, a valid struct owned here.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            assert_eq!(libc::sigaction(sig, std::ptr::null(), &mut old), 0);
            old.sa_sigaction
        }
    }

    /// One test for the whole process-wide state: an ignored signal stays
    /// ignored, the first installation wins, and a first signal sets the flag
    /// and names the signal without ending the process.
    #[test]
    fn ignored_stays_ignored_first_install_wins_first_signal_is_recorded() {
        // SAFETY: setting a signal to SIG_IGN has no preconditions; no other
        // test in this binary depends on SIGHUP.
        unsafe {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
        }
        assert!(StopHandlers::new().install());
        assert_eq!(disposition(libc::SIGHUP), libc::SIG_IGN);
        assert_ne!(disposition(libc::SIGTERM), libc::SIG_DFL);
        assert!(!StopHandlers::new().signals(&[libc::SIGINT]).install());
        assert!(!stop_requested());
        // SAFETY: raise(3) delivers SIGTERM to this thread; the handler
        // installed above only records it (first signal).
        unsafe {
            libc::raise(libc::SIGTERM);
        }
        assert!(stop_requested());
        assert_eq!(stop_signal(), Some(libc::SIGTERM));
        assert_eq!(signals_seen(), 1);
    }
}
