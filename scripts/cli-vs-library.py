#!/usr/bin/env python3
"""`simdtok encode` against the library on the same texts, and its scaling over threads.

Builds the inputs from ../shared/data (English: the KJV and the Jargon File, repeated to the size
asked, as lines; the same text as JSON lines of documents of about 4 KB), then, alternating the
runs of each round so that a busy moment falls on both:

- library: `examples/throughput` (one pass, fresh process: `encode_ids_into` over the lines, the
  JSON lines' "text" fields, or the whole file as one text — INPUT=jsonl|raw);
- CLI: `simdtok encode --threads 1` with `ids`, `u32` and `npy` output to /dev/null, its MB/s
  taken over the wall time less that of the same command on an empty input (the model's load);
- scaling: the CLI with 1 and 2 (or --threads) threads, and with 1 thread pinned to one core
  (`taskset -c 0`: the reader and writer threads then share the worker's core).

Prints Markdown tables of medians (and the median of the per-round ratios). Build first:
`cargo build --release --bin simdtok --example throughput`.

    python3 scripts/cli-vs-library.py                 # both tables: 40 MB (CLI vs library) and 200 MB (scaling) inputs
    python3 scripts/cli-vs-library.py --rounds 9 --only cl100k --skip-scaling
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("SIMDTOK_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data"))
MODELS = [
    ("cl100k (tiktoken BPE)", "tiktoken/cl100k_base.tiktoken", 200),
    ("llama3 (tokenizer.json BPE)", "hf-tokenizer-json/llama3.tokenizer.json", 200),
    ("bert-base-uncased (WordPiece)", "wordpiece/bert-base-uncased.vocab.txt", 200),
    # 200 MB as for the others: on 40 MB each worker's first sight of every word (its own cache)
    # weighed on the two-thread figure (lines → ids from one core: 1.79× at 40 MB, 1.81× here).
    ("XLM-R (SentencePiece unigram)", "sentencepiece/xlm-roberta-nomic.from-gguf.model", 200),
]
SOURCES = ["en_kjv_bible.txt", "en_jargon_file_4.4.7.txt"]


def make_inputs(directory, megabytes):
    """The English lines repeated to `megabytes` MB, and the same as JSON lines of ~4 KB docs."""
    lines = []
    for name in SOURCES:
        with open(os.path.join(DATA, "corpora", name), encoding="utf-8") as f:
            lines.extend(f.read().splitlines())
    text_path = os.path.join(directory, f"en{megabytes}.txt")
    jsonl_path = os.path.join(directory, f"en{megabytes}.jsonl")
    out, size = [], 0
    while size < megabytes * 1_000_000:
        for line in lines:
            out.append(line)
            size += len(line.encode()) + 1
            if size >= megabytes * 1_000_000:
                break
    with open(text_path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    with open(jsonl_path, "w", encoding="utf-8") as f:
        doc, n = [], 0
        for i, line in enumerate(out):
            doc.append(line)
            n += len(line) + 1
            if n >= 4096 or i == len(out) - 1:
                f.write(json.dumps({"id": i, "text": "\n".join(doc)}, ensure_ascii=False) + "\n")
                doc, n = [], 0
    return text_path, jsonl_path


def library(throughput, model, fmt, path):
    env = dict(os.environ)
    if fmt != "lines":
        env["INPUT"] = fmt
    out = subprocess.run([throughput, model, path, "1"], env=env, capture_output=True,
                         text=True, check=True).stdout
    return float(re.search(r"pass 0: ([0-9.]+) MB/s", out).group(1))


def cli(simdtok, model, fmt, output, path, threads, empty, cores=None):
    """MB/s of `simdtok encode`; `cores`: run under `taskset -c` on those CPUs."""
    pin = ["taskset", "-c", cores] if cores else []

    def run(p):
        t0 = time.perf_counter()
        subprocess.run(pin + [simdtok, "encode", "--model", model, "--input", p, "--input-format", fmt,
                              "--output-format", output, "--threads", str(threads), "--no-progress"],
                       stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - t0
    load = run(empty)
    return os.path.getsize(path) / (run(path) - load) / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2, help="the scaling table's second column")
    ap.add_argument("--only", action="append", default=[], help="models whose name holds this")
    ap.add_argument("--skip-scaling", action="store_true")
    ap.add_argument("--skip-library", action="store_true")
    args = ap.parse_args()
    simdtok = os.path.join(ROOT, "target/release/simdtok")
    throughput = os.path.join(ROOT, "target/release/examples/throughput")
    models = [m for m in MODELS if not args.only or any(o in m[0] for o in args.only)]
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.txt")
        open(empty, "w").close()
        inputs = {}
        for mb in sorted({m[2] for m in models} | {40}):
            inputs[mb] = make_inputs(tmp, mb)
        if not args.skip_library:
            print("| model | input | library MB/s | CLI ids | CLI u32 | CLI npy "
                  "| ids ÷ lib | u32 ÷ lib | npy ÷ lib |")
            print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
            for name, rel, _ in models:
                model = os.path.join(DATA, "models", rel)
                text, jsonl = inputs[40]
                for fmt, path in [("lines", text), ("jsonl", jsonl), ("raw", text)]:
                    lib, got = [], {o: [] for o in ("ids", "u32", "npy")}
                    for _ in range(args.rounds):
                        lib.append(library(throughput, model, fmt, path))
                        for o in got:
                            got[o].append(cli(simdtok, model, fmt, o, path, 1, empty))
                    ratio = {o: statistics.median(c / l for c, l in zip(v, lib))
                             for o, v in got.items()}
                    print(f"| {name} | {fmt} | {statistics.median(lib):.1f} | "
                          + " | ".join(f"{statistics.median(v):.1f}" for v in got.values())
                          + " | " + " | ".join(f"{r:.2f}" for r in ratio.values()) + " |",
                          flush=True)
        if not args.skip_scaling:
            t = args.threads
            print()
            # `--threads 1` is one worker: the reader and the writer threads take on the other
            # cores what a worker would do (JSON, line ends, formatting: see `Workers::spare_core`).
            # The same pinned to one core is the one-core baseline.
            print(f"| model | input → output | 1 thread MB/s | 1 thread on 1 core MB/s | {t} threads MB/s "
                  f"| speed-up over 1 thread | over 1 core |")
            print("|---|---|---:|---:|---:|---:|---:|")
            for name, rel, mb in models:
                model = os.path.join(DATA, "models", rel)
                text, jsonl = inputs[mb]
                for fmt, output, path in [("lines", "ids", text), ("lines", "u32", text),
                                          ("jsonl", "ids", jsonl), ("raw", "u32", text)]:
                    one, pinned, many = [], [], []
                    for _ in range(args.rounds):
                        one.append(cli(simdtok, model, fmt, output, path, 1, empty))
                        pinned.append(cli(simdtok, model, fmt, output, path, 1, empty, cores="0"))
                        many.append(cli(simdtok, model, fmt, output, path, t, empty))
                    speedup = statistics.median(m / o for m, o in zip(many, one))
                    over_core = statistics.median(m / o for m, o in zip(many, pinned))
                    print(f"| {name} | {fmt} → {output} | {statistics.median(one):.1f} | "
                          f"{statistics.median(pinned):.1f} | {statistics.median(many):.1f} | "
                          f"{speedup:.2f}× | {over_core:.2f}× |", flush=True)


if __name__ == "__main__":
    main()
