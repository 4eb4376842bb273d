//! `simdtok bench`: one row per model × tier × thread count, every tier's ids equal to scalar's,
//! and clear failures on bad options. Quick mode (`--passes 1`, a tiny input): timings are not
//! checked, only the shape and the ids.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use simdtok::kernels::Tier;

fn simdtok(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_simdtok"))
        .args(args)
        .env_remove("SIMDTOK_TIER")
        .output()
        .expect("simdtok runs")
}

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
        .display()
        .to_string()
}

/// A small file of texts in the test's own scratch directory.
fn tiny_input(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(
        &path,
        "I am a cat. As yet I have no name.\n吾輩は猫である。名前はまだ無い。\n\
         def f(x):\n    return x + 1\n\nThe end.\n",
    )
    .unwrap();
    path
}

/// The stdout of `simdtok` with `args` then `extra`, which must succeed.
fn bench_ok(args: &[&str], extra: &[&str]) -> Vec<u8> {
    let all: Vec<&str> = args.iter().chain(extra).copied().collect();
    let out = simdtok(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

const MODELS: [&str; 3] = [
    "sentencepiece/botchan_en_unigram_1000.model",
    "wordpiece/bert-base-uncased.vocab.txt",
    "bpe/encoder.json",
];

#[test]
fn table_has_a_row_per_model_tier_and_thread_count() {
    let input = tiny_input("table.txt");
    let mut args = vec!["bench", "--passes", "1", "--threads", "2"];
    let models: Vec<String> = MODELS.iter().map(|m| data(m)).collect();
    for m in &models {
        args.extend(["--model", m]);
    }
    let input = input.display().to_string();
    args.extend(["--input", &input]);
    let out = simdtok(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tiers = Tier::supported();
    // Data rows: those ending with the ids check, with a tier in the tier column.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.ends_with('✓') || l.ends_with("✗ differ"))
        .filter(|l| {
            l.split_whitespace()
                .any(|w| tiers.iter().any(|t| t.name() == w))
        })
        .collect();
    assert_eq!(rows.len(), MODELS.len() * tiers.len() * 2, "{stdout}");
    assert!(rows.iter().all(|r| r.contains('✓')), "{stdout}");
    for name in [
        "botchan_en_unigram_1000.model",
        "bert-base-uncased.vocab.txt",
        "encoder.json",
    ] {
        assert!(stdout.contains(name), "{name} is labelled: {stdout}");
    }
    assert!(stdout.contains("✓ ids: all"), "{stdout}");
}

#[test]
fn json_rows_cover_every_configuration() {
    let input = tiny_input("json.txt");
    let model = data(MODELS[0]);
    let out = simdtok(&[
        "bench",
        "--json",
        "--passes",
        "2",
        "--threads",
        "3",
        "--model",
        &model,
        "--input",
        &input.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), Tier::supported().len() * 2);
    assert_eq!(v["ids_equal"], true);
    for row in rows {
        assert_eq!(row["samples_ns"].as_array().unwrap().len(), 2);
        assert_eq!(row["ids_equal"], true);
        assert_eq!(row["ids_sha256"], rows[0]["ids_sha256"]);
        assert!(row["tokens"].as_u64().unwrap() > 10);
        assert!([1, 3].contains(&row["threads"].as_u64().unwrap()));
    }
}

#[test]
fn keeping_every_id_measures_the_same_ids_and_says_so() {
    let input = tiny_input("keep.txt");
    let input = input.display().to_string();
    let model = data(MODELS[0]);
    let run = |extra: &[&str]| {
        let args = [
            "bench", "--passes", "2", "--model", &model, "--input", &input,
        ];
        bench_ok(&args, extra)
    };
    let json = |stdout: Vec<u8>| -> serde_json::Value {
        serde_json::from_slice(&stdout).expect("one JSON object")
    };
    let kept = json(run(&["--json", "--keep-ids"]));
    let reused = json(run(&["--json"]));
    assert_eq!(kept["keep_ids"], true);
    assert_eq!(reused["keep_ids"], false);
    assert_eq!(kept["ids_equal"], true);
    assert_eq!(
        kept["rows"][0]["ids_sha256"],
        reused["rows"][0]["ids_sha256"]
    );
    let table = String::from_utf8(run(&["--keep-ids"])).unwrap();
    assert!(table.contains("every id of a pass kept"), "{table}");
}

#[test]
fn bad_options_fail_clearly() {
    let input = tiny_input("bad.txt");
    let input = input.display().to_string();
    let missing = simdtok(&["bench", "--model", "no/such.model", "--input", &input]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no/such.model"));

    let model = data(MODELS[0]);
    let no_input = simdtok(&["bench", "--model", &model, "--input", "no/such.txt"]);
    assert_eq!(no_input.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no_input.stderr).contains("no/such.txt"));

    let foreign = if cfg!(target_arch = "aarch64") {
        "avx2"
    } else {
        "neon"
    };
    let tier = simdtok(&[
        "bench", "--model", &model, "--input", &input, "--tier", foreign,
    ]);
    assert_eq!(tier.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&tier.stderr).contains("not supported"));

    let zero = simdtok(&["bench", "--passes", "0"]);
    assert_eq!(zero.status.code(), Some(2));
}

/// `--cache-budget`: the same ids as the default sizes, the caches' bytes per thread in the
/// table and the JSON (within the budget), the budget in the heading; a bad size is a usage
/// error.
#[test]
fn a_cache_budget_keeps_the_ids_and_reports_what_the_caches_held() {
    let input = tiny_input("budget.txt");
    let input = input.display().to_string();
    for model in MODELS.map(data) {
        let run = |extra: &[&str]| {
            let args = [
                "bench",
                "--passes",
                "1",
                "--threads",
                "2",
                "--model",
                &model,
                "--input",
                &input,
            ];
            bench_ok(&args, extra)
        };
        let json = |stdout: Vec<u8>| -> serde_json::Value {
            serde_json::from_slice(&stdout).expect("one JSON object")
        };
        let small = json(run(&["--json", "--cache-budget", "64KiB"]));
        let full = json(run(&["--json"]));
        assert_eq!(small["cache_budget"], 64 << 10);
        assert_eq!(full["cache_budget"], serde_json::Value::Null);
        for (s, f) in small["rows"]
            .as_array()
            .unwrap()
            .iter()
            .zip(full["rows"].as_array().unwrap())
        {
            assert_eq!(s["ids_sha256"], f["ids_sha256"], "{model}");
            let held = s["cache_bytes_per_thread"].as_u64().unwrap();
            assert!(held > 0 && held <= 64 << 10, "{model}: {held}");
            assert!(f["cache_bytes_per_thread"].as_u64().unwrap() >= held);
        }
        let table = String::from_utf8(run(&["--cache-budget", "64KiB"])).unwrap();
        assert!(table.contains("caches at most 64KiB a thread"), "{table}");
        assert!(table.contains("cache/thread"), "{table}");
    }
    let bad = simdtok(&["bench", "--cache-budget", "lots", "--input", &input]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cache budget 'lots'"));
}
