"""simdtok's Python package against the reference libraries and the Rust library (issue 27).

Not a test: a measurement. In one process, on the same texts (each line of a corpus a text):

- ``Tokenizer.encode_batch`` (numpy output) vs ``tiktoken``'s ``encode_ordinary_batch``,
  ``tokenizers``' ``encode_batch_fast`` and ``sentencepiece``'s batch ``encode``, one thread
  and all threads;
- ``encode_batch`` vs the Rust library on the same texts (``simdtok bench``: the library's
  encoder over the same lines, in-process, one thread and all threads), doing the same work:
  ``encode_batch`` returns every id, so its library figure keeps every id of a pass
  (``--keep-ids``); ``count_batch`` against the library reusing one buffer per text; and
  ``encode_batch`` against the latter too;
- Ray Data and PySpark MB/s over a Parquet dataset (``--dataset-mb``, default 200 MB of text),
  read, tokenized and written back as Parquet, and per core against the single-process run.

Figures are medians of ``--passes`` timed passes after one warm-up; MB is 10^6 bytes of UTF-8.

    python python/bench/bench.py [--corpus FILE] [--passes 5] [--rounds 3] [--dataset-mb 200] [--skip-dist]

Run from the repository root with the package installed (``pip install ./python``) and the CLI
built (``cargo build --release --bin simdtok``; or ``SIMDTOK_CLI``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
SHARED = Path(os.environ.get("SIMDTOK_SHARED_DATA", REPO.parent / "shared" / "data"))
CLI = Path(os.environ.get("SIMDTOK_CLI", REPO / "target" / "release" / "simdtok"))
THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def read_lines(path: Path) -> list[str]:
    data = path.read_bytes().split(b"\n")
    if data and data[-1] == b"":
        data.pop()
    return [(l[:-1] if l.endswith(b"\r") else l).decode() for l in data]


def timed(fn, passes: int) -> float:
    """The median seconds of ``passes`` calls after a warm-up of at least three calls and half a
    second: a new thread count starts new threads, whose caches fill over the first passes (as
    ``simdtok bench``, the library's figure, warms up before it times)."""
    start = time.perf_counter()
    for _ in range(3):
        fn()
    while time.perf_counter() - start < 0.5:
        fn()
    times = []
    for _ in range(passes):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def rust_library(model: Path, corpus: Path, flags: list[str]) -> dict[int, float]:
    """MB/s of the Rust library over the lines of ``corpus`` (``simdtok bench``, active tier),
    by thread count."""
    tier = json.loads(subprocess.check_output([str(CLI), "cpu", "--json"]))["active"]
    out = subprocess.check_output(
        [str(CLI), "bench", "--model", str(model), "--input", str(corpus), "--tier", tier, "--json", *flags]
    )
    rows = json.loads(out)["rows"]
    result = {}
    for row in rows:
        if row.get("tier") == tier:
            result[int(row["threads"])] = float(row["mb_per_s"])
    return result


ENCODE_BATCH = "simdtok encode_batch (numpy)"
COUNT_BATCH = "simdtok count_batch"
LIBRARY_KEEP = "Rust library, ids kept (simdtok bench --keep-ids)"
LIBRARY = "Rust library (simdtok bench)"


def binding_vs_library(rows: list[dict]) -> list[tuple]:
    """Per model and thread count, the binding ÷ the Rust library doing the same work:
    ``encode_batch`` (every id returned) ÷ the library keeping every id, ``count_batch`` ÷ the
    library reusing one buffer per text; and ``encode_batch`` ÷ the latter, which charges the
    binding for keeping its ids. Each the median of the rounds' ratios, with their range."""
    per_round = {(r["model"], r["library"], r["threads"]): r["rounds"] for r in rows if "rounds" in r}
    out = []
    for model, threads in dict.fromkeys((r["model"], r["threads"]) for r in rows if r["library"] == ENCODE_BATCH):
        def ratio(binding, library):
            a, b = per_round.get((model, binding, threads)), per_round.get((model, library, threads))
            if not a or not b or len(a) != len(b):
                return (float("nan"),) * 3
            ratios = [x / y for x, y in zip(a, b)]
            return statistics.median(ratios), min(ratios), max(ratios)
        out.append((model, threads, ratio(ENCODE_BATCH, LIBRARY_KEEP), ratio(COUNT_BATCH, LIBRARY), ratio(ENCODE_BATCH, LIBRARY)))
    return out


def peers(args) -> list[dict]:
    import numpy as np  # noqa: F401

    import simdtok

    corpus = Path(args.corpus)
    texts = read_lines(corpus)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"corpus {corpus.name}: {len(texts)} texts, {mb:.2f} MB; {THREADS} threads", file=sys.stderr)
    rows = []

    def add(model, library, threads, seconds, ids_equal):
        rows.append(dict(model=model, library=library, threads=threads, mb_s=mb / seconds, equal=ids_equal))
        print(f"  {model:28} {library:34} {threads} thr {mb / seconds:8.2f} MB/s  equal={ids_equal}", file=sys.stderr)

    def simdtok_rows(label, path, options=None):
        """The binding and the Rust library, in ``--rounds`` alternating rounds (the machine's
        speed drifts: a ratio is taken within a round, then the median of the rounds')."""
        tok = simdtok.Tokenizer.from_file(path, **(options or {}))
        ref = tok.encode_batch(texts, format="list")
        speeds = {}  # (library, threads) -> MB/s per round
        for _ in range(args.rounds):
            for n in (1, THREADS):
                for library, call in [(ENCODE_BATCH, tok.encode_batch), (COUNT_BATCH, tok.count_batch)]:
                    s = timed(lambda: call(texts, num_threads=n), args.passes)
                    speeds.setdefault((library, n), []).append(mb / s)
            # The library twice: keeping every id of a pass, as encode_batch returns them, and
            # reusing one buffer per text, as count_batch does.
            for library, flags in [(LIBRARY_KEEP, ["--keep-ids"]), (LIBRARY, [])]:
                try:
                    lib = rust_library(Path(path), corpus, flags)
                except Exception as e:  # the CLI missing or failing: say so, go on
                    print(f"  (Rust library: {e})", file=sys.stderr)
                    lib = {}
                for n, speed in lib.items():
                    speeds.setdefault((library, n), []).append(speed)
        for (library, n), rounds in speeds.items():
            rows.append(dict(model=label, library=library, threads=n, mb_s=statistics.median(rounds), rounds=rounds, equal=True))
            print(f"  {label:28} {library:34} {n} thr {statistics.median(rounds):8.2f} MB/s (rounds: {', '.join(f'{r:.0f}' for r in rounds)})", file=sys.stderr)
        return ref

    # tiktoken: cl100k
    cl100k = SHARED / "models/tiktoken/cl100k_base.tiktoken"
    if cl100k.exists():
        import tiktoken
        import tiktoken.load
        import tiktoken_ext.openai_public as public

        ref = simdtok_rows("cl100k (tiktoken file)", cl100k)
        ranks = tiktoken.load.load_tiktoken_bpe(str(cl100k))
        public.load_tiktoken_bpe = lambda *a, **k: ranks
        enc = tiktoken.Encoding("cl100k_base", pat_str=public.cl100k_base()["pat_str"], mergeable_ranks=ranks, special_tokens={})
        equal = enc.encode_ordinary_batch(texts) == ref
        for n in (1, THREADS):
            s = timed(lambda: enc.encode_ordinary_batch(texts, num_threads=n), args.passes)
            add("cl100k (tiktoken file)", "tiktoken encode_ordinary_batch", n, s, equal)
        # encode_ordinary_batch maps a thread pool over the texts (a future per text); one text
        # at a time in a loop is tiktoken's best on one thread.
        s = timed(lambda: [enc.encode_ordinary(t) for t in texts], args.passes)
        add("cl100k (tiktoken file)", "tiktoken encode_ordinary, a loop", 1, s, equal)

    # tokenizers: a byte-level tokenizer.json (Llama 3) and BERT WordPiece
    import tokenizers

    for label, path in [
        ("llama3 tokenizer.json", SHARED / "models/hf-tokenizer-json/llama3.tokenizer.json"),
        ("bert-base-uncased vocab.txt", DATA / "wordpiece/bert-base-uncased.vocab.txt"),
    ]:
        if not path.exists():
            continue
        ref = simdtok_rows(label, path)
        if path.suffix == ".txt":
            tk = tokenizers.BertWordPieceTokenizer(str(path), lowercase=True)
        else:
            tk = tokenizers.Tokenizer.from_file(str(path))
            tk.no_padding()
            tk.no_truncation()
        inner = getattr(tk, "_tokenizer", tk)  # BertWordPieceTokenizer wraps a Tokenizer
        fast = getattr(inner, "encode_batch_fast", inner.encode_batch)
        equal = [e.ids for e in fast(texts, add_special_tokens=False)] == ref
        for n in (1, THREADS):
            # tokenizers' parallelism is its environment variable (read at each batch call).
            os.environ["TOKENIZERS_PARALLELISM"] = "false" if n == 1 else "true"
            s = timed(lambda: fast(texts, add_special_tokens=False), args.passes)
            add(label, f"tokenizers {fast.__name__}", n, s, equal)
        os.environ.pop("TOKENIZERS_PARALLELISM", None)

    # sentencepiece: the Llama 2 BPE model (or the bundled unigram one)
    import sentencepiece as spm

    for label, path in [
        ("llama2 .model (SPM BPE)", SHARED / "models/sentencepiece/llama-spm.from-gguf.model"),
        ("botchan unigram .model", DATA / "sentencepiece/botchan_en_unigram_1000.model"),
    ]:
        if not path.exists():
            continue
        ref = simdtok_rows(label, path)
        sp = spm.SentencePieceProcessor(model_file=str(path))
        equal = sp.encode(texts) == ref
        for n in (1, THREADS):
            s = timed(lambda: sp.encode(texts, num_threads=n), args.passes)
            add(label, "sentencepiece encode (batch)", n, s, equal)
    return rows


