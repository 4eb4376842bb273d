//! SentencePiece `.model` files: the `ModelProto` protobuf (proto2), declared by hand with the
//! fields encoding needs, and read into plain Rust values.
//!
//! Field numbers and defaults follow `sentencepiece_model.proto`. Enumerations are read as raw
//! integers so that an unknown value is an error here rather than silently a default.

use prost::Message;

/// `ModelProto.SentencePiece`.
#[derive(Clone, PartialEq, Message)]
pub struct PieceProto {
    #[prost(string, optional, tag = "1")]
    pub piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub score: Option<f32>,
    /// `Type`: NORMAL = 1 (default), UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5,
    /// BYTE = 6.
    #[prost(int32, optional, tag = "3")]
    pub kind: Option<i32>,
}

/// `TrainerSpec`: only the fields that matter when encoding and decoding.
#[derive(Clone, PartialEq, Message)]
pub struct TrainerSpecProto {
    /// UNIGRAM = 1 (default), BPE = 2, WORD = 3, CHAR = 4.
    #[prost(int32, optional, tag = "3")]
    pub model_type: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub vocab_size: Option<i32>,
    #[prost(bool, optional, tag = "24")]
    pub treat_whitespace_as_suffix: Option<bool>,
    #[prost(bool, optional, tag = "26")]
    pub allow_whitespace_only_pieces: Option<bool>,
    #[prost(bool, optional, tag = "25")]
    pub split_digits: Option<bool>,
    #[prost(bool, optional, tag = "35")]
    pub byte_fallback: Option<bool>,
    #[prost(int32, optional, tag = "40")]
    pub unk_id: Option<i32>,
    #[prost(int32, optional, tag = "41")]
    pub bos_id: Option<i32>,
    #[prost(int32, optional, tag = "42")]
    pub eos_id: Option<i32>,
    #[prost(int32, optional, tag = "43")]
    pub pad_id: Option<i32>,
    #[prost(string, optional, tag = "45")]
    pub unk_piece: Option<String>,
    #[prost(string, optional, tag = "46")]
    pub bos_piece: Option<String>,
    #[prost(string, optional, tag = "47")]
    pub eos_piece: Option<String>,
    #[prost(string, optional, tag = "44")]
    pub unk_surface: Option<String>,
}

/// `NormalizerSpec`.
#[derive(Clone, PartialEq, Message)]
pub struct NormalizerSpecProto {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub precompiled_charsmap: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "3")]
    pub add_dummy_prefix: Option<bool>,
    #[prost(bool, optional, tag = "4")]
    pub remove_extra_whitespaces: Option<bool>,
    #[prost(bool, optional, tag = "5")]
    pub escape_whitespaces: Option<bool>,
}

/// `ModelProto`.
#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pub pieces: Vec<PieceProto>,
    #[prost(message, optional, tag = "2")]
    pub trainer_spec: Option<TrainerSpecProto>,
    #[prost(message, optional, tag = "3")]
    pub normalizer_spec: Option<NormalizerSpecProto>,
    #[prost(message, optional, tag = "5")]
    pub denormalizer_spec: Option<NormalizerSpecProto>,
}

/// The kind of a vocabulary piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceKind {
    /// An ordinary piece.
    Normal,
    /// The unknown piece (exactly one per model).
    Unknown,
    /// A control symbol (`<s>`, `</s>`, …): never produced from text.
    Control,
    /// A user-defined symbol: matched whole, never split or normalized.
    UserDefined,
    /// A piece that exists but is never produced.
    Unused,
    /// A byte piece `<0xXX>` for byte fallback.
    Byte,
}

impl PieceKind {
    fn from_proto(v: i32) -> Option<PieceKind> {
        Some(match v {
            1 => PieceKind::Normal,
            2 => PieceKind::Unknown,
            3 => PieceKind::Control,
            4 => PieceKind::UserDefined,
            5 => PieceKind::Unused,
            6 => PieceKind::Byte,
            _ => return None,
        })
    }
}

