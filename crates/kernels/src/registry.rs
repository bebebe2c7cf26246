//! The variant registry: every reduction strategy as data (name, aliases, origin,
//! required features, parameter space, pass structure) plus its kernel file.

use redlab_core::{DType, Op, Problem};
use serde::Serialize;

use crate::capability::{Capabilities, Feature};
use crate::optype;

/// How a variant's launches are chained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PassStructure {
    /// One launch; every work-item updates one global result atomically.
    SingleLaunch,
    /// One launch producing partials that the host combines.
    HostFinish,
    /// The kernel runs again over its own partials until one is left.
    MultiPass,
    /// A fixed grid, then one group over its partials: always two launches.
    TwoStage,
    /// Like multi-pass, but stops once at most one work-group of partials is left and
    /// lets the host finish.
    MultiPassHostFinish,
    /// The canonical order: a tiles pass, then aligned tree passes.
    Canonical,
    /// One launch: groups write partials and take tickets from a counter after the
    /// partials in the output buffer; the group with the last ticket finishes.
    LastBlockFinish,
}

/// How many work-items and groups a pass over `n` items uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Geometry {
    /// One element per work-item.
    OnePerElement,
    /// Two elements per work-item (first add during load).
    TwoPerItem,
    /// A fixed grid of `GROUPS_PER_CU` groups per compute unit, grid-stride loops.
    GridStride,
    /// `ITEMS_PER_CU` work-items per compute unit, in groups of one.
    ItemsPerComputeUnit,
    /// One group of 256 per tile of the canonical order.
    CanonicalTiles,
    /// Groups of 256 over the aligned subtrees of the canonical order's tile tree, at most
    /// `GROUPS_PER_CU` per compute unit.
    Subtrees,
}

/// Which problems a parameter changes the kernel for (a tuner leaves it at its default
/// elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Applies {
    /// Every problem.
    Always,
    /// Float sums and products, which follow the canonical order's tiles.
    OrderedFloat,
    /// Everything else: the order-free streaming path.
    OrderFree,
    /// f32 and f64 sums and products on devices with 32-wide warp shuffles (the warp
    /// tiles of the one-launch kernel).
    WarpTiles,
    /// f16 and bf16 sums and products on devices with 32-wide warp shuffles (warp tiles
    /// for inputs of a few tiles).
    HalfWarpTiles,
    /// Order-free problems over elements of 1, 2 or 4 bytes on devices with 32-wide warp
    /// shuffles (the one-launch kernel's 16-byte word loads on CUDA, `order_free.h`).
    OrderFreeWords,
    /// Order-free problems whose operator has a native atomic (integer sums, min, max,
    /// and, or, xor) on devices with 32-wide warp shuffles (CUDA).
    OrderFreeAtomic,
    /// Every problem on devices with 32-wide warp shuffles (CUDA; the kernel uses
    /// thread-block clusters from sm_90 on and ignores the parameter before).
    Clusters,
}

impl Applies {
    /// Whether the parameter matters for `problem`.
    pub fn to(self, problem: &Problem) -> bool {
        let ordered = problem.dtype.is_float() && problem.op.is_arithmetic();
        match self {
            Applies::Always => true,
            Applies::OrderedFloat => ordered,
            Applies::OrderFree => !ordered,
            Applies::WarpTiles => ordered && matches!(problem.dtype, DType::F32 | DType::F64),
            Applies::HalfWarpTiles => ordered && matches!(problem.dtype, DType::F16 | DType::BF16),
            Applies::OrderFreeWords => !ordered && problem.dtype.size_bytes() <= 4,
            Applies::OrderFreeAtomic => {
                !ordered
                    && matches!(
                        problem.op,
                        Op::Sum | Op::Min | Op::Max | Op::And | Op::Or | Op::Xor
                    )
            }
            Applies::Clusters => true,
        }
    }

