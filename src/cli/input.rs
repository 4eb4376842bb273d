//! Reading texts. The input is read in blocks of whole lines (bounded in bytes, so a huge file
//! never sits in memory) by one reader thread, which only reads and finds the last line end; the
//! worker threads split a block into records, check UTF-8 and parse JSON (work worth sharing
//! out) — unless the reader has a core to spare, when it does that work itself
//! ([`Reader::prepare`]). A large input file is not read but mapped ([`Mapped`]): a block is
//! then a range of the map, and the reader copies nothing. A `raw` input is one text: it is read
//! in parts cut where the model says a cut cannot change the result
//! ([`simdtok::Tokenizer::last_safe_cut`]), so that it too is encoded on every core with bounded
//! memory.

use std::borrow::Cow;
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use memchr::memmem;
use memmap2::Mmap;
use simdtok::corpus::compression::{Compression, ReadAhead, decompressed};
use simdtok::corpus::parquet::{ParquetTexts, TextBatch};

use super::args::{InputArgs, InputFormat};
use super::json::{FieldText, field_text, field_text_into};
use super::{CliResult, Failure};

/// Where texts come from, and how to find them in a record.
pub struct Source {
    /// The input's name for messages (its path, or `<stdin>`).
    pub name: String,
    format: InputFormat,
    field: String,
    /// The file's size, when known (for the progress bar).
    pub len: Option<u64>,
    /// How the input was compressed.
    pub compression: Compression,
}

/// Where a `raw` input may be cut: the last safe cut in `text` at or after `from`, if any.
pub type RawCut = Box<dyn Fn(&[u8], usize) -> Option<usize> + Send>;

/// Bytes before a position that a cut rule may look at (see
/// [`simdtok::Tokenizer::last_safe_cut`]).
const CUT_CONTEXT: usize = 16;

/// Reads [`Batch`]es of records.
pub struct Reader {
    input: Box<dyn Read + Send>,
    format: InputFormat,
    name: String,
    /// Bytes of the raw input before the next part.
    next_base: u64,
    /// Whether blocks are [prepared](Reader::prepare) here.
    prepare: bool,
    done: bool,
    /// About this many bytes per batch (more when one line or raw part is longer).
    block: usize,
    /// Bytes read past the last batch's end: the start of the next.
    carry: Vec<u8>,
    /// Where a raw input may be cut; `None`: it is read whole.
    raw_cut: Option<RawCut>,
    /// For `jsonl`: the field whose string is the text.
    field: Option<String>,
    /// For `text`: the string that ends each text.
    separator: Option<Separator>,
    /// A file read through a memory map instead of `input` (see [`Mapped`]).
    mapped: Option<Mapped>,
    /// A Parquet file read instead of `input`, and the batch its texts are read into.
    parquet: Option<(ParquetTexts, TextBatch)>,
    /// Bad records are left out (`encode --skip-bad`): here, a Parquet file's nulls and texts
    /// that are not UTF-8.
    skip_bad: bool,
}

/// The string that ends each text of a `text` input, with its searcher (built once).
#[derive(Clone)]
pub struct Separator(Arc<memmem::Finder<'static>>);

impl Separator {
    /// The separator `s` (not empty).
    pub fn new(s: &str) -> Separator {
        debug_assert!(!s.is_empty());
        Separator(Arc::new(memmem::Finder::new(s.as_bytes()).into_owned()))
    }

    fn len(&self) -> usize {
        self.0.needle().len()
    }

    /// The end of the last separator in `data[from..]` as the texts are read, left to right
    /// from `from` (where one ended): separators do not overlap, so with `aa` in `aaa` the one
    /// is at 0, not 1, whatever follows.
    fn last_end_from(&self, data: &[u8], from: usize) -> Option<usize> {
        let last = self.0.find_iter(&data[from..]).last()?;
        Some(from + last + self.len())
    }

    /// The texts of `data` as (start, end) spans: each ends at a separator (which belongs to
    /// neither text); a last text without one keeps the rest; nothing follows a final one.
    fn spans<'a>(&'a self, data: &'a [u8]) -> impl Iterator<Item = (usize, usize)> + 'a {
        let mut ends = self.0.find_iter(data);
        let mut start = 0;
        std::iter::from_fn(move || {
            if start >= data.len() {
                return None;
            }
            let from = start;
            let end = match ends.next() {
                Some(end) => {
                    start = end + self.len();
                    end
                }
                None => {
                    start = data.len();
                    data.len()
                }
            };
            Some((from, end))
        })
    }
}

/// An input file read through a memory map: a block is a range of the map, so the reader copies
/// nothing and the workers read the file's pages where the kernel keeps them. Reading copied
/// every byte once more, in the reader thread, at 2–3 GB/s here: a tenth of the work of two
/// fast workers, and the limit of many. Pages are mapped ahead of the workers (in the reader
/// thread) and dropped from the process once their block is written, so memory stays bounded
/// whatever the file's size (the kernel's page cache keeps what it likes, as with reads).
///
/// A map sees the file as it is while it is read: a file truncated by another process during
/// the run ends the process (SIGBUS), as for any program that maps its input (ripgrep, git).
struct Mapped {
    map: Arc<Mmap>,
    /// Where the next block starts.
    next: usize,
    /// Pages before this offset were dropped from the process.
    released: usize,
}

/// Files smaller than this are read: a map's setup costs more than copying them.
const MAP_AT_LEAST: u64 = 4 << 20;

impl Mapped {
    /// A map of `file` (of `len` bytes), or `None` when it cannot be mapped (then it is read).
    fn new(file: &File, len: u64) -> Option<Mapped> {
        if len < MAP_AT_LEAST || usize::try_from(len).is_err() {
            return None;
        }
        Mapped::map(file)
    }

    /// A map of `file`, whatever its size.
    fn map(file: &File) -> Option<Mapped> {
        // SAFETY: the map is only read, as `&[u8]`. Its bytes are the file's: another process
        // that rewrites the file while it is read changes what the texts are (as it would for
        // a read), and one that truncates it makes a later access fault (SIGBUS), which the
        // documentation of `--input` states.
        let map = unsafe { Mmap::map(file) }.ok()?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        Some(Mapped {
            map: Arc::new(map),
            next: 0,
            released: 0,
        })
    }

    /// Maps the pages of `start..start + len` into the process now (in the reader thread, ahead
    /// of the worker that will read them); on kernels without `MADV_POPULATE_READ` the worker
    /// takes the page faults instead.
    fn populate(&self, start: usize, len: usize) {
        #[cfg(target_os = "linux")]
        if len > 0 {
            let _ = self
                .map
                .advise_range(memmap2::Advice::PopulateRead, start, len);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (start, len);
    }

    /// Drops from the process the pages that lie wholly before `done` (every block before it
    /// is written; blocks come back in input order).
    fn release_before(&mut self, done: usize) {
        const PAGE: usize = 4096;
        let end = done / PAGE * PAGE;
        if end <= self.released + (8 << 20) {
            return; // In steps of some megabytes: one call per block would cost more.
        }
        #[cfg(unix)]
        // SAFETY: MADV_DONTNEED on a private, read-only file map only unmaps pages: a later
        // access maps the file's page again, with the same bytes. (Rounded down to a page by
        // memmap2, the range may reach into a page that an unwritten block still reads; it is
        // mapped back when touched.)
        unsafe {
            let _ = self.map.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                self.released,
                end - self.released,
            );
        }
        self.released = end;
    }
}

/// What a batch holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Whole records (lines, JSON lines, or a raw input read whole).
    Records,
    /// A part of the one text of a raw input: `base` is its first byte's offset in the text.
    Raw {
        /// Its start in the whole text.
        base: u64,
        /// The first part.
        first: bool,
        /// The last part.
        last: bool,
    },
}

