//! Scratch space for one test: a fresh, empty directory of its own, removed when the test is
//! done with it.
//!
//! The tests of the integration binary run side by side on threads of one process, so a
//! directory is named by the process, a count this process keeps and the caller's name: two
//! tests that ask for the same name, in one module or in two, never share a directory.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A directory in the system's temporary folder that only its owner uses; removed on drop.
pub struct Scratch(PathBuf);

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh, empty directory named after `name` (which says what it holds), for this test only.
pub fn scratch(name: &str) -> Scratch {
    static TAKEN: AtomicU64 = AtomicU64::new(0);
    let number = TAKEN.fetch_add(1, Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("kivi-test-{}-{number}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    Scratch(dir)
}

/// Copies the directory `from`, with everything under it, to `to` (created if missing).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
