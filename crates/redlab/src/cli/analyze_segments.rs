//! `redlab analyze segments --shape S [--axis A] (--op OP | --stat STAT | --map EXPR)`:
//! the many-output kernels in the simulator over a seeded input of that shape. With --op,
//! the axis and segment kernels (`segments.cl`); with --map (and --combine), the same
//! kernels with the map of the one input compiled in; with --stat, the statistics kernels
//! (`statistics.cl`), whose tile states the host joins and finishes as it does a
//! device's. Every launch is analyzed and every output checked against the CPU backend.

use anyhow::{bail, Context};
use redlab_analyzer::report::{CheckJson, Report};
use redlab_analyzer::sim::LaunchConfig;
use redlab_analyzer::variant::VariantOptions;
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{ArrayRef, Problem, Value};

use super::analyze::{summarize_passes, AnalyzeArgs, Traces};

/// The report of `redlab analyze segments`.
pub(super) fn run(a: &AnalyzeArgs, config: LaunchConfig) -> anyhow::Result<(Report, Traces)> {
    if a.kernel.is_some()
        || !a.args.is_empty()
        || !a.show.is_empty()
        || a.global.is_some()
        || a.local.is_some()
    {
        bail!("segments chooses its kernels, arguments and sizes from --shape and --axis");
    }
    let shape = a
        .shape
        .as_deref()
        .context("segments needs --shape (e.g. --shape 300x70 --axis 0)")?;
    let dims = super::shaped::parse_shape(shape)?;
    let axes = a
        .axis
        .as_deref()
        .map(super::shaped::parse_axes)
        .transpose()?;
    let layout = Layout::c_order(&dims);
    let n = layout.count()?;
    let plan = AxisPlan::new(layout, axes.as_deref(), false)?;
    let selection = Selection::Axes(&plan);
    let mut data = redlab_core::generate::generate(
        a.dtype,
        n,
        redlab_core::generate::Distribution::Uniform,
        a.seed,
    )?;
    if let Some(share) = a.nan_share {
        data = with_nan(data, share, a.seed)?;
    }
    let opts = VariantOptions {
        config,
        params: Vec::new(),
        defines: a.define.clone(),
        compute_units: a.compute_units,
        seed: a.seed,
    };
    let outcome = match (a.stat.as_deref(), a.map.as_deref()) {
        (Some(_), Some(_)) => bail!("give --stat or --map, not both"),
        (Some(name), None) => statistic(a, name, data.view(), selection, &opts)?,
        (None, Some(map)) => mapped(a, map, data.view(), selection, &opts)?,
        (None, None) => reduction(a, data.view(), selection, &opts)?,
    };
    let wrong = outcome
        .values
        .iter()
        .zip(&outcome.expected)
        .position(|(got, want)| !got.same_as(want));
    let (total, passes, traces) =
        summarize_passes(&outcome.passes, "nothing was launched (no elements)")?;
    let shown =
        |values: &[Value], k: usize| values.get(k).map_or("-".to_string(), |v| v.to_string());
    let k = wrong.unwrap_or(0);
    let report = Report {
        source: format!(
            "{} ({}), {}, shape {dims:?}",
            outcome.kernels, outcome.strategy, outcome.what
        ),
        total,
        passes,
        check: Some(CheckJson {
            problem: outcome.what.clone(),
            n,
            value: format!(
                "output {k} of {}: {}",
                outcome.values.len(),
                shown(&outcome.values, k)
            ),
            expected: shown(&outcome.expected, k),
            ok: wrong.is_none(),
            message: wrong.map(|k| format!("output {k} differs from the reference")),
        }),
        buffers: Default::default(),
    };
    Ok((report, traces))
}

/// One analyzed run: the outputs beside the reference's, and the launches.
struct Outcome {
    kernels: &'static str,
    what: String,
    strategy: String,
    values: Vec<Value>,
    expected: Vec<Value>,
    passes: Vec<redlab_analyzer::variant::Pass>,
}

/// `--op` through the axis and segment kernels.
fn reduction(
    a: &AnalyzeArgs,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    opts: &VariantOptions,
) -> anyhow::Result<Outcome> {
    let problem = Problem::new(a.op, a.dtype, a.acc)?;
    let run = redlab_analyzer::segments::run(&problem, data, selection, opts)?.context(
        "the reduced axes do not step evenly through the buffer; the devices gather such outputs into rows first (reduce rows of that shape instead)",
    )?;
    Ok(Outcome {
        kernels: "segments",
        what: problem.to_string(),
        strategy: run.strategy,
        values: run.values,
        expected: redlab_core::segmented::reference(&problem, data, selection)?,
        passes: run.passes,
    })
}