/// Consecutive records of the input, or one part of a raw input.
pub struct Batch {
    data: Block,
    /// The bytes of input this batch consumed (line ends included).
    pub consumed: u64,
    /// Whole records, or a part of a raw text.
    pub part: Part,
    /// Whether `data` is lines (records split at `\n`).
    lines: bool,
    /// For `text`: the records end at this string (and `lines` is false).
    separator: Option<Separator>,
    /// Bad records the reader left out (`--skip-bad`), and the first of them.
    pub skipped: u64,
    pub first_skipped: Option<Failure>,
    /// For a Parquet input: the rows it covers (its texts and the rows left out).
    rows: Option<u64>,
}

/// One record: the bytes of one text before validation, and where it starts.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    /// The line (or, for `jsonl`, the JSON object) without its line end.
    pub bytes: &'a [u8],
    /// The same as text, when its block was checked to be valid UTF-8 as a whole.
    pub text: Option<&'a str>,
    /// For `jsonl`, when the reader parsed the line: the field's text, or why there is none.
    pub field: Option<Result<&'a str, &'a str>>,
    /// Its line number, from 1 at the start of its batch (the engine moves the line of a
    /// failure to its place in the input: [`super::Failure::after_lines`]).
    pub line: u64,
    /// Whole, or a part of a raw text.
    pub part: Part,
}

/// Opens the input of `args` (one at most: only `encode` reads several, with
/// [`open_path`]); batches hold about `block` bytes. A raw input is cut with `raw_cut` when given
/// (and read whole otherwise).
pub fn open(
    args: &InputArgs,
    block: usize,
    raw_cut: Option<RawCut>,
) -> CliResult<(Source, Reader)> {
    let path = match &args.input[..] {
        [] => None,
        [one] => Some(one.as_path()),
        _ => {
            return Err(Failure::usage(
                "only encode reads several --input; give one (or none, for stdin)",
            ));
        }
    };
    open_path(path, args, block, raw_cut, false)
}

/// The format of the input at `path`: `format`, but Parquet for a `.parquet` file that starts
/// as Parquet files do when `format` is the default (`lines`).
fn format_of(path: Option<&std::path::Path>, format: InputFormat) -> InputFormat {
    let parquet_name = path.is_some_and(|p| {
        p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
    });
    if format != InputFormat::Lines || !parquet_name {
        return format;
    }
    let mut magic = [0u8; 4];
    let starts_as_parquet = File::open(path.expect("named"))
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"PAR1");
    if starts_as_parquet {
        InputFormat::Parquet
    } else {
        format
    }
}

/// Opens the Parquet file at `path` for the texts of column `--field` (default `text`).
fn open_parquet(
    path: Option<&std::path::Path>,
    args: &InputArgs,
    block: usize,
    skip_bad: bool,
) -> CliResult<(Source, Reader)> {
    let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
        return Err(Failure::usage(
            "--input-format parquet reads a file (--input PATH), not stdin",
        ));
    };
    let field = args.field.clone().unwrap_or_else(|| "text".to_owned());
    let texts =
        ParquetTexts::open(path, &field, skip_bad).map_err(|e| Failure::runtime(e.to_string()))?;
    let name = path.display().to_string();
    let source = Source {
        name: name.clone(),
        format: InputFormat::Parquet,
        field,
        // Progress is counted in the texts' bytes, not the file's: no percentage.
        len: None,
        compression: Compression::None,
    };
    let mut reader = Reader::new(
        Box::new(std::io::empty()),
        InputFormat::Parquet,
        name,
        block,
        None,
    );
    reader.parquet = Some((texts, TextBatch::default()));
    reader.skip_bad = skip_bad;
    Ok((source, reader))
}

/// Opens `path` (`None` or `-`: stdin) as `args` says its texts are laid out; with `skip_bad`,
/// the reader leaves out the bad records it finds itself (a Parquet file's).
pub fn open_path(
    path: Option<&std::path::Path>,
    args: &InputArgs,
    block: usize,
    raw_cut: Option<RawCut>,
    skip_bad: bool,
) -> CliResult<(Source, Reader)> {
    let format = format_of(path, args.input_format);
    if args.field.is_some() && !matches!(format, InputFormat::Jsonl | InputFormat::Parquet) {
        return Err(Failure::usage(
            "--field applies only to --input-format jsonl or parquet",
        ));
    }
    if format == InputFormat::Parquet {
        return open_parquet(path, args, block, skip_bad);
    }
    let separator = match (&args.separator, args.input_format) {
        (Some(sep), InputFormat::Text) if !sep.is_empty() => Some(Separator::new(sep)),
        (_, InputFormat::Text) => {
            return Err(Failure::usage(
                "--input-format text needs --separator STRING (not empty): the string that ends \
                 each text",
            ));
        }
        (Some(_), _) => {
            return Err(Failure::usage(
                "--separator applies only to --input-format text",
            ));
        }
        (None, _) => None,
    };
    let mut mapped = None;
    let mut compression = Compression::None;
    let (name, read, len): (String, Box<dyn Read + Send>, Option<u64>) = match path {
        Some(path) if path.as_os_str() != "-" => {
            let name = path.display().to_string();
            let open_error = |e: std::io::Error| Failure::runtime(format!("{name}: {e}"));
            let mut file = File::open(path).map_err(open_error)?;
            let len = file
                .metadata()
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            if is_compressed(&mut file).map_err(open_error)? {
                // Streamed through the decompressor: no map, and no size to measure progress by.
                let (found, read) = decompressing(Box::new(file), &name)?;
                compression = found;
                (name, read, None)
            } else {
                mapped = len.and_then(|len| Mapped::new(&file, len));
                (name, Box::new(file), len)
            }
        }
        _ => {
            let name = "<stdin>".to_owned();
            let (found, stdin) = decompressing(Box::new(std::io::stdin()), &name)?;
            compression = found;
            (name, stdin, None)
        }
    };
    let source = Source {
        name: name.clone(),
        format: args.input_format,
        field: args.field.clone().unwrap_or_else(|| "text".to_owned()),
        len,
        compression,
    };
    let mut reader = Reader::new(read, args.input_format, name, block, raw_cut);
    reader.mapped = mapped;
    reader.separator = separator;
    if source.format == InputFormat::Jsonl {
        reader.field = Some(source.field.clone());
    }
    Ok((source, reader))
}

