//! `simdtok encode`, `decode` and `count` through the built binary (the contract of docs/cli.md):
//! every input and output format, ordering across threads, atomic output files, and loud failures
//! with the line that caused them.

#[path = "common/cli.rs"]
mod cli;

use std::path::Path;
use std::process::Output;

use cli::{entries, simdtok, stderr};

fn model() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sentencepiece/botchan_en_unigram_1000.model")
        .display()
        .to_string()
}

/// Runs `simdtok <command> --model M args...`.
fn with_model(command: &str, args: &[&str], stdin: &[u8]) -> Output {
    let model = model();
    let mut all = vec![command, "--model", model.as_str()];
    all.extend_from_slice(args);
    simdtok(&all, stdin)
}

fn encode(args: &[&str], stdin: &[u8]) -> Output {
    with_model("encode", args, stdin)
}

/// The stdout of a successful run.
fn ok(out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        stderr(&out)
    );
    out.stdout
}

fn ok_text(out: Output) -> String {
    String::from_utf8(ok(out)).expect("UTF-8 output")
}

/// Asserts a failure with `status` whose message contains every one of `needles`.
fn fails(out: &Output, status: i32, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(status), "stderr: {err}");
    assert!(err.starts_with("simdtok: "), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in {err:?}");
    }
}

/// The ids of each line of `ids` output.
fn parse_ids(text: &str) -> Vec<Vec<u32>> {
    text.lines()
        .map(|l| {
            l.split(' ')
                .filter(|w| !w.is_empty())
                .map(|w| w.parse().unwrap())
                .collect()
        })
        .collect()
}

