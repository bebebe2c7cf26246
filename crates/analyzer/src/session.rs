//! Running a CLamsee session ([`crate::clamsee`]): the host statements in order, each
//! `Device.KERNEL(…)` call a simulated launch over the session's arrays, which keep what
//! the kernel wrote, so calls in sequence see each other's results.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::clamsee::{eval, instantiate, HostStmt, HostValue, Session};
use crate::memory::{Buffer, Memory};
use crate::sim::{self, Arg, LaunchConfig};
use crate::types::{Space, Type};
use crate::value::{to_bytes, Value};
use crate::variant::Pass;
use crate::{compile, AnalyzeError};

/// One kernel call of a session.
pub struct SessionCall {
    /// The statement as written.
    pub text: String,
    /// The kernel.
    pub kernel: String,
    /// The analyzed launch and the source it ran.
    pub pass: Pass,
}

/// What a session did.
pub struct SessionRun {
    /// Every kernel call, in order.
    pub calls: Vec<SessionCall>,
    /// The arrays at the end: name, element type, bytes.
    pub arrays: BTreeMap<String, (Type, Vec<u8>)>,
    /// Whether the file asked for the branching view.
    pub branching: bool,
}

fn error(message: impl Into<String>) -> AnalyzeError {
    AnalyzeError::Usage(format!("session: {}", message.into()))
}

fn size_of(value: HostValue, what: &str) -> Result<usize, AnalyzeError> {
    match value {
        HostValue::Int(v) if v > 0 => Ok(v as usize),
        other => Err(error(format!(
            "{what} must be a positive integer, not {other:?}"
        ))),
    }
}

