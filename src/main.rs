fn main() -> std::process::ExitCode {
    frameaudit::cli::main()
}
