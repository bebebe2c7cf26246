//! What building the segment kernels costs, without a GPU: NVRTC's time and the PTX's
//! size for the stream path's segment module of a few problems and maps, whole and
//! without `column_words` (`SEG_SKIP_COLUMN_WORDS`). With `--ptx <folder>` each PTX is
//! written there too, for timing ptxas on it (`ptxas -arch=sm_90 file.ptx`), the part
//! of a first call that the driver's JIT does on a GPU machine.
//!
//! `--define NAME=VALUE` (repeatable) puts `#define NAME VALUE` before every source, for
//! trying a kernel's build-time switches.
//!
//!     cargo run --release -p redlab-cuda --example segment_build_costs -- [--ptx DIR] [--define N=V]

use std::path::PathBuf;
use std::time::Instant;

use redlab_core::{DType, Op, Problem};
use redlab_cuda::compile;
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::segments::SKIP_COLUMN_WORDS;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ptx_dir = args
        .iter()
        .position(|a| a == "--ptx")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    if let Some(dir) = &ptx_dir {
        std::fs::create_dir_all(dir).expect("creates the PTX folder");
    }
    let defines: String = args
        .windows(2)
        .filter(|w| w[0] == "--define")
        .map(|w| format!("#define {}\n", w[1].replacen('=', " ", 1)))
        .collect();
    let mut cases: Vec<(String, String)> = Vec::new();
    for (op, dtype) in [
        (Op::Sum, DType::F32),
        (Op::Max, DType::F32),
        (Op::Sum, DType::I32),
        (Op::ArgMax, DType::F32),
    ] {
        let problem = Problem::new(op, dtype, None).expect("a problem");
        let source = assembly::assemble_segments_to_result(&problem, &[], Target::Cuda)
            .expect("assembles")
            .source;
        cases.push((format!("{op}-{dtype}"), source));
    }
    for (map, combine, inputs) in [
        ("x * x", "sum", &[DType::F32][..]),
        ("abs(x)", "max", &[DType::I32]),
        ("x * y", "sum", &[DType::F32, DType::F32]),
    ] {
        let reduction = redlab_expr::Reduction::builder(map, combine)
            .build(inputs)
            .expect("builds");
        // One input: the stream path's build; several: the packed inputs' build.
        let source = if inputs.len() == 1 {
            redlab_kernels::mapped::segments_to_result(&reduction, Target::Cuda)
                .expect("assembles")
                .1
                .source
        } else {
            redlab_kernels::mapped::segments_packed(&reduction, Target::Cuda)
                .expect("assembles")
                .1
                .source
        };
        let name = format!("{combine}-{}-{}", map.replace(' ', ""), inputs[0]);
        cases.push((name, source));
    }
    println!("case\tbuild\tnvrtc_s\tptx_bytes");
    for (name, source) in &cases {
        for (build, text) in [
            ("whole", format!("{defines}{source}")),
            ("skip", format!("{defines}{SKIP_COLUMN_WORDS}{source}")),
        ] {
            let start = Instant::now();
            let ptx = compile::compile(&text, "segments.cl", "sm_90")
                .unwrap_or_else(|f| panic!("{name}:\n{}", f.log));
            let seconds = start.elapsed().as_secs_f64();
            println!("{name}\t{build}\t{seconds:.2}\t{}", ptx.len());
            if let Some(dir) = &ptx_dir {
                let file = dir.join(format!("{name}-{build}.ptx"));
                std::fs::write(&file, &ptx).expect("writes the PTX");
            }
        }
    }
}
