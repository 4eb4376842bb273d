#!/usr/bin/env python3
"""Write a small tokenizer.json laid out as CLIP's (openai/clip-vit-*): normalizer
Sequence[NFC, Replace regex \\s+ -> " ", Lowercase]; pre-tokenizer Sequence[Split(CLIP's regex,
Removed, invert), ByteLevel without regex]; byte-level BPE with end_of_word_suffix "</w>";
RobertaProcessing with <|startoftext|> and <|endoftext|>; BPEDecoder.  Trained by Hugging Face
`tokenizers` (BpeTrainer, 1500 tokens) on the King James Bible and the UDHR in 532 languages from
the shared data set (public domain; MIT); every byte's bare and suffixed symbols are appended to
the vocabulary where training made none.

Usage: pip install tokenizers==0.23.3; python3 tests/data/bpe/make_clip_tokenizer.py [--data DIR]
"""

import argparse
import json
import os

from tokenizers import (Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers,
                        processors, trainers)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
CLIP_REGEX = (r"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]"
              r"|[^\s\p{L}\p{N}]+")
SUFFIX = "</w>"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"))
    data = ap.parse_args().data
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
    tok.train([os.path.join(data, "corpora", f)
               for f in ("en_kjv_bible.txt", "multi_udhr_all_languages.txt")], trainer)
    start, end = tok.token_to_id("<|startoftext|>"), tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.RobertaProcessing(
        ("<|endoftext|>", end), ("<|startoftext|>", start), trim_offsets=False,
        add_prefix_space=False)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for c in sorted(alphabet):
        for symbol in (c, c + SUFFIX):
            vocab.setdefault(symbol, len(vocab))
    with open(os.path.join(HERE, "kjv-clip-layout.tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False, indent=1)
        f.write("\n")


main()
