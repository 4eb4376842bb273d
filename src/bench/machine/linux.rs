//! Linux: `/proc/cpuinfo`, sysfs (`/sys/devices/system/cpu`), `/proc/meminfo`,
//! `/proc/sys/kernel/osrelease` and `/etc/os-release`.

// Test builds on other systems compile this module for its parsers' tests alone.
#![cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]

use std::collections::HashSet;
use std::fs;

use super::{CacheInfo, MachineInfo, arm_cores};

pub fn gather() -> MachineInfo {
    let read = |path: &str| fs::read_to_string(path).ok();
    MachineInfo {
        cpu_brand: cpu_brand(),
        physical_cores: physical_cores(),
        caches: caches(),
        memory_bytes: read("/proc/meminfo").and_then(|m| mem_total(&m)),
        os: read("/etc/os-release").and_then(|r| pretty_name(&r)),
        kernel: read("/proc/sys/kernel/osrelease").map(|r| format!("Linux {}", r.trim())),
        ..MachineInfo::default()
    }
}

pub fn cpu_brand() -> Option<String> {
    brand_from_cpuinfo(&fs::read_to_string("/proc/cpuinfo").ok()?)
}

/// x86 (and some Arm kernels) name the CPU in `model name`; AArch64 kernels usually give only
/// the implementer and part numbers, which are decoded. A bare `ARMv8 Processor …` model name
/// says less than the decoded core, and so does a Raspberry Pi's `Model` line (the board), so
/// the decoded core wins over both.
pub fn brand_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    let field = |key: &str| {
        cpuinfo
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let model = field("model name").filter(|m| !m.starts_with("ARMv"));
    model
        .or_else(|| arm_cores::describe_cpuinfo(cpuinfo))
        .or_else(|| field("model name"))
        .or_else(|| field("Model"))
}

/// Distinct (package, core) pairs of sysfs topology.
fn physical_cores() -> Option<usize> {
    let mut cores = HashSet::new();
    for entry in fs::read_dir("/sys/devices/system/cpu").ok()?.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_cpu = name
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !is_cpu {
            continue;
        }
        let topology = entry.path().join("topology");
        let read = |f: &str| fs::read_to_string(topology.join(f)).ok();
        if let (Some(package), Some(core)) = (read("physical_package_id"), read("core_id")) {
            cores.insert((package.trim().to_owned(), core.trim().to_owned()));
        }
    }
    (!cores.is_empty()).then_some(cores.len())
}

/// cpu0's caches, from `cache/index*/{level,type,size}`.
fn caches() -> Vec<CacheInfo> {
    let Ok(entries) = fs::read_dir("/sys/devices/system/cpu/cpu0/cache") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let read = |f: &str| fs::read_to_string(entry.path().join(f)).ok();
        if let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
            && let (Ok(level), Some(size_bytes)) = (level.trim().parse(), parse_size(&size))
        {
            out.push(CacheInfo {
                level,
                kind: kind.trim().to_lowercase(),
                size_bytes,
            });
        }
    }
    out
}

/// sysfs cache sizes: `32K`, `1024K`, `32768K`, `8M`, or bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, scale) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.trim().parse::<u64>().ok().map(|n| n * scale)
}

/// `MemTotal:  16318712 kB` → bytes.
pub fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"` of os-release (else `NAME` and `VERSION_ID`).
pub fn pretty_name(os_release: &str) -> Option<String> {
    let field = |key: &str| {
        os_release
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_owned())
            .filter(|v| !v.is_empty())
    };
    field("PRETTY_NAME").or_else(|| match (field("NAME"), field("VERSION_ID")) {
        (Some(n), Some(v)) => Some(format!("{n} {v}")),
        (n, _) => n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_model_name() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14\n";
        assert_eq!(brand_from_cpuinfo(text).unwrap(), "AMD EPYC 9R14");
    }

    #[test]
    fn arm_without_model_name_is_decoded() {
        let text = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n";
        assert!(brand_from_cpuinfo(text).unwrap().contains("Neoverse V1"));
        let generic = "model name\t: ARMv8 Processor rev 1 (v8l)\nCPU implementer\t: 0x41\n\
            CPU part\t: 0xd08\n";
        assert!(brand_from_cpuinfo(generic).unwrap().contains("Cortex-A72"));
        assert_eq!(brand_from_cpuinfo("processor\t: 0\n"), None);
        let pi = "Model\t\t: Raspberry Pi 4 Model B\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n";
        assert!(brand_from_cpuinfo(pi).unwrap().contains("Cortex-A72"));
    }

    #[test]
    fn sysfs_and_proc_values() {
        assert_eq!(parse_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(
            mem_total("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            Some(24_576_000 * 1024)
        );
        let release = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            pretty_name(release).unwrap(),
            "Debian GNU/Linux 12 (bookworm)"
        );
        assert_eq!(
            pretty_name("NAME=Alpine\nVERSION_ID=3.19\n").unwrap(),
            "Alpine 3.19"
        );
    }
}