    /// Whether the parameter can matter on a device with `caps`.
    pub fn available(self, caps: &Capabilities) -> bool {
        !matches!(
            self,
            Applies::WarpTiles
                | Applies::HalfWarpTiles
                | Applies::OrderFreeWords
                | Applies::OrderFreeAtomic
                | Applies::Clusters
        ) || caps.has(Feature::WarpShuffle)
    }
}

/// A tuning parameter: its name (a `#define` in the kernel file), default, the values
/// worth trying, and the problems it matters for. Device limits (work-group size, local
/// memory) are checked when a configuration is planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Param {
    /// The preprocessor name.
    pub name: &'static str,
    /// The value used when nothing else is asked for.
    pub default: u32,
    /// Values worth trying.
    pub values: &'static [u32],
    /// Which problems it changes.
    pub applies: Applies,
    /// The smallest and largest values the kernel is written for.
    pub range: (u32, u32),
    /// Whether the kernel needs a power of two (tree loops halve it).
    pub power_of_two: bool,
}

impl Param {
    /// Whether the kernel can be built with `value`, and if not, why in words.
    pub fn check(&self, value: u32) -> Result<(), String> {
        let (lo, hi) = self.range;
        if !(lo..=hi).contains(&value) {
            return Err(format!("{} = {value} is outside {lo}..={hi}", self.name));
        }
        if self.power_of_two && !value.is_power_of_two() {
            return Err(format!("{} = {value} is not a power of two", self.name));
        }
        Ok(())
    }
}

const WG: Param = Param {
    name: "WG",
    default: 256,
    values: &[64, 128, 256, 512, 1024],
    applies: Applies::Always,
    range: (2, 1024),
    power_of_two: true,
};
const GROUPS_PER_CU: Param = Param {
    name: "GROUPS_PER_CU",
    default: 8,
    values: &[1, 2, 4, 8, 16, 32],
    applies: Applies::Always,
    range: (1, 1024),
    power_of_two: false,
};
const ITEMS_PER_CU: Param = Param {
    name: "ITEMS_PER_CU",
    default: 1,
    values: &[1],
    applies: Applies::Always,
    range: (1, 65536),
    power_of_two: false,
};
const ITEMS_PER_CU_FULL: Param = Param {
    name: "ITEMS_PER_CU",
    default: 512,
    values: &[64, 128, 256, 512, 1024, 2048],
    applies: Applies::Always,
    range: (1, 65536),
    power_of_two: false,
};

const GROUPS_PER_CU_ONE_LAUNCH: Param = Param {
    name: "GROUPS_PER_CU",
    default: 8,
    values: &[1, 2, 4, 6, 8],
    applies: Applies::Always,
    range: (1, 1024),
    power_of_two: false,
};

const PREFETCH: Param = Param {
    name: "PREFETCH",
    default: 1,
    values: &[0, 1],
    applies: Applies::OrderedFloat,
    range: (0, 1),
    power_of_two: false,
};
const VEC_LOADS: Param = Param {
    name: "VEC_LOADS",
    // 0: never, 1: halves only, 2: every float type (see canonical_one.cl).
    default: 1,
    values: &[0, 1, 2],
    applies: Applies::OrderedFloat,
    range: (0, 2),
    power_of_two: false,
};
const UNROLL: Param = Param {
    name: "UNROLL",
    // Measured on the H100 (results/h100-cuda/tune.jsonl): 32 loads in flight per
    // work-item beat 8 and 16 for i32 at 2^20 and 2^28.
    default: 32,
    values: &[4, 8, 16, 32],
    applies: Applies::OrderFree,
    range: (1, 64),
    power_of_two: true,
};

