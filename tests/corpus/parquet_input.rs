//! Parquet inputs (`simdtok::corpus::parquet`): files written here with the `parquet` crate's
//! own low-level writer read back text for text, row for row, whatever their row groups, pages
//! (v1 and v2), encodings (plain, dictionary falling back to plain or, in v2, to
//! DELTA_BYTE_ARRAY, the delta encodings), codecs and batch sizes; the text column among
//! others, nested in a struct, or nullable (nulls an error naming the row, or skipped and
//! counted); a missing column, one of another type and a list are errors naming the file, the
//! column and what it holds; and damaged files (every truncation, flipped bytes, other files)
//! are errors naming the file, never a panic (the reader's own, on a few damaged pages, caught
//! and reported as damage) nor more texts than rows.
//! Files written by pyarrow (`tests/data/parquet/`, made by `scripts/make-parquet-fixtures.py`)
//! read back as the `.jsonl` beside each says; a codec this build does not read (LZO) is refused
//! by name.

use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{BrotliLevel, Compression, Encoding, GzipLevel, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use simdtok::corpus::parquet::{ParquetError, ParquetErrorKind, ParquetTexts, TextBatch};

/// A scratch directory of its own for `name`.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("parquet_input")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One column's values in one row group.
#[derive(Clone)]
enum Values {
    /// Strings (or bytes); `None` a null (the column must be optional then).
    Bytes(Vec<Option<Vec<u8>>>),
    Int64(Vec<i64>),
    Int32(Vec<i32>),
}

impl Values {
    fn texts(texts: &[&str]) -> Values {
        Values::Bytes(texts.iter().map(|t| Some(t.as_bytes().to_vec())).collect())
    }
}

/// Writes `groups` (each row group's columns, in the schema's order; a column's definition
/// levels are 0/1, or 0/1/2 when `nested`) as a Parquet file of `schema`.
fn write(
    path: &Path,
    schema: &str,
    props: WriterProperties,
    groups: &[Vec<Values>],
    max_level: i16,
) {
    let schema = Arc::new(parse_message_type(schema).unwrap());
    let file = File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, schema, Arc::new(props)).unwrap();
    for columns in groups {
        let mut group = writer.next_row_group().unwrap();
        for values in columns {
            let mut column = group
                .next_column()
                .unwrap()
                .expect("as many columns as the schema");
            let levels = |nulls: Vec<bool>| -> Vec<i16> {
                nulls
                    .into_iter()
                    .map(|null| if null { 0 } else { max_level })
                    .collect()
            };
            match values {
                Values::Bytes(v) => {
                    let present: Vec<ByteArray> = v
                        .iter()
                        .flatten()
                        .map(|b| ByteArray::from(b.clone()))
                        .collect();
                    let def = levels(v.iter().map(Option::is_none).collect());
                    let def = (max_level > 0).then_some(&def[..]);
                    column
                        .typed::<ByteArrayType>()
                        .write_batch(&present, def, None)
                        .unwrap();
                }
                Values::Int64(v) => {
                    let def = vec![max_level; v.len()];
                    let def = (max_level > 0).then_some(&def[..]);
                    column
                        .typed::<Int64Type>()
                        .write_batch(v, def, None)
                        .unwrap();
                }
                Values::Int32(v) => {
                    let def = vec![max_level; v.len()];
                    let def = (max_level > 0).then_some(&def[..]);
                    column
                        .typed::<Int32Type>()
                        .write_batch(v, def, None)
                        .unwrap();
                }
            }
            column.close().unwrap();
        }
        group.close().unwrap();
    }
    writer.close().unwrap();
}

/// Small pages, so that a few dozen texts span several, and dictionaries that fill up and fall
/// back to plain pages within a chunk.
fn props(version: WriterVersion, dictionary: bool, codec: Compression) -> WriterProperties {
    WriterProperties::builder()
        .set_writer_version(version)
        .set_dictionary_enabled(dictionary)
        .set_dictionary_page_size_limit(512)
        .set_data_page_size_limit(1024)
        .set_write_batch_size(5)
        .set_compression(codec)
        .build()
}

/// Everything read from a file: its texts, each text's row, the nulls skipped.
#[derive(Debug, PartialEq, Eq)]
struct Read {
    texts: Vec<Vec<u8>>,
    rows: Vec<u64>,
    skipped: u64,
}

