//! `asm-check`: asserts properties of the machine code of the SIMD kernels.
//!
//! ```text
//! cargo run --release -p asm-check                                          # host (x86_64) rows
//! cargo run --release -p asm-check -- --target aarch64-unknown-linux-gnu    # aarch64 rows
//! cargo run --release -p asm-check -- --verbose                             # + failing disassembly
//! ```
//!
//! The binary contains one probe per kernel × tier ([`probes`]): the kernel's `#[inline]` entry
//! point inlined into an unmangled `#[inline(never)]` function. Without `--target` it
//! disassembles itself; with `--target` it builds itself for that target (a nested cargo build
//! in its own target directory) and disassembles that artifact, which it never runs. Every
//! expectation is a row of [`EXPECTATIONS`]. Exit status: 0 when all hold, 1 when one fails,
//! 2 when the check could not run (no objdump, failed build, bad arguments).

mod disasm;
mod probes;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use disasm::Arch::{self, Aarch64, X86_64};
use disasm::{Disassembly, Function, matches};

/// What one probe's code must look like.
struct Expect {
    /// The probe's symbol (see `probes.rs`).
    probe: &'static str,
    arch: Arch,
    /// Mnemonics that must occur: `a|b` = either, `x*` = any mnemonic starting with `x` (AT&T
    /// size suffixes such as `crc32q`, AArch64 variants such as `crc32cx`).
    required: &'static [&'static str],
    /// Operand substrings that must not occur anywhere in the code (registers).
    forbidden: &'static [&'static str],
    /// The code has at least one loop and no call inside any loop. A loop is a backward branch
    /// (to the same or a lower address of the same function) that can be reached again from its
    /// target; its body is the code on the paths from the target to the branch, so code merely
    /// laid out between the two is not in it. Calls that never return (panics) end a path.
    loop_calls: bool,
    /// The entry point is `#[inline]`, so the probe must hold the kernel's code itself. When
    /// false the entry point is not `#[inline]`: the probe is a tail jump to the out-of-line
    /// kernel, and the checks apply to that kernel's code (the code the `Kernels` table calls).
    inlined: bool,
}

const SSE: &[&str] = &["%ymm"]; // the SSE4.2 tier must not use 256-bit registers
const NONE: &[&str] = &[];
/// Where the per-tier entry points live: a probe that tail-calls into one of these did not inline
/// its kernel.
const TIER_MODULES: &[&str] = &["simdtok_kernels::x86_64::", "simdtok_kernels::aarch64::"];

