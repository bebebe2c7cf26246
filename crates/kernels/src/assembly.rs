//! Source assembly: the text a backend compiles, built in one fixed order —
//!
//! 0. for CUDA only, the translation header (`cuda_prelude.h`): it stands in for the
//!    built-in declarations an OpenCL compiler provides, which every later section
//!    (the operator declarations included) is written against;
//! 1. parameter defines (each kernel file also has an `#ifndef` default, so it compiles
//!    alone);
//! 2. the operator and type declarations for the problem ([`crate::optype`]);
//! 3. device quirks, each with a comment saying why;
//! 4. the backend prelude: backend-specific helpers after the quirks (empty today for
//!    both backends; CUDA's vocabulary is section 0);
//! 5. the common helpers (`common.h`);
//! 6. the kernel file, with `#include "…"` of the project's own headers inlined.
//!
//! Each section starts with a marker comment, so a line in a build log can be traced
//! back to its section.

use redlab_core::Problem;

use crate::capability::Feature;
use crate::optype;
use crate::registry::Variant;

/// The kernel files and headers, embedded in the binary.
const FILES: &[(&str, &str)] = &[
    ("common.h", include_str!("../cl/common.h")),
    ("cuda_prelude.h", include_str!("../cl/cuda_prelude.h")),
    ("atomic_combine.h", include_str!("../cl/atomic_combine.h")),
    ("atomic_global.cl", include_str!("../cl/atomic_global.cl")),
    ("blocked.cl", include_str!("../cl/blocked.cl")),
    ("bulk_copy.h", include_str!("../cl/bulk_copy.h")),
    ("builtin_wg.cl", include_str!("../cl/builtin_wg.cl")),
    ("canonical.cl", include_str!("../cl/canonical.cl")),
    ("canonical_one.cl", include_str!("../cl/canonical_one.cl")),
    ("canonical_exp.h", include_str!("../cl/canonical_exp.h")),
    ("cluster_finish.h", include_str!("../cl/cluster_finish.h")),
    ("cluster_tiles.h", include_str!("../cl/cluster_tiles.h")),
    ("chunk_per_cu.cl", include_str!("../cl/chunk_per_cu.cl")),
    ("generate.cl", include_str!("../cl/generate.cl")),
    (
        "khronos_subgroup.cl",
        include_str!("../cl/khronos_subgroup.cl"),
    ),
    (
        "khronos_vanilla.cl",
        include_str!("../cl/khronos_vanilla.cl"),
    ),
    ("khronos_wg.cl", include_str!("../cl/khronos_wg.cl")),
    ("reduce0.cl", include_str!("../cl/reduce0.cl")),
    ("reduce1.cl", include_str!("../cl/reduce1.cl")),
    ("reduce2.cl", include_str!("../cl/reduce2.cl")),
    ("reduce3.cl", include_str!("../cl/reduce3.cl")),
    ("reduce4.cl", include_str!("../cl/reduce4.cl")),
    ("reduce5.cl", include_str!("../cl/reduce5.cl")),
    ("reduce6.cl", include_str!("../cl/reduce6.cl")),
    ("roof.cl", include_str!("../cl/roof.cl")),
    ("roof_bulk.cl", include_str!("../cl/roof_bulk.cl")),
    ("segments.cl", include_str!("../cl/segments.cl")),
    ("short_rows.h", include_str!("../cl/short_rows.h")),
    ("statistics.cl", include_str!("../cl/statistics.cl")),
    ("stat_state.h", include_str!("../cl/stat_state.h")),
    ("stat_kept.h", include_str!("../cl/stat_kept.h")),
    (
        "stat_kept_columns.h",
        include_str!("../cl/stat_kept_columns.h"),
    ),
    ("stat_warp_rows.h", include_str!("../cl/stat_warp_rows.h")),
    ("stat_columns.h", include_str!("../cl/stat_columns.h")),
    (
        "stat_thread_tiles.h",
        include_str!("../cl/stat_thread_tiles.h"),
    ),
    ("column_words.h", include_str!("../cl/column_words.h")),
    ("word_rows.h", include_str!("../cl/word_rows.h")),
    ("row_words.h", include_str!("../cl/row_words.h")),
    ("row_whole.h", include_str!("../cl/row_whole.h")),
    ("seg_result.h", include_str!("../cl/seg_result.h")),
    ("result_form.h", include_str!("../cl/result_form.h")),
    ("order_free.h", include_str!("../cl/order_free.h")),
    ("strided.cl", include_str!("../cl/strided.cl")),
    ("subgroup_block.cl", include_str!("../cl/subgroup_block.cl")),
    ("two_stage.cl", include_str!("../cl/two_stage.cl")),
    ("warp_bulk.h", include_str!("../cl/warp_bulk.h")),
    ("warp_tiles.h", include_str!("../cl/warp_tiles.h")),
    ("wg_tree.cl", include_str!("../cl/wg_tree.cl")),
];

