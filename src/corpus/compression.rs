//! Compressed inputs, recognised by their first bytes (not their names) and decompressed as a
//! stream: gzip (also several members one after another, as `pigz` and `bgzip` write them) and
//! zstd (also several frames). Memory stays bounded whatever the ratio — a decompression bomb
//! costs time, never memory — and a damaged stream is an error naming the input and what went
//! wrong, never a truncated corpus passed off as whole.
//!
//! [`ReadAhead`] moves the decompression onto a thread of its own, a few buffers ahead of the
//! reader, for when a core is free for it.

use std::io::{self, BufReader, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// How an input is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed (or in a format this version does not read).
    None,
    /// gzip (RFC 1952), `1f 8b`.
    Gzip,
    /// zstd, `28 b5 2f fd`.
    Zstd,
}

impl Compression {
    /// The compression whose magic bytes `start` (an input's first bytes) begin with.
    pub fn detect(start: &[u8]) -> Compression {
        if start.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if start.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }

    /// Magic bytes of formats recognised only to be refused by name (xz, bzip2, lz4): reading
    /// them as text would give garbage ids.
    pub fn unsupported(start: &[u8]) -> Option<&'static str> {
        [
            (&[0xfd, b'7', b'z', b'X', b'Z', 0x00][..], "xz"),
            (&[b'B', b'Z', b'h'][..], "bzip2"),
            (&[0x04, 0x22, 0x4d, 0x18][..], "lz4"),
        ]
        .into_iter()
        .find(|(magic, _)| start.starts_with(magic))
        .map(|(_, name)| name)
    }
}

/// `input` decompressed as its first bytes say (passed through when not compressed), and the
/// compression found. An input in a recognised but unsupported format is an error naming it.
pub fn decompressed(
    mut input: Box<dyn Read + Send>,
) -> io::Result<(Compression, Box<dyn Read + Send>)> {
    // The first bytes, however few a pipe gives per read; then put back in front.
    let mut start = [0u8; 8];
    let mut n = 0;
    while n < start.len() {
        match input.read(&mut start[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let start = &start[..n];
    if let Some(name) = Compression::unsupported(start) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{name}-compressed input is not supported (gzip and zstd are); decompress it first"
            ),
        ));
    }
    let compression = Compression::detect(start);
    let whole = io::Cursor::new(start.to_vec()).chain(input);
    let out: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(whole),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(
            BufReader::with_capacity(1 << 16, whole),
        )),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(
            BufReader::with_capacity(1 << 16, whole),
        )?),
    };
    Ok((compression, out))
}

