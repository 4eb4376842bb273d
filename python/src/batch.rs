//! Batches: the texts gathered without copying them (a `list[str]`'s UTF-8, or an Arrow array's
//! buffers), encoded on the pool's threads with the GIL released, into flat buffers that numpy
//! and pyarrow wrap without a copy.

use std::ops::Range;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use rayon::prelude::*;

use crate::{arrow, pool};

/// The texts of a batch, each a slice of UTF-8 (or `None` for a null), and what keeps them alive.
pub struct Rows<'py> {
    /// The tuple of `str` objects, or the Arrow memory.
    _keep: Keep<'py>,
    /// Slices into the kept objects: valid while `_keep` is (they are never handed out beyond a
    /// call that holds this `Rows`).
    rows: Vec<Option<&'static [u8]>>,
    /// Whether the slices still need a UTF-8 check (Arrow data; Python's `str` is checked when
    /// its UTF-8 is made).
    validate: bool,
    nulls: usize,
}

#[allow(dead_code)] // held for their destructors only
enum Keep<'py> {
    Tuple(Bound<'py, PyTuple>),
    Arrow(arrow::Holder<'py>),
}

impl Rows<'_> {
    pub fn is_null(&self, i: usize) -> bool {
        self.rows[i].is_none()
    }

    /// The Arrow validity bitmap (bit `i` set for a text) and the number of nulls; `None` when
    /// there is none.
    pub fn validity(&self) -> (Option<Vec<u8>>, usize) {
        if self.nulls == 0 {
            return (None, 0);
        }
        let mut bits = vec![0u8; self.rows.len().div_ceil(8)];
        for (i, row) in self.rows.iter().enumerate() {
            if row.is_some() {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        (Some(bits), self.nulls)
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The texts of `texts`: an object with the Arrow PyCapsule interface (a string array), or a
/// sequence (any iterable) of `str` (`None` is a null).
pub fn gather<'py>(texts: &Bound<'py, PyAny>) -> PyResult<Rows<'py>> {
    if texts.is_instance_of::<PyString>() || texts.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(format!(
            "texts must be a list of str or an Arrow string array, not a single {} \
             (use encode() for one text)",
            type_name(texts)
        )));
    }
    if let Some((holder, rows)) = arrow::import(texts)? {
        let nulls = rows.iter().filter(|r| r.is_none()).count();
        return Ok(Rows {
            _keep: Keep::Arrow(holder),
            rows,
            validate: true,
            nulls,
        });
    }
    // A tuple holds a strong reference to every item, so their UTF-8 (cached in each `str`)
    // outlives the call even if the caller's list changes meanwhile.
    let tuple = if let Ok(list) = texts.cast::<PyList>() {
        list.to_tuple()
    } else if let Ok(tuple) = texts.cast::<PyTuple>() {
        tuple.clone()
    } else {
        let iter = texts.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "texts must be a list of str or an Arrow string array, not {}",
                type_name(texts)
            ))
        })?;
        let items = iter.collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(texts.py(), items)?
    };
    let mut rows = Vec::with_capacity(tuple.len());
    let mut nulls = 0;
    // Borrowed items (the tuple holds them) and one C call per `str`: this loop is the one part
    // of a batch that runs on one thread with the GIL held, so it does no reference counting
    // and no type check of its own; a failed call says what was wrong.
    for (i, item) in tuple.iter_borrowed().enumerate() {
        if item.is_none() {
            rows.push(None);
            nulls += 1;
            continue;
        }
        let mut len: ffi::Py_ssize_t = 0;
        // SAFETY: `item` is a live object and the GIL is held. For a `str` (or a subclass) the
        // call returns its UTF-8, cached in the object; for anything else it fails.
        let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(item.as_ptr(), &mut len) };
        if data.is_null() {
            let cause = PyErr::fetch(texts.py());
            if !item.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "texts[{i}] is {}, not str",
                    type_name(&item)
                )));
            }
            let err = PyValueError::new_err(format!("texts[{i}]: {cause}"));
            err.set_cause(texts.py(), Some(cause));
            return Err(err);
        }
        // SAFETY: the UTF-8 buffer (`len` bytes at `data`) belongs to the `str` object, which
        // the tuple kept in `_keep` holds alive for as long as these rows exist; `str` objects
        // are immutable, and so is their cached UTF-8.
        let bytes: &'static [u8] =
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len as usize) };
        rows.push(Some(bytes));
    }
    Ok(Rows {
        _keep: Keep::Tuple(tuple),
        rows,
        validate: false,
        nulls,
    })
}

