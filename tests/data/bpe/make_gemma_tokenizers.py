#!/usr/bin/env python3
"""Write the small SentencePiece-style BPE tokenizer.json files in Gemma 3's layout that simdtok's
conformance tests read (tests/golden/gen_bpe.py, configurations gemma-*).

A SentencePiece BPE model (1000 pieces, byte fallback) is trained with `sentencepiece` on the King
James Bible of the shared data set (corpora/en_kjv_bible.txt, public domain) with Gemma's trainer
settings (identity normalization, no dummy prefix, extra whitespace kept, whitespace-only pieces,
split digits, <pad> <eos> <bos> <unk> as ids 0-3, a control <mask>, user-defined <start_of_turn>,
<end_of_turn> and <unused0>).  It is then written as a tokenizer.json the way transformers' GemmaConverter
lays Gemma's files out -- this script builds it with `tokenizers` itself and does not need
`transformers`:

    vocabulary   the pieces in id order, <0x09> renamed "\\t" (as GemmaConverter does)
    merges       transformers' generate_merges: every split of a piece into two pieces of the
                 model, sorted by the piece's score (descending), then the lengths of the two
                 halves (descending), the splits of one piece by the ids of their halves
    model        BPE, unk_token <unk>, fuse_unk, byte_fallback
    normalizer   Replace " " -> "\u2581"
    pre_tokenizer Split(String " ", MergedWithPrevious)    (here: the variants below)
    decoder      Sequence[Replace "\u2581" -> " ", ByteFallback, Fuse]
    post_processor TemplateProcessing "<bos> $A", "<bos> $A <bos> $B"
    added tokens control pieces and <unk> special; user-defined pieces not special except
                 <start_of_turn>/<end_of_turn> (GemmaConverter.special_tokens); normalized: false

Files (only the pre-tokenizer, and for one the model's ignore_merges, differ):

    gemma-1k.tokenizer.json            Gemma 3's own pre-tokenizer: Split " " MergedWithPrevious
                                       (it finds no space after the normalizer)
    gemma-1k-prev.tokenizer.json       Split "\u2581" MergedWithPrevious
    gemma-1k-next.tokenizer.json       Split "\u2581" MergedWithNext
    gemma-1k-removed.tokenizer.json    Split "\u2581" Removed
    gemma-1k-contiguous.tokenizer.json Split Regex [0-9.,;:!?()'"-] Contiguous, ignore_merges
    gemma-1k-invert.tokenizer.json     Split Regex \u2581?[A-Za-z]+ MergedWithPrevious, invert
    gemma-1k-seq.tokenizer.json        Sequence[Split Regex (?=\u2581) Isolated (empty matches),
                                       Split Regex [0-9] MergedWithNext, Split String "," Removed,
                                       Split Regex [a-z]+ Isolated invert]

SentencePiece's BPE trainer is deterministic: a rerun with the same sentencepiece version writes
the same files.  After changing them, regenerate the goldens (tests/golden/gen_bpe.py --models
gemma-1k,...).  The committed files are the ones the committed goldens were made from.

Usage: pip install sentencepiece==0.2.3 tokenizers==0.23.2
       python3 tests/data/bpe/make_gemma_tokenizers.py [--data DIR]
"""

import argparse
import json
import os
import tempfile

import sentencepiece as spm
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SPACE = "\u2581"
SPECIAL_USER = {"<start_of_turn>", "<end_of_turn>"}
USER = ["<start_of_turn>", "<end_of_turn>", "<unused0>"]


def train(data, prefix):
    spm.SentencePieceTrainer.train(
        input=os.path.join(data, "corpora", "en_kjv_bible.txt"),
        model_prefix=prefix, model_type="bpe", vocab_size=1000, character_coverage=1.0,
        byte_fallback=True, split_digits=True, normalization_rule_name="identity",
        add_dummy_prefix=False, remove_extra_whitespaces=False,
        allow_whitespace_only_pieces=True, split_by_whitespace=True,
        pad_id=0, eos_id=1, bos_id=2, unk_id=3, bos_piece="<bos>", eos_piece="<eos>",
        control_symbols=["<mask>"], user_defined_symbols=USER,
        num_threads=1, minloglevel=2)
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def generate_merges(vocab, scores):
    """transformers' convert_slow_tokenizer.generate_merges with vocab_scores given."""
    merges = []
    for piece, score in scores:
        local = [(piece[:i], piece[i:], score) for i in range(1, len(piece))
                 if piece[:i] in vocab and piece[i:] in vocab]
        local.sort(key=lambda x: (vocab[x[0]], vocab[x[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(a, b) for a, b, _ in merges]


def gemma_layout(sp):
    n = sp.get_piece_size()
    pieces = [sp.id_to_piece(i) for i in range(n)]
    vocab = {p: i for i, p in enumerate(pieces)}  # the model's pieces, as the merges see them
    scores = [("\t" if p == "<0x09>" else p, sp.get_score(i)) for i, p in enumerate(pieces)]
    merges = generate_merges(vocab, scores)
    bpe_vocab = {p: i for i, (p, _) in enumerate(scores)}
    tok = Tokenizer(models.BPE(bpe_vocab, merges, unk_token="<unk>", fuse_unk=True,
                               byte_fallback=True, dropout=None))
    tok.normalizer = normalizers.Replace(" ", SPACE)
    tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
    tok.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(),
                                     decoders.Fuse()])
    # SpmConverter: control pieces special, user-defined ones not (but GemmaConverter's
    # special_tokens), in id order.
    added = [AddedToken(p, normalized=False, special=sp.is_control(i) or p in SPECIAL_USER)
             for i, p in enumerate(pieces) if sp.is_control(i) or p in USER]
    tok.add_tokens(added)
    tok.add_special_tokens([AddedToken("<unk>", normalized=False, special=True)])
    bos = sp.bos_id()
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos>:1 $B:1", special_tokens=[("<bos>", bos)])
    return json.loads(tok.to_str())


def save(spec, name):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        f.write(json.dumps(spec, ensure_ascii=False, separators=(",", ":")))
        f.write("\n")


def split(pattern, behavior, invert=False):
    return json.loads(pre_tokenizers.Split(pattern, behavior, invert=invert).__getstate__())


def variants():
    regex = Regex
    return [
        ("gemma-1k", split(" ", "merged_with_previous"), False),
        ("gemma-1k-prev", split(SPACE, "merged_with_previous"), False),
        ("gemma-1k-next", split(SPACE, "merged_with_next"), False),
        ("gemma-1k-removed", split(SPACE, "removed"), False),
        ("gemma-1k-contiguous", split(regex("[0-9.,;:!?()'\"-]"), "contiguous"), True),
        ("gemma-1k-invert", split(regex(SPACE + "?[A-Za-z]+"), "merged_with_previous", True),
         False),
        ("gemma-1k-seq", {"type": "Sequence", "pretokenizers": [
            split(regex("(?=" + SPACE + ")"), "isolated"),
            split(regex("[0-9]"), "merged_with_next"),
            split(",", "removed"),
            split(regex("[a-z]+"), "isolated", True)]}, False),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"))
    data = ap.parse_args().data
    with tempfile.TemporaryDirectory() as tmp:
        spec = gemma_layout(train(data, os.path.join(tmp, "gemma-1k")))
    for name, pre_tokenizer, ignore_merges in variants():
        model = dict(spec["model"], ignore_merges=ignore_merges)
        edited = dict(spec, pre_tokenizer=pre_tokenizer, model=model)
        # Every file must load in the reference.
        Tokenizer.from_str(json.dumps(edited))
        save(edited, name + ".tokenizer.json")


main()
