#!/usr/bin/env python3
"""Checks a tokenized file that `simdtok encode --output-format datatrove` wrote against
datatrove's own writer: the ids of `simdtok encode --output-format ids` of the same input (one
line per text, plus an optional end-of-document id) are written with datatrove's `TokenizedFile`
(datatrove 0.10: `pip install --no-deps datatrove==0.10.0 humanize loguru fsspec`; its reader
needs torch, its writer does not), and the `.ds`, `.ds.index` and `.ds.metadata` files must be
byte for byte the same.

Usage:
    scripts/check-datatrove.py NAME.ds IDS_FILE TOKENIZER_NAME TOKEN_SIZE [--eod ID]
"""

import argparse
import sys
import tempfile
from pathlib import Path

from datatrove.pipeline.tokens.tokenizer import TokenizedFile


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ds", type=Path)
    ap.add_argument("ids", type=Path)
    ap.add_argument("tokenizer_name")
    ap.add_argument("token_size", type=int)
    ap.add_argument("--eod", type=int)
    a = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="datatrove-"))
    f = TokenizedFile(
        str(out),
        "reference.ds",
        save_index=True,
        tokenizer_name_or_path=a.tokenizer_name,
        save_final_metadata=True,
        token_size=a.token_size,
    )
    docs = 0
    for line in a.ids.read_text().splitlines():
        ids = [int(t) for t in line.split()] + ([a.eod] if a.eod is not None else [])
        f.write(ids, None)
        docs += 1
    f.close()
    bad = 0
    for ext in ["", ".index", ".metadata"]:
        ours = Path(str(a.ds) + ext).read_bytes()
        theirs = (out / f"reference.ds{ext}").read_bytes()
        same = ours == theirs
        bad += not same
        print(f"{a.ds.name}{ext}: {len(ours)} bytes, {'identical' if same else 'DIFFERENT'}")
    print(f"datatrove TokenizedFile: {docs} documents, {bad} files differing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
