//! Inputs as a report records them: a name, a kind, a size and a SHA-256 digest, so that figures
//! from two machines are compared only when they measured the same bytes.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::BenchError;

/// One measured input: a model file, a corpus file or a generated buffer.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InputDigest {
    /// How rows refer to it (`corpus/en_kjv_bible.head.txt`, `synthetic/prose`).
    pub name: String,
    /// `model`, `corpus` or `synthetic`.
    pub kind: String,
    /// Its size.
    pub bytes: u64,
    /// Lowercase hex SHA-256 of its bytes.
    pub sha256: String,
}

impl InputDigest {
    /// The digest of `bytes`.
    pub fn of_bytes(name: &str, kind: &str, bytes: &[u8]) -> InputDigest {
        InputDigest {
            name: name.to_owned(),
            kind: kind.to_owned(),
            bytes: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        }
    }

    /// The digest of a file's contents.
    pub fn of_file(name: &str, kind: &str, path: &Path) -> Result<InputDigest, BenchError> {
        let bytes = std::fs::read(path).map_err(|e| BenchError::io(path, e))?;
        Ok(InputDigest::of_bytes(name, kind, &bytes))
    }
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_bytes() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
