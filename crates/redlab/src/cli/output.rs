//! Output files, written so that nothing the user gave is lost: an output may not be one
//! of the command's inputs or another of its outputs; a file is replaced only with
//! `--force`; records are appended only to a file that already holds records (or
//! nothing), always starting on a fresh line.
//!
//! Every check runs before the command does its work, so a long benchmark does not end
//! in a refusal.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// Whether `a` and `b` name the same file: the same device and inode where both exist
/// (which sees through links and `..`), else the same absolute, normalized path.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    match (absolute(a), absolute(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// `path` made absolute with its existing parent resolved (the file itself may not exist).
fn absolute(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

/// Checks, before any work, the files one command will write.
pub struct OutputPlan<'a> {
    inputs: Vec<(&'a str, &'a Path)>,
    outputs: Vec<(&'a str, &'a Path)>,
    force: bool,
}

impl<'a> OutputPlan<'a> {
    /// A plan; `force` allows replacing existing files.
    pub fn new(force: bool) -> Self {
        OutputPlan {
            inputs: Vec::new(),
            outputs: Vec::new(),
            force,
        }
    }

    /// A file the command reads (`what` names its option, for messages).
    pub fn input(&mut self, what: &'a str, path: &'a Path) -> &mut Self {
        self.inputs.push((what, path));
        self
    }

    /// Claims `path` for an output; it may be neither an input nor another output.
    fn claim(&mut self, what: &'a str, path: &'a Path) -> anyhow::Result<()> {
        for (other, taken) in self.inputs.iter().chain(&self.outputs) {
            if same_file(path, taken) {
                bail!(
                    "{what} {} is the same file as {other} {}; choose another output file",
                    path.display(),
                    taken.display()
                );
            }
        }
        if path.is_dir() {
            bail!("{what} {} is a directory", path.display());
        }
        self.outputs.push((what, path));
        Ok(())
    }

    /// An output that replaces the file: refused when it exists, unless forced.
    pub fn replace(&mut self, what: &'a str, path: &'a Path) -> anyhow::Result<()> {
        self.claim(what, path)?;
        if path.exists() && !self.force {
            bail!(
                "{what} {} exists; give --force to replace it",
                path.display()
            );
        }
        Ok(())
    }

    /// An output that JSON lines are appended to: it must be new, empty, or hold JSON
    /// lines already (so that appending never damages another kind of file), unless forced.
    pub fn append_records(&mut self, what: &'a str, path: &'a Path) -> anyhow::Result<()> {
        self.claim(what, path)?;
        if self.force || !path.exists() {
            return Ok(());
        }
        let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        if !file.metadata()?.is_file() {
            bail!("{what} {} is not a regular file", path.display());
        }
        let mut first = String::new();
        BufReader::new(file.take(1 << 20))
            .read_line(&mut first)
            .ok();
        let looks_like_records = first.trim().is_empty()
            || serde_json::from_str::<serde_json::Value>(first.trim()).is_ok_and(|v| v.is_object());
        if !looks_like_records {
            bail!(
                "{what} {} exists and does not hold JSON lines; records are appended only to such a file (give --force to append anyway)",
                path.display()
            );
        }
        Ok(())
    }
}

/// Opens `path` for appending records, starting on a fresh line when the file does not
/// end with one.
pub fn open_append(path: &Path) -> anyhow::Result<File> {
    let mut file = File::options()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {} for writing", path.display()))?;
    let len = file.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            file.write_all(b"\n")?;
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_may_not_be_inputs_or_each_other() {
        let dir = tempfile::tempdir().expect("temp dir");
        let input = dir.path().join("in.jsonl");
        std::fs::write(&input, "{}\n").expect("write");
        let dotted = dir.path().join(".").join("in.jsonl");
        let mut plan = OutputPlan::new(true);
        plan.input("records", &input);
        assert!(plan.replace("--out", &dotted).is_err());
        let a = dir.path().join("a.html");
        plan.replace("--report", &a).expect("new file");
        assert!(plan.append_records("--json", &a).is_err());
    }

    #[test]
    fn existing_files_need_force_and_appends_start_a_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        let page = dir.path().join("p.html");
        std::fs::write(&page, "mine").expect("write");
        assert!(OutputPlan::new(false).replace("--out", &page).is_err());
        assert!(OutputPlan::new(true).replace("--out", &page).is_ok());
        assert!(OutputPlan::new(false)
            .append_records("--json", &page)
            .is_err());
        let records = dir.path().join("r.jsonl");
        std::fs::write(&records, "{\"a\":1}").expect("write");
        OutputPlan::new(false)
            .append_records("--json", &records)
            .expect("records");
        writeln!(open_append(&records).expect("open"), "{{\"b\":2}}").expect("append");
        let text = std::fs::read_to_string(&records).expect("read");
        assert_eq!(text, "{\"a\":1}\n{\"b\":2}\n");
    }
}
