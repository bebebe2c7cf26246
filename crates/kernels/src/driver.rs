//! Running a variant, whatever the backend: the checks before a run, the layout of each
//! pass, and the pass loop for each pass structure (with double buffering and the host
//! finish where a strategy ends on the host). A backend supplies buffers, transfers and
//! timed launches through [`Launcher`]; OpenCL and CUDA share everything else.

use redlab_core::canonical::TILE;
use redlab_core::{reference, ArrayRef, Problem, Value};

use crate::capability::Capabilities;
use crate::codec::Codec;
use crate::registry::{Applies, Geometry, PassStructure, Variant};

/// Subtree roots the one-launch kernel keeps at most (`MAX_PARTIALS` in
/// `canonical_one.cl`).
pub const ONE_LAUNCH_MAX_PARTIALS: usize = 2048;

/// Bytes after the one-launch kernel's result and roots: the ticket counter (4 bytes,
/// then 4 unused) and the atomic finish's accumulator (8), all zero between launches.
pub const ONE_LAUNCH_TAIL_BYTES: usize = 16;

/// The aligned subtrees of the tile tree the one-launch kernel cuts `n` elements into:
/// the smallest power-of-two span of tiles that leaves at most
/// [`ONE_LAUNCH_MAX_PARTIALS`] subtrees (the kernel computes the same from `n`).
pub fn one_launch_subtrees(n: usize) -> usize {
    let tiles = n.div_ceil(TILE).max(1);
    let mut k = 0;
    while tiles.div_ceil(1 << k) > ONE_LAUNCH_MAX_PARTIALS {
        k += 1;
    }
    tiles.div_ceil(1 << k)
}

/// Why a run did not produce a value.
#[derive(Debug, Clone)]
pub enum RunError {
    /// The variant cannot run this problem here (the reason in words).
    Skipped(String),
    /// The kernel did not build; the compiler's log.
    Build(String),
    /// A device call failed.
    Device(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Skipped(why) => write!(f, "skipped: {why}"),
            RunError::Build(log) => write!(f, "kernel build failed: {}", log.trim()),
            RunError::Device(what) => write!(f, "device error: {what}"),
        }
    }
}

impl std::error::Error for RunError {}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Run {
    /// The result.
    pub value: Value,
    /// Kernel seconds of each launch, from device events.
    pub passes: Vec<f64>,
    /// Device→host seconds of the result readback.
    pub download_s: f64,
}

/// What a backend provides to run passes: buffers, timed transfers and timed launches of
/// kernels that share the signature `kernel(const T* in, acc_t* out, ulong n)`.
pub trait Launcher {
    /// A device buffer.
    type Buffer;
    /// A built kernel.
    type Kernel: ?Sized;
    /// A buffer of at least `bytes` bytes, contents unspecified.
    fn alloc(&self, bytes: usize) -> Result<Self::Buffer, RunError>;
    /// Takes back a buffer from [`Launcher::alloc`] that is no longer needed; a backend
    /// may keep it for the next `alloc` it fits. The default frees it.
    fn recycle(&self, buffer: Self::Buffer) {
        drop(buffer);
    }
    /// Copies `bytes` into the start of `buffer`; returns the transfer's seconds.
    fn write(&self, buffer: &mut Self::Buffer, bytes: &[u8]) -> Result<f64, RunError>;
    /// Copies the first `bytes` of `buffer` back; returns them and the seconds.
    fn read(&self, buffer: &Self::Buffer, bytes: usize) -> Result<(Vec<u8>, f64), RunError>;
    /// Launches `kernel(input, output, n)` over `global` work-items in groups of `local`
    /// and returns its seconds from device events.
    fn launch(
        &self,
        kernel: &Self::Kernel,
        input: &Self::Buffer,
        output: &Self::Buffer,
        n: usize,
        global: usize,
        local: usize,
    ) -> Result<f64, RunError>;
    /// Launches each of `steps` in order over the same buffers, as one call would, and
    /// returns each step's seconds. The default waits for each launch before the next;
    /// a backend that can time a queue without waiting overrides it, so that the
    /// steps run back to back as in a library call, with no host round trip between.
    fn launch_chain(
        &self,
        steps: &[ChainStep<'_, Self::Kernel>],
        input: &Self::Buffer,
        output: &Self::Buffer,
        n: usize,
    ) -> Result<Vec<f64>, RunError> {
        steps
            .iter()
            .map(|s| self.launch(s.kernel, input, output, n, s.global, s.local))
            .collect()
    }
}

/// One launch of [`Launcher::launch_chain`]: a kernel and its launch shape.
pub struct ChainStep<'a, K: ?Sized> {
    /// The kernel.
    pub kernel: &'a K,
    /// Work-items in all.
    pub global: usize,
    /// Work-items per group.
    pub local: usize,
}

