//! The inputs every kernel sees: padded hand seeds, every length at every misalignment, single
//! needles at every position, every byte value, UTF-8 straddling vector boundaries, and texts
//! made of trie keys. Each input comes with a `from` position (where a search starts).

use aligned_vec::{AVec, ConstAlign};

use crate::fixtures::{FIXTURES, Rng};

/// Receives `(input, from)`; an `Err` stops the run with the mismatch description.
pub type Sink<'a> = dyn FnMut(&[u8], usize) -> Result<(), String> + 'a;

/// The hand seeds: the shapes tokenizers meet, and the bytes that break naive code.
pub const SEEDS: &[&[u8]] = &[
    b"",
    b"a",
    b" ",
    b"hello world",
    b"Hello, World! It's 2026... (really?)",
    b"  leading and trailing  \t\n",
    b"tabs\tand\nnew\r\nlines\x0b\x0c",
    b"\x00\x01\x1f\x7f control \x00",
    "naïve café — “quoted” ▁the 日本語のテキスト 🎉👩‍👩‍👧".as_bytes(),
    b"\x80\xbf\xc0\xc1\xf5\xff invalid \xe2\x82",
    b"0123456789 3.14159 1,000,000",
    b"fn main() { println!(\"{}\", x[0] + y); } // code",
    b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

/// Bytes the seeds are padded with: letters, spaces, lead and continuation bytes, NUL.
const FILLERS: &[u8] = &[b'x', b' ', 0xE3, 0x80, 0x00, b'.'];

/// Every seed with 0..=130 filler bytes before and 0..=130 after; `from` = start of the seed.
pub fn padded_seeds(sink: &mut Sink) -> Result<(), String> {
    let mut buf = Vec::with_capacity(400);
    for (i, seed) in SEEDS.iter().enumerate() {
        let filler = FILLERS[i % FILLERS.len()];
        for before in 0..=130 {
            for after in 0..=130 {
                buf.clear();
                buf.resize(before, filler);
                buf.extend_from_slice(seed);
                buf.resize(before + seed.len() + after, filler);
                sink(&buf, before)?;
            }
        }
    }
    Ok(())
}

/// Text-like bytes: words, spaces, punctuation, multi-byte UTF-8 and the odd raw byte.
pub fn mixed_text(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        match rng.below(10) {
            0..=4 => out.extend((0..1 + rng.below(8)).map(|_| b'a' + rng.below(26) as u8)),
            5 => out.push(b' '),
            6 => out.push(b"\t\n.,;!?()'\"-"[rng.below(12)]),
            7 => out.extend(["é", "€", "▁", "日本", "🎉", "ß"][rng.below(6)].as_bytes()),
            8 => out.push(b'0' + rng.below(10) as u8),
            _ => out.push(rng.byte()),
        }
    }
    out.truncate(len);
    out
}

/// Every length 0..=300 at every start offset 0..=63 of a 64-byte-aligned buffer, for two kinds
/// of content (text-like and uniformly random bytes).
pub fn lengths_and_alignments(sink: &mut Sink) -> Result<(), String> {
    let mut random = Rng::new(3);
    let contents = [
        mixed_text(364, 1),
        (0..364).map(|_| random.byte()).collect(),
    ];
    for content in &contents {
        let aligned: AVec<u8, ConstAlign<64>> = AVec::from_slice(64, content);
        assert_eq!(aligned.as_ptr() as usize % 64, 0);
        for offset in 0..=63 {
            for len in 0..=300 {
                let input = &aligned[offset..offset + len];
                sink(input, len / 3)?;
            }
        }
    }
    Ok(())
}

/// One needle byte at every position of every length 0..=300 (and no needle), in a haystack of
/// letters and in one of spaces: searches must find exactly that position, at every tail length.
pub fn needles(sink: &mut Sink) -> Result<(), String> {
    const NEEDLES: &[u8] = &[b' ', b'a', 0xE2, 0x80, b'.', 0x00, 0xFF, b'7'];
    let mut buf = Vec::with_capacity(301);
    for hay in [b'a', b' '] {
        for len in 0..=300usize {
            for pos in 0..=len {
                buf.clear();
                buf.resize(len, hay);
                if pos < len {
                    buf[pos] = NEEDLES[(pos + len) % NEEDLES.len()];
                }
                sink(&buf, 0)?;
            }
        }
    }
    Ok(())
}

/// Every byte value, at every position of buffers around each vector width, plus all 256 values
/// in a row (forwards and backwards) at several offsets.
pub fn byte_values(sink: &mut Sink) -> Result<(), String> {
    const LENS: &[usize] = &[1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129];
    let mut buf = Vec::with_capacity(130);
    for v in 0..=255u8 {
        for &len in LENS {
            for pos in 0..len {
                buf.clear();
                buf.resize(len, if v == b'a' { b' ' } else { b'a' });
                buf[pos] = v;
                sink(&buf, 0)?;
            }
        }
    }
    let ascending: Vec<u8> = (0..=255u8).collect();
    let descending: Vec<u8> = (0..=255u8).rev().collect();
    for all in [ascending, descending] {
        for start in 0..64 {
            sink(&all[start..], 0)?;
            sink(&all[..all.len() - start], start)?;
        }
    }
    Ok(())
}

/// Multi-byte characters cut by every 16-, 32- and 64-byte boundary at every split point.
pub fn utf8_straddling(sink: &mut Sink) -> Result<(), String> {
    const CHARS: &[&str] = &["é", "€", "▁", "日", "🎉", "\u{10FFFF}", "\u{80}"];
    let mut buf = Vec::with_capacity(200);
    for boundary in [16, 32, 48, 64, 96, 128] {
        for c in CHARS {
            let c = c.as_bytes();
            for split in 1..c.len() {
                for filler in [b'a', b' '] {
                    buf.clear();
                    buf.resize(boundary - split, filler);
                    buf.extend_from_slice(c);
                    buf.extend_from_slice(c);
                    buf.resize(boundary + 40, filler);
                    sink(&buf, boundary - split)?;
                }
            }
        }
    }
    Ok(())
}

/// Texts made of trie keys (and the odd stray byte), so walks go deep and end everywhere.
pub fn key_texts(sink: &mut Sink) -> Result<(), String> {
    for (t, fixture) in FIXTURES.tries.iter().enumerate() {
        let mut rng = Rng::new(100 + t as u64);
        for n in 0..200 {
            let mut text = Vec::new();
            let words = 1 + rng.below(12);
            for _ in 0..words {
                text.extend_from_slice(&fixture.keys[rng.below(fixture.keys.len())]);
                if rng.below(4) == 0 {
                    text.push(rng.byte());
                }
            }
            sink(&text, n % (text.len() + 1))?;
        }
    }
    Ok(())
}

/// Everything above, in order.
pub fn all(sink: &mut Sink) -> Result<(), String> {
    padded_seeds(sink)?;
    lengths_and_alignments(sink)?;
    needles(sink)?;
    byte_values(sink)?;
    utf8_straddling(sink)?;
    key_texts(sink)
}
