//! `simdtok cpu`: the report's keys, the environment override, and loud failures on bad tiers.

use std::process::{Command, Output};

use simdtok::kernels::Tier;

fn simdtok(args: &[&str], tier_env: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_simdtok"));
    cmd.args(args).env_remove("SIMDTOK_TIER");
    if let Some(v) = tier_env {
        cmd.env("SIMDTOK_TIER", v);
    }
    cmd.output().expect("simdtok runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn names(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_str().expect("a string").to_owned())
        .collect()
}

#[test]
fn json_report_has_the_contract_keys() {
    let v = json(&simdtok(&["cpu", "--json"], None));
    assert_eq!(v["arch"], std::env::consts::ARCH);
    assert!(v["features"].is_array());
    let compiled = names(&v["compiled"]);
    let supported = names(&v["supported"]);
    assert!(compiled.contains(&"scalar".to_owned()));
    assert!(supported.iter().all(|t| compiled.contains(t)));
    assert_eq!(v["active"], Tier::best_supported().name());
    assert_eq!(v["source"], "detected");
    assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()));
}

#[test]
fn environment_forces_each_supported_tier() {
    for tier in Tier::supported() {
        let v = json(&simdtok(&["cpu", "--json"], Some(tier.name())));
        assert_eq!(v["active"], tier.name());
        assert_eq!(v["source"], "env");
    }
    let v = json(&simdtok(&["cpu", "--json"], Some("auto")));
    assert_eq!(v["source"], "detected");
}

#[test]
fn tier_option_is_an_api_override() {
    let v = json(&simdtok(
        &["cpu", "--json", "--tier", "scalar"],
        Some("bogus"),
    ));
    assert_eq!(v["active"], "scalar");
    assert_eq!(v["source"], "api");
}

#[test]
fn bad_tiers_fail_loudly() {
    let foreign = if cfg!(target_arch = "aarch64") {
        "avx2"
    } else {
        "neon"
    };
    for bad in ["avx3", "sse42", foreign] {
        let out = simdtok(&["cpu", "--json"], Some(bad));
        assert!(!out.status.success(), "SIMDTOK_TIER={bad} must fail");
        assert!(
            out.stdout.is_empty(),
            "nothing on stdout for SIMDTOK_TIER={bad}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("SIMDTOK_TIER") && err.contains(bad) && err.contains("scalar"),
            "{err}"
        );
    }
    let out = simdtok(&["cpu", "--tier", "avx3"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid tiers"));
}

#[test]
fn text_report_names_the_active_tier() {
    let out = simdtok(&["cpu"], Some("scalar"));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("active tier     scalar (env"), "{text}");
}
