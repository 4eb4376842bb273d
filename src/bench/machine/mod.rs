//! What machine a measurement ran on: CPU brand, cores, caches, memory, OS and kernel. Read from
//! the OS where it tells (`/proc` and sysfs on Linux, `sysctl` on macOS); whatever it does not
//! tell is `None` or empty, never a guess.

pub mod arm_cores;
#[cfg(any(target_os = "linux", target_os = "android", test))]
mod linux;
#[cfg(target_os = "macos")]
mod macos;

/// One cache level as the OS describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheInfo {
    /// 1, 2, 3, …
    pub level: u8,
    /// `data`, `instruction` or `unified`.
    pub kind: String,
    /// Size in bytes (of one instance: cpu0's).
    pub size_bytes: u64,
}

/// The machine's facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MachineInfo {
    /// The CPU model (`AMD EPYC 9R14 96-Core Processor`, `Apple M2 Pro`, `Arm Neoverse V1 …`).
    pub cpu_brand: Option<String>,
    /// Logical CPUs this process may run on.
    pub logical_cores: usize,
    /// Physical cores, where the OS tells.
    pub physical_cores: Option<usize>,
    /// Performance cores (Apple Silicon: `hw.perflevel0.physicalcpu`).
    pub performance_cores: Option<usize>,
    /// Efficiency cores (Apple Silicon: `hw.perflevel1.physicalcpu`).
    pub efficiency_cores: Option<usize>,
    /// Caches, by level then kind.
    pub caches: Vec<CacheInfo>,
    /// Installed memory in bytes.
    pub memory_bytes: Option<u64>,
    /// The OS release (`Debian GNU/Linux 12 (bookworm)`, `macOS 14.5`).
    pub os: Option<String>,
    /// The kernel (`Linux 6.1.0-18-amd64`, `Darwin 23.5.0`).
    pub kernel: Option<String>,
}

impl MachineInfo {
    /// Reads the facts of the machine this process runs on.
    pub fn gather() -> MachineInfo {
        let mut info = os_facts();
        info.logical_cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        info.caches
            .sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
        info
    }

    /// The caches in one line: `L1d 32 KiB · L1i 32 KiB · L2 512 KiB · L3 32 MiB`.
    pub fn caches_line(&self) -> String {
        caches_line(
            self.caches
                .iter()
                .map(|c| (c.level, c.kind.as_str(), c.size_bytes)),
        )
    }

    /// Cores in words: `2 logical`, `16 logical, 8 physical`, `12 logical (8 performance + 4
    /// efficiency)`.
    pub fn cores_line(&self) -> String {
        let mut out = format!("{} logical", self.logical_cores);
        if let Some(p) = self.physical_cores {
            out.push_str(&format!(", {p} physical"));
        }
        if let (Some(p), Some(e)) = (self.performance_cores, self.efficiency_cores) {
            out.push_str(&format!(" ({p} performance + {e} efficiency)"));
        }
        out
    }
}

/// `n` bytes as `512 B`, `32 KiB`, `1.5 MiB`, `16 GiB`.
pub fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn os_facts() -> MachineInfo {
    linux::gather()
}

#[cfg(target_os = "macos")]
fn os_facts() -> MachineInfo {
    macos::gather()
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
fn os_facts() -> MachineInfo {
    MachineInfo {
        os: Some(std::env::consts::OS.to_owned()),
        ..MachineInfo::default()
    }
}

/// The CPU model, where the OS tells it (what `simdtok cpu` shows).
pub fn cpu_brand() -> Option<String> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        linux::cpu_brand()
    }
    #[cfg(target_os = "macos")]
    {
        macos::cpu_brand()
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
    {
        None
    }
}

/// Caches given as `(level, kind, bytes)` in one line: `L1d 32 KiB · L2 512 KiB · L3 32 MiB`
/// (for this machine's facts and for a report's, which keep them in their own type).
pub fn caches_line<'a>(caches: impl Iterator<Item = (u8, &'a str, u64)>) -> String {
    caches
        .map(|(level, kind, size)| {
            let kind = match kind {
                "data" => "d",
                "instruction" => "i",
                _ => "",
            };
            format!("L{level}{kind} {}", format_bytes(size))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes_read_naturally() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(32 << 10), "32 KiB");
        assert_eq!(format_bytes(1536 << 10), "1.5 MiB");
        assert_eq!(format_bytes(16 << 30), "16 GiB");
    }

    #[test]
    fn this_machine_has_cores() {
        let info = MachineInfo::gather();
        assert!(info.logical_cores >= 1);
        assert!(!info.cores_line().is_empty());
    }
}