const WARP_TILES_FROM: Param = Param {
    name: "WARP_TILES_FROM",
    // Where warps shuffle, f32/f64 inputs of at least this many tiles run one tile per
    // warp (warp_tiles.h); 0: never. Measured on the H200: 512 (2^22 elements).
    default: 512,
    values: &[0, 128, 512, 1024],
    applies: Applies::WarpTiles,
    range: (0, 1 << 30),
    power_of_two: false,
};
const WARP_TILES_UPTO: Param = Param {
    name: "WARP_TILES_UPTO",
    // Where warps shuffle, f32/f64 inputs of at most this many tiles run one tile per
    // warp, in one work-group (8 warps) without a ticket; 0: never.
    default: 8,
    values: &[0, 2, 8],
    applies: Applies::WarpTiles,
    range: (0, 1 << 30),
    power_of_two: false,
};
const HALF_WARP_TILES_UPTO: Param = Param {
    name: "HALF_WARP_TILES_UPTO",
    // Where warps shuffle, f16/bf16 inputs of at most this many tiles run one tile per
    // warp, in one work-group without a ticket; 0: never (a work-group per tile). Off by
    // default: on an H200 it sped 2^10 and 2^14 up by 15–22% and slowed 2^12
    // (results/h200-half-warp-tiles), so the tuner chooses per size.
    default: 0,
    values: &[0, 2, 8],
    applies: Applies::HalfWarpTiles,
    range: (0, 64),
    power_of_two: false,
};
const WARP_ROWS: Param = Param {
    name: "WARP_ROWS",
    // Tile rows loaded before any is added, per work-item; 0: the kernel's choice (4).
    default: 0,
    values: &[0, 1, 2],
    applies: Applies::WarpTiles,
    range: (0, 8),
    power_of_two: false,
};
const WARP_PREFETCH: Param = Param {
    name: "WARP_PREFETCH",
    // 1: a warp loads its next whole tile's first rows before folding the current one
    // (warp_tiles.h). Measured on the H200 (results/h200-cuda-prefetch): f32 sums 4–15%
    // faster in a graph at 2^22–2^30, f64 (at two rows) 1–5%.
    default: 1,
    values: &[0, 1],
    applies: Applies::WarpTiles,
    range: (0, 1),
    power_of_two: false,
};
const WARP_BULK_ROWS: Param = Param {
    name: "WARP_BULK_ROWS",
    // Rows per warp in flight through bulk copies into shared memory (warp_bulk.h, CUDA
    // sm_90 and later, from WARP_TILES_FROM tiles on); 0: register loads.
    default: 0,
    values: &[0, 3, 4, 6],
    applies: Applies::WarpTiles,
    range: (0, 7),
    power_of_two: false,
};
const ORDER_FREE_WORDS: Param = Param {
    name: "ORDER_FREE_WORDS",
    // On CUDA, order-free reductions of 1-, 2- and 4-byte elements load 16-byte words
    // (1) or single elements (0); see order_free.h.
    default: 1,
    values: &[0, 1],
    applies: Applies::OrderFreeWords,
    range: (0, 1),
    power_of_two: false,
};
const ATOMIC_FINISH: Param = Param {
    name: "ATOMIC_FINISH",
    // On CUDA, order-free integer sums, min, max and bitwise ops: each group combines its
    // partial into one accumulator with a native atomic and the last group takes it (1),
    // or writes a root that the last group's tree reads (0); see canonical_one.cl. On an
    // H100, 1 made multi-group launches 2–10% faster in a graph and single-group ones
    // (which never reach the atomic) 1–5% slower, so it is chosen per size by the
    // database, not by default (results/h100-atomic-finish).
    default: 0,
    values: &[0, 1],
    applies: Applies::OrderFreeAtomic,
    range: (0, 1),
    power_of_two: false,
};
const CLUSTER_FINISH: Param = Param {
    name: "CLUSTER_FINISH",
    // CUDA sm_90 and later: thread-block clusters of this many groups, which combine
    // their partials on chip. On the order-free path the grid is one cluster, which
    // writes the result with no root and no ticket; on the canonical path, one cluster
    // folds inputs of up to this many subtrees (tiles) the same way, and larger inputs
    // run the usual finish. 0: a grid of GROUPS_PER_CU groups per compute unit and the
    // last group's finish. Eight is the portable cluster size.
    default: 0,
    values: &[0, 2, 4, 8],
    applies: Applies::Clusters,
    range: (0, 8),
    power_of_two: false,
};

