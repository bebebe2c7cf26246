//! The SIMT interpreter. One launch runs its work-groups one after another; inside a
//! group every work-item executes the same statement at the same time under an active
//! mask (the group in lockstep, which for each warp is exactly the sequence of masked
//! steps it would run on its own: a warp's control flow depends only on its own lanes).
//! Branches split the mask and reconverge at the end of their construct; `break`,
//! `continue` and `return` take lanes out until the construct that ends them. A
//! barrier is therefore reached by the whole group at once, or the mask shows who is
//! missing.
//!
//! Expressions are evaluated for all active lanes together (`eval.rs`), so each memory
//! access is one warp-wide request per warp, which is what the metrics count.

mod access;
mod async_copy;
mod builtins;
mod eval;
mod exec;
mod math;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::{Function, Program, VarDecl};
use crate::mask::Mask;
use crate::memory::{Buffer, Memory};
use crate::metrics::{FindingKind, Metrics, Trace, TraceStep, TRACE_STEPS};
use crate::source::{AnalyzeError, Diag, Files, Pos};
use crate::types::{Space, Type};
use crate::value::{convert, to_bytes, Ptr, Value};

/// Values of one expression, one per lane of the group (`Void` where inactive).
pub(crate) type Lanes = Vec<Value>;

/// How a launch is shaped and observed.
#[derive(Debug, Clone)]
pub struct LaunchConfig {
    /// Global size per dimension.
    pub global: [usize; 3],
    /// Work-group size per dimension.
    pub local: [usize; 3],
    /// Lanes per warp (and per sub-group).
    pub warp: usize,
    /// Local-memory banks (4 bytes each).
    pub banks: usize,
    /// The work-group (linear index) whose steps and watched accesses are recorded.
    pub trace_group: usize,
    /// Local arrays whose accesses are recorded for the bank map (with `@watch` ones).
    pub watch: Vec<String>,
    /// Lane-steps after which the run stops (against endless loops).
    pub max_steps: u64,
    /// Steps one warp may run in one work-group: an endless loop trips this within
    /// seconds, while the total (`max_steps`) may stay large for big launches.
    pub max_warp_steps: u64,
    /// The moment after which the run stops, whatever it is doing (against endless
    /// loops that take few steps each, and very large launches).
    pub deadline: Option<std::time::Instant>,
    /// The most bytes of simulated memory, bookkeeping included.
    pub max_memory: u64,
}

/// Lane-steps a launch may take unless told otherwise.
pub const DEFAULT_MAX_STEPS: u64 = 2_000_000_000;

/// Steps a warp may run in one work-group unless told otherwise. The simulator runs
/// about 70,000 steps a second of a full 32-lane warp on one core, so an endless loop
/// stops within about 4 s; a work-item of a real kernel rarely needs more than a few
/// tens of thousands of steps (a 256-item group folding 2^20 elements takes about 20,000).
pub const DEFAULT_MAX_WARP_STEPS: u64 = 250_000;

impl LaunchConfig {
    /// Work-groups smaller than `local`: those at an edge where `global` is not a
    /// multiple of it (OpenCL 2.0 non-uniform work-groups).
    pub fn partial_groups(&self) -> usize {
        let all: usize = (0..3)
            .map(|d| self.global[d].div_ceil(self.local[d].max(1)))
            .product();
        let full: usize = (0..3)
            .map(|d| self.global[d] / self.local[d].max(1))
            .product();
        all - full
    }

    /// A one-dimensional launch with the defaults: warps of 32, 32 banks.
    pub fn linear(global: usize, local: usize) -> LaunchConfig {
        LaunchConfig {
            global: [global, 1, 1],
            local: [local, 1, 1],
            warp: 32,
            banks: 32,
            trace_group: 0,
            watch: Vec::new(),
            max_steps: DEFAULT_MAX_STEPS,
            max_warp_steps: DEFAULT_MAX_WARP_STEPS,
            deadline: None,
            max_memory: crate::memory::DEFAULT_LIMIT,
        }
    }
}

/// The most local-memory banks simulated (GPUs have 16 or 32).
pub const MAX_BANKS: usize = 1024;

/// Steps between looks at the clock for [`LaunchConfig::deadline`].
const CLOCK_EVERY: u64 = 1 << 12;