/// What a run needs settled before anything is built: the work-group size, or the value
/// itself when there is nothing to launch.
pub enum Plan {
    /// Launch with this work-group size.
    Launch {
        /// Work-items per group.
        wg: usize,
    },
    /// No elements: the value is the reference's value of an empty input.
    Empty(Run),
}

/// Checks that `variant` can run `problem` over `len` elements on a device with `caps`
/// (features, work-group size, local memory) and picks the work-group size.
pub fn plan(
    variant: &Variant,
    problem: &Problem,
    caps: &Capabilities,
    params: &[(&str, u32)],
    len: usize,
) -> Result<Plan, RunError> {
    variant
        .check(problem, caps)
        .map_err(|s| RunError::Skipped(s.0))?;
    if len == 0 {
        let empty = redlab_core::with_dtype!(problem.dtype, T => ArrayRef::from_slice::<T>(&[]));
        let value =
            reference::reduce(problem, empty).map_err(|e| RunError::Device(e.to_string()))?;
        return Ok(Plan::Empty(Run {
            value,
            passes: Vec::new(),
            download_s: 0.0,
        }));
    }
    for &(name, value) in params {
        if variant.default_param(name).is_some() {
            variant
                .check_param(name, value)
                .map_err(RunError::Skipped)?;
        }
    }
    let wg = params
        .iter()
        .find(|(n, _)| *n == "WG")
        .map(|(_, v)| *v)
        .or_else(|| variant.default_param("WG"))
        .unwrap_or(256) as usize;
    if wg == 0 {
        return Err(RunError::Skipped("a work-group size of 0".into()));
    }
    if variant.default_param("WG").is_some() && wg > caps.max_work_group {
        return Err(RunError::Skipped(format!(
            "work-group size {wg} exceeds the device's {}",
            caps.max_work_group
        )));
    }
    let acc_bytes = Codec::new(problem).acc_bytes;
    if (wg * acc_bytes) as u64 > caps.local_memory {
        return Err(RunError::Skipped(format!(
            "{wg} partials of {acc_bytes} bytes exceed local memory"
        )));
    }
    Ok(Plan::Launch { wg })
}

/// The entry points a variant's passes use, by name: the first pass reads input
/// elements; `later` reads partials (a second build without `FIRST_PASS`, or a second
/// kernel of the same file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryPoints {
    /// Kernel name of the first pass.
    pub first: &'static str,
    /// Kernel name of later passes, where the structure has them.
    pub later: Option<&'static str>,
    /// Whether `later` comes from a second build of the file without `FIRST_PASS`.
    pub later_rebuilt: bool,
}

/// Which kernels `variant` runs.
pub fn entry_points(variant: &Variant) -> EntryPoints {
    match variant.passes {
        PassStructure::Canonical => EntryPoints {
            first: "tiles",
            later: Some("tree"),
            later_rebuilt: false,
        },
        _ => EntryPoints {
            first: "reduce",
            later: variant.rereads_partials.then_some("reduce"),
            later_rebuilt: variant.rereads_partials,
        },
    }
}

/// A parameter's value: the override in `params`, else the variant's default.
pub fn param(variant: &Variant, params: &[(&str, u32)], name: &str) -> Option<u32> {
    params
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .filter(|_| variant.default_param(name).is_some())
        .or_else(|| variant.default_param(name))
}