const CLUSTER_TILE_WORDS: Param = Param {
    name: "CLUSTER_TILE_WORDS",
    // f16/bf16 inputs folded by one cluster (CLUSTER_FINISH, at most that many tiles):
    // 1 loads each row as 8-byte words of four elements, 0 one element per lane and row.
    // Not searched: the host sets 0 for launches that do not take the one-cluster path,
    // so their modules are built without it (built in, it had slowed the H200's bf16 sum
    // of 2^18, 32 tiles in clusters of 4, from 3.40 to 3.89 µs in a graph:
    // results/h200-half-cluster-words).
    default: 1,
    values: &[1],
    applies: Applies::HalfWarpTiles,
    range: (0, 1),
    power_of_two: false,
};

/// One reduction strategy.
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    /// Unique, descriptive name (`sequential-addressing`).
    pub name: &'static str,
    /// Names used by the documents (`reduce2`) and other readable aliases.
    pub aliases: &'static [&'static str],
    /// Which document and section it comes from.
    pub origin: &'static str,
    /// The kernel file under `cl/`.
    pub file: &'static str,
    /// Fixed preprocessor values that select this variant inside a shared file.
    pub defines: &'static [(&'static str, u32)],
    /// Features needed whatever the problem.
    pub needs: &'static [Feature],
    /// Tuning parameters.
    pub params: &'static [Param],
    /// How launches chain.
    pub passes: PassStructure,
    /// How each pass is laid out.
    pub geometry: Geometry,
    /// Whether float results follow the canonical order (and so must match bit for bit).
    pub canonical: bool,
    /// Whether the kernel file has an entry point for later passes (reading partials).
    pub rereads_partials: bool,
}

/// Why a variant cannot run a problem on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skip(pub String);

impl Variant {
    /// Decides whether this variant can run `problem` on a device with `caps`, and if not,
    /// says why in words.
    pub fn check(&self, problem: &Problem, caps: &Capabilities) -> Result<(), Skip> {
        // The layout, not the declarations' text: this runs on every launch's plan.
        let layout = optype::partial_layout(problem);
        if layout.needs_fp64 && !caps.has(Feature::Fp64) {
            return Err(Skip(format!(
                "the device lacks {}",
                Feature::Fp64.describe()
            )));
        }
        for &feature in self.needs {
            if !caps.has(feature) {
                return Err(Skip(format!("the device lacks {}", feature.describe())));
            }
        }
        let atomic = matches!(self.passes, PassStructure::SingleLaunch)
            || self.defines.contains(&("FINISH", 3));
        if atomic {
            if problem.op.is_indexed() {
                return Err(Skip(
                    "argmin/argmax partials (value and index) have no atomic update".into(),
                ));
            }
            if layout.acc_bytes == 8 && !caps.has(Feature::Int64Atomics) {
                return Err(Skip(format!(
                    "the device lacks {}",
                    Feature::Int64Atomics.describe()
                )));
            }
        }
        if self
            .needs
            .iter()
            .any(|f| matches!(f, Feature::WorkGroupCollectives | Feature::Subgroups))
            && optype::builtin_collective(problem).is_none()
        {
            return Err(Skip(format!(
                "no built-in collective matches {} over {} (built-ins exist for sum, and min/max of integers)",
                problem.op, problem.dtype
            )));
        }
        if self.needs.contains(&Feature::IntelSubgroups)
            && !matches!(problem.dtype, DType::I32 | DType::U32 | DType::F32)
        {
            return Err(Skip(
                "sub-group block reads move 32-bit words; the input is not 32-bit".into(),
            ));
        }
        Ok(())
    }

