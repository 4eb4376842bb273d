//! `simdtok report`: the four outputs of one machine (valid JSON that round-trips, a Markdown
//! column per tier, an SVG that parses as XML, a self-contained HTML page), a comparison of two
//! reports, and refusals (inputs that differ, wrong schema versions, unreadable files). A tiny
//! budget and input keep the run to seconds in a debug build; timings are not checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use simdtok::bench::kernel_cases;
use simdtok::bench::report::schema::{Comparison, Report};
use simdtok::kernels::Tier;

fn simdtok(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_simdtok"))
        .args(args)
        .env_remove("SIMDTOK_TIER")
        .output()
        .expect("simdtok runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_report")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const MODELS: [&str; 2] = [
    "tests/data/sentencepiece/botchan_en_unigram_1000.model",
    "tests/data/bpe/encoder.json",
];

/// One report made once for all the tests: a 1-second budget, two models, a few texts.
fn report_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("one");
        let input = dir.join("texts.txt");
        std::fs::write(
            &input,
            "I am a cat. As yet I have no name.\n吾輩は猫である。\nfor i in range(3): print(i)\n",
        )
        .unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let models: Vec<String> = MODELS
            .iter()
            .map(|m| root.join(m).display().to_string())
            .collect();
        let out_dir = dir.join("out");
        let out_arg = out_dir.display().to_string();
        let input_arg = input.display().to_string();
        let mut args = vec![
            "report",
            "--out",
            &out_arg,
            "--budget",
            "1",
            "--threads",
            "2",
            "--label",
            "here",
            "--input",
            &input_arg,
        ];
        for m in &models {
            args.extend(["--model", m.as_str()]);
        }
        ok(&simdtok(&args));
        out_dir
    })
}

fn read(name: &str) -> String {
    std::fs::read_to_string(report_dir().join(name)).unwrap()
}

fn report() -> Report {
    serde_json::from_str(&read("report.json")).expect("report.json is a Report")
}

#[test]
fn json_is_complete_and_round_trips() {
    let text = read("report.json");
    let report: Report = serde_json::from_str(&text).unwrap();
    // Serialized again, it is the same JSON, and reads back as the same report.
    let again = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&again).unwrap(),
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    );
    assert_eq!(serde_json::from_str::<Report>(&again).unwrap(), report);

    assert_eq!(report.schema_version, 1);
    assert_eq!(report.kind, "report");
    assert_eq!(report.label, "here");
    assert_eq!(report.tool.name, "simdtok");
    assert!(!report.tool.git_commit.is_empty() && !report.tool.rustc.is_empty());
    assert_eq!(report.machine.arch, std::env::consts::ARCH);
    assert!(report.machine.logical_cores >= 1);
    assert!(report.run.started_utc.ends_with('Z'));

    // Every row is there, however small the budget: each kernel case and each model on every
    // tier (and for models, one and two threads), each with samples and a correct result.
    let tiers = Tier::supported();
    let kernels = report
        .results
        .iter()
        .filter(|r| r.bench == "kernel")
        .count();
    let encodes = report
        .results
        .iter()
        .filter(|r| r.bench == "encode")
        .count();
    assert_eq!(kernels, kernel_cases::cases().len() * tiers.len());
    assert_eq!(encodes, MODELS.len() * tiers.len() * 2);
    for row in &report.results {
        assert!(!row.samples_ns.is_empty(), "{row:?}");
        assert!(row.median_ns > 0.0 && row.bytes_per_s > 0.0, "{row:?}");
        assert!(row.min_ns <= row.median_ns && row.median_ns <= row.max_ns);
        assert!(
            row.equal_to_scalar,
            "{} {} {}",
            row.name, row.size, row.tier
        );
        assert!(row.vs_scalar.is_some());
        for input in &row.inputs {
            assert!(
                report.inputs.iter().any(|i| &i.name == input),
                "{input} is listed"
            );
        }
    }
    for input in &report.inputs {
        assert_eq!(input.sha256.len(), 64);
    }
    assert!(report.inputs.iter().any(|i| i.name == "model/encoder.json"));
    assert!(
        report
            .inputs
            .iter()
            .any(|i| i.name == "model/encoder.json/vocab.bpe")
    );
}