/// Reads the whole column in batches of about `max_bytes`, checking what each batch promises:
/// at least one text, no text past the one that reached `max_bytes`, rows in order.
fn read_all(
    path: &Path,
    column: &str,
    skip_bad: bool,
    max_bytes: usize,
) -> Result<Read, ParquetError> {
    let mut texts = ParquetTexts::open(path, column, skip_bad)?;
    let mut batch = TextBatch::default();
    let mut read = Read {
        texts: Vec::new(),
        rows: Vec::new(),
        skipped: 0,
    };
    let mut next_row = 0;
    while texts.next_batch(&mut batch, max_bytes)? {
        assert!(!batch.is_empty());
        assert_eq!(batch.first_row, next_row, "batches follow one another");
        let before_last = batch.ends[..batch.len() - 1].last().copied().unwrap_or(0);
        assert!(
            before_last < max_bytes || batch.len() == 1,
            "the batch stops at the text that reaches max_bytes"
        );
        assert_eq!(batch.bytes.len(), *batch.ends.last().unwrap());
        for i in 0..batch.len() {
            read.texts.push(batch.text(i).to_vec());
            read.rows.push(batch.row(i));
        }
        next_row = batch.first_row + (batch.len() + batch.skipped_rows.len()) as u64;
        assert_eq!(batch.texts().count(), batch.len());
    }
    read.skipped = texts.skipped();
    Ok(read)
}

/// Texts of every kind: empty, one byte, multi-byte UTF-8 of every length, long, repeated
/// (which dictionaries catch).
fn varied_texts(n: usize, seed: usize) -> Vec<String> {
    (0..n)
        .map(|i| match (i + seed) % 9 {
            0 => String::new(),
            1 => "a".to_string(),
            2 => format!("row {i}: naïve café, Ελληνικά, 日本語, 🦀 {}", i * 7),
            3 => "the same text again".to_string(),
            4 => "x".repeat(3000 + i),
            5 => "€".repeat(i % 50),
            6 => format!("{i}\n\ttabs and\r\nline ends\0nul"),
            7 => "the same text again".to_string(),
            _ => format!("text {i}"),
        })
        .collect()
}

fn as_bytes(texts: &[String]) -> Vec<Vec<u8>> {
    texts.iter().map(|t| t.as_bytes().to_vec()).collect()
}

fn codecs() -> Vec<(&'static str, Compression)> {
    vec![
        ("uncompressed", Compression::UNCOMPRESSED),
        ("snappy", Compression::SNAPPY),
        ("gzip", Compression::GZIP(GzipLevel::default())),
        ("zstd", Compression::ZSTD(ZstdLevel::default())),
        ("lz4_raw", Compression::LZ4_RAW),
        ("lz4", Compression::LZ4),
        ("brotli", Compression::BROTLI(BrotliLevel::default())),
    ]
}

#[test]
fn row_groups_pages_encodings_and_codecs_read_back() {
    let dir = scratch("matrix");
    let groups: Vec<Vec<String>> = vec![
        varied_texts(40, 0),
        Vec::new(),
        varied_texts(1, 3),
        varied_texts(23, 5),
    ];
    let expected: Vec<Vec<u8>> = groups.iter().flat_map(|g| as_bytes(g)).collect();
    let schema = "message m { required binary text (STRING); }";
    for (name, codec) in codecs() {
        for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            for dictionary in [false, true] {
                let path = dir.join(format!("{name}-{version:?}-{dictionary}.parquet"));
                let columns: Vec<Vec<Values>> = groups
                    .iter()
                    .map(|g| {
                        vec![Values::texts(
                            &g.iter().map(String::as_str).collect::<Vec<_>>(),
                        )]
                    })
                    .collect();
                write(
                    &path,
                    schema,
                    props(version, dictionary, codec),
                    &columns,
                    0,
                );
                let texts = ParquetTexts::open(&path, "text", false).unwrap();
                assert_eq!(texts.rows(), expected.len() as u64);
                assert_eq!(texts.row_groups(), 4);
                for max_bytes in [0, 1, 100, 5000, 1 << 20] {
                    let read = read_all(&path, "text", false, max_bytes).unwrap();
                    assert_eq!(
                        read.texts,
                        expected,
                        "{}, max_bytes {max_bytes}",
                        path.display()
                    );
                    assert_eq!(read.rows, (0..expected.len() as u64).collect::<Vec<_>>());
                    assert_eq!(read.skipped, 0);
                }
            }
        }
    }
}

