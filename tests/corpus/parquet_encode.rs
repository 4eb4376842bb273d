//! `encode` over Parquet files (`--input-format parquet`, the default for `.parquet`): each
//! row's text encodes as the same text given as a JSON line; nulls and texts that are not UTF-8
//! stop the run naming the file, row group, row and column, or with `--skip-bad` are left out and
//! counted; several files by a glob pattern into one Megatron dataset; `--field` picks the
//! column. The files: pyarrow's (`tests/data/parquet/`) and some written here with the `parquet`
//! crate.

use crate::cli;
use crate::datasets;

use std::path::Path;
use std::sync::Arc;

use cli::{data, encode_to, ids_per_line, scratch, simdtok, stderr};
use parquet::data_type::{ByteArray, ByteArrayType};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

const MODEL: &str = "sentencepiece/botchan_en_unigram_1000.model";

/// The ids of each text of `texts` under `model`, given as JSON lines.
fn ids_of_texts(model: &str, texts: &[String]) -> Vec<Vec<u32>> {
    let jsonl: String = texts
        .iter()
        .map(|t| format!("{}\n", serde_json::json!({ "text": t })))
        .collect();
    ids_per_line(model, jsonl.as_bytes(), &["--input-format", "jsonl"])
}

/// The values of a fixture's `.jsonl` (strings, or `None` for a null).
fn fixture_values(name: &str) -> Vec<Option<String>> {
    let text = std::fs::read_to_string(data(&format!("parquet/{name}.jsonl"))).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Option<String>>(l).unwrap())
        .collect()
}

fn parse(stdout: &[u8]) -> Vec<Vec<u32>> {
    String::from_utf8(stdout.to_vec())
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect()
}

#[test]
fn pyarrows_files_encode_as_their_texts() {
    let model = data(MODEL);
    for name in [
        "snappy-dictionary",
        "zstd-plain-v2",
        "gzip",
        "large-string-lz4",
        "binary-uncompressed",
        "brotli",
        "nulls",
    ] {
        let values = fixture_values(name);
        let texts: Vec<String> = values.iter().flatten().cloned().collect();
        let nulls = values.len() - texts.len();
        let want = ids_of_texts(&model, &texts);
        let path = data(&format!("parquet/{name}.parquet"));
        for threads in ["1", "2"] {
            let mut args = vec![
                "encode",
                "--model",
                &model,
                "--input",
                &path,
                "--threads",
                threads,
            ];
            if nulls > 0 {
                args.push("--skip-bad");
            }
            let out = simdtok(&args, b"");
            assert!(out.status.success(), "{name}: {}", stderr(&out));
            assert_eq!(parse(&out.stdout), want, "{name} threads {threads}");
            if nulls > 0 {
                let err = stderr(&out);
                assert!(
                    err.contains(&format!("left out {nulls} bad record")),
                    "{err}"
                );
                assert!(err.contains("a null value"), "{err}");
            }
        }
        if nulls > 0 {
            // Without --skip-bad the first null stops the run, named.
            let first = values.iter().position(Option::is_none).unwrap();
            let out = simdtok(&["encode", "--model", &model, "--input", &path], b"");
            assert_eq!(out.status.code(), Some(1));
            let err = stderr(&out);
            assert!(err.contains(&format!("row {first} (from 0)")), "{err}");
            assert!(
                err.contains("column `text`") && err.contains("row group 0"),
                "{err}"
            );
        }
    }
}

