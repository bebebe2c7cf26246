//! `redlab analyze session.clamsee`: a CLamsee session (device and host code, see
//! `redlab_analyzer::clamsee`) run in the simulator, every kernel call analyzed in
//! order, and the arrays' final contents printed on request (`--show NAME`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use redlab_analyzer::report::Report;
use redlab_analyzer::sim::LaunchConfig;
use redlab_analyzer::{clamsee, session};

use super::analyze::{summarize_passes, Traces};

/// Runs the session in `path`.
pub fn run(
    path: &Path,
    show: &[String],
    defines: &[String],
    config: LaunchConfig,
    dump: &[String],
    dump_paths: &[std::path::PathBuf],
) -> anyhow::Result<(Report, Traces)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let parsed = clamsee::parse(&text)?;
    let ran = session::run(&parsed, &config, defines)?;
    let passes: Vec<_> = ran.calls.iter().map(|c| c.pass.clone()).collect();
    let (total, each, traces) = summarize_passes(&passes, "the session calls no kernel")?;
    let mut buffers = BTreeMap::new();
    for name in show {
        let (ty, bytes) = ran
            .arrays
            .get(name)
            .with_context(|| format!("--show {name}: the session has no array {name}"))?;
        let values = super::analyze::element_texts(ty, bytes)?;
        buffers.insert(name.clone(), values);
    }
    for (name, path) in dump.iter().zip(dump_paths) {
        let (ty, bytes) = ran
            .arrays
            .get(name)
            .with_context(|| format!("--dump {name}: the session has no array {name}"))?;
        super::analyze::write_npy(name, ty, bytes, path)?;
    }
    let calls: Vec<String> = ran.calls.iter().map(|c| c.text.clone()).collect();
    let report = Report {
        source: format!("{} (session: {})", path.display(), calls.join("; ")),
        total,
        passes: each,
        check: None,
        buffers,
    };
    Ok((report, traces))
}
