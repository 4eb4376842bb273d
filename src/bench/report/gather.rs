//! Making one machine's report: the machine's facts, then every kernel case and every model's
//! encode on every tier, within a time budget shared out as the run goes.
//!
//! The budget is divided by weight among the measurements still to come, each time one starts,
//! so an overrun early (a slow model load) is absorbed by the later ones instead of
//! accumulating. An encode configuration weighs [`ENCODE_WEIGHT`] kernel cases: a pass over the
//! corpus takes milliseconds, and its median needs several. Every measurement takes at least
//! one sample however small the budget, so the report always has every row. The tiers of a
//! kernel case are sampled in turns (as an encode's configurations take turns), so that a busy
//! moment on a shared machine does not fall on one tier alone.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use simdtok_kernels::{Kernels, Tier, cpu};

use super::schema::{self, Cache, Machine, Report, Row, Run, Tool};
use crate::bench::build_info;
use crate::bench::corpus::{Corpus, ModelSpec};
use crate::bench::encode::{EncodeMeasurement, PassIds, PassPlan, measure_model};
use crate::bench::error::BenchError;
use crate::bench::inputs::InputDigest;
use crate::bench::kernel_cases::{self, KernelCase};
use crate::bench::machine::MachineInfo;
use crate::bench::sampler::{SampleSpec, sample_interleaved};
use crate::bench::stats::{Summary, round_significant};
use crate::bench::utc;

/// An encode configuration's share of the budget, in kernel cases.
pub const ENCODE_WEIGHT: u32 = 4;
/// Most timed passes of one encode configuration.
const MAX_PASSES: usize = 100;
/// Most samples of one kernel case.
const MAX_SAMPLES: usize = 50;

/// What to measure.
#[derive(Debug)]
pub struct ReportOptions {
    /// The time to aim for (the run takes a little longer: loading models, warm-ups).
    pub budget: Duration,
    /// The column name in comparisons; `None` for the CPU brand.
    pub label: Option<String>,
    /// The models.
    pub models: Vec<ModelSpec>,
    /// The corpus files.
    pub corpus: Vec<PathBuf>,
    /// The tiers (scalar included).
    pub tiers: Vec<Tier>,
    /// Thread counts of the encode rows (`[1, all]`).
    pub threads: Vec<usize>,
}

/// Shares out a time budget by weight.
struct Budget {
    deadline: Instant,
    weight_left: u32,
}

impl Budget {
    /// The time for a measurement of weight `w`: its share of what is left.
    fn take(&mut self, w: u32) -> Duration {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let share = left.mul_f64(f64::from(w) / f64::from(self.weight_left.max(w)));
        self.weight_left = self.weight_left.saturating_sub(w);
        share
    }
}

