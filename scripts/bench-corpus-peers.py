#!/usr/bin/env python3
"""simdtok encode against gigatoken's encode_files on the same corpus files (issue 49's peer
comparison): seconds, peak memory (the process's maximum RSS) and the ids, checked identical.

Usage (after scripts/bench-corpus-inputs.sh has made its files):

    pip install gigatoken==0.10.0
    python3 scripts/bench-corpus-peers.py [--work /tmp/simdtok-bench-corpus] [--rounds 3]

Inputs: `big.parquet` (a `text` column) and `big.jsonl.zst` (JSON lines, field `text`), the same
200 MB of texts; model: cl100k_base (the rank file under ../shared/data). Each engine runs in a
process of its own per measurement; simdtok writes u32 ids, gigatoken's documents are joined
and compared with them. gigatoken decompresses `.zst` whole into memory and returns every
document's ids at once (an awkward array), so its peak memory grows with the corpus; simdtok's
stays bounded. Threads: all cores for both (gigatoken's `parallel` default, simdtok's
`--threads 0`).
"""

import argparse
import pathlib
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]

GIGATOKEN = r"""
import sys, time, numpy as np, gigatoken
rank_file, kind, path, out = sys.argv[1:5]
tok = gigatoken.Tokenizer.from_tiktoken(rank_file)
source = (gigatoken.ParquetFileSource([path], column="text") if kind == "parquet"
          else gigatoken.JsonlFileSource([path], field="text"))
t = time.perf_counter()
docs = tok.encode_files(source)
took = time.perf_counter() - t
import awkward as ak
np.asarray(ak.flatten(docs), dtype="<u4").tofile(out)
print(f"{took:.3f}")
"""


def measured(cmd):
    """Wall seconds and peak RSS (MB) of `cmd`, by GNU time in a process of its own."""
    t = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t
    peak_kb = int(done.stderr.strip().splitlines()[-1])
    return wall, peak_kb / 1024, done.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", default="/tmp/simdtok-bench-corpus")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--data", default=str(REPO.parent / "shared/data"))
    args = p.parse_args()
    work = pathlib.Path(args.work)
    rank_file = pathlib.Path(args.data) / "models/tiktoken/cl100k_base.tiktoken"
    simdtok = REPO / "target/release/simdtok"
    rows = []
    for rnd in range(args.rounds):
        for kind, name in [("parquet", "big.parquet"), ("jsonl", "big.jsonl.zst")]:
            path = work / name
            ours = work / f"simdtok-{kind}.u32"
            cmd = [str(simdtok), "encode", "--model", str(rank_file), "--input", str(path),
                   "--output-format", "u32", "--output", str(ours)]
            if kind == "jsonl":
                cmd += ["--input-format", "jsonl"]
            wall, peak, _ = measured(cmd)
            rows.append((rnd, kind, "simdtok", wall, peak))
            theirs = work / f"gigatoken-{kind}.u32"
            wall, peak, out = measured([sys.executable, "-c", GIGATOKEN, str(rank_file), kind, str(path), str(theirs)])
            rows.append((rnd, kind, f"gigatoken (encode_files {float(out):.2f} s)", wall, peak))
            same = ours.read_bytes() == theirs.read_bytes()
            print(f"round {rnd} {kind}: ids identical: {same}", flush=True)
            if not same:
                sys.exit(f"{kind}: the ids differ")
    print("| round | input | engine | seconds (process) | peak RSS MB |")
    print("|---|---|---|---:|---:|")
    for rnd, kind, engine, wall, peak in rows:
        print(f"| {rnd} | {kind} | {engine} | {wall:.2f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
