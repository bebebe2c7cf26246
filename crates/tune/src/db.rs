//! The tuning database: for each problem (operator, type) and range of sizes, the
//! fastest verified variant and parameters found on one device family, with what it was
//! measured at, what the default configuration measured, and the configurations that
//! failed. Databases are JSON files `tuning/<backend>/<family>.json`; the ones shipped
//! with redlab are built into the binary, and `redlab tune` writes the user's own to
//! their cache folder, where they take precedence.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::device::DeviceKey;

/// The format version this code reads and writes.
pub const FORMAT: u32 = 1;

/// The best configuration for one problem over a range of sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Operator (`sum`).
    pub op: String,
    /// Element type (`f32`).
    pub dtype: String,
    /// The size it was measured at.
    pub n: usize,
    /// Smallest size it is used for.
    pub n_min: usize,
    /// Largest size it is used for.
    pub n_max: usize,
    /// The variant.
    pub variant: String,
    /// Parameter values (others at their defaults).
    pub params: BTreeMap<String, u32>,
    /// Its bandwidth, GB/s (median).
    pub gbps: f64,
    /// The production kernel's bandwidth at its defaults, same run, GB/s.
    pub default_gbps: Option<f64>,
    /// Configurations timed for this problem and size.
    pub tried: usize,
}

/// A configuration that failed to build, run or verify.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invalid {
    /// Operator.
    pub op: String,
    /// Element type.
    pub dtype: String,
    /// Size.
    pub n: usize,
    /// Variant.
    pub variant: String,
    /// Parameters.
    pub params: BTreeMap<String, u32>,
    /// What went wrong.
    pub reason: String,
}

/// One device family's database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Database {
    /// [`FORMAT`].
    pub format: u32,
    /// The device it was measured on.
    pub device: DeviceKey,
    /// The command that made it.
    pub command: String,
    /// Seconds the tuner was given.
    pub budget_s: f64,
    /// Best configurations.
    pub entries: Vec<Entry>,
    /// Failed configurations.
    pub invalid: Vec<Invalid>,
}

/// The databases shipped with redlab (`tuning/`), as (path, text).
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "tuning/cuda/nvidia-h100.json",
        include_str!("../../../tuning/cuda/nvidia-h100.json"),
    ),
    (
        "tuning/cuda/nvidia-h200.json",
        include_str!("../../../tuning/cuda/nvidia-h200.json"),
    ),
    (
        "tuning/opencl/nvidia-h100.json",
        include_str!("../../../tuning/opencl/nvidia-h100.json"),
    ),
    (
        "tuning/opencl/nvidia-h200.json",
        include_str!("../../../tuning/opencl/nvidia-h200.json"),
    ),
    (
        "tuning/opencl/pocl-cpu.json",
        include_str!("../../../tuning/opencl/pocl-cpu.json"),
    ),
    (
        "tuning/opencl/pocl-pthread.json",
        include_str!("../../../tuning/opencl/pocl-pthread.json"),
    ),
];

impl Database {
    /// Parses a database; `what` names it in errors.
    pub fn parse(text: &str, what: &str) -> Result<Database, String> {
        let db: Database = serde_json::from_str(text)
            .map_err(|e| format!("{what}: not a tuning database: {e}"))?;
        if db.format != FORMAT {
            return Err(format!(
                "{what}: format {} (this redlab reads {FORMAT})",
                db.format
            ));
        }
        Ok(db)
    }

