//! `simdtok align` through the built binary (docs/cli.md, `align`): `--pairs` gives exactly
//! `simdtok::align::get_alignments` for every line, in input order whatever the threads, and
//! names the file and line of bad input; `--model` aligns a model's tokens with the text's
//! words by byte offsets, which agrees with the diff-based alignment of the same strings.

#[path = "common/cli.rs"]
mod cli;

use std::path::Path;
use std::process::Output;

use cli::{simdtok, stderr};

use serde::Deserialize;
use simdtok::Tokenizer;
use simdtok::align::{get_alignments, spans};

/// `simdtok align --pairs - args...` on `stdin`.
fn pairs(args: &[&str], stdin: &[u8]) -> Output {
    let mut all = vec!["align", "--pairs", "-"];
    all.extend_from_slice(args);
    simdtok(&all, stdin)
}

/// The stdout of a successful run.
fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        stderr(&out)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Asserts a failure with `status` whose message contains every one of `needles`.
fn fails(out: &Output, status: i32, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(status), "stderr: {err}");
    if status == 1 {
        assert!(err.starts_with("simdtok: "), "{err}");
    }
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in {err:?}");
    }
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// A seeded xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// ---- --pairs ----

/// Tokens to draw from: ASCII, case, accents (composed and not), full width, ligatures, CJK,
/// emoji, characters JSON must escape, whitespace, and the empty token.
const POOL: &[&str] = &[
    "the",
    "New",
    "York",
    "new york",
    "À",
    "a",
    "la",
    "ＧＯＲＧＥ",
    "gorge",
    "é",
    "e\u{301}",
    "Café",
    "ﬁne",
    "fine",
    "İstanbul",
    "straße",
    "STRASSE",
    "日本",
    "語",
    "日本語",
    "😀",
    "👍🏽",
    "\"quoted\"",
    "back\\slash",
    "tab\there",
    "new\nline",
    "\u{1}ctl",
    "/",
    "",
    " ",
    "a b",
    "x",
    "42",
    "ΟΔΟΣ",
    "οδος",
];

/// Tokens drawn from the pool.
fn draw(rng: &mut Rng, max: usize) -> Vec<String> {
    let n = rng.below(max + 1);
    (0..n)
        .map(|_| POOL[rng.below(POOL.len())].to_owned())
        .collect()
}

/// The characters of `tokens` cut into new tokens at random places (a second tokenization of
/// the same text), some of them upper-cased.
fn resplit(rng: &mut Rng, tokens: &[String]) -> Vec<String> {
    let chars: Vec<char> = tokens.iter().flat_map(|t| t.chars()).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let n = 1 + rng.below(6);
        let token: String = chars[i..(i + n).min(chars.len())].iter().collect();
        out.push(if rng.below(4) == 0 {
            token.to_uppercase()
        } else {
            token
        });
        if rng.below(10) == 0 {
            out.push(String::new());
        }
        i += n;
    }
    out
}

/// `n` pairs: empty sides, unrelated sides, and two tokenizations of one text.
fn generate_pairs(seed: u64, n: usize, max_tokens: usize) -> Vec<(Vec<String>, Vec<String>)> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| match i % 7 {
            0 => (Vec::new(), draw(&mut rng, 3)),
            1 => (draw(&mut rng, 3), Vec::new()),
            2 => (draw(&mut rng, max_tokens), draw(&mut rng, max_tokens)),
            _ => {
                let a = draw(&mut rng, max_tokens);
                let b = resplit(&mut rng, &a);
                if rng.below(2) == 0 { (a, b) } else { (b, a) }
            }
        })
        .collect()
}

/// One input line for a pair, the fields in varied order and spacing, sometimes with another
/// field.
fn pair_line(i: usize, a: &[String], b: &[String]) -> String {
    let (a, b) = (
        serde_json::to_string(a).unwrap(),
        serde_json::to_string(b).unwrap(),
    );
    match i % 3 {
        0 => format!("{{\"a\": {a}, \"b\": {b}}}\n"),
        1 => format!("{{\"id\": {i}, \"b\":{b},\"a\":{a}}}\n"),
        _ => format!(" {{ \"a\" : {a} , \"b\" : {b} , \"meta\": {{\"x\": [null]}} }} \r\n"),
    }
}