/// The text of an embedded kernel file or header.
pub fn file(name: &str) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// The text of an embedded kernel file with its `#include`s of the project's headers
/// inlined, for kernels that are built outside [`assemble`] (the read roof).
pub fn expanded(name: &str) -> Result<String, String> {
    let text = file(name).ok_or_else(|| format!("no kernel file {name}"))?;
    inline_includes(text, 0)
}

/// Every embedded file name.
pub fn file_names() -> impl Iterator<Item = &'static str> {
    FILES.iter().map(|(n, _)| *n)
}

/// A device-specific adjustment to the source, with the reason it exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quirk {
    /// Text inserted in the quirks section.
    pub text: String,
    /// Why the device needs it (written next to it in the source).
    pub why: String,
}

/// Which API will compile the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// OpenCL C, compiled by the device's OpenCL driver.
    OpenCl,
    /// CUDA C++ through NVRTC, after the translation header.
    Cuda,
}

/// Assembled source and the build options it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    /// The complete source.
    pub source: String,
    /// Compiler options.
    pub options: String,
}

/// Assembles `variant` for `problem`. `params` overrides parameter defaults;
/// `first_pass` selects reading input elements (`true`) or partials of a previous pass.
pub fn assemble(
    variant: &Variant,
    problem: &Problem,
    params: &[(&str, u32)],
    quirks: &[Quirk],
    target: Target,
    first_pass: bool,
) -> Result<Assembled, String> {
    let decls = optype::op_type(problem).source;
    assemble_with(variant, problem, &decls, params, quirks, target, first_pass)
}

/// [`assemble`] with section 2 given: the declarations of a user-defined map
/// ([`crate::mapped::decls`]), which read elements through the map.
pub fn assemble_with(
    variant: &Variant,
    problem: &Problem,
    decls: &str,
    params: &[(&str, u32)],
    quirks: &[Quirk],
    target: Target,
    first_pass: bool,
) -> Result<Assembled, String> {
    let mut defines = String::new();
    for p in variant.params {
        let value = params
            .iter()
            .find(|(n, _)| *n == p.name)
            .map_or(p.default, |(_, v)| *v);
        defines.push_str(&format!("#define {} {}\n", p.name, value));
    }
    for (name, value) in variant.defines {
        defines.push_str(&format!("#define {name} {value}\n"));
    }
    if first_pass {
        defines.push_str("#define FIRST_PASS 1\n");
    }
    let needs_cl2 = variant
        .needs
        .iter()
        .any(|f| matches!(f, Feature::WorkGroupCollectives | Feature::Subgroups));
    let source = sections(
        variant.name,
        variant.file,
        &defines,
        problem,
        decls,
        quirks,
        target,
    )?;
    Ok(Assembled {
        source,
        options: if needs_cl2 && target == Target::OpenCl {
            "-cl-std=CL2.0".into()
        } else {
            String::new()
        },
    })
}

/// Assembles the many-output kernels (`segments.cl`: axis and segmented reductions) for
/// `problem`, in the same sections as every variant.
pub fn assemble_segments(
    problem: &Problem,
    quirks: &[Quirk],
    target: Target,
) -> Result<Assembled, String> {
    segments_with(problem, quirks, target, "")
}

/// `segments.cl` built with `SEG_RESULT`: each output's result goes to the caller's
/// array whose address the job's header carries (the stream path of axis reductions,
/// which reads nothing back). An error for problems whose results need decoding on the
/// host ([`crate::codec::Codec::in_place_result`]).
pub fn assemble_segments_to_result(
    problem: &Problem,
    quirks: &[Quirk],
    target: Target,
) -> Result<Assembled, String> {
    let in_place = crate::codec::Codec::new(problem)
        .in_place_result()
        .ok_or_else(|| format!("{problem}: the results need decoding on the host"))?;
    segments_with(problem, quirks, target, &in_place.defines())
}

fn segments_with(
    problem: &Problem,
    quirks: &[Quirk],
    target: Target,
    defines: &str,
) -> Result<Assembled, String> {
    let decls = optype::op_type(problem).source;
    assemble_segments_with(problem, &decls, quirks, target, defines)
}

/// `segments.cl` with section 2 given (a user-defined map's declarations,
/// [`crate::mapped::segments`]) and section 1's `defines`.
pub fn assemble_segments_with(
    problem: &Problem,
    decls: &str,
    quirks: &[Quirk],
    target: Target,
    defines: &str,
) -> Result<Assembled, String> {
    let source = sections(
        "segments",
        "segments.cl",
        defines,
        problem,
        decls,
        quirks,
        target,
    )?;
    Ok(Assembled {
        source,
        options: String::new(),
    })
}