/// Runs everything; `progress` hears each step (`classify 64 B`, `gpt2`…).
pub fn gather(
    options: &ReportOptions,
    mut progress: impl FnMut(&str),
) -> Result<Report, BenchError> {
    let started = Instant::now();
    let started_utc = utc::format_utc(SystemTime::now());
    // First: an invalid SIMDTOK_TIER fails before anything is measured.
    let machine = machine_facts()?;
    let corpus = Corpus::load(&options.corpus)?;
    if corpus.is_empty() {
        return Err(BenchError::Invalid(
            "the input has no text to encode".into(),
        ));
    }
    let mut inputs: Vec<InputDigest> = Vec::new();
    for model in &options.models {
        inputs.extend(model.digests()?);
    }
    inputs.extend(corpus.files.iter().cloned());
    progress("generating the kernel inputs");
    inputs.extend(kernel_cases::input_digests());
    let mut cases = kernel_cases::cases();

    let configs = (options.tiers.len() * options.threads.len()) as u32;
    let mut budget = Budget {
        deadline: started + options.budget,
        weight_left: cases.len() as u32 * options.tiers.len() as u32
            + options.models.len() as u32 * configs * ENCODE_WEIGHT,
    };
    let mut results = Vec::new();
    for case in &mut cases {
        progress(&format!(
            "{} {}",
            case.name,
            crate::bench::units::size(case.size as u64)
        ));
        results.extend(measure_case(case, &options.tiers, &mut budget));
    }
    let corpus_names: Vec<String> = corpus.files.iter().map(|f| f.name.clone()).collect();
    for model in &options.models {
        progress(&model.label);
        let time = budget.take(configs * ENCODE_WEIGHT);
        // Warm-ups and loading come out of the slice too.
        let plan = PassPlan {
            min_passes: 1,
            max_passes: MAX_PASSES,
            time_per_config: time.mul_f64(0.8) / configs.max(1),
        };
        let measured = measure_model(
            model,
            &corpus,
            &options.tiers,
            &options.threads,
            &plan,
            PassIds::Discard,
            crate::CacheBudget::DEFAULT,
        )?;
        let mut names: Vec<String> = model.files().into_iter().map(|(n, _)| n).collect();
        names.extend(corpus_names.iter().cloned());
        let kind = model.kind().map_or("unknown", |k| k.name());
        results.extend(encode_rows(&model.label, kind, &names, measured));
    }
    set_vs_scalar(&mut results);

    let samples = results.iter().map(|r| r.samples_ns.len());
    let run = Run {
        started_utc,
        elapsed_s: round_significant(started.elapsed().as_secs_f64(), 6),
        budget_s: options.budget.as_secs_f64(),
        threads: options.threads.iter().copied().max().unwrap_or(1),
        tiers: options.tiers.iter().map(|t| t.name().to_owned()).collect(),
        min_samples: samples.clone().min().unwrap_or(0),
        max_samples: samples.max().unwrap_or(0),
    };
    let label = options
        .label
        .clone()
        .or_else(|| machine.cpu_brand.clone())
        .unwrap_or_else(|| machine.arch.clone());
    Ok(Report {
        schema_version: schema::SCHEMA_VERSION,
        kind: schema::KIND_REPORT.to_owned(),
        label,
        tool: tool(),
        machine,
        run,
        inputs,
        results,
    })
}

/// The binary's facts.
pub fn tool() -> Tool {
    Tool {
        name: "simdtok".to_owned(),
        version: build_info::VERSION.to_owned(),
        git_commit: build_info::GIT_COMMIT.to_owned(),
        rustc: build_info::RUSTC.to_owned(),
        target: build_info::TARGET.to_owned(),
        profile: build_info::PROFILE.to_owned(),
        compiled_tiers: build_info::compiled_tiers(),
    }
}

/// The machine's facts, with the tiers and the active one (an invalid `SIMDTOK_TIER` is an
/// error, as everywhere).
pub fn machine_facts() -> Result<Machine, BenchError> {
    let info = MachineInfo::gather();
    let choice = Kernels::active_choice().map_err(|e| BenchError::Tier(e.to_string()))?;
    Ok(Machine {
        cpu_brand: info.cpu_brand,
        arch: cpu::ARCH.to_owned(),
        logical_cores: info.logical_cores,
        physical_cores: info.physical_cores,
        performance_cores: info.performance_cores,
        efficiency_cores: info.efficiency_cores,
        caches: info
            .caches
            .into_iter()
            .map(|c| Cache {
                level: c.level,
                kind: c.kind,
                size_bytes: c.size_bytes,
            })
            .collect(),
        memory_bytes: info.memory_bytes,
        os: info.os,
        kernel: info.kernel,
        features: cpu::detected_features()
            .into_iter()
            .map(str::to_owned)
            .collect(),
        supported_tiers: Tier::supported()
            .into_iter()
            .map(|t| t.name().to_owned())
            .collect(),
        active_tier: choice.tier.name().to_owned(),
        active_reason: choice.reason(),
    })
}

