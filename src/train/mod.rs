//! BPE training (issue 25): the greedy O(N log M) trainer — unique pre-tokens with their counts
//! as linked lists of symbols, the occurrences of each pair, a max-heap of pairs by count — with
//! merges identical to Hugging Face's `BpeTrainer`, the paper's non-overlapping counts, and the
//! exact search for the optimal merge sequence on tiny inputs. Empty until that issue lands.
