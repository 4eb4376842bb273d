#!/usr/bin/env python3
"""One cell of bench-peers' tokbench protocol for a Python tokenizer library.

bench-peers (src/tokbench.rs) runs this once per engine x model x corpus x run, in a fresh
interpreter pinned to the CPU it pinned itself to (the affinity is inherited), with
RAYON_NUM_THREADS=1 and TOKENIZERS_PARALLELISM=false:

    tokbench_peer.py JOB.json     one cell; prints one JSON line
    tokbench_peer.py --version ENGINE

JOB.json holds the engine, the model files, the corpus file and the protocol's cuts as the Rust
side made them (this script never re-chunks):

    {"engine": "gigatoken" | "fastokens" | "codepoints",
     "tokenizer_json": PATH or null, "tiktoken": PATH or null, "encoding": NAME or null,
     "text": PATH,                   the corpus, UTF-8
     "chunks": [[START, END], ...],  byte ranges of the chunks (on character boundaries)
     "slices": [[FIRST, END], ...],  chunk index ranges: slice 0 warms up, then one per rep
     "ids_out": PATH}

It loads the model (timed: the library's own constructor, which reads the file), encodes slice 0
(timed: the cold first slice), then each further slice (timed), chunk by chunk with the library's
ordinary single-text call, then every chunk once more (untimed, the verification pass), writes
those ids to ids_out (per chunk: a little-endian u32 count, then the ids as little-endian u32)
and prints

    {"engine", "version", "python", "loaded_from", "import_s", "load_s",
     "slice_s": [seconds per slice], "slice_bytes": [...], "tokens", "ids_hash": "%016x",
     "cpus": [CPUs it may run on]}

or {"error": WHY} when the library is missing or cannot load the model. ids_hash is FNV-1a 64
over the ids as little-endian u32, in chunk order, the hash bench-peers computes.

Engines (call overhead included, as a Python user pays it):
  gigatoken  gigatoken.Tokenizer(tokenizer.json), or Tokenizer.from_tiktoken(rank file);
             encode(text) -> numpy uint32 array. Adds no special tokens (it has no option to).
             It imports numpy at its first encode: numpy is imported before the clock starts.
  fastokens  fastokens.Tokenizer.from_file(tokenizer.json), or
             Tokenizer.from_tiktoken(rank file, encoding=NAME);
             encode(text, add_special_tokens=False).ids -> list of int. Its first encode on
             a new instance costs 50-100 ms of set-up inside the library: in the cold slice.
  codepoints a stub for bench-peers' tests: the code point of every character.
"""

import array
import json
import os
import platform
import sys
import time

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = 0xFFFFFFFFFFFFFFFF


def fnv1a64(data, h=FNV_OFFSET):
    """FNV-1a 64 of `data` (bytes), continuing from `h`."""
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK
    return h


def u32_le(ids):
    """The ids as little-endian u32 bytes."""
    if hasattr(ids, "dtype"):  # a numpy array
        return ids.astype("<u4", copy=False).tobytes()
    a = array.array("I", ids)
    if a.itemsize != 4:
        a = array.array("L", ids)
    if sys.byteorder == "big":
        a.byteswap()
    return a.tobytes()


def version(engine):
    if engine == "codepoints":
        return "0"
    from importlib.metadata import version as v

    return v(engine)


def load(job):
    """(encode function, what it was loaded from); raises when it cannot load."""
    engine = job["engine"]
    json_path, ranks, encoding = job.get("tokenizer_json"), job.get("tiktoken"), job.get("encoding")
    if engine == "codepoints":
        return (lambda text: [ord(c) for c in text]), "nothing"
    if engine == "gigatoken":
        import gigatoken

        if ranks:
            tok = gigatoken.Tokenizer.from_tiktoken(ranks)
            return tok.encode, "rank file"
        tok = gigatoken.Tokenizer(json_path)
        return tok.encode, "tokenizer.json"
    if engine == "fastokens":
        import fastokens

        if ranks:
            tok = fastokens.Tokenizer.from_tiktoken(ranks, encoding=encoding)
            loaded = "rank file"
        else:
            tok = fastokens.Tokenizer.from_file(json_path)
            loaded = "tokenizer.json"
        encode = tok.encode
        return (lambda text: encode(text, add_special_tokens=False).ids), loaded
    raise ValueError("unknown engine %r" % engine)


def out(**kw):
    print(json.dumps(kw), flush=True)
    sys.exit(0)


def main(argv):
    if len(argv) == 3 and argv[1] == "--version":
        try:
            out(version=version(argv[2]), python=platform.python_version())
        except Exception as e:  # noqa: BLE001 - reported, not raised
            out(error="%s is not installed: %s" % (argv[2], e))
    if len(argv) != 2:
        sys.exit(__doc__)
    with open(argv[1], encoding="utf-8") as f:
        job = json.load(f)
    engine = job["engine"]
    with open(job["text"], "rb") as f:
        raw = f.read()
    # The chunks as str before any timing: decoding is the harness's work, not the library's.
    chunks = [raw[s:e].decode("utf-8") for s, e in job["chunks"]]
    slices = [chunks[a:b] for a, b in job["slices"]]
    slice_bytes = [sum(e - s for s, e in job["chunks"][a:b]) for a, b in job["slices"]]

    t0 = time.perf_counter()
    try:
        ver = version(engine)
        if engine != "codepoints":
            __import__(engine)
        if engine == "gigatoken":
            # gigatoken returns numpy arrays and imports numpy at its first encode (~80 ms):
            # that import is the user's process set-up, not the cold slice's encoding.
            import numpy  # noqa: F401
    except Exception as e:  # noqa: BLE001
        out(error="%s is not installed (pip install %s): %s" % (engine, engine, e))
    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        encode, loaded_from = load(job)
    except Exception as e:  # noqa: BLE001
        out(error="%s %s cannot load the model: %s: %s" % (engine, ver, type(e).__name__, e))
    load_s = time.perf_counter() - t0

    perf = time.perf_counter
    slice_s = []
    try:
        for s in slices:
            t0 = perf()
            for c in s:
                encode(c)
            slice_s.append(perf() - t0)
        # Verification pass (untimed): every chunk, ids concatenated.
        ids = [encode(c) for c in chunks]
    except Exception as e:  # noqa: BLE001
        out(error="%s %s fails while encoding: %s: %s" % (engine, ver, type(e).__name__, e))

    h = FNV_OFFSET
    tokens = 0
    with open(job["ids_out"], "wb") as f:
        for chunk_ids in ids:
            data = u32_le(chunk_ids)
            f.write(len(chunk_ids).to_bytes(4, "little"))
            f.write(data)
            h = fnv1a64(data, h)
            tokens += len(chunk_ids)
    out(
        engine=engine,
        version=ver,
        python=platform.python_version(),
        loaded_from=loaded_from,
        import_s=import_s,
        load_s=load_s,
        slice_s=slice_s,
        slice_bytes=slice_bytes,
        tokens=tokens,
        ids_hash="%016x" % h,
        cpus=sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    )


if __name__ == "__main__":
    main(sys.argv)
