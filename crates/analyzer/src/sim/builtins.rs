//! Built-in functions that need the group: work-item queries, barriers, atomics,
//! `vload`/`vstore`, sub-group functions (a sub-group is a warp) and work-group
//! collectives. Collectives and barriers must be reached by every work-item of the
//! group; when the mask says otherwise the call is recorded as barrier divergence.
//! Pure functions are in [`super::math`].

use std::rc::Rc;

use crate::ast::{BinOp, Expr};
use crate::mask::Mask;
use crate::metrics::FindingKind;
use crate::source::{Diag, Pos};
use crate::types::{Scalar, Type};
use crate::value::{binary, convert, from_bytes, to_bytes, Ptr, Value};

use super::eval::NOWHERE;

/// `CLK_LOCAL_MEM_FENCE` (the preprocessor's predefined value).
const CLK_LOCAL_MEM_FENCE: i64 = 1;
/// `CLK_GLOBAL_MEM_FENCE`.
const CLK_GLOBAL_MEM_FENCE: i64 = 2;
use super::{Lanes, Sim};

/// Calls built-in `name`; `None` when there is no such built-in.
pub(super) fn call(
    sim: &mut Sim,
    name: &str,
    args: &[Expr],
    mask: &Mask,
    pos: Pos,
) -> Result<Option<Lanes>, Diag> {
    let r = match name {
        "get_global_id"
        | "get_local_id"
        | "get_group_id"
        | "get_global_size"
        | "get_local_size"
        | "get_enqueued_local_size"
        | "get_num_groups"
        | "get_global_offset" => {
            let dims = eval_args(sim, args, mask)?;
            let mut out = vec![Value::Void; sim.lanes];
            for l in mask.iter() {
                let d = dims.first().map_or(0, |v| v[l].as_u64() as usize);
                let (local, global) = sim.ids(l);
                let v = if d > 2 {
                    if name.ends_with("size") || name == "get_num_groups" {
                        1
                    } else {
                        0
                    }
                } else {
                    match name {
                        "get_global_id" => global[d],
                        "get_local_id" => local[d],
                        "get_group_id" => sim.group[d],
                        "get_global_size" => sim.cfg.global[d],
                        "get_local_size" => sim.group_local[d],
                        "get_enqueued_local_size" => sim.cfg.local[d],
                        "get_num_groups" => sim.groups[d],
                        _ => 0,
                    }
                };
                out[l] = Value::Int(Scalar::ULong, v as u64);
            }
            out
        }
        "get_local_linear_id" => {
            sim.per_lane_value(mask, |_, l| Value::Int(Scalar::ULong, l as u64))
        }
        "get_work_dim" => {
            let dims = if sim.cfg.global[2] > 1 {
                3
            } else if sim.cfg.global[1] > 1 {
                2
            } else {
                1
            };
            sim.broadcast(Value::Int(Scalar::UInt, dims), mask)
        }
        "barrier" | "work_group_barrier" => {
            let flags = eval_args(sim, args, mask)?;
            // Only a barrier with CLK_LOCAL_MEM_FENCE orders local memory; one with just
            // CLK_GLOBAL_MEM_FENCE leaves local accesses on both sides racing.
            let orders_local = flags.first().is_none_or(|lanes| {
                mask.iter()
                    .next()
                    .is_none_or(|l| lanes[l].as_i64() & CLK_LOCAL_MEM_FENCE != 0)
            });
            sim.group_wide(pos, mask, name);
            sim.metrics.count(pos, None, |c| c.barriers += 1);
            for w in 0..sim.warps() {
                if mask.warp_bits(w, sim.cfg.warp) != 0 {
                    sim.metrics
                        .warps
                        .resize(sim.metrics.warps.len().max(w + 1), Default::default());
                    sim.metrics.warps[w].barriers += 1;
                }
            }
            if orders_local {
                sim.mem.barrier();
            }
            let orders_global = flags.first().is_some_and(|lanes| {
                mask.iter()
                    .next()
                    .is_some_and(|l| lanes[l].as_i64() & CLK_GLOBAL_MEM_FENCE != 0)
            });
            if orders_global {
                sim.global_races.barrier();
            }
            sim.broadcast(Value::Void, mask)
        }
        "mem_fence"
        | "read_mem_fence"
        | "write_mem_fence"
        | "sub_group_barrier"
        | "atomic_work_item_fence" => {
            eval_args(sim, args, mask)?;
            sim.broadcast(Value::Void, mask)
        }
        "printf" => {
            eval_args(sim, args, mask)?;
            sim.broadcast(Value::Int(Scalar::Int, 0), mask)
        }
        "get_sub_group_size" => sim.per_lane_value(mask, |s, l| {
            Value::Int(Scalar::UInt, s.sub_group_size(l) as u64)
        }),
        "get_max_sub_group_size" => {
            sim.broadcast(Value::Int(Scalar::UInt, sim.cfg.warp as u64), mask)
        }
        "get_num_sub_groups" => sim.broadcast(Value::Int(Scalar::UInt, sim.warps() as u64), mask),
        "get_enqueued_num_sub_groups" => {
            let enqueued = sim
                .cfg
                .local
                .iter()
                .product::<usize>()
                .div_ceil(sim.cfg.warp);
            sim.broadcast(Value::Int(Scalar::UInt, enqueued as u64), mask)
        }
        "get_sub_group_id" => sim.per_lane_value(mask, |s, l| {
            Value::Int(Scalar::UInt, (l / s.cfg.warp) as u64)
        }),
        "get_sub_group_local_id" => sim.per_lane_value(mask, |s, l| {
            Value::Int(Scalar::UInt, (l % s.cfg.warp) as u64)
        }),
        _ => return other(sim, name, args, mask, pos),
    };
    Ok(Some(r))
}