#[test]
fn markdown_has_a_column_per_tier() {
    let md = read("report.md");
    assert!(md.starts_with("# simdtok report: here"));
    for table in ["| kernel | size |", "| model | kind | threads |"] {
        let header = md
            .lines()
            .find(|l| l.starts_with(table))
            .unwrap_or_else(|| panic!("a table starting {table}: {md}"));
        let unit = if table.contains("kernel") {
            "GB/s"
        } else {
            "MB/s"
        };
        let tier_columns: Vec<&str> = header
            .split('|')
            .map(str::trim)
            .filter(|c| c.ends_with(unit))
            .collect();
        let expected: Vec<String> = Tier::supported()
            .iter()
            .map(|t| format!("{} {unit}", t.name()))
            .collect();
        assert_eq!(tier_columns, expected, "{header}");
    }
    assert!(md.contains("| classify | 64 B |"), "{md}");
    assert!(!md.contains('✗'), "every tier equals scalar: {md}");
}

#[test]
fn svg_parses_as_xml_and_names_every_panel() {
    let svg = read("report.svg");
    let doc = roxmltree::Document::parse(&svg).expect("report.svg is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for name in [
        "classify",
        "crc32c_many",
        "trie_prefix_search",
        "64 KiB",
        "2 threads",
    ] {
        assert!(
            texts.iter().any(|t| t.contains(name)),
            "{name} in {texts:?}"
        );
    }
    for tier in Tier::supported() {
        assert!(texts.contains(&tier.name()), "legend names {tier}");
    }
    let bars = doc.descendants().filter(|n| n.has_tag_name("rect")).count();
    assert!(bars > 100, "{bars} rectangles");
}

#[test]
fn html_is_self_contained() {
    let html = read("report.html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg") && html.contains("</svg>"));
    let lower = html.to_lowercase();
    for bad in ["<script", "<link", "@import", "url("] {
        assert!(!lower.contains(bad), "no {bad}");
    }
    for attr in ["src=", "href="] {
        for quote in ["\"", "'", ""] {
            for scheme in ["http://", "https://", "//"] {
                let needle = format!("{attr}{quote}{scheme}");
                assert!(!lower.contains(&needle), "no {needle}");
            }
        }
    }
    assert!(html.contains("<td class=\"num\">"));
}

