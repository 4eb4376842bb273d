#!/usr/bin/env python3
"""Write the two small byte-level BPE tokenizer.json files that test tokenizer.json normalizers:
GPT-2's vocabulary cut to its 256 byte tokens and first 2000 merges (ids 0..2255, unchanged),
from encoder.json and vocab.bpe beside this script (MIT, see tiktoken-MIT-LICENSE.txt), with

    gpt2-2k-nfkc-lower.tokenizer.json   normalizer Sequence[NFKC, Lowercase],
                                        ByteLevel pre-tokenizer with add_prefix_space
    gpt2-2k-chain.tokenizer.json        normalizer Sequence[Strip, NFKD, Replace U+0301 -> "",
                                        NFC, Replace "  " -> " ", Prepend "»"], ByteLevel
                                        pre-tokenizer without add_prefix_space

and, without a normalizer, two that trim spaces off the offsets in the post-processor:

    gpt2-2k-trim.tokenizer.json         ByteLevel pre-tokenizer and post-processor, both with
                                        add_prefix_space, trim_offsets
    gpt2-2k-roberta.tokenizer.json      ByteLevel pre-tokenizer without add_prefix_space,
                                        RobertaProcessing(<s>, </s>, trim_offsets, no
                                        add_prefix_space), <s> and </s> added (special)

and, without a normalizer, four with chains of pre-tokenizer stages:

    gpt2-2k-deepseek.tokenizer.json     Sequence[Split \p{N}{1,3}, Split kana/kanji runs, Split a
                                        word regex (all Isolated), ByteLevel without regex], as
                                        DeepSeek V3 has them
    gpt2-2k-tekken.tokenizer.json       Sequence[Split Mistral's tekken regex (Isolated),
                                        ByteLevel without regex], as Mistral-Nemo has them
    gpt2-2k-digits.tokenizer.json       Sequence[Digits(individual_digits), ByteLevel with
                                        regex], as StarCoder has them
    gpt2-2k-behaviors.tokenizer.json    Sequence[Split " " MergedWithNext, Split "-"
                                        MergedWithPrevious, Digits (Contiguous), Split "x"
                                        Removed, Split [.,;:!?] Contiguous, ByteLevel without
                                        regex]

and one laid out as Hugging Face's own GPT-2 tokenizer.json, whose <|endoftext|> has
normalized: true, with more added tokens to exercise the reference's two passes (tokens with
normalized: false first, in the raw text; then those with normalized: true in what is left):

    gpt2-2k-hf-added.tokenizer.json     ByteLevel pre-tokenizer (no prefix space) and post-processor
                                        (add_prefix_space and, unlike GPT-2's, trim_offsets, which
                                        trims added tokens too), added <|endoftext|> (normalized,
                                        special), <|end (raw), abc (normalized, single_word),
                                        <pad> (raw, special, lstrip, rstrip)

Deterministic; needs nothing but Python.  Usage: python3 tests/data/bpe/make_normalizer_tokenizers.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MERGES = 2000


def model():
    with open(os.path.join(HERE, "encoder.json"), encoding="utf-8") as f:
        encoder = json.load(f)
    with open(os.path.join(HERE, "vocab.bpe"), encoding="utf-8") as f:
        lines = [l for l in f.read().split("\n")[1:] if l]
    merges = lines[:MERGES]
    vocab = {t: i for t, i in encoder.items() if i < 256 + MERGES}
    for m in merges:
        a, b = m.split(" ")
        assert encoder[a + b] < 256 + MERGES and a in vocab and b in vocab
    return {"type": "BPE", "dropout": None, "unk_token": None,
            "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": False,
            "byte_fallback": False, "ignore_merges": False,
            "vocab": dict(sorted(vocab.items(), key=lambda kv: kv[1])), "merges": merges}


def tokenizer(normalizer, add_prefix_space, trim_offsets=False):
    byte_level = {"type": "ByteLevel", "add_prefix_space": add_prefix_space,
                  "trim_offsets": trim_offsets, "use_regex": True}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": normalizer, "pre_tokenizer": byte_level, "post_processor": byte_level,
            "decoder": byte_level, "model": model()}


def added(content, id, normalized=False, special=True, single_word=False, strip=False):
    return {"id": id, "content": content, "single_word": single_word, "lstrip": strip,
            "rstrip": strip, "normalized": normalized, "special": special}


def write(name, tok):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
        f.write("\n")


write("gpt2-2k-nfkc-lower.tokenizer.json", tokenizer(
    {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}, True))
write("gpt2-2k-chain.tokenizer.json", tokenizer(
    {"type": "Sequence", "normalizers": [
        {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "NFKD"},
        {"type": "Replace", "pattern": {"String": "\u0301"}, "content": ""},
        {"type": "NFC"},
        {"type": "Replace", "pattern": {"String": "  "}, "content": " "},
        {"type": "Prepend", "prepend": "\u00bb"},
    ]}, False))
write("gpt2-2k-trim.tokenizer.json", tokenizer(None, True, trim_offsets=True))
roberta = tokenizer(None, False)
roberta["added_tokens"] = [added("<s>", 2256), added("</s>", 2257)]
roberta["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", 2257],
                             "cls": ["<s>", 2256], "trim_offsets": True,
                             "add_prefix_space": False}
write("gpt2-2k-roberta.tokenizer.json", roberta)


def split(pattern, behavior, invert=False, regex=True):
    return {"type": "Split", "pattern": {"Regex" if regex else "String": pattern},
            "behavior": behavior, "invert": invert}


def byte_level(use_regex):
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
            "use_regex": use_regex}


def with_pre_tokenizer(name, stages):
    tok = tokenizer(None, False)
    tok["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": stages}
    write(name, tok)


with_pre_tokenizer("gpt2-2k-deepseek.tokenizer.json", [
    split(r"\p{N}{1,3}", "Isolated"),
    split("[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+", "Isolated"),
    split(r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
          r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+", "Isolated"),
    byte_level(False)])
with_pre_tokenizer("gpt2-2k-tekken.tokenizer.json", [
    split(r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
          r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
          r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+", "Isolated"),
    byte_level(False)])
with_pre_tokenizer("gpt2-2k-digits.tokenizer.json", [
    {"type": "Digits", "individual_digits": True}, byte_level(True)])
with_pre_tokenizer("gpt2-2k-behaviors.tokenizer.json", [
    split(" ", "MergedWithNext", regex=False),
    split("-", "MergedWithPrevious", regex=False),
    {"type": "Digits", "individual_digits": False},
    split("x", "Removed", regex=False),
    split(r"[.,;:!?]", "Contiguous"),
    byte_level(False)])
hf = tokenizer(None, False)
hf["pre_tokenizer"] = dict(hf["pre_tokenizer"], trim_offsets=True)
hf["post_processor"] = dict(hf["post_processor"], add_prefix_space=True, trim_offsets=True)
hf["added_tokens"] = [added("<|endoftext|>", 2256, normalized=True),
                      added("<|end", 2257, special=False),
                      added("abc", 2258, normalized=True, special=False, single_word=True),
                      added("<pad>", 2259, strip=True)]
write("gpt2-2k-hf-added.tokenizer.json", hf)