/// A kernel argument.
#[derive(Debug, Clone)]
pub enum Arg {
    /// A global buffer (index into [`Memory::global`]).
    Global(u32),
    /// A `__local` buffer of this many bytes, allocated per group.
    Local(usize),
    /// A scalar (converted to the parameter's type).
    Scalar(Value),
}

/// What one launch measured.
#[derive(Debug, Clone)]
pub struct LaunchReport {
    /// Kernel name.
    pub kernel: String,
    /// The configuration it ran with.
    pub config: LaunchConfig,
    /// Counters and errors.
    pub metrics: Metrics,
    /// The traced group's steps and watched accesses.
    pub trace: Trace,
    /// Local memory per group, bytes.
    pub local_bytes: u64,
}

#[derive(Debug, Clone)]
enum Slot {
    /// A private variable at this offset of every lane's arena, and its id in
    /// [`Memory`]'s table of private variables (for bounds).
    Private { offset: usize, ty: Type, var: u32 },
    /// A local or constant variable: one address for every lane.
    Shared { ptr: Ptr, ty: Type },
}

struct Frame {
    scopes: Vec<HashMap<Rc<str>, Slot>>,
    ret: Lanes,
    ret_ty: Type,
}

/// Exits of a statement: lanes that left by `break`, `continue` and `return`.
#[derive(Default)]
pub(crate) struct Flow {
    brk: Option<Mask>,
    cont: Option<Mask>,
    ret: Option<Mask>,
}

/// The state of a running launch.
pub(crate) struct Sim<'a> {
    program: &'a Program,
    files: &'a Files,
    cfg: &'a LaunchConfig,
    mem: &'a mut Memory,
    metrics: Metrics,
    trace: Trace,
    lanes: usize,
    groups: [usize; 3],
    group: [usize; 3],
    /// The running group's work-items per dimension: the work-group size, or less in an
    /// edge group of a non-uniform launch.
    group_local: [usize; 3],
    tracing: bool,
    frames: Vec<Frame>,
    sp: usize,
    local_decls: HashMap<usize, u32>,
    watched: HashSet<u32>,
    steps: u64,
    /// Steps of each warp in the running group.
    warp_steps: Vec<u64>,
    step_calls: u64,
    constants: HashMap<Rc<str>, Slot>,
    max_local_bytes: u64,
    /// Async copies of the running group not yet waited for.
    pending: Vec<async_copy::PendingCopy>,
    /// The last event handed out in the running group.
    next_event: u64,
    /// Races on global memory.
    global_races: crate::global_races::GlobalRaces,
}

