//! Running the built `simdtok` binary from the CLI tests (`#[path = "common/cli.rs"] mod cli;`).

// Each test uses a different subset.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `simdtok args...` with `stdin` as its standard input (and no `SIMDTOK_TIER`).
pub fn simdtok(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_simdtok"))
        .args(args)
        .env_remove("SIMDTOK_TIER")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simdtok runs");
    let mut input = child.stdin.take().expect("a stdin pipe");
    let stdin = stdin.to_vec();
    // Written from another thread: a large input must not block against a full stdout pipe.
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = child.wait_with_output().expect("simdtok finishes");
    feeder.join().expect("the feeder thread");
    out
}

/// The stderr of a run, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The path of `rel` under the committed `tests/data`, as text.
pub fn data(rel: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
        .display()
        .to_string()
}

/// The ids of each line of `input` under `model`, by `encode --output-format ids` (`extra`
/// options added).
pub fn ids_per_line(model: &str, input: &[u8], extra: &[&str]) -> Vec<Vec<u32>> {
    let mut args = vec!["encode", "--model", model];
    args.extend_from_slice(extra);
    let out = simdtok(&args, input);
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect()
}

/// An empty directory `group/name` under the tests' temporary directory.
pub fn scratch(group: &str, name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The path of `rel` under `../shared/data` (or `$SIMDTOK_SHARED_DATA`), as text; `None` (and a
/// line saying so) when it is absent.
pub fn shared_file(rel: &str) -> Option<String> {
    let shared = std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let path = shared.join(rel);
    if !path.is_file() {
        eprintln!("SKIPPED: ../shared/data is absent (set SIMDTOK_SHARED_DATA)");
        return None;
    }
    Some(path.display().to_string())
}

/// `simdtok encode --model MODEL --output-format FORMAT --output OUTPUT EXTRA…` on `stdin`.
pub fn encode_to(model: &str, format: &str, output: &str, extra: &[&str], stdin: &[u8]) -> Output {
    let mut args = vec![
        "encode",
        "--model",
        model,
        "--output-format",
        format,
        "--output",
        output,
    ];
    args.extend_from_slice(extra);
    simdtok(&args, stdin)
}

/// The names in `dir`, sorted.
pub fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
