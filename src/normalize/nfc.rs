//! NFC with the alignments Hugging Face `tokenizers` gives it: each output character maps to
//! the original span of the first input character it replaced (a composed character keeps the
//! span of its base only, as `NormalizedString::transform` does), an inserted one to the span
//! of the character before it. NFC comes from `unicode-normalization-alignments`, the crate the
//! reference uses, so the Unicode version is the reference's.

use unicode_normalization_alignments::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// Whether `text` is certainly NFC already (ASCII always is).
pub fn is_nfc_already(text: &str) -> bool {
    text.is_ascii() || is_nfc_quick(text.chars()) == IsNormalized::Yes
}

/// The NFC form of `text`, and for each of its bytes the `[start, end)` span in `text` (plus
/// `base`) it comes from.
pub fn nfc_aligned(text: &str, base: u32, out: &mut String, spans: &mut Vec<(u32, u32)>) {
    out.clear();
    spans.clear();
    // Input characters consumed so far, and the span of the last one.
    let mut input = text.char_indices().peekable();
    let mut last = (base, base);
    for (c, change) in text.nfc() {
        let span = if change > 0 {
            last
        } else {
            let (i, ch) = input
                .next()
                .expect("NFC consumes no more characters than there are");
            let span = (base + i as u32, base + (i + ch.len_utf8()) as u32);
            for _ in 0..(-change) {
                input.next();
            }
            span
        };
        last = span;
        out.push(c);
        spans.extend(std::iter::repeat_n(span, c.len_utf8()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composition_keeps_the_base_span() {
        let (mut out, mut spans) = (String::new(), Vec::new());
        nfc_aligned("ae\u{301}b", 10, &mut out, &mut spans);
        assert_eq!(out, "aéb");
        assert_eq!(spans, vec![(10, 11), (11, 12), (11, 12), (14, 15)]);
        assert!(is_nfc_already("abc") && !is_nfc_already("e\u{301}"));
    }
}