/// `report` edited to look like another machine's: another label and CPU, half the speed.
fn other_machine(report: &Report) -> Report {
    let mut other = report.clone();
    other.label = "elsewhere".into();
    other.machine.cpu_brand = Some("Arm Neoverse V1 (e.g. AWS Graviton3)".into());
    other.machine.logical_cores = 64;
    for row in &mut other.results {
        for s in &mut row.samples_ns {
            *s *= 2;
        }
        row.median_ns *= 2.0;
        row.bytes_per_s /= 2.0;
    }
    other
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> String {
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn compare_merges_two_machines() {
    let dir = scratch("compare");
    let a = report_dir().join("report.json").display().to_string();
    let b = write_json(&dir.join("b.json"), &other_machine(&report()));
    let out = dir.join("out");
    let out_arg = out.display().to_string();
    ok(&simdtok(&[
        "report",
        "--compare",
        &a,
        &b,
        "--out",
        &out_arg,
    ]));

    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    let c: Comparison = serde_json::from_str(&json).unwrap();
    assert_eq!(
        serde_json::from_str::<Comparison>(&serde_json::to_string(&c).unwrap()).unwrap(),
        c
    );
    assert_eq!(c.kind, "comparison");
    assert_eq!(c.baseline, "here");
    let labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(labels, ["here", "elsewhere"]);
    let best = c
        .rows
        .iter()
        .find(|r| r.key.name == "classify" && r.key.size == 4096 && r.key.tier == "best")
        .expect("a best row");
    assert_eq!(
        best.cells[0].as_ref().unwrap().tier,
        Tier::best_supported().name()
    );
    let rel = best.relative[1].unwrap();
    assert!((rel - 0.5).abs() < 0.01, "half the speed: {rel}");
    assert_eq!(best.relative[0], Some(1.0));
    // Every row of either machine has a counterpart (same inputs, same keys).
    assert!(c.rows.iter().all(|r| r.cells.iter().all(Option::is_some)));

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| here GB/s | elsewhere GB/s | elsewhere × here |"),
        "{md}"
    );
    assert!(md.contains("Graviton3"));
    assert!(md.contains("0.500×"), "{md}");
    let svg = std::fs::read_to_string(out.join("report.svg")).unwrap();
    roxmltree::Document::parse(&svg).expect("well-formed");
    assert!(svg.contains("elsewhere: best tier"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg") && !html.contains("<script"));

    // Another baseline divides by the other machine.
    let out2 = dir.join("out2").display().to_string();
    ok(&simdtok(&[
        "report",
        "--compare",
        &a,
        &b,
        "--out",
        &out2,
        "--baseline",
        "elsewhere",
    ]));
    let md = std::fs::read_to_string(dir.join("out2/report.md")).unwrap();
    assert!(
        md.contains("here × elsewhere") && md.contains("2.00×"),
        "{md}"
    );
}

#[test]
fn compare_refuses_reports_of_different_inputs() {
    let dir = scratch("refuse");
    let a = report_dir().join("report.json").display().to_string();
    let mut other = other_machine(&report());
    let input = other
        .inputs
        .iter_mut()
        .find(|i| i.kind == "corpus")
        .expect("a corpus input");
    let name = input.name.clone();
    input.sha256 = "0".repeat(64);
    let b = write_json(&dir.join("b.json"), &other);
    let out = simdtok(&[
        "report",
        "--compare",
        &a,
        &b,
        "--out",
        &dir.join("out").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&name) && err.contains("differs"), "{err}");
    assert!(!dir.join("out/report.json").exists(), "nothing written");
}

#[test]
fn compare_refuses_unreadable_reports() {
    let dir = scratch("unreadable");
    let a = report_dir().join("report.json").display().to_string();
    let mut value: serde_json::Value = serde_json::from_str(&read("report.json")).unwrap();
    value["schema_version"] = 99.into();
    let future = write_json(&dir.join("future.json"), &value);
    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "{ nope").unwrap();
    let not_json = not_json.display().to_string();
    let mut partial = value.clone();
    partial["schema_version"] = 1.into();
    partial.as_object_mut().unwrap().remove("machine");
    let partial = write_json(&dir.join("partial.json"), &partial);
    let out = dir.join("out").display().to_string();
    for (file, message) in [
        (future.as_str(), "schema_version 99 is not supported"),
        (not_json.as_str(), "not JSON"),
        (partial.as_str(), "machine"),
        ("no/such/report.json", "no/such/report.json"),
    ] {
        let run = simdtok(&["report", "--compare", &a, file, "--out", &out]);
        assert_eq!(run.status.code(), Some(1), "{file}");
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(err.contains(file) && err.contains(message), "{file}: {err}");
    }
    let run = simdtok(&[
        "report",
        "--compare",
        &a,
        &a,
        "--out",
        &out,
        "--baseline",
        "nobody",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("nobody"));
    let run = simdtok(&["report", "--compare", &a, "--out", &out]);
    assert_eq!(run.status.code(), Some(2), "one report is not a comparison");
}

#[test]
fn bad_options_fail_before_measuring() {
    let dir = scratch("bad");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out_in_file = file.join("out").display().to_string();
    let run = simdtok(&["report", "--out", &out_in_file, "--budget", "0"]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains(&out_in_file));

    let out = dir.join("out").display().to_string();
    let run = Command::new(env!("CARGO_BIN_EXE_simdtok"))
        .args(["report", "--out", &out, "--budget", "0"])
        .env("SIMDTOK_TIER", "bogus")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("SIMDTOK_TIER"));

    let foreign = if cfg!(target_arch = "aarch64") {
        "avx2"
    } else {
        "neon"
    };
    let run = simdtok(&["report", "--out", &out, "--tier", foreign]);
    assert_eq!(run.status.code(), Some(2));
    let run = simdtok(&["report", "--out", &out, "--budget", "-1"]);
    assert_eq!(run.status.code(), Some(2));
    let run = simdtok(&["report", "--out", &out, "--model", "no/such.model"]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("no/such.model"));
    assert!(!dir.join("out/report.json").exists());
}
