#!/usr/bin/env python3
"""Generate the byte-level BPE golden files (tiktoken and Hugging Face tokenizer.json) for simdtok's
conformance tests.

Usage (from the repository root, or anywhere):

    pip install tiktoken==0.14.0 tokenizers==0.23.3
    python3 tests/golden/gen_bpe.py [--data ../shared/data] [--out tests/golden/bpe]

Needs only the `tiktoken` and `tokenizers` Python packages and local files: nothing is downloaded
(tiktoken's download cache is switched off).  `--data` defaults to `<repo>/../shared/data`.  The
corpus sampling, the SentencePiece and WordPiece edge cases and generated inputs, the digests and
the rules for what is stored in full are imported from gen_sentencepiece.py and gen_wordpiece.py
(same directory), so all golden sets read the same inputs the same way.

For every configuration in CONFIGS and every input case it records the reference library's output.

tiktoken configurations (enc = tiktoken.Encoding(name, pat_str=P, mergeable_ranks=R,
special_tokens={}), with P the pattern tiktoken itself uses for that encoding, read from the
installed tiktoken_ext/openai_public.py, and R from the local rank file):

    ids        = enc.encode_ordinary(text)
    pieces_hex = hex of each token's bytes (enc.decode_tokens_bytes(ids)); they concatenate to the
                 UTF-8 of the text (asserted)
    spans      = cumulative byte lengths of those token bytes
    decoded    = enc.decode(ids)
    allowed_special_ids = tiktoken.Encoding(..., special_tokens=<the encoding's specials>)
                 .encode(text, allowed_special="all")   (edge cases holding a special token string)

Hugging Face configurations (tok = tokenizers.Tokenizer.from_file(path), no_padding(),
no_truncation()):

    enc         = tok.encode(text, add_special_tokens=False)
    ids, pieces = enc.ids, enc.tokens
    spans       = enc.offsets converted from characters to UTF-8 byte offsets
    decoded     = tok.decode(ids)                     # skip_special_tokens=True, the default
    special_ids = tok.encode(text, add_special_tokens=True).ids   (edge cases with full outputs)

and writes one gzip-compressed JSON-lines file per configuration: `<out>/<name>.jsonl.gz`.  The
format is documented in tests/golden/README.md (sections "File format" and "Byte-level BPE");
keep them in sync.  Output is byte-for-byte deterministic; --check compares it with the committed
files and writes nothing.  The driver (arguments, case loop, writing and --check) is
gen_sentencepiece.run_generator.
"""

import json
import os
import sys

# Never download or cache anything: tiktoken's loaders read local paths directly when this is "".
os.environ["TIKTOKEN_CACHE_DIR"] = ""

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ next to the goldens
import gen_sentencepiece as spg  # noqa: E402  (shared inputs, digests, storage rules, driver)
import gen_wordpiece as wpg  # noqa: E402  (WordPiece edge cases, HfRef, tokenizer.json loading)

FORMAT = 1
EXPECTED_TIKTOKEN = "0.14.0"
EXPECTED_TOKENIZERS = "0.23.3"

BPE_DIR = "tests/data/bpe/"
HF_DIR = "models/hf-tokenizer-json/"
GOLDEN_BPE_DIR = "tests/golden/bpe/"


def _hf(stem):
    return {"loader": "Tokenizer.from_file", "file": "shared:" + HF_DIR + stem + ".tokenizer.json",
            "no_padding": True, "no_truncation": True}


def _hf_repo(stem):
    return {"loader": "Tokenizer.from_file", "file": "repo:" + BPE_DIR + stem + ".tokenizer.json",
            "no_padding": True, "no_truncation": True}


def _hf_golden(stem):
    """A tokenizer.json kept beside the goldens (tests/golden/bpe/)."""
    return {"loader": "Tokenizer.from_file",
            "file": "repo:" + GOLDEN_BPE_DIR + stem + ".tokenizer.json",
            "no_padding": True, "no_truncation": True}


