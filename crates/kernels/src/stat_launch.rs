//! One launch of a statistics kernel over a tile plan: the task table goes up, the
//! kernel runs, and each tile's state comes back for the host to join.

use crate::driver::{Launcher, RunError};
use crate::statistics::{Program, TilePlan};

/// Runs `kernel` (built from `program`) over the tiles of
/// `plan` in `input` (the data, or the gathered rows): each tile's state, and the seconds
/// of the launch.
pub fn run_tiles<L: Launcher>(
    launcher: &L,
    kernel: &L::Kernel,
    program: &Program,
    input: &L::Buffer,
    plan: &TilePlan,
) -> Result<(Vec<[f64; 3]>, f64), RunError> {
    let tiles = plan.tiles();
    if tiles == 0 {
        return Ok((Vec::new(), 0.0));
    }
    let states_bytes = tiles * 3 * 8;
    let mut out = launcher.alloc(states_bytes + (plan.table.len() + 1) * 8)?;
    let mut bytes = vec![0u8; states_bytes];
    bytes.extend(plan.table.iter().flat_map(|w| w.to_le_bytes()));
    // After the table: tiles per output (read by the columns kernel).
    bytes.extend((plan.columns().unwrap_or(0) as u64).to_le_bytes());
    launcher.write(&mut out, &bytes)?;
    let seconds = launcher.launch(
        kernel,
        input,
        &out,
        tiles,
        program.groups * program.work_group,
        program.work_group,
    )?;
    let (states, _) = launcher.read(&out, states_bytes)?;
    let states = states
        .chunks_exact(24)
        .map(|c| {
            let word =
                |k: usize| f64::from_le_bytes(c[8 * k..8 * k + 8].try_into().expect("8 bytes"));
            [word(0), word(1), word(2)]
        })
        .collect();
    Ok((states, seconds))
}
