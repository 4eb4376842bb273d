//! `encode`'s inputs. Compressed ones (`simdtok::corpus::compression`): gzip (one member or
//! several) and zstd (several frames), recognised by their first bytes whatever the file's name,
//! from a file or from stdin, as lines, JSON lines and one raw text, give exactly the ids of the
//! uncompressed input; a truncated or damaged stream is an error naming the input, and so is a
//! format this version does not read. Several inputs (`simdtok::corpus::inputs`): files,
//! directories and glob patterns, read in the stated order into one output; `--summary`.

use crate::cli;

use std::io::Write;

use cli::{data, scratch, simdtok, stderr};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// The stdout of `encode --model MODEL ARGS…` with `stdin`, which must succeed.
fn encode(model: &str, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut all = vec!["encode", "--model", model];
    all.extend_from_slice(args);
    let out = simdtok(&all, stdin);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out.stdout
}

/// Each way of compressing `plain`: gzip, two gzip members, two zstd frames.
fn compressed(plain: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let (a, b) = plain.split_at(plain.len() / 3);
    vec![
        ("gzip", gzip(plain)),
        ("gzip members", [gzip(a), gzip(b)].concat()),
        (
            "zstd frames",
            [
                zstd::encode_all(a, 3).unwrap(),
                zstd::encode_all(b, 19).unwrap(),
            ]
            .concat(),
        ),
    ]
}

#[test]
fn compressed_inputs_give_the_ids_of_the_plain_ones() {
    let model = data("bpe/encoder.json");
    let corpus = std::fs::read_to_string(data("corpus/udhr_scripts.txt")).unwrap();
    let lines: String = corpus
        .lines()
        .take(2000)
        .map(|l| format!("{l}\n"))
        .collect();
    let jsonl: String = lines
        .lines()
        .map(|l| format!("{}\n", serde_json::json!({ "text": l })))
        .collect();
    let dir = scratch("inputs", "compressed");
    for (format, plain) in [("lines", &lines), ("jsonl", &jsonl), ("raw", &lines)] {
        let args = ["--input-format", format, "--threads", "2"];
        let want = encode(&model, &args, plain.as_bytes());
        for (how, bytes) in compressed(plain.as_bytes()) {
            // From stdin, and from a file whose name says nothing.
            assert_eq!(encode(&model, &args, &bytes), want, "{format} {how} stdin");
            let path = dir.join("corpus.txt");
            std::fs::write(&path, &bytes).unwrap();
            let path = path.display().to_string();
            let mut file_args = args.to_vec();
            file_args.extend(["--input", &path]);
            assert_eq!(encode(&model, &file_args, b""), want, "{format} {how} file");
        }
    }
}

