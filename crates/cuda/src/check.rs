//! `redlab check-kernels --backend cuda`: every variant × operator × type compiled
//! through NVRTC for one architecture, and the many-output kernels (`segments.cl`) for
//! every operator × type (and their stream path's build, which writes results in place;
//! and both builds reading through each statistic's map over every type), without a GPU (only libnvrtc is needed), and the production
//! kernel with every shipped CUDA tuning entry's parameters. A kernel that does not
//! compile for CUDA is reported with its log.

use rayon::prelude::*;
use redlab_core::acc::allowed_accs;
use redlab_core::{DType, Op, Problem};
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::codec::Codec;
use redlab_kernels::{driver, mapped, registry, Capabilities};

use crate::compile;

/// One compiled (or failed) kernel build.
#[derive(Debug, Clone)]
pub struct Checked {
    /// Variant name.
    pub variant: &'static str,
    /// The problem, in words (`sum f32`).
    pub problem: String,
    /// Whether this build reads input elements (`FIRST_PASS`) or partials.
    pub first_pass: bool,
    /// `Ok(())`, `Err(Some(log))` for a failed build, `Err(None)` when the variant does
    /// not apply (the registry's skip reason is in `skipped`).
    pub outcome: Result<(), String>,
    /// Why the build was not attempted, when it was not.
    pub skipped: Option<String>,
}

/// The capabilities every CUDA device has (see `discovery::capabilities`).
pub fn cuda_capabilities() -> Capabilities {
    Capabilities {
        features: crate::discovery::FEATURES.to_vec(),
        compute_units: 1,
        max_work_group: 1024,
        local_memory: 48 << 10,
        cache_bytes: 0,
    }
}

/// Every problem the library serves: each operator × type × allowed accumulator.
pub fn all_problems() -> Vec<Problem> {
    let mut problems = Vec::new();
    for op in Op::ALL {
        for dtype in DType::ALL {
            for acc in allowed_accs(op, dtype) {
                if let Ok(p) = Problem::new(op, dtype, Some(acc)) {
                    if !problems.contains(&p) {
                        problems.push(p);
                    }
                }
            }
        }
    }
    problems
}

/// Compiles every applicable build for `arch` (in parallel: NVRTC is thread-safe per
/// program) and returns them in registry order.
pub fn check_all(arch: &str) -> Vec<Checked> {
    let caps = cuda_capabilities();
    let mut jobs = Vec::new();
    for variant in registry::all() {
        let entries = driver::entry_points(&variant);
        for problem in all_problems() {
            jobs.push((variant.clone(), problem, true));
            if entries.later_rebuilt {
                jobs.push((variant.clone(), problem, false));
            }
        }
    }
    let mut checked: Vec<Checked> = jobs
        .into_par_iter()
        .map(|(variant, problem, first_pass)| {
            let mut checked = Checked {
                variant: variant.name,
                problem: problem.to_string(),
                first_pass,
                outcome: Ok(()),
                skipped: None,
            };
            if let Err(skip) = variant.check(&problem, &caps) {
                checked.skipped = Some(skip.0);
            } else {
                checked.outcome = built(
                    assembly::assemble(&variant, &problem, &[], &[], Target::Cuda, first_pass),
                    variant.file,
                    arch,
                );
            }
            checked
        })
        .collect();
    checked.par_extend(all_problems().into_par_iter().map(|problem| Checked {
        variant: "segments",
        problem: problem.to_string(),
        first_pass: true,
        outcome: built(
            assembly::assemble_segments(&problem, &[], Target::Cuda),
            "segments.cl",
            arch,
        ),
        skipped: None,
    }));
    // The stream path's build, for every problem whose results it writes in place.
    let to_result = all_problems()
        .into_iter()
        .filter(|p| Codec::new(p).in_place_result().is_some());
    checked.par_extend(
        to_result
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|problem| Checked {
                variant: "segments (results in place)",
                problem: problem.to_string(),
                first_pass: true,
                outcome: built(
                    assembly::assemble_segments_to_result(&problem, &[], Target::Cuda),
                    "segments.cl",
                    arch,
                ),
                skipped: None,
            }),
    );
    checked.par_extend(tuned_builds().into_par_iter().map(|build| {
        let (problem, outcome) = match build {
            Ok(b) => {
                let assembled =
                    assembly::assemble(&b.variant, &b.problem, &b.params, &[], Target::Cuda, true);
                (b.what, built(assembled, b.variant.file, &b.arch))
            }
            Err(what) => (
                what,
                Err("the entry names no known variant, operator or type".into()),
            ),
        };
        Checked {
            variant: "production (tuned)",
            problem,
            first_pass: true,
            outcome,
            skipped: None,
        }
    }));
    checked.par_extend(mapped_examples().into_par_iter().map(|reduction| Checked {
        variant: "production (mapped)",
        problem: reduction.describe(),
        first_pass: true,
        outcome: compile_mapped(&reduction, arch),
        skipped: None,
    }));
    checked.par_extend(mapped_segment_builds(arch));
    checked
}

