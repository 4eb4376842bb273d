//! `encode --skip-bad`: bad records (invalid UTF-8, invalid JSON, no text field) are left out,
//! counted and the first named, instead of stopping the run; the good ones give exactly the ids
//! they give alone. Without it the run stops at the first, as before.

use crate::cli;

use cli::{data, ids_per_line, scratch, simdtok, stderr};

const MODEL: &str = "sentencepiece/botchan_en_unigram_1000.model";

/// Many JSON lines, every 50th bad in one of three ways; and the good texts, in order.
fn jsonl() -> (Vec<u8>, Vec<String>, u64) {
    let (mut input, mut good, mut bad) = (Vec::new(), Vec::new(), 0);
    for i in 0..3000 {
        let text = format!("Record {i} says something {}", "more ".repeat(i % 9));
        match (i % 50, i % 150) {
            (7, 7) => input.extend_from_slice(b"{\"text\": \"bad \xff byte\"}"),
            (7, 57) => input.extend_from_slice(b"{\"text\": \"unterminated}"),
            (7, _) => input.extend_from_slice(b"{\"other\": \"no text field\"}"),
            _ => {
                input.extend_from_slice(serde_json::json!({ "text": text }).to_string().as_bytes());
                good.push(text);
            }
        }
        if i % 50 == 7 {
            bad += 1;
        }
        input.push(b'\n');
    }
    (input, good, bad)
}

#[test]
fn bad_records_are_left_out_and_counted() {
    let model = data(MODEL);
    let (input, good, bad) = jsonl();
    let lines: String = good.iter().map(|t| format!("{t}\n")).collect();
    let want = ids_per_line(&model, lines.as_bytes(), &[]);
    let dir = scratch("skip_bad", "jsonl");
    let summary = dir.join("summary.json");
    for threads in ["1", "2"] {
        let out = simdtok(
            &[
                "encode",
                "--model",
                &model,
                "--input-format",
                "jsonl",
                "--skip-bad",
                "--threads",
                threads,
                "--summary",
                summary.to_str().unwrap(),
            ],
            &input,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let got: Vec<Vec<u32>> = String::from_utf8(out.stdout.clone())
            .unwrap()
            .lines()
            .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
            .collect();
        assert_eq!(got, want, "threads {threads}");
        let err = stderr(&out);
        // The first bad record is line 8 (invalid UTF-8).
        assert!(
            err.contains(&format!("left out {bad} bad records")),
            "{err}"
        );
        assert!(err.contains("<stdin>:8:"), "{err}");
        let s: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
        assert_eq!(
            (s["skipped"].as_u64(), s["documents"].as_u64()),
            (Some(bad), Some(good.len() as u64))
        );
    }
    // Without --skip-bad, the first bad record stops the run.
    let out = simdtok(
        &["encode", "--model", &model, "--input-format", "jsonl"],
        &input,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("<stdin>:8:"), "{}", stderr(&out));
}

#[test]
fn bad_lines_and_texts_too_but_not_raw() {
    let model = data(MODEL);
    let run = |args: &[&str], input: &[u8]| {
        let mut all = vec!["encode", "--model", &model, "--skip-bad"];
        all.extend_from_slice(args);
        simdtok(&all, input)
    };
    let out = run(&[], b"good one\nbad \xfe\nfine\n");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout.clone())
            .unwrap()
            .lines()
            .count(),
        2
    );
    assert!(
        stderr(&out).contains("left out 1 bad record ("),
        "{}",
        stderr(&out)
    );
    let out = run(
        &["--input-format", "text", "--separator", "|"],
        b"a|b\xff|c",
    );
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout.clone())
            .unwrap()
            .lines()
            .count(),
        2
    );
    assert!(stderr(&out).contains("<stdin>:2:"), "{}", stderr(&out));
    let out = run(&["--input-format", "raw"], b"x");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--skip-bad applies"),
        "{}",
        stderr(&out)
    );
}