/// Runs `kernel` of `program` with `args` over `mem`.
pub fn launch(
    program: &Program,
    files: &Files,
    kernel: &str,
    args: &[Arg],
    mem: &mut Memory,
    cfg: &LaunchConfig,
) -> Result<LaunchReport, AnalyzeError> {
    let usage = AnalyzeError::Usage;
    let f = program
        .kernels()
        .find(|k| &*k.name == kernel)
        .cloned()
        .ok_or_else(|| {
            let names: Vec<&str> = program.kernels().map(|k| &*k.name).collect();
            usage(format!(
                "no kernel '{kernel}' (kernels: {})",
                names.join(", ")
            ))
        })?;
    // A global size that is not a multiple of the work-group size leaves smaller groups
    // at the edge: OpenCL 2.0's non-uniform work-groups, simulated as such.
    if let Some(d) = (0..3).find(|&d| cfg.local[d] == 0) {
        return Err(usage(format!("work-group size 0 in dimension {d}")));
    }
    let lanes = cfg
        .local
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .unwrap_or(usize::MAX);
    if lanes > 4096 {
        return Err(usage(format!(
            "work-groups of {lanes} work-items are more than 4096"
        )));
    }
    if !(1..=64).contains(&cfg.warp) {
        return Err(usage(format!("warp size {} is not in 1..=64", cfg.warp)));
    }
    if !(1..=MAX_BANKS).contains(&cfg.banks) {
        return Err(usage(format!(
            "{} banks is not in 1..={MAX_BANKS}",
            cfg.banks
        )));
    }
    mem.limit = Some(cfg.max_memory);
    if let Some(req) = f.reqd_work_group_size {
        if req != cfg.local {
            return Err(usage(format!(
                "kernel {kernel} requires work-groups of {req:?}, not {:?}",
                cfg.local
            )));
        }
    }
    if args.len() != f.params.len() {
        let wanted: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{} {}", p.ty.name(), p.name))
            .collect();
        return Err(usage(format!(
            "kernel {kernel} takes {} arguments ({}), {} given",
            f.params.len(),
            wanted.join(", "),
            args.len()
        )));
    }
    let mut sim = Sim {
        program,
        files,
        cfg,
        mem,
        metrics: Metrics::default(),
        trace: Trace {
            group: cfg.trace_group,
            ..Trace::default()
        },
        lanes,
        groups: [0, 1, 2].map(|d| cfg.global[d].div_ceil(cfg.local[d])),
        group: [0; 3],
        group_local: cfg.local,
        tracing: false,
        frames: Vec::new(),
        sp: 0,
        local_decls: HashMap::new(),
        watched: HashSet::new(),
        steps: 0,
        warp_steps: Vec::new(),
        step_calls: 0,
        constants: HashMap::new(),
        max_local_bytes: 0,
        pending: Vec::new(),
        next_event: 0,
        global_races: Default::default(),
    };
    sim.load_constants().map_err(|d| d.resolve(files))?;
    let groups = sim
        .groups
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| usage("the launch has more work-groups than can be counted".into()))?;
    for g in 0..groups {
        if cfg.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return Err(usage(format!(
                "stopped at the time limit after {g} of {groups} work-groups (raise --max-seconds, or launch fewer)"
            )));
        }
        sim.group = [
            g % sim.groups[0],
            (g / sim.groups[0]) % sim.groups[1],
            g / (sim.groups[0] * sim.groups[1]),
        ];
        sim.group_local =
            [0, 1, 2].map(|d| cfg.local[d].min(cfg.global[d] - sim.group[d] * cfg.local[d]));
        sim.lanes = sim.group_local.iter().product();
        sim.tracing = g == cfg.trace_group;
        sim.global_races.start_group(g);
        sim.run_group(&f, args).map_err(|d| d.resolve(files))?;
        sim.global_races.end_group();
    }
    Ok(LaunchReport {
        kernel: kernel.to_string(),
        config: cfg.clone(),
        metrics: sim.metrics,
        trace: sim.trace,
        local_bytes: sim.max_local_bytes,
    })
}