/// The segment kernels reading through a map, read back and in place (the stream
/// path's build, after `post`): every statistic over every type, and the mapped
/// examples the segment kernels take (several inputs packed, of 1000003 elements each;
/// custom combines too).
fn mapped_segment_builds(arch: &str) -> Vec<Checked> {
    let mut reductions: Vec<redlab_expr::Reduction> = mapped_examples()
        .into_iter()
        .filter(mapped::segments_take)
        .collect();
    for dtype in DType::ALL {
        for name in redlab_expr::stats::NAMES {
            if let Ok(r) = redlab_expr::stats::reduction(name, dtype) {
                reductions.push(r);
            }
        }
    }
    let mut jobs = Vec::new();
    for r in reductions {
        if mapped::in_place_result(&r).is_some() {
            jobs.push((r.clone(), true));
        }
        jobs.push((r, false));
    }
    jobs.into_par_iter()
        .map(|(reduction, in_place)| {
            let assembled = if in_place {
                mapped::segments_to_result(&reduction, Target::Cuda).map(|(_, a, _)| a)
            } else if reduction.inputs.len() > 1 {
                mapped::segments_packed(&reduction, Target::Cuda).map(|(_, a)| a)
            } else {
                mapped::segments(&reduction, Target::Cuda).map(|(_, a)| a)
            };
            Checked {
                variant: if in_place {
                    "segments (mapped, results in place)"
                } else {
                    "segments (mapped)"
                },
                problem: format!("{} over {:?}", reduction.describe(), reduction.inputs),
                first_pass: true,
                outcome: built(assembled, "segments.cl", arch),
                skipped: None,
            }
        })
        .collect()
}

/// Compiles assembled source (`file` names it in messages) for `arch`; the failure is
/// the assembler's message or NVRTC's log.
fn built(
    assembled: Result<assembly::Assembled, String>,
    file: &str,
    arch: &str,
) -> Result<(), String> {
    let a = assembled?;
    compile::compile(&a.source, file, arch)
        .map(|_| ())
        .map_err(|f| f.log)
}

/// A custom combine to build: map, combine, identity, accumulator, inputs.
type CustomCase<'a> = (&'a str, &'a str, &'a str, Option<DType>, &'a [DType]);

/// User-defined reductions that together reach every construct of the generated code:
/// each input type, each operator and function, conversions and narrowing casts, and
/// every built-in combine.
pub fn mapped_examples() -> Vec<redlab_expr::Reduction> {
    use redlab_core::DType::*;
    let cases: &[(&str, &str, &[DType])] = &[
        ("x * y", "sum", &[F32, F32]),
        ("x * y", "sum", &[F64, F64]),
        ("sqrt(x * x + y * y)", "max", &[F32, F64]),
        ("abs(x - y) / (1 + i % 3)", "argmax", &[F16, BF16]),
        ("x > 0.5 && !isnan(y) || x == y", "sum", &[F32, F32]),
        ("min(x, y) - max(-x, y) * 2", "min", &[I8, I64]),
        ("u16(x) ^ (y & 255) | 3", "xor", &[U8, U32]),
        ("i8(x * 40.0) + i32(y) / 7 - i16(x)", "prod", &[F32, F64]),
        (
            "floor(x) + ceil(y) + pow(x, 2) + exp(y) - log(abs(x) + 1)",
            "argmin",
            &[F32, F32],
        ),
        ("x < y ? u64(x) : u64(y) % 5", "and", &[F64, I16]),
        ("f64(x) * y + z", "sum", &[F32, F64, U64]),
        ("x * y + z - i", "sum", &[F16, I8, BF16]),
        ("x - y", "prod", &[U16, I8]),
        (
            "f16(x * y) + f16(x * 1e-6) * 1e6 + bf16(x * y) + bf16(x * 1e-39) * 1e20 * 1e19 + (abs(f16(x * 7e4)) == inf)",
            "sum",
            &[F32, F32],
        ),
        (
            "f16(f64(x * y)) + f16(f64(x * y) * (1 + 1e-12)) + bf16(f64(x * y)) + bf16(f64(x * y) * (1 - 1e-12)) + f16(f64(x) * 1e-6) * 1e6 + (abs(f16(f64(x) * 7e4)) == inf)",
            "sum",
            &[F32, F32],
        ),
    ];
    // Custom combines: a float sum by hand, an order-dependent integer combine, a wider
    // accumulator.
    let custom: &[CustomCase<'_>] = &[
        ("x * y", "a + b", "-0.0", None, &[F32, F32]),
        ("x", "a ^ (b * 3)", "0", None, &[I32]),
        ("x", "max(a, b)", "-inf", Some(F64), &[F32]),
    ];
    let mut out: Vec<redlab_expr::Reduction> = cases
        .iter()
        .filter_map(|(map, combine, inputs)| {
            redlab_expr::Reduction::builder(map, combine)
                .build(inputs)
                .ok()
        })
        .collect();
    out.extend(
        custom
            .iter()
            .filter_map(|(map, combine, identity, acc, inputs)| {
                let mut b = redlab_expr::Reduction::builder(map, combine).identity(identity);
                if let Some(a) = acc {
                    b = b.acc(*a);
                }
                b.build(inputs).ok()
            }),
    );
    out
}

