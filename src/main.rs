fn main() -> std::process::ExitCode {
    use frameaudit::cli::{self, Next};
    // The command line says what to open; the audit screens are started here, so that the
    // command line never depends on the TUI.
    let result = cli::run().and_then(|next| match next {
        Next::Exit => Ok(()),
        Next::Screens(ds, opts) => frameaudit::tui::run(*ds, *opts),
    });
    cli::exit_code(result)
}