/// Runs `session` with `base` (warp, banks, limits); `defines` are `-D` options.
pub fn run(
    session: &Session,
    base: &LaunchConfig,
    defines: &[String],
) -> Result<SessionRun, AnalyzeError> {
    let mut scalars: Vec<(String, HostValue)> = Vec::new();
    let mut arrays: BTreeMap<String, (Type, Vec<u8>)> = BTreeMap::new();
    let mut global: Option<[usize; 3]> = None;
    let mut local: Option<[usize; 3]> = None;
    let mut calls = Vec::new();
    let mut budget = base.max_memory;
    for stmt in &session.host {
        let lookup = |n: &str| scalars.iter().rev().find(|(m, _)| m == n).map(|(_, v)| *v);
        match stmt {
            HostStmt::Scalar { name, float, value } => {
                let v = eval(value, &lookup)?;
                let v = match (float, v) {
                    (true, v) => HostValue::Float(v.as_f64()),
                    (false, HostValue::Float(x)) => HostValue::Int(x as i64),
                    (false, v) => v,
                };
                scalars.push((name.clone(), v));
            }
            HostStmt::Array { name, elem, len } => {
                let ty = Type::from_name(elem).ok_or_else(|| {
                    error(format!("unknown element type '{elem}' of array {name}"))
                })?;
                let len = size_of(eval(len, &lookup)?, &format!("the length of {name}"))?;
                let bytes = len
                    .checked_mul(ty.size())
                    .filter(|&b| (b as u64) <= budget)
                    .ok_or_else(|| {
                        error(format!(
                            "array {name} does not fit the memory limit (--max-memory)"
                        ))
                    })?;
                budget -= bytes as u64;
                arrays.insert(name.clone(), (ty, vec![0u8; bytes]));
            }
            HostStmt::Fill { array, value } => {
                let v = eval(value, &lookup)?;
                let (ty, bytes) = arrays
                    .get_mut(array)
                    .ok_or_else(|| error(format!("Arrays.fill: no array {array}")))?;
                let Type::Scalar(s) = ty.clone() else {
                    return Err(error(format!(
                        "Arrays.fill: {array} is not an array of numbers"
                    )));
                };
                let value = if s.is_float() {
                    Value::float(s, v.as_f64())
                } else {
                    Value::int(s, v.as_f64() as i64 as u64)
                };
                let size = ty.size();
                for chunk in bytes.chunks_exact_mut(size) {
                    to_bytes(&value, ty, chunk).map_err(error)?;
                }
            }
            HostStmt::WorkSize {
                global: is_global,
                dims,
            } => {
                let mut out = [1usize; 3];
                for (k, d) in dims.iter().enumerate() {
                    out[k] = size_of(eval(d, &lookup)?, "a work size")?;
                }
                if *is_global {
                    global = Some(out);
                } else {
                    local = Some(out);
                }
            }
            HostStmt::Call { kernel, args, text } => {
                let k = session
                    .kernels
                    .iter()
                    .find(|k| k.name == *kernel)
                    .ok_or_else(|| error(format!("{text}: the session has no kernel {kernel}")))?;
                if args.len() != k.params.len() {
                    return Err(error(format!(
                        "{text}: kernel {kernel} takes {} arguments, not {}",
                        k.params.len(),
                        args.len()
                    )));
                }
                // Scalar arguments, by parameter name, size the local arrays.
                let mut values = Vec::new();
                for ((pname, pointer), arg) in k.params.iter().zip(args) {
                    if !*pointer {
                        values.push((pname.clone(), eval(arg, &lookup)?));
                    }
                }
                let source = instantiate(k, &values)?;
                let compiled =
                    compile(&format!("{kernel} (session)"), &source, defines, &|_, _| {
                        Ok(None)
                    })?;
                let f = compiled
                    .program
                    .kernels()
                    .find(|f| *f.name == **kernel)
                    .cloned()
                    .ok_or_else(|| error(format!("kernel {kernel} did not compile to a kernel")))?;
                let mut mem = Memory::default();
                let mut bound = Vec::new();
                let mut written = Vec::new();
                for ((param, arg), (pname, _)) in f.params.iter().zip(args).zip(&k.params) {
                    match &param.ty {
                        Type::Pointer(elem, space) if *space != Some(Space::Local) => {
                            let redlab_expr::ast::AstKind::Name(array) = &arg.kind else {
                                return Err(error(format!("{text}: {pname} takes an array name")));
                            };
                            let (ty, bytes) = arrays
                                .get(array)
                                .ok_or_else(|| error(format!("{text}: no array {array}")))?;
                            if **elem != *ty && **elem != Type::Void {
                                return Err(error(format!(
                                    "{text}: {pname} points to {}, array {array} holds {}",
                                    elem.name(),
                                    ty.name()
                                )));
                            }
                            mem.global.push(Buffer::new(array, bytes.clone()));
                            written.push((array.clone(), mem.global.len() - 1));
                            bound.push(Arg::Global((mem.global.len() - 1) as u32));
                        }
                        Type::Scalar(s) => {
                            let v = eval(arg, &lookup)?;
                            bound.push(Arg::Scalar(if s.is_float() {
                                Value::float(*s, v.as_f64())
                            } else {
                                Value::int(*s, v.as_f64() as i64 as u64)
                            }));
                        }
                        other => {
                            return Err(error(format!(
                            "{text}: parameter {pname} of type {} cannot be passed from host code",
                            other.name()
                        )))
                        }
                    }
                }
                let mut config = base.clone();
                config.global = global
                    .ok_or_else(|| error(format!("{text}: call Device.setGlobalWorkSize first")))?;
                config.local = local
                    .ok_or_else(|| error(format!("{text}: call Device.setLocalWorkSize first")))?;
                config.watch.extend(compiled.watches.iter().cloned());
                let report = sim::launch(
                    &compiled.program,
                    &compiled.files,
                    kernel,
                    &bound,
                    &mut mem,
                    &config,
                )?;
                for (array, idx) in written {
                    if let Some(entry) = arrays.get_mut(&array) {
                        entry.1 = mem.global[idx].bytes.clone();
                    }
                }
                calls.push(SessionCall {
                    text: text.clone(),
                    kernel: kernel.clone(),
                    pass: Pass {
                        compiled: Rc::new(compiled),
                        report,
                    },
                });
            }
        }
    }
    Ok(SessionRun {
        calls,
        arrays,
        branching: session.branching,
    })
}