#[test]
fn delta_encodings_read_back() {
    let dir = scratch("delta");
    let texts = varied_texts(60, 2);
    for encoding in [
        Encoding::DELTA_LENGTH_BYTE_ARRAY,
        Encoding::DELTA_BYTE_ARRAY,
    ] {
        let path = dir.join(format!("{encoding}.parquet"));
        let props = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_encoding(encoding)
            .set_data_page_size_limit(2048)
            .set_write_batch_size(4)
            .build();
        let values = Values::texts(&texts.iter().map(String::as_str).collect::<Vec<_>>());
        write(
            &path,
            "message m { required binary text (UTF8); }",
            props,
            &[vec![values]],
            0,
        );
        let read = read_all(&path, "text", false, 300).unwrap();
        assert_eq!(read.texts, as_bytes(&texts), "{encoding}");
    }
}

#[test]
fn long_texts_and_small_batches() {
    // Texts of several MB, more than a page each; a batch of max_bytes 1 holds one text.
    let dir = scratch("long");
    let path = dir.join("long.parquet");
    let texts: Vec<String> = (0..5)
        .map(|i| format!("{i}{}", "ü長🦀".repeat(100_000 * (i + 1))))
        .collect();
    let values = Values::texts(&texts.iter().map(String::as_str).collect::<Vec<_>>());
    let props = props(WriterVersion::PARQUET_1_0, true, Compression::SNAPPY);
    write(
        &path,
        "message m { optional binary text (STRING); }",
        props,
        &[vec![values]],
        1,
    );
    let mut reader = ParquetTexts::open(&path, "text", false).unwrap();
    let mut batch = TextBatch::default();
    for (i, text) in texts.iter().enumerate() {
        assert!(reader.next_batch(&mut batch, 1).unwrap());
        assert_eq!(batch.len(), 1);
        assert_eq!(batch.text(0), text.as_bytes());
        assert_eq!(batch.row(0), i as u64);
    }
    assert!(!reader.next_batch(&mut batch, 1).unwrap());
    assert!(batch.is_empty());
    assert!(
        !reader.next_batch(&mut batch, 1).unwrap(),
        "the end stays the end"
    );
    assert_eq!(
        read_all(&path, "text", false, usize::MAX).unwrap().texts,
        as_bytes(&texts)
    );
}

#[test]
fn the_text_column_among_others() {
    let dir = scratch("others");
    let path = dir.join("others.parquet");
    let schema = "message m {
        required int64 id;
        optional binary title (STRING);
        optional binary text (STRING);
        required int32 length;
        optional binary raw;
    }";
    let texts = varied_texts(30, 1);
    let titles: Vec<String> = (0..30).map(|i| format!("title {i}")).collect();
    let group = |range: std::ops::Range<usize>| {
        vec![
            Values::Int64(range.clone().map(|i| i as i64).collect()),
            Values::texts(
                &titles[range.clone()]
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            ),
            Values::texts(
                &texts[range.clone()]
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            ),
            Values::Int32(range.clone().map(|i| texts[i].len() as i32).collect()),
            Values::Bytes(range.map(|i| Some(vec![i as u8, 0xff, 0xfe])).collect()),
        ]
    };
    let props = props(
        WriterVersion::PARQUET_2_0,
        true,
        Compression::ZSTD(ZstdLevel::default()),
    );
    write(&path, schema, props, &[group(0..10), group(10..30)], 1);
    assert_eq!(
        read_all(&path, "text", false, 64).unwrap().texts,
        as_bytes(&texts)
    );
    assert_eq!(
        read_all(&path, "title", false, 64).unwrap().texts,
        as_bytes(&titles)
    );
    // A BYTE_ARRAY of no annotation is read as text too (the caller checks UTF-8).
    let raw = read_all(&path, "raw", false, 64).unwrap().texts;
    assert_eq!(raw[7], [7, 0xff, 0xfe]);
}

