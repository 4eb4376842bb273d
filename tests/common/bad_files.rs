//! Scratch model files for the bad-input tests, and a load that turns a panic into a test
//! failure and checks that an error names the file.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use simdtok::{Error, Tokenizer};

/// Writes `files` (name, bytes) into a new directory of their own under `suite` in the tests'
/// scratch directory — tests run in parallel, and a file's name can decide how it is detected
/// (GPT-2's `vocab.bpe` is found beside its `encoder.json`) — and returns the first one's path.
pub fn write(suite: &str, files: &[(&str, &[u8])]) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{suite}/{n}"));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    dir.join(files[0].0)
}

/// Loads `path`; fails the test if loading panicked, or if an error does not name the file.
pub fn load_checked(path: &Path) -> Result<Tokenizer, Error> {
    let result = catch_unwind(AssertUnwindSafe(|| Tokenizer::from_file(path)))
        .unwrap_or_else(|_| panic!("loading {} panicked", path.display()));
    if let Err(e) = &result {
        let msg = e.to_string();
        assert!(
            msg.contains(&path.display().to_string()),
            "the error names the file: {msg}"
        );
    }
    result
}

/// `rounds` copies of `original`, copy `k` with `1 + k % 8` bytes overwritten at places and with
/// values drawn from a xorshift generator seeded with `seed` (reproducible damage).
pub fn damaged(original: &[u8], rounds: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..rounds)
        .map(|round| {
            let mut bytes = original.to_vec();
            for _ in 0..1 + round % 8 {
                let at = (next() % bytes.len() as u64) as usize;
                bytes[at] = next() as u8;
            }
            bytes
        })
        .collect()
}
