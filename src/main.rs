//! The `frameaudit` binary: runs the command line, or opens the audit screens it asks for.

fn main() -> std::process::ExitCode {
    use frameaudit::cli::{self, Next};
    frameaudit::core::mark_start();
    few_heap_arenas();
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
