//! Command-line parsing and dispatch. Every failure ends as one line on stderr and a
//! non-zero exit code: 2 for bad usage or input, 1 for a result that fails verification.

mod analyze;
mod analyze_session;
mod bench;
#[cfg(any(feature = "opencl", feature = "cuda"))]
mod bench_lab;
mod bench_mapped;
mod bench_shapes;
#[cfg(feature = "cuda")]
mod check_kernels;
#[cfg(feature = "cuda")]
mod compare;
mod devices;
mod json;
mod mapped;
mod output;
mod params;
mod report;
mod run;
mod shaped;
mod size;
#[cfg(any(feature = "opencl", feature = "cuda"))]
mod tune;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// redlab — parallel reductions with reproducible float results.
#[derive(Debug, Parser)]
#[command(name = "redlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the devices present, and why other backends are not available.
    Devices(devices::DevicesArgs),
    /// Reduce one input once (or --repeat times), verify it, report value, time and GB/s.
    Run(run::RunArgs),
    /// Time reductions over sizes × operators × types against a measured read roof.
    Bench(bench::BenchArgs),
    /// Compile every kernel variant for every operator × type (CUDA through NVRTC).
    #[cfg(feature = "cuda")]
    CheckKernels(check_kernels::CheckKernelsArgs),
    /// Run a kernel (a variant or an OpenCL C file) in the SIMT simulator: divergence,
    /// bank conflicts, coalescing, barriers, races, with pictures.
    Analyze(analyze::AnalyzeArgs),
    /// Build the HTML report with charts from JSON records of `redlab bench --json`.
    Report(report::ReportArgs),
    /// Search the fastest verified variant and parameters per problem and size on a GPU,
    /// and write the tuning database that `auto` reads.
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    Tune(tune::TuneArgs),
}

/// What a subcommand reports back besides its output.
pub enum Verdict {
    /// Everything as expected.
    Success,
    /// The command ran but a result did not verify.
    Mismatch(String),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("redlab: internal error: {info}");
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = match &cli.command {
        Command::Devices(args) => devices::run(args, &mut out).map(|_| Verdict::Success),
        Command::Run(args) => run::run(args, &mut out),
        Command::Bench(args) => bench::run(args, &mut out),
        #[cfg(feature = "cuda")]
        Command::CheckKernels(args) => check_kernels::run(args, &mut out),
        Command::Analyze(args) => analyze::run(args, &mut out),
        Command::Report(args) => report::run(args, &mut out),
        #[cfg(any(feature = "opencl", feature = "cuda"))]
        Command::Tune(args) => tune::run(args, &mut out),
    };
    let _ = out.flush();
    match result {
        Ok(Verdict::Success) => ExitCode::SUCCESS,
        Ok(Verdict::Mismatch(why)) => {
            eprintln!("redlab: verification failed: {why}");
            ExitCode::from(1)
        }
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redlab: error: {}", one_line(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}

/// Help and version go to stdout as clap formats them; usage errors become one line.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let text = e.to_string();
    let message: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let joined = message.join(" ");
    let joined = joined.strip_prefix("error: ").unwrap_or(&joined);
    eprintln!("redlab: error: {joined} (see 'redlab --help')");
    ExitCode::from(2)
}

fn one_line(text: &str) -> String {
    text.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<io::Error>()
        .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
}
