#!/usr/bin/env python3
"""Generate the BPE training golden files (Hugging Face `tokenizers` BpeTrainer) for simdtok's
`train-bpe` conformance tests.

Usage (from the repository root, or anywhere):

    pip install tokenizers==0.23.2 tiktoken
    python3 tests/golden/gen_train_bpe.py [--data DIR] [--out DIR] [--check] [--cases NAME ...]

Needs only the `tokenizers` and `tiktoken` Python packages and local files: nothing is downloaded.
`--data` defaults to `<repo>/../shared/data`; cases whose corpus is under `<data>/corpora` are
skipped (with a message) when it is absent.  `--check` writes nothing and exits 1 if any file
would change; `--cases` picks some of the cases (default: all).

For every case of CASES it trains, for a byte-level pre-tokenizer with regex PATTERN,

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=N, min_frequency=F, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  max_token_length=L, show_progress=False)
    tok.train_from_iterator(TRAINING_TEXTS, trainer)

(for "whitespace": pre_tokenizers.Whitespace(), no decoder, no initial_alphabet), saves it with
tok.to_str(), reloads it with Tokenizer.from_str, and records the vocabulary, the merges, the ids
of held-out texts (tokenizers, and tiktoken with the vocabulary as a rank file, rank = id) and two
diagnostics.  One gzip-compressed JSON object per case: `<out>/<case>.json.gz`.  The format is
documented in tests/golden/README.md, section "BPE training"; keep the two in sync.  Output is
deterministic (gzip mtime 0, no file name; --check compares the decompressed JSON).
"""

import argparse
import collections
import gzip
import hashlib
import io
import json
import os
import platform
import sys
import time

# Never download or cache anything (tiktoken is only given ranks built here).
os.environ["TIKTOKEN_CACHE_DIR"] = ""

FORMAT = 1
GENERATOR = "tests/golden/gen_train_bpe.py"
EXPECTED_TOKENIZERS = "0.23.2"
EXPECTED_TIKTOKEN = "0.14.0"

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# The patterns, copied from src/pretokenize/mod.rs (keep in sync).
# tokenizer.json forms (the Split regex of the trained tokenizer):
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
CL100K = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
O200K = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
         r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
         r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# tiktoken's own pat_str for the same splits (r50k_base / cl100k_base / o200k_base):
GPT2_TIKTOKEN = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"
CL100K_TIKTOKEN = (r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"
                   r"| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s")

# pre-tokenizer -> (Split regex for tokenizers, pat_str for tiktoken, tiktoken encoding it is)
PRE_TOKENIZERS = {
    "gpt2": (GPT2, GPT2_TIKTOKEN, "r50k_base"),
    "cl100k": (CL100K, CL100K_TIKTOKEN, "cl100k_base"),
    "o200k": (O200K, O200K, "o200k_base"),
    "whitespace": (None, None, None),
}

EOT = ["<|endoftext|>"]


def _case(name, corpus, pre, vocab_size, min_frequency=0, specials=(), max_token_length=None,
          expect_min_frequency_stop=False):
    where, file = corpus.split(":", 1)
    location = ("repo:tests/data/corpus/" if where == "repo" else "shared:corpora/") + file
    return {"name": name, "location": location, "pre_tokenizer": pre, "vocab_size": vocab_size,
            "min_frequency": min_frequency, "special_tokens": list(specials),
            "max_token_length": max_token_length,
            "expect_min_frequency_stop": expect_min_frequency_stop}


CASES = [
    # In the repository (tests/data/corpus/): always run.
    _case("kjv-cl100k-2000", "repo:en_kjv_bible.head.txt", "cl100k", 2000, specials=EOT),
    _case("kjv-gpt2-1000-min2", "repo:en_kjv_bible.head.txt", "gpt2", 1000, min_frequency=2),
    _case("code-o200k-3000", "repo:python311_stdlib.head.py.txt", "o200k", 3000,
          specials=["<s>", "</s>", "<pad>"]),
    _case("udhr-cl100k-4000-min3", "repo:udhr_scripts.txt", "cl100k", 4000, min_frequency=3),
    _case("udhr-whitespace-3000", "repo:udhr_scripts.txt", "whitespace", 3000,
          specials=["[UNK]", "[PAD]"]),
    _case("kjv-whitespace-1500", "repo:en_kjv_bible.head.txt", "whitespace", 1500),
    _case("kjv-cl100k-1000-maxlen4", "repo:en_kjv_bible.head.txt", "cl100k", 1000,
          max_token_length=4),
    _case("code-cl100k-600-min50", "repo:python311_stdlib.head.py.txt", "cl100k", 600,
          min_frequency=50, expect_min_frequency_stop=True),
    # In ../shared/data/corpora/: skipped when absent.
    _case("jargon-cl100k-8000", "shared:en_jargon_file_4.4.7.txt", "cl100k", 8000, specials=EOT),
    _case("ja-cl100k-8000", "shared:ja_debian_reference.txt", "cl100k", 8000),
    _case("code-gpt2-8000", "shared:code_python311_stdlib_sample.py.txt", "gpt2", 8000,
          min_frequency=2),
    _case("udhr-o200k-16000", "shared:multi_udhr_all_languages.txt", "o200k", 16000),
    _case("udhr-whitespace-8000-min2", "shared:multi_udhr_all_languages.txt", "whitespace", 8000,
          min_frequency=2),
    _case("kjv-cl100k-32000", "shared:en_kjv_bible.txt", "cl100k", 32000, specials=EOT),
]