/// Every expectation. Mnemonics are chosen from what each kernel's algorithm needs: the nibble
/// lookups (`pshufb`/`tbl`), the byte compares, the mask extraction (`pmovmskb`; NEON has no
/// such instruction), `popcnt`/`cnt` for counting, the CRC instructions, the AVX2 gathers. The
/// trie walks are scalar on every tier; the AVX2 gather variant (kept, not dispatched) is probed.
#[rustfmt::skip]
const EXPECTATIONS: &[Expect] = &[
    // x86_64, SSE4.2 tier.
    Expect { probe: "simdtok_probe_sse42_classify", arch: X86_64, inlined: true, loop_calls: true,
             required: &["pshufb", "psllw", "pmovmskb"], forbidden: SSE },
    Expect { probe: "simdtok_probe_sse42_find_in", arch: X86_64, inlined: true, loop_calls: true,
             required: &["pshufb", "pcmpeqb", "pmovmskb"], forbidden: SSE },
    Expect { probe: "simdtok_probe_sse42_count_utf8_chars", arch: X86_64, inlined: true, loop_calls: true,
             required: &["pcmpgtb", "pmovmskb", "popcnt"], forbidden: SSE },
    Expect { probe: "simdtok_probe_sse42_ascii_prefix_len", arch: X86_64, inlined: true, loop_calls: true,
             required: &["por", "pmovmskb"], forbidden: SSE },
    Expect { probe: "simdtok_probe_sse42_prune_map", arch: X86_64, inlined: true, loop_calls: true,
             required: &["pshufb", "pcmpeqb"], forbidden: SSE },
    Expect { probe: "simdtok_probe_sse42_crc32c", arch: X86_64, inlined: true, loop_calls: true,
             required: &["crc32*"], forbidden: SSE },
    Expect { probe: "simdtok_probe_sse42_escape_spaces", arch: X86_64, inlined: true, loop_calls: true,
             required: &["pcmpeqb", "pmovmskb", "pshufb", "popcnt"], forbidden: SSE },
    // x86_64, AVX2 tier (CRC-32C: the SSE4.2 loop, inlined into AVX2 code as the AVX2 table has it).
    Expect { probe: "simdtok_probe_avx2_classify", arch: X86_64, inlined: true, loop_calls: true,
             required: &["vpshufb", "vpsllw", "vpmovmskb"], forbidden: NONE },
    Expect { probe: "simdtok_probe_avx2_find_in", arch: X86_64, inlined: true, loop_calls: true,
             required: &["vpshufb", "vpcmpeqb", "vpmovmskb"], forbidden: NONE },
    Expect { probe: "simdtok_probe_avx2_count_utf8_chars", arch: X86_64, inlined: true, loop_calls: true,
             required: &["vpcmpgtb", "vpmovmskb", "popcnt"], forbidden: NONE },
    Expect { probe: "simdtok_probe_avx2_ascii_prefix_len", arch: X86_64, inlined: true, loop_calls: true,
             required: &["vpor", "vpmovmskb"], forbidden: NONE },
    Expect { probe: "simdtok_probe_avx2_prune_map", arch: X86_64, inlined: true, loop_calls: true,
             required: &["vpshufb", "vpcmpeqb"], forbidden: NONE },
    Expect { probe: "simdtok_probe_avx2_crc32c", arch: X86_64, inlined: true, loop_calls: true,
             required: &["crc32*"], forbidden: NONE },
    Expect { probe: "simdtok_probe_avx2_escape_spaces", arch: X86_64, inlined: true, loop_calls: true,
             required: &["vpcmpeqb", "vpmovmskb", "vpshufb", "popcnt"], forbidden: NONE },
    Expect { probe: "simdtok_probe_avx2_trie_batch_gather", arch: X86_64, inlined: true, loop_calls: true,
             required: &["vpgatherdd"], forbidden: NONE },
    // aarch64, NEON tier.
    Expect { probe: "simdtok_probe_neon_classify", arch: Aarch64, inlined: true, loop_calls: true,
             required: &["tbl", "cmeq|cmtst"], forbidden: NONE },
    Expect { probe: "simdtok_probe_neon_find_in", arch: Aarch64, inlined: true, loop_calls: true,
             required: &["tbl", "cmeq|cmtst"], forbidden: NONE },
    Expect { probe: "simdtok_probe_neon_count_utf8_chars", arch: Aarch64, inlined: true, loop_calls: true,
             required: &["cmgt", "cnt"], forbidden: NONE },
    Expect { probe: "simdtok_probe_neon_ascii_prefix_len", arch: Aarch64, inlined: true, loop_calls: true,
             required: &["umaxv", "cmlt"], forbidden: NONE },
    Expect { probe: "simdtok_probe_neon_prune_map", arch: Aarch64, inlined: true, loop_calls: true,
             required: &["tbl"], forbidden: NONE },
    Expect { probe: "simdtok_probe_neon_crc32c", arch: Aarch64, inlined: true, loop_calls: true,
             required: &["crc32c*"], forbidden: NONE },
    Expect { probe: "simdtok_probe_neon_escape_spaces", arch: Aarch64, inlined: true, loop_calls: true,
             required: &["cmeq", "addv", "tbl"], forbidden: NONE },
];

