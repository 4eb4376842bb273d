#!/usr/bin/env python3
"""Generate the WordPiece (BERT) golden files for simdtok's conformance tests.

Usage (from the repository root, or anywhere):

    pip install tokenizers==0.23.3
    python3 tests/golden/gen_wordpiece.py [--data ../shared/data] [--out tests/golden/wordpiece]

Needs only the `tokenizers` Python package (Hugging Face).  `--data` defaults to
`<repo>/../shared/data`.  The corpus sampling, the SentencePiece edge cases and generated inputs,
the digests and the rules for what is stored in full are imported from gen_sentencepiece.py (same
directory), so both sets of golden files read the same inputs the same way.

For every configuration in CONFIGS and every input case it records the reference library's output:

    enc     = tok.encode(text, add_special_tokens=False)
    ids     = enc.ids
    pieces  = enc.tokens
    spans   = enc.offsets converted to byte offsets into the UTF-8 of `text`: the Python binding
              returns offsets in characters (code points), so begin/end become the UTF-8 length of
              text[:begin] / text[:end] (through a cumulative byte-offset array).
    decoded = tok.decode(ids)                       # skip_special_tokens=True, the default
    special_ids = tok.encode(text, add_special_tokens=True).ids   (edge cases with full outputs)

and writes one gzip-compressed JSON-lines file per configuration: `<out>/<name>.jsonl.gz`.  The
format is documented in tests/golden/README.md (sections "File format" and "WordPiece"); keep them
in sync.  Output is byte-for-byte deterministic; --check compares it with the committed files and
writes nothing.  The driver (arguments, case loop, writing and --check) is
gen_sentencepiece.run_generator.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ next to the goldens
import gen_sentencepiece as spg  # noqa: E402  (shared inputs, digests, storage rules, driver)

FORMAT = 1
EXPECTED_TOKENIZERS = "0.23.3"

WP_DIR = "tests/data/wordpiece/"

# (name, config).  Every model file is in the repository (Apache-2.0), under tests/data/wordpiece.
#   BertWordPieceTokenizer(vocab, lowercase=...)  — tokenizers.implementations; strip_accents is
#       left at None, so it follows `lowercase` (lowercase=False: no lowercasing, no accent
#       stripping, i.e. the "cased" configuration).
#   Tokenizer.from_file(file) then no_padding() and no_truncation() — the file asks for
#       truncation at 128 and padding to 128; simdtok does neither.
CONFIGS = [
    ("bert-base-uncased",
     {"loader": "BertWordPieceTokenizer", "vocab": "repo:" + WP_DIR + "bert-base-uncased.vocab.txt",
      "lowercase": True}),
    ("bert-base-chinese",
     {"loader": "BertWordPieceTokenizer", "vocab": "repo:" + WP_DIR + "bert-base-chinese.vocab.txt",
      "lowercase": True}),
    ("bert-base-chinese-cased",
     {"loader": "BertWordPieceTokenizer", "vocab": "repo:" + WP_DIR + "bert-base-chinese.vocab.txt",
      "lowercase": False}),
    ("all-MiniLM-L6-v2",
     {"loader": "Tokenizer.from_file",
      "file": "repo:" + WP_DIR + "all-MiniLM-L6-v2.bert-uncased.tokenizer.json",
      "no_padding": True, "no_truncation": True}),
]

# --------------------------------------------------------------------------------------------
# Edge cases.  All of gen_sentencepiece.EDGE_TEXT (same names), then these.  Only Unicode scalar
# values.
# --------------------------------------------------------------------------------------------
_CONTROLS_IN_WORDS = " ".join("x%sy" % chr(c) for c in list(range(0, 32)) + [0x7F])
_C1_IN_WORDS = " ".join("x%sy" % chr(c) for c in range(0x80, 0xA0))

WP_EDGE_TEXT = [
    # punctuation (BERT: every ASCII non-alphanumeric printable is punctuation, plus Unicode P*)
    ("wp_dot_between_letters", "a.b"),
    ("wp_dont", "don't"),
    ("wp_usa", "U.S.A."),
    ("wp_money", "$5,000.00"),
    ("wp_keyboard_punct", "~`!@#$%^&*()_+-=[]{}|;':\",./<>?"),
    ("wp_unicode_quotes", "\u00a1\u00bf\u00ab\u00bb\u201e\u201c\u201d\u2018\u2019"),
    ("wp_dashes_ellipsis", "\u2014\u2013\u2026"),
    ("wp_dashes_ellipsis_in_words", "a\u2014b\u2013c\u2026d"),
    ("wp_mention_hashtag", "@user #tag"),
    ("wp_only_punct", "...!!!???"),
    ("wp_unicode_po", "a\u2030b\u2020c\u2021d\u2022e\u203bf\u203dg\u2042h\u00a7i\u00b6j"),
    ("wp_symbols_not_punct", "a\u00a9b\u00aec\u2122d\u00b0e\u00b1f\u00d7g\u00f7h\u20aci\u00a3j\u00a5k"),
    ("wp_math_symbols", "\u2211\u222b\u221a\u221e\u2248\u2260\u2264\u2265 x\u2208y"),
    ("wp_fullwidth_punct_chinese", "\u4f60\u597d\uff0c\u4e16\u754c\uff01\uff08\u6d4b\u8bd5\uff09"),
    ("wp_cjk_brackets", "\u300c\u3053\u3093\u306b\u3061\u306f\u300d\u300e\u4e16\u754c\u300f\u3010\u6ce8\u3011\u3008x\u3009\u300ay\u300b\u3001\u3002\u30fb"),
    ("wp_apostrophe_contractions", "I'm you're we've he'll she'd it's can't"),
    ("wp_decode_cleanup", "a . b ? c ! d , e ' f n't 'm do not 's 've 're"),
    ("wp_decode_cleanup_glued", "Yes.No?Ok!A,B"),
    # control characters (removed by clean_text, except \t \n \r which are whitespace)
    ("wp_ctrl_soh_in_word", "ab\x01cd"),
    ("wp_ctrl_nul", "\x00"),
    ("wp_ctrl_nul_in_word", "ab\x00cd"),
    ("wp_ctrl_del", "\x7f"),
    ("wp_ctrl_del_in_word", "ab\x7fcd"),
    ("wp_ctrl_vt", "\x0b"),
    ("wp_ctrl_vt_in_word", "ab\x0bcd"),
    ("wp_ctrl_ff", "\x0c"),
    ("wp_ctrl_ff_in_word", "ab\x0ccd"),
    ("wp_ctrl_fs_gs_rs_us", "\x1c\x1d\x1e\x1f"),
    ("wp_ctrl_fs_gs_rs_us_in_words", "a\x1cb\x1dc\x1ed\x1fe"),
    ("wp_ctrl_every_c0_and_del_in_words", _CONTROLS_IN_WORDS),
    ("wp_ctrl_every_c1_in_words", _C1_IN_WORDS),
    ("wp_ctrl_nel", "\u0085"),
    ("wp_ctrl_nel_in_word", "ab\u0085cd"),
    ("wp_ctrl_only_controls_between_words", "hello \x01\x02\x03 world"),
    ("wp_replacement_alone_between_words", "a \ufffd b"),
    ("wp_format_chars_in_words", "ab\u200bcd ab\u200ccd ab\u200dcd ab\u2060cd ab\ufeffcd ab\u00adcd"),
    ("wp_format_chars_alone", "\u200b \u200d \ufeff \u00ad \u2060"),
    ("wp_bidi_marks", "a\u200eb\u200fc\u202ad\u202ce\u2066f\u2069g"),
    ("wp_private_use_alone", "\ue000"),
    ("wp_private_use_in_word", "ab\ue000cd \U000f0000"),
    ("wp_unassigned_e0080", "\U000e0080"),
    ("wp_unassigned_e0080_in_word", "ab\U000e0080cd"),
    ("wp_unassigned_bmp", "\u0378 a\u0378b \u2fe0"),
    ("wp_tag_chars", "a\U000e0041\U000e007fb"),
    ("wp_emoji_unicode15", "\U0001fae8 \U0001fabf"),
    ("wp_emoji_unicode15_in_word", "hello\U0001fabfworld \U0001fae8x"),
    ("wp_emoji_shaking_face_escape", "\U0001fae8"),
    ("wp_noncharacters_in_words", "a\ufdd0b a\uffffb a\U0010ffffb"),
    ("wp_surrogate_free_astral_boundary", "\U00010000 \U0010fffd"),
    # which Unicode version the reference's character tables follow (category of characters
    # assigned or reclassified in later versions: Cf removed, P* split, Mn stripped, NFD, case)
    ("wp_unicode_version_cf", "a\u061cb a\u180eb a\U0001bca0b a\u08e2b a\u0890b a\U000110cdb a\U00013430b"),
    ("wp_unicode_version_punct", "a\u2e3bb a\ua8fcb a\u2e45b a\u2e4fb a\u2e52b a\u2e5db a\U0001e95eb"),
    ("wp_unicode_version_mn", "a\u1ab0b a\u1df9b a\u1abfb a\u0898b a\U0001e4ecb"),
    ("wp_unicode_version_nfd", "\U000114bb \U0001109a \U00011938 \u0f73 \u0344"),
    ("wp_unicode_version_lower", "\u10a0 \u1c90 \u2c2f \ua7c0 \ua7d0 \u1c89 \U00010570 \U0001e900"),
    # whitespace, every kind between words
    ("wp_ws_tab", "a\tb"),
    ("wp_ws_newline", "a\nb"),
    ("wp_ws_cr", "a\rb"),
    ("wp_ws_crlf", "a\r\nb"),
    ("wp_ws_nbsp", "a\u00a0b"),
    ("wp_ws_ogham", "a\u1680b"),
    ("wp_ws_u2000_u200a", "a\u2000b\u2001c\u2002d\u2003e\u2004f\u2005g\u2006h\u2007i\u2008j\u2009k\u200al"),
    ("wp_ws_line_separator", "a\u2028b"),
    ("wp_ws_paragraph_separator", "a\u2029b"),
    ("wp_ws_narrow_nbsp", "a\u202fb"),
    ("wp_ws_medium_math_space", "a\u205fb"),
    ("wp_ws_ideographic", "a\u3000b"),
    ("wp_ws_mongolian_vowel_separator", "a\u180eb"),
    ("wp_ws_all_kinds_only", "\t\n\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"),
    ("wp_ws_all_kinds_around_word", "\u3000\u2029 word\u00a0\u2028\t"),
    # CJK: each range of is_chinese_char (first, a middle and the last code point), and nearby
    ("wp_cjk_unified", "\u4e00\u4e2d\u6587\u9fa5\u9fff"),
    ("wp_cjk_ext_a", "\u3400\u3401\u4db5\u4dbf"),
    ("wp_cjk_ext_b", "\U00020000\U00020001\U0002a6d6\U0002a6df"),
    ("wp_cjk_ext_c", "\U0002a700\U0002b734\U0002b739\U0002b73f"),
    ("wp_cjk_ext_d", "\U0002b740\U0002b81d\U0002b81f"),
    ("wp_cjk_ext_e_start", "\U0002b820\U0002b821\U0002b8ff\U0002b91f"),
    ("wp_cjk_ext_e_rest", "\U0002b920\U0002c000\U0002cea1\U0002ceaf"),
    ("wp_cjk_ext_e_in_words", "a\U0002b820b a\U0002b920b"),
    ("wp_cjk_ext_f_g_h", "\U0002ceb0\U0002ebe0 \U00030000\U0003134a \U00031350\U000323af"),
    ("wp_cjk_compat", "\uf900\uf901\ufa6d\ufaff"),
    ("wp_cjk_compat_supplement", "\U0002f800\U0002f801\U0002fa1d\U0002fa1f"),
    ("wp_cjk_range_neighbours", "\u33ff\u4dc0\u4dff\ua000\uf8ff\ufb00\U0002a6e0\U0002fa20"),
    ("wp_cjk_radicals_and_marks", "\u2e80\u2f00\u3005\u3006\u3007\u3021\u303b"),
    ("wp_cjk_in_latin_words", "abc\u4e2d\u6587def 123\u5e74"),
    ("wp_hiragana_katakana_not_split", "\u3072\u3089\u304c\u306a\u30ab\u30bf\u30ab\u30ca\u30fc"),
    ("wp_hangul_not_split", "\ud55c\uad6d\uc5b4\ud14d\uc2a4\ud2b8"),
    ("wp_halfwidth_katakana", "\uff8a\uff9d\uff76\uff78"),
    ("wp_chinese_sentence_mixed", "\u6211\u7231NLP\u548cBERT\u6a21\u578b\uff0c\u7248\u672c2.0\u3002"),
    # accents, normalization
    ("wp_cafe", "caf\u00e9"),
    ("wp_naive", "na\u00efve"),
    ("wp_istanbul", "\u0130stanbul"),
    ("wp_eszett", "\u00df stra\u00dfe STRASSE \u1e9e"),
    ("wp_dz_titlecase", "\u01c5 \u01c5emal \u01c4 \u01c6"),
    ("wp_a_ring_precomposed", "\u00c5"),
    ("wp_a_ring_decomposed", "A\u030a"),
    ("wp_a_ring_both_in_word", "\u00c5ngstr\u00f6m A\u030angstro\u0308m"),
    ("wp_vietnamese", "Ti\u1ebfng Vi\u1ec7t"),
    ("wp_fi_ligature_word", "\ufb01nance of\ufb01ce"),
    ("wp_combining_acute_alone", "\u0301"),
    ("wp_combining_acute_between_spaces", "a \u0301 b"),
    ("wp_combining_after_punct", ".\u0301 !\u0308"),
    ("wp_devanagari_mc", "\u0939\u093f\u0928\u094d\u0926\u0940"),
    ("wp_reordered_marks", "a\u0301\u0316"),
    ("wp_canonical_order_marks", "a\u0316\u0301"),
    ("wp_accented_upper", "\u00c9COLE \u00c9l\u00e8ve \u00d1and\u00fa"),
    ("wp_greek_tonos", "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac"),
    ("wp_arabic_harakat", "\u0645\u064e\u0631\u0652\u062d\u064e\u0628\u064b\u0627"),
    ("wp_hebrew_niqqud", "\u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd"),
    ("wp_thai_marks", "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22"),
    ("wp_enclosing_mark", "a\u20dd b\u20e3"),
    ("wp_compat_forms_not_nfkc", "\uff21\uff22\uff23 \u00b2\u00b3 \u00bd \u2460 \u2167 \u3231"),
    # mixed case, case mappings
    ("wp_mixed_case", "HeLLo WoRLD"),
    ("wp_greek_upper_final_sigma", "\u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3"),
    ("wp_turkish", "I\u0130\u0131i \u015e\u011e\u00dc\u00d6\u00c7 D\u0130YARBAKIR"),
    ("wp_cyrillic_case", "\u041f\u0420\u0418\u0412\u0415\u0422 \u041c\u0438\u0440 \u0401\u0436"),
    ("wp_armenian_case", "\u0540\u0531\u0545\u0535\u0550\u0535\u0546 \u0535\u0580\u0587\u0561\u0576"),
    ("wp_georgian_mtavruli", "\u1c90\u1c91\u1c92"),
    ("wp_cherokee_deseret", "\u13a0\u13a1 \U00010400\U00010401"),
    ("wp_titlecase_and_special_lower", "\u1f88 \u0049\u0307 \u212a \u2126"),
    # special tokens in the text
    ("wp_special_cls_sep", "[CLS] hello [SEP]"),
    ("wp_special_mask", "[MASK]"),
    ("wp_special_unk_in_word", "x[UNK]y"),
    ("wp_special_lowercase", "[cls]"),
    ("wp_special_spaced", "[ CLS ]"),
    ("wp_special_pad_pad", "[PAD][PAD]"),
    ("wp_special_sep_cls_glued", "a[SEP][CLS]b"),
    ("wp_special_mixed_case", "[Mask] [Cls] [sEP]"),
    ("wp_special_nested", "[[CLS]] [CLS [SEP"),
    ("wp_special_in_sentence", "The [MASK] sat on the mat.[SEP]It was [UNK]."),
    ("wp_unused_token_text", "[unused1] [unused99]"),
    ("wp_special_with_accents_around", "caf\u00e9[MASK]na\u00efve"),
    # long words (max_input_chars_per_word = 100, counted after normalization)
    ("wp_word_100", "abcdefghij" * 10),
    ("wp_word_101", "abcdefghij" * 10 + "k"),
    ("wp_a_100", "a" * 100),
    ("wp_a_101", "a" * 101),
    ("wp_a_1000", "a" * 1000),
    ("wp_e_acute_100", "\u00e9" * 100),
    ("wp_e_acute_101", "\u00e9" * 101),
    ("wp_e_decomposed_50", "e\u0301" * 50),
    ("wp_e_decomposed_51", "e\u0301" * 51),
    ("wp_a_100_plus_mark", "a" * 100 + "\u0301"),
    ("wp_accented_word_100_nfd_longer", "\u00e9l\u00e8ve" * 20),
    ("wp_dotted_i_100", "\u0130" * 100),
    ("wp_hiragana_100", "\u3072" * 100),
    ("wp_hiragana_101", "\u3072" * 101),
    ("wp_word_100_then_punct", "a" * 100 + ".a"),
    ("wp_word_101_with_control", "a" * 100 + "\x01a"),
    ("wp_word_100_with_controls", "a" * 50 + "\x01" * 10 + "a" * 50),
    ("wp_long_words_in_sentence", "x " + "b" * 101 + " y " + "c" * 100 + " z"),
    # no sub-token matches: the whole word becomes [UNK]
    ("wp_unk_emoji_in_word", "hello\U0001f600world"),
    ("wp_unk_snowman_word", "na\u00efve\u2603"),
    ("wp_unk_emoji_alone", "\U0001f600"),
    ("wp_unk_emoji_start", "\U0001f600hello"),
    ("wp_unk_words_between_known", "good \U0001f600\U0001f600 bad \u2603x ok"),
    # "##" sequences
    ("wp_hash_hash", "##"),
    ("wp_a_hash_hash_b", "a##b"),
    ("wp_hash_hash_hash", "###"),
    ("wp_hash_hash_ing", "##ing ing"),
    # digits
    ("wp_digits_9", "123456789"),
    ("wp_pi", "3.14159"),
    ("wp_thousand", "1,000"),
    ("wp_digits_letters", "abc123 123abc 1st 2nd 3rd 4th"),
    ("wp_digits_other_scripts", "\u0661\u0662\u0663 \u0967\u0968\u0969 \uff11\uff12"),
    # URLs, emails, code
    ("wp_url", "https://www.example.com/path/to/page.html?query=1&x=y#frag"),
    ("wp_email", "john.doe+tag@example.co.uk"),
    ("wp_code_python", "def f(x):\n    return x**2  # square\n"),
    ("wp_code_c", "int main(void){printf(\"%d\\n\",a[i]);return 0;}"),
    ("wp_html", "<html><body class=\"x\">Hi &amp; bye</body></html>"),
    # sentences
    ("wp_sentence_uncased", "Hello, how are you doing today? I'm fine, thanks!"),
    ("wp_sentence_subwords", "Tokenization is unbelievably straightforward, isn't it?"),
    ("wp_sentence_multilingual", "Hello \u4e16\u754c! \u041f\u0440\u0438\u0432\u0435\u0442 caf\u00e9 \u3053\u3093\u306b\u3061\u306f \uc548\ub155"),
]

# Generated inputs (see gen_sentencepiece.EDGE_GEN): all of those, then these.
_WP_MIX_UNIT = ("Hello, WORLD! caf\u00e9 na\u00efve \u0130stanbul \u4e2d\u6587\u5b57 \u3072\u3089\u304c\u306a "
                "\ud55c\uad6d\uc5b4 \U0001f600 ab\x01cd [CLS] x##y 3.14 don't \u00a0\u3000"
                "hello\U0001f600world \u00e9" + "a" * 99 + " ")
WP_EDGE_GEN = [
    ("wp_repeat_a_100000", [{"unit": "a", "times": 100000}]),
    ("wp_repeat_hello_space_10000", [{"unit": "hello ", "times": 10000}]),
    ("wp_repeat_zhong_10000", [{"unit": "\u4e2d", "times": 10000}]),
    ("wp_repeat_period_50000", [{"unit": ".", "times": 50000}]),
    ("wp_repeat_word_100_space_1000", [{"unit": "a" * 100 + " ", "times": 1000}]),
    ("wp_repeat_word_101_space_1000", [{"unit": "a" * 101 + " ", "times": 1000}]),
    ("wp_repeat_special_tokens_2000", [{"unit": "[CLS]x[SEP] [MASK]", "times": 2000}]),
    ("wp_mix_2000", [{"unit": _WP_MIX_UNIT, "times": 2000}]),
    ("wp_mix_then_tail", [{"unit": "\u4e2d", "times": 3}, {"unit": _WP_MIX_UNIT, "times": 500},
                          {"unit": "\U0001f600", "times": 7}]),
]


# --------------------------------------------------------------------------------------------
# Reference outputs
# --------------------------------------------------------------------------------------------
def byte_offsets(text):
    """cum[i] = UTF-8 length of text[:i], for i = 0 ..= len(text)."""
    cum = [0] * (len(text) + 1)
    acc = 0
    i = 0
    for ch in text:
        o = ord(ch)
        acc += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
        i += 1
        cum[i] = acc
    return cum


def reference(tok, text):
    enc = tok.encode(text, add_special_tokens=False)
    ids = list(enc.ids)
    pieces = list(enc.tokens)
    if len(pieces) != len(ids) or len(enc.offsets) != len(ids) or enc.overflowing:
        raise AssertionError("inconsistent encoding for %r" % text[:80])
    if text.isascii():
        cum = None
    else:
        cum = byte_offsets(text)
    spans = []
    for b, e in enc.offsets:
        if not 0 <= b <= e <= len(text):
            raise AssertionError("offset (%d, %d) out of range for %r" % (b, e, text[:80]))
        spans.append([b, e] if cum is None else [cum[b], cum[e]])
    decoded = tok.decode(ids)
    return ids, pieces, spans, decoded


def load_tokenizer_json(path):
    """tokenizers.Tokenizer.from_file(path) with padding and truncation switched off."""
    import tokenizers
    tok = tokenizers.Tokenizer.from_file(path)
    tok.no_padding()
    tok.no_truncation()
    if tok.padding is not None or tok.truncation is not None:
        raise AssertionError("padding or truncation left on")
    return tok


class HfRef:
    """Reference outputs of a Hugging Face tokenizer (self.tok), for gen_sentencepiece's driver.
    Subclasses set self.tok and self.header."""

    def run(self, text):
        return reference(self.tok, text)

    def extra(self, text, big):
        if big:
            return {}
        return {"special_ids": list(self.tok.encode(text, add_special_tokens=True).ids)}


class WordPieceRef(HfRef):
    def __init__(self, name, config, data):
        import tokenizers
        if config["loader"] == "BertWordPieceTokenizer":
            path = os.path.join(REPO, config["vocab"][len("repo:"):])
            self.tok = tokenizers.BertWordPieceTokenizer(path, lowercase=config["lowercase"])
            if self.tok.padding is not None or self.tok.truncation is not None:
                raise AssertionError("padding or truncation left on")
        elif config["loader"] == "Tokenizer.from_file":
            path = os.path.join(REPO, config["file"][len("repo:"):])
            self.tok = load_tokenizer_json(path)
        else:
            raise ValueError(config["loader"])
        self.header = {
            "name": name,
            "model": os.path.basename(path),
            "tokenizers": getattr(tokenizers, "__version__", "unknown"),
            "model_sha256": spg.sha256_file(path),
            "format": FORMAT,
            "model_location": config.get("vocab") or config["file"],
            "config": config,
        }


def main():
    spg.run_generator(__doc__, "tests/golden/gen_wordpiece.py", "wordpiece", CONFIGS, WordPieceRef,
                      spg.EDGE_TEXT + WP_EDGE_TEXT, spg.EDGE_GEN + WP_EDGE_GEN,
                      [("tokenizers", EXPECTED_TOKENIZERS)])


if __name__ == "__main__":
    main()
