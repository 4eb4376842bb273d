//! Reading `objdump` output: functions, instructions, branch and call targets, loops.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arch {
    X86_64,
    Aarch64,
}
use Arch::{Aarch64, X86_64};

impl Arch {
    pub const HOST: Option<Arch> = if cfg!(target_arch = "x86_64") {
        Some(X86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(Aarch64)
    } else {
        None
    };

    pub fn of_triple(triple: &str) -> Option<Arch> {
        match triple.split('-').next()? {
            "x86_64" => Some(X86_64),
            "aarch64" => Some(Aarch64),
            _ => None,
        }
    }

    /// The objdump that reads this architecture's code on this host.
    pub fn objdump(self) -> &'static str {
        match self {
            _ if Some(self) == Arch::HOST => "objdump",
            X86_64 => "x86_64-linux-gnu-objdump",
            Aarch64 => "aarch64-linux-gnu-objdump",
        }
    }

    pub fn is_call(self, mnem: &str) -> bool {
        match self {
            X86_64 => matches("call*", mnem), // `call`, or `callq` from older binutils
            Aarch64 => matches("bl|blr*", mnem),
        }
    }

    /// A branch, conditional or not, direct or not (calls are not branches).
    fn is_branch(self, mnem: &str) -> bool {
        match self {
            X86_64 => mnem.starts_with('j') || mnem.starts_with("loop"),
            Aarch64 => matches("b|br|cbz|cbnz|tbz|tbnz|b.*|bc.*", mnem),
        }
    }

    fn is_jump(self, mnem: &str) -> bool {
        match self {
            X86_64 => mnem == "jmp",
            Aarch64 => matches("b|br", mnem),
        }
    }

    /// Whether execution can go on with the next instruction (calls aside).
    fn falls_through(self, mnem: &str) -> bool {
        let stop = match self {
            X86_64 => "ret*|ud2|hlt|int3",
            Aarch64 => "ret*|brk|udf|hlt",
        };
        !self.is_jump(mnem) && !matches(stop, mnem)
    }

    /// Where objdump's comment starts in an operand field (AArch64 immediates use `#`).
    fn comment(self) -> &'static str {
        match self {
            X86_64 => "#",
            Aarch64 => "//",
        }
    }
}

/// Whether `mnem` matches `pattern`: `a|b` = either, `x*` = any mnemonic starting with `x`.
pub fn matches(pattern: &str, mnem: &str) -> bool {
    pattern.split('|').any(|p| match p.strip_suffix('*') {
        Some(prefix) => mnem.starts_with(prefix),
        None => mnem == p,
    })
}

/// One instruction as objdump prints it.
pub struct Insn {
    pub addr: u64,
    pub mnem: String,
    pub ops: String,
    pub line: String,
}

impl Insn {
    /// The target of a direct branch or call: the address printed before `<symbol+offset>`.
    fn direct_target(&self, arch: Arch) -> Option<u64> {
        let head = self.ops.split('<').next()?;
        if head.contains(arch.comment()) {
            return None; // an indirect operand; the comment has the address it reads
        }
        let last = head.split([' ', ',']).rfind(|s| !s.is_empty())?;
        u64::from_str_radix(last, 16).ok()
    }

    /// x86 `jmp/call *disp(%rip)  # SLOT <...>`: the address of the pointer it reads.
    fn slot(&self, arch: Arch) -> Option<u64> {
        let comment = self.ops.split_once(arch.comment())?.1;
        u64::from_str_radix(comment.split_whitespace().next()?, 16).ok()
    }
}

pub struct Function {
    pub name: String,
    pub insns: Vec<Insn>,
}

impl Function {
    fn index_of(&self, addr: u64) -> Option<usize> {
        self.insns.binary_search_by_key(&addr, |i| i.addr).ok()
    }
}

/// A loop of a function, as instruction indices.
pub struct Loop {
    pub head: usize,
    pub back: usize,
    pub body: Vec<usize>,
}

