//! User-defined reductions on the GPU: the map compiled into the production kernel's
//! template. The map becomes `lift()` (section 2 of the assembly, [`decls`]); every
//! input array travels in one buffer, each in its own 256-byte-aligned region
//! ([`pack`]); and the kernel reads elements through `lift()` only (`IN_IS_MAPPED`: no
//! raw-word loads; warp tiles, where a run asks for them, give each lane the elements of
//! a 16-byte word of the mapped type and load every input's words whole). Float sums
//! run a work-group per tile with more groups than plain sums ([`FLOAT_PARAMS`]). The combine is a built-in operator over the
//! mapped values, so the result is that problem's, in the canonical order.

use redlab_core::{ArrayRef, DType, Packed, Problem};
use redlab_expr::codegen::{
    helpers, map_bits_function, map_function, map_word_function, post_function, region_offsets,
    storage, uses_f64, uses_index, InputLayout,
};
use redlab_expr::types::{result_dtype, Ty};
use redlab_expr::{Combine, Reduction};

use crate::assembly::{assemble_segments_with, Assembled, Target};
use crate::codec::{Codec, InPlace};
use crate::optype::{lift_bits_source, op_type_reading, MapSource, OpType};

/// Parameters mapped float sums and products override: a work-group per tile and eight
/// groups per compute unit. Measured on the H200 (results/h200-cuda-expr/tune, f32 `x*x`
/// and `x*y` at 2^24 and 2^28, in a CUDA graph): the plain sums' tuned warp tiles with
/// two groups per SM read 2698 / 3885 GB/s at 2^28; warp tiles with 4–8 groups per SM
/// 3947 / 4241; group tiles with 8 per SM 4235 / 4331, and the best or near it at 2^24.
/// A map has no raw words to load, so more resident groups are what keep loads in flight.
pub const FLOAT_PARAMS: &[(&str, u32)] = &[
    ("WARP_TILES_FROM", 0),
    ("WARP_TILES_UPTO", 0),
    // A mapped f16/bf16 value reads through `lift()` like any other (the kernel applies
    // the halves' own bound to raw halves only), so the host must not plan warps for it.
    ("HALF_WARP_TILES_UPTO", 0),
    ("GROUPS_PER_CU", 8),
];

/// Extra OpenCL build options: divisions and square roots correctly rounded, as on the
/// CPU and under CUDA's defaults.
pub const OPENCL_OPTIONS: &str = "-cl-fp32-correctly-rounded-divide-sqrt";

/// The problem a reduction's kernel computes and its section-2 declarations, for inputs
/// packed into the kernel's buffer ([`pack`]).
pub fn decls(reduction: &Reduction) -> Result<(Problem, OpType), String> {
    decls_for(reduction, InputLayout::Packed)
}

/// [`decls`] for inputs laid out as `layout` says.
pub fn decls_for(reduction: &Reduction, layout: InputLayout) -> Result<(Problem, OpType), String> {
    let problem = match &reduction.combine {
        Combine::Builtin(p) => *p,
        Combine::Custom { .. } => return custom_decls(reduction, layout),
    };
    let mut text = helpers(uses_f64(&reduction.map, &reduction.inputs));
    text.push_str(layout.region_macro());
    text.push_str(&map_function(&reduction.map, &reduction.inputs));
    if let Some(wv) = map_word_elements(&problem) {
        text.push_str(&map_word_function(&reduction.map, &reduction.inputs, wv));
    }
    let map = MapSource {
        text: &text,
        needs_fp64: uses_f64(&reduction.map, &reduction.inputs),
    };
    Ok((problem, op_type_reading(&problem, Some(&map))))
}

/// Elements per 16-byte word of mapped values where the kernels map whole words of the
/// inputs at a time (`rl_map_word`, `RL_MAP_WORD`): float sums and products, whose warp
/// tiles read a word of the accumulator type per lane, 4 elements for f32 and 2 for f64.
/// `None` for every other problem.
fn map_word_elements(problem: &Problem) -> Option<usize> {
    if !(problem.dtype.is_float() && problem.op.is_arithmetic()) {
        return None;
    }
    Some(
        if crate::optype::value_kind(problem) == crate::optype::ValueKind::F64 {
            2
        } else {
            4
        },
    )
}

