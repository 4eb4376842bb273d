"""Bad input raises a clear Python exception (the library's message), never crashes."""

from __future__ import annotations

import subprocess

import pytest

import simdtok
from conftest import DATA, cli_path

SPM = DATA / "sentencepiece/botchan_en_unigram_1000.model"
BERT = DATA / "wordpiece/bert-base-uncased.vocab.txt"


@pytest.fixture(scope="module")
def tok():
    return simdtok.Tokenizer.from_file(SPM)


def cli_message(*args: str) -> str | None:
    cli = cli_path()
    if cli is None or not cli.exists():
        return None
    proc = subprocess.run([str(cli), *args], input=b"x\n", capture_output=True, timeout=60)
    assert proc.returncode != 0
    return proc.stderr.decode()


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.model"
    with pytest.raises(FileNotFoundError) as e:
        simdtok.Tokenizer.from_file(missing)
    assert str(missing) in str(e.value)
    # The CLI's message holds the same text.
    message = cli_message("encode", "--model", str(missing))
    if message is not None:
        assert str(e.value) in message


@pytest.mark.parametrize(
    "name, content",
    [
        ("bad.model", b"\x0a\xff\xff\xff\xff\x0fgarbage"),
        ("tokenizer.json", b'{"model": {"type": "Nope"}}'),
        ("broken.tiktoken", b"!!!! notanumber\n"),
        ("empty.model", b""),
    ],
)
def test_malformed_model(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError) as e:
        simdtok.Tokenizer.from_file(path)
    assert str(path) in str(e.value)
    message = cli_message("encode", "--model", str(path))
    if message is not None:
        assert str(e.value) in message


@pytest.mark.parametrize(
    "path, options, fragment",
    [
        (SPM, {"lowercase": False}, "lowercase=False applies only to BERT vocab.txt models"),
        (SPM, {"pattern": "cl100k"}, "pattern applies only to tiktoken rank files"),
        (BERT, {"allow_special": True}, "allow_special applies only to tiktoken rank files"),
        (SPM, {"wordpiece_algorithm": "linear"}, "wordpiece_algorithm applies only to WordPiece models"),
        (BERT, {"wordpiece_algorithm": "quadratic"}, "unknown WordPiece algorithm"),
        (SPM, {"tier": "sse9"}, "tier:"),
        (DATA / "bpe/encoder.json", {"pattern": "p99k"}, "unknown pattern"),
        (SPM, {"cache_budget": "lots"}, "cache budget 'lots'"),
    ],
)
def test_options_refused(path, options, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        simdtok.Tokenizer.from_file(path, **options)


def test_non_str_items(tok):
    with pytest.raises(TypeError, match=r"texts\[1\] is int, not str"):
        tok.encode_batch(["a", 1])
    with pytest.raises(TypeError, match=r"texts\[0\] is bytes, not str"):
        tok.encode_batch([b"a"], format="list")
    with pytest.raises(TypeError):
        tok.count_batch([["a"]])
    with pytest.raises(TypeError, match="not a single str"):
        tok.encode_batch("a text")
    with pytest.raises(TypeError):
        tok.encode_batch(42)
    with pytest.raises(TypeError):
        tok.encode(42)


def test_lone_surrogates(tok):
    with pytest.raises(UnicodeEncodeError):
        tok.encode("a\ud800b")
    with pytest.raises(UnicodeEncodeError):
        tok.encode_full("\udfff")
    with pytest.raises(ValueError, match=r"texts\[2\].*surrogates not allowed"):
        tok.encode_batch(["ok", "fine", "bad \ud83d"])


def test_bad_arguments(tok):
    with pytest.raises(ValueError, match="num_threads"):
        tok.encode_batch(["a"], num_threads=0)
    with pytest.raises(ValueError, match="format"):
        tok.encode_batch(["a"], format="pandas")
    with pytest.raises(ValueError, match="out of range"):
        tok.decode([tok.vocab_size])
    with pytest.raises(OverflowError):
        tok.decode([-1])
    with pytest.raises(TypeError):
        simdtok.Tokenizer()


def test_arrow_wrong_types(tok):
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(TypeError, match="expected an Arrow string array"):
        tok.encode_batch(pa.array([1, 2, 3]))
    with pytest.raises(TypeError, match="pass one of its columns"):
        tok.encode_batch(pa.table({"text": ["a"]}))
    with pytest.raises(TypeError, match="expected an Arrow string array"):
        tok.encode_batch(pa.array([b"a"], pa.binary()))


def test_arrow_invalid_utf8(tok):
    pa = pytest.importorskip("pyarrow")
    # pyarrow does not check buffers it is handed: bytes that are not UTF-8 must raise, not crash.
    offsets = pa.py_buffer(bytes([0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0]))
    data = pa.py_buffer(b"ok\xff\xfe")
    arr = pa.Array.from_buffers(pa.string(), 2, [None, offsets, data])
    with pytest.raises(ValueError, match=r"texts\[1\]: invalid UTF-8"):
        tok.encode_batch(arr)


def test_first_bad_text_in_input_order(tok):
    """On several threads, the error names the first bad text in input order."""
    pa = pytest.importorskip("pyarrow")
    import numpy as np

    n = 40_000
    data = bytearray(b"abcd" * n)
    for bad in (30_000, 1_000, 39_999):
        data[bad * 4 : bad * 4 + 4] = b"\xff\xfe\xfd\xfc"
    offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int32) * 4).tobytes())
    arr = pa.Array.from_buffers(pa.string(), n, [None, offsets, pa.py_buffer(bytes(data))])
    for threads in (1, 2, 4):
        with pytest.raises(ValueError, match=r"texts\[1000\]: invalid UTF-8"):
            tok.encode_batch(arr, num_threads=threads)
