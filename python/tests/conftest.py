"""Shared fixtures: where the repository, the CLI and the shared data are, the models of every
family, and texts read as ``simdtok encode --input-format lines`` reads them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
SHARED = Path(os.environ.get("SIMDTOK_SHARED_DATA", REPO.parent / "shared" / "data"))


def cli_path() -> Path | None:
    """The ``simdtok`` CLI: ``$SIMDTOK_CLI``, else the checkout's release build, else PATH."""
    env = os.environ.get("SIMDTOK_CLI")
    if env:
        return Path(env)
    built = REPO / "target" / "release" / "simdtok"
    if built.exists():
        return built
    found = shutil.which("simdtok")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def cli() -> Path:
    path = cli_path()
    if path is None or not path.exists():
        pytest.skip(
            "the simdtok CLI is not built: run `cargo build --release --bin simdtok` at the "
            "repository root, or set SIMDTOK_CLI"
        )
    return path


def read_lines(path: Path, limit: int | None = None, max_bytes: int | None = None) -> list[str]:
    """The texts of ``path`` as the CLI's ``lines`` input gives them: split at ``\\n`` only, a
    ``\\r`` before it dropped, a last line without ``\\n`` kept."""
    data = path.read_bytes()
    if max_bytes is not None and len(data) > max_bytes:
        data = data[: data.rfind(b"\n", 0, max_bytes) + 1]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    texts = [(line[:-1] if line.endswith(b"\r") else line).decode("utf-8") for line in lines]
    return texts[:limit] if limit is not None else texts


def write_lines(path: Path, texts: list[str]) -> Path:
    path.write_bytes(b"".join(t.encode("utf-8") + b"\n" for t in texts))
    return path


def run_cli(cli: Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run([str(cli), *map(str, args)], input=input, capture_output=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"simdtok {' '.join(map(str, args))}: exit {proc.returncode}: {proc.stderr.decode()}")
    return proc.stdout


# Every family: (label, path, Tokenizer.from_file options, CLI flags). Bundled files always;
# ../shared/data ones when present.
BUNDLED = [
    ("spm-unigram", DATA / "sentencepiece/botchan_en_unigram_1000.model", {}, []),
    ("spm-bpe", DATA / "sentencepiece/botchan_en_bpe_1000.model", {}, []),
    (
        "spm-bpe-special",
        DATA / "sentencepiece/botchan_en_bpe_1000.model",
        {"add_special_tokens": True},
        ["--add-special-tokens"],
    ),
    ("spm-unigram-ja", DATA / "sentencepiece/kyoto_ja_unigram_8000.model", {}, []),
    ("bert-vocab", DATA / "wordpiece/bert-base-uncased.vocab.txt", {}, []),
    (
        "bert-vocab-special-linear",
        DATA / "wordpiece/bert-base-uncased.vocab.txt",
        {"add_special_tokens": True, "wordpiece_algorithm": "linear"},
        ["--add-special-tokens", "--wordpiece-algorithm", "linear"],
    ),
    ("bert-vocab-cased", DATA / "wordpiece/bert-base-uncased.vocab.txt", {"lowercase": False}, ["--no-lowercase"]),
    ("bert-chinese", DATA / "wordpiece/bert-base-chinese.vocab.txt", {}, []),
    ("wordpiece-json", DATA / "wordpiece/all-MiniLM-L6-v2.bert-uncased.tokenizer.json", {}, []),
    ("gpt2-encoder-json", DATA / "bpe/encoder.json", {}, []),
    ("gpt2-allow-special", DATA / "bpe/encoder.json", {"allow_special": True}, ["--allow-special"]),
    ("bytelevel-json", DATA / "bpe/gpt2-2k-roberta.tokenizer.json", {}, []),
    ("metaspace-json", DATA / "bpe/kjv-spm-first.tokenizer.json", {}, []),
    ("whitespace-json", DATA / "bpe/kjv-ws-1500.tokenizer.json", {}, []),
]
SHARED_MODELS = [
    ("cl100k", SHARED / "models/tiktoken/cl100k_base.tiktoken", {}, []),
    ("o200k", SHARED / "models/tiktoken/o200k_base.tiktoken", {}, []),
    ("r50k-as-p50k", SHARED / "models/tiktoken/r50k_base.tiktoken", {"pattern": "p50k"}, ["--pattern", "p50k"]),
    ("llama3", SHARED / "models/hf-tokenizer-json/llama3.tokenizer.json", {}, []),
    ("qwen3", SHARED / "models/hf-tokenizer-json/qwen3.tokenizer.json", {}, []),
    ("llama2-json", SHARED / "models/hf-tokenizer-json/llama2.tokenizer.json", {}, []),
    ("llama-spm", SHARED / "models/sentencepiece/llama-spm.from-gguf.model", {}, []),
    ("xlm-roberta-spm", SHARED / "models/sentencepiece/xlm-roberta-nomic.from-gguf.model", {}, []),
]


def model_params(shared: bool = True):
    out = [pytest.param(m, id=m[0]) for m in BUNDLED]
    if shared:
        for m in SHARED_MODELS:
            marks = () if m[1].exists() else (pytest.mark.skip(reason=f"{m[1]} is absent (../shared/data)"),)
            out.append(pytest.param(m, id=m[0], marks=marks))
    return out


def corpus_texts(limit_bytes: int = 150_000) -> list[str]:
    """A few thousand lines: the bundled corpus (English, eleven scripts, Python source), then
    the shared corpora when present."""
    texts: list[str] = []
    for name in ["en_kjv_bible.head.txt", "udhr_scripts.txt", "python311_stdlib.head.py.txt"]:
        texts += read_lines(DATA / "corpus" / name, max_bytes=limit_bytes)
    for name in [
        "botchan.txt",
        "en_jargon_file_4.4.7.txt",
        "ja_debian_reference.txt",
        "zh-cn_debian_reference.txt",
        "emoji_unicode15_emoji-test.txt",
        "multi_udhr_all_languages.txt",
    ]:
        path = SHARED / "corpora" / name
        if path.exists():
            texts += read_lines(path, max_bytes=limit_bytes // 2)
    # Edge cases: empty, spaces only, special-token text, a long line.
    texts += ["", " ", "  \t ", "<|endoftext|> [CLS] <s> </s>", "x" * 5000, "é" * 3000]
    return texts
