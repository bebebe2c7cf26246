//! The configurations worth timing: which variants `auto` may choose for a problem, and
//! each variant's parameter space — the product of its parameters' values, restricted
//! to the parameters that change the kernel for this problem and to what the device
//! allows (work-group size, local memory).

use std::collections::BTreeMap;

use redlab_core::Problem;
use redlab_kernels::codec::Codec;
use redlab_kernels::{Capabilities, Variant};

/// A variant's parameter values (those not named keep their defaults).
pub type Config = BTreeMap<String, u32>;

/// Whether `auto` may choose `variant` for `problem`: float sums and products must keep
/// the canonical order (results are bitwise the same on every device), so only
/// canonical variants qualify for them; any verified variant does for the rest, whose
/// result does not depend on the order.
pub fn eligible(variant: &Variant, problem: &Problem) -> bool {
    let ordered = problem.dtype.is_float() && problem.op.is_arithmetic();
    !ordered || variant.canonical
}

/// Every configuration of `variant` for `problem` on a device with `caps`, the default
/// first.
pub fn configs(variant: &Variant, problem: &Problem, caps: &Capabilities) -> Vec<Config> {
    let acc_bytes = Codec::new(problem).acc_bytes;
    let mut all: Vec<Config> = vec![Config::new()];
    for p in variant
        .params
        .iter()
        .filter(|p| p.applies.to(problem) && p.applies.available(caps))
    {
        let mut next = Vec::new();
        for c in &all {
            for &v in p.values {
                if p.name == "WG"
                    && (v as usize > caps.max_work_group
                        || (v as u64) * acc_bytes as u64 > caps.local_memory)
                {
                    continue;
                }
                let mut c = c.clone();
                if v != p.default {
                    c.insert(p.name.to_string(), v);
                }
                next.push(c);
            }
        }
        if !next.is_empty() {
            all = next;
        }
    }
    all.sort_by_key(|c| c.len());
    all.dedup();
    all
}

/// How many of `variant`'s parameters take different values in `a` and `b` (a name a
/// configuration leaves out has its default).
pub fn distance(variant: &Variant, a: &Config, b: &Config) -> usize {
    variant
        .params
        .iter()
        .filter(|p| {
            let value = |c: &Config| c.get(p.name).copied().unwrap_or(p.default);
            value(a) != value(b)
        })
        .count()
}

/// Orders `space` so that the configurations one parameter away from `incumbent` come
/// first, keeping their order and then the others' (a local search around the entry a
/// re-tune starts from, before the random samples); `incumbent` itself is dropped, as it
/// is timed on its own.
pub fn neighbours_first(variant: &Variant, incumbent: &Config, space: &mut Vec<Config>) {
    space.retain(|c| distance(variant, c, incumbent) > 0);
    space.sort_by_key(|c| distance(variant, c, incumbent) > 1);
}

/// `NAME=VALUE,…` for messages (`defaults` when empty).
pub fn describe(config: &Config) -> String {
    if config.is_empty() {
        return "defaults".into();
    }
    config
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlab_core::{DType, Op};
    use redlab_kernels::registry;

    fn caps() -> Capabilities {
        Capabilities {
            features: Vec::new(),
            compute_units: 4,
            max_work_group: 256,
            local_memory: 32 * 1024,
            cache_bytes: 0,
        }
    }

    #[test]
    fn spaces_keep_only_parameters_that_matter_and_fit() {
        let production = registry::find("production").expect("registered");
        let float_sum = Problem::new(Op::Sum, DType::F32, None).expect("valid");
        let int_max = Problem::new(Op::Max, DType::I32, None).expect("valid");
        let f = configs(&production, &float_sum, &caps());
        let i = configs(&production, &int_max, &caps());
        assert!(f[0].is_empty() && i[0].is_empty(), "defaults first");
        assert!(
            f.iter().all(|c| !c.contains_key("UNROLL")),
            "UNROLL is for the order-free path"
        );
        assert!(i
            .iter()
            .all(|c| !c.contains_key("VEC_LOADS") && !c.contains_key("PREFETCH")));
        assert_eq!(
            f.len(),
            5 * 2 * 3,
            "groups per CU × prefetch × vector loads"
        );
        assert_eq!(i.len(), 5 * 4, "groups per CU × unroll");
        // Where warps shuffle, f32/f64 sums also try the warp tiles' thresholds, rows,
        // loading ahead and bulk-copy rings.
        let mut warps = caps();
        warps.features.push(redlab_kernels::Feature::WarpShuffle);
        // Every problem there tries cluster finishes (four values).
        assert_eq!(
            configs(&production, &float_sum, &warps).len(),
            5 * 2 * 3 * 4 * 3 * 3 * 2 * 4 * 4
        );
        let half_sum = Problem::new(Op::Sum, DType::F16, None).expect("valid");
        // Halves try their own warp-tile bound (three values) besides.
        assert_eq!(
            configs(&production, &half_sum, &warps).len(),
            5 * 2 * 3 * 4 * 3
        );
        // Order-free 4-byte problems add word loads, the atomic finish and cluster
        // finishes.
        assert_eq!(
            configs(&production, &int_max, &warps).len(),
            5 * 4 * 2 * 2 * 4,
            "groups per CU × unroll × words × atomic finish × cluster"
        );
        let reduce2 = registry::find("reduce2").expect("registered");
        let wgs: Vec<u32> = configs(&reduce2, &int_max, &caps())
            .iter()
            .map(|c| c.get("WG").copied().unwrap_or(256))
            .collect();
        assert!(wgs.iter().all(|w| *w <= 256), "the device's limit: {wgs:?}");
    }

    #[test]
    fn a_retune_times_the_incumbents_neighbours_first() {
        let production = registry::find("production").expect("registered");
        let float_sum = Problem::new(Op::Sum, DType::F64, None).expect("valid");
        let mut warps = caps();
        warps.features.push(redlab_kernels::Feature::WarpShuffle);
        let incumbent: Config = [
            ("GROUPS_PER_CU".to_string(), 4),
            ("VEC_LOADS".to_string(), 2),
        ]
        .into_iter()
        .collect();
        let mut space = configs(&production, &float_sum, &warps);
        let all = space.len();
        space.reverse();
        neighbours_first(&production, &incumbent, &mut space);
        assert_eq!(space.len(), all - 1, "only the incumbent is dropped");
        // One step along each parameter: (values − 1) per parameter that applies.
        let steps: usize = production
            .params
            .iter()
            .filter(|p| p.applies.to(&float_sum) && p.applies.available(&warps))
            .map(|p| p.values.len() - 1)
            .sum();
        assert!(steps > 10);
        assert!(space[..steps]
            .iter()
            .all(|c| distance(&production, c, &incumbent) == 1));
        assert!(space[steps..]
            .iter()
            .all(|c| distance(&production, c, &incumbent) > 1));
        let cluster: Config = [
            ("GROUPS_PER_CU".to_string(), 4),
            ("VEC_LOADS".to_string(), 2),
            ("CLUSTER_FINISH".to_string(), 2),
        ]
        .into_iter()
        .collect();
        assert!(space[..steps].contains(&cluster));
    }

    #[test]
    fn float_sums_only_take_canonical_variants() {
        let float_sum = Problem::new(Op::Sum, DType::F64, None).expect("valid");
        let int_sum = Problem::new(Op::Sum, DType::I64, None).expect("valid");
        let two_stage = registry::find("two-stage").expect("registered");
        assert!(!eligible(&two_stage, &float_sum));
        assert!(eligible(&two_stage, &int_sum));
        assert!(eligible(
            &registry::find("production").expect("registered"),
            &float_sum
        ));
    }
}