    /// Reads a database file.
    pub fn load(path: &Path) -> Result<Database, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Database::parse(&text, &path.display().to_string())
    }

    /// Writes it (creating folders), through a temporary file so a reader never sees half.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// This database with `newer`'s cells laid over it: an entry of `newer` replaces the
    /// one measured at the same operator, type and size, every other entry stays, and
    /// each problem's size ranges are drawn again over the union of its sizes. The
    /// command records both. Both must describe the same device family.
    pub fn merged(&self, newer: &Database) -> Result<Database, String> {
        if self.device.backend != newer.device.backend || self.device.family != newer.device.family
        {
            return Err(format!(
                "cannot merge a {}/{} database into a {}/{} one",
                newer.device.backend, newer.device.family, self.device.backend, self.device.family
            ));
        }
        let cell = |e: &Entry| (e.op.clone(), e.dtype.clone(), e.n);
        let mut cells: BTreeMap<(String, String, usize), Entry> =
            self.entries.iter().map(|e| (cell(e), e.clone())).collect();
        for e in &newer.entries {
            cells.insert(cell(e), e.clone());
        }
        // BTreeMap order: by problem, then ascending size, which `ranges` needs.
        let mut problems: BTreeMap<(String, String), Vec<Entry>> = BTreeMap::new();
        for ((op, dtype, _), e) in cells {
            problems.entry((op, dtype)).or_default().push(e);
        }
        let mut entries = Vec::new();
        for (_, mut list) in problems {
            let sizes: Vec<usize> = list.iter().map(|e| e.n).collect();
            for (e, (lo, hi)) in list.iter_mut().zip(ranges(&sizes)) {
                e.n_min = lo;
                e.n_max = hi;
            }
            entries.extend(list);
        }
        let mut invalid = self.invalid.clone();
        invalid.extend(newer.invalid.iter().cloned());
        Ok(Database {
            format: FORMAT,
            device: newer.device.clone(),
            command: format!("{}; then merged: {}", self.command, newer.command),
            budget_s: self.budget_s + newer.budget_s,
            entries,
            invalid,
        })
    }

    /// The entry for `op`/`dtype` whose range holds `n` (the nearest measured size when
    /// ranges overlap).
    pub fn entry(&self, op: &str, dtype: &str, n: usize) -> Option<&Entry> {
        let distance = |e: &Entry| ((n.max(1) as f64).ln() - (e.n.max(1) as f64).ln()).abs();
        self.entries
            .iter()
            .filter(|e| e.op == op && e.dtype == dtype && e.n_min <= n && n <= e.n_max)
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
    }
}

/// redlab's folder in the user's cache directory (`<cache>/redlab`): tuning databases
/// and placement measurements live below it.
pub fn cache_root() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("redlab"))
}

/// Where the user's databases live: `$REDLAB_TUNING_DIR`, else `<cache>/redlab/tuning`.
pub fn user_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("REDLAB_TUNING_DIR") {
        return Some(PathBuf::from(dir));
    }
    cache_root().map(|d| d.join("tuning"))
}

/// The user's database file for a device.
pub fn user_path(key: &DeviceKey) -> Option<PathBuf> {
    user_dir().map(|d| d.join(&key.backend).join(format!("{}.json", key.family)))
}

/// The shipped databases that parse (a broken one is skipped, not fatal), parsed once
/// per process: `auto` consults them on every reduction.
pub fn shipped() -> &'static [(&'static str, Database)] {
    static PARSED: std::sync::OnceLock<Vec<(&'static str, Database)>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| {
        SHIPPED
            .iter()
            .filter_map(|(path, text)| Database::parse(text, path).ok().map(|db| (*path, db)))
            .collect()
    })
}