/// A whole binary's disassembly.
pub struct Disassembly {
    pub arch: Arch,
    pub functions: Vec<Function>,
    /// Function start address → index in `functions`.
    starts: HashMap<u64, usize>,
    /// Pointer slot → the constant address a dynamic relocation stores there.
    relocs: HashMap<u64, u64>,
}

/// Callees (demangled name fragments) that never return: the panic paths. A call to one ends
/// its path, like a return, rather than falling through to whatever code is laid out next.
const NORETURN: &[&str] = &[
    "panic",
    "_fail",
    "abort",
    "handle_error",
    "handle_alloc_error",
];

impl Disassembly {
    /// Disassembles `binary` (`objdump -d -C`) and reads its dynamic relocations (`objdump -R`).
    pub fn load(arch: Arch, binary: &Path) -> Result<Disassembly, String> {
        let tool = arch.objdump();
        let text = objdump(tool, &["-d", "-C", "--no-show-raw-insn"], binary)?;
        // rustc calls functions of other crates through the GOT in position-independent
        // executables: `*_RELATIVE` relocations say where those slots point. A static
        // executable has none, and objdump then fails: no slots to read.
        let relocs = objdump(tool, &["-R"], binary).unwrap_or_default();
        Ok(Disassembly::parse(arch, &text, &relocs))
    }

    /// From the output of `objdump -d -C --no-show-raw-insn` and `objdump -R`.
    fn parse(arch: Arch, disassembly: &str, relocations: &str) -> Disassembly {
        let functions = parse_functions(disassembly);
        let starts = functions
            .iter()
            .enumerate()
            .filter_map(|(k, f)| Some((f.insns.first()?.addr, k)))
            .collect();
        let relocs = parse_relocations(relocations);
        Disassembly {
            arch,
            functions,
            starts,
            relocs,
        }
    }

    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The function starting at `addr`.
    pub fn at(&self, addr: u64) -> Option<&Function> {
        self.starts.get(&addr).map(|&k| &self.functions[k])
    }

    /// Where a branch or call goes: direct, or through a relocated pointer slot.
    fn target(&self, i: &Insn) -> Option<u64> {
        i.direct_target(self.arch)
            .or_else(|| self.relocs.get(&i.slot(self.arch)?).copied())
    }

    /// The name of a call's callee, resolved when possible, else as objdump names it.
    pub fn callee<'a>(&'a self, i: &'a Insn) -> &'a str {
        match self.target(i).and_then(|t| self.at(t)) {
            Some(f) => &f.name,
            None => i
                .ops
                .split_once('<')
                .map_or(&i.ops, |(_, s)| s.trim_end_matches('>')),
        }
    }

    /// The function `f` leaves by an unconditional jump to another function's start (a tail
    /// call), if any.
    pub fn tail_call(&self, f: &Function) -> Option<u64> {
        f.insns
            .iter()
            .filter(|i| self.arch.is_jump(&i.mnem))
            .filter_map(|i| self.target(i))
            .find(|&t| f.index_of(t).is_none() && self.at(t).is_some())
    }