#[test]
fn a_field_inside_a_struct() {
    let dir = scratch("nested");
    let path = dir.join("nested.parquet");
    let schema = "message m { optional group meta { optional binary text (STRING); } }";
    // Level 0: meta is null; 1: meta.text is null; 2: a text.
    let file = File::create(&path).unwrap();
    let mut writer = SerializedFileWriter::new(
        file,
        Arc::new(parse_message_type(schema).unwrap()),
        Arc::new(WriterProperties::builder().build()),
    )
    .unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut column = group.next_column().unwrap().unwrap();
    column
        .typed::<ByteArrayType>()
        .write_batch(&["a".into(), "b".into()], Some(&[2, 0, 1, 2]), None)
        .unwrap();
    column.close().unwrap();
    group.close().unwrap();
    writer.close().unwrap();

    let read = read_all(&path, "meta.text", true, 10).unwrap();
    assert_eq!(read.texts, [b"a".to_vec(), b"b".to_vec()]);
    assert_eq!(read.rows, [0, 3]);
    assert_eq!(read.skipped, 2);
    let e = read_all(&path, "meta.text", false, 10).unwrap_err();
    assert!(matches!(e.kind, ParquetErrorKind::Null));
    assert_eq!(e.row, Some(1));
    // The struct itself is no text column.
    let e = read_all(&path, "meta", false, 10).unwrap_err();
    assert!(matches!(e.kind, ParquetErrorKind::NotText(_)), "{e}");
    assert!(e.to_string().contains("group"), "{e}");
}

#[test]
fn nulls_are_an_error_naming_the_row_or_skipped_and_counted() {
    let dir = scratch("nulls");
    let path = dir.join("nulls.parquet");
    let with_nulls = |n: usize, every: usize| {
        Values::Bytes(
            (0..n)
                .map(|i| (i % every != 3).then(|| format!("text {i}").into_bytes()))
                .collect(),
        )
    };
    // Row group 0: rows 0..20, nulls at 3, 10, 17; row group 1: rows 20..45, nulls at 23, 28, ….
    let groups = [vec![with_nulls(20, 7)], vec![with_nulls(25, 5)]];
    let schema = "message m { optional binary text (STRING); }";
    write(
        &path,
        schema,
        props(WriterVersion::PARQUET_2_0, true, Compression::SNAPPY),
        &groups,
        1,
    );

    let e = read_all(&path, "text", false, 1 << 20).unwrap_err();
    assert!(matches!(e.kind, ParquetErrorKind::Null), "{e}");
    assert_eq!((e.row_group, e.row), (Some(0), Some(3)));
    let message = e.to_string();
    for part in [
        path.display().to_string().as_str(),
        "row group 0",
        "row 3",
        "column `text`",
        "null",
    ] {
        assert!(message.contains(part), "{message} names {part}");
    }

    let mut expected_rows = Vec::new();
    let mut null_rows = Vec::new();
    for (start, n, every) in [(0, 20, 7), (20, 25, 5)] {
        for i in 0..n {
            if i % every == 3 {
                null_rows.push(start + i as u64);
            } else {
                expected_rows.push(start + i as u64);
            }
        }
    }
    for max_bytes in [0, 7, 40, 1 << 20] {
        let read = read_all(&path, "text", true, max_bytes).unwrap();
        assert_eq!(read.rows, expected_rows, "max_bytes {max_bytes}");
        assert_eq!(read.skipped, null_rows.len() as u64);
        let texts: Vec<Vec<u8>> = read
            .rows
            .iter()
            .map(|&r| {
                let i = if r < 20 { r } else { r - 20 };
                format!("text {i}").into_bytes()
            })
            .collect();
        assert_eq!(read.texts, texts);
    }

    // A bad text named by the caller: its row group and row, from the batch.
    let mut texts = ParquetTexts::open(&path, "text", true).unwrap();
    let mut batch = TextBatch::default();
    let mut found = None;
    while texts.next_batch(&mut batch, 16).unwrap() {
        if let Some(i) = batch.texts().position(|t| t == b"text 24") {
            found = Some(texts.bad_text(batch.row(i), "invalid UTF-8 at byte 3"));
            break;
        }
    }
    let e = found.expect("text 24 is read");
    assert_eq!((e.row_group, e.row), (Some(1), Some(44)));
    assert!(e.to_string().contains("invalid UTF-8 at byte 3"), "{e}");
}