/// Whether `file` starts with a compressed format's magic bytes (recognised or refused);
/// the file is left at its start.
fn is_compressed(file: &mut File) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let mut start = [0u8; 8];
    let mut n = 0;
    while n < start.len() {
        match file.read(&mut start[n..])? {
            0 => break,
            k => n += k,
        }
    }
    file.seek(SeekFrom::Start(0))?;
    let start = &start[..n];
    Ok(
        Compression::detect(start) != Compression::None
            || Compression::unsupported(start).is_some(),
    )
}

/// `input` decompressed when its first bytes say it is compressed (gzip, zstd), on a thread of
/// its own a few megabytes ahead; passed through otherwise.
fn decompressing(
    input: Box<dyn Read + Send>,
    name: &str,
) -> CliResult<(Compression, Box<dyn Read + Send>)> {
    let (compression, read) =
        decompressed(input).map_err(|e| Failure::runtime(format!("{name}: {e}")))?;
    Ok(match compression {
        Compression::None => (compression, read),
        _ => (compression, Box::new(ReadAhead::new(read, 4, 1 << 20))),
    })
}

/// Opens `path` (`-` or none: stdin) as `ids` lines, for `decode`.
pub fn open_lines(path: &Option<PathBuf>, block: usize) -> CliResult<(Source, Reader)> {
    let args = InputArgs {
        input: path.iter().cloned().collect(),
        input_format: InputFormat::Lines,
        field: None,
        separator: None,
    };
    open(&args, block, None)
}

/// Input bytes in an allocation reused from block to block: `bytes[..len]` hold the input, the
/// rest is spare room, already initialized (so reading into it never zeroes memory again).
#[derive(Default)]
pub struct Block {
    bytes: Vec<u8>,
    len: usize,
    /// When the input is mapped: the map and where the block starts in it (`bytes` unused).
    mapped: Option<(Arc<Mmap>, usize)>,
    /// Where the last mapped block held here ended, once cleared: the writer clears a block
    /// when it has written it, and the reader drops the pages before that from the process.
    written_to: usize,
    /// Set by a reader that [prepares](Reader::prepare) blocks: the line ends found and the
    /// bytes checked as UTF-8.
    prepared: Option<Prepared>,
    /// The positions of the line ends (`\n`), when prepared; kept for its allocation.
    ends: Vec<u32>,
    /// For `jsonl`, when prepared and valid UTF-8: each line's text field, in order.
    fields: Vec<Field>,
    /// The texts of `fields` that held escapes, unescaped.
    unescaped: String,
    /// For a Parquet input: where each text ends (the texts lie end to end).
    text_ends: Vec<usize>,
}

/// What a preparing reader found in a block.
#[derive(Clone, Copy)]
struct Prepared {
    /// `bytes[..len]` is valid UTF-8.
    utf8: bool,
}

/// The text field of a JSON line, as the reader found it.
enum Field {
    /// These bytes of the block (the string had no escape).
    Block(u32, u32),
    /// These bytes of [`Block::unescaped`].
    Unescaped(u32, u32),
    /// Why the line has no text.
    Error(String),
}

impl Block {
    /// The input bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.mapped {
            Some((map, start)) => &map[*start..*start + self.len],
            None => &self.bytes[..self.len],
        }
    }

    /// Empties it, keeping the allocation.
    pub fn clear(&mut self) {
        if let Some((_, start)) = self.mapped.take() {
            self.written_to = start + self.len;
        }
        self.len = 0;
        self.prepared = None;
        self.ends.clear();
        self.fields.clear();
        self.unescaped.clear();
        self.text_ends.clear();
    }

    /// Finds the line ends (for `lines`), checks the bytes as UTF-8 and, given a JSON `field`,
    /// takes each line's text out of it (a block with a bad byte leaves that to the workers,
    /// which report the first bad line).
    fn prepare(&mut self, lines: bool, field: Option<&str>) {
        // `as_slice`, spelled out: the fields written below are borrowed apart from these.
        let data = match &self.mapped {
            Some((map, start)) => &map[*start..*start + self.len],
            None => &self.bytes[..self.len],
        };
        self.ends.clear();
        if lines {
            self.ends
                .extend(memchr::memchr_iter(b'\n', data).map(|i| i as u32));
        }
        let text = simdutf8::basic::from_utf8(data).ok();
        self.prepared = Some(Prepared {
            utf8: text.is_some(),
        });
        self.fields.clear();
        self.unescaped.clear();
        let (Some(text), Some(field)) = (text, field) else {
            return;
        };
        let ends = self.ends.iter().map(|&i| i as usize);
        for (from, to) in line_spans(data, ends) {
            self.fields.push(
                match field_text_into(&text[from..to], field, &mut self.unescaped) {
                    Ok(FieldText::Borrowed(t)) => {
                        let start = t.as_ptr() as usize - data.as_ptr() as usize;
                        Field::Block(start as u32, (start + t.len()) as u32)
                    }
                    Ok(FieldText::Appended(r)) => Field::Unescaped(r.start as u32, r.end as u32),
                    Err(cause) => Field::Error(cause),
                },
            );
        }
        // Unescaped texts are under 4 GiB as long as the block is (positions are 32-bit).
        if self.unescaped.len() > u32::MAX as usize {
            self.fields.clear();
        }
    }

    /// Appends `more`.
    fn extend_from_slice(&mut self, more: &[u8]) {
        self.reserve(self.len + more.len());
        self.bytes[self.len..self.len + more.len()].copy_from_slice(more);
        self.len += more.len();
    }

    /// Makes room for `want` bytes in all.
    fn reserve(&mut self, want: usize) {
        if self.bytes.len() < want {
            self.bytes.resize(want, 0);
        }
    }

    /// Moves the bytes from `at` on to `carry` (replacing what it held); for a mapped block,
    /// returns where the next block starts in the map instead (nothing is copied).
    fn split_off_into(&mut self, at: usize, carry: &mut Vec<u8>) -> Option<usize> {
        let len = std::mem::replace(&mut self.len, at);
        if let Some((_, start)) = &self.mapped {
            return Some(start + at);
        }
        carry.clear();
        carry.extend_from_slice(&self.bytes[at..len]);
        None
    }
}