/// One case on every tier, sampled in turns: its rows, each checked against scalar's result.
fn measure_case(case: &mut KernelCase, tiers: &[Tier], budget: &mut Budget) -> Vec<Row> {
    let expected = case.fingerprint(Kernels::scalar());
    let kernels: Vec<&'static Kernels> =
        tiers.iter().filter_map(|&t| Kernels::for_tier(t)).collect();
    let equal: Vec<bool> = kernels
        .iter()
        .map(|k| case.fingerprint(k) == expected)
        .collect();
    let spec = SampleSpec {
        slice: budget.take(kernels.len() as u32),
        min_samples: 1,
        max_samples: MAX_SAMPLES,
    };
    let sampled = sample_interleaved(&spec, kernels.len(), |i| case.run(kernels[i]));
    kernels
        .iter()
        .zip(sampled)
        .zip(equal)
        .map(|((k, sampled), equal)| {
            let mut row = row(
                "kernel",
                case.family,
                case.name,
                case.size as u64,
                k.tier(),
                1,
                sampled.iterations,
                sampled.samples_ns,
            );
            row.inputs = case.inputs.iter().map(|s| (*s).to_owned()).collect();
            row.equal_to_scalar = equal;
            row
        })
        .collect()
}

/// The rows of one model's measurements.
fn encode_rows(
    label: &str,
    kind: &str,
    inputs: &[String],
    measured: Vec<EncodeMeasurement>,
) -> Vec<Row> {
    let reference = measured
        .iter()
        .find(|m| m.tier == Tier::Scalar && m.threads == 1)
        .map(|m| m.ids_sha256.clone());
    measured
        .into_iter()
        .map(|m| {
            let samples = if m.samples_ns.is_empty() {
                vec![m.warmup_ns]
            } else {
                m.samples_ns
            };
            let mut row = row(
                "encode", kind, label, m.bytes, m.tier, m.threads, 1, samples,
            );
            let secs = row.median_ns.max(1.0) / 1e9;
            row.inputs = inputs.to_vec();
            row.tokens = Some(m.tokens);
            row.tokens_per_s = Some(round_significant(m.tokens as f64 / secs, 6));
            row.equal_to_scalar = reference.as_ref() == Some(&m.ids_sha256);
            row.ids_sha256 = Some(m.ids_sha256);
            row
        })
        .collect()
}

/// A row with its summary; inputs, tokens and the scalar comparison are filled in after.
#[allow(clippy::too_many_arguments)]
fn row(
    bench: &str,
    family: &str,
    name: &str,
    size: u64,
    tier: Tier,
    threads: usize,
    iterations: u64,
    samples_ns: Vec<u64>,
) -> Row {
    let per_iteration: Vec<f64> = samples_ns
        .iter()
        .map(|&ns| ns as f64 / iterations as f64)
        .collect();
    let s = Summary::of(&per_iteration).unwrap_or(Summary {
        min: 0.0,
        q1: 0.0,
        median: 0.0,
        q3: 0.0,
        max: 0.0,
    });
    let r = |x: f64| round_significant(x, 6);
    Row {
        bench: bench.to_owned(),
        family: family.to_owned(),
        name: name.to_owned(),
        size,
        tier: tier.name().to_owned(),
        threads,
        inputs: Vec::new(),
        iterations,
        samples_ns,
        median_ns: r(s.median),
        min_ns: r(s.min),
        max_ns: r(s.max),
        q1_ns: r(s.q1),
        q3_ns: r(s.q3),
        bytes_per_s: r(size as f64 / (s.median.max(1e-3) / 1e9)),
        tokens: None,
        tokens_per_s: None,
        vs_scalar: None,
        equal_to_scalar: false,
        ids_sha256: None,
    }
}

/// Each row's throughput over the scalar row of the same bench, name, size and threads.
pub fn set_vs_scalar(rows: &mut [Row]) {
    let scalar: Vec<(schema::RowKey, f64)> = rows
        .iter()
        .filter(|r| r.tier == Tier::Scalar.name())
        .map(|r| (r.key(), r.bytes_per_s))
        .collect();
    for row in rows.iter_mut() {
        let mut key = row.key();
        key.tier = Tier::Scalar.name().to_owned();
        row.vs_scalar = scalar
            .iter()
            .find(|(k, _)| *k == key)
            .filter(|(_, s)| *s > 0.0)
            .map(|(_, s)| round_significant(row.bytes_per_s / s, 6));
    }
}
