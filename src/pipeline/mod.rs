//! Pipelines: normalizer + model + post-processing, one per tokenizer family.

pub mod added_tokens;
pub mod hf_bpe;
pub mod hf_spm_bpe;
pub(crate) mod sink;
pub mod spm;
pub mod tiktoken;
pub mod wordpiece;

use crate::encoding::Encoding;
use sink::Sink;

/// What a pipeline provides — encoding into a [`Sink`], and the string of a token — and the entry
/// points that follow from it: ids into a reused vector (no offsets computed), or a whole
/// [`Encoding`].
pub(crate) trait Pipeline {
    /// Encodes `text` into `sink`.
    fn encode_to<S: Sink>(&self, text: &str, sink: &mut S);

    /// Token `id` as text, as the reference shows it.
    fn token_string(&self, id: u32) -> String;

    /// The ids of `text` into `ids` (cleared first).
    fn encode_ids_into(&self, text: &str, ids: &mut Vec<u32>) {
        ids.clear();
        self.encode_to(text, ids);
    }

    /// Ids, offsets and (when `pieces`) token strings into `out` (cleared first).
    fn encode_into(&self, text: &str, out: &mut Encoding, pieces: bool) {
        out.clear();
        let mut sink = sink::TakingEncoding {
            encoding: out,
            taken: Vec::new(),
        };
        self.encode_to(text, &mut sink);
        let taken = sink.taken;
        if pieces {
            out.pieces = out.ids.iter().map(|&id| self.token_string(id)).collect();
            for (i, text) in taken {
                out.pieces[i] = text;
            }
        }
    }
}