fn eval_args(sim: &mut Sim, args: &[Expr], mask: &Mask) -> Result<Vec<Lanes>, Diag> {
    args.iter().map(|a| sim.eval(a, mask)).collect()
}

fn other(
    sim: &mut Sim,
    name: &str,
    args: &[Expr],
    mask: &Mask,
    pos: Pos,
) -> Result<Option<Lanes>, Diag> {
    let err = |m: String| Diag::new(pos, m);
    if let Some(op) = name
        .strip_prefix("atomic_")
        .or_else(|| name.strip_prefix("atom_"))
    {
        return atomic(sim, op, args, mask, pos).map(Some);
    }
    if name.starts_with("vload") || name.starts_with("vstore") {
        return vector_memory(sim, name, args, mask, pos);
    }
    if let Some(rest) = name
        .strip_prefix("sub_group_")
        .or_else(|| name.strip_prefix("intel_sub_group_"))
    {
        return sub_group(sim, rest, args, mask, pos);
    }
    match name {
        "async_work_group_copy" | "async_work_group_strided_copy" => {
            return sim.async_copy(name, args, mask, pos).map(Some)
        }
        "wait_group_events" => return sim.wait_events(args, mask, pos).map(Some),
        "prefetch" => {
            eval_args(sim, args, mask)?;
            return Ok(Some(sim.broadcast(Value::Void, mask)));
        }
        _ => {}
    }
    if let Some(rest) = name.strip_prefix("work_group_") {
        let values = eval_args(sim, args, mask)?;
        sim.group_wide(pos, mask, name);
        let full: Vec<usize> = mask.iter().collect();
        return collective(rest, &values, &[full], sim.lanes, |_| 0)
            .map(Some)
            .map_err(err);
    }
    // Pure functions: a name math does not know is not a built-in (math answers every
    // name it knows, if only with an arity error).
    if super::math::call(name, &[]).is_none() {
        return Ok(None);
    }
    let values = eval_args(sim, args, mask)?;
    let mut out = vec![Value::Void; sim.lanes];
    for l in mask.iter() {
        let lane_args: Vec<Value> = values.iter().map(|v| v[l].clone()).collect();
        if let Some(r) = super::math::call(name, &lane_args) {
            out[l] = r.map_err(err)?;
        }
    }
    Ok(Some(out))
}