#[test]
fn a_batch_locates_a_byte_offset() {
    let batch = TextBatch {
        bytes: b"abcdef".to_vec(),
        ends: vec![2, 2, 5, 6],
        first_row: 10,
        skipped_rows: vec![11],
    };
    let at: Vec<usize> = (0..6).map(|o| batch.text_at(o)).collect();
    assert_eq!(at, [0, 0, 2, 2, 2, 3]);
    assert_eq!(
        (0..4).map(|i| batch.row(i)).collect::<Vec<_>>(),
        [10, 12, 13, 14]
    );
}

#[test]
fn a_missing_column_or_one_of_another_type_is_an_error_naming_it() {
    let dir = scratch("types");
    let path = dir.join("types.parquet");
    let schema = "message m {
        required int64 id;
        required binary text (STRING);
        optional fixed_len_byte_array(4) code;
        optional binary doc (JSON);
        optional group tags (LIST) { repeated group list { optional binary element (STRING); } }
    }";
    let file = File::create(&path).unwrap();
    let mut writer = SerializedFileWriter::new(
        file,
        Arc::new(parse_message_type(schema).unwrap()),
        Arc::new(WriterProperties::builder().build()),
    )
    .unwrap();
    let mut group = writer.next_row_group().unwrap();
    // No rows: each column's chunk is empty.
    while let Some(column) = group.next_column().unwrap() {
        column.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();

    let texts = ParquetTexts::open(&path, "text", false).unwrap();
    assert_eq!((texts.rows(), texts.row_groups()), (0, 1));
    assert_eq!(
        read_all(&path, "text", false, 10).unwrap().texts,
        Vec::<Vec<u8>>::new()
    );

    let error = |column: &str| {
        let e = ParquetTexts::open(&path, column, false)
            .err()
            .unwrap_or_else(|| panic!("{column} is refused"));
        let message = e.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains(&format!("column `{column}`")), "{message}");
        assert_eq!(e.column.as_deref(), Some(column));
        (e.kind, message)
    };
    let (kind, message) = error("body");
    match kind {
        ParquetErrorKind::MissingColumn { columns } => {
            assert_eq!(columns, ["id", "text", "code", "doc", "tags.list.element"])
        }
        other => panic!("{other:?}"),
    }
    assert!(message.contains("no such column"), "{message}");
    assert!(message.contains("`id`, `text`"), "{message}");
    for (column, found) in [
        ("id", "INT64"),
        ("code", "FIXED_LEN_BYTE_ARRAY"),
        ("doc", "Json"),
        ("tags", "group"),
        ("tags.list.element", "repeated"),
    ] {
        let (kind, message) = error(column);
        assert!(matches!(kind, ParquetErrorKind::NotText(_)), "{message}");
        assert!(message.contains("not a string column"), "{message}");
        assert!(message.contains(found), "{message} names {found}");
    }
}

/// A small file of a few row groups, dictionary and plain pages, and nulls.
fn small_file(path: &Path, codec: Compression, version: WriterVersion) -> Vec<Option<Vec<u8>>> {
    let texts: Vec<Option<Vec<u8>>> = varied_texts(30, 4)
        .into_iter()
        .enumerate()
        .map(|(i, t)| (i % 11 != 5).then(|| t.chars().take(40).collect::<String>().into_bytes()))
        .collect();
    let props = WriterProperties::builder()
        .set_writer_version(version)
        .set_dictionary_page_size_limit(128)
        .set_data_page_size_limit(256)
        .set_write_batch_size(4)
        .set_compression(codec)
        .build();
    let groups = [
        vec![
            Values::Int32((0..12).collect()),
            Values::Bytes(texts[..12].to_vec()),
        ],
        vec![
            Values::Int32((12..30).collect()),
            Values::Bytes(texts[12..].to_vec()),
        ],
    ];
    let schema = "message m { required int32 n; optional binary text (STRING); }";
    write(path, schema, props, &groups, 1);
    texts
}