impl Reader {
    /// Reads `input` (named `name` in messages) as `format`, in blocks of about `block` bytes; a
    /// raw input is cut with `raw_cut` when given (and read whole otherwise).
    pub fn new(
        input: Box<dyn Read + Send>,
        format: InputFormat,
        name: String,
        block: usize,
        raw_cut: Option<RawCut>,
    ) -> Reader {
        Reader {
            input,
            format,
            name,
            next_base: 0,
            prepare: false,
            done: false,
            block: block.max(1),
            carry: Vec::new(),
            raw_cut: raw_cut.filter(|_| format == InputFormat::Raw),
            field: None,
            separator: None,
            mapped: None,
            parquet: None,
            skip_bad: false,
        }
    }

    /// Makes the reader find each block's line ends, check its UTF-8 and (for `jsonl`) take
    /// the texts out of its JSON itself, sparing the workers that work — for a reader with a
    /// core to spare (fewer workers than cores).
    /// Blocks must stay under 4 GiB (positions are 32-bit): blocks longer than that are left
    /// to the workers.
    pub fn prepare(&mut self, prepare: bool) {
        self.prepare = prepare;
    }

    /// The next batch (read into `block`, whose allocation it reuses), or `None` at the end of
    /// the input. Only I/O errors are reported here; bad records are found by [`Source::text`],
    /// in input order.
    pub fn next_batch(&mut self, mut block: Block) -> CliResult<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        if let Some(mapped) = &mut self.mapped {
            // A block back from the writer: everything up to its end is written.
            block.clear();
            mapped.release_before(block.written_to);
            block.mapped = Some((mapped.map.clone(), mapped.next));
        } else {
            block.clear();
            block.extend_from_slice(&self.carry);
            self.carry.clear();
        }
        match self.format {
            InputFormat::Raw => self.next_raw(block),
            InputFormat::Lines | InputFormat::Jsonl => self.next_lines(block),
            InputFormat::Text => self.next_texts(block),
            InputFormat::Parquet => self.next_parquet(block),
        }
    }

    /// Ends the block `data` at `end`: the rest starts the next block (and, mapped, the block's
    /// pages are mapped in now).
    fn split(&mut self, data: &mut Block, end: usize) {
        if let Some(next) = data.split_off_into(end, &mut self.carry)
            && let Some(mapped) = &mut self.mapped
        {
            mapped.populate(mapped.next, end);
            mapped.next = next;
        }
    }

    /// Reads until `data` holds at least `want` bytes or the input ends; returns whether it ended.
    fn fill(&mut self, data: &mut Block, want: usize) -> CliResult<bool> {
        if let Some((map, start)) = &data.mapped {
            let available = map.len() - (start + data.len);
            let grow = want.saturating_sub(data.len);
            data.len += grow.min(available);
            return Ok(grow > available);
        }
        while data.len < want {
            data.reserve(want.max(data.len + (64 << 10)));
            let n = loop {
                match self.input.read(&mut data.bytes[data.len..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Failure::runtime(format!("{}: {e}", self.name))),
                }
            };
            if n == 0 {
                return Ok(true);
            }
            data.len += n;
        }
        Ok(false)
    }

    /// A batch of whole lines: a block of about `block` bytes, up to its last line end (or more,
    /// for a line longer than a block).
    fn next_lines(&mut self, mut data: Block) -> CliResult<Option<Batch>> {
        let mut searched = 0;
        let end = loop {
            let want = data.len.max(self.block);
            let ended = self.fill(&mut data, want)?;
            if let Some(last) = memchr::memrchr(b'\n', &data.as_slice()[searched..]) {
                break searched + last + 1;
            }
            if ended {
                self.done = true;
                break data.len;
            }
            // One line longer than a block: read on (the line has to be held whole anyway).
            searched = data.len;
            let more = data.len + self.block;
            if self.fill(&mut data, more)?
                && memchr::memrchr(b'\n', &data.as_slice()[searched..]).is_none()
            {
                self.done = true;
                break data.len;
            }
        };
        self.split(&mut data, end);
        if data.len == 0 {
            self.done = true;
            return Ok(None);
        }
        if self.prepare && data.len <= u32::MAX as usize {
            data.prepare(true, self.field.as_deref());
        }
        Ok(Some(Batch {
            consumed: data.len as u64,
            part: Part::Records,
            lines: true,
            separator: None,
            skipped: 0,
            first_skipped: None,
            rows: None,
            data,
        }))
    }

    /// A batch of whole texts of a `text` input: a block of about `block` bytes, up to the end
    /// of its last separator (or more, for a text longer than a block).
    fn next_texts(&mut self, mut data: Block) -> CliResult<Option<Batch>> {
        let separator = self
            .separator
            .clone()
            .expect("a text input has a separator");
        // No separator starts before this (one may straddle what was read and what is not).
        let mut from = 0;
        let end = loop {
            let want = if data.len < self.block {
                self.block
            } else {
                data.len + self.block
            };
            let ended = self.fill(&mut data, want)?;
            if let Some(end) = separator.last_end_from(data.as_slice(), from) {
                break end;
            }
            if ended {
                self.done = true;
                break data.len;
            }
            // One text longer than a block: read on (it has to be held whole anyway), searching
            // only what could hold the start of a separator — linear in the text's length.
            from = data.len.saturating_sub(separator.len() - 1).max(from);
        };
        self.split(&mut data, end);
        if data.len == 0 {
            self.done = true;
            return Ok(None);
        }
        if self.prepare {
            data.prepare(false, None);
        }
        Ok(Some(Batch {
            consumed: data.len as u64,
            part: Part::Records,
            lines: false,
            separator: Some(separator),
            skipped: 0,
            first_skipped: None,
            rows: None,
            data,
        }))
    }

    /// The next texts of a Parquet file: about a block's bytes of them, checked to be UTF-8
    /// here (a bad one is an error naming its row, or with `skip_bad` is left out and counted,
    /// as nulls are).
    fn next_parquet(&mut self, mut data: Block) -> CliResult<Option<Batch>> {
        let (texts, batch) = self.parquet.as_mut().expect("a Parquet input");
        let more = texts
            .next_batch(batch, self.block)
            .map_err(|e| Failure::runtime(e.to_string()))?;
        let mut skipped = batch.skipped_rows.len() as u64;
        let mut first_skipped = batch
            .skipped_rows
            .first()
            .map(|&row| texts.bad_text(row, "a null value, not a text"));
        if !more && skipped == 0 {
            self.done = true;
            return Ok(None);
        }
        let rows = batch.len() as u64 + skipped;
        // Valid as a whole and cut only at character boundaries: then each text is valid.
        let is_boundary = |end: &usize| batch.bytes.get(*end).is_none_or(|&b| (b as i8) >= -0x40);
        let valid =
            simdutf8::basic::from_utf8(&batch.bytes).is_ok() && batch.ends.iter().all(is_boundary);
        if !valid {
            let bad = |t: &[u8]| std::str::from_utf8(t).err().map(|e| e.valid_up_to() + 1);
            let mut kept = TextBatch::default();
            for i in 0..batch.len() {
                let text = batch.text(i);
                let Some(at) = bad(text) else {
                    kept.bytes.extend_from_slice(text);
                    kept.ends.push(kept.bytes.len());
                    continue;
                };
                let error = texts.bad_text(
                    batch.row(i),
                    format!("invalid UTF-8 at byte {at} of the text"),
                );
                if !self.skip_bad {
                    return Err(Failure::runtime(error.to_string()));
                }
                skipped += 1;
                first_skipped.get_or_insert(error);
            }
            batch.bytes = kept.bytes;
            batch.ends = kept.ends;
        }
        // The batch's buffers become the block's (and the block's old ones the next batch's).
        data.clear();
        std::mem::swap(&mut data.bytes, &mut batch.bytes);
        data.len = data.bytes.len();
        data.text_ends.clear();
        data.text_ends.extend_from_slice(&batch.ends);
        data.prepared = Some(Prepared { utf8: true });
        Ok(Some(Batch {
            consumed: data.len as u64,
            part: Part::Records,
            lines: false,
            separator: None,
            skipped,
            first_skipped: first_skipped.map(|e| Failure::runtime(e.to_string())),
            rows: Some(rows),
            data,
        }))
    }

    /// The raw input's next part: cut at the last safe cut of a block, or the rest of the input.
    fn next_raw(&mut self, mut data: Block) -> CliResult<Option<Batch>> {
        let first = self.next_base == 0;
        let end = if self.raw_cut.is_none() {
            // No cut is known to be safe: the text is read whole, as one record.
            loop {
                let want = data.len + (1 << 20);
                if self.fill(&mut data, want)? {
                    break;
                }
            }
            self.done = true;
            data.len
        } else {
            // Cuts are looked for only in what was not searched before (less the few bytes a
            // rule looks back at): a text without cuts is read on in linear time.
            let mut from = 0;
            loop {
                let target = if data.len < self.block {
                    self.block
                } else {
                    data.len + self.block
                };
                if self.fill(&mut data, target)? {
                    self.done = true;
                    break data.len;
                }
                let cut = self.raw_cut.as_ref().expect("checked above");
                if let Some(p) = cut(data.as_slice(), from).filter(|&p| p > 0) {
                    break p;
                }
                from = data.len.saturating_sub(CUT_CONTEXT);
            }
        };
        self.split(&mut data, end);
        if self.prepare {
            data.prepare(false, None);
        }
        let base = self.next_base;
        self.next_base += data.len as u64;
        Ok(Some(Batch {
            consumed: data.len as u64,
            part: Part::Raw {
                base,
                first,
                last: self.done,
            },
            lines: false,
            separator: None,
            skipped: 0,
            first_skipped: None,
            rows: None,
            data,
        }))
    }
}

