//! Parquet inputs: the texts of one string column, read row group by row group and, within a
//! row group, a few rows at a time, so that memory stays bounded however large the file is.
//!
//! Only the text column's chunks are read (the other columns are never touched), through
//! arrow-rs's low-level column reader, page by page, at most 1024 rows at a time; their values
//! are copied out into a [`TextBatch`] of about the size the caller asks for.
//! What is held at once: the file's footer (its schema and the row groups' metadata, read
//! whole at open; small beside the data), the column chunk's dictionary if it has one, the
//! decoded page (or the few pages) of the rows being handed out, and the batch. A page is
//! decoded whole: a writer's pages are about 1 MiB, though one text is never split across
//! pages, so a page is at least as long as its longest text. Measured (release, one core): a
//! pyarrow file of one 136 MB row group (snappy, plain pages) read in 16 MB batches, UTF-8
//! checked, at about 1 GB/s in 31 MB of memory (peak RSS), the whole process.
//!
//! What is checked where:
//! - At [`ParquetTexts::open`]: that the file is Parquet, that the column exists, that it holds
//!   strings (`BYTE_ARRAY`, annotated as a string or not at all, not repeated) and that every
//!   chunk of it is compressed with a codec this build reads. Each is an error naming the file
//!   and the column (and the row group, for a codec).
//! - While reading: a damaged page, or a chunk with fewer values than its row group's rows, is an
//!   error naming the file, the row group and the column; a null is an error naming the row too
//!   (or, with `skip_bad`, is skipped and counted).
//! - The reader's own panics (arrow-rs 60.1 has a few on damaged pages) are caught where it is
//!   called and reported as damage naming the file, the row group and the column (see
//!   `guarded`).
//! - Not here: UTF-8. The caller checks a whole batch at once (simdutf8 is fast on long runs)
//!   and names a bad text with [`ParquetTexts::bad_text`] and [`TextBatch::row`].
//!
//! Rows are counted from 0 within the file, as pyarrow and pandas index them.

use std::fmt;
use std::fs::File;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use parquet::basic::{Compression, ConvertedType, LogicalType, Type as PhysicalType};
use parquet::column::reader::ColumnReaderImpl;
use parquet::data_type::{ByteArray, ByteArrayType};
use parquet::errors::ParquetError as CrateError;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::ColumnDescPtr;

/// The most rows decoded at once (the reader decodes by rows, not bytes); their values are
/// handed out over as many batches as they fill. A decoded value holds on to its page (or is
/// built, for the delta encodings), so what is decoded ahead costs about its texts' bytes: fewer
/// rows are decoded when texts are long (see [`ParquetTexts::rows_to_decode`]).
const MOST_ROWS_DECODED: usize = 1024;

/// The rows decoded first, before the texts' size is known.
const FIRST_ROWS_DECODED: usize = 16;

/// Why a Parquet input could not be read: the file, where in it (when known), and what.
#[derive(Debug)]
pub struct ParquetError {
    /// The file.
    pub path: PathBuf,
    /// The row group, from 0, when the error is in one.
    pub row_group: Option<usize>,
    /// The row, from 0 within the file, when the error is about one.
    pub row: Option<u64>,
    /// The column, as asked for (when the error is about it).
    pub column: Option<String>,
    /// What went wrong.
    pub kind: ParquetErrorKind,
}

/// What went wrong in a [`ParquetError`].
#[derive(Debug)]
pub enum ParquetErrorKind {
    /// The file could not be opened or read.
    Io(io::Error),
    /// Not a Parquet file, or a damaged one (the reader's message).
    Damaged(String),
    /// No column of that name; the file's columns (as leaf paths, `a.b` inside a group).
    MissingColumn { columns: Vec<String> },
    /// The column does not hold strings: what it holds.
    NotText(String),
    /// A chunk compressed with a codec this build does not read (its name).
    UnsupportedCodec(String),
    /// A null where a text was expected.
    Null,
    /// A text the caller found bad (for example not UTF-8): why.
    BadText(String),
}

