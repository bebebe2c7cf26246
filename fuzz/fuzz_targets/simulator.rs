//! The SIMT simulator under a step, time and memory limit: every kernel of any text that
//! compiles is launched over two groups of 32 with small buffers for its pointers and 3
//! for its scalars; it finishes or reports an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::sim::{self, Arg, LaunchConfig};
use redlab_analyzer::types::{Space, Type};
use redlab_analyzer::value::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(compiled) = redlab_analyzer::compile("fuzz.cl", text, &[], &|_, _| Ok(None)) else {
        return;
    };
    let mut cfg = LaunchConfig::linear(64, 32);
    cfg.max_steps = 200_000;
    cfg.max_memory = 64 << 20;
    cfg.deadline = Some(std::time::Instant::now() + std::time::Duration::from_secs(2));
    for kernel in compiled.program.kernels() {
        let mut mem = Memory::default();
        let args: Vec<Arg> = kernel
            .params
            .iter()
            .map(|p| match &p.ty {
                Type::Pointer(_, Some(Space::Local)) => Arg::Local(256),
                Type::Pointer(..) => {
                    mem.global.push(Buffer::new(&p.name, vec![1u8; 1024]));
                    Arg::Global((mem.global.len() - 1) as u32)
                }
                _ => Arg::Scalar(Value::int(redlab_analyzer::types::Scalar::Int, 3)),
            })
            .collect();
        let _ = sim::launch(
            &compiled.program,
            &compiled.files,
            &kernel.name,
            &args,
            &mut mem,
            &cfg,
        );
    }
});
