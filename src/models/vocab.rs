//! A SentencePiece vocabulary: pieces in id order with their scores and kinds, and the
//! piece → id lookups `sentencepiece` performs (reserved pieces first, then the others).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use simdtok_kernels::Kernels;

use crate::load::spm_proto::{PieceKind, SpmPiece, piece_of_byte};

/// Hashes byte strings with the CRC-32C kernel of one tier (the same value on every tier).
#[derive(Clone, Copy)]
pub struct Crc32cState(&'static Kernels);

impl Crc32cState {
    /// Hashing with the CRC-32C kernel of `kernels`.
    pub fn new(kernels: &'static Kernels) -> Crc32cState {
        Crc32cState(kernels)
    }
}

/// The hasher of [`Crc32cState`].
pub struct Crc32cHasher {
    kernels: &'static Kernels,
    crc: u32,
}

impl BuildHasher for Crc32cState {
    type Hasher = Crc32cHasher;
    fn build_hasher(&self) -> Crc32cHasher {
        Crc32cHasher {
            kernels: self.0,
            crc: 0,
        }
    }
}

impl Hasher for Crc32cHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.crc = self.kernels.crc32c_append(self.crc, bytes);
    }
    fn finish(&self) -> u64 {
        // Spread the 32 bits over 64 so that the table's bucket and tag bits both vary.
        (self.crc as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// A piece → id table keyed by the piece's bytes.
pub type PieceMap = HashMap<Box<[u8]>, u32, Crc32cState>;

/// The pieces of a model and their lookups.
#[derive(Debug)]
pub struct Vocab {
    pieces: Vec<SpmPiece>,
    /// Each piece's kind, apart: encoding reads it per segment, and the pieces (40 bytes each,
    /// 10 MB for a vocabulary of 250 000) are too large to stay in the CPU's caches.
    kinds: Vec<PieceKind>,
    /// NORMAL, USER_DEFINED and UNUSED pieces (`pieces_` in sentencepiece).
    normal: PieceMap,
    /// UNKNOWN, CONTROL and BYTE pieces (`reserved_id_map_`).
    reserved: PieceMap,
    unk_id: Option<u32>,
    /// The id of `<0xXX>` for each byte, when the model has byte pieces.
    byte_ids: Option<[u32; 256]>,
}

impl std::fmt::Debug for Crc32cState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Crc32cState")
    }
}

impl Vocab {
    /// Indexes `pieces` (already validated by the loader: unique, at most one unknown piece).
    pub fn new(pieces: Vec<SpmPiece>, unk_id: Option<u32>, kernels: &'static Kernels) -> Vocab {
        let state = Crc32cState(kernels);
        let mut normal = PieceMap::with_capacity_and_hasher(pieces.len(), state);
        let mut reserved = PieceMap::with_hasher(state);
        for (id, p) in pieces.iter().enumerate().filter(|(_, p)| p.indexed) {
            let key: Box<[u8]> = p.text.as_bytes().into();
            match p.kind {
                PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused => {
                    normal.insert(key, id as u32);
                }
                PieceKind::Unknown | PieceKind::Control | PieceKind::Byte => {
                    reserved.insert(key, id as u32);
                }
            }
        }
        let byte_ids = pieces.iter().any(|p| p.kind == PieceKind::Byte).then(|| {
            std::array::from_fn(|b| {
                reserved
                    .get(piece_of_byte(b as u8).as_bytes())
                    .copied()
                    .expect("the loader checked that all 256 byte pieces exist")
            })
        });
        Vocab {
            kinds: pieces.iter().map(|p| p.kind).collect(),
            pieces,
            normal,
            reserved,
            unk_id,
            byte_ids,
        }
    }

    /// The number of pieces.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// Whether there are no pieces (never, for a loaded model).
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The pieces, in id order.
    pub fn pieces(&self) -> &[SpmPiece] {
        &self.pieces
    }

    /// The piece of `id`.
    pub fn piece(&self, id: u32) -> &SpmPiece {
        &self.pieces[id as usize]
    }

    /// The kind of `id`; [`Vocab::UNKNOWN`] counts as the unknown piece.
    #[inline]
    pub fn kind(&self, id: u32) -> PieceKind {
        self.kinds
            .get(id as usize)
            .copied()
            .unwrap_or(PieceKind::Unknown)
    }

    /// The unknown piece's id, if the model has one (a byte-fallback model may not).
    pub fn unk_id(&self) -> Option<u32> {
        self.unk_id
    }

    /// The id a segment gets for text no piece covers: the unknown piece, or [`Vocab::UNKNOWN`].
    pub fn unknown_segment_id(&self) -> u32 {
        self.unk_id.unwrap_or(Vocab::UNKNOWN)
    }

    /// Stands for "unknown" in segments of models without an unknown piece; never output.
    pub const UNKNOWN: u32 = u32::MAX;

    /// The id of a NORMAL, USER_DEFINED or UNUSED piece.
    #[inline]
    pub fn normal_id(&self, piece: &[u8]) -> Option<u32> {
        self.normal.get(piece).copied()
    }

    /// `PieceToId` without the unknown fallback: reserved pieces first, then the others.
    pub fn id_of(&self, piece: &[u8]) -> Option<u32> {
        self.reserved
            .get(piece)
            .or_else(|| self.normal.get(piece))
            .copied()
    }

    /// The id of the byte piece `<0xXX>` of `b` (byte-fallback models).
    pub fn byte_id(&self, b: u8) -> Option<u32> {
        self.byte_ids.map(|ids| ids[b as usize])
    }
}