impl Sim<'_> {
    fn per_lane_value(&self, mask: &Mask, f: impl Fn(&Self, usize) -> Value) -> Lanes {
        let mut out = vec![Value::Void; self.lanes];
        for l in mask.iter() {
            out[l] = f(self, l);
        }
        out
    }

    fn sub_group_size(&self, lane: usize) -> usize {
        let w = lane / self.cfg.warp;
        self.cfg.warp.min(self.lanes - w * self.cfg.warp)
    }

    /// A call every work-item of the group must make: records who is missing.
    pub(super) fn group_wide(&mut self, pos: Pos, mask: &Mask, what: &str) {
        if mask.count() == self.lanes {
            return;
        }
        let missing = Mask::full(self.lanes).minus(mask);
        let first = missing.iter().next().unwrap_or(0);
        let (absent, _) = self.ids(first);
        let (n, total) = (mask.count(), self.lanes);
        let lane = mask.iter().next().unwrap_or(0);
        self.find(FindingKind::BarrierDivergence, pos, lane, || {
            format!(
                "{what} reached by {n} of {total} work-items; work-item {absent:?} is not there"
            )
        });
    }
}

/// Combines values in lane order (`add`, `min`, `max`).
fn fold(op: &str, a: &Value, b: &Value) -> Result<Value, String> {
    match op {
        "add" => binary(BinOp::Add, a, b),
        "min" => Ok(if binary(BinOp::Lt, b, a)?.truthy() {
            b.clone()
        } else {
            a.clone()
        }),
        "max" => Ok(if binary(BinOp::Gt, b, a)?.truthy() {
            b.clone()
        } else {
            a.clone()
        }),
        "and" | "all" => Ok(Value::Int(Scalar::Int, (a.truthy() && b.truthy()) as u64)),
        "or" | "any" => Ok(Value::Int(Scalar::Int, (a.truthy() || b.truthy()) as u64)),
        _ => Err(format!("unknown collective operation {op}")),
    }
}

/// A collective over groups of lanes (`sets`: the lanes of each sub-group, or of the
/// work-group): `reduce_<op>`, `scan_inclusive_<op>`, `scan_exclusive_<op>`,
/// `broadcast`, `any`, `all`. `index` maps a lane to its index within its set.
fn collective(
    rest: &str,
    values: &[Lanes],
    sets: &[Vec<usize>],
    lanes: usize,
    index: impl Fn(usize) -> usize,
) -> Result<Lanes, String> {
    let mut out = vec![Value::Void; lanes];
    let x = values.first().ok_or("a collective needs a value")?;
    for set in sets {
        if set.is_empty() {
            continue;
        }
        if rest == "broadcast" {
            let at = values.get(1).map_or(0, |v| v[set[0]].as_u64() as usize);
            let src = set
                .iter()
                .find(|l| index(**l) == at)
                .copied()
                .unwrap_or(set[0]);
            for l in set {
                out[*l] = x[src].clone();
            }
            continue;
        }
        let (kind, op) = if let Some(op) = rest.strip_prefix("reduce_") {
            ("reduce", op)
        } else if let Some(op) = rest.strip_prefix("scan_inclusive_") {
            ("inclusive", op)
        } else if let Some(op) = rest.strip_prefix("scan_exclusive_") {
            ("exclusive", op)
        } else if rest == "any" || rest == "all" {
            ("reduce", rest)
        } else {
            return Err(format!("unknown collective {rest}"));
        };
        let mut acc: Option<Value> = None;
        for l in set {
            let before = acc.clone();
            acc = Some(match &acc {
                None => x[*l].clone(),
                Some(a) => fold(op, a, &x[*l])?,
            });
            if kind == "inclusive" {
                out[*l] = acc.clone().unwrap_or(Value::Void);
            } else if kind == "exclusive" {
                out[*l] = match before {
                    Some(b) => b,
                    None => identity(op, &x[*l])?,
                };
            }
        }
        if kind == "reduce" {
            let total = acc.unwrap_or(Value::Void);
            for l in set {
                out[*l] = total.clone();
            }
        }
    }
    Ok(out)
}

fn identity(op: &str, like: &Value) -> Result<Value, String> {
    let s = like.scalar().unwrap_or(Scalar::Int);
    let v = match (op, s.is_float()) {
        ("add", _) => Value::Int(Scalar::Int, 0),
        ("min", true) => Value::Float(Scalar::Double, f64::INFINITY),
        ("max", true) => Value::Float(Scalar::Double, f64::NEG_INFINITY),
        ("min", false) => Value::int(
            s,
            if s.is_signed() {
                u64::MAX >> (65 - 8 * s.size())
            } else {
                u64::MAX
            },
        ),
        ("max", false) => Value::int(
            s,
            if s.is_signed() {
                !(u64::MAX >> (65 - 8 * s.size()))
            } else {
                0
            },
        ),
        _ => return Err(format!("no identity for {op}")),
    };
    crate::value::to_scalar(&v, s)
}

