//! Compiled kernels kept on disk between processes, as CuPy keeps its kernel cache:
//! without this every new process ran NVRTC again for the same source (0.3–2.7 s per
//! segment module on a 2-core machine, much less on the H200's host, where the driver's
//! assembly of the PTX was most of a build: results/h200-build-times). The driver keeps
//! its own cache of what it assembles; with both warm a module loads in milliseconds.
//!
//! An image is filed under the SHA-256 of everything that fixes it: NVRTC's version, the
//! options (architecture and `REDLAB_NVRTC_OPTIONS` included), the program's name and its
//! source, which holds every define. `REDLAB_KERNEL_CACHE` names the folder, or `off`
//! to compile every module afresh; the default is `redlab/kernels` in the user's cache
//! folder. Files are written whole under a temporary name and renamed, so a reader never
//! sees half of one; a file that does not look like the image it should be is ignored
//! and replaced. The folder may be deleted at any time.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

/// A folder of compiled kernels.
#[derive(Debug, Clone)]
pub struct KernelCache {
    dir: PathBuf,
}

impl KernelCache {
    /// The cache `REDLAB_KERNEL_CACHE` asks for: `None` where it is `off` or no cache
    /// folder is known.
    pub fn from_env() -> Option<Self> {
        match std::env::var_os("REDLAB_KERNEL_CACHE") {
            Some(v) if v == "off" => None,
            Some(v) if !v.is_empty() => Some(Self::at(PathBuf::from(v))),
            _ => dirs::cache_dir().map(|d| Self::at(d.join("redlab").join("kernels"))),
        }
    }

    /// The cache in `dir` (made on the first store).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        KernelCache { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of an image made from `parts`: each part's length goes in before it, so
    /// no two different lists of parts meet.
    pub fn key(parts: &[&[u8]]) -> String {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn path(&self, key: &str, machine_code: bool) -> PathBuf {
        self.dir
            .join(key)
            .with_extension(if machine_code { "cubin" } else { "ptx" })
    }

    /// The image filed under `key`, where there is one that looks whole.
    pub fn load(&self, key: &str, machine_code: bool) -> Option<Vec<u8>> {
        let image = std::fs::read(self.path(key, machine_code)).ok()?;
        looks_whole(&image, machine_code).then_some(image)
    }

    /// Files `image` under `key`. A cache that cannot be written is said once per
    /// process on stderr; the kernels run all the same.
    pub fn store(&self, key: &str, machine_code: bool, image: &[u8]) {
        static TEMPORARY: AtomicUsize = AtomicUsize::new(0);
        let path = self.path(key, machine_code);
        let temporary = self.dir.join(format!(
            ".{key}.{}.{}",
            std::process::id(),
            TEMPORARY.fetch_add(1, Ordering::Relaxed)
        ));
        let written = std::fs::create_dir_all(&self.dir)
            .and_then(|()| std::fs::write(&temporary, image))
            .and_then(|()| std::fs::rename(&temporary, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "redlab: kernel cache {} not written ({e}); set REDLAB_KERNEL_CACHE to \
                     another folder or to off",
                    self.dir.display()
                )
            });
        }
    }
}

/// Whether `image` looks like a whole one: PTX text ending in the NUL the driver needs,
/// or an ELF file.
fn looks_whole(image: &[u8], machine_code: bool) -> bool {
    if machine_code {
        return image.starts_with(b"\x7fELF");
    }
    match image.split_last() {
        Some((0, text)) => !text.contains(&0) && text.windows(8).any(|w| w == b".version"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &[u8] = b"//\n.version 9.0\n.target sm_90\n\0";

    #[test]
    fn a_stored_image_loads_back_under_its_key_only() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let cache = KernelCache::at(dir.path().join("kernels"));
        let key = KernelCache::key(&[b"13.0", b"--gpu-architecture=compute_90", b"src"]);
        assert_eq!(cache.load(&key, false), None);
        cache.store(&key, false, PTX);
        assert_eq!(cache.load(&key, false).as_deref(), Some(PTX));
        // The machine code of the same key is another file.
        assert_eq!(cache.load(&key, true), None);
        let other = KernelCache::key(&[b"13.0", b"--gpu-architecture=compute_90", b"src2"]);
        assert_eq!(cache.load(&other, false), None);
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(cache.dir())
            .expect("folder")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from(format!("{key}.ptx"))]);
    }

    #[test]
    fn keys_tell_apart_parts_that_join_to_the_same_bytes() {
        assert_ne!(
            KernelCache::key(&[b"ab", b"c"]),
            KernelCache::key(&[b"a", b"bc"])
        );
        assert_eq!(KernelCache::key(&[b"x"]).len(), 64);
    }

    #[test]
    fn truncated_or_foreign_files_are_misses() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let cache = KernelCache::at(dir.path());
        let key = KernelCache::key(&[b"k"]);
        for bad in [&PTX[..PTX.len() - 1], b"", b"\0", b"garbage\0"] {
            std::fs::write(dir.path().join(format!("{key}.ptx")), bad).expect("write");
            assert_eq!(cache.load(&key, false), None, "{bad:?}");
        }
        std::fs::write(dir.path().join(format!("{key}.cubin")), PTX).expect("write");
        assert_eq!(cache.load(&key, true), None);
        std::fs::write(dir.path().join(format!("{key}.cubin")), b"\x7fELF\x02").expect("write");
        assert!(cache.load(&key, true).is_some());
    }

    #[test]
    fn a_folder_that_cannot_be_made_only_costs_the_cache() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"not a folder").expect("write");
        let cache = KernelCache::at(file.join("kernels"));
        let key = KernelCache::key(&[b"k"]);
        cache.store(&key, false, PTX);
        assert_eq!(cache.load(&key, false), None);
        assert_eq!(std::fs::read(&file).expect("read"), b"not a folder");
    }
}