impl Batch {
    /// The number of lines it spans: its records (a `text` input's texts are numbered as its
    /// lines), or a raw part's line ends.
    pub fn lines(&self, records: u64) -> u64 {
        if let Some(rows) = self.rows {
            return rows; // a Parquet batch's rows, its left-out ones included
        }
        if self.lines || self.separator.is_some() {
            records
        } else {
            memchr::memchr_iter(b'\n', self.data.as_slice()).count() as u64
        }
    }

    /// Calls `each` on every line of a batch whose block is valid UTF-8, in a worker's tight
    /// loop (no record per line), and returns how many there were; `None` (calling nothing)
    /// where [`Batch::valid_lines`] gives none.
    pub fn for_each_valid_line(&self, mut each: impl FnMut(&str)) -> Option<u64> {
        let mut lines = 0;
        for line in self.valid_lines()? {
            each(line);
            lines += 1;
        }
        Some(lines)
    }

    /// The lines of a batch whose block is valid UTF-8 (as the reader found it, or checked here
    /// in one pass), in order and without their line ends, as [`Batch::records`] gives them
    /// (for `jsonl`, the JSON objects). `None` for a raw part or a block with a bad byte, which
    /// go record by record (so that the first bad line is the one reported).
    fn valid_lines(&self) -> Option<impl Iterator<Item = &str> + '_> {
        if !self.lines {
            return None;
        }
        let data = self.data.as_slice();
        let (text, ends) = match self.data.prepared {
            // SAFETY: the reader checked exactly these bytes (`Block::prepare`), and nothing
            // has written to the block since.
            Some(Prepared { utf8: true }) => (
                unsafe { std::str::from_utf8_unchecked(data) },
                Ends::Found(self.data.ends.iter()),
            ),
            Some(Prepared { utf8: false }) => return None,
            None => (
                simdutf8::basic::from_utf8(data).ok()?,
                Ends::Searched(memchr::memchr_iter(b'\n', data)),
            ),
        };
        // SAFETY: `from` and `to` are 0, the end, or at a "\r" or "\n" (ASCII), so they are
        // character boundaries of the valid `text`, and in its bounds (`line_spans`).
        Some(line_spans(data, ends).map(move |(from, to)| unsafe { text.get_unchecked(from..to) }))
    }

    /// Its bytes' allocation, for the next batch.
    pub fn into_block(self) -> Block {
        self.data
    }

    /// The records of the batch, in order.
    pub fn records(&self) -> impl Iterator<Item = Record<'_>> {
        let data = self.data.as_slice();
        // One check of the whole block is cheaper than one per line; a block with a bad byte
        // leaves the check to each record, so that the first bad line is the one reported.
        let valid = match self.data.prepared {
            // SAFETY: the reader checked exactly these bytes (`Block::prepare`), and nothing
            // has written to the block since.
            Some(Prepared { utf8: true }) => Some(unsafe { std::str::from_utf8_unchecked(data) }),
            Some(Prepared { utf8: false }) => None,
            None => simdutf8::basic::from_utf8(data).ok(),
        };
        let part = self.part;
        let block = &self.data;
        let texts = self.separator.as_ref().map(|sep| sep.spans(data));
        let mut texts = texts.into_iter().flatten();
        // A Parquet batch's texts lie end to end.
        let mut ended = self.rows.map(|_| {
            let mut start = 0;
            block
                .text_ends
                .iter()
                .map(move |&end| (std::mem::replace(&mut start, end), end))
        });
        let by_separator = self.separator.is_some() || self.rows.is_some();
        let mut whole = (!self.lines && !by_separator).then_some((0, data.len()));
        let ends = if !self.lines {
            Ends::Found([].iter())
        } else if block.prepared.is_some() {
            Ends::Found(block.ends.iter())
        } else {
            Ends::Searched(memchr::memchr_iter(b'\n', data))
        };
        // A raw part is one record, `whole`, and no lines.
        let mut lines = line_spans(if self.lines { data } else { &[] }, ends);
        let spans = std::iter::from_fn(move || {
            whole
                .take()
                .or_else(|| lines.next())
                .or_else(|| texts.next())
                .or_else(|| ended.as_mut()?.next())
        });
        spans.enumerate().map(move |(i, (from, to))| Record {
            bytes: &data[from..to],
            // SAFETY: `from` and `to` are 0, the end, at a "\r" or "\n" (ASCII), at either end
            // of a match of the separator, a whole UTF-8 string (a match in valid UTF-8 starts
            // at a character's first byte and ends after a character's last), or at the ends of
            // a Parquet batch's texts, each checked to be UTF-8 on its own (`next_parquet`), so
            // they are character boundaries of the valid `v`, and in bounds (`data[from..to]`).
            text: valid.map(|v| unsafe { v.get_unchecked(from..to) }),
            field: block.fields.get(i).map(|field| match field {
                &Field::Block(a, b) => {
                    Ok(&valid.expect("fields need valid UTF-8")[a as usize..b as usize])
                }
                &Field::Unescaped(a, b) => Ok(&block.unescaped[a as usize..b as usize]),
                Field::Error(cause) => Err(cause.as_str()),
            }),
            line: i as u64 + 1,
            part,
        })
    }
}

