//! The output formats: how one text's encoding is written. Rendering happens on the worker
//! threads (decimal and JSON formatting cost as much as a fast tokenizer), the writer only copies
//! bytes in input order.

use clap::ValueEnum;
use simdtok::Encoding;

/// The output formats of `encode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// One line per text: ids in decimal separated by single spaces.
    Ids,
    /// One line per text: a JSON array of the token strings.
    Pieces,
    /// One JSON object per text: `{"ids": [...], "offsets": [[start, end], ...]}`.
    Jsonl,
    /// A NumPy `.npy` file: a 1-D `<u4` array of all ids.
    Npy,
    /// All ids as little-endian u16.
    U16,
    /// All ids as little-endian u32.
    U32,
}

impl OutputFormat {
    /// Whether the format is a flat binary array of ids (where `--separator-id` applies).
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            OutputFormat::Npy | OutputFormat::U16 | OutputFormat::U32
        )
    }

    /// Whether the format needs the token strings.
    pub fn needs_pieces(self) -> bool {
        self == OutputFormat::Pieces
    }

    /// Whether the format needs only the ids (then the faster ids-only encoder serves).
    pub fn ids_only(self) -> bool {
        !matches!(self, OutputFormat::Pieces | OutputFormat::Jsonl)
    }

    /// Appends `enc` in this format to `out`, then `separator` for the binary formats (the caller
    /// has checked that u16 ids fit).
    pub fn render(self, enc: &Encoding, separator: Option<u32>, out: &mut Vec<u8>) {
        match self {
            OutputFormat::Ids => {
                push_list(out, &enc.ids, b" ", |out, &id| push_decimal(out, id));
                out.push(b'\n');
            }
            OutputFormat::Pieces => {
                // The spacing of Python's json.dumps (as for jsonl); non-ASCII stays as is.
                out.push(b'[');
                push_list(out, &enc.pieces, b", ", |out, piece| {
                    serde_json::to_writer(&mut *out, piece).expect("writing to a Vec cannot fail");
                });
                out.extend_from_slice(b"]\n");
            }
            OutputFormat::Jsonl => {
                // The spacing of Python's json.dumps, as the contract shows it.
                out.extend_from_slice(b"{\"ids\": [");
                push_list(out, &enc.ids, b", ", |out, &id| push_decimal(out, id));
                out.extend_from_slice(b"], \"offsets\": [");
                push_list(out, &enc.offsets, b", ", |out, &(start, end)| {
                    out.push(b'[');
                    push_decimal(out, start);
                    out.extend_from_slice(b", ");
                    push_decimal(out, end);
                    out.push(b']');
                });
                out.extend_from_slice(b"]}\n");
            }
            OutputFormat::Npy | OutputFormat::U32 => {
                for &id in enc.ids.iter().chain(&separator) {
                    out.extend_from_slice(&id.to_le_bytes());
                }
            }
            OutputFormat::U16 => {
                for &id in enc.ids.iter().chain(&separator) {
                    out.extend_from_slice(&(id as u16).to_le_bytes());
                }
            }
        }
    }
}

/// Appends `items`, each with `item`, separated by `sep`.
fn push_list<T>(
    out: &mut Vec<u8>,
    items: &[T],
    sep: &[u8],
    mut item: impl FnMut(&mut Vec<u8>, &T),
) {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(sep);
        }
        item(out, x);
    }
}

/// Appends `n` in decimal (without going through `fmt`, which is slow for this much output).
pub fn push_decimal(out: &mut Vec<u8>, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(format: OutputFormat, enc: &Encoding, sep: Option<u32>) -> Vec<u8> {
        let mut out = Vec::new();
        format.render(enc, sep, &mut out);
        out
    }

    fn sample() -> Encoding {
        Encoding {
            ids: vec![7, 0, 4294967295],
            offsets: vec![(0, 3), (3, 4), (4, 10)],
            pieces: vec!["▁a\"b".to_owned(), "\n".to_owned(), "é".to_owned()],
        }
    }

    #[test]
    fn text_formats() {
        let enc = sample();
        assert_eq!(render(OutputFormat::Ids, &enc, None), b"7 0 4294967295\n");
        assert_eq!(
            String::from_utf8(render(OutputFormat::Pieces, &enc, None)).unwrap(),
            "[\"▁a\\\"b\", \"\\n\", \"é\"]\n"
        );
        assert_eq!(
            String::from_utf8(render(OutputFormat::Jsonl, &enc, None)).unwrap(),
            "{\"ids\": [7, 0, 4294967295], \"offsets\": [[0, 3], [3, 4], [4, 10]]}\n"
        );
        let empty = Encoding::default();
        assert_eq!(render(OutputFormat::Ids, &empty, None), b"\n");
        assert_eq!(render(OutputFormat::Pieces, &empty, None), b"[]\n");
        assert_eq!(
            render(OutputFormat::Jsonl, &empty, None),
            b"{\"ids\": [], \"offsets\": []}\n"
        );
    }

    #[test]
    fn binary_formats() {
        let enc = Encoding {
            ids: vec![1, 258],
            ..Encoding::default()
        };
        assert_eq!(
            render(OutputFormat::U32, &enc, Some(3)),
            [1, 0, 0, 0, 2, 1, 0, 0, 3, 0, 0, 0]
        );
        assert_eq!(
            render(OutputFormat::Npy, &enc, None),
            [1, 0, 0, 0, 2, 1, 0, 0]
        );
        assert_eq!(render(OutputFormat::U16, &enc, Some(9)), [1, 0, 2, 1, 9, 0]);
    }
}