impl fmt::Display for ParquetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        let mut at = Vec::new();
        if let Some(g) = self.row_group {
            at.push(format!("row group {g}"));
        }
        if let Some(r) = self.row {
            at.push(format!("row {r} (from 0)"));
        }
        if let Some(c) = &self.column {
            at.push(format!("column `{c}`"));
        }
        if !at.is_empty() {
            write!(f, ", {}", at.join(", "))?;
        }
        match &self.kind {
            ParquetErrorKind::Io(e) => write!(f, ": {e}"),
            ParquetErrorKind::Damaged(why) => {
                write!(f, ": not a Parquet file, or a damaged one ({why})")
            }
            ParquetErrorKind::MissingColumn { columns } => {
                const SHOWN: usize = 20;
                write!(f, ": no such column; the file's columns: ")?;
                let names: Vec<String> = columns
                    .iter()
                    .take(SHOWN)
                    .map(|c| format!("`{c}`"))
                    .collect();
                write!(f, "{}", names.join(", "))?;
                if columns.len() > SHOWN {
                    write!(f, " and {} more", columns.len() - SHOWN)?;
                }
                Ok(())
            }
            ParquetErrorKind::NotText(found) => {
                write!(f, ": not a string column: {found}")
            }
            ParquetErrorKind::UnsupportedCodec(codec) => write!(
                f,
                ": compressed with {codec}, which this build does not read \
                 (it reads snappy, gzip, zstd, lz4, brotli and uncompressed columns)"
            ),
            ParquetErrorKind::Null => write!(f, ": a null value, not a text"),
            ParquetErrorKind::BadText(why) => write!(f, ": {why}"),
        }
    }
}

impl std::error::Error for ParquetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ParquetErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Consecutive texts of the column: their bytes end to end, and where each ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextBatch {
    /// The texts' bytes, one after another (not checked to be UTF-8).
    pub bytes: Vec<u8>,
    /// The end of each text in `bytes`: text `i` is `bytes[ends[i - 1]..ends[i]]` (from 0 for
    /// the first).
    pub ends: Vec<usize>,
    /// The first row the batch covers, from 0 within the file (a skipped null's, if the batch
    /// begins with one).
    pub first_row: u64,
    /// The rows the batch covers that were skipped (nulls, with `skip_bad`), ascending.
    pub skipped_rows: Vec<u64>,
}

impl TextBatch {
    /// Its number of texts.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds no text.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Text `i`'s bytes.
    pub fn text(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// The texts' bytes, in order.
    pub fn texts(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.text(i))
    }

    /// The text in which byte `offset` of `bytes` lies (for a UTF-8 error found in the whole
    /// batch at once: its `valid_up_to`). `offset` must be below `bytes.len()`.
    pub fn text_at(&self, offset: usize) -> usize {
        self.ends.partition_point(|&end| end <= offset)
    }

    /// Text `i`'s row, from 0 within the file: the row to name in an error about it.
    pub fn row(&self, i: usize) -> u64 {
        // Rows first_row.. are the texts in order, with the skipped rows interleaved.
        let mut row = self.first_row + i as u64;
        for &skipped in &self.skipped_rows {
            if skipped <= row {
                row += 1;
            } else {
                break;
            }
        }
        row
    }

    /// Empties it (keeping its buffers).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.skipped_rows.clear();
        self.first_row = 0;
    }

    fn push(&mut self, text: &[u8]) {
        self.bytes.extend_from_slice(text);
        self.ends.push(self.bytes.len());
    }
}

/// Rows decoded from the current row group and not yet handed out.
#[derive(Default)]
struct Pending {
    /// The non-null values, in order.
    values: Vec<ByteArray>,
    /// The definition level of each row, for a nullable column (empty for a required one: each
    /// value is a row).
    levels: Vec<i16>,
    /// The next value to hand out.
    value: usize,
    /// The next level to hand out.
    level: usize,
}

impl Pending {
    fn clear(&mut self) {
        self.values.clear();
        self.levels.clear();
        self.value = 0;
        self.level = 0;
    }

    /// The next row: `Some(Some(text))`, `Some(None)` for a null, `None` when none is left.
    fn next(&mut self, nullable: bool, max_level: i16) -> Option<Option<&[u8]>> {
        if nullable {
            let &level = self.levels.get(self.level)?;
            self.level += 1;
            if level < max_level {
                return Some(None);
            }
        }
        let value = self.values.get(self.value)?;
        self.value += 1;
        Some(Some(value.data()))
    }
}