fn u32s(bytes: &[u8]) -> Vec<u32> {
    assert_eq!(bytes.len() % 4, 0);
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const SAMPLE: &str = "I am a cat.\nThe boy ran home, and he said yes.\n\nHello world\r\nlast line";

fn sample_ids() -> Vec<Vec<u32>> {
    parse_ids(&ok_text(encode(&[], SAMPLE.as_bytes())))
}

/// Deterministic English-like lines (varied lengths, some empty), for the ordering tests.
fn many_lines(n: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "boy",
        "said",
        "I",
        "am",
        "a",
        "teacher",
        "of",
        "mathematics",
        "in",
        "school",
        "and",
        "he",
        "went",
        "to",
        "town",
        "with",
        "Red",
        "Shirt",
        "who",
        "was",
        "there",
        ".",
        ",",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut text = String::new();
    for _ in 0..n {
        let len = (next() % 40) as usize;
        let line: Vec<&str> = (0..len)
            .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
            .collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    text
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

// ---- input formats ----

#[test]
fn lines_input_one_line_per_text() {
    let ids = sample_ids();
    assert_eq!(ids.len(), 5, "the last line without \\n counts");
    assert!(ids[2].is_empty(), "an empty line has no tokens");
    assert!(ids.iter().enumerate().all(|(i, l)| i == 2 || !l.is_empty()));
    // "\r\n" ends a line like "\n"; a lone final line equals the same line with "\n".
    assert_eq!(
        ids[3],
        parse_ids(&ok_text(encode(&[], b"Hello world\n")))[0]
    );
    assert_eq!(ids[4], parse_ids(&ok_text(encode(&[], b"last line\n")))[0]);
    // Each line's ids are those of the line alone.
    assert_eq!(ids[0], parse_ids(&ok_text(encode(&[], b"I am a cat.")))[0]);
    let text = ok_text(encode(&[], SAMPLE.as_bytes()));
    assert!(
        text.contains("\n\n"),
        "an empty output line for the empty text: {text:?}"
    );
}

#[test]
fn empty_input_has_no_texts() {
    assert!(ok(encode(&[], b"")).is_empty());
    assert!(ok(encode(&["--output-format", "u32"], b"")).is_empty());
}

#[test]
fn input_file_equals_stdin() {
    let dir = temp_dir();
    let path = dir.path().join("in.txt");
    std::fs::write(&path, SAMPLE).unwrap();
    let from_file = ok(encode(&["--input", path.to_str().unwrap()], b"ignored"));
    assert_eq!(from_file, ok(encode(&["--input", "-"], SAMPLE.as_bytes())));
}

#[test]
fn jsonl_input_reads_the_text_field() {
    let jsonl = SAMPLE
        .split('\n')
        .map(|l| serde_json::json!({ "id": 1, "text": l.trim_end_matches('\r') }).to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let ids = parse_ids(&ok_text(encode(
        &["--input-format", "jsonl"],
        jsonl.as_bytes(),
    )));
    assert_eq!(ids, sample_ids());

    let other = "{\"body\": \"I am a cat.\"}\n{\"body\": \"\\u00e9t\\u00e9 \\\"quoted\\\"\"}\n";
    let out = ok_text(encode(
        &["--input-format", "jsonl", "--field", "body"],
        other.as_bytes(),
    ));
    let expected = ok_text(encode(&[], "I am a cat.\nété \"quoted\"\n".as_bytes()));
    assert_eq!(out, expected);
}

#[test]
fn raw_input_is_one_text() {
    let out = ok_text(encode(&["--input-format", "raw"], b"I am a cat."));
    assert_eq!(out, ok_text(encode(&[], b"I am a cat.")));
    let multi = ok_text(encode(&["--input-format", "raw"], SAMPLE.as_bytes()));
    assert_eq!(multi.lines().count(), 1, "{multi:?}");
    // An empty raw input is still one (empty) text.
    assert_eq!(ok_text(encode(&["--input-format", "raw"], b"")), "\n");
}

/// A raw text of several blocks is encoded in parts, cut where the model says it may be: the
/// output is exactly the whole text's, for every format and thread count, with models with safe
/// cuts (GPT-2, BERT), with part cuts (SentencePiece unigram, whose parts hand the running score
/// on from thread to thread, BPE, and a SentencePiece-style `tokenizer.json`), with a template
/// (`--add-special-tokens`: `[CLS]` before the first part, `[SEP]` after the last with its
/// offsets `(0, 0)`), with Gemma's `Split` and without cuts (one whose entries hold `▁` after other characters, read
/// whole).
#[test]
fn raw_input_in_parts_equals_the_whole_text() {
    let text = many_lines(12_000);
    assert!(
        text.len() > 3 * (256 << 10),
        "several blocks: {}",
        text.len()
    );
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let models = [
        ("bpe/encoder.json", false, true),
        ("wordpiece/bert-base-uncased.vocab.txt", false, true),
        ("wordpiece/bert-base-uncased.vocab.txt", true, true),
        ("bpe/gpt2-2k-roberta.tokenizer.json", true, true),
        ("bpe/gemma-1k.tokenizer.json", true, true),
        ("sentencepiece/botchan_en_unigram_1000.model", false, true),
        ("sentencepiece/kyoto_ja_unigram_8000.model", false, true),
        ("sentencepiece/botchan_en_bpe_1000.model", false, true),
        ("sentencepiece/botchan_en_unigram_1000.model", true, true),
        ("sentencepiece/botchan_en_bpe_1000.model", true, true),
        ("bpe/kjv-spm-split.tokenizer.json", false, true),
        ("bpe/kjv-spm-first.tokenizer.json", false, false),
    ];
    for (model, special, has_cuts) in models {
        let path = data.join(model).display().to_string();
        let options = simdtok::LoadOptions {
            add_special_tokens: special,
            ..simdtok::LoadOptions::default()
        };
        let kernels = simdtok::kernels::Kernels::active().unwrap();
        let tok = simdtok::Tokenizer::from_file_with_options(&path, kernels, &options).unwrap();
        // With a template, no safe cuts: the parts are encoded as parts.
        assert!(
            !special || tok.last_safe_cut(text.as_bytes()).is_none(),
            "{model}"
        );
        let special: &[&str] = if special {
            &["--add-special-tokens"]
        } else {
            &[]
        };
        assert_eq!(
            tok.last_part_cut(text.as_bytes()).is_some(),
            has_cuts,
            "{model}"
        );
        let whole = tok.encode_full(&text);
        let ids: Vec<String> = whole.ids.iter().map(u32::to_string).collect();
        let offsets: Vec<String> = whole
            .offsets
            .iter()
            .map(|(s, e)| format!("[{s}, {e}]"))
            .collect();
        let want_jsonl = format!(
            "{{\"ids\": [{}], \"offsets\": [{}]}}\n",
            ids.join(", "),
            offsets.join(", ")
        );
        let want_u32: Vec<u8> = whole
            .ids
            .iter()
            .chain(&[7])
            .flat_map(|id| id.to_le_bytes())
            .collect();
        for threads in ["1", "3"] {
            let run = |extra: &[&str]| {
                let mut args = vec!["encode", "--model", &path, "--input-format", "raw"];
                args.extend_from_slice(&["--threads", threads]);
                args.extend_from_slice(special);
                args.extend_from_slice(extra);
                ok(simdtok(&args, text.as_bytes()))
            };
            let jsonl = String::from_utf8(run(&["--output-format", "jsonl"])).unwrap();
            assert!(
                jsonl == want_jsonl,
                "{model}, {threads} threads: jsonl differs"
            );
            let got_ids = String::from_utf8(run(&[])).unwrap();
            assert!(
                got_ids == format!("{}\n", ids.join(" ")),
                "{model}: ids differ"
            );
            let u32 = run(&["--output-format", "u32", "--separator-id", "7"]);
            assert!(u32 == want_u32, "{model}: u32 differs");
            let mut args = vec!["count", "--model", &path, "--input-format", "raw"];
            args.extend_from_slice(&["--threads", threads]);
            args.extend_from_slice(special);
            let count = ok_text(simdtok(&args, text.as_bytes()));
            assert_eq!(count, format!("{}\n", whole.ids.len()), "{model}");
            // A bad byte far into the text is named by its line, whatever part it fell in.
            let mut bad = text.clone().into_bytes();
            let at = text.match_indices('\n').nth(9_000).unwrap().0 + 3;
            bad[at] = 0xFF;
            let out = simdtok(
                &[
                    "encode",
                    "--model",
                    &path,
                    "--input-format",
                    "raw",
                    "--threads",
                    threads,
                ],
                &bad,
            );
            fails(&out, 1, &["<stdin>:9002: invalid UTF-8"]);
        }
    }
}

#[test]
fn field_needs_jsonl() {
    fails(
        &encode(&["--field", "body"], b"x\n"),
        2,
        &["--field", "jsonl"],
    );
}

// ---- output formats ----

#[test]
fn pieces_are_json_arrays_of_token_strings() {
    let text = ok_text(encode(&["--output-format", "pieces"], SAMPLE.as_bytes()));
    let ids = sample_ids();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), ids.len());
    for (line, ids) in lines.iter().zip(&ids) {
        let pieces: Vec<String> = serde_json::from_str(line).expect("a JSON array of strings");
        assert_eq!(pieces.len(), ids.len(), "{line}");
    }
    let first: Vec<String> = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first.concat().replace('▁', " "), " I am a cat.");
}

#[test]
fn jsonl_output_has_ids_and_byte_offsets() {
    let text = ok_text(encode(&["--output-format", "jsonl"], SAMPLE.as_bytes()));
    let texts: Vec<&str> = SAMPLE
        .split('\n')
        .map(|l| l.trim_end_matches('\r'))
        .collect();
    let ids = sample_ids();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), texts.len());
    for ((line, ids), input) in lines.iter().zip(&ids).zip(&texts) {
        let v: serde_json::Value = serde_json::from_str(line).expect("one JSON object");
        let got: Vec<u32> = serde_json::from_value(v["ids"].clone()).unwrap();
        assert_eq!(&got, ids);
        let offsets: Vec<(usize, usize)> = serde_json::from_value(v["offsets"].clone()).unwrap();
        assert_eq!(offsets.len(), ids.len());
        for &(start, end) in &offsets {
            assert!(
                start <= end && end <= input.len(),
                "{offsets:?} in {input:?}"
            );
            assert!(input.is_char_boundary(start) && input.is_char_boundary(end));
        }
        if let Some(&(_, end)) = offsets.last() {
            assert_eq!(end, input.len(), "the last token ends the text");
        }
    }
    assert!(text.starts_with("{\"ids\": ["), "{text}");
}

