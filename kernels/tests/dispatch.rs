//! Dispatch: the environment variable is honoured, bad values fail loudly, the API override wins,
//! and detection picks what `SIMDTOK_EXPECT_DETECTED` says (CI sets it when running this binary
//! under emulated CPUs: `sse4.2` under QEMU's Nehalem model, `neon` under qemu-aarch64).
//!
//! The environment is read once per process, so these tests compare the cached choice with a
//! fresh resolution of the same value; CI runs this binary with several `SIMDTOK_TIER` values, and
//! the CLI tests spawn `simdtok cpu` with good and bad ones.

use std::sync::Mutex;

use simdtok_kernels::{
    Choice, DispatchError, Kernels, Source, TIER_ENV, Tier, TierRequest, choose_from_env,
};

/// The API override is process-wide: tests that read or set it take turns.
static ACTIVE: Mutex<()> = Mutex::new(());

#[test]
fn active_choice_follows_the_environment() {
    let _turn = ACTIVE.lock().unwrap_or_else(|e| e.into_inner());
    let value = std::env::var(TIER_ENV).ok();
    let expected = choose_from_env(value.as_deref());
    let active = Kernels::active_choice();
    assert_eq!(active, expected, "{TIER_ENV}={value:?}");
    match (value.as_deref().map(str::trim), &expected) {
        (None | Some("" | "auto"), Ok(c)) => assert_eq!(c.source, Source::Detected),
        (Some(_), Ok(c)) => {
            assert_eq!(c.source, Source::Env);
            assert_eq!(
                c.tier.name(),
                value.as_deref().unwrap().trim().to_ascii_lowercase()
            );
        }
        (Some(v), Err(e)) => {
            let msg = e.to_string();
            assert!(
                msg.contains(TIER_ENV) && msg.contains("scalar"),
                "unhelpful error for {v:?}: {msg}"
            );
            assert!(Kernels::active().is_err());
        }
        (None, Err(e)) => panic!("detection cannot fail: {e}"),
    }
}

#[test]
fn api_override_wins_and_can_be_cleared() {
    let _turn = ACTIVE.lock().unwrap_or_else(|e| e.into_inner());
    let before = Kernels::active_choice();
    for tier in Tier::supported() {
        let k = Kernels::force(TierRequest::Exactly(tier)).expect("supported");
        assert_eq!(k.tier(), tier);
        assert_eq!(
            Kernels::active_choice(),
            Ok(Choice {
                tier,
                source: Source::Api
            })
        );
        assert_eq!(Kernels::active().unwrap().tier(), tier);
    }
    // A tier of another architecture is refused and leaves the override as it was.
    let foreign = if cfg!(target_arch = "aarch64") {
        Tier::Avx2
    } else {
        Tier::Neon
    };
    let last = Kernels::active_choice();
    let err = Kernels::force(TierRequest::Exactly(foreign)).unwrap_err();
    assert!(matches!(err, DispatchError::NotCompiled { .. }), "{err}");
    assert_eq!(Kernels::active_choice(), last);
    Kernels::clear_forced();
    assert_eq!(Kernels::active_choice(), before);
}

#[test]
fn request_resolves_without_changing_the_active_choice() {
    let _turn = ACTIVE.lock().unwrap_or_else(|e| e.into_inner());
    let before = Kernels::active_choice();
    assert_eq!(
        Kernels::request(TierRequest::Auto).unwrap().tier(),
        Tier::best_supported()
    );
    assert_eq!(
        Kernels::request(TierRequest::Exactly(Tier::Scalar))
            .unwrap()
            .tier(),
        Tier::Scalar
    );
    for tier in Tier::ALL {
        assert_eq!(
            Kernels::request(TierRequest::Exactly(tier)).is_ok(),
            tier.is_supported()
        );
        assert_eq!(Kernels::for_tier(tier).is_some(), tier.is_supported());
    }
    assert_eq!(Kernels::active_choice(), before);
}

#[test]
fn detected_tier_is_expected() {
    let best = Tier::best_supported();
    assert!(best.is_supported());
    assert!(Tier::supported().iter().all(|&t| t <= best));
    if let Ok(expected) = std::env::var("SIMDTOK_EXPECT_DETECTED") {
        assert_eq!(
            best.name(),
            expected.trim(),
            "detected features: {:?}",
            simdtok_kernels::cpu::detected_features()
        );
        assert_eq!(
            choose_from_env(None).unwrap(),
            Choice {
                tier: best,
                source: Source::Detected
            }
        );
    }
}