/// What a batch gives.
pub enum Output {
    /// All ids, and `len + 1` row starts.
    Ids { ids: Vec<u32>, offsets: Vec<i64> },
    /// The number of tokens of each text.
    Counts(Vec<i64>),
}

/// One slice of rows encoded by one thread.
struct Part {
    ids: Vec<u32>,
    /// Row ends relative to this part's first id (ids mode), or each row's count (counts mode).
    ends: Vec<i64>,
}

/// A bad row: its index and the message.
type RowError = (usize, String);

fn encode_part(
    tok: &simdtok::Tokenizer,
    rows: &[Option<&[u8]>],
    first: usize,
    validate: bool,
    count: bool,
) -> Result<Part, RowError> {
    // Room for the ids up front (about one id per 3 bytes or fewer for most text and models):
    // no copies as the vector grows (a spare buffer of an earlier batch when there is one).
    let capacity = if count {
        0
    } else {
        rows.iter().map(|r| r.map_or(0, |b| b.len())).sum::<usize>() / 3 + 16
    };
    let mut part = Part {
        ids: pool::take_ids(capacity),
        ends: Vec::with_capacity(rows.len()),
    };
    for (i, row) in rows.iter().enumerate() {
        let text = match row {
            None => "",
            Some(bytes) if validate => std::str::from_utf8(bytes).map_err(|e| {
                (
                    first + i,
                    format!("texts[{}]: invalid UTF-8: {e}", first + i),
                )
            })?,
            // SAFETY: Python made this UTF-8 (`str.encode` semantics, surrogates refused).
            Some(bytes) => unsafe { std::str::from_utf8_unchecked(bytes) },
        };
        if count {
            tok.encode_ids_into(text, &mut part.ids);
        } else {
            tok.encode_ids_append(text, &mut part.ids);
        }
        part.ends.push(part.ids.len() as i64);
    }
    Ok(part)
}

/// Contiguous ranges of rows of about equal bytes, `pieces` of them at most.
fn split(rows: &[Option<&[u8]>], pieces: usize) -> Vec<Range<usize>> {
    let weight = |r: &Option<&[u8]>| r.map_or(0, |b| b.len()) + 16;
    let total: usize = rows.iter().map(weight).sum();
    let target = total.div_ceil(pieces).max(1);
    let mut ranges = Vec::with_capacity(pieces);
    let (mut start, mut acc) = (0, 0);
    for (i, r) in rows.iter().enumerate() {
        acc += weight(r);
        if acc >= target {
            ranges.push(start..i + 1);
            start = i + 1;
            acc = 0;
        }
    }
    if start < rows.len() {
        ranges.push(start..rows.len());
    }
    ranges
}

/// Below this many bytes a batch runs on the calling thread: starting the pool's threads would
/// cost more than it saves.
const PARALLEL_MIN_BYTES: usize = 32 * 1024;

/// Encodes `rows` on `num_threads` threads (`None`: one per core; 1: the calling thread), the GIL
/// released throughout.
pub fn run(
    py: Python<'_>,
    tok: &simdtok::Tokenizer,
    rows: &Rows<'_>,
    num_threads: Option<usize>,
    count: bool,
) -> PyResult<Output> {
    let threads = match num_threads {
        None => pool::default_threads(),
        Some(0) => return Err(PyValueError::new_err("num_threads must be at least 1")),
        Some(n) => n,
    };
    let items: &[Option<&[u8]>] = &rows.rows;
    let validate = rows.validate;
    let bytes: usize = items.iter().map(|r| r.map_or(0, |b| b.len())).sum();
    let pool = if threads > 1 && items.len() > 1 && bytes >= PARALLEL_MIN_BYTES {
        Some(pool::get(threads).map_err(PyValueError::new_err)?)
    } else {
        None
    };
    // Everything, the merge of the threads' parts included, with the GIL released.
    let encode = |parallel: bool| {
        let parts = if parallel {
            let ranges = split(items, threads * 4);
            ranges
                .par_iter()
                .map(|r| encode_part(tok, &items[r.clone()], r.start, validate, count))
                .collect::<Vec<_>>()
        } else {
            vec![encode_part(tok, items, 0, validate, count)]
        };
        // The first bad text in input order, whichever thread met it first.
        let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(merge(parts, items.len(), count, parallel))
    };
    py.detach(|| match &pool {
        // One trip to the pool for the encoding and the merge.
        Some(pool) => pool.install(|| encode(true)),
        None => encode(false),
    })
    .map_err(|(_, message): RowError| PyValueError::new_err(message))
}

