//! Differential tests of every kernel on every tier: each SIMD tier against the scalar tier, and
//! the scalar tier against naive oracles, on generated inputs, at page boundaries, and under
//! property tests with fixed seeds.
//!
//! Test names read `<kernel>::<tier>::<check>`, e.g. `classify::avx2::matches_scalar`. A tier this
//! CPU (or this architecture) lacks is reported as ignored; listing it in
//! `SIMDTOK_REQUIRE_TIERS` (comma-separated, e.g. `avx2,sse4.2`) turns that into a failure, so CI
//! proves the tier really ran. `PROPTEST_CASES` sets the cases per seed (default 64).

mod checks;
mod fixtures;
mod guard;
mod inputs;
mod naive;

use libtest_mimic::{Arguments, Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use simdtok_kernels::{ClassSet, Kernels, Tier};

use checks::{KERNELS, Kernel, Reference, Tables};
use fixtures::{ClassFixture, FIXTURES, PruneFixture, Rng, random_spec};

fn standard_tables() -> Tables<'static> {
    Tables {
        classes: &FIXTURES.classes,
        prunes: &FIXTURES.prunes,
        tries: &FIXTURES.tries,
    }
}

/// `sse4.2` → `sse42`: test names are paths, and a dot would read as a separator.
fn test_name(tier: Tier) -> String {
    tier.name().replace('.', "")
}

fn reference_for(tier: Tier) -> Reference {
    if tier == Tier::Scalar {
        Reference::Naive
    } else {
        Reference::Scalar
    }
}

/// Every generated input, checked.
fn matches(kernel: &Kernel, k: &Kernels, r: Reference) -> Result<(), Failed> {
    let tables = standard_tables();
    let mut variant = 0usize;
    inputs::all(&mut |input, from| {
        variant += 1;
        (kernel.check)(k, r, tables, input, from, variant)
    })
    .map_err(Failed::from)
}

/// Inputs flush against a guard page on either side, every length 0..=300 and a whole page,
/// with every table.
fn page_boundaries(kernel: &Kernel, k: &Kernels, r: Reference) -> Result<(), Failed> {
    let tables = standard_tables();
    let mut page = guard::GuardedPage::new();
    let size = page.page_size();
    let text = inputs::mixed_text(size, 9);
    let mut lens: Vec<usize> = (0..=300).collect();
    lens.extend([size - 1, size]);
    let variants = FIXTURES
        .classes
        .len()
        .max(FIXTURES.prunes.len())
        .max(FIXTURES.tries.len());
    for len in lens {
        let mut needle = vec![b'a'; len];
        if let Some(last) = needle.last_mut() {
            *last = 0xE2;
        }
        for content in [&text[size - len..], &needle[..]] {
            for variant in 0..variants {
                let from = len / 2;
                let at_end = page.flush_end(content);
                (kernel.check)(k, r, tables, at_end, from, variant)?;
                let at_start = page.flush_start(content);
                (kernel.check)(k, r, tables, at_start, from, variant)?;
            }
        }
    }
    Ok(())
}

/// Random inputs, random class specifications and pruning tables, under fixed seeds.
fn property(kernel: &Kernel, k: &Kernels, r: Reference) -> Result<(), Failed> {
    const SEEDS: [u64; 4] = [1, 0x5EED, 0xC0FFEE, 0xDEAD_BEEF];
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let bytes = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..700),
        prop::collection::vec(
            prop_oneof![b'a'..=b'z', Just(b' '), Just(0xE2), any::<u8>()],
            0..700
        ),
    ];
    let strategy = (
        bytes,
        any::<u64>(),
        any::<u8>(),
        any::<u8>(),
        any::<prop::sample::Index>(),
        any::<usize>(),
    );
    for seed in SEEDS {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let config = Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner =
            TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
        runner
            .run(
                &strategy,
                |(input, table_seed, keep, set, from, variant)| {
                    let classes = [ClassFixture::new(
                        "random",
                        random_spec(table_seed),
                        ClassSet::from_bits(keep),
                        vec![ClassSet::from_bits(set)],
                    )];
                    let mut rng = Rng::new(table_seed);
                    let mut values = [0u8; 256];
                    for v in values.iter_mut() {
                        *v = if rng.below(3) == 0 { 0 } else { rng.byte() };
                    }
                    let prunes = [PruneFixture::new("random", values)];
                    let tables = Tables {
                        classes: &classes,
                        prunes: &prunes,
                        tries: &FIXTURES.tries,
                    };
                    let from = if input.is_empty() {
                        0
                    } else {
                        from.index(input.len() + 1)
                    };
                    (kernel.check)(k, r, tables, &input, from, variant).map_err(TestCaseError::fail)
                },
            )
            .map_err(|e| Failed::from(format!("seed {seed:#x}: {e}")))?;
    }
    Ok(())
}

/// Tiers named in `SIMDTOK_REQUIRE_TIERS`; an unknown name is an error, not a silent no-op.
fn required_tiers() -> Vec<Tier> {
    let Ok(value) = std::env::var("SIMDTOK_REQUIRE_TIERS") else {
        return Vec::new();
    };
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse().unwrap_or_else(|e| {
                eprintln!("SIMDTOK_REQUIRE_TIERS: {e}");
                std::process::exit(2)
            })
        })
        .collect()
}

type Body = fn(&Kernel, &Kernels, Reference) -> Result<(), Failed>;

fn main() {
    let args = Arguments::from_args();
    let required = required_tiers();
    let checks: [(&str, Body); 3] = [
        ("matches", matches),
        ("page_boundaries", page_boundaries),
        ("proptest", property),
    ];
    let mut trials = Vec::new();
    for kernel in KERNELS {
        for tier in Tier::ALL {
            for (check, body) in checks {
                let check = match (check, tier) {
                    ("matches", Tier::Scalar) => "matches_naive",
                    ("matches", _) => "matches_scalar",
                    (other, _) => other,
                };
                let name = format!("{}::{}::{}", kernel.name, test_name(tier), check);
                let reference = reference_for(tier);
                let trial = match Kernels::for_tier(tier) {
                    Some(k) => Trial::test(name, move || body(kernel, k, reference)),
                    None => {
                        let why = format!(
                            "tier {tier} cannot run here ({} build, missing: {})",
                            simdtok_kernels::cpu::ARCH,
                            tier.missing_features().join(", ")
                        );
                        if required.contains(&tier) {
                            Trial::test(name, move || {
                                Err(format!("SIMDTOK_REQUIRE_TIERS names it, but {why}").into())
                            })
                        } else {
                            // Reported as ignored = skipped; run with --ignored it fails, saying why.
                            Trial::test(name, move || Err(format!("skipped: {why}").into()))
                                .with_ignored_flag(true)
                        }
                    }
                };
                trials.push(trial);
            }
        }
    }
    let supported: Vec<&str> = Tier::supported().iter().map(|t| t.name()).collect();
    let skipped: Vec<&str> = Tier::ALL
        .iter()
        .filter(|t| !t.is_supported())
        .map(|t| t.name())
        .collect();
    if !args.list {
        println!(
            "tiers tested: {}; skipped (reported as ignored): {}",
            supported.join(", "),
            skipped.join(", ")
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