/// Reads `bytes` as a Parquet file (skipping nulls): a panic that reaches the caller fails the
/// test, and an error must name the file. The reader's own panics, which the module catches and
/// reports as damage, fail it too unless `caught` collects them (what, and the message).
fn read_damaged(
    path: &Path,
    bytes: &[u8],
    what: &str,
    caught: Option<&mut Vec<String>>,
) -> Result<Read, ParquetError> {
    std::fs::write(path, bytes).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| read_all(path, "text", true, 200)))
        .unwrap_or_else(|_| panic!("reading {what} panicked"));
    if let Err(e) = &result {
        let message = e.to_string();
        assert!(
            message.starts_with(&path.display().to_string()),
            "{what}: the error names the file: {message}"
        );
        if message.contains("the reader panicked") {
            assert!(
                e.row_group.is_some() && e.column.is_some(),
                "{what}: {message}"
            );
            match caught {
                Some(caught) => caught.push(format!("{what}: {message}")),
                None => panic!("{what}: {message}"),
            }
        }
    }
    result
}

#[test]
fn every_truncation_is_an_error() {
    let dir = scratch("truncated");
    let whole = dir.join("whole.parquet");
    small_file(&whole, Compression::SNAPPY, WriterVersion::PARQUET_1_0);
    let bytes = std::fs::read(&whole).unwrap();
    let path = dir.join("cut.parquet");
    for len in 0..bytes.len() {
        let e = read_damaged(
            &path,
            &bytes[..len],
            &format!("the first {len} bytes"),
            None,
        )
        .expect_err("a truncated file is refused");
        assert!(matches!(e.kind, ParquetErrorKind::Damaged(_)), "{len}: {e}");
    }
    // The footer kept, the data cut out from its middle: an error while reading, naming the
    // row group and the column.
    let footer_len =
        u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
    let data_end = bytes.len() - 8 - footer_len as usize;
    let mut holed = bytes.clone();
    holed[data_end / 2..data_end].fill(0);
    let e =
        read_damaged(&path, &holed, "zeroed pages", None).expect_err("zeroed pages are refused");
    assert!(
        e.row_group.is_some() && e.column.as_deref() == Some("text"),
        "{e}"
    );
}

#[test]
fn flipped_bytes_never_panic() {
    // Every byte of small files overwritten in turn (and random few-byte damage): an error, or
    // texts read (the data of an uncompressed page can change unnoticed), never a panic and
    // never more texts than rows.
    let dir = scratch("flipped");
    let path = dir.join("damaged.parquet");
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut tried, mut caught) = (0, Vec::new());
    for (codec, version) in [
        (Compression::UNCOMPRESSED, WriterVersion::PARQUET_1_0),
        (Compression::SNAPPY, WriterVersion::PARQUET_2_0),
        (
            Compression::ZSTD(ZstdLevel::default()),
            WriterVersion::PARQUET_1_0,
        ),
        (
            Compression::GZIP(GzipLevel::default()),
            WriterVersion::PARQUET_2_0,
        ),
    ] {
        let whole = dir.join("whole.parquet");
        let texts = small_file(&whole, codec, version);
        let bytes = std::fs::read(&whole).unwrap();
        let mut damaged = Vec::new();
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0xff;
            damaged.push((format!("{codec:?}, byte {at} inverted"), b));
        }
        for round in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..1 + round % 6 {
                let at = (next() % b.len() as u64) as usize;
                b[at] = next() as u8;
            }
            damaged.push((format!("{codec:?}, random damage {round}"), b));
        }
        for (what, b) in damaged {
            tried += 1;
            if let Ok(read) = read_damaged(&path, &b, &what, Some(&mut caught)) {
                assert!(
                    read.texts.len() as u64 + read.skipped <= texts.len() as u64,
                    "{what}"
                );
            }
        }
    }
    // arrow-rs 60.1 panics on some damaged pages, caught at the module's boundary and reported
    // as damage: a DELTA_BYTE_ARRAY page (the fallback from a full dictionary of the crate's v2
    // writer) whose prefix lengths were damaged (its decoder slices by them unchecked), and a
    // dictionary-encoded page with no dictionary page before it (an `expect`).
    eprintln!(
        "the reader panicked on {} of {tried} damaged files (caught):",
        caught.len()
    );
    for line in &caught {
        eprintln!("  {line}");
    }
    assert!(
        caught.len() * 20 < tried,
        "few damaged files make the reader panic"
    );
}