/// One Parquet file opened for its texts: one column's values, in row order.
pub struct ParquetTexts {
    path: PathBuf,
    column: String,
    reader: SerializedFileReader<File>,
    /// The column's index among the file's leaf columns.
    leaf: usize,
    descr: ColumnDescPtr,
    /// Whether the column (or a group above it) is optional: rows carry definition levels.
    nullable: bool,
    /// Each row group's end, in rows from the start of the file.
    group_ends: Vec<u64>,
    /// The row group to open next.
    next_group: usize,
    /// The current row group's column, while it has rows not yet decoded.
    current: Option<ColumnReaderImpl<ByteArrayType>>,
    /// Rows of the current row group not yet decoded.
    group_rows_left: u64,
    pending: Pending,
    /// The next row to hand out.
    row: u64,
    skip_bad: bool,
    skipped: u64,
    /// Texts handed out and their bytes, and the longest text of the rows decoded last: they
    /// size the next decode.
    texts_seen: u64,
    bytes_seen: u64,
    longest_recent: usize,
    /// The error that stopped the reading (the column reader's state is not to be trusted
    /// after it, a panic's least of all): every later batch is that error again.
    stopped: Option<String>,
}

impl ParquetTexts {
    /// Opens `path` for the texts of `column` (a top-level column's name, or `a.b` for a field
    /// inside a group), checking that the column holds strings and can be read. With
    /// `skip_bad`, nulls are skipped and counted ([`ParquetTexts::skipped`]) instead of being
    /// an error.
    pub fn open(path: &Path, column: &str, skip_bad: bool) -> Result<ParquetTexts, ParquetError> {
        let error = |row_group: Option<usize>, column: Option<&str>, kind| ParquetError {
            path: path.to_path_buf(),
            row_group,
            row: None,
            column: column.map(str::to_string),
            kind,
        };
        let io = |e| error(None, None, ParquetErrorKind::Io(e));
        let file = File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        let reader =
            guarded(|| SerializedFileReader::new(file)).map_err(|kind| error(None, None, kind))?;
        let metadata = reader.metadata();
        let schema = metadata.file_metadata().schema_descr();
        let Some(leaf) = schema
            .columns()
            .iter()
            .position(|c| c.path().string() == column)
        else {
            // A list or struct column of that name is named as such, not as missing.
            let kind = match schema
                .root_schema()
                .get_fields()
                .iter()
                .find(|f| f.name() == column)
            {
                Some(field) if field.is_group() => ParquetErrorKind::NotText(format!(
                    "a group (list, map or struct) column{}",
                    annotation(
                        field.get_basic_info().logical_type_ref(),
                        field.get_basic_info().converted_type()
                    )
                )),
                _ => ParquetErrorKind::MissingColumn {
                    columns: schema.columns().iter().map(|c| c.path().string()).collect(),
                },
            };
            return Err(error(None, Some(column), kind));
        };
        let descr = schema.column(leaf);
        check_text_column(&descr)
            .map_err(|found| error(None, Some(column), ParquetErrorKind::NotText(found)))?;
        let mut group_ends = Vec::with_capacity(metadata.num_row_groups());
        let mut rows = 0u64;
        for (g, group) in metadata.row_groups().iter().enumerate() {
            let damaged =
                |why: String| error(Some(g), Some(column), ParquetErrorKind::Damaged(why));
            let group_rows = u64::try_from(group.num_rows())
                .map_err(|_| damaged(format!("{} rows", group.num_rows())))?;
            rows = rows
                .checked_add(group_rows)
                .ok_or_else(|| damaged("more than 2^64 rows".to_string()))?;
            group_ends.push(rows);
            let chunk = group
                .columns()
                .get(leaf)
                .ok_or_else(|| damaged("the row group lacks the column's chunk".to_string()))?;
            // The reader asserts what is checked here (a negative offset or size panics in
            // `ColumnChunkMetaData::byte_range`); checked first, it is an error naming where.
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let size = chunk.compressed_size();
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(size).ok())
                .and_then(|(start, size)| start.checked_add(size))
                .is_some_and(|end| end <= file_len);
            if !inside {
                return Err(damaged(format!(
                    "the column's chunk, {size} bytes from byte {start}, is not inside the file \
                     of {file_len} bytes"
                )));
            }
            if !readable(chunk.compression()) {
                return Err(error(
                    Some(g),
                    Some(column),
                    ParquetErrorKind::UnsupportedCodec(chunk.compression().to_string()),
                ));
            }
        }
        Ok(ParquetTexts {
            path: path.to_path_buf(),
            column: column.to_string(),
            nullable: descr.max_def_level() > 0,
            descr,
            reader,
            leaf,
            group_ends,
            next_group: 0,
            current: None,
            group_rows_left: 0,
            pending: Pending::default(),
            row: 0,
            skip_bad,
            skipped: 0,
            texts_seen: 0,
            bytes_seen: 0,
            longest_recent: 0,
            stopped: None,
        })
    }

    /// The file's rows (the sum of its row groups', from the metadata), nulls included.
    pub fn rows(&self) -> u64 {
        self.group_ends.last().copied().unwrap_or(0)
    }

    /// The file's row groups.
    pub fn row_groups(&self) -> usize {
        self.group_ends.len()
    }

    /// The nulls skipped so far (with `skip_bad`).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The column, as asked for.
    pub fn column(&self) -> &str {
        &self.column
    }

    /// Fills `batch` (emptied first) with the next texts, in row order, until it holds
    /// `max_bytes` of text or more, or the file ends; a batch holds at least one text however
    /// small `max_bytes` is. Returns whether it holds any text: false at the end of the file.
    ///
    /// A null is an error naming its row (unless the file was opened with `skip_bad`; a later
    /// call goes on after it), and so is a damaged page (every later call is that error again).
    /// After an error, the batch holds some of the texts before it.
    pub fn next_batch(
        &mut self,
        batch: &mut TextBatch,
        max_bytes: usize,
    ) -> Result<bool, ParquetError> {
        batch.clear();
        batch.first_row = self.row;
        if let Some(why) = &self.stopped {
            let kind = ParquetErrorKind::Damaged(format!("read after an error: {why}"));
            return Err(self.row_error(self.row, kind));
        }
        loop {
            while let Some(next) = self.pending.next(self.nullable, self.descr.max_def_level()) {
                let row = self.row;
                self.row += 1;
                match next {
                    Some(text) => {
                        self.texts_seen += 1;
                        self.bytes_seen += text.len() as u64;
                        self.longest_recent = self.longest_recent.max(text.len());
                        batch.push(text);
                        if batch.bytes.len() >= max_bytes {
                            return Ok(true);
                        }
                    }
                    None if self.skip_bad => {
                        self.skipped += 1;
                        batch.skipped_rows.push(row);
                    }
                    None => return Err(self.row_error(row, ParquetErrorKind::Null)),
                }
            }
            let budget = max_bytes.saturating_sub(batch.bytes.len());
            let rows = self.rows_to_decode(budget);
            match self.decode(rows) {
                Ok(true) => {}
                Ok(false) => return Ok(!batch.is_empty()),
                Err(e) => {
                    self.stopped = Some(e.to_string());
                    return Err(e);
                }
            }
        }
    }

    /// The error to report about the text in `row` (from [`TextBatch::row`]), for example that
    /// it is not UTF-8: it names the file, the row group, the row and the column.
    pub fn bad_text(&self, row: u64, why: impl Into<String>) -> ParquetError {
        self.row_error(row, ParquetErrorKind::BadText(why.into()))
    }

    fn row_error(&self, row: u64, kind: ParquetErrorKind) -> ParquetError {
        ParquetError {
            path: self.path.clone(),
            row_group: Some(self.group_ends.partition_point(|&end| end <= row)),
            row: Some(row),
            column: Some(self.column.clone()),
            kind,
        }
    }

    fn group_error(&self, group: usize, kind: ParquetErrorKind) -> ParquetError {
        ParquetError {
            path: self.path.clone(),
            row_group: Some(group),
            row: None,
            column: Some(self.column.clone()),
            kind,
        }
    }

    /// How many rows to decode for a batch with `budget` bytes left: as many as fill it at the
    /// larger of the average text and the longest of the rows decoded last (which follows a run
    /// of long texts at once), so that little is decoded ahead of the batch when texts are long.
    /// A run of long texts right after short ones can still have up to [`MOST_ROWS_DECODED`] of
    /// them decoded at once.
    fn rows_to_decode(&mut self, budget: usize) -> usize {
        if self.texts_seen == 0 {
            return FIRST_ROWS_DECODED;
        }
        let average = (self.bytes_seen / self.texts_seen) as usize;
        let estimate = average.max(std::mem::take(&mut self.longest_recent)).max(1);
        (budget / estimate).clamp(1, MOST_ROWS_DECODED)
    }

    /// Decodes up to `most` rows of the current row group (the next, once one is done) into
    /// `pending`, which must be empty; false at the end of the file.
    fn decode(&mut self, most: usize) -> Result<bool, ParquetError> {
        self.pending.clear();
        loop {
            let group = self.next_group.saturating_sub(1);
            let Some(reader) = self.current.as_mut() else {
                if self.next_group == self.group_ends.len() {
                    return Ok(false);
                }
                self.open_group(self.next_group)?;
                continue;
            };
            let want = usize::try_from(self.group_rows_left).map_or(most, |left| left.min(most));
            let levels = self.nullable.then_some(&mut self.pending.levels);
            let values = &mut self.pending.values;
            let (rows, _values, _levels) = guarded(|| {
                reader.read_records(want, levels, None, values)
            })
            .map_err(|kind| ParquetError {
                path: self.path.clone(),
                row_group: Some(group),
                row: None,
                column: Some(self.column.clone()),
                kind,
            })?;
            if rows == 0 {
                let group_rows =
                    self.group_ends[group] - group.checked_sub(1).map_or(0, |g| self.group_ends[g]);
                let kind = ParquetErrorKind::Damaged(format!(
                    "the column's chunk ends after {} of the row group's {group_rows} rows",
                    group_rows - self.group_rows_left
                ));
                return Err(self.group_error(group, kind));
            }
            self.group_rows_left -= rows as u64;
            if self.group_rows_left == 0 {
                self.current = None;
            }
            return Ok(true);
        }
    }

    /// Opens row group `g`'s chunk of the column (a row group of no rows is passed over).
    fn open_group(&mut self, g: usize) -> Result<(), ParquetError> {
        self.next_group = g + 1;
        let start = g.checked_sub(1).map_or(0, |p| self.group_ends[p]);
        self.group_rows_left = self.group_ends[g] - start;
        if self.group_rows_left == 0 {
            return Ok(());
        }
        let pages = guarded(|| {
            self.reader
                .get_row_group(g)
                .and_then(|group| group.get_column_page_reader(self.leaf))
        })
        .map_err(|kind| self.group_error(g, kind))?;
        self.current = Some(ColumnReaderImpl::<ByteArrayType>::new(
            self.descr.clone(),
            pages,
        ));
        Ok(())
    }
}

