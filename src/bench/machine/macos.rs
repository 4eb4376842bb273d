//! macOS: `sysctl` (brand string, performance/efficiency core split, caches, memory, release).

use std::process::Command;

use super::{CacheInfo, MachineInfo};

/// `sysctl -n NAME`, trimmed; `None` when the name does not exist (e.g. `hw.perflevel1.*` on an
/// Intel Mac) or sysctl cannot run.
fn sysctl(name: &str) -> Option<String> {
    let out = Command::new("sysctl").arg("-n").arg(name).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn sysctl_u64(name: &str) -> Option<u64> {
    sysctl(name)?.parse().ok().filter(|&n| n > 0)
}

pub fn cpu_brand() -> Option<String> {
    sysctl("machdep.cpu.brand_string")
}

pub fn gather() -> MachineInfo {
    let mut caches = Vec::new();
    for (name, level, kind) in [
        ("hw.l1dcachesize", 1, "data"),
        ("hw.l1icachesize", 1, "instruction"),
        ("hw.l2cachesize", 2, "unified"),
        ("hw.l3cachesize", 3, "unified"),
    ] {
        // Apple Silicon reports the performance cores' caches here; perflevel0 is the same.
        let size = sysctl_u64(&name.replace("hw.", "hw.perflevel0.")).or_else(|| sysctl_u64(name));
        if let Some(size_bytes) = size {
            caches.push(CacheInfo {
                level,
                kind: kind.to_owned(),
                size_bytes,
            });
        }
    }
    let os = sysctl("kern.osproductversion").map(|v| format!("macOS {v}"));
    MachineInfo {
        cpu_brand: cpu_brand(),
        physical_cores: sysctl_u64("hw.physicalcpu").map(|n| n as usize),
        performance_cores: sysctl_u64("hw.perflevel0.physicalcpu").map(|n| n as usize),
        efficiency_cores: sysctl_u64("hw.perflevel1.physicalcpu").map(|n| n as usize),
        caches,
        memory_bytes: sysctl_u64("hw.memsize"),
        os,
        kernel: sysctl("kern.osrelease").map(|r| format!("Darwin {r}")),
        ..MachineInfo::default()
    }
}