/// Writes `texts` (optional binary column `text`, then a string column `other`) as a Parquet
/// file of one row group per `group` texts.
fn write(path: &Path, texts: &[Option<Vec<u8>>], group: usize) {
    let schema =
        parse_message_type("message m { optional binary text; required binary other (STRING); }")
            .unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), props).unwrap();
    for rows in texts.chunks(group) {
        let mut g = writer.next_row_group().unwrap();
        let present: Vec<ByteArray> = rows.iter().flatten().map(|t| t.clone().into()).collect();
        let levels: Vec<i16> = rows.iter().map(|t| i16::from(t.is_some())).collect();
        let mut c = g.next_column().unwrap().unwrap();
        c.typed::<ByteArrayType>()
            .write_batch(&present, Some(&levels), None)
            .unwrap();
        c.close().unwrap();
        let other: Vec<ByteArray> = (0..rows.len())
            .map(|i| format!("other {i}").into_bytes().into())
            .collect();
        let mut c = g.next_column().unwrap().unwrap();
        c.typed::<ByteArrayType>()
            .write_batch(&other, None, None)
            .unwrap();
        c.close().unwrap();
        g.close().unwrap();
    }
    writer.close().unwrap();
}

#[test]
fn texts_that_are_not_utf8_are_named_or_left_out() {
    let model = data(MODEL);
    let dir = scratch("parquet_encode", "utf8");
    let path = dir.join("bad.parquet");
    // Row 3 is not UTF-8; rows 5 and 6 each hold half of "é": valid together, not apart.
    let mut texts: Vec<Option<Vec<u8>>> = (0..8)
        .map(|i| Some(format!("text {i}").into_bytes()))
        .collect();
    texts[3] = Some(b"bad \xff".to_vec());
    texts[5] = Some(b"half \xc3".to_vec());
    texts[6] = Some(b"\xa9 other half".to_vec());
    write(&path, &texts, 4);
    let path = path.to_str().unwrap();
    let out = simdtok(&["encode", "--model", &model, "--input", path], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("row 3 (from 0)") && err.contains("invalid UTF-8"),
        "{err}"
    );
    let out = simdtok(
        &["encode", "--model", &model, "--input", path, "--skip-bad"],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let good: Vec<String> = [0, 1, 2, 4, 7]
        .iter()
        .map(|i| format!("text {i}"))
        .collect();
    assert_eq!(parse(&out.stdout), ids_of_texts(&model, &good));
    assert!(
        stderr(&out).contains("left out 3 bad records"),
        "{}",
        stderr(&out)
    );
    // Another column by --field; a missing one is named with the file's columns.
    let out = simdtok(
        &[
            "encode", "--model", &model, "--input", path, "--field", "other",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let others: Vec<String> = (0..4).chain(0..4).map(|i| format!("other {i}")).collect();
    assert_eq!(parse(&out.stdout), ids_of_texts(&model, &others));
    let out = simdtok(
        &[
            "encode", "--model", &model, "--input", path, "--field", "body",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no such column"), "{}", stderr(&out));
    // Parquet from stdin is a usage error.
    let bytes = std::fs::read(path).unwrap();
    let out = simdtok(
        &["encode", "--model", &model, "--input-format", "parquet"],
        &bytes,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn parquet_files_into_one_megatron_dataset() {
    let model = data(MODEL);
    let dir = scratch("parquet_encode", "megatron");
    let mut all = Vec::new();
    for f in 0..3 {
        let texts: Vec<String> = (0..500)
            .map(|i| format!("file {f} row {i}: {}", "words ".repeat(i % 13)))
            .collect();
        let rows: Vec<Option<Vec<u8>>> =
            texts.iter().map(|t| Some(t.clone().into_bytes())).collect();
        write(&dir.join(format!("part-{f}.parquet")), &rows, 128);
        all.extend(texts);
    }
    let pattern = dir.join("*.parquet").display().to_string();
    let prefix = dir.join("out/train");
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let out = encode_to(
        &model,
        "megatron",
        prefix.to_str().unwrap(),
        &["--input", &pattern, "--append-eos"],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let want: Vec<Vec<u32>> = ids_of_texts(&model, &all)
        .into_iter()
        .map(|mut d| {
            d.push(2);
            d
        })
        .collect();
    let got = datasets::megatron_documents(&datasets::megatron(&prefix));
    assert_eq!(got, want);
}