# GPL corpora (tests/data/LICENSES.md: only token counts and digests are committed, nothing from
# which the text could be rebuilt): the held-out ids are stored as digests and counts, since the
# ids together with the vocabulary would spell out the held-out lines.
HASH_CORPORA = {"ja_debian_reference.txt", "zh-cn_debian_reference.txt",
                "zh-tw_debian_reference.txt"}

HELDOUT_EVERY = 10      # line i is held out when i % 10 == 9
HELDOUT_MAX = 300       # the first 300 non-empty held-out lines


# --------------------------------------------------------------------------------------------
def sha256_hex(b):
    return hashlib.sha256(b).hexdigest()


def ids_digest(ids):
    """As in the other goldens: sha256 of the decimal ids joined by single spaces."""
    return sha256_hex(" ".join(str(i) for i in ids).encode("utf-8"))


def split_texts(raw):
    """(training texts, held-out texts) of a corpus file's bytes."""
    lines = raw.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    train, held = [], []
    for i, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]
        if i % HELDOUT_EVERY != HELDOUT_EVERY - 1:
            train.append(line)
        elif line and len(held) < HELDOUT_MAX:
            held.append(line)
    return train, held


def bytes_to_unicode():
    """GPT-2's byte -> character map (the ByteLevel alphabet)."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_OF_CHAR = {c: b for b, c in bytes_to_unicode().items()}


def token_bytes(token):
    return bytes(BYTE_OF_CHAR[c] for c in token)


def tiktoken_pat_str(encoding):
    """pat_str of a tiktoken encoding, from the installed tiktoken_ext/openai_public.py, without
    loading (downloading) its ranks."""
    import tiktoken_ext.openai_public as op
    saved = (op.load_tiktoken_bpe, op.data_gym_to_mergeable_bpe_ranks)
    op.load_tiktoken_bpe = lambda *a, **k: {}
    op.data_gym_to_mergeable_bpe_ranks = lambda *a, **k: {}
    try:
        return op.ENCODING_CONSTRUCTORS[encoding]()["pat_str"]
    finally:
        op.load_tiktoken_bpe, op.data_gym_to_mergeable_bpe_ranks = saved


def train(case, texts):
    """The trained tokenizer (reloaded from its saved JSON), that JSON, and the seconds."""
    from tokenizers import Tokenizer, Regex, models, pre_tokenizers, decoders, trainers
    pattern = PRE_TOKENIZERS[case["pre_tokenizer"]][0]
    tok = Tokenizer(models.BPE())
    kwargs = {}
    if pattern is None:
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.decoder = decoders.ByteLevel()
        kwargs["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=case["vocab_size"],
                                  min_frequency=case["min_frequency"],
                                  special_tokens=case["special_tokens"],
                                  max_token_length=case["max_token_length"],
                                  show_progress=False, **kwargs)
    t0 = time.perf_counter()
    tok.train_from_iterator(texts, trainer)
    seconds = time.perf_counter() - t0
    saved = tok.to_str()
    return Tokenizer.from_str(saved), saved, seconds


def diagnostics(vocab, merges, specials):
    """duplicate_tokens, vocab_minus_merges_gap, alphabet size, and the duplicated tokens."""
    products = collections.defaultdict(list)
    for rank, (left, right) in enumerate(merges):
        products[left + right].append(rank)
    dups = {t: ranks for t, ranks in products.items() if len(ranks) > 1}
    duplicate_tokens = sum(len(r) for r in dups.values())
    special_set = set(specials)
    alphabet = sum(1 for t in vocab if len(t) == 1 and t not in special_set)
    gap = len(vocab) - len(specials) - alphabet - len(merges)
    return duplicate_tokens, gap, alphabet, dups


def make_case(case, data):
    """The JSON object of a case, or None (with the reason) when its corpus is absent."""
    import tiktoken
    import tokenizers
    location = case["location"]
    where, rel = location.split(":", 1)
    path = os.path.join(REPO if where == "repo" else data, rel)
    if not os.path.isfile(path):
        return None, "%s not found (pass --data)" % path
    name = case["name"]
    pre = case["pre_tokenizer"]
    pattern, tk_pattern, tk_encoding = PRE_TOKENIZERS[pre]
    specials = case["special_tokens"]
    with open(path, "rb") as f:
        raw = f.read()
    texts, held = split_texts(raw)
    for s in specials:
        for i, t in enumerate(texts):
            if s in t:
                sys.exit("error: %s: special token %r occurs in training text %d: %r"
                         % (name, s, i, t[:200]))
    hash_policy = os.path.basename(rel) in HASH_CORPORA

    tok, saved, seconds = train(case, texts)
    model = json.loads(saved)["model"]
    by_id = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    ids = [i for _, i in by_id]
    if ids != list(range(len(ids))):
        missing = sorted(set(range(max(ids) + 1)) - set(ids))
        sys.exit("error: %s: vocabulary ids are not 0..%d (%d tokens, max id %d, missing %s)"
                 % (name, len(ids) - 1, len(ids), max(ids), missing[:20]))
    vocab = [t for t, _ in by_id]
    if vocab[:len(specials)] != specials:
        sys.exit("error: %s: the special tokens are not ids 0..%d: %r"
                 % (name, len(specials) - 1, vocab[:len(specials)]))
    merges = [m if isinstance(m, list) else m.split(" ") for m in model["merges"]]
    if any(len(m) != 2 for m in merges):
        sys.exit("error: %s: a merge is not a pair" % name)
    in_vocab = set(vocab)
    for left, right in merges:
        if left + right not in in_vocab or left not in in_vocab or right not in in_vocab:
            sys.exit("error: %s: merge %r, %r: a part or the product is not in the vocabulary"
                     % (name, left, right))
    duplicate_tokens, gap, alphabet, dups = diagnostics(vocab, merges, specials)

    tk_ids = None
    if pattern is not None:
        if tiktoken_pat_str(tk_encoding) != tk_pattern:
            print("warning: %s: tiktoken's %s pat_str is not the one in this script"
                  % (name, tk_encoding), file=sys.stderr)
        ranks = {}
        for i, t in enumerate(vocab):
            if i >= len(specials):
                ranks[token_bytes(t)] = i
        if len(ranks) != len(vocab) - len(specials):
            sys.exit("error: %s: two tokens have the same bytes" % name)
        enc = tiktoken.Encoding(name, pat_str=tk_pattern, mergeable_ranks=ranks,
                                special_tokens={})
        tk_ids = [enc.encode_ordinary(t) for t in held]
        for t, row in zip(held, tk_ids):
            if b"".join(enc.decode_single_token_bytes(i) for i in row) != t.encode("utf-8"):
                sys.exit("error: %s: tiktoken's tokens do not spell %r" % (name, t[:80]))
    hf_ids = [tok.encode(t, add_special_tokens=False).ids for t in held]

    obj = {
        "format": FORMAT,
        "generator": GENERATOR,
        "tokenizers": tokenizers.__version__,
        "tiktoken": tiktoken.__version__ if pattern is not None else None,
        "python": platform.python_version(),
        "case": name,
        "corpus": {"location": location, "sha256": sha256_hex(raw),
                   "training_texts": len(texts), "heldout_texts": len(held)},
        "settings": {"pre_tokenizer": pre, "vocab_size": case["vocab_size"],
                     "min_frequency": case["min_frequency"], "special_tokens": specials,
                     "max_token_length": case["max_token_length"]},
        "pattern": pattern,
        "vocab_size_reached": len(vocab),
        "n_merges": len(merges),
        "alphabet_size": alphabet,
        "duplicate_tokens": duplicate_tokens,
        "vocab_minus_merges_gap": gap,
        "heldout_policy": "hash" if hash_policy else "full",
    }
    if pattern is not None:
        obj["tiktoken_pattern"] = tk_pattern
    obj["vocab"] = vocab
    obj["merges"] = merges
    for key, rows in (("tokenizers", hf_ids), ("tiktoken", tk_ids)):
        if rows is None:
            continue
        if hash_policy:
            obj[key + "_n_ids"] = [len(r) for r in rows]
            obj[key + "_ids_sha256"] = [ids_digest(r) for r in rows]
        else:
            obj[key + "_ids"] = rows

    info = {"seconds": seconds, "dups": dups, "hf_tokens": sum(map(len, hf_ids)),
            "tk_tokens": sum(map(len, tk_ids)) if tk_ids is not None else None,
            "tk_differ": (sum(1 for a, b in zip(hf_ids, tk_ids) if a != b)
                          if tk_ids is not None else None)}
    return (obj, info), None


def json_gz(obj):
    """Deterministic gzip of one JSON object (one line, ending in \\n): no file name, mtime 0."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"),
                    help="shared test data directory (default: <repo>/../shared/data)")
    ap.add_argument("--out", default=os.path.join(HERE, "train_bpe"),
                    help="output directory (default: tests/golden/train_bpe)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if any golden file would change")
    ap.add_argument("--cases", nargs="+", metavar="NAME",
                    help="cases to generate (default: all): "
                         + ", ".join(c["name"] for c in CASES))
    args = ap.parse_args()

    import tiktoken
    import tokenizers
    for package, have, want in (("tokenizers", tokenizers.__version__, EXPECTED_TOKENIZERS),
                                ("tiktoken", tiktoken.__version__, EXPECTED_TIKTOKEN)):
        if have != want:
            print("warning: %s %s installed; the committed goldens were made with %s "
                  "(pip install %s==%s)" % (package, have, want, package, want), file=sys.stderr)

    names = [c["name"] for c in CASES]
    assert len(set(names)) == len(names)
    if args.cases:
        unknown = sorted(set(args.cases) - set(names))
        if unknown:
            sys.exit("error: unknown case(s) %s" % ", ".join(unknown))
    data = os.path.abspath(args.data)
    if not args.check:
        os.makedirs(args.out, exist_ok=True)
    differ, skipped = [], []
    t_all = time.time()
    for case in CASES:
        name = case["name"]
        if args.cases and name not in args.cases:
            continue
        out_path = os.path.join(args.out, name + ".json.gz")
        result, why = make_case(case, data)
        if result is None:
            print("%s: skipped: %s" % (name, why), flush=True)
            skipped.append(name)
            continue
        obj, info = result
        blob = json_gz(obj)
        status = ""
        if args.check:
            try:
                with gzip.open(out_path, "rb") as f:
                    same = f.read() == gzip.decompress(blob)
            except OSError:
                same = False
            status = " (identical)" if same else " (DIFFERS)"
            if not same:
                differ.append(out_path)
        else:
            with open(out_path, "wb") as f:
                f.write(blob)
        reached, asked = obj["vocab_size_reached"], case["vocab_size"]
        print("%s: trained in %.2f s; %d texts, %d held out; vocab %d of %d%s, %d merges, "
              "alphabet %d; duplicate_tokens %d, vocab_minus_merges_gap %d; held-out tokens %d "
              "(tokenizers)%s; %d bytes%s" % (
                  os.path.relpath(out_path), info["seconds"],
                  obj["corpus"]["training_texts"], obj["corpus"]["heldout_texts"],
                  reached, asked, " (stopped short)" if reached < asked else "",
                  obj["n_merges"], obj["alphabet_size"], obj["duplicate_tokens"],
                  obj["vocab_minus_merges_gap"], info["hf_tokens"],
                  "" if info["tk_tokens"] is None else
                  ", %d (tiktoken, %d texts differ)" % (info["tk_tokens"], info["tk_differ"]),
                  len(blob), status), flush=True)
        for token, ranks in list(info["dups"].items())[:10]:
            print("    %r made by merges %s" % (token, ", ".join(
                "%d %r+%r" % (r, *obj["merges"][r]) for r in ranks)))
        if case["expect_min_frequency_stop"]:
            if reached >= asked:
                sys.exit("error: %s was meant to stop on min_frequency before %d tokens"
                         % (name, asked))
            print("    stopped on min_frequency %d at %d tokens (asked for %d)"
                  % (case["min_frequency"], reached, asked))
        elif reached < asked:
            print("    note: fewer tokens than asked for (min_frequency %d or no pairs left)"
                  % case["min_frequency"])
    print("total %.1f s%s" % (time.time() - t_all,
                              "; skipped (corpus absent): " + ", ".join(skipped) if skipped else ""))
    if differ:
        sys.exit("error: %d golden file(s) differ from a fresh run" % len(differ))


if __name__ == "__main__":
    main()