#[test]
fn other_files_are_errors() {
    let dir = scratch("other");
    let path = dir.join("not.parquet");
    for (what, bytes) in [
        ("an empty file", &b""[..]),
        ("magic only", b"PAR1"),
        ("magic twice", b"PAR1PAR1"),
        (
            "a footer length past the start",
            b"PAR1\xff\xff\xff\x00PAR1",
        ),
        (
            "JSON lines",
            b"{\"text\": \"hello\"}\n{\"text\": \"world\"}\n",
        ),
        (
            "gzip",
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00",
        ),
    ] {
        let e = read_damaged(&path, bytes, what, None).expect_err(what);
        assert!(
            matches!(e.kind, ParquetErrorKind::Damaged(_)),
            "{what}: {e}"
        );
        assert!(
            e.to_string()
                .contains("not a Parquet file, or a damaged one"),
            "{e}"
        );
    }
    let missing = dir.join("missing.parquet");
    let e = ParquetTexts::open(&missing, "text", false).err().unwrap();
    assert!(matches!(e.kind, ParquetErrorKind::Io(_)), "{e}");
    assert!(e.to_string().contains("missing.parquet"), "{e}");
}

/// The files pyarrow wrote (`scripts/make-parquet-fixtures.py`), each beside the `.jsonl` of
/// its column's values (a string, or null).
#[test]
fn files_written_by_pyarrow_read_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/parquet");
    let mut read_any = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "parquet") {
            continue;
        }
        let expected_path = path.with_extension("jsonl");
        let expected = std::fs::read_to_string(&expected_path).unwrap();
        let expected: Vec<Option<String>> = expected
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let present: Vec<Vec<u8>> = expected
            .iter()
            .flatten()
            .map(|t| t.clone().into_bytes())
            .collect();
        let nulls = expected.iter().filter(|t| t.is_none()).count() as u64;
        for max_bytes in [1, 1000, 1 << 20] {
            let read = read_all(&path, "text", true, max_bytes).unwrap();
            assert_eq!(read.texts, present, "{}", path.display());
            assert_eq!(read.skipped, nulls, "{}", path.display());
        }
        if nulls > 0 {
            let e = read_all(&path, "text", false, 1 << 20).unwrap_err();
            assert!(matches!(e.kind, ParquetErrorKind::Null), "{e}");
            let first = expected.iter().position(Option::is_none).unwrap() as u64;
            assert_eq!(e.row, Some(first));
        }
        let texts = ParquetTexts::open(&path, "text", true).unwrap();
        assert_eq!(texts.rows(), expected.len() as u64);
        read_any += 1;
    }
    assert!(
        read_any >= 5,
        "the pyarrow files are there ({read_any} read)"
    );

    // pyarrow's id column (int64) is refused by name.
    let e = ParquetTexts::open(&dir.join("snappy-dictionary.parquet"), "id", false)
        .err()
        .unwrap();
    assert!(e.to_string().contains("INT64"), "{e}");
}

#[test]
fn a_codec_this_build_does_not_read_is_refused_at_open() {
    // LZO, which arrow-rs does not read (and no writer here writes): patched into the footer of
    // an uncompressed file. ColumnMetaData's field 4, `codec`, follows its path in the schema
    // (`text`); in Thrift's compact encoding, 0x15 is "field +1, i32", then the value zigzagged:
    // UNCOMPRESSED (0) is 0x00, LZO (3) is 0x06.
    let dir = scratch("codec");
    let path = dir.join("lzo.parquet");
    let props = props(WriterVersion::PARQUET_1_0, false, Compression::UNCOMPRESSED);
    let values = Values::texts(&["one", "two"]);
    write(
        &path,
        "message m { required binary text (STRING); }",
        props,
        &[vec![values]],
        0,
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let footer_len =
        u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
    let footer = bytes.len() - 8 - footer_len as usize;
    let at = bytes[footer..]
        .windows(7)
        .position(|w| w == b"\x04text\x15\x00")
        .expect("the codec after the column's path")
        + footer;
    bytes[at + 6] = 0x06;
    std::fs::write(&path, &bytes).unwrap();

    let e = ParquetTexts::open(&path, "text", false)
        .err()
        .expect("LZO is refused");
    assert!(
        matches!(e.kind, ParquetErrorKind::UnsupportedCodec(_)),
        "{e}"
    );
    assert_eq!(e.row_group, Some(0));
    let message = e.to_string();
    assert!(
        message.contains("LZO") && message.contains("lzo.parquet"),
        "{message}"
    );
}