    /// The default value of a parameter (`None` if the variant has no such parameter).
    pub fn default_param(&self, name: &str) -> Option<u32> {
        self.params
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.default)
    }

    /// Checks a `NAME=VALUE` override: the variant must have the parameter, and the
    /// value must be one its kernel is written for.
    pub fn check_param(&self, name: &str, value: u32) -> Result<(), String> {
        match self.params.iter().find(|p| p.name == name) {
            Some(p) => p
                .check(value)
                .map_err(|why| format!("{}: {why}", self.name)),
            None => {
                let names: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                Err(format!(
                    "variant {} has no parameter {name} (its parameters: {})",
                    self.name,
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ))
            }
        }
    }

    /// Whether `name` names this variant (its name or an alias, case-insensitively).
    pub fn is_called(&self, name: &str) -> bool {
        let wanted = name.trim().to_ascii_lowercase();
        self.name == wanted
            || self
                .aliases
                .iter()
                .any(|a| a.to_ascii_lowercase() == wanted)
    }
}

const GUIDE: &str = "GPU optimization guide, chapter \"Reduction\" (seeds 000/003; notebook 001)";
const SDK: &str = "NVIDIA SDK reduction sequence, as analysed in seed 002";
const KHRONOS: &str = "Khronos OpenCL SDK sample \"Reduce\" (seed 004)";

macro_rules! variant {
    ($name:expr, [$($alias:expr),*], $origin:expr, $file:expr, $passes:ident, $geometry:ident,
     params [$($param:expr),*], needs [$($need:expr),*], defines [$($def:expr),*], canonical $canonical:expr) => {
        Variant {
            name: $name,
            aliases: &[$($alias),*],
            origin: $origin,
            file: $file,
            defines: &[$($def),*],
            needs: &[$($need),*],
            params: &[$($param),*],
            passes: PassStructure::$passes,
            geometry: Geometry::$geometry,
            canonical: $canonical,
            rereads_partials: !matches!(PassStructure::$passes, PassStructure::SingleLaunch | PassStructure::HostFinish | PassStructure::Canonical | PassStructure::LastBlockFinish),
        }
    };
}