/// The sections in their documented order, for the kernel file `file_name`.
fn sections(
    label: &str,
    file_name: &str,
    defines: &str,
    problem: &Problem,
    decls: &str,
    quirks: &[Quirk],
    target: Target,
) -> Result<String, String> {
    let kernel = file(file_name).ok_or_else(|| format!("no kernel file {file_name}"))?;
    let mut s = String::new();
    s.push_str(&format!("// ---- redlab: {label} ({problem}) ----\n"));
    if target == Target::Cuda {
        s.push_str("// ---- section 0: CUDA translation of OpenCL C ----\n");
        s.push_str(file("cuda_prelude.h").unwrap_or_default());
    }
    s.push_str("// ---- section 1: parameters ----\n");
    s.push_str(defines);
    s.push_str("// ---- section 2: operator and types ----\n");
    s.push_str(decls);
    s.push_str("// ---- section 3: device quirks ----\n");
    for quirk in quirks {
        s.push_str(&format!("// {}\n{}\n", quirk.why, quirk.text));
    }
    s.push_str("// ---- section 4: backend prelude ----\n");
    match target {
        Target::OpenCl => s.push_str("// OpenCL C needs no translation.\n"),
        Target::Cuda => s.push_str("// The CUDA translation is section 0.\n"),
    }
    s.push_str("// ---- section 5: common helpers ----\n");
    s.push_str(&inline_includes(file("common.h").unwrap_or_default(), 0)?);
    s.push_str(&format!("// ---- section 6: kernel {file_name} ----\n"));
    s.push_str(&inline_includes(kernel, 0)?);
    Ok(s)
}

/// Replaces `#include "name"` lines with the embedded file (recursively, with a depth
/// limit against cycles).
fn inline_includes(text: &str, depth: usize) -> Result<String, String> {
    if depth > 8 {
        return Err("#include nesting deeper than 8".into());
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("#include") {
            let name = rest.trim().trim_matches(['"', '<', '>']);
            let included = file(name).ok_or_else(|| format!("#include of unknown file {name}"))?;
            out.push_str(&format!("// ---- #include \"{name}\" ----\n"));
            out.push_str(&inline_includes(included, depth + 1)?);
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;
    use redlab_core::{DType, Op};

    #[test]
    fn sections_come_in_the_documented_order() {
        let variant = registry::find("blocked-atomic").expect("registered");
        let problem = Problem::new(Op::Sum, DType::I32, None).expect("valid");
        let assembled = assemble(
            &variant,
            &problem,
            &[("WG", 128)],
            &[],
            Target::OpenCl,
            true,
        )
        .expect("assembles");
        let s = &assembled.source;
        let at = |needle: &str| s.find(needle).unwrap_or_else(|| panic!("missing {needle}"));
        assert!(at("section 1") < at("#define WG 128"));
        assert!(at("#define WG 128") < at("section 2"));
        assert!(at("section 2") < at("typedef int in_t;"));
        assert!(at("section 3") < at("section 4"));
        assert!(at("section 5") < at("section 6"));
        assert!(at("#define FINISH 3") < at("section 2"));
        assert!(at("section 6") < at("#include \"atomic_combine.h\""));
        assert!(!s.lines().any(|l| l.trim_start().starts_with("#include")));
    }

    #[test]
    fn every_registered_file_exists_and_every_file_is_used() {
        let variants = registry::all();
        for v in &variants {
            assert!(file(v.file).is_some(), "{}: {}", v.name, v.file);
        }
        // The roof, the axis/segment, statistics and generation kernels are assembled
        // outside the registry (each by its own module).
        let own = [
            "roof.cl",
            "roof_bulk.cl",
            "segments.cl",
            "statistics.cl",
            "generate.cl",
        ];
        for name in file_names().filter(|n| n.ends_with(".cl") && !own.contains(n)) {
            assert!(
                variants.iter().any(|v| v.file == name),
                "{name} is not registered"
            );
        }
    }

    /// Whether `word` appears in `text` as a whole identifier (not inside
    /// `CLUSTER_FINISH`, say).
    fn mentions_word(text: &str, word: &str) -> bool {
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        text.match_indices(word).any(|(at, _)| {
            !ident(text[..at].chars().next_back()) && !ident(text[at + word.len()..].chars().next())
        })
    }

    #[test]
    fn kernel_side_parameters_have_defaults_so_files_compile_alone() {
        // WG and FINISH are read by kernel code; the geometry parameters are host-side.
        let common = file("common.h").expect("common");
        for v in registry::all() {
            let text = file(v.file).expect("file");
            for name in ["WG", "FINISH"] {
                if mentions_word(text, name) {
                    let guard = format!("#ifndef {name}");
                    assert!(
                        text.contains(&guard) || common.contains(&guard),
                        "{}: {name}",
                        v.name
                    );
                }
            }
        }
    }
}