#[test]
fn u32_is_the_ids_little_endian() {
    let ids = sample_ids();
    let bytes = ok(encode(&["--output-format", "u32"], SAMPLE.as_bytes()));
    assert_eq!(u32s(&bytes), ids.concat());

    let bytes = ok(encode(
        &["--output-format", "u32", "--separator-id", "2"],
        SAMPLE.as_bytes(),
    ));
    let expected: Vec<u32> = ids
        .iter()
        .flat_map(|l| l.iter().copied().chain([2]))
        .collect();
    assert_eq!(u32s(&bytes), expected);
}

#[test]
fn u16_is_the_ids_little_endian() {
    let ids = sample_ids();
    let bytes = ok(encode(
        &["--output-format", "u16", "--separator-id", "65535"],
        SAMPLE.as_bytes(),
    ));
    let got: Vec<u32> = bytes
        .chunks_exact(2)
        .map(|c| u32::from(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    let expected: Vec<u32> = ids
        .iter()
        .flat_map(|l| l.iter().copied().chain([65535]))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn u16_refuses_ids_that_do_not_fit() {
    let out = encode(
        &["--output-format", "u16", "--separator-id", "70000"],
        SAMPLE.as_bytes(),
    );
    fails(&out, 1, &["u16", "70000"]);
    assert!(out.stdout.is_empty(), "nothing written before refusing");

    let dir = temp_dir();
    let path = dir.path().join("out.u16");
    let out = encode(
        &[
            "--output-format",
            "u16",
            "--separator-id",
            "70000",
            "--output",
            path.to_str().unwrap(),
        ],
        SAMPLE.as_bytes(),
    );
    fails(&out, 1, &["u16"]);
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn separator_id_is_for_binary_formats_only() {
    for format in ["ids", "pieces", "jsonl"] {
        let out = encode(&["--output-format", format, "--separator-id", "3"], b"x\n");
        fails(&out, 2, &["--separator-id"]);
    }
}

/// The `(shape, data)` of a 1-D `<u4` `.npy` file.
fn parse_npy(bytes: &[u8]) -> (usize, Vec<u32>) {
    assert_eq!(&bytes[..6], b"\x93NUMPY", "magic");
    assert_eq!(bytes[6], 1, "version 1.0");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let data_start = 10 + header_len;
    assert_eq!(data_start % 64, 0, "the data is aligned");
    let header = std::str::from_utf8(&bytes[10..data_start]).unwrap();
    assert!(header.ends_with('\n'), "{header:?}");
    assert!(header.contains("'descr': '<u4'"), "{header}");
    assert!(header.contains("'fortran_order': False"), "{header}");
    let shape = header.split("'shape': (").nth(1).unwrap();
    let shape: usize = shape.split(',').next().unwrap().parse().unwrap();
    (shape, u32s(&bytes[data_start..]))
}

#[test]
fn npy_is_a_valid_u4_array() {
    let ids = sample_ids();
    let (shape, data) = parse_npy(&ok(encode(&["--output-format", "npy"], SAMPLE.as_bytes())));
    assert_eq!(shape, data.len());
    assert_eq!(data, ids.concat());

    // Written to a file (the header is rewritten in place) and with a separator.
    let dir = temp_dir();
    let path = dir.path().join("out.npy");
    let out = encode(
        &[
            "--output-format",
            "npy",
            "--separator-id",
            "1",
            "--output",
            path.to_str().unwrap(),
        ],
        SAMPLE.as_bytes(),
    );
    assert!(ok(out).is_empty());
    let (shape, data) = parse_npy(&std::fs::read(&path).unwrap());
    let expected: Vec<u32> = ids
        .iter()
        .flat_map(|l| l.iter().copied().chain([1]))
        .collect();
    assert_eq!(shape, expected.len());
    assert_eq!(data, expected);

    let (shape, data) = parse_npy(&ok(encode(&["--output-format", "npy"], b"")));
    assert_eq!((shape, data.len()), (0, 0));
}

/// `.npy` on a stdout that is a file: rewritten in place at the position stdout started from
/// (`> out.npy`, or after what the shell wrote before), or, opened for appending (`>> out.npy`,
/// where a positioned write would land at the end), spilled to a temporary file first; either
/// way the same array as on a pipe. `/dev/null` takes it too.
#[cfg(unix)]
#[test]
fn npy_on_a_stdout_that_is_a_file() {
    use std::process::{Command, Stdio};
    let piped = ok(encode(&["--output-format", "npy"], SAMPLE.as_bytes()));
    let dir = temp_dir();
    let run = |stdout: std::fs::File| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_simdtok"))
            .args(["encode", "--model", &model(), "--output-format", "npy"])
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(SAMPLE.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "stderr: {}", stderr(&out));
    };
    for (name, prefix, append) in [
        ("plain", "", false),
        ("after", "before", false),
        ("append", "old", true),
    ] {
        let path = dir.path().join(format!("{name}.npy"));
        std::fs::write(&path, prefix).unwrap();
        let mut options = std::fs::OpenOptions::new();
        options.write(true);
        if append {
            options.append(true);
        }
        let mut file = options.open(&path).unwrap();
        if !append {
            use std::io::Seek;
            file.seek(std::io::SeekFrom::End(0)).unwrap();
        }
        run(file);
        let written = std::fs::read(&path).unwrap();
        assert_eq!(&written[..prefix.len()], prefix.as_bytes(), "{name}");
        assert!(
            written[prefix.len()..] == piped[..],
            "{name}: not the piped array"
        );
    }
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    run(null);
    let kind = std::fs::metadata("/dev/null").unwrap().file_type();
    use std::os::unix::fs::FileTypeExt;
    assert!(kind.is_char_device(), "/dev/null is still a device");
}

/// An input file of more than 4 MiB is read through a memory map: every input format gives
/// what the same bytes give through stdin (read), on one thread and on four.
#[test]
fn a_large_input_file_reads_as_stdin_does() {
    let mut text = many_lines(1);
    while text.len() < 5 << 20 {
        text.push_str(&many_lines(2000));
    }
    let jsonl: String = text
        .lines()
        .map(|l| serde_json::json!({ "text": l }).to_string() + "\n")
        .collect();
    let dir = temp_dir();
    for (format, content) in [("lines", &text), ("jsonl", &jsonl), ("raw", &text)] {
        let path = dir.path().join(format!("input.{format}"));
        std::fs::write(&path, content).unwrap();
        let piped = ok(encode(
            &["--input-format", format, "--output-format", "u32"],
            content.as_bytes(),
        ));
        assert!(piped.len() > 1 << 20, "{format}: {} bytes", piped.len());
        for threads in ["1", "4"] {
            let args = [
                "--input",
                path.to_str().unwrap(),
                "--input-format",
                format,
                "--output-format",
                "u32",
                "--threads",
                threads,
            ];
            let mapped = ok(encode(&args, b""));
            assert!(
                mapped == piped,
                "{format}, {threads} threads: differs from stdin"
            );
        }
    }
}

// ---- threads and output files ----

#[test]
fn threads_keep_input_order() {
    let text = many_lines(5000);
    for format in ["ids", "jsonl", "u32"] {
        let one = ok(encode(
            &["--output-format", format, "--threads", "1"],
            text.as_bytes(),
        ));
        let four = ok(encode(
            &["--output-format", format, "--threads", "4"],
            text.as_bytes(),
        ));
        assert!(one == four, "--threads 4 changed the {format} output");
        let all = ok(encode(
            &["--output-format", format, "--threads", "0"],
            text.as_bytes(),
        ));
        assert!(one == all, "--threads 0 changed the {format} output");
    }
    let ids = parse_ids(&String::from_utf8(ok(encode(&[], text.as_bytes()))).unwrap());
    assert_eq!(ids.len(), 5000);
}

/// Lines encoded a whole block at a time (`ids`, `u32` and `count`: the worker's tight loop over
/// a checked block) give every line the ids the record-by-record path gives it (`jsonl`), over
/// many blocks, with `\r\n` ends, empty lines and no final `\n`, whichever thread checks the
/// UTF-8 (the reader at one thread, the workers at two).
#[test]
fn whole_blocks_of_lines_equal_the_records_path() {
    let mut text = String::new();
    while text.len() < 1 << 20 {
        for (i, line) in many_lines(3000).lines().enumerate() {
            text.push_str(line);
            text.push_str(if i % 7 == 0 { "\r\n" } else { "\n" });
        }
    }
    text.push_str("a last line, \u{e9}t\u{e9} without its end");
    let lines = text.split('\n').count();
    for threads in ["1", "2"] {
        let by_record: Vec<Vec<u32>> = ok_text(encode(
            &["--output-format", "jsonl", "--threads", threads],
            text.as_bytes(),
        ))
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("one JSON object");
            serde_json::from_value(v["ids"].clone()).unwrap()
        })
        .collect();
        assert_eq!(by_record.len(), lines, "{threads} threads");
        let whole = parse_ids(&ok_text(encode(
            &["--output-format", "ids", "--threads", threads],
            text.as_bytes(),
        )));
        assert!(whole == by_record, "{threads} threads: ids differ");
        let flat = u32s(&ok(encode(
            &["--output-format", "u32", "--threads", threads],
            text.as_bytes(),
        )));
        assert!(flat == by_record.concat(), "{threads} threads: u32 differ");
        let counts: Vec<usize> = ok_text(with_model(
            "count",
            &["--threads", threads],
            text.as_bytes(),
        ))
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
        let lens: Vec<usize> = by_record.iter().map(Vec::len).collect();
        assert!(counts == lens, "{threads} threads: counts differ");
    }
}

#[test]
fn output_file_is_written_only_on_success() {
    let dir = temp_dir();
    let path = dir.path().join("out.txt");
    let target = path.to_str().unwrap();
    let out = encode(&["--output", target, "--threads", "2"], SAMPLE.as_bytes());
    assert!(ok(out).is_empty(), "nothing on stdout");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        ok_text(encode(&[], SAMPLE.as_bytes()))
    );
    assert_eq!(entries(dir.path()), ["out.txt"], "no temporary file left");

    // A run failing late (bad UTF-8 after thousands of good lines) leaves no file behind ...
    let mut bad = many_lines(3000).into_bytes();
    bad.extend_from_slice(b"caf\xe9\n");
    let fresh = dir.path().join("fresh.txt");
    let out = encode(
        &["--output", fresh.to_str().unwrap(), "--threads", "4"],
        &bad,
    );
    fails(&out, 1, &["<stdin>:3001:", "UTF-8"]);
    assert!(!fresh.exists());
    // ... and leaves an existing one as it was.
    let before = std::fs::read(&path).unwrap();
    let out = encode(&["--output", target], &bad);
    fails(&out, 1, &["<stdin>:3001:"]);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(entries(dir.path()), ["out.txt"], "no temporary file left");
}

