//! tiktoken rank files (`*.tiktoken`: one `base64(token) rank` per line, the rank is the id) and
//! GPT-2's `encoder.json` + `vocab.bpe`, read as tiktoken reads them.

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// (token bytes, rank) pairs.
pub type Ranks = Vec<(Vec<u8>, u32)>;

/// The (token bytes, rank) pairs of a rank file, as `tiktoken.load.load_tiktoken_bpe` reads it:
/// empty lines skipped, fields split on whitespace.
pub fn parse_rank_file(bytes: &[u8]) -> Result<Ranks, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        format!("line {line}: invalid UTF-8 in a tiktoken rank file")
    })?;
    let mut ranks = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut fields = line.split_whitespace();
        let (Some(token), Some(rank), None) = (fields.next(), fields.next(), fields.next()) else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(format!(
                "line {}: expected `base64-token rank`, got {:?}",
                n + 1,
                truncate(line)
            ));
        };
        let bytes = STANDARD.decode(token).map_err(|e| {
            format!(
                "line {}: bad base64 token {:?}: {e}",
                n + 1,
                truncate(token)
            )
        })?;
        let rank: u32 = rank
            .parse()
            .ok()
            .filter(|&r| r < u32::MAX)
            .ok_or_else(|| format!("line {}: bad rank {:?}", n + 1, truncate(rank)))?;
        ranks.push((bytes, rank));
    }
    if ranks.is_empty() {
        return Err("the rank file has no tokens".into());
    }
    Ok(ranks)
}

/// GPT-2's byte ↔ printable-character map (`bytes_to_unicode`): printable Latin-1 bytes stand
/// for themselves, the others for U+0100 onwards in byte order.
pub fn byte_level_alphabet() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..=255u8 {
        let printable = matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        table[b as usize] = if printable {
            b as char
        } else {
            let c = char::from_u32(next).expect("below U+0200");
            next += 1;
            c
        };
    }
    table
}

/// The byte each character of GPT-2's byte-level alphabet stands for: a table by code point
/// (the alphabet ends below U+0144), so decoding a vocabulary of 200 000 token strings costs a
/// load per character, not a hash.
pub struct ByteLevelInverse(Vec<Option<u8>>);

impl ByteLevelInverse {
    /// The inverse of [`byte_level_alphabet`].
    pub fn new() -> ByteLevelInverse {
        let alphabet = byte_level_alphabet();
        let size = alphabet.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        let mut table = vec![None; size];
        for (b, &c) in alphabet.iter().enumerate() {
            table[c as usize] = Some(b as u8);
        }
        ByteLevelInverse(table)
    }

    /// The byte `c` stands for, `None` outside the alphabet.
    #[inline]
    fn byte(&self, c: char) -> Option<u8> {
        self.0.get(c as usize).copied().flatten()
    }
}

impl Default for ByteLevelInverse {
    fn default() -> Self {
        ByteLevelInverse::new()
    }
}

/// The bytes a byte-level token string stands for; `None` if it has a character outside the
/// alphabet.
pub fn byte_level_decode(token: &str, inverse: &ByteLevelInverse) -> Option<Vec<u8>> {
    // Each character is one byte: at most `token.len()` of them.
    let mut bytes = Vec::with_capacity(token.len());
    for c in token.chars() {
        bytes.push(inverse.byte(c)?);
    }
    Some(bytes)
}

/// GPT-2's `encoder.json` (byte-level token strings → ids) and the merges of its `vocab.bpe`,
/// as tiktoken's `data_gym_to_mergeable_bpe_ranks` reads them: the ranks are the 256 single
/// bytes in alphabet order, then each merge's result in file order — and they must equal the
/// encoder's ids, which tiktoken asserts. `<|endoftext|>` is the one special token.
pub fn parse_gpt2(
    encoder_json: &[u8],
    vocab_bpe: &[u8],
) -> Result<(Ranks, Vec<(String, u32)>), String> {
    let encoder: HashMap<String, u32> = serde_json::from_slice(encoder_json)
        .map_err(|e| format!("encoder.json is not an object of token ids: {e}"))?;
    let alphabet = byte_level_alphabet();
    let inverse = ByteLevelInverse::new();
    let merges = std::str::from_utf8(vocab_bpe).map_err(|_| "vocab.bpe is not UTF-8")?;
    // The ranks tiktoken derives: bytes first, then merges (the first line is a version header).
    // Single bytes: the printable ones (those that stand for themselves) first, in byte order.
    let printable = |b: u8| alphabet[b as usize] == b as char;
    let byte_order = (0..=255u8)
        .filter(|&b| printable(b))
        .chain((0..=255u8).filter(|&b| !printable(b)));
    let mut derived: HashMap<Vec<u8>, u32> = byte_order
        .enumerate()
        .map(|(rank, b)| (vec![b], rank as u32))
        .collect();
    for (n, line) in merges.lines().enumerate().skip(1) {
        if line.is_empty() {
            continue;
        }
        let (a, b) = line
            .split_once(' ')
            .ok_or_else(|| format!("vocab.bpe line {}: not a merge `a b`", n + 1))?;
        let mut bytes = byte_level_decode(a, &inverse)
            .ok_or_else(|| format!("vocab.bpe line {}: not byte-level text", n + 1))?;
        bytes.extend(
            byte_level_decode(b, &inverse)
                .ok_or_else(|| format!("vocab.bpe line {}: not byte-level text", n + 1))?,
        );
        let rank = derived.len() as u32;
        derived.entry(bytes).or_insert(rank);
    }
    let mut ranks = Vec::with_capacity(encoder.len());
    let mut specials = Vec::new();
    for (token, &id) in &encoder {
        if token == "<|endoftext|>" {
            specials.push((token.clone(), id));
            continue;
        }
        let bytes = byte_level_decode(token, &inverse)
            .ok_or_else(|| format!("encoder.json: {token:?} is not byte-level text"))?;
        if derived.get(&bytes) != Some(&id) {
            return Err(format!(
                "encoder.json and vocab.bpe disagree on {token:?} (id {id}): not a GPT-2 pair"
            ));
        }
        ranks.push((bytes, id));
    }
    if ranks.len() != derived.len() {
        return Err(format!(
            "encoder.json has {} tokens, vocab.bpe implies {}",
            ranks.len(),
            derived.len()
        ));
    }
    Ok((ranks, specials))
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lines() {
        let r = parse_rank_file(b"IQ== 0\nIg== 1\n\naGVsbG8= 2\n").unwrap();
        assert_eq!(
            r,
            vec![
                (b"!".to_vec(), 0),
                (b"\"".to_vec(), 1),
                (b"hello".to_vec(), 2)
            ]
        );
        assert!(
            parse_rank_file(b"IQ== 0\n%%% 1\n")
                .unwrap_err()
                .starts_with("line 2")
        );
        assert!(parse_rank_file(b"IQ== x\n").unwrap_err().contains("rank"));
        assert!(
            parse_rank_file(b"IQ==\n")
                .unwrap_err()
                .starts_with("line 1")
        );
    }

    #[test]
    fn alphabet_is_gpt2s() {
        let a = byte_level_alphabet();
        assert_eq!(a[b'A' as usize], 'A');
        assert_eq!(a[b' ' as usize], 'Ġ');
        assert_eq!(a[b'\n' as usize], 'Ċ');
        assert_eq!(a[0], 'Ā');
    }
}