impl Sim<'_> {
    fn load_constants(&mut self) -> Result<(), Diag> {
        self.mem.constant.clear();
        for decl in &self.program.constants {
            self.mem
                .check_budget(decl.ty.size() as u64, || format!("constant {}", decl.name))
                .map_err(|m| Diag::new(decl.pos, m))?;
            let mut bytes = vec![0u8; decl.ty.size()];
            if let Some(init) = &decl.init {
                let one = Mask::full(1);
                let saved = self.lanes;
                self.lanes = 1;
                let values = self.init_values(&decl.ty, init, &one, decl.pos);
                self.lanes = saved;
                for (offset, ty, v) in values? {
                    to_bytes(&v[0], &ty, &mut bytes[offset..])
                        .map_err(|m| Diag::new(decl.pos, m))?;
                }
            }
            self.mem.constant.push(Buffer::new(&decl.name, bytes));
            let ptr = Ptr {
                space: Space::Constant,
                buffer: (self.mem.constant.len() - 1) as u32,
                offset: 0,
            };
            self.constants.insert(
                decl.name.clone(),
                Slot::Shared {
                    ptr,
                    ty: decl.ty.clone(),
                },
            );
        }
        Ok(())
    }

    fn run_group(&mut self, f: &Rc<Function>, args: &[Arg]) -> Result<(), Diag> {
        self.mem.start_group(self.lanes);
        self.warp_steps = vec![0; self.warps()];
        self.sp = 0;
        self.local_decls.clear();
        self.watched.clear();
        self.frames = vec![Frame {
            scopes: vec![HashMap::new()],
            ret: vec![Value::Void; self.lanes],
            ret_ty: Type::Void,
        }];
        let full = Mask::full(self.lanes);
        for (param, arg) in f.params.iter().zip(args) {
            let value = match (arg, &param.ty) {
                (Arg::Global(b), Type::Pointer(t, _)) => Value::Ptr(
                    Ptr {
                        space: Space::Global,
                        buffer: *b,
                        offset: 0,
                    },
                    t.clone(),
                ),
                (Arg::Local(bytes), Type::Pointer(t, _)) => {
                    let buffer = self.alloc_local(&param.name, *bytes, t.align(), f.pos)?;
                    Value::Ptr(
                        Ptr {
                            space: Space::Local,
                            buffer,
                            offset: 0,
                        },
                        t.clone(),
                    )
                }
                (Arg::Scalar(v), ty) => convert(v, ty)
                    .map_err(|m| Diag::new(f.pos, format!("argument {}: {m}", param.name)))?,
                (_, ty) => {
                    return Err(Diag::new(
                        f.pos,
                        format!(
                            "argument {} of type {} needs a buffer",
                            param.name,
                            ty.name()
                        ),
                    ))
                }
            };
            let offset = self.declare_private(&param.name, &param.ty, f.pos)?;
            let values = vec![value; self.lanes];
            self.store_private(offset, &param.ty, &values, &full, f.pos)?;
        }
        let flow = self.exec(&f.body, &full)?;
        drop(flow);
        self.unwaited_copies();
        self.max_local_bytes = self.max_local_bytes.max(self.mem.local_bytes());
        Ok(())
    }

    fn alloc_local(
        &mut self,
        name: &str,
        bytes: usize,
        align: usize,
        pos: Pos,
    ) -> Result<u32, Diag> {
        let b = self
            .mem
            .alloc_local(name, bytes, align)
            .map_err(|m| Diag::new(pos, m))?;
        if self.cfg.watch.iter().any(|w| w == name) {
            self.watched.insert(b);
        }
        Ok(b)
    }

    /// Declares a variable in the innermost scope.
    fn declare(&mut self, decl: &VarDecl) -> Result<Slot, Diag> {
        let slot = match decl.space {
            Space::Local => {
                let buffer = match self.local_decls.get(&decl.id) {
                    Some(b) => *b,
                    None => {
                        let b = self.alloc_local(
                            &decl.name,
                            decl.ty.size(),
                            decl.ty.align().max(decl.align.unwrap_or(1)),
                            decl.pos,
                        )?;
                        self.local_decls.insert(decl.id, b);
                        b
                    }
                };
                Slot::Shared {
                    ptr: Ptr {
                        space: Space::Local,
                        buffer,
                        offset: 0,
                    },
                    ty: decl.ty.clone(),
                }
            }
            _ => {
                let offset = self.alloc_private(&decl.ty, decl.pos)?;
                let var = self
                    .mem
                    .private_var(offset, offset + decl.ty.size(), &decl.name);
                // A new variable: no value until something writes it.
                self.mem.forget_private(offset..offset + decl.ty.size());
                Slot::Private {
                    offset,
                    ty: decl.ty.clone(),
                    var,
                }
            }
        };
        self.scope().insert(decl.name.clone(), slot.clone());
        Ok(slot)
    }

    fn declare_private(&mut self, name: &Rc<str>, ty: &Type, pos: Pos) -> Result<usize, Diag> {
        let offset = self.alloc_private(ty, pos)?;
        let var = self.mem.private_var(offset, offset + ty.size(), name);
        self.mem.forget_private(offset..offset + ty.size());
        self.scope().insert(
            name.clone(),
            Slot::Private {
                offset,
                ty: ty.clone(),
                var,
            },
        );
        Ok(offset)
    }

    fn alloc_private(&mut self, ty: &Type, pos: Pos) -> Result<usize, Diag> {
        let align = ty.align().max(1);
        let offset = self.sp.div_ceil(align) * align;
        let top = offset
            .checked_add(ty.size())
            .ok_or_else(|| Diag::new(pos, "private memory overflows the address space"))?;
        self.mem
            .reserve_private(top)
            .map_err(|m| Diag::new(pos, m))?;
        self.sp = top;
        Ok(offset)
    }

    fn scope(&mut self) -> &mut HashMap<Rc<str>, Slot> {
        let frame = self.frames.last_mut().expect("a frame is always present");
        frame.scopes.last_mut().expect("a scope is always present")
    }

    fn lookup(&self, name: &str) -> Option<Slot> {
        // Program-scope initializers run before any frame exists (a `__constant`
        // pointer to a `__constant` array): they see the constants declared above them.
        self.frames
            .last()
            .and_then(|frame| frame.scopes.iter().rev().find_map(|s| s.get(name).cloned()))
            .or_else(|| self.constants.get(name).cloned())
    }

    fn store_private(
        &mut self,
        offset: usize,
        ty: &Type,
        values: &Lanes,
        mask: &Mask,
        pos: Pos,
    ) -> Result<(), Diag> {
        let mut bytes = vec![0u8; ty.size()];
        for lane in mask.iter() {
            let v = convert(&values[lane], ty).map_err(|m| Diag::new(pos, m))?;
            to_bytes(&v, ty, &mut bytes).map_err(|m| Diag::new(pos, m))?;
            self.mem.private[lane][offset..offset + bytes.len()].copy_from_slice(&bytes);
            self.mem.mark_private(lane, offset..offset + bytes.len());
        }
        Ok(())
    }

    /// Local and global ids of a lane.
    /// A lane's local and global ids: lanes count through the running group's own extent
    /// (smaller at a non-uniform edge), groups start at multiples of the work-group size.
    fn ids(&self, lane: usize) -> ([usize; 3], [usize; 3]) {
        let l = self.group_local;
        let local = [lane % l[0], (lane / l[0]) % l[1], lane / (l[0] * l[1])];
        let global = [0, 1, 2].map(|d| self.group[d] * self.cfg.local[d] + local[d]);
        (local, global)
    }

    fn warps(&self) -> usize {
        self.lanes.div_ceil(self.cfg.warp)
    }

    /// Records an error at `pos` for `lane`.
    fn find(&mut self, kind: FindingKind, pos: Pos, lane: usize, message: impl FnOnce() -> String) {
        let (_, global) = self.ids(lane);
        let group = self.group;
        let file = self.files.name(pos.file).to_string();
        self.metrics
            .find(kind, pos, &file, (global, group), message);
    }

    /// One warp step of each warp with active lanes; `taken` marks a branch.
    fn step(&mut self, pos: Pos, mask: &Mask, taken: Option<&Mask>) -> Result<(), Diag> {
        let ws = self.cfg.warp;
        for w in 0..self.warps() {
            let active = mask.warp_bits(w, ws);
            if active == 0 {
                continue;
            }
            let count = active.count_ones() as u64;
            self.steps += count;
            self.warp_steps[w] += 1;
            if self.warp_steps[w] > self.cfg.max_warp_steps {
                let (_, first) = self.ids(w * ws + active.trailing_zeros() as usize);
                return Err(Diag::new(
                    pos,
                    format!(
                        "stopped: warp {w} of work-group {:?} (work-items from {first:?}) ran more than {} steps without finishing (an endless loop? raise --max-warp-steps)",
                        self.group, self.cfg.max_warp_steps
                    ),
                ));
            }
            let taken_bits = taken.map(|t| t.warp_bits(w, ws));
            self.metrics.count(pos, Some(w), |c| {
                c.active_lanes += count;
                c.lane_slots += ws as u64;
                if let Some(t) = taken_bits {
                    c.branches += 1;
                    if t != 0 && t != active {
                        c.divergent_branches += 1;
                    }
                }
            });
            if self.tracing {
                if self.trace.warps.len() <= w {
                    self.trace.warps.resize(w + 1, Vec::new());
                }
                if self.trace.warps[w].len() < TRACE_STEPS {
                    self.trace.warps[w].push(TraceStep {
                        line: pos.line,
                        active,
                        taken: taken_bits,
                    });
                } else {
                    self.trace.truncated = true;
                }
            }
        }
        self.step_calls += 1;
        if self.step_calls % CLOCK_EVERY == 0
            && self
                .cfg
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        {
            return Err(Diag::new(
                pos,
                "stopped at the time limit (an endless loop? raise --max-seconds)",
            ));
        }
        if self.steps > self.cfg.max_steps {
            return Err(Diag::new(
                pos,
                format!(
                    "stopped after {} lane-steps (an endless loop? raise --max-steps)",
                    self.cfg.max_steps
                ),
            ));
        }
        Ok(())
    }

    /// A branch: `mask` split into `taken` and the rest.
    fn branch(&mut self, pos: Pos, mask: &Mask, taken: &Mask) -> Result<(), Diag> {
        self.step(pos, mask, Some(taken))
    }
}
