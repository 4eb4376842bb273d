"""numpy and Arrow inputs and outputs: shapes, types, zero copy, nulls, slices, round trips."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import simdtok
from conftest import DATA, corpus_texts

pa = pytest.importorskip("pyarrow")

TEXTS = corpus_texts(limit_bytes=60_000)
MODEL = DATA / "bpe/gpt2-2k-roberta.tokenizer.json"


@pytest.fixture(scope="module")
def tok():
    return simdtok.Tokenizer.from_file(MODEL)


@pytest.fixture(scope="module")
def want(tok):
    return [tok.encode(t) for t in TEXTS]


def test_numpy_layout(tok, want):
    ids, offsets = tok.encode_batch(TEXTS)
    assert ids.dtype == np.uint32 and ids.ndim == 1 and ids.flags.c_contiguous
    assert offsets.dtype == np.int64 and len(offsets) == len(TEXTS) + 1
    assert np.all(np.diff(offsets) >= 0)
    assert ids.tolist() == [i for row in want for i in row]
    assert ids.flags.writeable and ids.base is not None  # a view of simdtok's buffer
    ids[:1] = 7  # ours to modify


def test_empty_batches(tok):
    ids, offsets = tok.encode_batch([])
    assert ids.shape == (0,) and offsets.tolist() == [0]
    ids, offsets = tok.encode_batch(["", ""])
    assert ids.shape == (0,) and offsets.tolist() == [0, 0, 0]
    assert tok.encode_batch([], format="list") == []
    assert len(tok.encode_batch([], format="arrow")) == 0
    assert tok.encode_batch(pa.array([], pa.string()), format="list") == []
    assert tok.count_batch([]).tolist() == []


def test_iterables(tok, want):
    assert tok.encode_batch(tuple(TEXTS[:20]), format="list") == want[:20]
    assert tok.encode_batch((t for t in TEXTS[:20]), format="list") == want[:20]
    assert tok.encode_batch(np.array(TEXTS[:20], dtype=object), format="list") == want[:20]
    assert tok.encode_batch(np.array(TEXTS[:20]), format="list") == want[:20]  # numpy.str_


@pytest.mark.parametrize("typ", ["string", "large_string", "string_view"])
def test_arrow_input(tok, want, typ):
    arr = pa.array(TEXTS, type=getattr(pa, typ)())
    assert tok.encode_batch(arr, format="list") == want
    ids, offsets = tok.encode_batch(arr, num_threads=2)
    assert ids.tolist() == [i for row in want for i in row]
    # a slice (a non-zero offset into the buffers)
    assert tok.encode_batch(arr.slice(5, 40), format="list") == want[5:45]
    # chunked (the stream interface)
    chunked = pa.chunked_array([arr.slice(0, 100), arr.slice(100)])
    assert tok.encode_batch(chunked, format="list") == want
    assert tok.count_batch(chunked).tolist() == [len(r) for r in want]


def test_protocol_only_objects(tok, want):
    """Any object with the PyCapsule interface, not only pyarrow's classes."""
    arr = pa.array(TEXTS[:30])

    class ArrayOnly:
        def __arrow_c_array__(self, requested_schema=None):
            return arr.__arrow_c_array__()

    class StreamOnly:
        def __arrow_c_stream__(self, requested_schema=None):
            return pa.chunked_array([arr.slice(0, 10), arr.slice(10)]).__arrow_c_stream__()

    assert tok.encode_batch(ArrayOnly(), format="list") == want[:30]
    assert tok.encode_batch(StreamOnly(), format="list") == want[:30]