def make_dataset(path: Path, corpora: list[Path], target_mb: float) -> tuple[int, float]:
    """Parquet files of documents (runs of 20 lines of the corpora) with about ``target_mb`` MB of
    text; returns the documents and the MB."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = []
    for corpus in corpora:
        lines = read_lines(corpus)
        docs += ["\n".join(lines[i : i + 20]) for i in range(0, len(lines), 20)]
    one = sum(len(d.encode()) for d in docs) / 1e6
    copies = max(1, round(target_mb / one))
    path.mkdir(parents=True, exist_ok=True)
    table = pa.table({"text": pa.array(docs, pa.string())})
    per_file = max(1, copies // 8)
    written = 0
    for k in range(0, copies, per_file):
        n = min(per_file, copies - k)
        pq.write_table(pa.concat_tables([table] * n), path / f"part-{k:04}.parquet", row_group_size=20_000)
        written += n
    return len(docs) * written, one * written


class _Identity:
    def __call__(self, batch):
        return batch


def _identity_batches(batches):
    yield from batches


def dist(args, single_mb_s: float | None) -> list[dict]:
    import shutil

    import simdtok

    model = SHARED / "models/tiktoken/cl100k_base.tiktoken"
    if not model.exists():
        model = DATA / "bpe/gpt2-2k-roberta.tokenizer.json"
    corpora = [p for p in [SHARED / "corpora/en_kjv_bible.txt", SHARED / "corpora/en_jargon_file_4.4.7.txt"] if p.exists()]
    corpora = corpora or [DATA / "corpus/en_kjv_bible.head.txt"]
    work = Path(args.workdir or tempfile.mkdtemp(prefix="simdtok-bench-"))
    src = work / "in"
    if src.exists():
        shutil.rmtree(src)
    ndocs, mb = make_dataset(src, corpora, args.dataset_mb)
    print(f"dataset: {ndocs} documents, {mb:.1f} MB of text in {src}", file=sys.stderr)
    rows = []

    # Single process, for per-core comparison: the whole dataset through encode_batch, 1 thread.
    import pyarrow.parquet as pq

    tok = simdtok.Tokenizer.from_file(model)
    t = time.perf_counter()
    for f in sorted(src.glob("*.parquet")):
        col = pq.read_table(f).column("text")
        tok.encode_batch(col, num_threads=1, format="arrow")
    single = mb / (time.perf_counter() - t)
    rows.append(dict(engine="one process, encode_batch, 1 thread (Parquet in, no write)", cores=1, mb_s=single))
    print(f"  single process: {single:.1f} MB/s", file=sys.stderr)
    # The engines' work in one process: read, tokenize, write text and ids as Parquet.
    (work / "single-out").mkdir(exist_ok=True)
    t = time.perf_counter()
    for f in sorted(src.glob("*.parquet")):
        table = pq.read_table(f)
        ids = tok.encode_batch(table.column("text"), num_threads=1, format="arrow")
        pq.write_table(table.append_column("ids", ids), work / "single-out" / f.name)
    full = mb / (time.perf_counter() - t)
    rows.append(dict(engine="one process, 1 thread (Parquet in, Parquet out)", cores=1, mb_s=full))
    print(f"  single process with Parquet out: {full:.1f} MB/s", file=sys.stderr)

    if not args.skip_ray:
        import ray

        import simdtok.ray

        ray.init(num_cpus=THREADS, include_dashboard=False, log_to_driver=False, configure_logging=False)
        try:
            ray.data.DataContext.get_current().enable_progress_bars = False
            for attempt in range(2):  # the first run includes the workers' start
                out = work / f"ray-out-{attempt}"
                t = time.perf_counter()
                ds = ray.data.read_parquet(str(src))
                simdtok.ray.tokenize(ds, str(model), concurrency=THREADS, num_cpus=0.5).write_parquet(str(out))
                seconds = time.perf_counter() - t
            rows.append(dict(engine=f"Ray Data, {THREADS} actors (Parquet in, Parquet out)", cores=THREADS, mb_s=mb / seconds))
            print(f"  ray: {mb / seconds:.1f} MB/s", file=sys.stderr)
            # The same pipeline without tokenizing (batches passed through): the engine's cost.
            t = time.perf_counter()
            ray.data.read_parquet(str(src)).map_batches(
                _Identity, batch_format="pyarrow", concurrency=THREADS, num_cpus=0.5
            ).write_parquet(str(work / "ray-identity"))
            seconds = time.perf_counter() - t
            rows.append(dict(engine="Ray Data, the same without tokenizing (identity map)", cores=THREADS, mb_s=mb / seconds))
            print(f"  ray identity: {mb / seconds:.1f} MB/s", file=sys.stderr)
        finally:
            ray.shutdown()

    if not args.skip_spark:
        from pyspark.sql import SparkSession

        import simdtok.spark

        os.environ["PYSPARK_PYTHON"] = sys.executable
        spark = (
            SparkSession.builder.master(f"local[{THREADS}]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.memory", "4g")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        try:
            for attempt in range(2):
                out = work / f"spark-out-{attempt}"
                t = time.perf_counter()
                df = spark.read.parquet(str(src))
                simdtok.spark.tokenize(df, str(model)).write.mode("overwrite").parquet(str(out))
                seconds = time.perf_counter() - t
            rows.append(dict(engine=f"PySpark local[{THREADS}] (Parquet in, Parquet out)", cores=THREADS, mb_s=mb / seconds))
            print(f"  spark: {mb / seconds:.1f} MB/s", file=sys.stderr)
            t = time.perf_counter()
            df = spark.read.parquet(str(src))
            df.mapInArrow(_identity_batches, df.schema).write.mode("overwrite").parquet(str(work / "spark-identity"))
            seconds = time.perf_counter() - t
            rows.append(dict(engine="PySpark, the same without tokenizing (identity mapInArrow)", cores=THREADS, mb_s=mb / seconds))
            print(f"  spark identity: {mb / seconds:.1f} MB/s", file=sys.stderr)
        finally:
            spark.stop()
    for r in rows:
        r["per_core_vs_single"] = r["mb_s"] / r["cores"] / full
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return rows, ndocs, mb, model.name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_corpus = SHARED / "corpora/en_kjv_bible.txt"
    ap.add_argument("--corpus", default=str(default_corpus if default_corpus.exists() else DATA / "corpus/en_kjv_bible.head.txt"))
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of the binding and the Rust library")
    ap.add_argument("--dataset-mb", type=float, default=200)
    ap.add_argument("--workdir", help="keep the Parquet dataset here (default: a temporary directory)")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--skip-dist", action="store_true")
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-spark", action="store_true")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()

    result = {}
    if not args.skip_peers:
        rows = peers(args)
        result["peers"] = rows
        print(f"\n### Same texts, one process ({Path(args.corpus).name}; median of {args.passes})\n")
        print("| model | library | threads | MB/s | simdtok ÷ this | ids equal |")
        print("|---|---|---:|---:|---:|:-:|")
        mine = {(r["model"], r["threads"]): r["mb_s"] for r in rows if r["library"] == ENCODE_BATCH}
        for r in rows:
            ratio = mine[(r["model"], r["threads"])] / r["mb_s"] if (r["model"], r["threads"]) in mine else float("nan")
            print(f"| {r['model']} | {r['library']} | {r['threads']} | {r['mb_s']:.1f} | {ratio:.2f} | {'✓' if r['equal'] else '✗'} |")
        print(f"\n### The binding ÷ the Rust library, the same work (median of {args.rounds} alternating rounds' ratios, and their range)\n")
        print("| model | threads | encode_batch ÷ library keeping ids | count_batch ÷ library | encode_batch ÷ library |")
        print("|---|---:|---:|---:|---:|")
        cell = lambda r: f"{r[0]:.2f} ({r[1]:.2f}–{r[2]:.2f})"
        for model, threads, keep, count, plain in binding_vs_library(rows):
            print(f"| {model} | {threads} | {cell(keep)} | {cell(count)} | {cell(plain)} |")
    if not args.skip_dist:
        rows, ndocs, mb, model = dist(args, None)
        result["dist"] = rows
        print(f"\n### Ray Data and PySpark ({mb:.0f} MB of text, {ndocs} documents, {model}; one run after a warm-up run)\n")
        print("| engine | cores | MB/s | MB/s per core ÷ one process (Parquet in and out) |")
        print("|---|---:|---:|---:|")
        for r in rows:
            print(f"| {r['engine']} | {r['cores']} | {r['mb_s']:.1f} | {r['per_core_vs_single']:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