#[test]
fn damaged_and_unsupported_streams_are_errors_naming_the_input() {
    let model = data("bpe/encoder.json");
    let text = std::fs::read(data("corpus/en_kjv_bible.head.txt")).unwrap();
    let dir = scratch("inputs", "damaged");
    let mut truncated = gzip(&text);
    truncated.truncate(truncated.len() / 2);
    let mut damaged = zstd::encode_all(&text[..], 3).unwrap();
    let n = damaged.len();
    damaged[n / 2] ^= 0x5a;
    damaged.truncate(n - 4);
    for (name, bytes, says) in [
        ("truncated.gz", truncated, "deflate"),
        ("damaged.zst", damaged, ""),
        (
            "text.xz",
            b"\xfd7zXZ\x00 and more".to_vec(),
            "xz-compressed",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let path = path.display().to_string();
        let out = simdtok(&["encode", "--model", &model, "--input", &path], b"");
        assert_eq!(out.status.code(), Some(1), "{name}");
        let message = stderr(&out);
        assert!(
            message.contains(name) && message.contains(says),
            "{name}: {message}"
        );
    }
}

/// `--summary PATH`: the run's documents, bytes (decompressed), tokens (separators included),
/// the input's compression and the model's SHA-256, as JSON, and a line on stderr.
#[test]
fn a_summary_says_what_the_run_read_and_wrote() {
    use sha2::{Digest, Sha256};
    let model = data("bpe/encoder.json");
    let corpus = std::fs::read_to_string(data("corpus/udhr_scripts.txt")).unwrap();
    let lines: String = corpus.lines().take(500).map(|l| format!("{l}\n")).collect();
    let ids = cli::ids_per_line(&model, lines.as_bytes(), &[]);
    let dir = scratch("inputs", "summary");
    let input = dir.join("in.txt");
    std::fs::write(&input, gzip(lines.as_bytes())).unwrap();
    let (input, out, summary) = (
        input.display().to_string(),
        dir.join("out.u32").display().to_string(),
        dir.join("summary.json"),
    );
    let summary_arg = summary.display().to_string();
    let args = [
        "encode",
        "--model",
        &model,
        "--input",
        &input,
        "--output-format",
        "u32",
        "--output",
        &out,
        "--separator-id",
        "0",
        "--summary",
        &summary_arg,
    ];
    let run = simdtok(&args, b"");
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(stderr(&run).contains("500 documents"), "{}", stderr(&run));
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let tokens: usize = ids.iter().map(|i| i.len() + 1).sum();
    assert_eq!(s["documents"], 500);
    assert_eq!(s["bytes"], lines.len());
    assert_eq!(s["tokens"], tokens);
    assert_eq!(s["inputs"][0]["compression"], "gzip");
    assert_eq!(s["inputs"][0]["documents"], 500);
    assert_eq!(s["output_format"], "u32");
    let sha: String = Sha256::digest(std::fs::read(&model).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(s["model"]["sha256"], sha.as_str());
    assert_eq!(std::fs::metadata(&out).unwrap().len() as usize, 4 * tokens);
}

/// Several `--input`s: a directory (its files sorted, at any depth), a file and a pattern, each
/// file once, in that order, plain and compressed mixed, into one output: the ids of the
/// files' texts one after another; a missing input is an error; other commands take one.
#[test]
fn several_inputs_are_read_in_the_stated_order() {
    let model = data("bpe/encoder.json");
    let corpus = std::fs::read_to_string(data("corpus/udhr_scripts.txt")).unwrap();
    let lines: Vec<String> = corpus.lines().map(|l| format!("{l}\n")).collect();
    let part = |k: usize| lines[k * 100..(k + 1) * 100].concat();
    let dir = scratch("inputs", "several");
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("x1.txt"), part(0)).unwrap();
    std::fs::write(tree.join("x2.txt.gz"), gzip(part(1).as_bytes())).unwrap();
    std::fs::write(
        tree.join("sub/x3.txt"),
        zstd::encode_all(part(2).as_bytes(), 3).unwrap(),
    )
    .unwrap();
    std::fs::write(tree.join(".hidden"), "never read\n").unwrap();
    std::fs::write(dir.join("extra.txt"), part(3)).unwrap();
    let p = |rel: &str| dir.join(rel).display().to_string();
    let (tree_arg, extra, pattern) = (p("tree"), p("extra.txt"), p("*.txt"));
    let args = [
        "--input",
        &tree_arg,
        "--input",
        &extra,
        "--input",
        &pattern,
        "--threads",
        "2",
    ];
    // sub/x3 sorts before x1 ('s' < 'x'); the pattern finds extra.txt, already read.
    let want = encode(
        &model,
        &[],
        [part(2), part(0), part(1), part(3)].concat().as_bytes(),
    );
    assert_eq!(encode(&model, &args, b""), want);
    // A dataset output, and the summary's inputs.
    let summary = p("summary.json");
    let prefix = p("mg");
    let mut more = args.to_vec();
    more.extend([
        "--output-format",
        "megatron",
        "--output",
        &prefix,
        "--summary",
        &summary,
    ]);
    encode(&model, &more, b"");
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let inputs = s["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 4);
    assert_eq!(s["documents"], 400);
    assert!(inputs[0]["path"].as_str().unwrap().ends_with("sub/x3.txt"));
    assert_eq!(inputs[0]["compression"], "zstd");
    assert_eq!(inputs[2]["compression"], "gzip");
    // A missing input, and several inputs where only one is read.
    let missing = p("missing.txt");
    let out = simdtok(&["encode", "--model", &model, "--input", &missing], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no such file"), "{}", stderr(&out));
    let out = simdtok(
        &[
            "count", "--model", &model, "--input", &extra, "--input", &extra,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
