#!/usr/bin/env python3
"""Cuts the bundled benchmark corpus (`simdtok bench`, `simdtok report`) out of the shared data.

Run from the repository root with the shared data beside it (or SIMDTOK_SHARED_DATA set):

    python3 tests/data/corpus/make_corpus.py

Each output is a prefix (or, for the UDHR, a selection of whole languages) of a permissively
licensed or public-domain corpus of ../shared/data/corpora, cut at a line boundary and otherwise
unchanged; see tests/data/LICENSES.md for sources, licenses and sha256.
"""

import os
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
SHARED = pathlib.Path(os.environ.get("SIMDTOK_SHARED_DATA", HERE.parents[3] / "shared" / "data"))
CORPORA = SHARED / "corpora"


def prefix_lines(text: str, limit: int) -> str:
    """The longest run of whole lines from the start whose UTF-8 size is at most `limit`."""
    out, size = [], 0
    for line in text.splitlines(keepends=True):
        n = len(line.encode("utf-8"))
        if size + n > limit:
            break
        out.append(line)
        size += n
    return "".join(out)


def prefix_files(text: str, marker: str, limit: int) -> str:
    """Whole concatenated source files (each starting with `marker`) up to `limit` bytes."""
    starts = [i for i, line in enumerate(text.splitlines(keepends=True)) if line.startswith(marker)]
    lines = text.splitlines(keepends=True)
    out, size = [], 0
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        chunk = "".join(lines[start:end])
        n = len(chunk.encode("utf-8"))
        if out and size + n > limit:
            break
        out.append(chunk)
        size += n
    return prefix_lines("".join(out), limit)


# Non-Latin scripts first (CJK for the Japanese and Chinese models), then others, each language
# whole: its "=== udhr ..." header line and its paragraphs.
UDHR_CODES = [
    "jpn", "cmn_hans", "cmn_hant", "kor", "rus", "ukr", "ell_monotonic", "arb", "heb", "hin",
    "ben", "tam", "tha", "amh", "kat", "hye", "vie",
]


def udhr_selection(text: str, codes, limit: int) -> str:
    sections, current = {}, None
    for line in text.splitlines(keepends=True):
        if line.startswith("=== udhr code="):
            current = line.split()[2][len("code="):]
            sections[current] = [line]
        elif current is not None:
            sections[current].append(line)
    out, size = [], 0
    for code in codes:
        chunk = "".join(sections[code])
        n = len(chunk.encode("utf-8"))
        if size + n > limit:
            break
        out.append(chunk)
        size += n
    return "".join(out)


def main():
    jobs = [
        ("en_kjv_bible.head.txt",
         lambda: prefix_lines((CORPORA / "en_kjv_bible.txt").read_text("utf-8"), 200_000)),
        ("udhr_scripts.txt",
         lambda: udhr_selection((CORPORA / "multi_udhr_all_languages.txt").read_text("utf-8"),
                                UDHR_CODES, 200_000)),
        ("python311_stdlib.head.py.txt",
         lambda: prefix_files((CORPORA / "code_python311_stdlib_sample.py.txt").read_text("utf-8"),
                              "# ===== file: ", 200_000)),
    ]
    for name, make in jobs:
        data = make().encode("utf-8")
        (HERE / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