fn compile_mapped(reduction: &redlab_expr::Reduction, arch: &str) -> Result<(), String> {
    let (problem, decls) = redlab_kernels::mapped::decls(reduction)?;
    let variant = redlab_kernels::mapped::variant()?;
    // The parameters mapped runs use, and the kernel's defaults (warp tiles on), so both
    // the group-tile and the warp-tile forms of the map build.
    let mapped = redlab_kernels::mapped::params(&problem, &variant, &[]);
    for params in [mapped.as_slice(), &[]] {
        let assembled = assembly::assemble_with(
            &variant,
            &problem,
            &decls.source,
            params,
            &[],
            Target::Cuda,
            true,
        );
        built(assembled, variant.file, arch)?;
    }
    Ok(())
}

/// One build of the production kernel as `auto` launches it from a shipped database.
pub struct TunedBuild {
    /// The entry's variant.
    pub variant: registry::Variant,
    /// The entry's problem (default accumulator, as the tuner measured it).
    pub problem: Problem,
    /// The parameters after `driver::launch_params` for one size.
    pub params: Vec<(&'static str, u32)>,
    /// The database's architecture.
    pub arch: String,
    /// The entry and size, in words.
    pub what: String,
}

/// Every shipped CUDA tuning entry built as a launch would build it: its parameters
/// through `driver::launch_params` at the smallest, the measured and the largest size it
/// covers (the size decides which paths a launch is built with), each distinct set once.
/// The defaults that the other builds use never turn on some paths (one cluster's
/// tiles, bulk-copy rings), which only tuned parameters reach. An entry naming an
/// unknown variant, operator or type comes back as `Err` with the entry in words.
pub fn tuned_builds() -> Vec<Result<TunedBuild, String>> {
    let caps = cuda_capabilities();
    let mut builds: Vec<Result<TunedBuild, String>> = Vec::new();
    for (path, db) in redlab_tune::db::shipped() {
        if db.device.backend != "cuda" {
            continue;
        }
        for entry in &db.entries {
            let problem = match (entry.op.parse::<Op>(), entry.dtype.parse::<DType>()) {
                (Ok(op), Ok(dtype)) => Problem::new(op, dtype, None).ok(),
                _ => None,
            };
            let (Some(variant), Some(problem)) = (registry::find(&entry.variant), problem) else {
                builds.push(Err(format!(
                    "{} {} {} at n={} ({path})",
                    entry.variant, entry.op, entry.dtype, entry.n
                )));
                continue;
            };
            let given: Vec<(&'static str, u32)> =
                entry.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            for n in [entry.n_min.max(1), entry.n, entry.n_max] {
                let mut params = driver::launch_params(&variant, &problem, &caps, &given, n);
                params.sort_unstable();
                let seen = builds.iter().flatten().any(|b| {
                    b.variant.name == variant.name && b.problem == problem && b.params == params
                });
                if !seen {
                    builds.push(Ok(TunedBuild {
                        variant: variant.clone(),
                        problem,
                        params,
                        arch: db.device.architecture.clone(),
                        what: format!("{problem} at n={n} ({path})"),
                    }));
                }
            }
        }
    }
    builds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_cuda_entry_is_built_on_the_paths_its_parameters_reach() {
        let builds = tuned_builds();
        let unknown: Vec<&String> = builds.iter().filter_map(|b| b.as_ref().err()).collect();
        assert!(unknown.is_empty(), "{unknown:?}");
        let builds: Vec<TunedBuild> = builds.into_iter().flatten().collect();
        let entries: usize = redlab_tune::db::shipped()
            .iter()
            .filter(|(_, db)| db.device.backend == "cuda")
            .map(|(_, db)| db.entries.len())
            .sum();
        // Identical parameter sets (the two GPUs share many) are built once.
        assert!(
            entries > 0 && builds.len() >= entries / 2,
            "{} builds",
            builds.len()
        );
        // A halves cluster entry is built both ways over its range: one cluster's tiles
        // with their word loads (which the defaults never build) at the small end, and
        // without them past one cluster.
        let halves_cluster = |words: bool| {
            builds.iter().any(|b| {
                b.problem.dtype == DType::F16
                    && b.params
                        .iter()
                        .any(|&(k, v)| k == "CLUSTER_FINISH" && v > 1)
                    && b.params.contains(&("CLUSTER_TILE_WORDS", 0)) != words
            })
        };
        assert!(halves_cluster(true) && halves_cluster(false));
        assert!(builds.iter().all(|b| b.arch.starts_with("sm_")));
    }
}