/// `--map` (inputs x, y, … of --dtype, a built-in `--combine`) through the segment
/// kernels with the map compiled in, checked against the CPU backend's mapped outputs.
fn mapped(
    a: &AnalyzeArgs,
    map: &str,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    opts: &VariantOptions,
) -> anyhow::Result<Outcome> {
    if a.post.is_some() {
        bail!("segments checks the kernels' outputs; --post runs on the host after them (leave it out here)");
    }
    let count = redlab_expr::parser::inputs_named(map)?;
    let reduction = a.reduction(map, None)?;
    // The first input is the seeded array every target reads; the others take the
    // seeds after it.
    let others = (1..count as u64)
        .map(|k| {
            redlab_core::generate::generate(
                a.dtype,
                data.len(),
                redlab_core::generate::Distribution::Uniform,
                a.seed + k,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let inputs: Vec<ArrayRef<'_>> = std::iter::once(data)
        .chain(others.iter().map(|o| o.view()))
        .collect();
    let run = redlab_analyzer::segments::run_mapped(&reduction, &inputs, selection, opts)?
        .context(
            "the reduced axes do not step evenly through the buffer; the devices gather such outputs into rows first (reduce rows of that shape instead)",
        )?;
    let cpu = redlab::Device::open("cpu", None)?;
    Ok(Outcome {
        kernels: "segments",
        what: reduction.describe(),
        strategy: run.strategy,
        values: run.values,
        expected: cpu.reduce_mapped_outputs(&reduction, &inputs, selection)?,
        passes: run.passes,
    })
}

/// `--stat` through the statistics kernels, finished on the host like a device's tiles.
fn statistic(
    a: &AnalyzeArgs,
    name: &str,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    opts: &VariantOptions,
) -> anyhow::Result<Outcome> {
    let stat = redlab::Statistic::parse(name, a.ddof).with_context(|| {
        format!("--stat {name}: not a statistic (var, std, logsumexp, nanmin, nanmax, nanmean)")
    })?;
    let kind = redlab::state_kind(stat).with_context(|| format!("{name} has no device kernel"))?;
    let run = redlab_analyzer::statistics::run(kind, data, selection, opts)?;
    let values = run
        .plan
        .outputs
        .iter()
        .map(|tiles| redlab::finish_tiles(stat, data.dtype(), &run.states[tiles.clone()]))
        .collect::<Result<Vec<Value>, _>>()?;
    let cpu = redlab_cpu::CpuBackend::new(None)?;
    Ok(Outcome {
        kernels: "statistics",
        what: format!("{} of {}", stat.name(), data.dtype()),
        strategy: run.strategy,
        values,
        expected: cpu.statistic(stat, data, selection)?,
        passes: run.passes,
    })
}

/// `data` with a seeded `share` of its elements set to NaN: element k where a hash of
/// (seed, k) falls below the share, so the same flags come back for the same seed.
fn with_nan(
    data: redlab_core::HostArray,
    share: f64,
    seed: u64,
) -> anyhow::Result<redlab_core::HostArray> {
    use redlab_core::half::{bf16, f16};
    use redlab_core::{DType, HostArray};
    if !(0.0..=1.0).contains(&share) {
        bail!("--nan-share must lie between 0 and 1, not {share}");
    }
    let dropped = |k: usize| {
        let mut h = (seed ^ 0x9e37_79b9_7f4a_7c15).wrapping_add(k as u64);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (((h ^ (h >> 31)) >> 11) as f64 / (1u64 << 53) as f64) < share
    };
    fn set<T: redlab_core::Element + Copy>(
        data: &HostArray,
        nan: T,
        dropped: impl Fn(usize) -> bool,
    ) -> anyhow::Result<HostArray> {
        let mut values = data.view().typed::<T>()?.to_vec();
        for (k, v) in values.iter_mut().enumerate() {
            if dropped(k) {
                *v = nan;
            }
        }
        Ok(HostArray::from_vec(values))
    }
    match data.dtype() {
        DType::F32 => set(&data, f32::NAN, dropped),
        DType::F64 => set(&data, f64::NAN, dropped),
        DType::F16 => set(&data, f16::NAN, dropped),
        DType::BF16 => set(&data, bf16::NAN, dropped),
        other => bail!("--nan-share needs a float --dtype, not {other}"),
    }
}
