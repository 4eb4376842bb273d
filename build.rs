//! Build facts for `simdtok report` (`simdtok::bench::build_info`): the git commit and the rustc
//! version, read here because the running binary cannot know them. Nothing here may fail the
//! build: outside a git checkout, or without git, the commit is "unknown".

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=SIMDTOK_GIT_COMMIT={commit}");
    watch_git_head();

    // Cargo tells build scripts which compiler builds the crate (RUSTC may be Debian's rustc
    // under CI's cross builds, not the rustup one on PATH).
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=SIMDTOK_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");

    for (var, key) in [("TARGET", "SIMDTOK_TARGET"), ("PROFILE", "SIMDTOK_PROFILE")] {
        let value = std::env::var(var).unwrap_or_else(|_| "unknown".to_owned());
        println!("cargo:rustc-env={key}={value}");
    }
}

/// The trimmed standard output of `git ARGS` in this crate's directory, if it succeeds.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(manifest_dir())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Reruns this script when HEAD moves: HEAD itself (a checkout), the branch it points to (a
/// commit) and packed-refs (a gc). In a worktree these live under different git directories,
/// which `--git-path` resolves.
fn watch_git_head() {
    let mut paths = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        paths.push(branch);
    }
    for path in paths {
        if let Some(resolved) = git(&["rev-parse", "--git-path", &path]) {
            let resolved = Path::new(&manifest_dir()).join(resolved);
            if resolved.exists() {
                println!("cargo:rerun-if-changed={}", resolved.display());
            }
        }
    }
}

/// This crate's directory (Cargo sets it for build scripts).
fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned())
}