fn atomic(sim: &mut Sim, op: &str, args: &[Expr], mask: &Mask, pos: Pos) -> Result<Lanes, Diag> {
    let err = |m: String| Diag::new(pos, m);
    let values = eval_args(sim, args, mask)?;
    let Some(ptr_lanes) = values.first() else {
        return Err(err(format!("atomic_{op} needs a pointer")));
    };
    let mut out = vec![Value::Void; sim.lanes];
    for l in mask.iter() {
        let Value::Ptr(p, elem) = &ptr_lanes[l] else {
            return Err(err(format!(
                "atomic_{op} needs a pointer, not {}",
                ptr_lanes[l].describe()
            )));
        };
        let size = elem.size();
        if p.space == crate::types::Space::Global {
            sim.note_global(pos, l, p, size, true, true);
            // An atomic update reads the old value and writes the new one.
            sim.check_declared(pos, l, p, size, &[(0, size)], false);
            sim.check_declared(pos, l, p, size, &[], true);
        }
        let bytes = match sim.mem.read(p, l, size) {
            Ok(b) => b,
            Err(what) => {
                let (local, _) = sim.ids(l);
                sim.find(FindingKind::OutOfBounds, pos, l, || {
                    format!("work-item {local:?} atomically updates {what}")
                });
                continue;
            }
        };
        let old = from_bytes(elem, &bytes).map_err(err)?;
        let arg = |k: usize| {
            values
                .get(k)
                .map(|v| v[l].clone())
                .ok_or_else(|| err(format!("atomic_{op} needs more arguments")))
        };
        let one = Value::Int(Scalar::Int, 1);
        let new = match op {
            "add" => binary(BinOp::Add, &old, &arg(1)?),
            "sub" => binary(BinOp::Sub, &old, &arg(1)?),
            "inc" => binary(BinOp::Add, &old, &one),
            "dec" => binary(BinOp::Sub, &old, &one),
            "and" => binary(BinOp::And, &old, &arg(1)?),
            "or" => binary(BinOp::Or, &old, &arg(1)?),
            "xor" => binary(BinOp::Xor, &old, &arg(1)?),
            "xchg" => Ok(arg(1)?),
            "min" => fold("min", &old, &convert(&arg(1)?, elem).map_err(err)?),
            "max" => fold("max", &old, &convert(&arg(1)?, elem).map_err(err)?),
            "cmpxchg" => {
                let cmp = convert(&arg(1)?, elem).map_err(err)?;
                if binary(BinOp::Eq, &old, &cmp).map_err(err)?.truthy() {
                    Ok(arg(2)?)
                } else {
                    Ok(old.clone())
                }
            }
            other => return Err(err(format!("unknown atomic operation atomic_{other}"))),
        }
        .map_err(err)?;
        let new = convert(&new, elem).map_err(err)?;
        let mut buf = vec![0u8; size];
        to_bytes(&new, elem, &mut buf).map_err(err)?;
        sim.mem.write(p, l, &buf).map_err(err)?;
        out[l] = old;
    }
    for w in 0..sim.warps() {
        if mask.warp_bits(w, sim.cfg.warp) != 0 {
            sim.metrics.count(pos, Some(w), |c| c.atomics += 1);
        }
    }
    Ok(out)
}