/// A path that is not a regular file is written in place: a FIFO stays a FIFO (a rename over it
/// would leave a plain file where the pipe, or `/dev/null`, was), even for `.npy` output, which
/// then cannot seek back to its header.
#[cfg(unix)]
#[test]
fn output_to_a_fifo_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = temp_dir();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.expect("mkfifo runs").success());
    for format in ["ids", "npy"] {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let args = [
            "--output",
            fifo.to_str().unwrap(),
            "--output-format",
            format,
        ];
        let out = encode(&args, SAMPLE.as_bytes());
        assert!(ok(out).is_empty(), "nothing on stdout");
        let received = reader.join().unwrap();
        let expected = ok(encode(&["--output-format", format], SAMPLE.as_bytes()));
        assert_eq!(received, expected, "{format}");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{format}: the FIFO is still a FIFO");
        assert_eq!(entries(dir.path()), ["pipe"], "no temporary file left");
    }
}

/// A symbolic link to a file keeps its link; the file it names gets the result.
#[cfg(unix)]
#[test]
fn output_through_a_symlink_replaces_its_target() {
    let dir = temp_dir();
    let file = dir.path().join("real.txt");
    std::fs::write(&file, "old").unwrap();
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let out = encode(&["--output", link.to_str().unwrap()], SAMPLE.as_bytes());
    assert!(ok(out).is_empty(), "nothing on stdout");
    assert!(link.is_symlink(), "the link is still a link");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        ok_text(encode(&[], SAMPLE.as_bytes()))
    );
    assert_eq!(entries(dir.path()), ["link.txt", "real.txt"]);
}

