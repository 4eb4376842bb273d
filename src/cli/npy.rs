//! NumPy `.npy` output: a 1-D array of `<u4` (little-endian u32), all ids of all texts. The header
//! holds the array's length, known only at the end: a file gets a placeholder header rewritten at
//! the end; stdout cannot be rewritten, so the data waits in an anonymous temporary file (memory
//! stays bounded however large the input).

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};

use super::output::{Output, spill_file};
use super::{CliResult, Failure};

/// The header's fixed length: room for any u64 length, a multiple of 64 as the format asks.
pub const HEADER_LEN: usize = 128;

/// The `.npy` (version 1.0) header of a 1-D `<u4` array of `count` elements.
pub fn header(count: u64) -> [u8; HEADER_LEN] {
    let mut out = [b' '; HEADER_LEN];
    out[..6].copy_from_slice(b"\x93NUMPY");
    out[6] = 1;
    out[7] = 0;
    out[8..10].copy_from_slice(&((HEADER_LEN - 10) as u16).to_le_bytes());
    let dict = format!("{{'descr': '<u4', 'fortran_order': False, 'shape': ({count},), }}");
    out[10..10 + dict.len()].copy_from_slice(dict.as_bytes());
    out[HEADER_LEN - 1] = b'\n';
    out
}

/// Writes the ids (already little-endian u32 bytes) of a `.npy` file.
pub struct NpyWriter {
    out: Output,
    spill: Option<BufWriter<File>>,
    bytes: u64,
}

impl NpyWriter {
    /// Starts the array on `out`.
    pub fn new(mut out: Output) -> CliResult<NpyWriter> {
        let spill = if out.is_seekable() {
            out.write_all(&header(0))?;
            None
        } else {
            Some(BufWriter::with_capacity(1 << 16, spill_file()?))
        };
        Ok(NpyWriter {
            out,
            spill,
            bytes: 0,
        })
    }

    /// Appends little-endian u32 ids.
    pub fn write_all(&mut self, bytes: &[u8]) -> CliResult {
        self.bytes += bytes.len() as u64;
        match &mut self.spill {
            Some(spill) => spill.write_all(bytes).map_err(spill_error),
            None => self.out.write_all(bytes),
        }
    }

    /// Writes the final header (and, for stdout, the data after it); returns the output to finish.
    pub fn finish(mut self) -> CliResult<Output> {
        let header = header(self.bytes / 4);
        match self.spill {
            None => self.out.overwrite_start(&header)?,
            Some(spill) => {
                self.out.write_all(&header)?;
                let mut file = spill
                    .into_inner()
                    .map_err(|e| spill_error(e.into_error()))?;
                file.seek(SeekFrom::Start(0)).map_err(spill_error)?;
                let mut buf = vec![0; 1 << 16];
                loop {
                    let n = file.read(&mut buf).map_err(spill_error)?;
                    if n == 0 {
                        break;
                    }
                    self.out.write_all(&buf[..n])?;
                }
            }
        }
        Ok(self.out)
    }
}

fn spill_error(e: std::io::Error) -> Failure {
    Failure::runtime(format!("temporary file: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_aligned_and_parsable() {
        let h = header(12345);
        assert_eq!(h.len() % 64, 0);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(u16::from_le_bytes([h[8], h[9]]) as usize, HEADER_LEN - 10);
        let dict = std::str::from_utf8(&h[10..]).unwrap();
        assert!(dict.starts_with("{'descr': '<u4', 'fortran_order': False, 'shape': (12345,), }"));
        assert!(dict.ends_with('\n'));
        // The largest length still fits.
        let _ = header(u64::MAX);
    }
}