/// `vloadN`, `vstoreN`, `vload_half[N]`, `vstore_half[N][_rtX]`.
fn vector_memory(
    sim: &mut Sim,
    name: &str,
    args: &[Expr],
    mask: &Mask,
    pos: Pos,
) -> Result<Option<Lanes>, Diag> {
    let err = |m: String| Diag::new(pos, m);
    let store = name.starts_with("vstore");
    let rest = name
        .trim_start_matches("vload")
        .trim_start_matches("vstore");
    let rest = rest.split("_rt").next().unwrap_or(rest);
    let (half, digits) = match rest.strip_prefix("_half") {
        Some(d) => (true, d),
        None => match rest.strip_prefix("a_half") {
            Some(d) => (true, d),
            None => (false, rest),
        },
    };
    let n: usize = if digits.is_empty() {
        1
    } else {
        digits
            .parse()
            .map_err(|_| err(format!("unknown function {name}")))?
    };
    if !half && digits.is_empty() {
        return Ok(None);
    }
    let values = eval_args(sim, args, mask)?;
    let (data, index, pointer) = if store {
        if values.len() != 3 {
            return Err(err(format!("{name} takes 3 arguments")));
        }
        (Some(&values[0]), &values[1], &values[2])
    } else {
        if values.len() != 2 {
            return Err(err(format!("{name} takes 2 arguments")));
        }
        (None, &values[0], &values[1])
    };
    let mut ptrs = vec![NOWHERE; sim.lanes];
    let mut elem: Option<Scalar> = None;
    for l in mask.iter() {
        let Value::Ptr(p, t) = &pointer[l] else {
            return Err(err(format!(
                "{name} needs a pointer, not {}",
                pointer[l].describe()
            )));
        };
        let e = if half {
            Scalar::Half
        } else {
            t.scalar()
                .ok_or_else(|| err(format!("{name} needs a pointer to scalars")))?
        };
        elem = Some(e);
        let step = (n * e.size()) as i64;
        ptrs[l] = Ptr {
            offset: p.offset + index[l].as_i64() * step,
            ..*p
        };
    }
    let Some(e) = elem else {
        return Ok(Some(vec![Value::Void; sim.lanes]));
    };
    let ty = if n == 1 {
        Type::Scalar(e)
    } else {
        Type::Vector(e, n as u8)
    };
    // A 3-vector occupies 16 bytes in memory as a type, but vload3/vstore3 move exactly
    // three elements (12 bytes): they go element by element.
    let element_ptrs = |k: usize| -> Vec<Ptr> {
        ptrs.iter()
            .map(|p| Ptr {
                offset: p.offset + (k * e.size()) as i64,
                ..*p
            })
            .collect()
    };
    if let Some(data) = data {
        let conv_ty = if n == 1 {
            Type::Scalar(e)
        } else {
            Type::Vector(e, n as u8)
        };
        let converted: Lanes = (0..sim.lanes)
            .map(|l| {
                if mask.get(l) {
                    convert(&data[l], &conv_ty).unwrap_or(Value::Void)
                } else {
                    Value::Void
                }
            })
            .collect();
        if n == 3 {
            for k in 0..3 {
                let part: Lanes = converted
                    .iter()
                    .map(|v| match v {
                        Value::Vector(_, items) => items.get(k).cloned().unwrap_or(Value::Void),
                        _ => Value::Void,
                    })
                    .collect();
                sim.store(pos, mask, &element_ptrs(k), &Type::Scalar(e), &part)?;
            }
        } else {
            sim.store(pos, mask, &ptrs, &ty, &converted)?;
        }
        return Ok(Some(sim.broadcast(Value::Void, mask)));
    }
    let loaded = if n == 3 {
        let parts = (0..3)
            .map(|k| sim.load(pos, mask, &element_ptrs(k), &Type::Scalar(e)))
            .collect::<Result<Vec<Lanes>, Diag>>()?;
        (0..sim.lanes)
            .map(|l| {
                if mask.get(l) {
                    Value::Vector(e, Rc::new(parts.iter().map(|p| p[l].clone()).collect()))
                } else {
                    Value::Void
                }
            })
            .collect()
    } else {
        sim.load(pos, mask, &ptrs, &ty)?
    };
    if !half {
        return Ok(Some(loaded));
    }
    let float_ty = if n == 1 {
        Type::Scalar(Scalar::Float)
    } else {
        Type::Vector(Scalar::Float, n as u8)
    };
    let mut out = vec![Value::Void; sim.lanes];
    for l in mask.iter() {
        out[l] = convert(&loaded[l], &float_ty).map_err(err)?;
    }
    Ok(Some(out))
}