#[test]
fn unwritable_output_fails_naming_it() {
    let dir = temp_dir();
    let path = dir.path().join("missing-dir").join("out.txt");
    let out = encode(&["--output", path.to_str().unwrap()], b"x\n");
    fails(&out, 1, &["out.txt: no such directory", "missing-dir"]);
    assert!(!stderr(&out).contains(".partial"), "{}", stderr(&out));
    // A directory that cannot be written to: the cause, without the temporary file's name
    // (root writes to a read-only mode anyway; `/sys` is read-only to root too).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
        for unwritable in [locked.as_path(), Path::new("/sys")] {
            if !unwritable.is_dir() || std::fs::write(unwritable.join("probe"), "").is_ok() {
                continue;
            }
            let target = unwritable.join("out.txt");
            let out = encode(&["--output", target.to_str().unwrap()], b"x\n");
            fails(&out, 1, &["out.txt: "]);
            assert!(!stderr(&out).contains(".partial"), "{}", stderr(&out));
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}

// ---- bad input ----

#[test]
fn invalid_utf8_names_file_and_line() {
    let out = encode(&[], b"good\nalso good\nbad \xff byte\n");
    fails(&out, 1, &["<stdin>:3:", "UTF-8"]);

    let dir = temp_dir();
    let path = dir.path().join("corpus.txt");
    std::fs::write(&path, b"one\n\xc3\n").unwrap();
    let out = encode(&["--input", path.to_str().unwrap()], b"");
    fails(&out, 1, &["corpus.txt:2:", "UTF-8"]);

    // For raw input, the line holding the bad byte.
    let out = encode(&["--input-format", "raw"], b"a\nb\nc\xff\n");
    fails(&out, 1, &["<stdin>:3:", "UTF-8"]);
    // For jsonl, the line of the object.
    let out = encode(
        &["--input-format", "jsonl"],
        b"{\"text\": \"a\"}\n{\"text\": \"\xff\"}\n",
    );
    fails(&out, 1, &["<stdin>:2:", "UTF-8"]);
}

#[test]
fn invalid_json_names_the_line() {
    let input = b"{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": oops}\n";
    let out = encode(&["--input-format", "jsonl"], input);
    fails(&out, 1, &["<stdin>:3:", "invalid JSON"]);
    let out = encode(&["--input-format", "jsonl"], b"[1, 2]\n");
    fails(&out, 1, &["<stdin>:1:", "JSON object"]);
    let out = encode(&["--input-format", "jsonl"], b"{\"text\": \"a\"}\n\n");
    fails(&out, 1, &["<stdin>:2:", "invalid JSON"]);
}