/// The model algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpmAlgorithm {
    /// Unigram language model (Viterbi).
    Unigram,
    /// Score-ordered BPE merges.
    Bpe,
}

/// One piece of the vocabulary, in id order.
#[derive(Clone, Debug, PartialEq)]
pub struct SpmPiece {
    pub text: String,
    pub score: f32,
    pub kind: PieceKind,
    /// False for a piece `sentencepiece` leaves out of its lookups (a raw NUL piece in a
    /// byte-fallback model): it keeps its id but is never matched.
    pub indexed: bool,
}

/// What the normalizer needs.
#[derive(Clone, Debug, PartialEq)]
pub struct SpmNormalizerSpec {
    pub name: String,
    pub precompiled_charsmap: Vec<u8>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
}

impl SpmNormalizerSpec {
    fn from_proto(p: Option<&NormalizerSpecProto>) -> SpmNormalizerSpec {
        let d = NormalizerSpecProto::default();
        let p = p.unwrap_or(&d);
        SpmNormalizerSpec {
            name: p.name.clone().unwrap_or_default(),
            precompiled_charsmap: p.precompiled_charsmap.clone().unwrap_or_default(),
            add_dummy_prefix: p.add_dummy_prefix.unwrap_or(true),
            remove_extra_whitespaces: p.remove_extra_whitespaces.unwrap_or(true),
            escape_whitespaces: p.escape_whitespaces.unwrap_or(true),
        }
    }
}

/// A SentencePiece model as read from its file, checked the way `sentencepiece` checks it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpmModelFile {
    pub algorithm: SpmAlgorithm,
    pub pieces: Vec<SpmPiece>,
    pub normalizer: SpmNormalizerSpec,
    /// Present when the file has a denormalizer with rules.
    pub denormalizer: Option<SpmNormalizerSpec>,
    pub treat_whitespace_as_suffix: bool,
    pub byte_fallback: bool,
    /// The unknown piece; a byte-fallback model may have none.
    pub unk_id: Option<u32>,
    /// What decoding writes for the unknown piece (default " ⁇ ").
    pub unk_surface: String,
    /// The pieces that begin and end a sentence, by name (`trainer_spec.bos_piece` and
    /// `eos_piece`, default `<s>` and `</s>`): SentencePiece's `bos_id()` and `eos_id()` are
    /// theirs when they are control pieces.
    pub bos_piece: String,
    pub eos_piece: String,
}

/// `sentencepiece` refuses pieces this long (`kMaxPieceSize`).
const MAX_PIECE_BYTES: usize = 8000;