/// Whether the one-launch kernel folds one tile per warp for `problem` over `n`
/// elements, on devices whose sub-groups are 32-wide warps with shuffles: f32/f64 sums
/// and products of at most `WARP_TILES_UPTO` or at least `WARP_TILES_FROM` tiles, f16/bf16
/// ones of at most `HALF_WARP_TILES_UPTO`. The kernel decides the same from its defines
/// and `n` (`canonical_one.cl`).
pub fn warp_tiles(
    variant: &Variant,
    problem: &Problem,
    caps: &Capabilities,
    params: &[(&str, u32)],
    n: usize,
) -> bool {
    let value = |name| param(variant, params, name).unwrap_or(0) as usize;
    let tiles = n.div_ceil(TILE);
    if Applies::HalfWarpTiles.to(problem) {
        return Applies::HalfWarpTiles.available(caps) && tiles <= value("HALF_WARP_TILES_UPTO");
    }
    let (from, upto) = (value("WARP_TILES_FROM"), value("WARP_TILES_UPTO"));
    Applies::WarpTiles.to(problem)
        && Applies::WarpTiles.available(caps)
        && ((from > 0 && tiles >= from) || tiles <= upto)
}

/// The parameters one launch of `variant` over `n` elements is built with: `params`,
/// except that f16/bf16 launches that will not fold tiles by warps are built without the
/// warp path (`HALF_WARP_TILES_UPTO` 0), and those that are not one cluster of tiles
/// without that path's word loads (`CLUSTER_TILE_WORDS` 0). A kernel's registers are those of its hungriest
/// path, and with the halves' warp path built in, their work-group path had run at
/// half speed from 2^22 elements on (results/h200-half-warp-tiles).
///
/// f32/f64 modules keep both paths: built alone with the H100's entries, their
/// work-group path took 29–80 registers instead of 102–255 (31 instead of 255 for the
/// f64 sum at 2^18) and ran slower: up to 3.3× at 2^18, where ncu showed the same
/// instructions waiting 12× longer on loads (fewer in flight at once, which a small grid
/// cannot hide), and up to 10% at 2^26–2^30 (results/h100-launch-params). Their entries
/// were tuned with both paths built in.
///
/// A halves launch that is one cluster of tiles never runs the warp path, but keeps it
/// built in where `HALF_WARP_TILES_UPTO` covers its size: built without it, the scalar
/// one-cluster path of the H200's 2^10 entries took 1.86 µs instead of 1.40 in a graph
/// (results/h200-half-partial-rows).
pub fn launch_params<'a>(
    variant: &Variant,
    problem: &Problem,
    caps: &Capabilities,
    params: &[(&'a str, u32)],
    n: usize,
) -> Vec<(&'a str, u32)> {
    let mut out = params.to_vec();
    if Applies::HalfWarpTiles.to(problem) {
        // Each halves-only path is built only into the launches that take it: the warp
        // path, and the word loads of one cluster's tiles (cluster_tiles.h).
        for (name, taken) in [
            (
                "HALF_WARP_TILES_UPTO",
                warp_tiles(variant, problem, caps, params, n),
            ),
            (
                "CLUSTER_TILE_WORDS",
                one_cluster_of_tiles(variant, params, n),
            ),
        ] {
            if variant.default_param(name).is_some() && !taken {
                out.retain(|(p, _)| *p != name);
                out.push((name, 0));
            }
        }
    }
    out
}

/// Whether a canonical launch over `n` elements is one cluster folding a tile per group
/// (cluster_tiles.h): `CLUSTER_FINISH` > 1 and at most that many tiles.
fn one_cluster_of_tiles(variant: &Variant, params: &[(&str, u32)], n: usize) -> bool {
    let cluster = param(variant, params, "CLUSTER_FINISH").unwrap_or(0) as usize;
    cluster > 1 && n.div_ceil(TILE) <= cluster
}

/// Work-items, work-group size and partials of one pass over `count` items.
#[allow(clippy::too_many_arguments)]
pub fn layout(
    geometry: Geometry,
    problem: &Problem,
    count: usize,
    wg: usize,
    caps: &Capabilities,
    variant: &Variant,
    params: &[(&str, u32)],
) -> (usize, usize, usize) {
    let groups_of = |items: usize| items.div_ceil(wg).max(1);
    match geometry {
        Geometry::OnePerElement => {
            let g = groups_of(count);
            (g * wg, wg, g)
        }
        Geometry::TwoPerItem => {
            let g = count.div_ceil(2 * wg).max(1);
            (g * wg, wg, g)
        }
        Geometry::GridStride => {
            let per_cu = param(variant, params, "GROUPS_PER_CU").unwrap_or(8).max(1) as usize;
            let g = groups_of(count).min(caps.compute_units * per_cu).max(1);
            (g * wg, wg, g)
        }
        Geometry::ItemsPerComputeUnit => {
            let per_cu = param(variant, params, "ITEMS_PER_CU").unwrap_or(1).max(1) as usize;
            let items = (caps.compute_units * per_cu).max(1);
            (items, 1, items)
        }
        Geometry::CanonicalTiles => {
            let g = count.div_ceil(TILE).max(1);
            (g * 256, 256, g)
        }
        Geometry::Subtrees => {
            let per_cu = param(variant, params, "GROUPS_PER_CU").unwrap_or(8).max(1) as usize;
            // Where each warp takes a subtree (warp_tiles.h), a group serves eight.
            let per_group = if warp_tiles(variant, problem, caps, params, count) {
                256 / 32
            } else {
                1
            };
            // The order-free path walks chunks of 256 × UNROLL elements, one group per
            // chunk until the grid is full: sizing it by tiles instead had left a small
            // UNROLL with fewer groups than chunks, each walking several in turn.
            let units = if Applies::OrderFree.to(problem) {
                let unroll = param(variant, params, "UNROLL").unwrap_or(32).max(1) as usize;
                count.div_ceil(256 * unroll).max(1)
            } else {
                one_launch_subtrees(count).div_ceil(per_group)
            };
            // Each group writes one root on the order-free path: never more groups than
            // the kernel has root slots.
            let most = (caps.compute_units.max(1) * per_cu).min(ONE_LAUNCH_MAX_PARTIALS);
            let mut g = units.clamp(1, most);
            // With clusters on the order-free path the grid is one cluster: its groups
            // walk every chunk and combine on chip, with no root and no ticket (a group
            // that finds no chunk adds the identity). Several clusters, each with a root
            // and a ticket, ran slower than plain groups on an H100
            // (results/h100-cluster-finish).
            let cluster = param(variant, params, "CLUSTER_FINISH").unwrap_or(0) as usize;
            if cluster > 1 && Applies::OrderFree.to(problem) {
                g = cluster;
            } else if cluster > 1 {
                // Canonical: up to `cluster` tiles, one cluster whose groups fold a tile
                // each and combine the results on chip (cluster_tiles.h), whatever the
                // warp tiles' settings. Otherwise a whole number of clusters (the
                // kernel's cluster size divides its grid), with the usual roots and
                // ticket (results/h100-canonical-cluster).
                g = if one_cluster_of_tiles(variant, params, count) {
                    cluster
                } else {
                    g.next_multiple_of(cluster)
                };
            } else if Applies::OrderFree.to(problem) && count <= TILE {
                // Up to one tile, one group walks every chunk and writes the result: no
                // ticket. Two groups and the ticket took 8192 elements from 1.8 to 3.0 µs
                // in a graph on an H100 (results/h100-cluster-finish/tune).
                g = 1;
            }
            (g * 256, 256, g)
        }
    }
}

/// Runs the passes of `variant` over `n` elements in `source` and returns the result.
#[allow(clippy::too_many_arguments)]
pub fn run_passes<L: Launcher>(
    launcher: &L,
    caps: &Capabilities,
    variant: &Variant,
    problem: &Problem,
    first: &L::Kernel,
    later: Option<&L::Kernel>,
    source: &L::Buffer,
    n: usize,
    wg: usize,
    params: &[(&str, u32)],
) -> Result<Run, RunError> {
    let codec = Codec::new(problem);
    let (g0, l0, outs0) = layout(variant.geometry, problem, n, wg, caps, variant, params);
    let mut ping = launcher.alloc(outs0 * codec.acc_bytes)?;
    let mut pong = launcher.alloc(outs0 * codec.acc_bytes)?;
    let mut passes = Vec::new();
    let later = || {
        later.ok_or_else(|| RunError::Device(format!("{} has no later-pass kernel", variant.name)))
    };
    let finish = |buffer: &L::Buffer, count: usize, passes: Vec<f64>| -> Result<Run, RunError> {
        let (bytes, download_s) = launcher.read(buffer, count * codec.acc_bytes)?;
        Ok(Run {
            value: codec.value(codec.fold(&bytes, count)),
            passes,
            download_s,
        })
    };

    match variant.passes {
        PassStructure::SingleLaunch => {
            launcher.write(&mut ping, &codec.identity_bytes())?;
            passes.push(launcher.launch(first, source, &ping, n, g0, l0)?);
            finish(&ping, 1, passes)
        }
        PassStructure::HostFinish => {
            passes.push(launcher.launch(first, source, &ping, n, g0, l0)?);
            finish(&ping, outs0, passes)
        }
        PassStructure::TwoStage => {
            passes.push(launcher.launch(first, source, &ping, n, g0, l0)?);
            passes.push(launcher.launch(later()?, &ping, &pong, outs0, wg, wg)?);
            finish(&pong, 1, passes)
        }
        PassStructure::MultiPass | PassStructure::MultiPassHostFinish => {
            let host_threshold = if variant.passes == PassStructure::MultiPassHostFinish {
                wg
            } else {
                1
            };
            passes.push(launcher.launch(first, source, &ping, n, g0, l0)?);
            let mut count = outs0;
            while count > host_threshold {
                let (g, l, outs) =
                    layout(variant.geometry, problem, count, wg, caps, variant, params);
                passes.push(launcher.launch(later()?, &ping, &pong, count, g, l)?);
                std::mem::swap(&mut ping, &mut pong);
                count = outs;
            }
            finish(&ping, count, passes)
        }
        PassStructure::LastBlockFinish => {
            // Result, the subtree roots, then the ticket counter and the atomic
            // accumulator, which start at zero.
            let bytes = (1 + ONE_LAUNCH_MAX_PARTIALS) * codec.acc_bytes + ONE_LAUNCH_TAIL_BYTES;
            let mut out = launcher.alloc(bytes)?;
            launcher.write(&mut out, &vec![0u8; bytes])?;
            passes.push(launcher.launch(first, source, &out, n, g0, l0)?);
            finish(&out, 1, passes)
        }
        PassStructure::Canonical => {
            passes.push(launcher.launch(first, source, &ping, n, g0, l0)?);
            let tree = later()?;
            let mut count = outs0;
            while count > 1 {
                let groups = count.div_ceil(256);
                passes.push(launcher.launch(tree, &ping, &pong, count, groups * 256, 256)?);
                std::mem::swap(&mut ping, &mut pong);
                count = groups;
            }
            finish(&ping, 1, passes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::Feature;
    use crate::registry;
    use redlab_core::{DType, Op};

    fn h100_like() -> Capabilities {
        Capabilities {
            features: vec![Feature::Fp64, Feature::WarpShuffle],
            compute_units: 132,
            max_work_group: 1024,
            local_memory: 48 * 1024,
            cache_bytes: 50 << 20,
        }
    }

    fn groups(problem: &Problem, n: usize, params: &[(&str, u32)]) -> usize {
        let variant = registry::find("production").expect("registered");
        layout(
            variant.geometry,
            problem,
            n,
            256,
            &h100_like(),
            &variant,
            params,
        )
        .2
    }

    #[test]
    fn canonical_cluster_grids_are_one_cluster_up_to_its_size_in_tiles_else_whole_clusters() {
        let sum = Problem::new(Op::Sum, DType::F64, None).expect("valid");
        let group_tiles = [("WARP_TILES_UPTO", 0), ("WARP_TILES_FROM", 0)];
        for cluster in [2u32, 4, 8] {
            let params = [group_tiles[0], group_tiles[1], ("CLUSTER_FINISH", cluster)];
            // Up to `cluster` tiles: exactly one cluster, one tile per group at most.
            for tiles in 1..=cluster as usize {
                assert_eq!(groups(&sum, tiles * TILE - 1, &params), cluster as usize);
            }
            // More tiles: the usual grid, rounded up to whole clusters.
            for n in [(cluster as usize + 1) * TILE, 1_000_003, 1 << 26] {
                let g = groups(&sum, n, &params);
                let plain = groups(&sum, n, &group_tiles);
                assert_eq!(g, plain.next_multiple_of(cluster as usize), "n={n}");
            }
            // Warp-tile settings do not change it: one cluster up to its size.
            let warps = [("WARP_TILES_UPTO", 8), ("CLUSTER_FINISH", cluster)];
            assert_eq!(
                groups(&sum, cluster as usize * TILE, &warps),
                cluster as usize
            );
            assert_eq!(groups(&sum, 3 * TILE, &warps[..1]), 1);
        }
    }

    #[test]
    fn order_free_cluster_grids_are_one_cluster_at_every_size() {
        let max = Problem::new(Op::Max, DType::I32, None).expect("valid");
        for n in [1, TILE, 1_000_003, 1 << 28] {
            assert_eq!(groups(&max, n, &[("CLUSTER_FINISH", 4)]), 4, "n={n}");
        }
        assert_eq!(groups(&max, TILE, &[]), 1);
    }

    #[test]
    fn halves_take_warp_tiles_only_up_to_their_own_bound_and_are_built_for_their_path() {
        let variant = registry::find("production").expect("registered");
        let caps = h100_like();
        let half = Problem::new(Op::Sum, DType::F16, None).expect("valid");
        let on = [("HALF_WARP_TILES_UPTO", 8), ("WARP_TILES_FROM", 1)];
        // The f32/f64 ranges do not send halves to warps; their own bound does.
        assert!(!warp_tiles(&variant, &half, &caps, &on[1..], 1 << 26));
        assert!(warp_tiles(&variant, &half, &caps, &on, 8 * TILE));
        assert!(!warp_tiles(&variant, &half, &caps, &on, 8 * TILE + 1));
        // At most 8 tiles, one group of 8 warps; beyond, a group per tile.
        assert_eq!(groups(&half, 8 * TILE, &on), 1);
        assert_eq!(groups(&half, 9 * TILE, &on), 9);
        // Launches that stay on the work-group path are built without the warp path.
        let built = |n| launch_params(&variant, &half, &caps, &on, n);
        let within = built(8 * TILE);
        assert!(within.contains(&("HALF_WARP_TILES_UPTO", 8)), "{within:?}");
        assert!(!within.contains(&("HALF_WARP_TILES_UPTO", 0)), "{within:?}");
        let beyond = built(9 * TILE);
        assert!(beyond.contains(&("HALF_WARP_TILES_UPTO", 0)), "{beyond:?}");
        assert!(beyond.contains(&("WARP_TILES_FROM", 1)), "{beyond:?}");
        // The word loads of one cluster's tiles are built only into that one cluster.
        let clustered = [("CLUSTER_FINISH", 4)];
        let built = |n| launch_params(&variant, &half, &caps, &clustered, n);
        assert!(!built(4 * TILE).contains(&("CLUSTER_TILE_WORDS", 0)));
        assert!(built(4 * TILE + 1).contains(&("CLUSTER_TILE_WORDS", 0)));
        assert!(!built(TILE).contains(&("CLUSTER_TILE_WORDS", 0)));
        let unclustered = launch_params(&variant, &half, &caps, &[], TILE);
        assert!(unclustered.contains(&("CLUSTER_TILE_WORDS", 0)));
        // Other types never take them.
        let f32_sum = Problem::new(Op::Sum, DType::F32, None).expect("valid");
        let f32_built = launch_params(&variant, &f32_sum, &caps, &clustered, 9 * TILE);
        assert_eq!(f32_built, clustered.to_vec());
        // Without shuffles there is no warp path to build.
        let plain = Capabilities {
            features: vec![Feature::Fp64],
            ..h100_like()
        };
        assert!(!warp_tiles(&variant, &half, &plain, &on, TILE));
    }

    #[test]
    fn launch_params_leave_everything_but_halves_as_given() {
        let variant = registry::find("production").expect("registered");
        let caps = h100_like();
        let params = [
            ("WARP_TILES_UPTO", 2),
            ("WARP_TILES_FROM", 1024),
            ("GROUPS_PER_CU", 6),
        ];
        for (op, dtype) in [
            (Op::Sum, DType::F32),
            (Op::Sum, DType::F64),
            (Op::Max, DType::I32),
        ] {
            let problem = Problem::new(op, dtype, None).expect("valid");
            for n in [1, 5 * TILE, 1 << 28] {
                assert_eq!(
                    launch_params(&variant, &problem, &caps, &params, n),
                    params.to_vec(),
                    "{problem} n={n}"
                );
            }
        }
    }
}