/// The positions of a block's line ends: found by the reader, or searched for here.
enum Ends<'a> {
    Found(std::slice::Iter<'a, u32>),
    Searched(memchr::Memchr<'a>),
}

impl Iterator for Ends<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            Ends::Found(ends) => ends.next().map(|&i| i as usize),
            Ends::Searched(ends) => ends.next(),
        }
    }
}

/// The lines of `data` as (start, end) spans, given the positions of its `\n`s in order: a line
/// ends at its `\n`, and a `\r` just before it belongs to the line end; a last line without
/// `\n` keeps everything; nothing follows a final `\n`.
fn line_spans(
    data: &[u8],
    mut ends: impl Iterator<Item = usize>,
) -> impl Iterator<Item = (usize, usize)> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= data.len() {
            return None;
        }
        let span = match ends.next() {
            Some(i) => {
                let end = if i > start && data[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                let span = (start, end);
                start = i + 1;
                span
            }
            None => {
                let span = (start, data.len());
                start = data.len();
                span
            }
        };
        Some(span)
    })
}

impl Source {
    /// A `lines` source named `name`, for tests of the engine.
    #[cfg(test)]
    pub fn for_tests(name: &str) -> Source {
        Source {
            name: name.to_owned(),
            format: InputFormat::Lines,
            field: String::new(),
            len: None,
            compression: Compression::None,
        }
    }

    /// The text of a record: the valid UTF-8 line, or for `jsonl` the string in the field.
    pub fn text<'a>(&self, record: Record<'a>) -> CliResult<Cow<'a, str>> {
        match self.format {
            InputFormat::Lines | InputFormat::Raw | InputFormat::Text | InputFormat::Parquet => {
                self.line(record).map(Cow::Borrowed)
            }
            InputFormat::Jsonl => {
                let fail = |cause: String| Failure::at(&self.name, record.line, cause);
                if let Some(field) = record.field {
                    return field
                        .map(Cow::Borrowed)
                        .map_err(|cause| fail(cause.to_owned()));
                }
                let text = utf8(record).map_err(|(_, cause)| fail(cause))?;
                field_text(text, &self.field).map_err(fail)
            }
        }
    }

    /// Whether its records are lines of text (not JSON lines, not one raw text).
    pub fn is_lines(&self) -> bool {
        self.format == InputFormat::Lines
    }

    /// The record as UTF-8 (a line, the raw input, or a line of `ids` for `decode`).
    pub fn line<'a>(&self, record: Record<'a>) -> CliResult<&'a str> {
        utf8(record).map_err(|(line, cause)| Failure::at(&self.name, line, cause))
    }
}