/// Whether this build decompresses `codec` (the features chosen in Cargo.toml).
fn readable(codec: Compression) -> bool {
    matches!(
        codec,
        Compression::UNCOMPRESSED
            | Compression::SNAPPY
            | Compression::GZIP(_)
            | Compression::ZSTD(_)
            | Compression::LZ4
            | Compression::LZ4_RAW
            | Compression::BROTLI(_)
    )
}

/// Runs a call into the Parquet reader, its error or panic made a [`ParquetErrorKind`].
///
/// The reader is meant to return an error for a damaged file, and does for every damage the
/// tests make once `open` has checked the chunks' byte ranges; but it still has assertions and
/// `expect`s on values read from the file (arrow-rs 60). A panic there is caught here, at the
/// boundary, and reported like any damage ("the reader panicked: …"), rather than ending the
/// run without naming the file. The reader's state after a panic is not relied on: an error
/// ends the reading of the file.
fn guarded<T>(call: impl FnOnce() -> Result<T, CrateError>) -> Result<T, ParquetErrorKind> {
    match panic::catch_unwind(AssertUnwindSafe(call)) {
        Ok(result) => result.map_err(crate_error_kind),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(ParquetErrorKind::Damaged(format!(
                "the reader panicked: {message}"
            )))
        }
    }
}