/// Every variant, the production kernel first.
pub fn all() -> Vec<Variant> {
    vec![
        variant!("canonical-one-launch", ["production", "one-launch", "last-block finish"],
            "redlab's canonical order v1 (docs/canonical-order.md), one launch", "canonical_one.cl",
            LastBlockFinish, Subtrees, params [GROUPS_PER_CU_ONE_LAUNCH, PREFETCH, VEC_LOADS, UNROLL, WARP_TILES_FROM, WARP_TILES_UPTO, HALF_WARP_TILES_UPTO, WARP_ROWS, WARP_PREFETCH, WARP_BULK_ROWS, ORDER_FREE_WORDS, ATOMIC_FINISH, CLUSTER_FINISH, CLUSTER_TILE_WORDS], needs [], defines [], canonical true),
        variant!("canonical", ["canonical-v1", "canonical tiles and tree passes"],
            "redlab's canonical order v1 (docs/canonical-order.md)", "canonical.cl",
            Canonical, CanonicalTiles, params [], needs [], defines [], canonical true),
        variant!("atomic-global", ["atomic", "atomic update of one location"],
            GUIDE, "atomic_global.cl", SingleLaunch, OnePerElement,
            params [WG], needs [], defines [], canonical false),
        variant!("chunk-per-cu", ["one chunk per compute unit"],
            GUIDE, "chunk_per_cu.cl", HostFinish, ItemsPerComputeUnit,
            params [ITEMS_PER_CU], needs [], defines [], canonical false),
        variant!("strided-per-cu", ["strided", "vectorizable strided accumulation"],
            GUIDE, "strided.cl", HostFinish, ItemsPerComputeUnit,
            params [ITEMS_PER_CU], needs [], defines [], canonical false),
        variant!("strided-occupancy", ["full occupancy"],
            GUIDE, "strided.cl", HostFinish, ItemsPerComputeUnit,
            params [ITEMS_PER_CU_FULL], needs [], defines [], canonical false),
        variant!("wg-tree-host", ["work-group tree", "tree with host finish"],
            GUIDE, "wg_tree.cl", HostFinish, OnePerElement,
            params [WG], needs [], defines [], canonical false),
        variant!("two-stage", ["two-stage tree"],
            GUIDE, "two_stage.cl", TwoStage, GridStride,
            params [WG, GROUPS_PER_CU], needs [], defines [], canonical false),
        variant!("multi-stage", ["multi-stage tree"],
            GUIDE, "wg_tree.cl", MultiPassHostFinish, OnePerElement,
            params [WG], needs [], defines [], canonical false),
        variant!("builtin-wg-reduce", ["built-in reduction", "reduction object"],
            GUIDE, "builtin_wg.cl", HostFinish, GridStride,
            params [WG, GROUPS_PER_CU], needs [Feature::WorkGroupCollectives], defines [], canonical false),
        variant!("blocked-slm-serial", ["blocked, SLM serial finish"],
            GUIDE, "blocked.cl", HostFinish, GridStride,
            params [WG, GROUPS_PER_CU], needs [], defines [("FINISH", 1)], canonical false),
        variant!("blocked-slm-tree", ["blocked, SLM tree finish"],
            GUIDE, "blocked.cl", HostFinish, GridStride,
            params [WG, GROUPS_PER_CU], needs [], defines [("FINISH", 2)], canonical false),
        variant!("blocked-atomic", ["blocked, atomic finish"],
            GUIDE, "blocked.cl", SingleLaunch, GridStride,
            params [WG, GROUPS_PER_CU], needs [], defines [("FINISH", 3)], canonical false),
        variant!("subgroup-block-vec8", ["sub-group block loads"],
            GUIDE, "subgroup_block.cl", HostFinish, OnePerElement,
            params [WG], needs [Feature::IntelSubgroups], defines [], canonical false),
        variant!("interleaved-divergent", ["reduce0", "interleaved addressing, divergent branch"],
            SDK, "reduce0.cl", MultiPass, OnePerElement,
            params [WG], needs [], defines [], canonical false),
        variant!("interleaved-strided", ["reduce1", "interleaved addressing, strided index"],
            SDK, "reduce1.cl", MultiPass, OnePerElement,
            params [WG], needs [], defines [], canonical false),
        variant!("sequential-addressing", ["reduce2"],
            SDK, "reduce2.cl", MultiPass, OnePerElement,
            params [WG], needs [], defines [], canonical false),
        variant!("first-add-during-load", ["reduce3"],
            SDK, "reduce3.cl", MultiPass, TwoPerItem,
            params [WG], needs [], defines [], canonical false),
        variant!("unrolled-last-warp", ["reduce4"],
            SDK, "reduce4.cl", MultiPass, TwoPerItem,
            params [WG], needs [], defines [], canonical false),
        variant!("complete-unroll", ["reduce5"],
            SDK, "reduce5.cl", MultiPass, TwoPerItem,
            params [WG], needs [], defines [], canonical false),
        variant!("many-per-thread", ["reduce6"],
            SDK, "reduce6.cl", MultiPass, GridStride,
            params [WG, GROUPS_PER_CU], needs [], defines [], canonical false),
        variant!("khronos-vanilla", ["vanilla", "double-buffered multi-pass"],
            KHRONOS, "khronos_vanilla.cl", MultiPass, TwoPerItem,
            params [WG], needs [], defines [], canonical false),
        variant!("khronos-work-group", ["work_group_reduce"],
            KHRONOS, "khronos_wg.cl", MultiPass, TwoPerItem,
            params [WG], needs [Feature::WorkGroupCollectives], defines [], canonical false),
        variant!("khronos-sub-group", ["sub_group_reduce"],
            KHRONOS, "khronos_subgroup.cl", MultiPass, TwoPerItem,
            params [WG], needs [Feature::Subgroups], defines [], canonical false),
    ]
}

/// Looks a variant up by name or alias.
pub fn find(name: &str) -> Option<Variant> {
    all().into_iter().find(|v| v.is_called(name))
}