/// The parts of the threads, in input order, as one output: each part's ids and row ends are
/// copied into its own stretch of the output, on the pool's threads when `parallel` (called
/// inside the pool's `install`; a serial copy of every id held two threads to 1.6× of one on a
/// 4 MB batch).
fn merge(parts: Vec<Part>, rows: usize, count: bool, parallel: bool) -> Output {
    if count {
        // In count mode each part's `ends` are its rows' counts (the ids cleared per row).
        let mut counts = Vec::with_capacity(rows);
        for part in parts {
            counts.extend(part.ends);
        }
        return Output::Counts(counts);
    }
    if parts.len() == 1 {
        let Part { ids, ends } = parts.into_iter().next().unwrap();
        let mut offsets = Vec::with_capacity(ends.len() + 1);
        offsets.push(0);
        offsets.extend(ends);
        return Output::Ids { ids, offsets };
    }
    let total: usize = parts.iter().map(|p| p.ids.len()).sum();
    let mut ids = pool::take_ids(total);
    let mut offsets: Vec<i64> = Vec::with_capacity(rows + 1);
    offsets.push(0);
    {
        // Disjoint stretches of the two outputs' spare capacity, one per part, in input order.
        let mut id_rest = &mut ids.spare_capacity_mut()[..total];
        let mut end_rest = &mut offsets.spare_capacity_mut()[..rows];
        let mut jobs = Vec::with_capacity(parts.len());
        let mut base = 0i64;
        for part in &parts {
            let (id_dst, r) = id_rest.split_at_mut(part.ids.len());
            let (end_dst, e) = end_rest.split_at_mut(part.ends.len());
            (id_rest, end_rest) = (r, e);
            jobs.push((part, id_dst, end_dst, base));
            base += part.ids.len() as i64;
        }
        let copy = |(part, id_dst, end_dst, base): (
            &Part,
            &mut [std::mem::MaybeUninit<u32>],
            &mut [std::mem::MaybeUninit<i64>],
            i64,
        )| {
            for (d, &s) in id_dst.iter_mut().zip(&part.ids) {
                d.write(s);
            }
            for (d, &e) in end_dst.iter_mut().zip(&part.ends) {
                d.write(e + base);
            }
        };
        if parallel {
            jobs.into_par_iter().for_each(copy);
        } else {
            jobs.into_iter().for_each(copy);
        }
    }
    // Checked, not assumed: the `set_len` below relies on it.
    assert_eq!(parts.iter().map(|p| p.ends.len()).sum::<usize>(), rows);
    // SAFETY: the parts' ids and ends tile `0..total` and `0..rows` of the spare capacity
    // (split in order above, each stretch as long as its part's), and every stretch was written
    // whole, so the first `total` ids and `rows + 1` offsets are initialized.
    unsafe {
        ids.set_len(total);
        offsets.set_len(rows + 1);
    }
    for part in parts {
        pool::give_ids(part.ids);
    }
    Output::Ids { ids, offsets }
}

/// A flat buffer of numbers that numpy wraps without a copy (`numpy.asarray(buffer)`, through
/// `__array_interface__`; the array keeps the buffer alive as its base). No numpy headers or
/// crate are needed to build, and it works under the stable ABI (the buffer protocol does not
/// before Python 3.11).
#[pyclass(frozen, module = "simdtok._simdtok")]
pub struct Buffer {
    data: Data,
}

enum Data {
    U32(Vec<u32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
}

impl Buffer {
    pub fn u32(v: Vec<u32>) -> Buffer {
        Buffer { data: Data::U32(v) }
    }
    pub fn i64(v: Vec<i64>) -> Buffer {
        Buffer { data: Data::I64(v) }
    }
    pub fn u8(v: Vec<u8>) -> Buffer {
        Buffer { data: Data::U8(v) }
    }
    fn parts(&self) -> (usize, usize, &'static str) {
        match &self.data {
            Data::U32(v) => (v.as_ptr() as usize, v.len(), "<u4"),
            Data::I64(v) => (v.as_ptr() as usize, v.len(), "<i8"),
            Data::U8(v) => (v.as_ptr() as usize, v.len(), "|u1"),
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Data::U32(ids) = &mut self.data {
            pool::give_ids(std::mem::take(ids));
        }
    }
}

#[pymethods]
impl Buffer {
    /// numpy's array interface (version 3): the data pointer, shape and type.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (ptr, len, typestr) = self.parts();
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", (len,))?;
        d.set_item("typestr", typestr)?;
        // Writable: the buffer is the array's alone (numpy users may modify ids in place).
        d.set_item("data", (ptr, false))?;
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.parts().1
    }
}
