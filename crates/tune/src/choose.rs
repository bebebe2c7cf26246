//! The `auto` strategy: the variant and parameters to run for a problem of `n` elements
//! on a device, and the reasons, in the order the lookup went:
//!
//! 1. the user's database for the device family (written by `redlab tune`);
//! 2. the shipped database for the family;
//! 3. a shipped database of the same backend and architecture;
//! 4. a shipped database of the same backend and vendor;
//! 5. the heuristic: the production kernel at its defaults.
//!
//! An entry is used only if its variant may serve the problem ([`eligible`]) and runs
//! on this device; otherwise the lookup goes on and says why.

use std::path::PathBuf;

use redlab_core::Problem;
use redlab_kernels::{registry, Capabilities, Variant};

use crate::db::{self, Database, Entry};
use crate::device::DeviceKey;
use crate::space::{describe, eligible, Config};

/// A test of a database's device against the one asked about.
type KeyTest<'a> = dyn Fn(&DeviceKey) -> bool + 'a;

/// Where a choice came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The user's database (a file).
    User(PathBuf),
    /// A shipped database, matched at a level (`device`, `architecture`, `vendor`).
    Shipped(&'static str, &'static str),
    /// No database entry: the built-in rule.
    Heuristic,
}

/// What `auto` chose.
#[derive(Debug, Clone)]
pub struct Choice {
    /// The variant.
    pub variant: Variant,
    /// Its parameters (the rest at their defaults).
    pub params: Config,
    /// Where it came from.
    pub source: Source,
    /// How the lookup went, one line per step.
    pub reasons: Vec<String>,
}

impl Choice {
    /// Parameters as the pass driver takes them.
    pub fn param_pairs(&self) -> Vec<(&str, u32)> {
        self.params.iter().map(|(k, v)| (k.as_str(), *v)).collect()
    }

    /// The explanation `--explain` prints.
    pub fn explain(&self) -> String {
        let mut s = format!("auto: {} ({})\n", self.variant.name, describe(&self.params));
        for r in &self.reasons {
            s.push_str(&format!("  - {r}\n"));
        }
        s
    }
}

/// `auto` for one device: its lookup keys, worked out once, and the choices already
/// made, so that a library reduction in a loop does not redo the lookup (or reread the
/// user's database) every call. A database written later is seen by the next process.
pub struct Auto {
    key: DeviceKey,
    made: std::sync::Mutex<
        std::collections::HashMap<
            (
                redlab_core::Op,
                redlab_core::DType,
                redlab_core::DType,
                usize,
            ),
            Choice,
        >,
    >,
}

impl Auto {
    /// `auto` for the device `info` describes.
    pub fn new(info: &redlab_core::DeviceInfo) -> Auto {
        Auto {
            key: DeviceKey::of(info),
            made: Default::default(),
        }
    }

    /// The choice for `problem` over `n` elements on a device with `caps`.
    pub fn choose(&self, caps: &Capabilities, problem: &Problem, n: usize) -> Choice {
        let k = (problem.op, problem.dtype, problem.acc, n);
        if let Some(c) = self.made.lock().ok().and_then(|m| m.get(&k).cloned()) {
            return c;
        }
        let c = choose(&self.key, caps, problem, n);
        if let Ok(mut m) = self.made.lock() {
            m.insert(k, c.clone());
        }
        c
    }
}

/// Chooses for `problem` over `n` elements on the device `key` with `caps`, reading the
/// user's database from its usual place.
pub fn choose(key: &DeviceKey, caps: &Capabilities, problem: &Problem, n: usize) -> Choice {
    choose_with(key, caps, problem, n, db::user_path(key))
}