/// The record as UTF-8, or the line of the first invalid byte and the cause.
fn utf8(record: Record<'_>) -> Result<&str, (u64, String)> {
    if let Some(text) = record.text {
        return Ok(text);
    }
    std::str::from_utf8(record.bytes).map_err(|e| {
        // For `raw` the record spans many lines: name the one holding the bad byte.
        let before = &record.bytes[..e.valid_up_to()];
        let newlines = before.iter().filter(|&&b| b == b'\n').count() as u64;
        let column = before.len()
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        (
            record.line + newlines,
            format!("invalid UTF-8 at byte {column} of the line"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader over `bytes` in `format`, with blocks of `block` bytes, read in pieces of at most
    /// `chunk` bytes (as a pipe delivers them).
    fn reader(bytes: &[u8], format: InputFormat, block: usize, chunk: usize) -> Reader {
        struct Trickle(Vec<u8>, usize, usize);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(self.2).min(self.0.len() - self.1);
                buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
                self.1 += n;
                Ok(n)
            }
        }
        Reader::new(
            Box::new(Trickle(bytes.to_vec(), 0, chunk)),
            format,
            "t".into(),
            block,
            None,
        )
    }

    /// Every record of the input, with its line number in the input; the same whether the
    /// reader prepares blocks or not.
    fn records(r: Reader) -> Vec<(Vec<u8>, u64)> {
        let (input, format, block) = (r.input, r.format, r.block);
        let mut bytes = Vec::new();
        let mut input = input;
        input.read_to_end(&mut bytes).unwrap();
        let plain = records_of(reader_over(&bytes, format, block, false));
        let prepared = records_of(reader_over(&bytes, format, block, true));
        assert!(plain == prepared, "preparing blocks changed the records");
        plain
    }

    fn reader_over(bytes: &[u8], format: InputFormat, block: usize, prepare: bool) -> Reader {
        let mut r = reader(bytes, format, block, 7);
        r.prepare(prepare);
        r
    }

    fn records_of(mut r: Reader) -> Vec<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        let mut before = 0;
        while let Some(batch) = r.next_batch(Block::default()).unwrap() {
            assert_eq!(batch.part, Part::Records);
            let mut n = 0;
            for rec in batch.records() {
                out.push((rec.bytes.to_vec(), before + rec.line));
                n += 1;
            }
            before += batch.lines(n);
        }
        out
    }

    /// The texts of `input` split at `sep` by a `text` reader (blocks of `block` bytes, reads
    /// of `chunk`, prepared or not, or mapped), with their numbers.
    fn texts(input: &[u8], sep: &str, block: usize, chunk: usize, how: u8) -> Vec<(Vec<u8>, u64)> {
        let mut r = match how {
            2 => mapped_reader(input, InputFormat::Text, block, false),
            _ => reader(input, InputFormat::Text, block, chunk),
        };
        r.prepare(how == 1);
        r.separator = Some(Separator::new(sep));
        records_of(r)
    }

    /// What Python's `str.split(sep)` gives, less a last empty text.
    fn split_texts(input: &[u8], sep: &str) -> Vec<(Vec<u8>, u64)> {
        let text = std::str::from_utf8(input).unwrap();
        let mut parts: Vec<&str> = text.split(sep).collect();
        if parts.last() == Some(&"") {
            parts.pop();
        }
        let parts = parts.into_iter().enumerate();
        parts
            .map(|(i, t)| (t.as_bytes().to_vec(), i as u64 + 1))
            .collect()
    }

    #[test]
    fn texts_split_at_the_separator_for_any_block_and_read_size() {
        let cases: [(&str, &str); 6] = [
            (
                "one<|endoftext|>two\nlines<|endoftext|><|endoftext|>é<|end",
                "<|endoftext|>",
            ),
            ("<|endoftext|>first empty<|endoftext|>", "<|endoftext|>"),
            ("aaaaa b aaa", "aa"),
            ("xaaay", "aa"),
            ("no separator at all, one text", "§§"),
            ("§§é§§§§ü§", "§§"),
        ];
        for (input, sep) in cases {
            let want = split_texts(input.as_bytes(), sep);
            for block in 1..24 {
                for chunk in [1, 2, 5, 64] {
                    for how in [0, 1, 2] {
                        let got = texts(input.as_bytes(), sep, block, chunk, how);
                        assert_eq!(
                            got, want,
                            "{input:?} {sep:?} block {block} chunk {chunk} {how}"
                        );
                    }
                }
            }
        }
        assert!(texts(b"", "|", 4, 4, 0).is_empty());
        assert_eq!(texts(b"|", "|", 4, 4, 0), [(b"".to_vec(), 1)]);
    }

    #[test]
    fn a_long_text_is_read_in_linear_time() {
        // 4 MB with no separator, read in 64-byte blocks: each block searches only what is new
        // (searching the whole text again at each block would take minutes here).
        let input = vec![b'a'; 4 << 20];
        let got = texts(&input, "ab", 64, 1 << 16, 0);
        assert_eq!(got, [(input, 1)]);
    }

    #[test]
    fn lines_are_the_same_for_any_block_and_read_size() {
        let input = b"a\r\nbb\n\n\rc\r\n\r\nlong line here\nlast";
        let want: Vec<(Vec<u8>, u64)> = [
            &b"a"[..],
            b"bb",
            b"",
            b"\rc",
            b"",
            b"long line here",
            b"last",
        ]
        .iter()
        .enumerate()
        .map(|(i, l)| (l.to_vec(), i as u64 + 1))
        .collect();
        for block in 1..40 {
            for chunk in [1, 2, 3, 7, 64] {
                let got = records(reader(input, InputFormat::Lines, block, chunk));
                assert_eq!(got, want, "block {block} chunk {chunk}");
            }
        }
        // A final line end adds no empty text; an empty input has no texts.
        assert_eq!(records(reader(b"x\n", InputFormat::Lines, 4, 4)).len(), 1);
        assert!(records(reader(b"", InputFormat::Lines, 4, 4)).is_empty());
        assert_eq!(
            records(reader(b"\n", InputFormat::Lines, 4, 4)),
            vec![(vec![], 1)]
        );
    }

    /// Each JSON line's text (or the failure's message), as the workers would report it.
    fn jsonl_texts(mut r: Reader, field: &str) -> Vec<Result<String, String>> {
        let source = Source {
            field: field.to_owned(),
            ..Source::for_tests("t")
        };
        let source = Source {
            format: InputFormat::Jsonl,
            ..source
        };
        let mut out = Vec::new();
        let mut before = 0;
        while let Some(batch) = r.next_batch(Block::default()).unwrap() {
            let mut n = 0;
            for rec in batch.records() {
                let text = source.text(rec).map(|t| t.into_owned());
                let text = text.map_err(|f| f.message.unwrap_or_default());
                out.push(text.map_err(|e| format!("{e} (after {before} lines)")));
                n += 1;
            }
            before += batch.lines(n);
        }
        out
    }

    #[test]
    fn jsonl_texts_taken_out_by_the_reader_equal_the_workers() {
        let lines = [
            r#"{"text": "plain"}"#,
            r#"{"id": 1, "text": "esc\"aped\n\u00e9", "x": [1]}"#,
            r#"{"text": 7}"#,
            "",
            r#"{"other": "x"}"#,
            "{\"text\": \"caf\u{e9}\"}",
            r#"not json"#,
            r#"{"text": "a\u0000b"}"#,
        ];
        let mut input = lines.join("\r\n").into_bytes();
        input.extend_from_slice(b"\n{\"text\": \"last\"}");
        let mut bad = input.clone();
        bad.extend_from_slice(b"\n{\"text\": \"caf\xe9\"}\n{\"text\": \"x\"}\n");
        for input in [input, bad] {
            for block in [1, 5, 30, 1000] {
                let plain = jsonl_texts(
                    reader_over(&input, InputFormat::Jsonl, block, false),
                    "text",
                );
                let mut prepared = reader_over(&input, InputFormat::Jsonl, block, true);
                prepared.field = Some("text".into());
                let prepared = jsonl_texts(prepared, "text");
                assert_eq!(
                    plain.len(),
                    lines.len() + 1 + 2 * usize::from(plain.len() > 9)
                );
                assert_eq!(prepared, plain, "block {block}");
                assert_eq!(plain[0], Ok("plain".into()));
                assert_eq!(plain[1], Ok("esc\"aped\n\u{e9}".into()));
                let number = plain[2].as_ref().unwrap_err();
                assert!(number.contains("field \"text\" is a number"), "{number}");
            }
        }
    }

    /// A reader of `bytes` through a memory map of a temporary file holding them.
    fn mapped_reader(bytes: &[u8], format: InputFormat, block: usize, prepare: bool) -> Reader {
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, bytes).unwrap();
        let mut r = reader(&[], format, block, 7);
        r.mapped = Mapped::map(&file);
        assert!(r.mapped.is_some() || bytes.is_empty(), "the file maps");
        r.prepare(prepare);
        r
    }

    /// Records and line numbers through a map equal those of reads, for any block size, with
    /// the blocks recycled as the writer recycles them (cleared, then handed back).
    #[test]
    fn a_mapped_file_gives_the_records_of_a_read_one() {
        let mut input = Vec::new();
        for i in 0..700 {
            input.extend_from_slice(
                format!("{{\"text\": \"line {i}\\n{}\"}}", "é".repeat(i % 13)).as_bytes(),
            );
            input.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
        }
        input.extend_from_slice(b"{\"text\": \"no line end\"}");
        for format in [InputFormat::Lines, InputFormat::Jsonl] {
            for block in [1, 100, 4096, 1 << 20] {
                let want = records_of(reader_over(&input, format, block, false));
                for prepare in [false, true] {
                    let mut r = mapped_reader(&input, format, block, prepare);
                    if format == InputFormat::Jsonl {
                        r.field = Some("text".into());
                    }
                    let mut got = Vec::new();
                    let mut before = 0;
                    let mut spare = Block::default();
                    while let Some(batch) = r.next_batch(std::mem::take(&mut spare)).unwrap() {
                        let mut n = 0;
                        for rec in batch.records() {
                            if format == InputFormat::Jsonl && prepare {
                                assert!(rec.field.is_some(), "the reader took the text out");
                            }
                            got.push((rec.bytes.to_vec(), before + rec.line));
                            n += 1;
                        }
                        before += batch.lines(n);
                        spare = batch.into_block();
                        spare.clear();
                    }
                    assert!(got == want, "{format:?} block {block} prepare {prepare}");
                }
            }
        }
        assert!(records_of(mapped_reader(b"", InputFormat::Lines, 8, false)).is_empty());
    }

    /// A mapped raw text is cut where the rule says, as a read one is, and the pages of written
    /// blocks are dropped as the reading goes on. (Checked part by part, holding no copy: the
    /// driver's test of peak memory runs in the same process.)
    #[test]
    fn a_mapped_raw_text_is_cut_alike_and_its_written_pages_dropped() {
        let mut input = Vec::new();
        for i in 0..1_300_000u32 {
            input.extend_from_slice(format!("w{i}|").as_bytes());
        }
        input.extend(std::iter::repeat_n(b'x', 100_000)); // a last part with no cut
        let mut r = mapped_reader(&input, InputFormat::Raw, 1 << 16, true);
        r.raw_cut = Some(Box::new(|d: &[u8], from: usize| {
            d[from..]
                .iter()
                .rposition(|&b| b == b'|')
                .map(|p| from + p + 1)
        }));
        // (Where a part ends depends on how far the reader reads ahead; parts end at cuts.)
        let mut base = 0;
        let mut parts = 0;
        let mut spare = Block::default();
        while let Some(batch) = r.next_batch(std::mem::take(&mut spare)).unwrap() {
            let bytes = batch.records().next().unwrap().bytes;
            let Part::Raw {
                base: b,
                first,
                last,
            } = batch.part
            else {
                panic!("a raw part")
            };
            assert_eq!((b, first), (base as u64, parts == 0));
            assert!(bytes == &input[base..base + bytes.len()], "part {parts}");
            assert!(last || bytes.ends_with(b"|"), "part {parts} ends at a cut");
            assert!(
                last || bytes.len() <= 2 << 16,
                "part {parts}: {} bytes",
                bytes.len()
            );
            base += bytes.len();
            parts += 1;
            spare = batch.into_block();
            spare.clear();
        }
        assert_eq!(base, input.len());
        assert!(parts > 100, "{parts} parts");
        let released = r.mapped.as_ref().unwrap().released;
        assert!(released >= 8 << 20, "pages dropped up to {released}");
    }

    #[test]
    fn raw_without_cuts_is_one_text() {
        for input in [&b""[..], b"a\nb\n", b"no line end"] {
            let mut r = reader(input, InputFormat::Raw, 2, 1);
            let batch = r.next_batch(Block::default()).unwrap().unwrap();
            let recs: Vec<_> = batch.records().map(|r| r.bytes.to_vec()).collect();
            assert_eq!(recs, vec![input.to_vec()]);
            assert_eq!(
                batch.part,
                Part::Raw {
                    base: 0,
                    first: true,
                    last: true
                }
            );
            assert!(r.next_batch(Block::default()).unwrap().is_none());
        }
    }

    #[test]
    fn raw_parts_cover_the_text_at_the_cuts() {
        // Cut after every "|": parts end there, bases and line numbers follow.
        let input = b"ab|c\nd|\n|efg|h";
        for block in 1..8 {
            let mut r = reader(input, InputFormat::Raw, block, 3);
            r.raw_cut = Some(Box::new(|d: &[u8], from: usize| {
                d[from..]
                    .iter()
                    .rposition(|&b| b == b'|')
                    .map(|p| from + p + 1)
            }));
            let mut joined = Vec::new();
            let mut expect_first = true;
            while let Some(batch) = r.next_batch(Block::default()).unwrap() {
                let Part::Raw { base, first, last } = batch.part else {
                    panic!("raw parts")
                };
                assert_eq!(base as usize, joined.len());
                assert_eq!(first, expect_first);
                expect_first = false;
                let rec = batch.records().next().unwrap();
                let newlines = rec.bytes.iter().filter(|&&b| b == b'\n').count() as u64;
                assert_eq!((rec.line, batch.lines(1)), (1, newlines));
                joined.extend_from_slice(rec.bytes);
                assert_eq!(last, joined.len() == input.len(), "block {block}");
                if !last {
                    assert_eq!(joined.last(), Some(&b'|'));
                }
            }
            assert_eq!(joined, input);
        }
    }
}