def test_nulls(tok):
    texts = ["Hello world", None, "", "again", None]
    arr = pa.array(texts)
    out = tok.encode_batch(arr, format="arrow")
    assert out.null_count == 2
    assert out.to_pylist() == [tok.encode("Hello world"), None, [], tok.encode("again"), None]
    # a list with None: the same
    assert tok.encode_batch(texts, format="arrow").to_pylist() == out.to_pylist()
    assert tok.encode_batch(texts, format="list") == out.to_pylist()
    # numpy: a null is an empty row
    ids, offsets = tok.encode_batch(arr)
    assert np.diff(offsets).tolist() == [len(r or []) for r in out.to_pylist()]
    assert tok.count_batch(arr).tolist() == [len(r or []) for r in out.to_pylist()]
    # sliced nulls (validity bits at an offset)
    assert tok.encode_batch(arr.slice(1, 3), format="list") == [None, [], tok.encode("again")]
    many = pa.array([None if i % 3 == 0 else TEXTS[i] for i in range(len(TEXTS))])
    got = tok.encode_batch(many, num_threads=2, format="arrow")
    assert got.to_pylist() == [None if i % 3 == 0 else tok.encode(TEXTS[i]) for i in range(len(TEXTS))]


def test_arrow_output_round_trip(tok, want):
    out = tok.encode_batch(TEXTS, format="arrow")
    assert out.type == pa.list_(pa.uint32())
    out.validate(full=True)
    assert out.to_pylist() == want
    ids, offsets = tok.encode_batch(TEXTS)
    assert np.array_equal(out.values.to_numpy(), ids)
    assert np.array_equal(out.offsets.to_numpy(), offsets)
    # through IPC and Parquet
    table = pa.table({"text": TEXTS, "ids": out})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    back = pa.ipc.open_stream(sink.getvalue()).read_all()
    assert back.column("ids").to_pylist() == want
    # the output of one batch as the input of the next (decode each row)
    for i in range(0, len(TEXTS), 97):
        assert tok.decode(out[i].values.to_numpy()) == tok.decode(want[i])


def test_encode_full_and_pickle(tok):
    text = "Hello, wörld! 日本"
    enc = tok.encode_full(text)
    assert enc.ids == tok.encode(text)
    raw = text.encode()
    assert "".join(raw[s:e].decode("utf-8", "replace") for s, e in enc.offsets) != ""
    assert all(0 <= s <= e <= len(raw) for s, e in enc.offsets)
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode(text) == tok.encode(text) and again.path == tok.path
    assert "from_file" in repr(tok)
    assert tok.vocab_size > 0 and tok.id_to_piece(0) is not None and tok.id_to_piece(10**9) is None


def test_large_text_threads(tok):
    text = " ".join(TEXTS)
    assert tok.encode(text) == tok.encode_batch([text], num_threads=2, format="list")[0]


def test_cpu():
    info = simdtok.cpu()
    assert info["active"] in info["supported"] and "arch" in info


def test_gil_released(tok):
    """Another Python thread runs while a batch encodes (the GIL is released meanwhile)."""
    import threading
    import time

    big = TEXTS * 10
    ticks = 0
    stop = False

    def spin():
        nonlocal ticks
        while not stop:
            ticks += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        time.sleep(0.05)
        before = ticks
        start = time.perf_counter()
        tok.encode_batch(big, num_threads=1)
        elapsed = time.perf_counter() - start
        during = ticks - before
    finally:
        stop = True
        thread.join()
    assert elapsed > 0.02, "the batch was too short to tell"
    assert during > 1000, f"the other thread ran {during} times in {elapsed:.3f} s"


@pytest.mark.parametrize("budget", [0, "16KiB", 1 << 20])
def test_a_cache_budget_keeps_the_ids(want, budget):
    small = simdtok.Tokenizer.from_file(MODEL, cache_budget=budget)
    assert [small.encode(t) for t in TEXTS] == want
    ids, _ = small.encode_batch(TEXTS, num_threads=2)
    assert ids.tolist() == [i for row in want for i in row]
    # Pickled with its budget (a Ray or Spark worker loads it so).
    assert pickle.loads(pickle.dumps(small))._options["cache_budget"] == str(budget)
