"""Documents for the Ray and Spark tests, and the CLI's ids for them."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import DATA, SHARED, read_lines, run_cli, write_lines

MODEL = DATA / "bpe/gpt2-2k-roberta.tokenizer.json"
SHARED_MODEL = SHARED / "models/tiktoken/cl100k_base.tiktoken"


def documents(n: int = 3000) -> list[str | None]:
    """``n`` one-line documents from ../shared/data (the bundled corpus when absent), with empty
    texts and nulls among them."""
    texts: list[str] = []
    for path in [
        SHARED / "corpora/en_jargon_file_4.4.7.txt",
        SHARED / "corpora/multi_udhr_all_languages.txt",
        DATA / "corpus/en_kjv_bible.head.txt",
        DATA / "corpus/udhr_scripts.txt",
    ]:
        if path.exists():
            texts += [t for t in read_lines(path, max_bytes=400_000) if t]
    docs: list[str | None] = list(texts[:n])
    for i in range(0, len(docs), 97):
        docs[i] = None
    for i in range(13, len(docs), 101):
        docs[i] = ""
    return docs


def model() -> Path:
    return SHARED_MODEL if SHARED_MODEL.exists() else MODEL


def cli_ids(cli: Path, model: Path, docs: list[str | None], tmp: Path) -> list[list[int] | None]:
    """The CLI's ids of each document (``None`` for a null)."""
    path = write_lines(tmp / "docs.txt", [d or "" for d in docs])
    out = run_cli(cli, "encode", "--model", model, "--input", path, "--output-format", "jsonl")
    rows = [json.loads(line)["ids"] for line in out.decode().splitlines()]
    return [None if d is None else r for d, r in zip(docs, rows, strict=True)]
