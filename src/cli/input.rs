//! Reading texts: the input is read in batches of whole lines (bounded in bytes and count, so a
//! huge file never sits in memory), and each record becomes a text where it is encoded, on the
//! worker threads (UTF-8 validation and JSON parsing are work worth sharing out too).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::Range;
use std::path::PathBuf;

use super::args::{InputArgs, InputFormat};
use super::{CliResult, Failure};

/// Where texts come from, and how to find them in a record.
pub struct Source {
    /// The input's name for messages (its path, or `<stdin>`).
    pub name: String,
    format: InputFormat,
    field: String,
    /// The file's size, when known (for the progress bar).
    pub len: Option<u64>,
}

/// Reads `Batch`es of records.
pub struct Reader {
    input: BufReader<Box<dyn Read + Send>>,
    format: InputFormat,
    name: String,
    next_line: u64,
    done: bool,
    max_bytes: usize,
    max_records: usize,
}

/// Consecutive records of the input: record `i` is line `first_line + i` (for `raw`, the only
/// record starts at line 1).
pub struct Batch {
    data: Vec<u8>,
    spans: Vec<Range<usize>>,
    /// The line number of the first record.
    pub first_line: u64,
    /// The bytes of input this batch consumed (line ends included).
    pub consumed: u64,
}

/// One record: the bytes of one text before validation, and where it starts.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    /// The line (or, for `jsonl`, the JSON object) without its line end.
    pub bytes: &'a [u8],
    /// Its 1-based line number.
    pub line: u64,
}

/// Opens the input of `args`; batches hold about `max_bytes` and at most `max_records` records.
pub fn open(args: &InputArgs, max_bytes: usize, max_records: usize) -> CliResult<(Source, Reader)> {
    if args.field.is_some() && args.input_format != InputFormat::Jsonl {
        return Err(Failure::usage(
            "--field applies only to --input-format jsonl",
        ));
    }
    let (name, read, len): (String, Box<dyn Read + Send>, Option<u64>) = match &args.input {
        Some(path) if path.as_os_str() != "-" => {
            let name = path.display().to_string();
            let file = File::open(path).map_err(|e| Failure::runtime(format!("{name}: {e}")))?;
            let len = file
                .metadata()
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            (name, Box::new(file), len)
        }
        _ => ("<stdin>".to_owned(), Box::new(std::io::stdin()), None),
    };
    let source = Source {
        name: name.clone(),
        format: args.input_format,
        field: args.field.clone().unwrap_or_else(|| "text".to_owned()),
        len,
    };
    let reader = Reader {
        input: BufReader::with_capacity(1 << 16, read),
        format: args.input_format,
        name,
        next_line: 1,
        done: false,
        max_bytes,
        max_records,
    };
    Ok((source, reader))
}

/// Opens `path` (`-` or none: stdin) as `ids` lines, for `decode`.
pub fn open_lines(
    path: &Option<PathBuf>,
    max_bytes: usize,
    max_records: usize,
) -> CliResult<(Source, Reader)> {
    let args = InputArgs {
        input: path.clone(),
        input_format: InputFormat::Lines,
        field: None,
    };
    open(&args, max_bytes, max_records)
}

impl Reader {
    /// The next batch, or `None` at the end of the input. Only I/O errors are reported here; bad
    /// records are found by [`Source::text`], in input order.
    pub fn next_batch(&mut self) -> CliResult<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        let io = |e: std::io::Error| Failure::runtime(format!("{}: {e}", self.name));
        let mut batch = Batch {
            data: Vec::new(),
            spans: Vec::new(),
            first_line: self.next_line,
            consumed: 0,
        };
        if self.format == InputFormat::Raw {
            // The whole input is one text, even an empty one.
            self.input.read_to_end(&mut batch.data).map_err(io)?;
            batch.spans.push(0..batch.data.len());
            batch.consumed = batch.data.len() as u64;
            self.done = true;
            return Ok(Some(batch));
        }
        while batch.data.len() < self.max_bytes && batch.spans.len() < self.max_records {
            let start = batch.data.len();
            let n = self
                .input
                .read_until(b'\n', &mut batch.data)
                .map_err(|e| Failure::runtime(format!("{}:{}: {e}", self.name, self.next_line)))?;
            if n == 0 {
                self.done = true;
                break;
            }
            let mut end = batch.data.len();
            // A line ends at its "\n", and a "\r" just before it belongs to the line end; a last
            // line without "\n" keeps everything.
            if batch.data[end - 1] == b'\n' {
                end -= 1;
                if end > start && batch.data[end - 1] == b'\r' {
                    end -= 1;
                }
            }
            batch.spans.push(start..end);
            batch.consumed += n as u64;
            self.next_line += 1;
        }
        Ok((!batch.spans.is_empty()).then_some(batch))
    }
}

impl Batch {
    /// The number of records.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// The spans of the records (indices into the batch's bytes), for splitting into chunks.
    pub fn spans(&self) -> &[Range<usize>] {
        &self.spans
    }

    /// The record of `span`, the `index`-th of the batch.
    pub fn record(&self, index: usize, span: &Range<usize>) -> Record<'_> {
        Record {
            bytes: &self.data[span.clone()],
            line: self.first_line + index as u64,
        }
    }
}

impl Source {
    /// The text of a record: the valid UTF-8 line, or for `jsonl` the string in the field.
    pub fn text<'a>(&self, record: Record<'a>) -> CliResult<Cow<'a, str>> {
        match self.format {
            InputFormat::Lines | InputFormat::Raw => self.line(record).map(Cow::Borrowed),
            InputFormat::Jsonl => self.json_text(record).map(Cow::Owned),
        }
    }

    /// The record as UTF-8 (a line, the raw input, or a line of `ids` for `decode`).
    pub fn line<'a>(&self, record: Record<'a>) -> CliResult<&'a str> {
        utf8(record).map_err(|(line, cause)| Failure::at(&self.name, line, cause))
    }

    fn json_text(&self, record: Record<'_>) -> CliResult<String> {
        let fail = |cause: String| Failure::at(&self.name, record.line, cause);
        let text = utf8(record).map_err(|(_, cause)| fail(cause))?;
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            // Each record is one line, so serde_json's "line 1" says nothing: keep the column.
            fail(format!(
                "invalid JSON: {}",
                e.to_string().replace(" at line 1 column ", " at column ")
            ))
        })?;
        let serde_json::Value::Object(mut object) = value else {
            return Err(fail(format!(
                "expected a JSON object, found {}",
                kind(&value)
            )));
        };
        match object.remove(&self.field) {
            Some(serde_json::Value::String(s)) => Ok(s),
            Some(other) => Err(fail(format!(
                "field {:?} is {}, not a string",
                self.field,
                kind(&other)
            ))),
            None => Err(fail(format!("no field {:?} in the object", self.field))),
        }
    }
}

/// The record as UTF-8, or the line of the first invalid byte and the cause.
fn utf8(record: Record<'_>) -> Result<&str, (u64, String)> {
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

/// A JSON value's kind, for messages.
fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