    /// The loops of `f`: every backward branch (to an earlier instruction of `f`, or to itself)
    /// that control can take again, i.e. that is reachable from its target. The body is every
    /// instruction on some path from the target to the branch, so code that merely lies between
    /// them in address order (a kernel's tail block laid out there, a panic path) is not in it.
    pub fn loops(&self, f: &Function) -> Vec<Loop> {
        let n = f.insns.len();
        let mut succ = vec![Vec::new(); n];
        for (k, i) in f.insns.iter().enumerate() {
            let noreturn =
                self.arch.is_call(&i.mnem) && NORETURN.iter().any(|s| self.callee(i).contains(s));
            if self.arch.falls_through(&i.mnem) && !noreturn && k + 1 < n {
                succ[k].push(k + 1);
            }
            if self.arch.is_branch(&i.mnem) {
                match self.target(i) {
                    Some(t) => succ[k].extend(f.index_of(t)), // else it leaves `f`
                    // Through a register (a jump table): it may go anywhere.
                    None if i.slot(self.arch).is_none() => succ[k].extend(0..n),
                    None => {} // through an unresolved slot: a tail call
                }
            }
        }
        let mut pred = vec![Vec::new(); n];
        for (k, s) in succ.iter().enumerate() {
            for &j in s {
                pred[j].push(k);
            }
        }
        let reach = |from: usize, edges: &[Vec<usize>]| {
            let (mut seen, mut todo) = (vec![false; n], vec![from]);
            while let Some(k) = todo.pop() {
                if !std::mem::replace(&mut seen[k], true) {
                    todo.extend(&edges[k]);
                }
            }
            seen
        };
        let mut loops = Vec::new();
        for (back, i) in f.insns.iter().enumerate() {
            if !self.arch.is_branch(&i.mnem) {
                continue;
            }
            let Some(head) = i.direct_target(self.arch).and_then(|t| f.index_of(t)) else {
                continue;
            };
            if head > back {
                continue;
            }
            let forward = reach(head, &succ);
            if !forward[back] {
                continue;
            }
            let backward = reach(back, &pred);
            let body = (0..n).filter(|&k| forward[k] && backward[k]).collect();
            loops.push(Loop { head, back, body });
        }
        loops
    }
}

