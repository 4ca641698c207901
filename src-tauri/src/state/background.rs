//! Background work that must not slow what the user waits for: on a machine with two cores,
//! work at normal priority (a marker check, the waterfall's reading) takes a core from the
//! webview's painting and from a click's command. It runs here on a thread of its own at a low
//! scheduling priority (nice 10), and the async command that asked awaits it without holding a
//! runtime thread.

/// Lowers this thread's scheduling priority (nice 10; on Linux the nice value is per thread and
/// threads started from here inherit it). Best effort: nothing changes where it is refused.
pub fn background_priority() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 10);
}

/// This thread's nice value (Linux; 0 elsewhere or when it cannot be read).
#[cfg(test)]
fn thread_nice() -> i32 {
    #[cfg(target_os = "linux")]
    {
        rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap_or(0)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// Runs `f` on a new thread at background priority and awaits its result; `None` when it
/// panicked. The thread is new each time, so no runtime thread keeps the lowered priority.
pub async fn run_in_background<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let worker = std::thread::spawn(move || {
        background_priority();
        f()
    });
    tauri::async_runtime::spawn_blocking(move || worker.join().ok()).await.ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_work_runs_at_low_priority_and_leaves_the_caller_alone() {
        let before = thread_nice();
        let (inside, value) =
            tauri::async_runtime::block_on(run_in_background(|| (thread_nice(), 42))).expect("the work ran");
        assert_eq!(value, 42);
        #[cfg(target_os = "linux")]
        assert!(inside >= 10, "the work ran at nice {inside}, not at background priority");
        let _ = inside;
        assert_eq!(thread_nice(), before, "the caller's priority changed");
        assert!(tauri::async_runtime::block_on(run_in_background(|| -> u8 { panic!("boom") })).is_none());
    }
}