# (name, config).  tiktoken rank files and the tokenizer.json files are read from ../shared/data
# (large, or under the Llama licenses); the GPT-2 files are in the repository (MIT).
CONFIGS = [
    ("gpt2", {"loader": "tiktoken.data_gym", "encoding": "gpt2",
              "encoder_json": "repo:" + BPE_DIR + "encoder.json",
              "vocab_bpe": "repo:" + BPE_DIR + "vocab.bpe"}),
    ("r50k_base", {"loader": "tiktoken", "encoding": "r50k_base",
                   "file": "shared:models/tiktoken/r50k_base.tiktoken"}),
    ("p50k_base", {"loader": "tiktoken", "encoding": "p50k_base",
                   "file": "shared:models/tiktoken/p50k_base.tiktoken"}),
    ("cl100k_base", {"loader": "tiktoken", "encoding": "cl100k_base",
                     "file": "shared:models/tiktoken/cl100k_base.tiktoken"}),
    ("o200k_base", {"loader": "tiktoken", "encoding": "o200k_base",
                    "file": "shared:models/tiktoken/o200k_base.tiktoken"}),
    ("llama3", _hf("llama3")),
    ("qwen3", _hf("qwen3")),
    ("gpt4o", _hf("gpt4o")),
    ("gpt35turbo", _hf("gpt35turbo")),
    ("llama2", _hf("llama2")),
    # GPT-2 cut to 2000 merges with tokenizer.json normalizers (made by
    # tests/data/bpe/make_normalizer_tokenizers.py): NFKC + Lowercase, and a chain of Strip, NFKD,
    # Replace, NFC, Replace and Prepend.
    ("gpt2-2k-nfkc-lower", _hf_repo("gpt2-2k-nfkc-lower")),
    ("gpt2-2k-chain", _hf_repo("gpt2-2k-chain")),
    # … and with post-processors that trim spaces off the offsets (same script).
    ("gpt2-2k-trim", _hf_repo("gpt2-2k-trim")),
    ("gpt2-2k-roberta", _hf_repo("gpt2-2k-roberta")),
    # … and with chains of pre-tokenizer stages (same script).
    ("gpt2-2k-deepseek", _hf_repo("gpt2-2k-deepseek")),
    ("gpt2-2k-digits", _hf_repo("gpt2-2k-digits")),
    ("gpt2-2k-tekken", _hf_repo("gpt2-2k-tekken")),
    ("gpt2-2k-behaviors", _hf_repo("gpt2-2k-behaviors")),
    # … and Hugging Face's GPT-2 layout with added tokens of both kinds (same script).
    ("gpt2-2k-hf-added", _hf_repo("gpt2-2k-hf-added")),
    # Byte-level BPE trained with an end_of_word_suffix and with a continuing_subword_prefix
    # (made by tests/data/bpe/make_trained_tokenizers.py).
    ("kjv-1500-suffix", _hf_repo("kjv-1500-suffix")),
    ("kjv-1500-prefix", _hf_repo("kjv-1500-prefix")),
    # SentencePiece-style BPE with a Metaspace pre-tokenizer (made by
    # tests/data/bpe/make_trained_tokenizers.py): prepend "first" without split, "always" with split.
    ("kjv-spm-first", _hf_repo("kjv-spm-first")),
    ("kjv-spm-split", _hf_repo("kjv-spm-split")),
    # CLIP's layout (made by tests/data/bpe/make_trained_tokenizers.py): a regex Replace normalizer,
    # end_of_word_suffix, RobertaProcessing, BPEDecoder.
    ("kjv-clip-layout", _hf_repo("kjv-clip-layout")),
    # Character-level BPE as BpeTrainer makes it with the Whitespace / WhitespaceSplit
    # pre-tokenizers (made by tests/data/bpe/make_whitespace_tokenizers.py, with tokenizers
    # 0.23.2): no unk_token (unknown characters dropped); unk_token [UNK]; WhitespaceSplit with
    # fuse_unk and ignore_merges.
    ("kjv-ws-1500", _hf_repo("kjv-ws-1500")),
    ("udhr-ws-3000-unk", _hf_repo("udhr-ws-3000-unk")),
    ("kjv-wssplit-1000", _hf_repo("kjv-wssplit-1000")),
    # SentencePiece-style BPE in Gemma 3's layout (made by tests/data/bpe/make_gemma_tokenizers.py
    # from a SentencePiece BPE model trained on the KJV, with tokenizers 0.23.2): Gemma's own
    # Split " " MergedWithPrevious, and Splits that do cut the normalized text: "▁" with
    # three behaviors, a regex with Contiguous (and ignore_merges), an inverted regex, and a
    # Sequence of four (empty matches, invert, Removed).
    ("gemma-1k", _hf_repo("gemma-1k")),
    ("gemma-1k-prev", _hf_repo("gemma-1k-prev")),
    ("gemma-1k-next", _hf_repo("gemma-1k-next")),
    ("gemma-1k-removed", _hf_repo("gemma-1k-removed")),
    ("gemma-1k-contiguous", _hf_repo("gemma-1k-contiguous")),
    ("gemma-1k-invert", _hf_repo("gemma-1k-invert")),
    ("gemma-1k-seq", _hf_repo("gemma-1k-seq")),
    # Merges that list a pair more than once, whose last place is its rank (the reference collects
    # the list into a map): gpt2-2k-trim (byte-level), kjv-spm-first (SentencePiece-style) and
    # kjv-ws-1500 (character-level) with hundreds of their merges listed again (made by
    # tests/golden/bpe/make_dup_merges_tokenizers.py, and kept beside their goldens).
    ("gpt2-2k-dup-merges", _hf_golden("gpt2-2k-dup-merges")),
    ("kjv-spm-dup-merges", _hf_golden("kjv-spm-dup-merges")),
    ("kjv-ws-dup-merges", _hf_golden("kjv-ws-dup-merges")),
]

