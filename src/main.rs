//! The `frameaudit` binary: runs the command line, or opens the audit screens it asks for.

fn main() -> std::process::ExitCode {
    use frameaudit::cli::{self, Next};
    frameaudit::core::mark_start();
    few_heap_arenas();
    file_size_limit_is_an_error();
    // The command line says what to open; the audit screens are started here, so that the
    // command line never depends on the TUI.
    let result = cli::run().and_then(|next| match next {
        Next::Exit => Ok(()),
        Next::Screens(ds, opts) => frameaudit::tui::run(*ds, *opts),
    });
    cli::exit_code(result)
}

/// glibc gives each thread that allocates a heap arena of its own (up to 8 per core), and
/// memory freed in one arena is not reused by threads of another. The loaders' short-lived
/// threads (cell blocks, items, the finish of the matrix) so left about 40 MB more resident
/// at 10M cells than one thread would. Two arenas, as many as the machines we measure on
/// have cores, keep it there at no cost in time we could measure.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn few_heap_arenas() {
    // SAFETY: mallopt only sets a parameter of the allocator; it is called before any other
    // thread exists, and a value it refuses leaves the default.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn few_heap_arenas() {}

/// Under a file size limit (`ulimit -f`), a write past it sends SIGXFSZ, whose default
/// ends the process at once: the audit screens would leave the terminal in their mode and
/// lose the change being saved. Handled, the signal does nothing and the write fails with
/// "File too large", which every writer reports as it reports a full disk.
#[cfg(unix)]
fn file_size_limit_is_an_error() {
    static SEEN: std::sync::LazyLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
        std::sync::LazyLock::new(Default::default);
    // Refused only for a forbidden signal, which SIGXFSZ is not; the limit then ends the
    // process as it did.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, SEEN.clone());
}

#[cfg(not(unix))]
fn file_size_limit_is_an_error() {}