/// Parses and validates a `.model` file's bytes; the error says what is wrong (the caller adds
/// the file name).
pub fn parse(bytes: &[u8]) -> Result<SpmModelFile, String> {
    if bytes.is_empty() {
        return Err("the file is empty".into());
    }
    let proto =
        ModelProto::decode(bytes).map_err(|e| format!("not a SentencePiece ModelProto: {e}"))?;
    if proto.pieces.is_empty() {
        return Err("the model has no pieces (not a SentencePiece model?)".into());
    }
    let trainer = proto.trainer_spec.clone().unwrap_or_default();
    let algorithm = match trainer.model_type.unwrap_or(1) {
        1 => SpmAlgorithm::Unigram,
        2 => SpmAlgorithm::Bpe,
        3 => return Err("model type WORD is not supported (only UNIGRAM and BPE are)".into()),
        4 => return Err("model type CHAR is not supported (only UNIGRAM and BPE are)".into()),
        t => return Err(format!("unknown model type {t}")),
    };
    let byte_fallback = trainer.byte_fallback.unwrap_or(false);
    // BPE keeps every piece in one map, unigram reserved pieces apart (`InitializePieces`), so
    // which duplicates are refused depends on the model type.
    let one_namespace = algorithm == SpmAlgorithm::Bpe;
    let mut pieces = Vec::with_capacity(proto.pieces.len());
    let mut unk_id = None;
    let mut seen_normal = std::collections::HashSet::new();
    let mut seen_reserved = std::collections::HashSet::new();
    let mut bytes_found = [false; 256];
    for (i, p) in proto.pieces.iter().enumerate() {
        let text = p.piece.clone().unwrap_or_default();
        if text.is_empty() {
            return Err(format!("piece #{i} is empty"));
        }
        if text.len() >= MAX_PIECE_BYTES {
            return Err(format!(
                "piece #{i} is {} bytes long (the limit is {MAX_PIECE_BYTES})",
                text.len()
            ));
        }
        let raw = p.kind.unwrap_or(1);
        let mut kind = PieceKind::from_proto(raw)
            .ok_or_else(|| format!("piece #{i} has unknown type {raw}"))?;
        let score = p.score.unwrap_or(0.0);
        if algorithm == SpmAlgorithm::Unigram && !score.is_finite() {
            return Err(format!(
                "piece #{i} {text:?} has a score that is NaN or infinite"
            ));
        }
        // A raw NUL piece in a byte-fallback model is a known conversion artefact: the reference
        // turns it into an UNUSED piece and leaves it out of every lookup.
        if byte_fallback && text == "\0" {
            kind = PieceKind::Unused;
            pieces.push(SpmPiece {
                text,
                score,
                kind,
                indexed: false,
            });
            continue;
        }
        if text.contains('\0') {
            return Err(format!("piece #{i} {text:?} contains a NUL character"));
        }
        let normal = matches!(
            kind,
            PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused
        );
        let fresh = if normal || one_namespace {
            seen_normal.insert(text.clone())
        } else {
            seen_reserved.insert(text.clone())
        };
        if !fresh {
            return Err(format!("piece #{i} {text:?} is defined twice"));
        }
        match kind {
            PieceKind::Unknown if unk_id.is_some() => {
                return Err(format!("piece #{i}: a second unknown piece"));
            }
            PieceKind::Unknown => unk_id = Some(i as u32),
            PieceKind::Byte => {
                if !byte_fallback {
                    return Err(format!(
                        "byte piece {text:?} although byte_fallback is false"
                    ));
                }
                let b = byte_of_piece(&text)
                    .ok_or_else(|| format!("byte piece #{i} {text:?} is not <0xXX>"))?;
                bytes_found[b as usize] = true;
            }
            _ => {}
        }
        pieces.push(SpmPiece {
            text,
            score,
            kind,
            indexed: true,
        });
    }
    if unk_id.is_none() && !byte_fallback {
        return Err("the model defines no unknown piece".into());
    }
    if byte_fallback && bytes_found.iter().any(|f| !f) {
        return Err("byte_fallback is true but the 256 byte pieces are not all present".into());
    }
    let denormalizer = proto
        .denormalizer_spec
        .as_ref()
        .filter(|d| {
            d.precompiled_charsmap
                .as_ref()
                .is_some_and(|c| !c.is_empty())
        })
        .map(|d| SpmNormalizerSpec::from_proto(Some(d)));
    Ok(SpmModelFile {
        algorithm,
        pieces,
        normalizer: SpmNormalizerSpec::from_proto(proto.normalizer_spec.as_ref()),
        denormalizer,
        treat_whitespace_as_suffix: trainer.treat_whitespace_as_suffix.unwrap_or(false),
        byte_fallback,
        unk_id,
        unk_surface: trainer
            .unk_surface
            .unwrap_or_else(|| " \u{2047} ".to_owned()),
        bos_piece: trainer.bos_piece.unwrap_or_else(|| "<s>".to_owned()),
        eos_piece: trainer.eos_piece.unwrap_or_else(|| "</s>".to_owned()),
    })
}

/// `<0xXX>` (two upper-case hex digits, as SentencePiece writes them) → the byte.
pub fn byte_of_piece(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
    {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// The byte piece of `b`: `<0xXX>`.
pub fn piece_of_byte(b: u8) -> String {
    format!("<0x{b:02X}>")
}
