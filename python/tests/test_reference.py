"""ids equal to the reference libraries' (sentencepiece, tokenizers, tiktoken) on a few thousand
lines of the corpora, through the batch call (the reference's call is in docs/cli.md)."""

from __future__ import annotations

import pytest

import simdtok
from conftest import DATA, SHARED, corpus_texts

TEXTS = corpus_texts()


def rows(tok, texts):
    return tok.encode_batch(texts, format="list")


def need(path):
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/data)")
    return path


@pytest.mark.parametrize(
    "name",
    [
        "botchan_en_unigram_1000.model",
        "botchan_en_bpe_1000.model",
        "kyoto_ja_unigram_8000.model",
        "shared:llama-spm.from-gguf.model",
        "shared:xlm-roberta-nomic.from-gguf.model",
    ],
)
def test_sentencepiece(name):
    spm = pytest.importorskip("sentencepiece")
    path = need(SHARED / "models/sentencepiece" / name[7:]) if name.startswith("shared:") else DATA / "sentencepiece" / name
    ref = spm.SentencePieceProcessor(model_file=str(path))
    assert rows(simdtok.Tokenizer.from_file(path), TEXTS) == ref.encode(TEXTS)


@pytest.mark.parametrize(
    "path",
    [
        DATA / "wordpiece/all-MiniLM-L6-v2.bert-uncased.tokenizer.json",
        DATA / "bpe/gpt2-2k-roberta.tokenizer.json",
        DATA / "bpe/kjv-spm-first.tokenizer.json",
        SHARED / "models/hf-tokenizer-json/llama3.tokenizer.json",
        SHARED / "models/hf-tokenizer-json/qwen3.tokenizer.json",
        SHARED / "models/hf-tokenizer-json/gpt4o.tokenizer.json",
        SHARED / "models/hf-tokenizer-json/llama2.tokenizer.json",
    ],
    ids=lambda p: p.name,
)
def test_tokenizers_json(path):
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(need(path)))
    ref.no_padding()
    ref.no_truncation()
    want = [e.ids for e in ref.encode_batch(TEXTS, add_special_tokens=False)]
    assert rows(simdtok.Tokenizer.from_file(path), TEXTS) == want


@pytest.mark.parametrize("lowercase", [True, False])
def test_bert_vocab(lowercase):
    tokenizers = pytest.importorskip("tokenizers")
    path = DATA / "wordpiece/bert-base-uncased.vocab.txt"
    ref = tokenizers.BertWordPieceTokenizer(str(path), lowercase=lowercase)
    want = [e.ids for e in ref.encode_batch(TEXTS, add_special_tokens=False)]
    assert rows(simdtok.Tokenizer.from_file(path, lowercase=lowercase), TEXTS) == want
    with_special = [e.ids for e in ref.encode_batch(TEXTS[:500], add_special_tokens=True)]
    tok = simdtok.Tokenizer.from_file(path, lowercase=lowercase, add_special_tokens=True)
    assert rows(tok, TEXTS[:500]) == with_special


def _tiktoken_encoding(name: str, ranks_path):
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    ranks = tiktoken.load.load_tiktoken_bpe(str(ranks_path))
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *a, **k: ranks  # the pattern, not a download
    try:
        spec = getattr(public, name)()
    finally:
        public.load_tiktoken_bpe = original
    return tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens={})


@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_tiktoken(name):
    path = need(SHARED / f"models/tiktoken/{name}.tiktoken")
    ref = _tiktoken_encoding(name, path)
    assert rows(simdtok.Tokenizer.from_file(path), TEXTS) == ref.encode_ordinary_batch(TEXTS)


def test_gpt2_encoder_json():
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load

    path = DATA / "bpe/encoder.json"
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=str(DATA / "bpe/vocab.bpe"), encoder_json_file=str(path)
    )
    import tiktoken_ext.openai_public as public

    ref = tiktoken.Encoding("gpt2", pat_str=public.r50k_pat_str, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256})
    assert rows(simdtok.Tokenizer.from_file(path), TEXTS) == ref.encode_ordinary_batch(TEXTS)
    special = simdtok.Tokenizer.from_file(path, allow_special=True)
    assert rows(special, TEXTS[-10:]) == [ref.encode(t, allowed_special="all") for t in TEXTS[-10:]]
