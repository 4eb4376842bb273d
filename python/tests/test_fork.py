"""The batch threads survive fork(): encode in a parent (its pool started), fork, encode in the
child (a new pool there), as Spark's forked Python workers do."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

import simdtok
from conftest import DATA, corpus_texts

TEXTS = corpus_texts(limit_bytes=40_000)
MODEL = DATA / "wordpiece/bert-base-uncased.vocab.txt"


def _child_encode(conn):
    tok = simdtok.Tokenizer.from_file(MODEL)
    conn.send(tok.encode_batch(TEXTS, num_threads=2, format="list"))
    conn.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
@pytest.mark.timeout(120)
def test_encode_fork_encode():
    tok = simdtok.Tokenizer.from_file(MODEL)
    want = tok.encode_batch(TEXTS, num_threads=2, format="list")  # the parent's pool is running
    assert want == tok.encode_batch(TEXTS, num_threads=None, format="list")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the same tokenizer object, threads rebuilt
        status = 1
        try:
            ok = tok.encode_batch(TEXTS, num_threads=2, format="list") == want
            ok &= tok.encode_batch(TEXTS, num_threads=3, format="list") == want
            ok &= tok.count_batch(TEXTS, num_threads=2).tolist() == [len(r) for r in want]
            os.write(write, b"ok" if ok else b"differ")
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung encoding a batch")
        time.sleep(0.05)
    assert os.read(read, 16) == b"ok"
    assert os.waitstatus_to_exitcode(status) == 0
    # and the parent still works
    assert tok.encode_batch(TEXTS, num_threads=2, format="list") == want


@pytest.mark.timeout(120)
def test_multiprocessing_fork_context():
    tok = simdtok.Tokenizer.from_file(MODEL)
    want = tok.encode_batch(TEXTS, num_threads=2, format="list")
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_child_encode, args=(child,))
    proc.start()
    assert parent.poll(60), "the child gave no result in 60 s"
    assert parent.recv() == want
    proc.join(30)
    assert proc.exitcode == 0