/// `[[0, 1], [2]]`: the spacing of Python's `json.dumps`.
fn rows(alignment: &[Vec<usize>]) -> String {
    let rows: Vec<String> = alignment
        .iter()
        .map(|row| {
            let row: Vec<String> = row.iter().map(|t| t.to_string()).collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

/// The output `align --pairs` must give for `pairs`, from the library.
fn expected(pairs: &[(Vec<String>, Vec<String>)]) -> String {
    pairs
        .iter()
        .map(|(a, b)| {
            let (a2b, b2a) = get_alignments(a, b);
            format!("{{\"a2b\": {}, \"b2a\": {}}}\n", rows(&a2b), rows(&b2a))
        })
        .collect()
}

fn input_of(pairs: &[(Vec<String>, Vec<String>)]) -> String {
    pairs
        .iter()
        .enumerate()
        .map(|(i, (a, b))| pair_line(i, a, b))
        .collect()
}

#[test]
fn pairs_equal_get_alignments() {
    let generated = generate_pairs(0x2545_f491_4f6c_dd1d, 400, 12);
    let input = input_of(&generated);
    let want = expected(&generated);
    for threads in ["1", "3"] {
        let got = ok(pairs(&["--threads", threads], input.as_bytes()));
        assert!(got == want, "--threads {threads}: output differs");
    }
}

#[test]
fn pairs_output_shape_and_escapes() {
    // Escaped tokens (\u, surrogate pairs, quotes) are read as their strings.
    let input = concat!(
        r#"{"a": ["New York", "is"], "b": ["New", "York", "is"]}"#,
        "\n",
        r#"{"a": ["caf\u00e9", "\ud83d\ude00", "\"x\""], "b": ["CAFE\u0301", "😀", "\"", "x", "\""]}"#,
        "\n",
        r#"{"a": [], "b": [""]}"#,
        "\n",
        r#"{"a": [], "b": []}"#,
    );
    let got = ok(pairs(&[], input.as_bytes()));
    assert_eq!(
        got,
        "{\"a2b\": [[0, 1], [2]], \"b2a\": [[0], [0], [1]]}\n\
         {\"a2b\": [[0], [1], [2, 3, 4]], \"b2a\": [[0], [1], [2], [2], [2]]}\n\
         {\"a2b\": [], \"b2a\": [[]]}\n\
         {\"a2b\": [], \"b2a\": []}\n"
    );
    // An empty input has no pairs; a last line without a line end is a pair.
    assert_eq!(ok(pairs(&[], b"")), "");
}

#[test]
fn pairs_keep_input_order_across_blocks_and_threads() {
    // About 1.5 MB: several 256 KiB blocks, encoded by different workers.
    let generated = generate_pairs(0x9e37_79b9_7f4a_7c15, 5000, 40);
    let input = input_of(&generated);
    assert!(input.len() > 1 << 20, "{} bytes", input.len());
    let want = expected(&generated);
    for threads in ["1", "3", "0"] {
        let got = ok(pairs(&["--threads", threads], input.as_bytes()));
        assert_eq!(got.lines().count(), generated.len());
        assert!(got == want, "--threads {threads}: output differs");
    }
}

#[test]
fn pairs_from_a_file_equal_stdin_and_output_files_are_written_on_success() {
    let generated = generate_pairs(7, 50, 8);
    let input = input_of(&generated);
    let dir = temp_dir();
    let path = dir.path().join("pairs.jsonl");
    std::fs::write(&path, &input).unwrap();
    let from_file = ok(simdtok(
        &["align", "--pairs", path.to_str().unwrap()],
        b"ignored",
    ));
    assert_eq!(from_file, ok(pairs(&[], input.as_bytes())));
    assert_eq!(from_file, expected(&generated));

    let out_path = dir.path().join("out.jsonl");
    let out = simdtok(
        &[
            "align",
            "--pairs",
            "-",
            "--output",
            out_path.to_str().unwrap(),
            "--no-progress",
        ],
        input.as_bytes(),
    );
    assert_eq!(ok(out), "", "nothing on stdout");
    assert_eq!(std::fs::read_to_string(&out_path).unwrap(), from_file);
    // A failing run leaves no file, and no temporary file, behind.
    let fresh = dir.path().join("fresh.jsonl");
    let mut bad = input.clone();
    bad.push_str("{\"a\": [1], \"b\": []}\n");
    let out = simdtok(
        &["align", "--pairs", "-", "--output", fresh.to_str().unwrap()],
        bad.as_bytes(),
    );
    fails(&out, 1, &["<stdin>:51:"]);
    assert!(!fresh.exists());
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["out.jsonl", "pairs.jsonl"]);
}

#[test]
fn progress_goes_to_stderr_only() {
    let generated = generate_pairs(11, 30, 6);
    let input = input_of(&generated);
    let out = pairs(&["--progress"], input.as_bytes());
    assert_eq!(ok(out), expected(&generated));
}

#[test]
fn bad_pairs_name_the_file_and_line() {
    let good = "{\"a\": [\"x\"], \"b\": [\"x\"]}\n";
    let cases: &[(&[u8], &[&str])] = &[
        (b"{\"a\": [\"\xff\"], \"b\": []}\n", &["UTF-8"]),
        (b"{\"a\": [\"x\"], \"b\": [}\n", &["invalid JSON"]),
        // An empty line is invalid JSON (as for `encode --input-format jsonl`).
        (b"\n", &["invalid JSON"]),
        (
            b"[[\"a\"], [\"b\"]]\n",
            &["expected a JSON object, found an array"],
        ),
        (b"{\"b\": [\"x\"]}\n", &["no field \"a\""]),
        (b"{\"a\": [\"x\"]}\n", &["no field \"b\""]),
        (
            b"{\"a\": \"x\", \"b\": []}\n",
            &["field \"a\" is a string, not an array of strings"],
        ),
        (
            b"{\"a\": [], \"b\": [\"x\", 7]}\n",
            &["field \"b\"", "index 1", "a number, not a string"],
        ),
        (b"{\"a\": [null], \"b\": []}\n", &["field \"a\"", "null"]),
    ];
    let dir = temp_dir();
    let path = dir.path().join("bad.jsonl");
    for &(bad, needles) in cases {
        let mut input = good.repeat(2).into_bytes();
        input.extend_from_slice(bad);
        input.extend_from_slice(good.as_bytes());
        let out = pairs(&[], &input);
        fails(&out, 1, &[&["<stdin>:3: "], needles].concat());
        std::fs::write(&path, &input).unwrap();
        let out = simdtok(&["align", "--pairs", path.to_str().unwrap()], b"");
        let at = format!("{}:3: ", path.display());
        fails(&out, 1, &[&[at.as_str()], needles].concat());
    }
    let out = simdtok(&["align", "--pairs", "/nonexistent/pairs.jsonl"], b"");
    fails(&out, 1, &["/nonexistent/pairs.jsonl"]);
}

#[test]
fn the_first_bad_pair_in_input_order_is_reported_whatever_the_threads() {
    let generated = generate_pairs(3, 6000, 30);
    let mut lines: Vec<String> = generated
        .iter()
        .enumerate()
        .map(|(i, (a, b))| pair_line(i, a, b))
        .collect();
    lines[5000] = "{\"a\": [], \"b\": 1}\n".into();
    lines[4321] = "{\"a\": [\"\", 2], \"b\": []}\n".into();
    let input: String = lines.concat();
    for threads in ["1", "3"] {
        let out = pairs(&["--threads", threads], input.as_bytes());
        fails(&out, 1, &["<stdin>:4322: ", "index 1"]);
    }
}

#[test]
fn usage_errors_exit_2() {
    let bert = repo("tests/data/wordpiece/bert-base-uncased.vocab.txt");
    let spm = repo("tests/data/sentencepiece/botchan_en_unigram_1000.model");
    let cases: &[&[&str]] = &[
        &["align"],
        &["align", "--pairs", "-", "--model", &bert],
        &["align", "--pairs", "-", "--input", "-"],
        &["align", "--pairs", "-", "--input-format", "jsonl"],
        &["align", "--pairs", "-", "--field", "text"],
        &["align", "--pairs", "-", "--lowercase"],
        &["align", "--pairs", "-", "--tier", "scalar"],
        &["align", "--pairs", "-", "--threads", "many"],
        &["align", "--pairs"],
        &["align", "--model", &bert, "--field", "text"],
        &["align", "--model", &bert, "--input-format", "words"],
        &["align", "--model", &spm, "--lowercase"],
        &["align", "--model", &spm, "--pattern", "cl100k"],
    ];
    for &args in cases {
        let out = simdtok(args, b"{\"a\": [], \"b\": []}\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

// ---- --model ----

/// One output line of `align --model`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Aligned {
    ids: Vec<u32>,
    offsets: Vec<(usize, usize)>,
    words: Vec<(usize, usize)>,
    word2tokens: Vec<Vec<usize>>,
    token2words: Vec<Vec<usize>>,
}

fn parse_aligned(output: &str) -> Vec<Aligned> {
    output
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Texts without the few characters where the diff-based alignment may legitimately differ
/// from the offset-based one: a capital sigma (lowercased by its context, so a token and its
/// word may lowercase it differently), characters whose NFKD holds a space (`¨`, U+00A0), and
/// control characters (dropped by BERT's normalizer but a word of their own).
const TEXTS: &[&str] = &[
    "Hello, World! New York's café is open.",
    "I am a cat. As yet I have no name.",
    "naïve façade — “quotes” and 3.14 numbers, don't stop!",
    "日本語のテキスト、そして English words.",
    "emoji 😀 and 👍🏽 and tabs\tand  double  spaces",
    "",
    "   leading and trailing spaces   ",
    "ﬁne ligatures, ＦＵＬＬ width, İstanbul, straße",
    "def f(x):\n",
    "unaffable antidisestablishmentarianism",
];

fn models() -> Vec<String> {
    [
        "tests/data/wordpiece/bert-base-uncased.vocab.txt",
        "tests/data/wordpiece/all-MiniLM-L6-v2.bert-uncased.tokenizer.json",
        "tests/data/sentencepiece/botchan_en_unigram_1000.model",
        "tests/data/sentencepiece/botchan_en_bpe_1000.model",
        "tests/data/sentencepiece/kyoto_ja_unigram_8000.model",
        "tests/data/bpe/encoder.json",
        "tests/data/bpe/kjv-spm-first.tokenizer.json",
    ]
    .iter()
    .map(|p| repo(p))
    .collect()
}

/// Checks one output line against the library: the model's ids and offsets, the text's words,
/// the maps by offsets — and that those maps agree with `get_alignments` on the strings.
/// Returns the number of tokens compared with the diff.
fn check_aligned(model: &str, tokenizer: &Tokenizer, text: &str, got: &Aligned) -> usize {
    let enc = tokenizer.encode_full(text);
    let offsets: Vec<(usize, usize)> = enc
        .offsets
        .iter()
        .map(|&(s, e)| (s as usize, e as usize))
        .collect();
    assert_eq!(got.ids, enc.ids, "{model}: ids of {text:?}");
    assert_eq!(got.offsets, offsets, "{model}: offsets of {text:?}");
    let words = spans::words(text);
    assert_eq!(got.words, words, "{model}: words of {text:?}");
    let (w2t, t2w) = spans::align_spans(&words, &offsets);
    assert_eq!(got.word2tokens, w2t.to_nested(), "{model}: {text:?}");
    assert_eq!(got.token2words, t2w.to_nested(), "{model}: {text:?}");

    // The diff-based alignment of the same strings: each word's text, and each token's text at
    // its offsets. Tokens are left out where their span is not a span of whole characters in
    // text order (none is expected to cut a character: a token covering part of one, byte-level
    // or byte fallback, gets the whole character's span), or where it overlaps the previous
    // token kept (such as the second byte-level token of an emoji, with the same span as the
    // first): the diff would see those characters twice, while offsets count them once.
    let word_strings: Vec<&str> = words.iter().map(|&(s, e)| &text[s..e]).collect();
    let mut kept = Vec::new();
    let mut end = 0;
    for (i, &(s, e)) in offsets.iter().enumerate() {
        if s <= e && s >= end && text.is_char_boundary(s) && text.is_char_boundary(e) {
            kept.push(i);
            end = end.max(e);
        }
    }
    let token_strings: Vec<&str> = kept
        .iter()
        .map(|&i| &text[offsets[i].0..offsets[i].1])
        .collect();
    let (d_w2t, d_t2w) = get_alignments(&word_strings, &token_strings);
    for (w, row) in d_w2t.iter().enumerate() {
        let by_diff: Vec<usize> = row.iter().map(|&k| kept[k]).collect();
        let by_offsets: Vec<usize> = got.word2tokens[w]
            .iter()
            .copied()
            .filter(|t| kept.contains(t))
            .collect();
        assert_eq!(
            by_offsets, by_diff,
            "{model}: word {w} {:?} of {text:?}",
            word_strings[w]
        );
    }
    for (k, row) in d_t2w.iter().enumerate() {
        assert_eq!(
            &got.token2words[kept[k]], row,
            "{model}: token {} {:?} of {text:?}",
            kept[k], token_strings[k]
        );
    }
    kept.len()
}

#[test]
fn model_alignments_agree_with_the_diff() {
    let input: String = TEXTS.iter().map(|t| format!("{t}\n")).collect();
    // "def f(x):\n" holds a line end: as a line it is "def f(x):".
    let texts: Vec<&str> = input.lines().collect();
    for model in models() {
        let tokenizer = Tokenizer::from_file(&model).unwrap();
        let got = parse_aligned(&ok(simdtok(
            &["align", "--model", &model, "--threads", "2"],
            input.as_bytes(),
        )));
        assert_eq!(got.len(), texts.len(), "{model}");
        let mut compared = 0;
        for (text, got) in texts.iter().zip(&got) {
            compared += check_aligned(&model, &tokenizer, text, got);
        }
        assert!(compared > 50, "{model}: only {compared} tokens compared");
    }
}

#[test]
fn model_output_shape() {
    let bert = repo("tests/data/wordpiece/bert-base-uncased.vocab.txt");
    let got = ok(simdtok(
        &["align", "--model", &bert],
        b"Hello, unaffable!\n",
    ));
    assert_eq!(
        got,
        "{\"ids\": [7592, 1010, 14477, 20961, 3468, 999], \"offsets\": [[0, 5], [5, 6], \
         [7, 10], [10, 13], [13, 16], [16, 17]], \"words\": [[0, 5], [5, 6], [7, 16], [16, 17]], \
         \"word2tokens\": [[0], [1], [2, 3, 4], [5]], \
         \"token2words\": [[0], [1], [2], [2], [2], [3]]}\n"
    );
    // Special tokens have empty spans: they map to no word.
    let got = parse_aligned(&ok(simdtok(
        &["align", "--model", &bert, "--add-special-tokens"],
        b"Hello\n",
    )));
    assert_eq!(got[0].ids, [101, 7592, 102]);
    assert_eq!(got[0].token2words, [vec![], vec![0], vec![]]);
    assert_eq!(got[0].word2tokens, [vec![1]]);
    // An empty text: nothing to align; an empty input: no output.
    assert_eq!(
        ok(simdtok(&["align", "--model", &bert], b"\n")),
        "{\"ids\": [], \"offsets\": [], \"words\": [], \"word2tokens\": [], \"token2words\": []}\n"
    );
    assert_eq!(ok(simdtok(&["align", "--model", &bert], b"")), "");
}

#[test]
fn model_reads_texts_as_encode_does() {
    let spm = repo("tests/data/sentencepiece/botchan_en_unigram_1000.model");
    let tokenizer = Tokenizer::from_file(&spm).unwrap();
    let lines = "I am a cat.\nThe boy ran home.\n";
    let by_lines = ok(simdtok(&["align", "--model", &spm], lines.as_bytes()));
    // jsonl, with --field; stdin as `-`; a file.
    let jsonl = "{\"body\": \"I am a cat.\"}\n{\"body\": \"The boy ran home.\"}\n";
    let args = [
        "align",
        "--model",
        &spm,
        "--input-format",
        "jsonl",
        "--field",
        "body",
        "--input",
        "-",
    ];
    assert_eq!(ok(simdtok(&args, jsonl.as_bytes())), by_lines);
    let dir = temp_dir();
    let path = dir.path().join("texts.txt");
    std::fs::write(&path, lines).unwrap();
    let from_file = ok(simdtok(
        &["align", "--model", &spm, "--input", path.to_str().unwrap()],
        b"",
    ));
    assert_eq!(from_file, by_lines);
    // raw: the whole input is one text, line ends included.
    let raw = ok(simdtok(
        &["align", "--model", &spm, "--input-format", "raw"],
        lines.as_bytes(),
    ));
    let got = parse_aligned(&raw);
    assert_eq!(got.len(), 1);
    check_aligned(&spm, &tokenizer, lines, &got[0]);
    // Bad input names the line, as encode does.
    let out = simdtok(&["align", "--model", &spm], b"good\nbad \xff\n");
    fails(&out, 1, &["<stdin>:2:", "UTF-8"]);
    let out = simdtok(
        &["align", "--model", &spm, "--input-format", "jsonl"],
        b"{\"text\": \"a\"}\n{\"text\": 3}\n",
    );
    fails(&out, 1, &["<stdin>:2:", "not a string"]);
}

#[test]
fn model_keeps_input_order_across_threads() {
    let gpt2 = repo("tests/data/bpe/encoder.json");
    // About 700 KB of lines: several blocks.
    let mut rng = Rng(5);
    let mut input = String::new();
    while input.len() < 700_000 {
        let n = rng.below(30);
        for i in 0..n {
            if i > 0 {
                input.push(' ');
            }
            input.push_str(TEXTS[rng.below(TEXTS.len())].trim_end_matches('\n'));
        }
        input.push('\n');
    }
    let one = ok(simdtok(
        &["align", "--model", &gpt2, "--threads", "1"],
        input.as_bytes(),
    ));
    let three = ok(simdtok(
        &["align", "--model", &gpt2, "--threads", "3"],
        input.as_bytes(),
    ));
    assert!(one == three, "--threads 3 changed the output");
    assert_eq!(one.lines().count(), input.lines().count());
}