/// A reader whose input is read on a thread of its own, a few buffers ahead: decompression
/// (or a slow device) overlaps with whatever the caller does with the bytes. Memory: at most
/// `buffers` buffers of `size` bytes in flight. An error of the input arrives where it
/// happened in the stream.
pub struct ReadAhead {
    chunks: Receiver<io::Result<Vec<u8>>>,
    /// Empty buffers going back to the thread.
    spare: SyncSender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
    done: bool,
    thread: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts reading `input` on a new thread into `buffers` buffers of `size` bytes.
    pub fn new(mut input: Box<dyn Read + Send>, buffers: usize, size: usize) -> ReadAhead {
        let (full_tx, full_rx) = sync_channel::<io::Result<Vec<u8>>>(buffers);
        let (spare_tx, spare_rx) = sync_channel::<Vec<u8>>(buffers + 1);
        for _ in 0..buffers {
            let _ = spare_tx.send(Vec::with_capacity(size));
        }
        let thread = std::thread::Builder::new()
            .name("simdtok-read-ahead".into())
            .spawn(move || {
                while let Ok(mut buf) = spare_rx.recv() {
                    buf.resize(size, 0);
                    let mut filled = 0;
                    let result = loop {
                        match input.read(&mut buf[filled..]) {
                            Ok(0) => break Ok(()),
                            Ok(n) => {
                                filled += n;
                                if filled == size {
                                    break Ok(());
                                }
                            }
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => break Err(e),
                        }
                    };
                    buf.truncate(filled);
                    let end = filled == 0 || result.is_err();
                    if filled > 0 && full_tx.send(Ok(buf)).is_err() {
                        return;
                    }
                    if let Err(e) = result {
                        let _ = full_tx.send(Err(e));
                    }
                    if end {
                        return;
                    }
                }
            })
            .expect("a thread for reading ahead");
        ReadAhead {
            chunks: full_rx,
            spare: spare_tx,
            current: Vec::new(),
            at: 0,
            done: false,
            thread: Some(thread),
        }
    }
}

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.current.len() {
            if self.done {
                return Ok(0);
            }
            match self.chunks.recv() {
                Ok(Ok(buf)) => {
                    let old = std::mem::replace(&mut self.current, buf);
                    self.at = 0;
                    let _ = self.spare.send(old);
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                // The thread ended: the input is done.
                Err(_) => self.done = true,
            }
        }
        let n = out.len().min(self.current.len() - self.at);
        out[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Unblock the thread (it waits for a spare buffer or a free slot), then wait for it.
        self.done = true;
        let (tx, _) = sync_channel(0);
        drop(std::mem::replace(&mut self.spare, tx));
        while self.chunks.try_recv().is_ok() {}
        if let Some(t) = self.thread.take() {
            // It may still be blocked sending a full buffer: receive until it hangs up.
            while self.chunks.recv().is_ok() {}
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn text() -> Vec<u8> {
        (0..200_000u32)
            .flat_map(|i| format!("line {i} with some words\n").into_bytes())
            .collect()
    }

    fn read_all(r: &mut dyn Read) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok(out)
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// A reader that returns one byte per call (a slow pipe).
    struct Trickle(io::Cursor<Vec<u8>>);
    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(1);
            self.0.read(&mut out[..n])
        }
    }

    #[test]
    fn every_format_decompresses_to_the_text_even_a_byte_at_a_time() {
        let text = text();
        let (a, b) = text.split_at(text.len() / 3);
        let two_members = [gzip(a), gzip(b)].concat();
        let zstd_frames = [
            zstd::encode_all(a, 1).unwrap(),
            zstd::encode_all(b, 3).unwrap(),
        ]
        .concat();
        for (input, want) in [
            (text.clone(), Compression::None),
            (gzip(&text), Compression::Gzip),
            (two_members, Compression::Gzip),
            (zstd_frames, Compression::Zstd),
        ] {
            for trickle in [false, true] {
                let source: Box<dyn Read + Send> = if trickle {
                    Box::new(Trickle(io::Cursor::new(input.clone())))
                } else {
                    Box::new(io::Cursor::new(input.clone()))
                };
                let (found, mut r) = decompressed(source).unwrap();
                assert_eq!(found, want);
                assert_eq!(read_all(&mut r).unwrap(), text, "{want:?} {trickle}");
            }
        }
        // Inputs shorter than any magic pass through.
        for short in [&b""[..], b"a", b"\x1f"] {
            let (found, mut r) = decompressed(Box::new(io::Cursor::new(short.to_vec()))).unwrap();
            assert_eq!(found, Compression::None);
            assert_eq!(read_all(&mut r).unwrap(), short);
        }
    }

    #[test]
    fn damaged_and_unsupported_inputs_are_errors() {
        let text = text();
        let mut z = gzip(&text);
        let n = z.len();
        z.truncate(n / 2);
        let (_, mut r) = decompressed(Box::new(io::Cursor::new(z))).unwrap();
        assert!(read_all(&mut r).is_err(), "a truncated gzip stream");
        let mut z = zstd::encode_all(&text[..], 1).unwrap();
        let n = z.len();
        z[n / 2] ^= 0xff;
        z.truncate(n - 3);
        let (_, mut r) = decompressed(Box::new(io::Cursor::new(z))).unwrap();
        assert!(read_all(&mut r).is_err(), "a damaged zstd stream");
        let xz = b"\xfd7zXZ\x00rest".to_vec();
        let e = decompressed(Box::new(io::Cursor::new(xz))).err().unwrap();
        assert!(e.to_string().contains("xz"), "{e}");
    }

    #[test]
    fn reading_ahead_gives_the_same_bytes_and_errors_in_place() {
        let text = text();
        for (size, len) in [
            (1, 1000),
            (7, 100_000),
            (4096, text.len()),
            (1 << 20, text.len()),
        ] {
            let part = &text[..len];
            let mut r = ReadAhead::new(Box::new(io::Cursor::new(part.to_vec())), 3, size);
            assert_eq!(read_all(&mut r).unwrap(), part, "{size}");
        }
        // Dropped before the end: the thread stops.
        let mut r = ReadAhead::new(Box::new(io::Cursor::new(text.clone())), 2, 100);
        let mut some = [0u8; 10];
        r.read_exact(&mut some).unwrap();
        drop(r);
        // An error after some bytes: those bytes, then the error.
        let mut z = gzip(&text);
        let n = z.len();
        z.truncate(n / 2);
        let (_, inner) = decompressed(Box::new(io::Cursor::new(z))).unwrap();
        let mut r = ReadAhead::new(inner, 2, 4096);
        let mut got = Vec::new();
        let e = r.read_to_end(&mut got).unwrap_err();
        assert!(!got.is_empty() && text.starts_with(&got), "{e}");
    }
}