# --------------------------------------------------------------------------------------------
# Edge cases.  All of gen_sentencepiece.EDGE_TEXT and gen_wordpiece.WP_EDGE_TEXT (same names),
# then these, aimed at the regex pre-tokenizers and at merging.  Only Unicode scalar values.
# --------------------------------------------------------------------------------------------
_DIGITS = "123456789012"

BPE_EDGE_TEXT = [
    # contractions: every suffix in every case, glued, after non-letters, repeated
    ("bpe_contractions_lower", "'s 't 're 've 'm 'll 'd"),
    ("bpe_contractions_upper", "'S 'T 'RE 'VE 'M 'LL 'D"),
    ("bpe_contractions_listed", "'s 'S 'T 're 'RE 've 'm 'll 'LL 'd"),
    ("bpe_contractions_mixed_case", "'Re 'rE 'Ll 'lL 'Ve 'vE"),
    ("bpe_contractions_glued", "he's she'll we've they're I'm you'd it't"),
    ("bpe_contractions_glued_upper", "HE'S SHE'LL WE'VE THEY'RE I'M YOU'D"),
    ("bpe_dont", "don't"),
    ("bpe_dont_upper", "DON'T"),
    ("bpe_dont_title", "Don't"),
    ("bpe_right_single_quote_s", "\u2019s it\u2019s John\u2019s"),
    ("bpe_its_quote", "it's'"),
    ("bpe_quote_quote_s", "''s"),
    ("bpe_a_s_s", "a's's"),
    ("bpe_contraction_alone", "'s"),
    ("bpe_contraction_after_space", " 's 'll"),
    ("bpe_contraction_after_digits", "90's 1990's 3'll"),
    ("bpe_contraction_lookalikes", "'x 'st 'lls 'ved 'dd 'mm 'sss"),
    ("bpe_mcdonalds", "McDonald's"),
    ("bpe_contraction_after_cjk", "\u4e2d's \u65e5\u672c'll"),
    ("bpe_contraction_after_punct", "$'s _'re ''ll"),
    ("bpe_contraction_newline", "it\n's\n'S"),
    # letters after one non-letter (the optional [^\r\n\p{L}\p{N}] prefix)
    ("bpe_nbsp_word", "\u00a0Hacker"),
    ("bpe_dollar_word", "$Hacker"),
    ("bpe_digit_word", "1abc"),
    ("bpe_underscore_word", "_abc"),
    ("bpe_quote_word", "'abc"),
    ("bpe_ideographic_space_cjk", "\u3000\u4e2d\u6587"),
    ("bpe_punct_before_words", "...abc ,def (ghi) [jkl] {mno} \"pqr\""),
    ("bpe_newline_before_word", "\nabc \r\nabc \rabc"),
    ("bpe_tab_word", "\tword"),
    ("bpe_two_spaces_word", "  word"),
    ("bpe_emoji_word", "\U0001f600word"),
    ("bpe_symbol_prefixes", "#hash @at &amp *bold* ~tilde ^caret |pipe"),
    ("bpe_cjk_punct_words", "\u3002\u3053\u308c\u3001\u305d\u308c\u300c\u3042\u308c\u300d"),
    # digits: runs of 1..12, with and without a space before, mixed with letters, other scripts
] + [("bpe_digits_%02d" % n, _DIGITS[:n]) for n in range(1, 13)] + [
    ("bpe_digits_runs_spaced", " 1 22 333 4444 55555 666666 7777777"),
    ("bpe_digits_space_long", " 1234567"),
    ("bpe_digits_letters", "abc123def4567"),
    ("bpe_digits_letters_runs", "a1b22c333d4444e55555"),
    ("bpe_digits_arabic_indic", "\u0663\u0664\u0665\u0666"),
    ("bpe_digits_devanagari", "\u0967\u0968\u0969\u096a"),
    ("bpe_digits_other_nd", "\uff11\uff12\uff13\uff14 \u0e51\u0e52\u0e53 \u09e7\u09e8\u09e9 \U0001d7ce\U0001d7cf"),
    ("bpe_digits_no_nl", "x\u00b2 H\u2082O \u2460\u2461 \u216b\u217b \u00bd\u00bc \u3007"),
    ("bpe_digits_decimal", "3.14159 1,000,000 0x1F 1e-10 v2.0.1"),
    ("bpe_digits_dates", "2024-01-15 12:30:45 +1-800-555-0199"),
    # whitespace runs before letters and at line ends (\s+(?!\S), \s*[\r\n]+, \s++$)
    ("bpe_ws_two_spaces", "a  b"),
    ("bpe_ws_three_spaces", "a   b"),
    ("bpe_ws_space_newline_space", "a \n b"),
    ("bpe_ws_three_newlines", "a\n\n\nb"),
    ("bpe_ws_spaces_newline", "  \n"),
    ("bpe_ws_tabs_space_x", "\t\t x"),
    ("bpe_ws_trailing_spaces", "abc   "),
    ("bpe_ws_space_nbsp", "x \u00a0y"),
    ("bpe_ws_crlf", "\r\n"),
    ("bpe_ws_a_crlf_b", "a\r\nb"),
    ("bpe_ws_a_crlf_crlf_b", "a\r\n\r\nb"),
    ("bpe_ws_lone_cr", "\r"),
    ("bpe_ws_a_cr_b", "a\rb"),
    ("bpe_ws_cr_cr_lf", "a\r\r\nb\n\rc"),
    ("bpe_ws_lines_all_spaces", "line\n    \n        \nline"),
    ("bpe_ws_four_spaces", "    "),
    ("bpe_ws_indent_then_word", "    \n    word"),
    ("bpe_ws_trailing_newline", "text\n"),
    ("bpe_ws_trailing_spaces_newline", "text   \n"),
    ("bpe_ws_trailing_newline_spaces", "text\n   "),
    ("bpe_ws_python_indent", "def f():\n    if x:\n        return 1\n"),
    ("bpe_ws_nbsp_runs", "a\u00a0\u00a0b \u00a0 c\u00a0"),
    ("bpe_ws_unicode_spaces_before_words", "\u2003word \u3000word \u202fword \u2009word"),
    ("bpe_ws_vt_ff", "a\x0b\x0cb \x0b x\x0c"),
    ("bpe_ws_nel_ls_ps", "a\u0085b \u2028c\u2029 d\u2028\n"),
    ("bpe_ws_space_before_punct", "a .b  ,c   !d"),
    ("bpe_ws_mixed_run", " \t \n\t\n \r\n "),
    ("bpe_ws_newline_then_spaces_word", "a\n b\n\n  c"),
    ("bpe_ws_spaces_before_digits", "x  1   22"),
    ("bpe_ws_spaces_before_emoji", "x  \U0001f600   \u4e2d"),
    # punctuation runs with newlines, slashes (o200k: [\r\n/]*), special token strings
    ("bpe_punct_dots_newlines", "...\n\n"),
    ("bpe_punct_qe_crlf", "?!\r\n"),
    ("bpe_punct_comment", "/// comment"),
    ("bpe_punct_slashes_newline", "a//b\n"),
    ("bpe_punct_slash_runs", "a/b//c///d\n/\n//\n "),
    ("bpe_punct_space_slashes", " //\n// x */\n"),
    ("bpe_punct_runs", "!!!???,,,;;;:::"),
    ("bpe_punct_brace_newlines", " }\n\n\n{\n\t}"),
    ("bpe_punct_unicode", "\u00ab\u00bb\u2014\u2013\u2026\u00a1\u00bf\u203d"),
    ("bpe_punct_symbols", "\u00a9\u00ae\u2122\u00b0\u00b1\u00d7\u00f7\u20ac\u00a3\u00a5\u00a7\u00b6"),
    ("bpe_punct_math", "\u2211\u222b\u221a\u221e\u2248\u2260\u2264\u2265"),
    ("bpe_special_endoftext", "<|endoftext|>"),
    ("bpe_special_fim_prefix", "<|fim_prefix|>"),
    ("bpe_special_endofprompt", "<|endofprompt|>"),
    ("bpe_special_all_in_text",
     "Hello<|endoftext|>world <|fim_prefix|>a<|fim_middle|>b<|fim_suffix|>c<|endofprompt|>."),
    ("bpe_special_adjacent", "<|endoftext|><|endoftext|> <|endoftext|>"),
    # Text right after an added token (SentencePiece-style files: no "▁" is prepended there
    # under Metaspace's prepend_scheme "first")
    ("bpe_special_glued_words", "a<s>b</s>c<unk>d <s>e"),
    ("bpe_special_lookalikes",
     "<|endoftext |> <|ENDOFTEXT|> <|endoftext <|im_start|> <|begin_of_text|> </s> <s> <unk>"),
    ("bpe_special_other_models",
     "<|im_start|>user\nhi<|im_end|>\n<|begin_of_text|><|start_header_id|>x<|eot_id|><think></think>"),
    ("bpe_special_in_words", "a<|endoftext|>b 1<|endoftext|>2 \u4e2d<|endoftext|>\u6587"),
    # CamelCase and o200k's case rules
    ("bpe_case_HelloWorld", "HelloWorld"),
    ("bpe_case_HELLOworld", "HELLOworld"),
    ("bpe_case_helloWORLD", "helloWORLD"),
    ("bpe_case_dz_titlecase", "\u01c5ungla"),
    ("bpe_case_greek_upper", "\u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3"),
    ("bpe_case_istanbul", "\u0130stanbul"),
    ("bpe_case_iphone", "iPhone"),
    ("bpe_case_camel_identifiers", "getElementById XMLHttpRequest parseHTTPResponse IOError eBay"),
    ("bpe_case_snake_screaming", "MAX_VALUE snake_case_name __init__ CamelCase_Mixed"),
    ("bpe_case_titlecase_letters", "\u01c5 \u01c8 \u01cb \u01f2 \u1f88 a\u01c5b A\u01c5B"),
    ("bpe_case_modifier_letters", "\u02b0\u02b2\u02b7 a\u02b0b A\u02b0 \u02b0A"),
    ("bpe_case_other_letters", "A\u4e2d \u4e2dA a\u0411 \u0411a \u4e2da"),
    ("bpe_case_marks_between", "A\u0308b a\u0301B AB\u0301c"),
    ("bpe_case_german", "STRA\u1e9eE Stra\u00dfe"),
    ("bpe_case_greek_final_sigma", "\u1f48\u0394\u03a5\u03a3\u03a3\u0395\u038e\u03a3 \u1f40\u03b4\u03c5\u03c3\u03c3\u03b5\u03cd\u03c2"),
    ("bpe_case_contraction_upper_word", "WORLD's Hello'S HELLO'll"),
    # combining marks
    ("bpe_comb_e_acute", "e\u0301"),
    ("bpe_comb_leading", "\u0301abc"),
    ("bpe_comb_stacked", "a\u0301\u0302"),
    ("bpe_comb_after_space", " \u0301x"),
    ("bpe_comb_upper", "E\u0301COLE e\u0301cole"),
    ("bpe_comb_enclosing", "a\u20dd 1\u20e3"),
    ("bpe_comb_devanagari", "\u0928\u092e\u0938\u094d\u0924\u0947"),
    ("bpe_comb_after_digit", "1\u0301 2\u0308"),
    # emoji
    ("bpe_emoji_zwj_family", "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"),
    ("bpe_emoji_rainbow_flag", "\U0001f3f3\ufe0f\u200d\U0001f308"),
    ("bpe_emoji_skin_tone", "\U0001f44d\U0001f3fd"),
    ("bpe_emoji_keycap", "1\ufe0f\u20e3"),
    ("bpe_emoji_flags", "\U0001f1ef\U0001f1f5\U0001f1fa\U0001f1f8"),
    ("bpe_emoji_run", "\U0001f389\U0001f389\U0001f389"),
    ("bpe_emoji_in_words", "hi\U0001f600there  \U0001f600 \U0001f600\n"),
    # scripts
    ("bpe_chinese", "\u6211\u4eec\u4eca\u5929\u53bb\u5317\u4eac\u5927\u5b66\u53c2\u89c2\u3002\u5929\u6c14\u5f88\u597d\uff01"),
    ("bpe_japanese", "\u6771\u4eac\u90fd\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002\u30c8\u30fc\u30af\u30ca\u30a4\u30b6\u30fc\u3092\u30c6\u30b9\u30c8\u3057\u307e\u3059\u3002"),
    ("bpe_korean", "\ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc744 \ud1a0\ud070\ud654\ud569\ub2c8\ub2e4."),
    ("bpe_cyrillic", "\u0421\u044a\u0435\u0448\u044c \u0436\u0435 \u0435\u0449\u0451 \u044d\u0442\u0438\u0445 \u043c\u044f\u0433\u043a\u0438\u0445 \u0444\u0440\u0430\u043d\u0446\u0443\u0437\u0441\u043a\u0438\u0445 \u0431\u0443\u043b\u043e\u043a."),
    ("bpe_arabic", "\u0627\u0644\u0644\u063a\u0629 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u062c\u0645\u064a\u0644\u0629 \u062c\u062f\u064b\u0627."),
    ("bpe_hindi", "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e \u092c\u0939\u0941\u0924 \u0938\u0941\u0902\u0926\u0930 \u0939\u0948\u0964"),
    ("bpe_thai", "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e44\u0e21\u0e48\u0e21\u0e35\u0e0a\u0e48\u0e2d\u0e07\u0e27\u0e48\u0e32\u0e07\u0e23\u0e30\u0e2b\u0e27\u0e48\u0e32\u0e07\u0e04\u0e33"),
    ("bpe_hebrew_greek", "\u05e2\u05d1\u05e8\u05d9\u05ea \u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac"),
    ("bpe_other_scripts", "\u10e5\u10d0\u10e0\u10d7\u10e3\u10da\u10d8 \u0540\u0561\u0575\u0565\u0580\u0565\u0576 \u12a0\u121b\u122d\u129b \u0f56\u0f7c\u0f51 \u1019\u103c\u1014\u103a\u1019\u102c"),
    ("bpe_vietnamese", "Ti\u1ebfng Vi\u1ec7t c\u00f3 d\u1ea5u \u0111\u1eb9p"),
    # code, URLs, paths
    ("bpe_code_python", "def tokenize(text: str) -> list[int]:\n    return [ord(c) for c in text]  # bytes\n"),
    ("bpe_code_c", "int main(void) {\n\tprintf(\"%d\\n\", a[i++]);\n\treturn 0;\n}\n"),
    ("bpe_code_json", "{\"ids\": [1, 22, 333], \"ok\": true, \"name\": \"x\\u00e9\"}"),
    ("bpe_code_html", "<!DOCTYPE html>\n<html lang=\"en\"><body><p class='x'>Hi &amp; bye</p></body></html>"),
    ("bpe_code_rust", "fn main() -> Result<(), Box<dyn Error>> {\n    let v: Vec<u32> = vec![];\n    Ok(())\n}"),
    ("bpe_code_shell", "$ ls -la ~/.config && echo \"$HOME\" | grep -E '^/h' >/dev/null 2>&1"),
    ("bpe_markdown", "# Title\n\n- item **bold** _it_ `code`\n\n```py\nx = 1\n```\n"),
    ("bpe_urls", "https://example.com/a/b?c=d&e=f#g www.example.org/path_to/file.html mailto:user@example.org"),
    ("bpe_paths", "C:\\Users\\x\\file.txt /usr/local/bin/python3 ../shared/data"),
    # long words
    ("bpe_long_word_german", "Donaudampfschifffahrtsgesellschaftskapit\u00e4n"),
    ("bpe_long_word_repeated", "antidisestablishmentarianism" * 20),
    ("bpe_long_hex", "0123456789abcdef" * 16),
    ("bpe_long_base64", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkrLw=="),
    ("bpe_long_cjk_run", "\u65e5\u672c\u8a9e\u306e\u6587\u7ae0" * 100),
    ("bpe_long_letters_2000", "x" * 2000),
    # valid but unusual code points, NUL and controls
    ("bpe_noncharacters", "\uffff \U0010ffff \ufffe \ufdd0 a\uffffb"),
    ("bpe_private_use", "\ue000\uf8ff a\ue000b \U000f0000"),
    ("bpe_replacement_char", "\ufffd a\ufffdb"),
    ("bpe_nul", "\x00"),
    ("bpe_nul_in_words", "a\x00b \x00 c\x00"),
    ("bpe_controls", "\x01\x02\x03abc\x1b[31mred\x1b[0m\x07\x7f\x80\x9f"),
    ("bpe_bom_words", "\ufeffword \ufeff"),
    ("bpe_zero_width", "a\u200bb\u200cc\u200dd\u2060e"),
    # code points assigned in recent Unicode versions (which tables the regex engines use)
    ("bpe_unicode_new_letters",
     "a\U00011f04b a\U0001e4d0b a\u1c89b a\u1c8ab a\U00010d4ab a\U0002ebf0b a\u0870b a\U0001e290b"),
    ("bpe_unicode_new_digits", "1\U0001e4f0 2\U00010d40 3\U00011f50 4\U0001e950 5\U00016ac0"),
    ("bpe_unicode_new_case", "x\u1c89y X\u1c89Y \ua7cbx \ua7dcx x\ua7cbX"),
    ("bpe_unicode_new_marks", "a\u0897b a\u1acfb a\U00010efdb a\U0001e4ecb"),
    ("bpe_unicode_unassigned", "a\u0378b a\U0001e4ffb a\U000e0080b a\u2fffb"),
    # SentencePiece-style (llama2): the prepended "\u2581", U+2581 in the text, byte fallback
    ("bpe_llama2_space_one", " hello"),
    ("bpe_llama2_spaces_two", "  hello"),
    ("bpe_llama2_u2581", "\u2581hello \u2581"),
    ("bpe_llama2_byte_fallback", "\U0001f9ec \U0001d538 \u0f00"),
    # ordinary text
    ("bpe_sentence", "The quick brown fox jumps over the lazy dog."),
    ("bpe_sentence_numbers", "In 2024, 3.5 million people paid $1,234.56 each (about 12%)."),
    ("bpe_chat_like", "User: Hi!\nAssistant: Hello! How can I help you today?\n\nUser: Thanks.\n"),
    ("bpe_dotted_words", "a.b.c.d e-f-g h_i_j k:l;m"),
    # words that are no token but share a 32-bit digest with one in a perfect hash of cl100k's
    # vocabulary as `tokenizers` 1.0.0-rc.3 builds it for gpt35turbo.tokenizer.json (which then
    # emits " HsHdqh" as "__[", " gzNjCj" as "enddate", " Euzqav" as " simply"; see
    # docs/benchmark-history.md): an encoder must compare the bytes, not only a hash
    ("bpe_digest_collisions", "The HsHdqh is here. The gzNjCj is here. The Euzqav is here. The LKxcXt is here."),
    # the same for o200k (gpt4o.tokenizer.json) and Llama 3, each wrong in 20 of 20 fresh
    # processes of tokenizers 1.0.0-rc.3 (its perfect hash is partly random per process)
    ("bpe_digest_collisions_o200k",
     "Pjpnxdi world\nQxwvmhp world\nSaexwkl world\n_hhsvgg world\n[ALivou world"),
    ("bpe_digest_collisions_llama3",
     "hello nXXCmd world\nhello WohnPe world\nhello nYMwPp world\nhello oneZSu world\ndkxvwta world"),
]

# Generated inputs (see gen_sentencepiece.EDGE_GEN): all of those and of
# gen_wordpiece.WP_EDGE_GEN, then these.
_MIB = 1 << 20
_BPE_MIX_UNIT = ("Hello, WORLD! don't DON'T it\u2019s McDonald's iPhone HELLOworld \u00a0Hacker $5 "
                 "123456789 \u0663\u0664 abc123def  \n \t\t x\r\n\r\n...\n\n// c\n"
                 "\u4e2d\u6587\u3000\u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4 \u041f\u0440\u0438\u0432\u0435\u0442 "
                 "\U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f44d\U0001f3fd e\u0301 "
                 "<|endoftext|> \u01c5ungla \u0130stanbul \x00\u2581   ")
BPE_EDGE_GEN = [
    ("bpe_repeat_a_1MiB", [{"unit": "a", "times": _MIB}]),
    ("bpe_repeat_space_1MiB", [{"unit": " ", "times": _MIB}]),
    ("bpe_repeat_space_999998", [{"unit": " ", "times": 999998}]),
    ("bpe_repeat_zhong_1MiB", [{"unit": "\u4e2d", "times": _MIB // 3}]),
    ("bpe_repeat_ab_space_100000", [{"unit": "ab ", "times": 100000}]),
    ("bpe_repeat_newline_100000", [{"unit": "\n", "times": 100000}]),
    ("bpe_repeat_digits_10000", [{"unit": "1234567890", "times": 10000}]),
    ("bpe_repeat_tab_100000", [{"unit": "\t", "times": 100000}]),
    ("bpe_repeat_space_newline_100000", [{"unit": " \n", "times": 100000}]),
    ("bpe_repeat_crlf_100000", [{"unit": "\r\n", "times": 100000}]),
    ("bpe_spaces_100000_then_word", [{"unit": " ", "times": 100000}, {"unit": "x", "times": 1}]),
    ("bpe_repeat_apostrophe_s_100000", [{"unit": "'s", "times": 100000}]),
    ("bpe_repeat_dollar_100000", [{"unit": "$", "times": 100000}]),
    ("bpe_repeat_endoftext_10000", [{"unit": "<|endoftext|>", "times": 10000}]),
    ("bpe_repeat_zwj_family_10000",
     [{"unit": "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", "times": 10000}]),
    ("bpe_repeat_ja_sentence_10000",
     [{"unit": "\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059", "times": 10000}]),
    ("bpe_repeat_camel_10000", [{"unit": "HelloWORLDfooBar", "times": 10000}]),
    ("bpe_mix_2000", [{"unit": _BPE_MIX_UNIT, "times": 2000}]),
    ("bpe_mix_then_tail", [{"unit": "\u4e2d", "times": 2}, {"unit": _BPE_MIX_UNIT, "times": 500},
                           {"unit": " ", "times": 7}]),
]

# Cases whose reference call fails, per configuration: (config, case name) -> a substring of the
# error.  They are left out of that configuration's file and listed in its header
# ("reference_failures").  A failure not listed here, or a listed one that does not happen, stops
# the generator.
KNOWN_FAILURES = {
    # fancy-regex (tiktoken's regex engine) gives up after 1,000,000 backtracking steps; o200k's
    # `\s+(?!\S)|\s+` (not possessive, unlike cl100k's `\s++$`) needs more on >= 999999
    # consecutive spaces or tabs.  tiktoken panics: RuntimeError(StackOverflow).
    ("o200k_base", "bpe_repeat_space_1MiB"): "StackOverflow",
}


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------
def resolve(location, data):
    if location.startswith("repo:"):
        return os.path.join(REPO, location[len("repo:"):])
    if location.startswith("shared:"):
        return os.path.join(data, location[len("shared:"):])
    raise ValueError(location)


def tiktoken_spec(name):
    """The constructor dict of a tiktoken encoding, as tiktoken_ext/openai_public.py defines it
    (pat_str, special_tokens, explicit_n_vocab), without loading (downloading) its ranks."""
    import tiktoken_ext.openai_public as op
    saved = (op.load_tiktoken_bpe, op.data_gym_to_mergeable_bpe_ranks)
    op.load_tiktoken_bpe = lambda *a, **k: {}
    op.data_gym_to_mergeable_bpe_ranks = lambda *a, **k: {}
    try:
        spec = op.ENCODING_CONSTRUCTORS[name]()
    finally:
        op.load_tiktoken_bpe, op.data_gym_to_mergeable_bpe_ranks = saved
    return spec


def summarize_hf(path):
    """A compact summary of a tokenizer.json pipeline (for the header)."""
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    model = dict(j["model"])
    vocab, merges = model.pop("vocab"), model.pop("merges", [])
    model["vocab_size"] = len(vocab)
    model["merges"] = len(merges)
    model["merges_format"] = ("pairs" if merges and isinstance(merges[0], list) else "strings")
    added = j.get("added_tokens") or []

    def brief(t):
        flags = [k for k in ("special", "normalized", "lstrip", "rstrip", "single_word") if t.get(k)]
        return [t["id"], t["content"], flags]

    return {
        "normalizer": j.get("normalizer"),
        "pre_tokenizer": j.get("pre_tokenizer"),
        "model": model,
        "decoder": j.get("decoder"),
        "post_processor": j.get("post_processor"),
        "added_tokens": {
            "count": len(added),
            "special": sum(1 for t in added if t.get("special")),
            "non_special": [brief(t) for t in added if not t.get("special")],
            "first": [brief(t) for t in added[:8]],
            "last": [brief(t) for t in added[-3:]] if len(added) > 8 else [],
        },
        "truncation": j.get("truncation"),
        "padding": j.get("padding"),
    }


class TiktokenRef:
    pieces_key = "pieces_hex"

    def __init__(self, config, data):
        import tiktoken
        import tiktoken.load
        self.version = tiktoken.__version__
        spec = tiktoken_spec(config["encoding"])
        if config["loader"] == "tiktoken.data_gym":
            enc_path = resolve(config["encoder_json"], data)
            bpe_path = resolve(config["vocab_bpe"], data)
            ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
                vocab_bpe_file=bpe_path, encoder_json_file=enc_path)
            self.model_path = enc_path
            self.extra_header = {"vocab_bpe_sha256": spg.sha256_file(bpe_path)}
            location = config["encoder_json"]
        else:
            self.model_path = resolve(config["file"], data)
            ranks = tiktoken.load.load_tiktoken_bpe(self.model_path)
            self.extra_header = {}
            location = config["file"]
        self.location = location
        self.pat_str = spec["pat_str"]
        self.special_tokens = dict(spec["special_tokens"])
        self.enc = tiktoken.Encoding(config["encoding"], pat_str=self.pat_str,
                                     mergeable_ranks=ranks, special_tokens={})
        self.enc_special = tiktoken.Encoding(config["encoding"] + "+specials", pat_str=self.pat_str,
                                             mergeable_ranks=ranks,
                                             special_tokens=self.special_tokens)
        self.header = {
            "tiktoken": self.version,
            "encoding": config["encoding"],
            "pat_str": self.pat_str,
            "special_tokens": self.special_tokens,
            "explicit_n_vocab": spec.get("explicit_n_vocab"),
            "n_ranks": len(ranks),
            "encode": "encode_ordinary",
        }
        self.header.update(self.extra_header)

    def run(self, text):
        ids = self.enc.encode_ordinary(text)
        tb = self.enc.decode_tokens_bytes(ids)
        if b"".join(tb) != text.encode("utf-8"):
            raise AssertionError("token bytes do not concatenate to the text: %r" % text[:80])
        spans = []
        pos = 0
        for b in tb:
            spans.append([pos, pos + len(b)])
            pos += len(b)
        return ids, [b.hex() for b in tb], spans, self.enc.decode(ids)

    def extra(self, text, big):
        """allowed_special_ids for texts holding a special token string of this encoding."""
        if not any(s in text for s in self.special_tokens):
            return {}
        ids = self.enc_special.encode(text, allowed_special="all")
        if big:
            return {"allowed_special_n_ids": len(ids),
                    "allowed_special_ids_sha256": spg.ids_digest(ids)}
        return {"allowed_special_ids": ids}


class HfRef(wpg.HfRef):
    """run() and extra() (special_ids) as gen_wordpiece's."""

    def __init__(self, config, data):
        import tokenizers
        self.version = tokenizers.__version__
        self.model_path = resolve(config["file"], data)
        self.location = config["file"]
        self.tok = wpg.load_tokenizer_json(self.model_path)
        self.header = {"tokenizers": self.version, "pipeline": summarize_hf(self.model_path)}


def make_ref(cname, config, data):
    ref = (TiktokenRef if config["loader"].startswith("tiktoken") else HfRef)(config, data)
    header = {
        "name": cname,
        "model": os.path.basename(ref.model_path),
        "model_sha256": spg.sha256_file(ref.model_path),
        "format": FORMAT,
        "model_location": ref.location,
        "config": config,
    }
    header.update(ref.header)
    ref.header = header
    return ref


def main():
    spg.run_generator(__doc__, "tests/golden/gen_bpe.py", "bpe", CONFIGS, make_ref,
                      spg.EDGE_TEXT + wpg.WP_EDGE_TEXT + BPE_EDGE_TEXT,
                      spg.EDGE_GEN + wpg.WP_EDGE_GEN + BPE_EDGE_GEN,
                      [("tiktoken", EXPECTED_TIKTOKEN), ("tokenizers", EXPECTED_TOKENIZERS)],
                      known_failures=KNOWN_FAILURES)


if __name__ == "__main__":
    main()
