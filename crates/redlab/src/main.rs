//! The `redlab` command: parse, run one subcommand, turn the outcome into an exit code.

fn main() -> std::process::ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("redlab: internal error: {info}");
    }));
    redlab::cli::main()
}
