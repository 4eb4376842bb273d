//! Greedy longest-match-first, as the reference defines WordPiece: from each position, the
//! longest entry that starts there. One prefix walk of the trie finds it — every entry that is a
//! prefix of the rest of the word, shortest first, so the last one is the longest — which costs
//! the length of the longest match attempt rather than one hash lookup per candidate length.

use super::WordPiece;
use crate::models::token::WordToken;

/// See [`WordPiece::encode_word`].
#[inline]
pub fn encode_word(model: &WordPiece, word: &[u8], out: &mut Vec<WordToken>) -> bool {
    let kernels = model.kernels();
    let before = out.len();
    let mut trie = model.initial_trie();
    let mut start = 0;
    while start < word.len() {
        let mut longest = None;
        kernels.trie_prefix_walk(trie, &word[start..], |len, id| longest = Some((len, id)));
        let Some((len, id)) = longest else {
            out.truncate(before);
            return false;
        };
        let end = start + len as usize;
        out.push(WordToken {
            id,
            start: start as u32,
            end: end as u32,
        });
        start = end;
        trie = model.continuation_trie();
    }
    true
}