/// Size ranges for entries measured at `sizes` (ascending): each size covers up to the
/// geometric middle between it and its neighbours; the ends are open.
pub fn ranges(sizes: &[usize]) -> Vec<(usize, usize)> {
    (0..sizes.len())
        .map(|k| {
            let lo = if k == 0 {
                0
            } else {
                ((sizes[k - 1] as f64 * sizes[k] as f64).sqrt()) as usize + 1
            };
            let hi = if k + 1 == sizes.len() {
                usize::MAX
            } else {
                ((sizes[k] as f64 * sizes[k + 1] as f64).sqrt()) as usize
            };
            (lo, hi)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_databases_parse_and_name_their_device() {
        for (path, text) in SHIPPED {
            let db = Database::parse(text, path).expect("parses");
            assert!(
                path.ends_with(&format!("{}/{}.json", db.device.backend, db.device.family)),
                "{path}"
            );
            assert!(!db.command.is_empty(), "{path} says how it was made");
        }
    }

    #[test]
    fn ranges_meet_in_the_geometric_middle() {
        let r = ranges(&[1 << 10, 1 << 20]);
        assert_eq!(r[0], (0, 1 << 15));
        assert_eq!(r[1], ((1 << 15) + 1, usize::MAX));
    }

    fn entry_at(op: &str, n: usize, variant: &str) -> Entry {
        Entry {
            op: op.into(),
            dtype: "f32".into(),
            n,
            n_min: 0,
            n_max: usize::MAX,
            variant: variant.into(),
            params: BTreeMap::new(),
            gbps: 1.0,
            default_gbps: None,
            tried: 1,
        }
    }

    fn database(family: &str, command: &str, entries: Vec<Entry>) -> Database {
        Database {
            format: FORMAT,
            device: DeviceKey {
                backend: "cuda".into(),
                family: family.into(),
                architecture: "sm_90".into(),
                vendor: "nvidia".into(),
                name: family.into(),
            },
            command: command.into(),
            budget_s: 1.0,
            entries,
            invalid: Vec::new(),
        }
    }

    #[test]
    fn merging_replaces_measured_cells_keeps_the_rest_and_redraws_ranges() {
        let old = database(
            "x",
            "tune a",
            vec![
                entry_at("sum", 1 << 10, "old"),
                entry_at("sum", 1 << 20, "old"),
                entry_at("max", 1 << 20, "old"),
            ],
        );
        let new = database(
            "x",
            "tune b",
            vec![
                entry_at("sum", 1 << 15, "new"),
                entry_at("sum", 1 << 20, "new"),
            ],
        );
        let merged = old.merged(&new).expect("same family");
        let sums: Vec<(usize, &str, usize, usize)> = merged
            .entries
            .iter()
            .filter(|e| e.op == "sum")
            .map(|e| (e.n, e.variant.as_str(), e.n_min, e.n_max))
            .collect();
        let middle = |a: f64, b: f64| (a * b).sqrt() as usize;
        assert_eq!(
            sums,
            vec![
                (1 << 10, "old", 0, middle(1024.0, 32768.0)),
                (
                    1 << 15,
                    "new",
                    middle(1024.0, 32768.0) + 1,
                    middle(32768.0, 1048576.0)
                ),
                (1 << 20, "new", middle(32768.0, 1048576.0) + 1, usize::MAX),
            ]
        );
        let max = merged.entry("max", "f32", 5).expect("kept");
        assert_eq!(
            (max.variant.as_str(), max.n_min, max.n_max),
            ("old", 0, usize::MAX)
        );
        assert!(merged.command.contains("tune a") && merged.command.contains("tune b"));
        let other = database("y", "tune c", Vec::new());
        assert!(old
            .merged(&other)
            .expect_err("other family")
            .contains("cannot merge"));
    }

    #[test]
    fn save_and_load_round_trip_and_bad_files_are_errors() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("cuda/x.json");
        let db = Database {
            format: FORMAT,
            device: DeviceKey {
                backend: "cuda".into(),
                family: "x".into(),
                architecture: "sm_90".into(),
                vendor: "nvidia".into(),
                name: "X".into(),
            },
            command: "redlab tune".into(),
            budget_s: 1.0,
            entries: vec![Entry {
                op: "sum".into(),
                dtype: "f32".into(),
                n: 1024,
                n_min: 0,
                n_max: usize::MAX,
                variant: "production".into(),
                params: BTreeMap::from([("UNROLL".into(), 8)]),
                gbps: 1.0,
                default_gbps: Some(0.5),
                tried: 3,
            }],
            invalid: Vec::new(),
        };
        db.save(&path).expect("saves");
        assert_eq!(Database::load(&path).expect("loads"), db);
        assert_eq!(db.entry("sum", "f32", 5).map(|e| e.n), Some(1024));
        assert!(db.entry("sum", "f64", 5).is_none());
        std::fs::write(&path, "{").expect("write");
        assert!(Database::load(&path)
            .expect_err("broken")
            .contains("not a tuning database"));
    }
}