/// The problem a custom combine's kernels are built for, standing in for the layout of
/// its partials only: a sum over the accumulator type (i64 for bools), which has the
/// same size and encoding. An error for a built-in combine.
pub fn custom_problem(reduction: &Reduction) -> Result<Problem, String> {
    use redlab_expr::types::Ty;
    let Some((_, _, acc)) = reduction.custom() else {
        return Err("not a custom combine".into());
    };
    let dtype = match acc {
        Ty::F32 => DType::F32,
        Ty::F64 => DType::F64,
        Ty::I64 | Ty::Bool => DType::I64,
        Ty::U64 => DType::U64,
    };
    Problem::new(redlab_core::Op::Sum, dtype, None).map_err(|e| e.to_string())
}

/// Declarations for a custom combine: `acc_t` is the accumulator type, `lift` the map
/// converted to it, `combine` the expression in `a` and `b`, `IDENTITY` its identity;
/// `OP_CUSTOM` keeps the kernel on the canonical path (lanes, halving fold, aligned
/// tree) with the operands in order. The problem returned is [`custom_problem`].
fn custom_decls(reduction: &Reduction, layout: InputLayout) -> Result<(Problem, OpType), String> {
    use redlab_expr::codegen::{c_type, constant, convert, expr};
    use redlab_expr::types::Ty;
    let Some((node, identity, acc)) = reduction.custom() else {
        return Err("not a custom combine".into());
    };
    let problem = custom_problem(reduction)?;
    let value = match acc {
        Ty::F32 => crate::optype::ValueKind::F32,
        Ty::F64 => crate::optype::ValueKind::F64,
        Ty::I64 | Ty::Bool => crate::optype::ValueKind::I64,
        Ty::U64 => crate::optype::ValueKind::U64,
    };
    let fp64 = acc == Ty::F64 || uses_f64(&reduction.map, &reduction.inputs);
    let acc_c = c_type(if acc == Ty::Bool { Ty::I64 } else { acc });
    let mut s = String::new();
    if fp64 {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    s.push_str(&format!(
        "typedef uchar in_t;\ntypedef {acc_c} val_t;\ntypedef val_t acc_t;\n"
    ));
    s.push_str(&helpers(fp64));
    s.push_str(layout.region_macro());
    s.push_str(&map_function(&reduction.map, &reduction.inputs));
    s.push_str(&format!(
        "#define IDENTITY ((acc_t){})\n",
        constant(identity)
    ));
    s.push_str(&format!(
        "inline acc_t lift_n(const __global in_t* in, ulong i, ulong n) {{ return {}; }}\n",
        convert(reduction.map.ty, acc, "rl_map(in, i, n)")
    ));
    s.push_str(&format!(
        "inline acc_t combine(acc_t a, acc_t b) {{ return {}; }}\n",
        expr(node, &["a", "b"])
    ));
    s.push_str("#define lift(p, i) lift_n((p), (i), n)\n");
    s.push_str("inline acc_t lift_value(in_t x, ulong i) { (void)i; return (acc_t)x; }\n");
    let acc_bytes = if acc == Ty::F32 { 4 } else { 8 };
    s.push_str(&format!(
        "#define OP_CUSTOM 1\n#define ACC_BYTES {acc_bytes}\n#define VALUE_IS_{} 1\n#define IN_IS_MAPPED 1\n#define IN_BYTES 0\n",
        if acc.is_float() { "FLOAT" } else { "INTEGER" }
    ));
    Ok((
        problem,
        OpType {
            source: s,
            needs_fp64: fp64,
            acc_bytes,
            value,
            float_key: false,
        },
    ))
}

/// A mapped run's outcome: `post` applied over `n` elements, kernel seconds summed.
pub fn outcome(reduction: &Reduction, run: crate::Run, n: usize) -> redlab_core::Outcome {
    redlab_core::Outcome {
        value: reduction.finish(run.value, n),
        seconds: run.passes.iter().sum(),
        passes: run.passes,
    }
}

/// The inputs in one buffer, each at its region's offset (the layout `rl_map` reads).
pub fn pack(reduction: &Reduction, inputs: &[ArrayRef<'_>]) -> Vec<u8> {
    let n = inputs.first().map_or(0, |a| a.len());
    let (offsets, total) = region_offsets(&reduction.inputs, n);
    let mut packed = vec![0u8; total];
    for (input, at) in inputs.iter().zip(offsets) {
        let bytes = input.bytes();
        packed[at..at + bytes.len()].copy_from_slice(bytes);
    }
    packed
}

/// The many-output kernels (`segments.cl`: axis and segmented reductions) reading
/// elements through the map of a one-input reduction: each output reduces its mapped
/// values in its own canonical order, as the host would after mapping every element,
/// without the mapped array ever existing. Returns the problem over mapped values with
/// the source; for a custom combine, the problem stands in for the partials' layout
/// (a sum over the accumulator type, [`decls`]) and the kernels apply the combine
/// (`OP_CUSTOM`: the canonical paths only, each lane started from the identity). The
/// input buffer is the raw array itself (one input has no regions to find, so `lift`
/// needs no length); several inputs take [`segments_packed`].
pub fn segments(reduction: &Reduction, target: Target) -> Result<(Problem, Assembled), String> {
    if reduction.inputs.len() != 1 || !segments_take(reduction) {
        let count = reduction.inputs.len();
        return Err(format!(
            "the segment kernels map one input that is not read by its index `i` \
             (this map: `{}` over {count} input{})",
            reduction.map_text,
            if count == 1 { "" } else { "s" }
        ));
    }
    assemble_mapped_segments(reduction, target, InputLayout::Packed)
}

/// Bytes before the first input's region in the buffer of [`pack_for_segments`]: the
/// inputs' length as a little-endian u64, then zeros, so the regions keep the 256-byte
/// alignment the production kernel's packing gives them.
pub const SEGMENTS_PACK_HEADER: usize = 256;

/// [`segments`] for a reduction of several inputs, packed into one buffer by
/// [`pack_for_segments`]: `lift` reads the inputs' length from the buffer's first word
/// and finds each input's region from it (the segment kernels have no length argument
/// of their own), so one program serves every length.
pub fn segments_packed(
    reduction: &Reduction,
    target: Target,
) -> Result<(Problem, Assembled), String> {
    if !segments_take(reduction) {
        return Err(format!(
            "the segment kernels map inputs that are not read by their index `i` \
             (this map: `{}`)",
            reduction.map_text
        ));
    }
    assemble_mapped_segments(reduction, target, InputLayout::Packed)
}

/// Several inputs of one length for [`segments_packed`]'s kernels: a header of
/// [`SEGMENTS_PACK_HEADER`] bytes holding the length, then the regions of [`pack`].
pub fn pack_for_segments(reduction: &Reduction, inputs: &[ArrayRef<'_>]) -> Vec<u8> {
    let n = inputs.first().map_or(0, |a| a.len()) as u64;
    let regions = pack(reduction, inputs);
    let mut packed = Vec::with_capacity(SEGMENTS_PACK_HEADER + regions.len());
    packed.extend_from_slice(&n.to_le_bytes());
    packed.resize(SEGMENTS_PACK_HEADER, 0);
    packed.extend_from_slice(&regions);
    packed
}

pub(crate) fn assemble_mapped_segments(
    reduction: &Reduction,
    target: Target,
    layout: InputLayout,
) -> Result<(Problem, Assembled), String> {
    let (problem, source) = segment_decls(reduction, layout)?;
    let mut assembled = assemble_segments_with(&problem, &source, &[], target, "")?;
    if target == Target::OpenCl {
        assembled.options = OPENCL_OPTIONS.into();
    }
    Ok((problem, assembled))
}

/// Section 2 of the mapped segment kernels, with the problem over mapped values.
fn segment_decls(reduction: &Reduction, layout: InputLayout) -> Result<(Problem, String), String> {
    let (problem, decls) = decls_for(reduction, layout)?;
    let mut source = decls.source.clone();
    // One input starts at offset 0, so `rl_map` needs no length: 0 stands in for the
    // kernel's `n`. Several inputs sit in regions `rl_map` finds from the length, which
    // the buffer's header holds ([`pack_for_segments`]). Either way one program serves
    // every length.
    // Several inputs: `SEG_MAP_WORD` maps the 4 elements from `e` on through whole-word
    // loads of every input (`rl_map_word`, which float sums of f32 values have), where
    // short rows of words and column_words would load raw words (segments.cl,
    // [`loads_words`]). Regions start at 256-byte boundaries of a buffer the library
    // allocates, so an `e` that is a multiple of 4 makes every such load aligned. One
    // input reads the caller's memory as it lies, aligned to its elements only.
    if layout == InputLayout::Addressed {
        // The buffer is the table of the inputs' addresses: no length to find.
        source.push_str(
            "#undef lift\n#define lift(p, i) lift_n((p), (i), 0)\n\
             #define SEG_MAP_WORD(p, e, out) rl_map_word((const __global uchar*)(p), (e), 0, (out))\n",
        );
    } else if reduction.inputs.len() > 1 {
        source.push_str(&format!(
            "#undef lift\n#define lift(p, i) lift_n((p) + {SEGMENTS_PACK_HEADER}, (i), \
             ((const __global ulong*)(p))[0])\n\
             #define SEG_MAP_WORD(p, e, out) rl_map_word((const __global uchar*)(p) + \
             {SEGMENTS_PACK_HEADER}, (e), ((const __global ulong*)(p))[0], (out))\n"
        ));
    } else {
        source.push_str("#undef lift\n#define lift(p, i) lift_n((p), (i), 0)\n");
    }
    // An input of 2- or 4-byte elements also maps raw words, so the kernels that load
    // whole words of 4 elements (column_words, word_rows, short rows of words) read
    // mapped elements as they read plain ones ([`reads_words`]).
    if let Some(bits) = reads_words(reduction)
        .then(|| map_bits_function(&reduction.map, reduction.inputs[0]))
        .flatten()
    {
        source.push_str(&bits);
        source.push_str(&lift_bits_source(
            &problem,
            &decls,
            reduction.inputs[0].size_bytes(),
        ));
    } else if let Some(bits) = custom_lift_bits(reduction) {
        source.push_str(&bits);
    } else if custom_maps_words(reduction) {
        source.push_str(&map_word_function(&reduction.map, &reduction.inputs, 4));
    }
    Ok((problem, source))
}

/// `MAP_BITS` for a custom combine that [`custom_reads_words`]: `lift_bits` maps an
/// element from its raw bits and converts it to the accumulator as `lift_n` converts the
/// element it reads, so a word's elements lift to the same bits as one-at-a-time loads.
fn custom_lift_bits(reduction: &Reduction) -> Option<String> {
    use redlab_expr::codegen::convert;
    if !custom_reads_words(reduction) {
        return None;
    }
    let (_, _, acc) = reduction.custom()?;
    let bits = map_bits_function(&reduction.map, reduction.inputs[0])?;
    let lifted = convert(reduction.map.ty, acc, "rl_map_bits(b)");
    Some(format!(
        "{bits}#define MAP_BITS {}\n\
         inline val_t map_value_bits(uint b) {{ return {lifted}; }}\n\
         inline acc_t lift_bits(uint b, ulong i) {{ (void)i; return {lifted}; }}\n",
        reduction.inputs[0].size_bytes()
    ))
}

/// Whether the segment kernels of `reduction`'s custom combine load its one input of 2-
/// or 4-byte elements as raw words of 4 and map each (`MAP_BITS`), as [`reads_words`]
/// says for built-in combines: `word_rows`, short rows of words and `column_words` then
/// read it as they read plain elements. Every lane still starts from the identity
/// (`seg_first`, and `column_words` folds each lane from `IDENTITY`).
/// [`crate::segments::SegmentJob::for_custom`] plans for it.
pub fn custom_reads_words(reduction: &Reduction) -> bool {
    custom_on_device(reduction)
        && matches!(reduction.inputs.as_slice(), [input] if matches!(input.size_bytes(), 2 | 4))
}

/// Whether the segment kernels of `reduction`'s custom combine map 4 elements at a time
/// from whole-word loads of each of its several inputs (`SEG_MAPPED_WORDS`, as dot
/// products do, [`loads_words`]): an f32 map into an f32 accumulator, whose lift is the
/// mapped value itself, as the word paths take it.
pub fn custom_maps_words(reduction: &Reduction) -> bool {
    custom_on_device(reduction)
        && reduction.inputs.len() > 1
        && reduction.map.ty == Ty::F32
        && reduction.custom().is_some_and(|(_, _, acc)| acc == Ty::F32)
}

/// Whether the segment kernels of `reduction`'s custom combine load words of 4
/// elements: raw words of one input ([`custom_reads_words`]) or mapped words of
/// several ([`custom_maps_words`]); [`crate::segments::SegmentJob::for_custom`]'s
/// second argument.
pub fn custom_loads_words(reduction: &Reduction) -> bool {
    custom_reads_words(reduction) || custom_maps_words(reduction)
}

/// Whether the segment kernels of `reduction` load its input as raw words of 4 elements
/// and map each (`MAP_BITS`): one input of 2- or 4-byte elements, mapped on the device
/// ([`maps_on_device`]). [`crate::segments::SegmentJob::for_mapped`] plans for it.
pub fn reads_words(reduction: &Reduction) -> bool {
    maps_on_device(reduction) && matches!(reduction.inputs[0].size_bytes(), 2 | 4)
}

/// Whether the segment kernels of `reduction` load words of 4 elements along axes, the
/// second argument of [`crate::segments::SegmentJob::for_mapped`]: raw words
/// ([`reads_words`]), or, where the map's words hold 4 values (float sums and products
/// of f32 values, `map_word_elements`) over several inputs, each input's whole words
/// mapped 4 elements at a time (`SEG_MAPPED_WORDS` in segments.cl, which asks for
/// `RL_MAP_WORD == 4`).
pub fn loads_words(reduction: &Reduction) -> bool {
    let mapped_words = reduction.inputs.len() > 1
        && maps_inputs_on_device(reduction)
        && reduction
            .problem()
            .is_some_and(|p| map_word_elements(p) == Some(4));
    reads_words(reduction) || mapped_words
}

/// Whether `reduction` maps 2- or 4-byte integer words to an integer in the segment
/// kernels (integer maps are i64). On an H200, sums along rows of such maps (`x * x`,
/// `x * 3`, `x + x` over i32; `x * x` over u32, i16, u16) came out wrong and changed from
/// run to run while `row_tiles` loaded its partial tiles under the bounds check, once
/// ptxas optimized (results/h200-map-bug); it now loads them unconditionally, which was
/// right there. [`guarded_on_cuda`] can still keep these maps out of the kernels.
pub fn maps_integer_words(reduction: &Reduction) -> bool {
    let Some(problem) = reduction.problem() else {
        return false;
    };
    reads_words(reduction) && !problem.dtype.is_float() && !reduction.inputs[0].is_float()
}

/// Whether CUDA devices keep `reduction` out of the segment kernels and map it on the
/// host: maps that [`maps_integer_words`] where `REDLAB_CUDA_MAP_GUARD=on`, a fallback
/// should a driver or compiler miscompile them again (off by default).
pub fn guarded_on_cuda(reduction: &Reduction) -> bool {
    maps_integer_words(reduction) && std::env::var("REDLAB_CUDA_MAP_GUARD").is_ok_and(|v| v == "on")
}

/// How the stream path's segment kernels store a mapped reduction's outputs in the
/// caller's array ([`segments_to_result`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedInPlace {
    /// Each output's type in the caller's array.
    pub dtype: DType,
    /// Section 1's defines (`SEG_RESULT` and its form).
    pub defines: String,
    /// Section 2's `rl_post`, where the store applies `post`; empty without one.
    pub post: String,
}

/// [`MappedInPlace`] for `reduction`. Without `post`, the problem's own in-place form
/// ([`Codec::in_place_result`]); with one, `rl_post` (generated from it) over each
/// output's result and element count, for accumulators that hold the value itself
/// (sums, products, bitwise operators) and posts whose type is stored as is (no
/// narrowing cast). `None` where the results need the host.
pub fn in_place_result(reduction: &Reduction) -> Option<MappedInPlace> {
    if !maps_on_device(reduction) {
        return None;
    }
    in_place_form(reduction)
}

/// [`in_place_result`] for any reduction with a built-in combine, whatever its inputs
/// and map (the production kernel reads several inputs and the index `i` alike).
fn in_place_form(reduction: &Reduction) -> Option<MappedInPlace> {
    let problem = reduction.problem()?;
    let codec = Codec::new(problem);
    let Some((_, post)) = &reduction.post else {
        return Some(MappedInPlace {
            dtype: Packed::result_dtype(problem),
            defines: codec.in_place_result()?.defines(),
            post: String::new(),
        });
    };
    codec.raw_result_bytes()?;
    let dtype = result_dtype(post);
    if dtype != post.ty.dtype() {
        return None;
    }
    Some(MappedInPlace {
        dtype,
        defines: format!(
            "#define SEG_RESULT {}\n#define SEG_RESULT_POST 1\n#define SEG_RESULT_POST_T {}\n",
            dtype.size_bytes(),
            storage(dtype)
        ),
        post: post_function(post, Ty::of_dtype(problem.acc)),
    })
}

/// [`segments`] built for the stream path: every output's result, after `post`, goes
/// to the caller's array ([`in_place_result`]). Returns the problem over mapped values,
/// the source and each result's type.
pub fn segments_to_result(
    reduction: &Reduction,
    target: Target,
) -> Result<(Problem, Assembled, DType), String> {
    segments_to_result_for(reduction, target, InputLayout::Packed)
}

/// [`segments_to_result`] for inputs laid out as `layout` says: several inputs read by
/// address ([`InputLayout::Addressed`]) with a map that does not read `i`.
pub fn segments_to_result_for(
    reduction: &Reduction,
    target: Target,
    layout: InputLayout,
) -> Result<(Problem, Assembled, DType), String> {
    let in_place = match layout {
        InputLayout::Packed => in_place_result(reduction),
        InputLayout::Addressed => (reduction.inputs.len() > 1 && maps_inputs_on_device(reduction))
            .then(|| in_place_form(reduction))
            .flatten(),
    };
    let in_place = in_place.ok_or_else(|| {
        format!(
            "{}: the results need the host (a post over a min, max or index, or a narrowing cast)",
            reduction.describe()
        )
    })?;
    let (problem, source) = segment_decls(reduction, layout)?;
    let source = source + &in_place.post;
    Ok((
        problem,
        assemble_segments_with(&problem, &source, &[], target, &in_place.defines)?,
        in_place.dtype,
    ))
}

/// The production kernel for the stream path over a whole array ([`whole_to_result`]).
#[derive(Debug, Clone)]
pub struct WholeToResult {
    /// The problem the kernel computes: over mapped values, or with `plain`, over the
    /// raw input itself.
    pub problem: Problem,
    /// Section 2: `SEPARATE_RESULT`, `RESULT_POST_T` and `rl_post` where there is a
    /// `post`, and the map as `lift()` or, with `plain`, the problem's own declarations.
    pub decls: String,
    /// The result's type in the caller's memory.
    pub dtype: DType,
    /// The map is the input itself (a float mean, an integer nansum): the kernel is
    /// the plain one of `problem`, with its raw-word loads and its tuned parameters,
    /// where a mapped kernel reads each element through `lift()`.
    pub plain: bool,
}

impl WholeToResult {
    /// Launch parameters for this kernel from the tuner's choice for `problem`
    /// (`chosen`, `tuned`): a plain kernel's as tuned where the tuner chose the production
    /// kernel, a mapped one's with the mapped overrides ([`params`]).
    pub fn params<'a>(
        &self,
        chosen: &crate::Variant,
        tuned: &[(&'a str, u32)],
    ) -> Vec<(&'a str, u32)> {
        if !self.plain {
            return params(&self.problem, chosen, tuned);
        }
        let production = variant().map(|v| v.name).unwrap_or_default();
        if chosen.name == production {
            tuned.to_vec()
        } else {
            Vec::new()
        }
    }
}

/// The production kernel for the stream path over a whole array (`SEPARATE_RESULT`,
/// canonical_one.cl): the map of one raw input as `lift()`, and the result stored in
/// the caller's memory after `post` (`RESULT_POST_T`) or as the accumulator's own
/// bytes. One launch then computes a whole-array statistic (a mean, a norm, any/all)
/// with the bits of the same statistic through the segment kernels: one output in its
/// own canonical order, the same `post` over the same count. A map that is the input
/// itself keeps the plain kernel of the input's sum ([`WholeToResult::plain`]): the
/// same values in the same order, so the same bits. Without a `post`, a result held as
/// an order key (norminf's max) is stored as its float (result_form.h). An error where
/// the result needs the host (a `post` over an order key or an index, a narrowing).
pub fn whole_to_result(reduction: &Reduction) -> Result<WholeToResult, String> {
    whole_to_result_for(reduction, InputLayout::Packed)
}

/// [`whole_to_result`] for inputs laid out as `layout` says: several inputs read by
/// address ([`InputLayout::Addressed`]) take the same kernel with their table as its
/// buffer.
pub fn whole_to_result_for(
    reduction: &Reduction,
    layout: InputLayout,
) -> Result<WholeToResult, String> {
    let unfit = |why: &str| format!("{}: {why}", reduction.describe());
    let in_place = match layout {
        InputLayout::Packed => in_place_result(reduction),
        InputLayout::Addressed => in_place_form(reduction),
    }
    .ok_or_else(|| unfit("the result needs the host"))?;
    let (mapped_problem, mapped_decls) = decls_for(reduction, layout)?;
    let codec = Codec::new(&mapped_problem);
    let mut decls = if in_place.post.is_empty() {
        // The problem's own store: raw bytes, or a float from its order key (norminf).
        let form = codec
            .in_place_result()
            .ok_or_else(|| unfit("the result needs the host"))?;
        if form.bytes() != in_place.dtype.size_bytes() {
            return Err(unfit("the stored result is not the result type's width"));
        }
        match form {
            InPlace::Raw(bytes) => format!("#define SEPARATE_RESULT {bytes}\n"),
            other => format!(
                "#define SEPARATE_RESULT {}\n{}",
                other.bytes(),
                other.defines()
            ),
        }
    } else {
        let raw = codec
            .raw_result_bytes()
            .ok_or_else(|| unfit("the final partial is not the result's own bytes"))?;
        format!(
            "#define SEPARATE_RESULT {raw}\n#define RESULT_POST_T {}\n",
            storage(in_place.dtype)
        )
    };
    let plain = plain_problem(reduction, &mapped_problem);
    let problem = plain.unwrap_or(mapped_problem);
    match plain {
        Some(p) => decls.push_str(&crate::optype::op_type(&p).source),
        None => decls.push_str(&mapped_decls.source),
    }
    decls.push_str(&in_place.post);
    Ok(WholeToResult {
        problem,
        decls,
        dtype: in_place.dtype,
        plain: plain.is_some(),
    })
}

/// The plain problem over the raw input that computes `mapped` (the problem over
/// mapped values) when the map is the input itself, widened as `lift()` widens it:
/// f16/bf16 into an f32 sum, f32 and f64 as they are, integers into their 64-bit sum.
fn plain_problem(reduction: &Reduction, mapped: &Problem) -> Option<Problem> {
    use redlab_expr::types::Kind;
    let [input] = reduction.inputs.as_slice() else {
        return None;
    };
    if !matches!(reduction.map.kind, Kind::Input(0)) || mapped.op != redlab_core::Op::Sum {
        return None;
    }
    let plain = Problem::new(mapped.op, *input, Some(mapped.acc)).ok()?;
    // The same accumulator, fed the same widened values.
    (Codec::new(&plain).raw_result_bytes() == Codec::new(mapped).raw_result_bytes())
        .then_some(plain)
}

/// Whether the segment kernels can map `reduction`'s elements as they read them: one
/// input, a built-in combine, and a map that does not read the element index `i`
/// (whose value depends on where elements sit, and the kernels read them in place or
/// gathered into rows).
pub fn maps_on_device(reduction: &Reduction) -> bool {
    reduction.inputs.len() == 1 && maps_inputs_on_device(reduction)
}

/// Whether the segment kernels can map `reduction`'s elements as they read them from
/// one input or from several packed into one buffer ([`segments_packed`]): a built-in
/// combine, and a map that does not read `i`.
pub fn maps_inputs_on_device(reduction: &Reduction) -> bool {
    matches!(reduction.combine, Combine::Builtin(_)) && !uses_index(&reduction.map)
}

/// Whether the segment kernels can run `reduction` as they read its inputs (one raw, or
/// several packed: [`segments`], [`segments_packed`]): a map that does not read `i`,
/// with a built-in combine ([`maps_inputs_on_device`]) or a custom one
/// ([`custom_on_device`]).
pub fn segments_take(reduction: &Reduction) -> bool {
    maps_inputs_on_device(reduction) || custom_on_device(reduction)
}

/// Whether the segment kernels can run `reduction`'s custom combine: a map that does not
/// read `i`. They take the canonical paths only (short rows, word rows, row tiles and
/// the tree, whole rows, column tiles or `column_words`' class fold), as for float sums,
/// every lane started from the identity (`seg_first`), so each output gets the bits of
/// the host's [`redlab_expr::custom_outputs::custom_outputs`].
pub fn custom_on_device(reduction: &Reduction) -> bool {
    matches!(reduction.combine, Combine::Custom { .. }) && !uses_index(&reduction.map)
}

/// Checks that `data` is the one raw input [`segments`] kernels of `reduction` read.
pub fn check_raw_input(reduction: &Reduction, data: &ArrayRef<'_>) -> Result<(), String> {
    match reduction.inputs.as_slice() {
        [dtype] if *dtype == data.dtype() => Ok(()),
        [dtype] => Err(format!(
            "the map reads {dtype}, the input holds {}",
            data.dtype()
        )),
        inputs => Err(format!(
            "the segment kernels map one input on the device; this map reads {}",
            inputs.len()
        )),
    }
}

/// The variant mapped reductions run: the production kernel, whose `lift()` calls see the
/// length `n` the mapped `lift()` needs.
pub fn variant() -> Result<crate::Variant, String> {
    crate::registry::find("production")
        .ok_or_else(|| "the production kernel is not registered".into())
}

/// Launch parameters for `problem` (the mapped problem): the tuned ones where the tuner
/// chose the production kernel for it (`chosen`), with [`FLOAT_PARAMS`] over them for
/// float sums and products.
pub fn params<'a>(
    problem: &Problem,
    chosen: &crate::Variant,
    tuned: &[(&'a str, u32)],
) -> Vec<(&'a str, u32)> {
    let production = variant().map(|v| v.name).unwrap_or_default();
    let overrides: &[(&str, u32)] = if problem.dtype.is_float() && problem.op.is_arithmetic() {
        FLOAT_PARAMS
    } else {
        &[]
    };
    let mut out: Vec<(&'a str, u32)> = if chosen.name == production {
        tuned
            .iter()
            .copied()
            .filter(|(name, _)| !overrides.iter().any(|(p, _)| p == name))
            .collect()
    } else {
        Vec::new()
    };
    out.extend_from_slice(overrides);
    out
}

#[cfg(test)]
#[path = "mapped_tests.rs"]
mod tests;
