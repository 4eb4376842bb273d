#!/usr/bin/env python3
"""Writes the small Parquet files of tests/data/parquet/ with pyarrow (the writer behind
Hugging Face datasets and most corpora), so that tests/corpus/parquet_input.rs checks simdtok's reader
against a writer other than the Rust crate's own.

Each NAME.parquet has a `text` column (beside an `id` and sometimes more), and NAME.jsonl beside
it holds that column's values, one JSON line per row (a string, or null).

Usage (pyarrow from PyPI: `pip install pyarrow`; the committed files were made with 26.0.1):
    scripts/make-parquet-fixtures.py [OUT_DIR]    # default: tests/data/parquet
"""

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def texts(n: int, seed: int) -> list:
    """Texts of every kind: empty, multi-byte UTF-8, repeated, a few KB long."""
    kinds = [
        lambda i: "",
        lambda i: f"row {i}: naïve café, Ελληνικά, 日本語, 🦀",
        lambda i: "the same text again",
        lambda i: "long " + "abcdefghij" * (150 + i),
        lambda i: "€" * (i % 40),
        lambda i: f"{i}\n\ttabs and\r\nline ends",
        lambda i: "the same text again",
        lambda i: f"text {i}",
    ]
    return [kinds[(i + seed) % len(kinds)](i) for i in range(n)]


def write(out: Path, name: str, values: list, text_type=pa.string(), expected="values", **options):
    """Writes NAME.parquet of `values` and NAME.jsonl of `expected` (the values themselves by
    default; none when None)."""
    table = pa.table(
        {
            "id": pa.array(range(len(values)), pa.int64()),
            "text": pa.array(values, text_type),
            "source": pa.array([f"doc-{i % 3}" for i in range(len(values))], pa.string()),
        }
    )
    pq.write_table(table, out / f"{name}.parquet", **options)
    if expected == "values":
        expected = values
    if expected is not None:
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for v in expected:
                f.write(json.dumps(v, ensure_ascii=False) + "\n")


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/parquet")
    out.mkdir(parents=True, exist_ok=True)
    # Several row groups of dictionary-encoded pages, snappy (pyarrow's default codec).
    write(out, "snappy-dictionary", texts(40, 0), compression="snappy", row_group_size=15)
    # Plain pages (no dictionary), data pages v2, zstd.
    write(
        out,
        "zstd-plain-v2",
        texts(30, 1),
        compression="zstd",
        use_dictionary=False,
        data_page_version="2.0",
        data_page_size=512,
    )
    # gzip, small pages.
    write(out, "gzip", texts(25, 2), compression="gzip", data_page_size=256)
    # Arrow's large_string (64-bit offsets in memory; the same BYTE_ARRAY STRING in the file).
    write(out, "large-string-lz4", texts(20, 3), text_type=pa.large_string(), compression="lz4")
    # Raw bytes, no string annotation (pa.binary()), uncompressed.
    write(
        out,
        "binary-uncompressed",
        [t.encode("utf-8") for t in texts(12, 4)],
        text_type=pa.binary(),
        compression="none",
        expected=texts(12, 4),
    )
    # Nulls among the texts, in two row groups.
    with_nulls = [None if i % 7 == 2 else t for i, t in enumerate(texts(30, 5))]
    write(out, "nulls", with_nulls, compression="snappy", row_group_size=16)
    # brotli.
    write(out, "brotli", texts(5, 6), compression="brotli")
    return 0


if __name__ == "__main__":
    sys.exit(main())
