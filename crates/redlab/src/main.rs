//! The `redlab` command: parse, run one subcommand, turn the outcome into an exit code.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