/// Runs objdump, with a clear error when it is missing or fails.
fn objdump(tool: &str, args: &[&str], binary: &Path) -> Result<String, String> {
    let out = Command::new(tool)
        .args(args)
        .arg(binary)
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "`{tool}` not found: install GNU binutils for the target \
                     (Debian: binutils, binutils-aarch64-linux-gnu)"
                )
            } else {
                format!("cannot run `{tool}`: {e}")
            }
        })?;
    if !out.status.success() {
        return Err(format!(
            "`{tool} {} {}` failed ({}): {}",
            args.join(" "),
            binary.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Parses `objdump -d --no-show-raw-insn` output into functions.
fn parse_functions(text: &str) -> Vec<Function> {
    const X86_PREFIXES: &[&str] = &[
        "rep", "repz", "repnz", "repe", "repne", "lock", "notrack", "bnd", "data16", "cs", "ds",
        "addr32",
    ];
    let mut functions: Vec<Function> = Vec::new();
    for line in text.lines() {
        // A function: `0000000000401120 <name>:`.
        let header = line.strip_suffix(">:").and_then(|l| l.split_once(" <"));
        if let Some((_, name)) = header.filter(|(a, _)| u64::from_str_radix(a, 16).is_ok()) {
            functions.push(Function {
                name: name.to_string(),
                insns: Vec::new(),
            });
            continue;
        }
        // An instruction: `  401124:<TAB>mnemonic operands`.
        let Some((addr, rest)) = line.trim_start().split_once(":\t") else {
            continue;
        };
        let (Ok(addr), Some(f)) = (u64::from_str_radix(addr, 16), functions.last_mut()) else {
            continue;
        };
        let mut words = rest
            .split_whitespace()
            .skip_while(|w| X86_PREFIXES.contains(w));
        let Some(mnem) = words.next() else { continue };
        let ops = words.collect::<Vec<_>>().join(" ");
        f.insns.push(Insn {
            addr,
            mnem: mnem.to_string(),
            ops,
            line: line.to_string(),
        });
    }
    functions
}

/// `objdump -R`: pointer slots filled with a constant address (`*_RELATIVE`), slot → address.
fn parse_relocations(text: &str) -> HashMap<u64, u64> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let slot = u64::from_str_radix(fields.next()?, 16).ok()?;
            if !fields.next()?.ends_with("_RELATIVE") {
                return None;
            }
            let value = fields.next()?.strip_prefix("*ABS*+0x")?;
            Some((slot, u64::from_str_radix(value, 16).ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The addresses of the calls inside loops of `name`, and its number of loops.
    fn calls_in_loops(d: &Disassembly, name: &str) -> (Vec<u64>, usize) {
        let f = d.function(name).unwrap();
        let loops = d.loops(f);
        let mut calls: Vec<u64> = loops
            .iter()
            .flat_map(|l| &l.body)
            .map(|&k| &f.insns[k])
            .filter(|i| d.arch.is_call(&i.mnem))
            .map(|i| i.addr)
            .collect();
        calls.dedup();
        (calls, loops.len())
    }

    #[test]
    fn x86_call_in_loop() {
        let d = Disassembly::parse(
            Arch::X86_64,
            "0000000000001000 <f>:\n\
             \x20   1000:\txor    %eax,%eax\n\
             \x20   1002:\tcall   *0x1000(%rip)        # 2008 <_DYNAMIC+0x8>\n\
             \x20   1008:\tdec    %edi\n\
             \x20   100a:\tjne    1002 <f+0x2>\n\
             \x20   100c:\tret\n",
            "",
        );
        assert_eq!(calls_in_loops(&d, "f"), (vec![0x1002], 1));
    }

    /// A backward jump into code that ends in a return is no loop (the kernels' tail blocks);
    /// a call to a panic ends its path even when the loop's code follows it.
    #[test]
    fn x86_not_loops() {
        let d = Disassembly::parse(
            Arch::X86_64,
            "0000000000001000 <f>:\n\
             \x20   1000:\ttest   %rsi,%rsi\n\
             \x20   1003:\tje     1040 <f+0x40>\n\
             \x20   1005:\tcall   *0x1000(%rip)        # 2008 <memcpy@GLIBC_2.14>\n\
             \x20   100b:\tret\n\
             \x20   1020:\tcmp    %rdi,%rsi\n\
             \x20   1023:\tjae    1030 <f+0x30>\n\
             \x20   1025:\tjmp    1036 <f+0x36>\n\
             \x20   1030:\tcall   *0x1000(%rip)        # 2010 <_DYNAMIC+0x10>\n\
             \x20   1036:\tinc    %rdi\n\
             \x20   1039:\tjmp    1020 <f+0x20>\n\
             \x20   1040:\tjmp    1005 <f+0x5>\n\
             0000000000003000 <core::panicking::panic_bounds_check>:\n\
             \x20   3000:\tud2\n",
            "0000000000002010 R_X86_64_RELATIVE  *ABS*+0x0000000000003000\n",
        );
        // The only loop is 1020..1039, and its call never returns.
        assert_eq!(calls_in_loops(&d, "f"), (vec![], 1));
    }

    #[test]
    fn x86_tail_call_through_got() {
        let d = Disassembly::parse(
            Arch::X86_64,
            "0000000000001000 <probe>:\n\
             \x20   1000:\tjmp    *0x1000(%rip)        # 2008 <_DYNAMIC+0x8>\n\
             0000000000001100 <kernel>:\n\
             \x20   1100:\tret\n",
            "0000000000002008 R_X86_64_RELATIVE  *ABS*+0x0000000000001100\n",
        );
        assert_eq!(d.tail_call(d.function("probe").unwrap()), Some(0x1100));
        assert_eq!(d.tail_call(d.function("kernel").unwrap()), None);
    }

    #[test]
    fn aarch64_loops() {
        let d = Disassembly::parse(
            Arch::Aarch64,
            "0000000000001000 <f>:\n\
             \x20   1000:\tbl\t2000 <g>\n\
             \x20   1004:\tsubs\tw0, w0, #0x1\n\
             \x20   1008:\tb.ne\t1000 <f>\n\
             \x20   100c:\ttbnz\tw1, #3, 100c <f+0xc>\n\
             \x20   1010:\tret\n\
             0000000000002000 <g>:\n\
             \x20   2000:\tret\n",
            "",
        );
        // `tbnz` to itself is a loop too (an empty one).
        assert_eq!(calls_in_loops(&d, "f"), (vec![0x1000], 2));
    }
}
