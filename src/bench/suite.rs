//! `simdtok bench`'s measurement: every model × tier × thread count over one corpus, as rows
//! with throughput, the speed-up over the scalar tier, and whether the ids equal scalar's.

use simdtok_kernels::Tier;

use super::corpus::{Corpus, ModelSpec};
use super::encode::{EncodeMeasurement, PassIds, PassPlan, measure_model};
use super::error::BenchError;
use super::stats::Summary;
use crate::CacheBudget;

/// What to measure.
#[derive(Debug)]
pub struct BenchConfig {
    /// The models.
    pub models: Vec<ModelSpec>,
    /// The texts.
    pub corpus: Corpus,
    /// The tiers, scalar first (see [`tiers_with_scalar`]).
    pub tiers: Vec<Tier>,
    /// Thread counts (see [`thread_counts`]).
    pub threads: Vec<usize>,
    /// Timed passes per configuration.
    pub plan: PassPlan,
    /// What a timed pass does with its ids.
    pub pass_ids: PassIds,
    /// The memory each worker's caches may hold.
    pub cache_budget: CacheBudget,
}

/// One model × tier × thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    /// The model's label.
    pub model: String,
    /// Its kind, as the loader names it (`SentencePiece`, `vocab.txt`, …).
    pub kind: String,
    /// What was measured, with the raw samples.
    pub measurement: EncodeMeasurement,
    /// Nanoseconds per pass: summary of the timed passes (of the warm-up when there were none).
    pub summary: Summary,
    /// Text bytes per second (median pass).
    pub bytes_per_s: f64,
    /// Tokens per second (median pass).
    pub tokens_per_s: f64,
    /// Throughput over the scalar tier's at the same thread count.
    pub vs_scalar: Option<f64>,
    /// Whether the ids equal the scalar tier's on one thread.
    pub ids_equal: bool,
}

/// The tiers to run: the requested ones (all this CPU supports when empty), in order of
/// preference, always with scalar — the reference for ids and speed-ups.
pub fn tiers_with_scalar(requested: &[Tier]) -> Result<Vec<Tier>, BenchError> {
    let supported = Tier::supported();
    for tier in requested {
        if !supported.contains(tier) {
            let names: Vec<&str> = supported.iter().map(|t| t.name()).collect();
            return Err(BenchError::Tier(format!(
                "tier {tier} is not supported by this CPU (supported: {})",
                names.join(", ")
            )));
        }
    }
    Ok(supported
        .into_iter()
        .filter(|t| *t == Tier::Scalar || requested.is_empty() || requested.contains(t))
        .collect())
}

/// One thread and `all` threads (just one when `all` is 1); `all` of `None` is every core.
pub fn thread_counts(all: Option<usize>) -> Vec<usize> {
    let all = all.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if all <= 1 { vec![1] } else { vec![1, all] }
}

/// Runs the measurement; `on_model` sees each model's rows as soon as they are measured.
pub fn run(
    config: &BenchConfig,
    mut on_model: impl FnMut(&[BenchRow]),
) -> Result<Vec<BenchRow>, BenchError> {
    if config.corpus.is_empty() {
        return Err(BenchError::Invalid(
            "the input has no text to encode".into(),
        ));
    }
    let mut rows = Vec::new();
    for model in &config.models {
        let measured = measure_model(
            model,
            &config.corpus,
            &config.tiers,
            &config.threads,
            &config.plan,
            config.pass_ids,
            config.cache_budget,
        )?;
        let kind = model.kind().map_or("unknown", |k| k.name()).to_owned();
        let model_rows = rows_of(&model.label, &kind, measured);
        on_model(&model_rows);
        rows.extend(model_rows);
    }
    Ok(rows)
}

/// Rows of one model, ordered by thread count then tier, compared with scalar.
pub fn rows_of(model: &str, kind: &str, mut measured: Vec<EncodeMeasurement>) -> Vec<BenchRow> {
    measured.sort_by_key(|m| (m.threads, m.tier));
    let reference = measured
        .iter()
        .find(|m| m.tier == Tier::Scalar && m.threads == 1)
        .map(|m| m.ids_sha256.clone());
    let mut rows: Vec<BenchRow> = measured
        .into_iter()
        .map(|m| {
            let samples: Vec<f64> = if m.samples_ns.is_empty() {
                vec![m.warmup_ns as f64]
            } else {
                m.samples_ns.iter().map(|&n| n as f64).collect()
            };
            let summary = Summary::of(&samples).expect("at least one sample");
            let secs = summary.median.max(1.0) / 1e9;
            BenchRow {
                model: model.to_owned(),
                kind: kind.to_owned(),
                bytes_per_s: m.bytes as f64 / secs,
                tokens_per_s: m.tokens as f64 / secs,
                ids_equal: reference.as_ref() == Some(&m.ids_sha256),
                measurement: m,
                summary,
                vs_scalar: None,
            }
        })
        .collect();
    let scalar: Vec<(usize, f64)> = rows
        .iter()
        .filter(|r| r.measurement.tier == Tier::Scalar)
        .map(|r| (r.measurement.threads, r.bytes_per_s))
        .collect();
    for row in &mut rows {
        row.vs_scalar = scalar
            .iter()
            .find(|(n, _)| *n == row.measurement.threads)
            .map(|(_, s)| row.bytes_per_s / s);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_always_runs() {
        assert_eq!(tiers_with_scalar(&[]).unwrap(), Tier::supported());
        let best = Tier::best_supported();
        let tiers = tiers_with_scalar(&[best]).unwrap();
        assert_eq!(tiers[0], Tier::Scalar);
        assert_eq!(*tiers.last().unwrap(), best);
        let foreign = if cfg!(target_arch = "aarch64") {
            Tier::Avx2
        } else {
            Tier::Neon
        };
        let err = tiers_with_scalar(&[foreign]).unwrap_err().to_string();
        assert!(err.contains("not supported"), "{err}");
    }

    #[test]
    fn thread_counts_are_one_and_all() {
        assert_eq!(thread_counts(Some(1)), [1]);
        assert_eq!(thread_counts(Some(8)), [1, 8]);
        assert_eq!(thread_counts(None)[0], 1);
    }
}
