//! Names of Arm cores from the `CPU implementer` and `CPU part` fields Linux shows in
//! `/proc/cpuinfo` on AArch64, where it gives no model name (the values of the MIDR register;
//! the table follows Linux's `arch/arm64/include/asm/cputype.h` and util-linux's `lscpu`).

/// The name of the core with this implementer and part number, with the chip it is best known
/// from where that helps (a Graviton is an `Neoverse` core to Linux); `None` when unknown.
pub fn core_name(implementer: u32, part: u32) -> Option<&'static str> {
    Some(match (implementer, part) {
        (0x41, 0xd03) => "Arm Cortex-A53",
        (0x41, 0xd04) => "Arm Cortex-A35",
        (0x41, 0xd05) => "Arm Cortex-A55",
        (0x41, 0xd07) => "Arm Cortex-A57",
        (0x41, 0xd08) => "Arm Cortex-A72 (e.g. AWS Graviton1, Raspberry Pi 4)",
        (0x41, 0xd09) => "Arm Cortex-A73",
        (0x41, 0xd0a) => "Arm Cortex-A75",
        (0x41, 0xd0b) => "Arm Cortex-A76 (e.g. Raspberry Pi 5)",
        (0x41, 0xd0c) => "Arm Neoverse N1 (e.g. AWS Graviton2, Ampere Altra)",
        (0x41, 0xd0d) => "Arm Cortex-A77",
        (0x41, 0xd40) => "Arm Neoverse V1 (e.g. AWS Graviton3)",
        (0x41, 0xd41) => "Arm Cortex-A78",
        (0x41, 0xd44) => "Arm Cortex-X1",
        (0x41, 0xd46) => "Arm Cortex-A510",
        (0x41, 0xd47) => "Arm Cortex-A710",
        (0x41, 0xd48) => "Arm Cortex-X2",
        (0x41, 0xd49) => "Arm Neoverse N2 (e.g. Azure Cobalt 100)",
        (0x41, 0xd4a) => "Arm Neoverse E1",
        (0x41, 0xd4b) => "Arm Cortex-A78C",
        (0x41, 0xd4d) => "Arm Cortex-A715",
        (0x41, 0xd4e) => "Arm Cortex-X3",
        (0x41, 0xd4f) => "Arm Neoverse V2 (e.g. AWS Graviton4, NVIDIA Grace, Google Axion)",
        (0x41, 0xd80) => "Arm Cortex-A520",
        (0x41, 0xd81) => "Arm Cortex-A720",
        (0x41, 0xd82) => "Arm Cortex-X4",
        (0x41, 0xd84) => "Arm Neoverse V3",
        (0x41, 0xd85) => "Arm Cortex-X925",
        (0x41, 0xd87) => "Arm Cortex-A725",
        (0x41, 0xd8e) => "Arm Neoverse N3",
        (0x46, 0x001) => "Fujitsu A64FX",
        (0x48, 0xd01) => "HiSilicon TaiShan v110 (Kunpeng 920)",
        (0x4e, 0x004) => "NVIDIA Carmel",
        (0x51, 0x001) => "Qualcomm Oryon",
        (0x51, 0x800 | 0x801) => "Qualcomm Kryo 2xx",
        (0x51, 0x802 | 0x803) => "Qualcomm Kryo 3xx",
        (0x51, 0x804 | 0x805) => "Qualcomm Kryo 4xx",
        // Apple cores as Asahi Linux reports them (efficiency / performance).
        (0x61, 0x022) => "Apple M1 Icestorm",
        (0x61, 0x023) => "Apple M1 Firestorm",
        (0x61, 0x024) => "Apple M1 Pro Icestorm",
        (0x61, 0x025) => "Apple M1 Pro Firestorm",
        (0x61, 0x028) => "Apple M1 Max Icestorm",
        (0x61, 0x029) => "Apple M1 Max Firestorm",
        (0x61, 0x032) => "Apple M2 Blizzard",
        (0x61, 0x033) => "Apple M2 Avalanche",
        (0x61, 0x034) => "Apple M2 Pro Blizzard",
        (0x61, 0x035) => "Apple M2 Pro Avalanche",
        (0x61, 0x038) => "Apple M2 Max Blizzard",
        (0x61, 0x039) => "Apple M2 Max Avalanche",
        (0xc0, 0xac3) => "Ampere AmpereOne",
        (0xc0, 0xac4) => "Ampere AmpereOne A",
        _ => return None,
    })
}

/// The CPU of an AArch64 `/proc/cpuinfo` without a model name: each distinct core type with its
/// count, biggest count first (`4× Arm Cortex-A76 (…) + 4× Arm Cortex-A55`); an unknown core as
/// its implementer and part. `None` when the text has no `CPU implementer`/`CPU part` pairs.
pub fn describe_cpuinfo(cpuinfo: &str) -> Option<String> {
    let mut cores: Vec<((u32, u32), usize)> = Vec::new();
    let mut implementer = None;
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = parse_hex(value.trim());
        match key.trim() {
            "CPU implementer" => implementer = value,
            "CPU part" => {
                if let (Some(i), Some(p)) = (implementer.take(), value) {
                    match cores.iter_mut().find(|(k, _)| *k == (i, p)) {
                        Some((_, n)) => *n += 1,
                        None => cores.push(((i, p), 1)),
                    }
                }
            }
            _ => {}
        }
    }
    if cores.is_empty() {
        return None;
    }
    // Stable: equal counts keep the order of first appearance.
    cores.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    let name = |(i, p): (u32, u32)| {
        core_name(i, p)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("Arm core (implementer {i:#04x}, part {p:#05x})"))
    };
    if cores.len() == 1 {
        return Some(name(cores[0].0));
    }
    let parts: Vec<String> = cores
        .iter()
        .map(|&(core, n)| format!("{n}× {}", name(core)))
        .collect();
    Some(parts.join(" + "))
}

fn parse_hex(s: &str) -> Option<u32> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAVITON2: &str = "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd crc32\n\
        CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\n\
        CPU revision\t: 1\n\nprocessor\t: 1\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";

    #[test]
    fn servers_are_named_with_their_chip() {
        let name = describe_cpuinfo(GRAVITON2).unwrap();
        assert!(name.starts_with("Arm Neoverse N1"), "{name}");
        assert!(name.contains("Graviton2"));
        assert!(core_name(0x41, 0xd40).unwrap().contains("Graviton3"));
        assert!(core_name(0x41, 0xd4f).unwrap().contains("Graviton4"));
        assert!(core_name(0x41, 0xd08).unwrap().contains("Cortex-A72"));
    }

    #[test]
    fn big_little_lists_each_core_type() {
        let mut text = String::new();
        for part in [
            "0xd05", "0xd05", "0xd05", "0xd05", "0xd0b", "0xd0b", "0xd44",
        ] {
            text.push_str(&format!("CPU implementer\t: 0x41\nCPU part\t: {part}\n\n"));
        }
        assert_eq!(
            describe_cpuinfo(&text).unwrap(),
            "4× Arm Cortex-A55 + 2× Arm Cortex-A76 (e.g. Raspberry Pi 5) + 1× Arm Cortex-X1"
        );
    }

    #[test]
    fn unknown_cores_show_their_ids() {
        let text = "CPU implementer\t: 0x99\nCPU part\t: 0x123\n";
        assert_eq!(
            describe_cpuinfo(text).unwrap(),
            "Arm core (implementer 0x99, part 0x123)"
        );
        assert_eq!(describe_cpuinfo("model name\t: AMD EPYC\n"), None);
    }
}