/// With one worker on a machine of several cores, the reader takes the texts out of the JSON
/// (escapes and all); the results and the line of the first bad record are the same as when
/// the workers do it, over many blocks.
#[test]
fn jsonl_is_read_alike_by_the_reader_and_the_workers() {
    let mut jsonl = String::new();
    for i in 0..6000 {
        let text = format!(
            "line {i}: caf\u{e9} \"quoted\"\n\ttab {}",
            "x".repeat(i % 50)
        );
        jsonl.push_str(&serde_json::json!({ "id": i, "text": text }).to_string());
        jsonl.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
    }
    let one = ok_text(encode(
        &["--input-format", "jsonl", "--threads", "1"],
        jsonl.as_bytes(),
    ));
    let four = ok_text(encode(
        &["--input-format", "jsonl", "--threads", "4"],
        jsonl.as_bytes(),
    ));
    assert!(one == four, "one thread and four differ");
    assert_eq!(parse_ids(&one).len(), 6000);
    for (bad, cause) in [
        (&b"{\"text\": 7}"[..], "a number, not a string"),
        (b"{\"text\": oops}", "invalid JSON"),
        (b"{\"text\": \"caf\xe9\"}", "UTF-8"),
    ] {
        let mut input = jsonl.clone().into_bytes();
        input.extend_from_slice(bad);
        input.extend_from_slice(b"\n{\"text\": 8}\n");
        for threads in ["1", "4"] {
            let out = encode(&["--input-format", "jsonl", "--threads", threads], &input);
            fails(&out, 1, &["<stdin>:6001:", cause]);
        }
    }
}

#[test]
fn missing_or_non_string_field_names_the_line() {
    let out = encode(
        &["--input-format", "jsonl"],
        b"{\"text\": \"a\"}\n{\"body\": \"b\"}\n",
    );
    fails(&out, 1, &["<stdin>:2:", "\"text\""]);
    let out = encode(&["--input-format", "jsonl"], b"{\"text\": 7}\n");
    fails(&out, 1, &["<stdin>:1:", "a number, not a string"]);
    let out = encode(
        &["--input-format", "jsonl", "--field", "body"],
        b"{\"text\": \"a\"}\n",
    );
    fails(&out, 1, &["<stdin>:1:", "\"body\""]);
}

#[test]
fn first_bad_line_is_reported_whatever_the_threads() {
    let mut input = many_lines(4000).into_bytes();
    input.extend_from_slice(b"\xff\n");
    input.extend_from_slice(many_lines(4000).as_bytes());
    input.extend_from_slice(b"\xfe\n");
    // One thread: the reader checks the blocks; four: the workers do. Blocks of good lines go
    // through the loop over a block's lines, the bad one record by record.
    for threads in ["1", "4"] {
        for format in ["ids", "u32"] {
            let out = encode(&["--threads", threads, "--output-format", format], &input);
            fails(&out, 1, &["<stdin>:4001:"]);
        }
        let out = with_model("count", &["--threads", threads], &input);
        fails(&out, 1, &["<stdin>:4001:"]);
    }
}

#[test]
fn missing_files_are_named() {
    let out = encode(&["--input", "/nonexistent/in.txt"], b"");
    fails(&out, 1, &["/nonexistent/in.txt"]);
    let out = simdtok(&["encode", "--model", "/nonexistent/m.model"], b"x\n");
    fails(&out, 1, &["/nonexistent/m.model"]);
}

// ---- options ----

