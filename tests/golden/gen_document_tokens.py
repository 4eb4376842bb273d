#!/usr/bin/env python3
"""Generate tests/golden/document_tokens.json: the beginning- and end-of-sequence ids each model's
reference library reports, for simdtok's `Tokenizer::document_tokens` (and `encode --prepend-bos
--append-eos`).

Usage (from the repository root, or anywhere):

    pip install sentencepiece==0.2.3 tiktoken==0.14.0 transformers==5.24.0 tokenizers==0.23.3
    python3 tests/golden/gen_document_tokens.py [--data ../shared/data] [--check]

Only local files are read; nothing is downloaded.  For each model:

- SentencePiece `.model`: `SentencePieceProcessor(model_file=...).bos_id()` and `.eos_id()`
  (-1: none);
- tiktoken rank file: `tiktoken.Encoding(...).eot_token` (the encoding's `<|endoftext|>`), no
  beginning; GPT-2's `encoder.json` + `vocab.bpe`: the `eot_token` of tiktoken's `gpt2` encoding
  built from them;
- `tokenizer.json`: the file copied to a temporary folder as `tokenizer.json`, with the
  `tokenizer_config.json` simdtok reads beside it (`NAME.tokenizer_config.json` beside
  `NAME.tokenizer.json`, or `tokenizer_config.json`) when there is one, then
  `AutoTokenizer.from_pretrained(folder).bos_token_id` / `.eos_token_id`;
- BERT `vocab.txt`: none (`BertTokenizer` has `[CLS]` / `[SEP]`, no bos / eos).

Models under tests/data are written as `tests/data/...`; those under ../shared/data as
`shared/...` (the tests skip them when it is absent).
"""

import argparse
import json
import pathlib
import shutil
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
OUT = REPO / "tests/golden/document_tokens.json"

COMMITTED = [
    "tests/data/sentencepiece/botchan_en_bpe_1000.model",
    "tests/data/sentencepiece/botchan_en_unigram_1000.model",
    "tests/data/sentencepiece/kyoto_ja_unigram_8000.model",
    "tests/data/wordpiece/bert-base-uncased.vocab.txt",
    "tests/data/wordpiece/all-MiniLM-L6-v2.bert-uncased.tokenizer.json",
    "tests/data/bpe/gemma-1k.tokenizer.json",
    "tests/data/bpe/encoder.json",
]
SHARED = [
    "models/sentencepiece/llama-spm.from-gguf.model",
    "models/sentencepiece/xlm-roberta-nomic.from-gguf.model",
    "models/tiktoken/cl100k_base.tiktoken",
    "models/tiktoken/o200k_base.tiktoken",
    "models/tiktoken/r50k_base.tiktoken",
    "models/tiktoken/p50k_base.tiktoken",
    "models/hf-tokenizer-json/llama2.tokenizer.json",
    "models/hf-tokenizer-json/llama3.tokenizer.json",
    "models/hf-tokenizer-json/qwen3.tokenizer.json",
    "models/hf-tokenizer-json/gpt4o.tokenizer.json",
]


def sentencepiece_ids(path):
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    return [i if i >= 0 else None for i in (sp.bos_id(), sp.eos_id())]


def tiktoken_ids(path):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    name = path.name.removesuffix(".tiktoken")
    spec = getattr(openai_public, name)
    # The constructor's own arguments, with the local rank file instead of the download.
    real = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *a, **k: load_tiktoken_bpe(str(path))
    try:
        args = spec()
    finally:
        openai_public.load_tiktoken_bpe = real
    enc = tiktoken.Encoding(**args)
    return [None, enc.eot_token]


def gpt2_ids(path):
    import tiktoken
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    from tiktoken_ext import openai_public

    # tiktoken's `gpt2` encoding, built from the local encoder.json and vocab.bpe.
    real = openai_public.data_gym_to_mergeable_bpe_ranks
    openai_public.data_gym_to_mergeable_bpe_ranks = lambda **k: data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=str(path.with_name("vocab.bpe")), encoder_json_file=str(path)
    )
    try:
        args = openai_public.gpt2()
    finally:
        openai_public.data_gym_to_mergeable_bpe_ranks = real
    return [None, tiktoken.Encoding(**args).eot_token]


def tokenizer_json_ids(path):
    from transformers import AutoTokenizer

    stem = path.name.removesuffix("tokenizer.json")
    config = path.with_name(stem + "tokenizer_config.json")
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        shutil.copy(path, folder / "tokenizer.json")
        if config.is_file():
            shutil.copy(config, folder / "tokenizer_config.json")
        else:
            # Without a config AutoTokenizer cannot tell the class: the generic fast tokenizer.
            (folder / "tokenizer_config.json").write_text(
                json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"})
            )
        tok = AutoTokenizer.from_pretrained(str(folder))
        return [tok.bos_token_id, tok.eos_token_id]


def ids_of(path):
    name = path.name
    if name.endswith(".model"):
        return sentencepiece_ids(path)
    if name.endswith(".tiktoken"):
        return tiktoken_ids(path)
    if name == "encoder.json":
        return gpt2_ids(path)
    if name.endswith("tokenizer.json"):
        return tokenizer_json_ids(path)
    if name.endswith("vocab.txt"):
        return [None, None]
    raise SystemExit(f"{path}: unknown kind")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared/data"))
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 on a difference")
    args = parser.parse_args()
    data = pathlib.Path(args.data)
    rows = []
    for rel in COMMITTED:
        bos, eos = ids_of(REPO / rel)
        rows.append({"model": rel, "bos": bos, "eos": eos})
    for rel in SHARED:
        bos, eos = ids_of(data / rel)
        rows.append({"model": "shared/" + rel, "bos": bos, "eos": eos})
    text = json.dumps(rows, indent=1) + "\n"
    if args.check:
        if OUT.read_text() != text:
            print(f"{OUT}: differs", file=sys.stderr)
            sys.exit(1)
        return
    OUT.write_text(text)
    print(f"wrote {OUT} ({len(rows)} models)")


if __name__ == "__main__":
    main()
