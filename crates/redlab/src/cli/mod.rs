//! Command-line parsing and dispatch, shared by the binary and in-process front ends. Every failure ends as one line on stderr and a
//! non-zero exit code: 2 for bad usage or input, 1 for a result that fails verification.

mod analyze;
mod analyze_compare;
mod analyze_segments;
mod analyze_session;
mod bench;
#[cfg(any(feature = "opencl", feature = "cuda"))]
mod bench_lab;
mod bench_mapped;
mod bench_shapes;
mod bench_shapes_mapped;
#[cfg(feature = "cuda")]
mod check_kernels;
#[cfg(feature = "cuda")]
mod compare;
mod devices;
mod exchange;
mod json;
mod mapped;
mod output;
mod params;
mod ranks;
mod ranks_mapped;
mod ranks_shaped;
mod report;
mod run;
mod run_generated;
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

/// How a command ended: its exit code (0 success, 1 a result that failed verification,
/// 2 bad usage or input) and, unless it succeeded, the one line that says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// The process exit code the command line uses.
    pub code: u8,
    /// The message printed on stderr, without the `redlab: ` prefix.
    pub message: Option<String>,
}

/// Entry point of the binary: parses the process arguments and runs the command,
/// printing to stdout and, on failure, one line to stderr.
pub fn main() -> ExitCode {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let ending = run_args(std::env::args_os(), &mut out);
    if let Some(message) = &ending.message {
        eprintln!("redlab: {message}");
    }
    ExitCode::from(ending.code)
}

/// Runs one command line (`args[0]` is the program name) with its output going to
/// `out`: what the binary does, for front ends that run commands in-process.
pub fn run_args<I, T>(args: I, out: &mut dyn Write) -> Ending
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(e, out),
    };
    let result = match &cli.command {
        Command::Devices(args) => devices::run(args, out).map(|_| Verdict::Success),
        Command::Run(args) => run::run(args, out),
        Command::Bench(args) => bench::run(args, out),
        #[cfg(feature = "cuda")]
        Command::CheckKernels(args) => check_kernels::run(args, out),
        Command::Analyze(args) => analyze::run(args, out),
        Command::Report(args) => report::run(args, out),
        #[cfg(any(feature = "opencl", feature = "cuda"))]
        Command::Tune(args) => tune::run(args, out),
    };
    let _ = out.flush();
    let (code, message) = match result {
        Ok(Verdict::Success) => (0, None),
        Ok(Verdict::Mismatch(why)) => (1, Some(format!("verification failed: {why}"))),
        Err(e) if is_broken_pipe(&e) => (0, None),
        Err(e) => (2, Some(format!("error: {}", one_line(&format!("{e:#}"))))),
    };
    Ending { code, message }
}

/// Help and version go to `out` as clap formats them; usage errors become one line.
fn usage_error(e: clap::Error, out: &mut dyn Write) -> Ending {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = write!(out, "{}", e.render());
        return Ending {
            code: 0,
            message: None,
        };
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
    Ending {
        code: 2,
        message: Some(format!("error: {joined} (see 'redlab --help')")),
    }
}

fn one_line(text: &str) -> String {
    text.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<io::Error>()
        .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
}