/// `--add-special-tokens` on a SentencePiece `.model` puts its BOS before each text, as
/// `LlamaTokenizer` does (`src/load/spm_specials.rs`); on a tiktoken or GPT-2 file it adds
/// nothing, as tiktoken's `encode` adds nothing.
#[test]
fn special_tokens_for_sentencepiece_and_tiktoken_files() {
    let plain = ok_text(encode(&[], b"x\ny z\n"));
    let special = ok_text(encode(&["--add-special-tokens"], b"x\ny z\n"));
    let with_bos: Vec<String> = plain.lines().map(|l| format!("1 {l}")).collect();
    assert_eq!(special.lines().collect::<Vec<_>>(), with_bos);
    let count = |extra: &[&str]| -> usize {
        ok_text(with_model("count", extra, b"x\n"))
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(
        count(&["--add-special-tokens"]),
        count(&[]) + 1,
        "count: the BOS counts"
    );
    let gpt2 = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/bpe/encoder.json")
        .display()
        .to_string();
    let run = |extra: &[&str]| {
        let mut args = vec!["encode", "--model", gpt2.as_str()];
        args.extend_from_slice(extra);
        ok_text(simdtok(&args, b"hello world\n"))
    };
    assert_eq!(run(&["--add-special-tokens"]), run(&[]));
}

#[test]
fn unsupported_options_are_refused() {
    let out = encode(&["--lowercase"], b"x\n");
    fails(&out, 2, &["--lowercase", "vocab.txt"]);
    let out = encode(&["--no-lowercase"], b"x\n");
    fails(&out, 2, &["--no-lowercase", "vocab.txt"]);
    let out = encode(&["--pattern", "cl100k"], b"x\n");
    fails(&out, 2, &["--pattern", "tiktoken"]);
    // An unknown pattern name is clap's usage error.
    let out = encode(&["--pattern", "cl200k"], b"x\n");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn model_specific_options_are_checked_against_the_model_kind() {
    let dir = temp_dir();
    let tiktoken = dir.path().join("cl100k_base.tiktoken");
    std::fs::write(&tiktoken, "IQ== 0\nIg== 1\n").unwrap();
    let vocab = dir.path().join("vocab.txt");
    std::fs::write(&vocab, "[PAD]\n[UNK]\nhello\n").unwrap();
    let run = |model: &Path, option: &[&str]| {
        let mut args = vec!["encode", "--model", model.to_str().unwrap()];
        args.extend_from_slice(option);
        simdtok(&args, b"hello\n")
    };
    // The file name's own pattern, and the default --lowercase, change nothing: not refused as
    // options (whether this version loads such a model at all is another matter).
    for (model, option) in [
        (&tiktoken, &["--pattern", "cl100k"][..]),
        (&vocab, &["--lowercase"][..]),
    ] {
        let err = stderr(&run(model, option));
        assert!(!err.contains(option[0]), "{option:?} refused: {err}");
    }
    // Another pattern than the file name's is honoured (this toy file then fails as a model:
    // not every byte has a token).
    let err = stderr(&run(&tiktoken, &["--pattern", "o200k"]));
    assert!(!err.contains("--pattern") && err.contains("byte"), "{err}");
    // --no-lowercase keeps the case of a vocab.txt model.
    let out = run(&vocab, &["--no-lowercase", "--output-format", "pieces"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    fails(
        &run(&vocab, &["--pattern", "gpt2"]),
        2,
        &["--pattern", "tiktoken"],
    );
    fails(
        &run(&tiktoken, &["--lowercase"]),
        2,
        &["--lowercase", "vocab.txt"],
    );
}

#[test]
fn tiers() {
    let expected = ok(encode(&[], SAMPLE.as_bytes()));
    for tier in ["scalar", "auto"] {
        assert_eq!(
            ok(encode(&["--tier", tier], SAMPLE.as_bytes())),
            expected,
            "{tier}"
        );
    }
    let out = encode(&["--tier", "avx3"], b"x\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("valid tiers"), "{}", stderr(&out));
    let foreign = if cfg!(target_arch = "aarch64") {
        "avx2"
    } else {
        "neon"
    };
    let out = encode(&["--tier", foreign], b"x\n");
    fails(&out, 2, &["--tier", foreign]);
}

#[test]
fn progress_never_touches_stdout() {
    let text = many_lines(2000);
    let quiet = ok(encode(&["--no-progress"], text.as_bytes()));
    let shown = encode(&["--progress"], text.as_bytes());
    assert!(
        !shown.stderr.is_empty(),
        "--progress shows something on stderr"
    );
    assert_eq!(ok(shown), quiet);
    // Not a terminal, no option: nothing on stderr.
    let default = encode(&[], text.as_bytes());
    assert!(default.stderr.is_empty(), "{}", stderr(&default));
}

// ---- decode ----

#[test]
fn decode_round_trips_plain_text() {
    let text = "I am a cat.\nThe boy ran home, and he said yes.\n\nthe teacher of mathematics\n";
    let ids = ok(encode(&[], text.as_bytes()));
    assert_eq!(ok_text(with_model("decode", &[], &ids)), text);
    let many = many_lines(3000);
    let ids = ok(encode(&["--threads", "4"], many.as_bytes()));
    let back = ok_text(with_model("decode", &["--threads", "4"], &ids));
    assert_eq!(back, many);
}

#[test]
fn decode_accepts_any_whitespace_and_writes_files() {
    let ids = parse_ids(&ok_text(encode(&[], b"I am a cat.\n")))[0].clone();
    let spaced: Vec<String> = ids.iter().map(u32::to_string).collect();
    let input = format!("  {}\t\r\n", spaced.join(" \t "));
    assert_eq!(
        ok_text(with_model("decode", &[], input.as_bytes())),
        "I am a cat.\n"
    );

    let dir = temp_dir();
    let path = dir.path().join("back.txt");
    let out = with_model(
        "decode",
        &["--output", path.to_str().unwrap()],
        input.as_bytes(),
    );
    assert!(ok(out).is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "I am a cat.\n");
}

#[test]
fn decode_rejects_bad_ids_naming_the_line() {
    let out = with_model("decode", &[], b"1 2 3\n4 x 5\n");
    fails(&out, 1, &["<stdin>:2:", "\"x\""]);
    let out = with_model("decode", &[], b"1 2 3\n-4\n");
    fails(&out, 1, &["<stdin>:2:"]);
    let out = with_model("decode", &[], b"5\n6\n1000000\n");
    fails(&out, 1, &["<stdin>:3:", "1000000", "out of range"]);
    let out = with_model("decode", &[], b"99999999999\n");
    fails(&out, 1, &["<stdin>:1:"]);
}

// ---- count ----

#[test]
fn count_prints_one_count_per_text_and_a_total() {
    let ids = sample_ids();
    let out = with_model("count", &[], SAMPLE.as_bytes());
    let err = stderr(&out);
    let counts: Vec<usize> = ok_text(out).lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(counts, ids.iter().map(Vec::len).collect::<Vec<_>>());
    let total: usize = counts.iter().sum();
    assert!(
        err.contains(&format!("total: {total} tokens in {} texts", ids.len())),
        "{err}"
    );

    let out = with_model("count", &["--input-format", "raw"], b"I am a cat.\nYes.\n");
    assert_eq!(ok_text(out).lines().count(), 1);
    let out = with_model("count", &["--input-format", "jsonl"], b"{\"text\": 1}\n");
    fails(&out, 1, &["<stdin>:1:"]);
}

#[test]
fn count_with_threads_matches_one_thread() {
    let text = many_lines(4000);
    let one = ok(with_model("count", &[], text.as_bytes()));
    let four = ok(with_model("count", &["--threads", "4"], text.as_bytes()));
    assert_eq!(one, four);
}

// ---- WordPiece ----

fn bert(file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/wordpiece")
        .join(file)
        .display()
        .to_string()
}

#[test]
fn wordpiece_models_encode_decode_and_add_special_tokens() {
    let vocab = bert("bert-base-uncased.vocab.txt");
    let json = bert("all-MiniLM-L6-v2.bert-uncased.tokenizer.json");
    let text = "Hello, World! [CLS] unaffable\n";
    let run = |model: &str, extra: &[&str]| {
        let mut args = vec!["encode", "--model", model, "--output-format", "jsonl"];
        args.extend_from_slice(extra);
        ok_text(simdtok(&args, text.as_bytes()))
    };
    // The reference (tokenizers 0.23.3): hello , world ! [CLS] una ##ffa ##ble
    let want = "{\"ids\": [7592, 1010, 2088, 999, 101, 14477, 20961, 3468], \"offsets\": \
                [[0, 5], [5, 6], [7, 12], [12, 13], [14, 19], [20, 23], [23, 26], [26, 29]]}\n";
    for model in [&vocab, &json] {
        assert_eq!(run(model, &[]), want, "{model}");
        for algorithm in ["fast", "linear"] {
            assert_eq!(run(model, &["--wordpiece-algorithm", algorithm]), want);
        }
        let special = run(model, &["--add-special-tokens"]);
        assert!(
            special.starts_with("{\"ids\": [101, 7592,") && special.contains("3468, 102]"),
            "{special}"
        );
    }
    // Cased: no lowercasing, no accent stripping.
    let cased = ok_text(simdtok(
        &[
            "encode",
            "--model",
            &vocab,
            "--no-lowercase",
            "--output-format",
            "pieces",
        ],
        "Café\n".as_bytes(),
    ));
    assert_eq!(cased, "[\"[UNK]\"]\n");
    // Decode joins continuation pieces and drops special tokens.
    let decoded = ok_text(simdtok(
        &["decode", "--model", &vocab],
        b"101 7592 1010 2088 999 14477 20961 3468 102\n",
    ));
    assert_eq!(decoded, "hello, world! unaffable\n");
    // Options that do not apply.
    fails(
        &simdtok(&["encode", "--model", &json, "--no-lowercase"], b"x\n"),
        2,
        &["--no-lowercase", "vocab.txt"],
    );
    fails(
        &encode(&["--wordpiece-algorithm", "linear"], b"x\n"),
        2,
        &["--wordpiece-algorithm", "WordPiece"],
    );
    // An unknown algorithm is clap's usage error.
    let out = simdtok(
        &[
            "encode",
            "--model",
            &vocab,
            "--wordpiece-algorithm",
            "quadratic",
        ],
        b"x\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("quadratic"));
}

/// `--verbose` names each pre-tokenizer regex that runs on the regex engine, once, and says
/// nothing where every pattern takes a scanner (DeepSeek V3's three Splits); the ids are the
/// same either way.
#[test]
fn verbose_names_the_regexes_that_run_on_the_regex_engine() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bpe");
    let run = |file: &str, verbose: bool| {
        let model = data.join(file).display().to_string();
        let mut args = vec!["encode", "--model", model.as_str()];
        if verbose {
            args.push("--verbose");
        }
        simdtok(&args, b"Hello world 123\n")
    };
    // Its Split is `\u2581?[A-Za-z]+`: no scanner.
    let quiet = run("gemma-1k-invert.tokenizer.json", false);
    let loud = run("gemma-1k-invert.tokenizer.json", true);
    assert_eq!(stderr(&quiet), "");
    let note = stderr(&loud);
    assert_eq!(note.lines().count(), 1, "{note}");
    assert!(
        note.contains("[A-Za-z]+") && note.contains("regex engine"),
        "{note}"
    );
    assert_eq!(ok(quiet), ok(loud));
    let deepseek = run("gpt2-2k-deepseek.tokenizer.json", true);
    assert_eq!(stderr(&deepseek), "");
    ok(deepseek);
}

/// `--cache-budget`: the ids of a tiny budget are the default's, on every family's committed
/// model; a malformed size is a usage error naming it.
#[test]
fn a_cache_budget_never_changes_the_ids() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let text = std::fs::read_to_string(data.join("corpus/udhr_scripts.txt")).unwrap();
    // A quarter of it, in whole lines.
    let end = text.as_bytes()[..text.len() / 4]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let input = &text.as_bytes()[..end];
    for rel in [
        "bpe/encoder.json",
        "bpe/gemma-1k.tokenizer.json",
        "sentencepiece/botchan_en_unigram_1000.model",
        "sentencepiece/botchan_en_bpe_1000.model",
        "wordpiece/bert-base-uncased.vocab.txt",
    ] {
        let model = data.join(rel).display().to_string();
        let run = |budget: &str| {
            ok(simdtok(
                &[
                    "encode",
                    "--model",
                    &model,
                    "--cache-budget",
                    budget,
                    "--threads",
                    "2",
                ],
                input,
            ))
        };
        assert_eq!(run("0"), run("default"), "{rel}");
        assert_eq!(run("16KiB"), run("default"), "{rel}");
    }
    let model = data.join("bpe/encoder.json").display().to_string();
    let bad = simdtok(
        &["encode", "--model", &model, "--cache-budget", "8 parsecs"],
        b"x\n",
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("8 parsecs"), "{}", stderr(&bad));
}