fn sub_group(
    sim: &mut Sim,
    rest: &str,
    args: &[Expr],
    mask: &Mask,
    pos: Pos,
) -> Result<Option<Lanes>, Diag> {
    let err = |m: String| Diag::new(pos, m);
    let ws = sim.cfg.warp;
    if let Some(n) = rest.strip_prefix("block_read") {
        let n: usize = match n.trim_start_matches("_ui") {
            "" => 1,
            d => d
                .parse()
                .map_err(|_| err(format!("unknown block read {rest}")))?,
        };
        let values = eval_args(sim, args, mask)?;
        let p = values
            .first()
            .ok_or_else(|| err("a block read needs a pointer".into()))?;
        let mut parts = Vec::new();
        for k in 0..n {
            let mut ptrs = vec![NOWHERE; sim.lanes];
            for l in mask.iter() {
                let Value::Ptr(base, _) = &p[l] else {
                    return Err(err("a block read needs a pointer".into()));
                };
                let size = sim.sub_group_size(l);
                ptrs[l] = Ptr {
                    offset: base.offset + 4 * ((l % ws) + k * size) as i64,
                    ..*base
                };
            }
            parts.push(sim.load(pos, mask, &ptrs, &Type::Scalar(Scalar::UInt))?);
        }
        let mut out = vec![Value::Void; sim.lanes];
        for l in mask.iter() {
            out[l] = if n == 1 {
                parts[0][l].clone()
            } else {
                Value::Vector(
                    Scalar::UInt,
                    Rc::new(parts.iter().map(|p| p[l].clone()).collect()),
                )
            };
        }
        return Ok(Some(out));
    }
    let values = eval_args(sim, args, mask)?;
    let warps: Vec<Vec<usize>> = (0..sim.warps())
        .map(|w| {
            (w * ws..((w + 1) * ws).min(sim.lanes))
                .filter(|l| mask.get(*l))
                .collect()
        })
        .collect();
    // Shuffles: a lane reads another lane of its warp (its own value if that lane is
    // outside the warp or inactive, as CUDA's shuffles do).
    let source = |l: usize, k: i64| -> Option<usize> {
        let w = l / ws;
        let size = ws.min(sim.lanes - w * ws) as i64;
        (0..size)
            .contains(&k)
            .then(|| w * ws + k as usize)
            .filter(|s| mask.get(*s))
    };
    let shuffled = |pick: &dyn Fn(usize) -> Option<usize>| -> Result<Lanes, Diag> {
        let x = values
            .first()
            .ok_or_else(|| err(format!("sub_group_{rest} needs a value")))?;
        let mut out = vec![Value::Void; sim.lanes];
        for l in mask.iter() {
            out[l] = x[pick(l).unwrap_or(l)].clone();
        }
        Ok(out)
    };
    let arg = |k: usize, l: usize| values.get(k).map_or(0, |v| v[l].as_i64());
    let r = match rest {
        "shuffle" => shuffled(&|l| source(l, arg(1, l)))?,
        "shuffle_xor" => shuffled(&|l| source(l, ((l % ws) as i64) ^ arg(1, l)))?,
        "shuffle_up" => shuffled(&|l| source(l, (l % ws) as i64 - arg(1, l)))?,
        "shuffle_down" if values.len() == 3 => {
            // Intel's form: (current, next, delta) reads past the end into `next`.
            let mut out = vec![Value::Void; sim.lanes];
            for l in mask.iter() {
                let w = l / ws;
                let size = sim.sub_group_size(l) as i64;
                let k = (l % ws) as i64 + arg(2, l);
                out[l] = if k < size {
                    values[0][w * ws + k as usize].clone()
                } else if k < 2 * size {
                    values[1][w * ws + (k - size) as usize].clone()
                } else {
                    values[0][l].clone()
                };
            }
            out
        }
        "shuffle_down" => shuffled(&|l| source(l, (l % ws) as i64 + arg(1, l)))?,
        _ => {
            for (w, set) in warps.iter().enumerate() {
                let size = ws.min(sim.lanes - w * ws);
                if !set.is_empty() && set.len() != size {
                    let lane = set[0];
                    let (n, first) = (set.len(), sim.ids(lane).0);
                    sim.find(FindingKind::BarrierDivergence, pos, lane, || {
                        format!("sub_group_{rest} reached by {n} of {size} work-items of the sub-group of {first:?}")
                    });
                }
            }
            collective(rest, &values, &warps, sim.lanes, |l| l % ws).map_err(err)?
        }
    };
    Ok(Some(r))
}
