"""ids, offsets, pieces and decode equal to the Rust CLI's (``simdtok encode|decode``), for every
model family, on a few thousand lines; and the batch calls equal to one-by-one encoding."""

from __future__ import annotations

import json

import numpy as np
import pytest

import simdtok
from conftest import corpus_texts, model_params, run_cli, write_lines

TEXTS = corpus_texts()


@pytest.fixture(scope="module")
def texts_file(tmp_path_factory):
    return write_lines(tmp_path_factory.mktemp("texts") / "texts.txt", TEXTS)


@pytest.mark.parametrize("model", model_params())
def test_equal_to_cli(model, cli, texts_file, tmp_path):
    label, path, options, flags = model
    tok = simdtok.Tokenizer.from_file(path, **options)
    out = run_cli(cli, "encode", "--model", path, "--input", texts_file, "--output-format", "jsonl", *flags)
    want = [json.loads(line) for line in out.decode("utf-8").splitlines()]
    assert len(want) == len(TEXTS)

    # encode_batch (numpy, all threads) against the CLI's ids, row by row.
    ids, offsets = tok.encode_batch(TEXTS)
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64
    assert offsets.shape == (len(TEXTS) + 1,) and offsets[0] == 0 and offsets[-1] == len(ids)
    for i, row in enumerate(want):
        got = ids[offsets[i] : offsets[i + 1]].tolist()
        assert got == row["ids"], f"{label}: text {i}: {TEXTS[i][:80]!r}"

    # encode_full: ids and byte offsets as the CLI's jsonl, for every text.
    for i, row in enumerate(want):
        enc = tok.encode_full(TEXTS[i])
        assert enc.ids == row["ids"], f"{label}: text {i}"
        assert [list(o) for o in enc.offsets] == row["offsets"], f"{label}: offsets of text {i}"

    # pieces as the CLI's `pieces` output.
    pieces = run_cli(cli, "encode", "--model", path, "--input", texts_file, "--output-format", "pieces", *flags)
    for i, line in enumerate(pieces.decode("utf-8").splitlines()):
        assert tok.encode_full(TEXTS[i]).pieces == json.loads(line), f"{label}: pieces of text {i}"

    # decode: the CLI's `decode` of the same ids (texts joined by newlines: a decoded text may
    # itself hold one).
    ids_file = write_lines(tmp_path / "ids.txt", [" ".join(map(str, r["ids"])) for r in want])
    decoded = run_cli(cli, "decode", "--model", path, "--input", ids_file)
    mine = "".join(tok.decode(r["ids"]) + "\n" for r in want)
    assert mine == decoded.decode("utf-8"), label

    # count: the CLI's `count`.
    counts = run_cli(cli, "count", "--model", path, "--input", texts_file, *flags)
    assert tok.count_batch(TEXTS).tolist() == [int(c) for c in counts.split()]


@pytest.mark.parametrize("model", model_params(shared=False))
def test_batch_equals_one_by_one(model):
    label, path, options, _ = model
    tok = simdtok.Tokenizer.from_file(path, **options)
    one = [tok.encode(t) for t in TEXTS]
    for threads in (1, 2, 3, None):
        ids, offsets = tok.encode_batch(TEXTS, num_threads=threads)
        rows = [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(TEXTS))]
        assert rows == one, f"{label}, {threads} threads"
        assert tok.encode_batch(TEXTS, num_threads=threads, format="list") == one
        assert tok.count_batch(TEXTS, num_threads=threads).tolist() == [len(r) for r in one]
    assert tok.encode_batch(TEXTS, format="arrow").to_pylist() == one
    # decode(encode(t)) through numpy ids too
    ids, offsets = tok.encode_batch(TEXTS[:50])
    for i in range(50):
        assert tok.decode(ids[offsets[i] : offsets[i + 1]]) == tok.decode(one[i])


def test_options_as_cli_tier(cli, tmp_path):
    """Every tier this CPU runs gives the scalar tier's ids."""
    path = model_params(shared=False)[0].values[0][1]
    supported = simdtok.cpu()["supported"]
    base = simdtok.Tokenizer.from_file(path, tier="scalar").encode_batch(TEXTS, format="list")
    for tier in supported:
        tok = simdtok.Tokenizer.from_file(path, tier=tier)
        assert tok.tier == tier
        assert tok.encode_batch(TEXTS, format="list") == base, tier


def test_cpu_equals_cli(cli):
    assert simdtok.cpu() == json.loads(run_cli(cli, "cpu", "--json"))
