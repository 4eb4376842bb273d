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