/// [`choose`] with the user's database at `user_db` (`None`: none).
pub fn choose_with(
    key: &DeviceKey,
    caps: &Capabilities,
    problem: &Problem,
    n: usize,
    user_db: Option<PathBuf>,
) -> Choice {
    let mut reasons = Vec::new();
    let (op, dtype) = (
        problem.op.name().to_string(),
        problem.dtype.name().to_string(),
    );
    let usable = |e: &Entry, reasons: &mut Vec<String>| -> Option<Variant> {
        let Some(v) = registry::find(&e.variant) else {
            reasons.push(format!("its variant {} is not in this build", e.variant));
            return None;
        };
        if !eligible(&v, problem) {
            reasons.push(format!(
                "{} does not follow the canonical order, which {problem} needs",
                v.name
            ));
            return None;
        }
        if let Err(skip) = v.check(problem, caps) {
            reasons.push(format!("{} cannot run here: {}", v.name, skip.0));
            return None;
        }
        Some(v)
    };
    let describe_entry =
        |e: &Entry| {
            let gain = e
                .default_gbps
                .filter(|d| *d > 0.0)
                .map(|d| format!(", {:.2}× the production defaults' {d:.0} GB/s", e.gbps / d))
                .unwrap_or_default();
            format!(
            "measured at n = {} ({:.0} GB/s{gain}; {} configurations timed), used for n in {}..={}",
            e.n,
            e.gbps,
            e.tried,
            e.n_min,
            if e.n_max == usize::MAX { "∞".to_string() } else { e.n_max.to_string() }
        )
        };
    // 1. The user's own database.
    if let Some(path) = user_db {
        if path.exists() {
            match Database::load(&path) {
                Ok(d) => match d.entry(&op, &dtype, n) {
                    Some(e) => {
                        if let Some(v) = usable(e, &mut reasons) {
                            reasons.push(format!(
                                "from your tuning database {}: {}",
                                path.display(),
                                describe_entry(e)
                            ));
                            return Choice {
                                variant: v,
                                params: e.params.clone(),
                                source: Source::User(path),
                                reasons,
                            };
                        }
                    }
                    None => reasons.push(format!(
                        "your database {} has no entry for {op} {dtype} at n = {n}",
                        path.display()
                    )),
                },
                Err(e) => reasons.push(format!("your database was not used: {e}")),
            }
        }
    }
    // 2–4. Shipped databases, from the closest match outwards.
    let shipped = db::shipped();
    let same_family = |d: &DeviceKey| d.backend == key.backend && d.family == key.family;
    let same_architecture =
        |d: &DeviceKey| d.backend == key.backend && d.architecture == key.architecture;
    let same_vendor = |d: &DeviceKey| d.backend == key.backend && d.vendor == key.vendor;
    let levels: [(&'static str, &KeyTest); 3] = [
        ("device", &same_family),
        ("architecture", &same_architecture),
        ("vendor", &same_vendor),
    ];
    // A database matching at several levels is consulted once.
    let mut consulted: Vec<&str> = Vec::new();
    for (level, matches) in &levels {
        let mut any = false;
        for (path, d) in shipped.iter().filter(|(_, d)| matches(&d.device)) {
            any = true;
            if consulted.contains(path) {
                continue;
            }
            consulted.push(path);
            match d.entry(&op, &dtype, n) {
                Some(e) => {
                    if let Some(v) = usable(e, &mut reasons) {
                        let how = if *level == "device" {
                            format!("tuned on this device family ({})", d.device.name)
                        } else {
                            format!(
                                "no database for {} {}; this one is for {} of the same {level}",
                                key.backend, key.family, d.device.name
                            )
                        };
                        reasons.push(format!("from {path}, {how}: {}", describe_entry(e)));
                        return Choice {
                            variant: v,
                            params: e.params.clone(),
                            source: Source::Shipped(path, level),
                            reasons,
                        };
                    }
                }
                None => reasons.push(format!("{path} has no entry for {op} {dtype} at n = {n}")),
            }
        }
        if !any && *level == "device" {
            reasons.push(format!(
                "no shipped database for {} {} ({})",
                key.backend, key.family, key.name
            ));
        }
    }
    // 5. The built-in rule.
    let production = registry::find("production").expect("the production variant is registered");
    reasons.push(format!(
        "no usable entry: the production kernel ({}) at its defaults — one launch at every size, canonical order",
        production.name
    ));
    Choice {
        variant: production,
        params: Config::new(),
        source: Source::Heuristic,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlab_core::{DType, Op};

    fn key(family: &str) -> DeviceKey {
        DeviceKey {
            backend: "opencl".into(),
            family: family.into(),
            architecture: "nowhere".into(),
            vendor: "nobody".into(),
            name: "test device".into(),
        }
    }

    fn caps() -> Capabilities {
        Capabilities {
            features: Vec::new(),
            compute_units: 4,
            max_work_group: 1024,
            local_memory: 64 * 1024,
            cache_bytes: 0,
        }
    }

    #[test]
    fn shipped_entries_are_found_by_family_then_by_architecture() {
        let shipped = db::shipped();
        let (_, pocl) = shipped
            .iter()
            .find(|(p, _)| p.ends_with("pocl-pthread.json"))
            .expect("a PoCL database ships");
        let problem = Problem::new(Op::Max, DType::I32, None).expect("valid");
        let entry = pocl
            .entry("max", "i32", 1 << 16)
            .expect("tuned for max i32");
        let exact = choose_with(&pocl.device, &caps(), &problem, 1 << 16, None);
        assert_eq!(
            exact.source,
            Source::Shipped("tuning/opencl/pocl-pthread.json", "device")
        );
        assert_eq!(exact.variant.name, entry.variant);
        assert_eq!(exact.params, entry.params);
        // Another device of the same architecture borrows a database of that architecture.
        let mut cousin = pocl.device.clone();
        cousin.family = "pocl-unknown".into();
        let c = choose_with(&cousin, &caps(), &problem, 1 << 16, None);
        assert!(
            matches!(c.source, Source::Shipped(_, "architecture")),
            "{:?}",
            c.source
        );
        assert!(
            c.explain().contains("of the same architecture"),
            "{}",
            c.explain()
        );
    }

    #[test]
    fn a_user_database_comes_first() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("mine.json");
        let shipped = db::shipped();
        let (_, pocl) = shipped
            .iter()
            .find(|(p, _)| p.ends_with("pocl-pthread.json"))
            .expect("ships");
        let mut mine = pocl.clone();
        for e in &mut mine.entries {
            e.variant = "two-stage".into();
            e.params.clear();
        }
        mine.save(&path).expect("saves");
        let problem = Problem::new(Op::Sum, DType::I64, None).expect("valid");
        let f32_sum = Problem::new(Op::Sum, DType::F32, None).expect("valid");
        let c = choose_with(&pocl.device, &caps(), &problem, 1 << 16, Some(path.clone()));
        // No i64 entry there: on to the shipped database, then the rule.
        assert_ne!(c.source, Source::User(path.clone()));
        let c = choose_with(&pocl.device, &caps(), &f32_sum, 1 << 16, Some(path.clone()));
        // two-stage may not serve a float sum (it is not in the canonical order).
        assert_ne!(c.variant.name, "two-stage", "{}", c.explain());
        assert!(
            c.explain().contains("does not follow the canonical order"),
            "{}",
            c.explain()
        );
        let int_max = Problem::new(Op::Max, DType::I32, None).expect("valid");
        let c = choose_with(&pocl.device, &caps(), &int_max, 1 << 16, Some(path.clone()));
        assert_eq!(
            (c.variant.name, c.source),
            ("two-stage", Source::User(path))
        );
    }

    #[test]
    fn without_any_database_auto_runs_the_production_kernel_and_says_why() {
        let problem = Problem::new(Op::Sum, DType::F32, None).expect("valid");
        let c = choose_with(&key("unknown-family"), &caps(), &problem, 1 << 20, None);
        assert_eq!(c.variant.name, "canonical-one-launch");
        assert_eq!(c.source, Source::Heuristic);
        let text = c.explain();
        assert!(
            text.contains("no shipped database for opencl unknown-family"),
            "{text}"
        );
        assert!(text.contains("production kernel"), "{text}");
    }
}
