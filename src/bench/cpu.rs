//! What `simdtok cpu` reports: the architecture, the CPU's features, the tiers compiled into this
//! build and supported by this CPU, and which tier is active and why.

use serde_json::json;

use crate::kernels::{Choice, DispatchError, Kernels, Tier, cpu};

/// The facts behind `simdtok cpu`.
#[derive(Clone, Debug)]
pub struct CpuReport {
    /// `x86_64`, `aarch64`, …
    pub arch: &'static str,
    /// The CPU model name, where the OS tells it.
    pub model: Option<String>,
    /// Detected features (of those simdtok knows how to ask about).
    pub features: Vec<&'static str>,
    /// Tiers compiled into this build.
    pub compiled: Vec<Tier>,
    /// Tiers this CPU can run.
    pub supported: Vec<Tier>,
    /// The active tier and why.
    pub active: Choice,
}

impl CpuReport {
    /// Gathers the report; fails when `SIMDTOK_TIER` (or an API override) asks for a tier that
    /// cannot run.
    pub fn gather() -> Result<CpuReport, DispatchError> {
        Ok(CpuReport {
            arch: cpu::ARCH,
            model: crate::bench::machine::cpu_brand(),
            features: cpu::detected_features(),
            compiled: Tier::compiled(),
            supported: Tier::supported(),
            active: Kernels::active_choice()?,
        })
    }

    /// One JSON object: `arch`, `model`, `features`, `compiled`, `supported`, `active`, `source`,
    /// `reason`.
    pub fn to_json(&self) -> serde_json::Value {
        let names = |tiers: &[Tier]| tiers.iter().map(|t| t.name()).collect::<Vec<_>>();
        json!({
            "arch": self.arch,
            "model": self.model,
            "features": self.features,
            "compiled": names(&self.compiled),
            "supported": names(&self.supported),
            "active": self.active.tier.name(),
            "source": self.active.source.name(),
            "reason": self.active.reason(),
        })
    }

    /// The human-readable form.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let line = |out: &mut String, k: &str, v: &str| out.push_str(&format!("{k:<15} {v}\n"));
        line(&mut out, "architecture", self.arch);
        if let Some(model) = &self.model {
            line(&mut out, "cpu", model);
        }
        line(&mut out, "features", &self.features.join(" "));
        let names = |tiers: &[Tier]| tiers.iter().map(|t| t.name()).collect::<Vec<_>>().join(" ");
        line(&mut out, "compiled tiers", &names(&self.compiled));
        line(&mut out, "supported", &names(&self.supported));
        line(
            &mut out,
            "active tier",
            &format!(
                "{} ({}: {})",
                self.active.tier,
                self.active.source,
                self.active.reason()
            ),
        );
        out.push_str("tiers:\n");
        for tier in Tier::ALL {
            let needs = tier.required_features().join(" ");
            let status = if !tier.is_compiled() {
                format!("not compiled for {}", self.arch)
            } else if tier.is_supported() {
                "supported".to_owned()
            } else {
                format!("unsupported: missing {}", tier.missing_features().join(" "))
            };
            let needs = if needs.is_empty() {
                String::new()
            } else {
                format!(" (needs {needs})")
            };
            out.push_str(&format!("  {:<8} {status}{needs}\n", tier.name()));
        }
        out.push_str("force a tier with SIMDTOK_TIER=scalar|sse4.2|avx2|neon|auto\n");
        out
    }
}