/// The kind of a reader's error: the I/O error itself, else its message.
fn crate_error_kind(e: CrateError) -> ParquetErrorKind {
    match e {
        CrateError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(io) => ParquetErrorKind::Io(*io),
            Err(inner) => ParquetErrorKind::Damaged(inner.to_string()),
        },
        e => ParquetErrorKind::Damaged(e.to_string()),
    }
}

/// Whether a leaf column holds texts: `Err` says what it holds instead.
fn check_text_column(descr: &ColumnDescPtr) -> Result<(), String> {
    let logical = descr.logical_type_ref();
    let converted = descr.converted_type();
    if descr.max_rep_level() > 0 {
        return Err(format!(
            "a repeated (list) column of {}{}",
            descr.physical_type(),
            annotation(logical, converted)
        ));
    }
    if descr.physical_type() != PhysicalType::BYTE_ARRAY {
        return Err(format!(
            "{}{}",
            descr.physical_type(),
            annotation(logical, converted)
        ));
    }
    let string = match logical {
        Some(LogicalType::String) => true,
        Some(_) => false,
        None => matches!(converted, ConvertedType::NONE | ConvertedType::UTF8),
    };
    if string {
        Ok(())
    } else {
        Err(format!("BYTE_ARRAY{}", annotation(logical, converted)))
    }
}

/// A column's annotation in a message: ` (logical type …)`, or nothing.
fn annotation(logical: Option<&LogicalType>, converted: ConvertedType) -> String {
    match (logical, converted) {
        (Some(logical), _) => format!(" (logical type {logical:?})"),
        (None, ConvertedType::NONE) => String::new(),
        (None, converted) => format!(" (converted type {converted})"),
    }
}