/// Builds this crate for `triple` (never run, only disassembled) and returns the executable.
fn cross_build(triple: &str, arch: Arch) -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("asm-check is in a workspace");
    // A target directory of its own: the host build's directory may be locked by `cargo run`.
    let target_dir = root.join("target").join("asm-check-cross");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "-p", "asm-check", "--target", triple]);
    cmd.arg("--target-dir").arg(&target_dir);
    if arch == Aarch64 && Arch::HOST != Some(Aarch64) {
        // The rustup toolchain here has no aarch64 std; the system rustc has. Either default
        // gives way to the same variable set in the environment.
        let linker = format!(
            "CARGO_TARGET_{}_LINKER",
            triple.to_uppercase().replace('-', "_")
        );
        for (var, default) in [
            (&*linker, "aarch64-linux-gnu-gcc"),
            ("RUSTC", "/usr/bin/rustc"),
        ] {
            if std::env::var_os(var).is_none() {
                cmd.env(var, default);
            }
        }
    }
    eprintln!(
        "asm-check: building for {triple} in {}",
        target_dir.display()
    );
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", cargo.to_string_lossy()))?;
    if !status.success() {
        return Err(format!("the build for {triple} failed ({status})"));
    }
    let exe = target_dir.join(triple).join("release").join("asm-check");
    if !exe.is_file() {
        return Err(format!("the build for {triple} left no {}", exe.display()));
    }
    Ok(exe)
}

/// One line of the result table.
struct Row {
    probe: String,
    expectation: String,
    ok: bool,
    detail: String,
}

/// Checks one expectation; returns the functions it looked at.
fn check<'d>(e: &Expect, d: &'d Disassembly, rows: &mut Vec<Row>) -> Vec<&'d Function> {
    let mut row = |expectation: &str, ok: bool, detail: String| {
        let (probe, expectation) = (e.probe.to_string(), expectation.to_string());
        rows.push(Row {
            probe,
            expectation,
            ok,
            detail,
        })
    };
    let Some(probe) = d.function(e.probe) else {
        row("symbol present", false, "not in the disassembly".into());
        return Vec::new();
    };
    // The code the other checks look at: the probe, and the kernel it tail-calls if any.
    let mut code = vec![probe];
    let tail = d.tail_call(probe);
    if e.inlined {
        // A tail call into the tier's own entry point means the kernel was not inlined. One into
        // other code (the scalar loop the kernels use for inputs under 16 bytes) is a cold exit.
        let callee = |t| d.at(t).map_or(format!("{t:#x}"), |f| f.name.clone());
        let (ok, detail) = match tail.map(callee) {
            None => (true, String::new()),
            Some(name) if !TIER_MODULES.iter().any(|m| name.contains(m)) => {
                (true, format!("short-input exit to {name}"))
            }
            Some(name) => (false, format!("tail call to {name}")),
        };
        row("kernel inlined", ok, detail);
    } else {
        let detail = match tail.and_then(|t| d.at(t)) {
            Some(kernel) => {
                code.push(kernel);
                format!("checked: {}", kernel.name)
            }
            None => "inlined now: set `inlined: true`".into(),
        };
        row("out-of-line kernel", true, detail);
    }
    let insns = || code.iter().flat_map(|f| &f.insns);
    for pattern in e.required {
        let n = insns().filter(|i| matches(pattern, &i.mnem)).count();
        row(&format!("has {pattern}"), n > 0, format!("{n}×"));
    }
    for reg in e.forbidden {
        let hit = insns().find(|i| i.ops.contains(reg));
        let detail = hit.map_or(String::new(), |i| {
            format!("{:#x}: {} {}", i.addr, i.mnem, i.ops)
        });
        row(&format!("no {reg}"), hit.is_none(), detail);
    }
    if e.loop_calls {
        let (mut loops, mut bad) = (0, None);
        for f in &code {
            for l in d.loops(f) {
                loops += 1;
                let call = l
                    .body
                    .iter()
                    .map(|&k| &f.insns[k])
                    .find(|i| d.arch.is_call(&i.mnem));
                if let Some(call) = call {
                    let (head, back) = (f.insns[l.head].addr, f.insns[l.back].addr);
                    bad.get_or_insert(format!(
                        "{:#x}: {} {} in loop {head:#x}..{back:#x}",
                        call.addr,
                        call.mnem,
                        d.callee(call)
                    ));
                }
            }
        }
        let (ok, detail) = match bad {
            _ if loops == 0 => (false, "no loop found".to_string()),
            Some(detail) => (false, detail),
            None => (true, format!("loops: {loops}")),
        };
        row("no call in loops", ok, detail);
    }
    code
}

