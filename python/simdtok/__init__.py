"""simdtok: exact subword tokenization (SentencePiece, WordPiece, byte-level BPE) at the speed of
its Rust core.

>>> import simdtok
>>> tok = simdtok.Tokenizer.from_file("tests/data/sentencepiece/botchan_en_unigram_1000.model")
>>> ids = tok.encode("I am a cat.")
>>> tok.decode(ids)
'I am a cat.'
>>> flat, offsets = tok.encode_batch(["I am a cat.", "As yet I have no name."])

Batches run on simdtok's own threads with the GIL released and come back as flat numpy arrays
(or a pyarrow ``ListArray``), with no Python object per text. ``simdtok.ray`` and
``simdtok.spark`` tokenize Ray Datasets and Spark DataFrames.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, NamedTuple

import numpy as np

from . import _simdtok

__all__ = ["Tokenizer", "Encoding", "cpu", "__version__"]

__version__: str = _simdtok.__version__

_FORMATS = ("numpy", "arrow", "list")


class Encoding(NamedTuple):
    """One text's tokens: ids, ``(start, end)`` byte offsets into the text's UTF-8 (as the CLI's
    ``jsonl`` output; ``text.encode()[start:end]``), and the token strings as the reference
    library shows them."""

    ids: list[int]
    offsets: list[tuple[int, int]]
    pieces: list[str]


def _load(path: str, options: dict[str, Any]) -> "Tokenizer":
    return Tokenizer.from_file(path, **options)


class Tokenizer:
    """A model loaded from the file users already have: a SentencePiece ``.model`` (unigram or
    BPE), a Hugging Face ``tokenizer.json`` (WordPiece or BPE), a tiktoken rank file
    (``*.tiktoken``), GPT-2's ``encoder.json`` (with ``vocab.bpe`` beside it) or a BERT
    ``vocab.txt``. The kind is detected from the content. Thread-safe: one tokenizer may be used
    from many Python threads at once."""

    __slots__ = ("_tok", "_path", "_options")

    def __init__(self) -> None:
        raise TypeError("use simdtok.Tokenizer.from_file(path, ...)")

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        tier: str | None = None,
        lowercase: bool | None = None,
        add_special_tokens: bool = False,
        pattern: str | None = None,
        allow_special: bool = False,
        wordpiece_algorithm: str | None = None,
        cache_budget: str | int | None = None,
    ) -> "Tokenizer":
        """Loads a model file. The options are the CLI's (``simdtok encode --help``):

        - ``tier``: ``"auto"`` (default: ``SIMDTOK_TIER``, else the best this CPU runs),
          ``"scalar"``, ``"sse4.2"``, ``"avx2"`` or ``"neon"``; a tier this CPU cannot run raises.
        - ``lowercase`` (BERT ``vocab.txt`` only): lowercase and strip accents, default on.
        - ``add_special_tokens``: add what the model's post-processor adds (``[CLS] … [SEP]``),
          as the reference does with ``add_special_tokens=True``.
        - ``pattern`` (tiktoken files, GPT-2): ``"gpt2"``/``"r50k"``, ``"p50k"``, ``"cl100k"``,
          ``"o200k"`` (``_base`` may follow); default from the file name.
        - ``allow_special`` (tiktoken files, GPT-2): recognise special tokens such as
          ``<|endoftext|>`` in the text (``allowed_special="all"``); by default they are text,
          as ``encode_ordinary``.
        - ``wordpiece_algorithm`` (WordPiece): ``"fast"`` or ``"linear"`` (identical output).
        - ``cache_budget``: the most memory each thread's caches hold, in bytes or as a size
          (``"4MiB"``, ``"512KiB"``, ``0``); default their tuned sizes (under 11 MiB a thread
          for BPE and WordPiece, 22 MiB for unigram). The ids never depend on it.

        An option that does not apply to the kind of model raises ``ValueError``, never ignored.
        A missing file raises ``FileNotFoundError``; a malformed one ``ValueError``, with the
        library's message (the file and the cause).
        """
        options = dict(
            tier=tier,
            lowercase=lowercase,
            add_special_tokens=add_special_tokens,
            pattern=pattern,
            allow_special=allow_special,
            wordpiece_algorithm=wordpiece_algorithm,
            cache_budget=None if cache_budget is None else str(cache_budget),
        )
        path = os.fspath(path)
        self = object.__new__(cls)
        self._tok = _simdtok.Tokenizer.load(path, **options)
        self._path = path
        self._options = {k: v for k, v in options.items() if v not in (None, False)}
        return self

    def __reduce__(self):
        # Pickled as the path and options: the receiving process loads the file itself (it must
        # be readable there).
        return (_load, (self._path, self._options))

    def __repr__(self) -> str:
        opts = "".join(f", {k}={v!r}" for k, v in self._options.items())
        return f"simdtok.Tokenizer.from_file({self._path!r}{opts})"

    @property
    def path(self) -> str:
        """The model file this tokenizer was loaded from."""
        return self._path

    @property
    def vocab_size(self) -> int:
        """The number of ids."""
        return self._tok.vocab_size

    @property
    def tier(self) -> str:
        """The SIMD tier this tokenizer runs (``scalar``, ``sse4.2``, ``avx2``, ``neon``)."""
        return self._tok.tier

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (no special tokens unless the tokenizer was loaded with
        ``add_special_tokens=True``)."""
        return self._tok.encode(text)

    def encode_full(self, text: str) -> Encoding:
        """Ids, byte offsets and token strings of ``text``."""
        return Encoding(*self._tok.encode_full(text))

    def encode_batch(
        self,
        texts: Iterable[str | None] | Any,
        num_threads: int | None = None,
        format: str = "numpy",
    ):
        """Encodes many texts on simdtok's threads, the GIL released.

        ``texts``: a ``list[str]`` (any iterable of ``str``; ``None`` is a null), or any Arrow
        string array (``utf8``, ``large_utf8``, ``string_view``; a chunked array) through the
        Arrow PyCapsule interface, read in place.

        ``num_threads``: ``None`` for one per core this process may use, ``1`` for the calling
        thread alone.

        ``format``:

        - ``"numpy"`` (default): ``(ids, offsets)``, one flat ``uint32`` array of all ids and an
          ``int64`` array of ``len(texts) + 1`` row starts (text ``i`` is
          ``ids[offsets[i]:offsets[i + 1]]``); a null is an empty row.
        - ``"arrow"``: a ``pyarrow.ListArray`` of ``uint32`` (a ``LargeListArray`` beyond 2³¹
          ids) over the same buffers, no copy of the ids; a null is a null.
        - ``"list"``: a ``list[list[int]]`` as tiktoken's ``encode_ordinary_batch`` gives
          (``None`` for a null).
        """
        if format == "list":
            return self._tok.encode_batch_list(texts, num_threads)
        if format not in _FORMATS:
            raise ValueError(f"format must be one of {', '.join(map(repr, _FORMATS))}, not {format!r}")
        ids, offsets, validity, nulls = self._tok.encode_batch(texts, num_threads)
        ids = np.asarray(ids)
        offsets = np.asarray(offsets)
        if format == "numpy":
            return ids, offsets
        return _to_arrow(ids, offsets, None if validity is None else np.asarray(validity), nulls)

    def count_batch(self, texts: Iterable[str | None] | Any, num_threads: int | None = None) -> np.ndarray:
        """The number of tokens of each text (``int64``; 0 for a null), without keeping the ids."""
        return np.asarray(self._tok.count_batch(texts, num_threads))

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``, as the reference library decodes them (a numpy array is fine).
        An id out of range raises ``ValueError``."""
        if isinstance(ids, np.ndarray):
            ids = ids.tolist()
        return self._tok.decode(ids)

    def id_to_piece(self, id: int) -> str | None:
        """The vocabulary entry of ``id`` (``None`` out of range)."""
        return self._tok.id_to_piece(id)


def _to_arrow(ids: np.ndarray, offsets: np.ndarray, validity: np.ndarray | None, nulls: int):
    import pyarrow as pa

    n = len(offsets) - 1
    if len(ids) < 2**31:
        list_type = pa.list_(pa.uint32())
        offsets = offsets.astype(np.int32)
    else:
        list_type = pa.large_list(pa.uint32())
    values = pa.Array.from_buffers(pa.uint32(), len(ids), [None, pa.py_buffer(ids)])
    validity_buffer = pa.py_buffer(validity) if validity is not None else None
    return pa.Array.from_buffers(
        list_type,
        n,
        [validity_buffer, pa.py_buffer(offsets)],
        null_count=nulls,
        children=[values],
    )


def cpu() -> dict[str, Any]:
    """What ``simdtok cpu --json`` prints: ``arch``, ``model``, ``features``, ``compiled``,
    ``supported``, ``active``, ``source``, ``reason``."""
    return json.loads(_simdtok.cpu_json())