struct Args {
    target: Option<String>,
    verbose: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        target: None,
        verbose: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--target" => args.target = Some(it.next().ok_or("--target needs a target triple")?),
            "-v" | "--verbose" => args.verbose = true,
            "-h" | "--help" => {
                println!("usage: asm-check [--target TRIPLE] [--verbose]");
                std::process::exit(0);
            }
            _ => match arg.strip_prefix("--target=") {
                Some(t) => args.target = Some(t.to_string()),
                None => return Err(format!("unknown argument `{arg}` (see --help)")),
            },
        }
    }
    Ok(args)
}

/// Checks every expectation of the chosen architecture; `Ok(true)` when all hold.
fn run() -> Result<bool, String> {
    let args = parse_args()?;
    let (arch, binary) = match &args.target {
        None => {
            // Unoptimised, nothing is inlined into the probes (`debug_assertions` stands for
            // that: it is off in the release profile).
            if cfg!(debug_assertions) {
                return Err("build with --release: `cargo run --release -p asm-check`".into());
            }
            let arch = Arch::HOST.ok_or("no probes for this host architecture")?;
            let exe =
                std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
            (arch, exe)
        }
        Some(triple) => {
            let arch = Arch::of_triple(triple).ok_or(format!("no probes for target {triple}"))?;
            (arch, cross_build(triple, arch)?)
        }
    };
    let d = Disassembly::load(arch, &binary)?;

    let expectations: Vec<&Expect> = EXPECTATIONS.iter().filter(|e| e.arch == arch).collect();
    let mut rows = Vec::new();
    let mut failing_code = Vec::new();
    for e in &expectations {
        let before = rows.len();
        let code = check(e, &d, &mut rows);
        if rows[before..].iter().any(|r| !r.ok) {
            failing_code.extend(code);
        }
    }

    let w_probe = rows
        .iter()
        .map(|r| r.probe.len())
        .fold("PROBE".len(), usize::max);
    let w_exp = rows
        .iter()
        .map(|r| r.expectation.len())
        .fold("EXPECTATION".len(), usize::max);
    println!("{:w_probe$}  {:w_exp$}  RESULT", "PROBE", "EXPECTATION");
    for r in &rows {
        let result = if r.ok { "pass" } else { "FAIL" };
        println!(
            "{:w_probe$}  {:w_exp$}  {result}  {}",
            r.probe, r.expectation, r.detail
        );
    }
    let failed = rows.iter().filter(|r| !r.ok).count();
    println!(
        "summary: {arch:?}, {} probes, {} expectations: {} pass, {failed} FAIL ({})",
        expectations.len(),
        rows.len(),
        rows.len() - failed,
        binary.display()
    );

    if args.verbose {
        for f in failing_code {
            println!("\n{}:", f.name);
            for i in &f.insns {
                println!("{}", i.line);
            }
        }
    }
    Ok(failed == 0)
}

fn main() -> ExitCode {
    // Keeps the probes in the binary.
    std::hint::black_box(probes::keep());
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("asm-check: error: {e}");
            ExitCode::from(2)
        }
    }
}
