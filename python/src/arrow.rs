//! Arrow string arrays read in place through the Arrow PyCapsule interface
//! (`__arrow_c_array__` / `__arrow_c_stream__`) and the C Data Interface: no copy of the text, no
//! Python object per item, and no Arrow library (the three string layouts are a few lines each).
//!
//! Accepted: `utf8` (`u`), `large_utf8` (`U`) and `string_view` (`vu`) arrays, or a stream of
//! them (a chunked array); a null is a `None` row.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr::NonNull;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

/// `struct ArrowSchema` of the C Data Interface.
#[repr(C)]
struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray` of the C Data Interface.
#[repr(C)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

/// `struct ArrowArrayStream` of the C Stream Interface.
#[repr(C)]
struct ArrowArrayStream {
    get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    private_data: *mut c_void,
}

impl ArrowSchema {
    const fn empty() -> ArrowSchema {
        ArrowSchema {
            format: std::ptr::null(),
            name: std::ptr::null(),
            metadata: std::ptr::null(),
            flags: 0,
            n_children: 0,
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

impl ArrowArray {
    const fn empty() -> ArrowArray {
        ArrowArray {
            length: 0,
            null_count: 0,
            offset: 0,
            n_buffers: 0,
            n_children: 0,
            buffers: std::ptr::null_mut(),
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

/// What keeps imported Arrow memory alive: the capsules of `__arrow_c_array__` (they release the
/// array when collected), and the arrays and schema taken from a stream (released on drop).
pub struct Holder<'py> {
    _capsules: Vec<Bound<'py, PyAny>>,
    owned_arrays: Vec<ArrowArray>,
    owned_schema: Option<Box<ArrowSchema>>,
}

impl Drop for Holder<'_> {
    fn drop(&mut self) {
        for array in &mut self.owned_arrays {
            if let Some(release) = array.release {
                // SAFETY: we own this array (moved out of the stream) and release it once.
                unsafe { release(array) };
            }
        }
        if let Some(schema) = &mut self.owned_schema
            && let Some(release) = schema.release
        {
            // SAFETY: as above.
            unsafe { release(&mut **schema) };
        }
    }
}

/// The string layouts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Utf8,
    LargeUtf8,
    View,
}

fn layout(schema: &ArrowSchema) -> PyResult<Layout> {
    if schema.format.is_null() {
        return Err(PyValueError::new_err("Arrow schema without a format"));
    }
    // SAFETY: the C Data Interface's format is a NUL-terminated string.
    let format = unsafe { CStr::from_ptr(schema.format) }.to_string_lossy();
    match &*format {
        "u" => Ok(Layout::Utf8),
        "U" => Ok(Layout::LargeUtf8),
        "vu" => Ok(Layout::View),
        other => Err(PyTypeError::new_err(format!(
            "expected an Arrow string array (utf8, large_utf8 or string_view), got Arrow type \
             format '{other}'{}",
            if other.starts_with("+s") {
                " (a table or record batch: pass one of its columns)"
            } else {
                ""
            }
        ))),
    }
}

/// Appends the rows of `array` (of `layout`) to `rows`: a slice of bytes, or `None` for a null.
///
/// # Safety
/// `array` must be a valid, unreleased C Data Interface array of `layout`, whose buffers outlive
/// the slices pushed.
unsafe fn push_rows(
    array: &ArrowArray,
    layout: Layout,
    rows: &mut Vec<Option<&[u8]>>,
) -> PyResult<()> {
    let need = if layout == Layout::View { 2 } else { 3 };
    if array.n_buffers < need || array.length < 0 || array.offset < 0 {
        return Err(PyValueError::new_err("malformed Arrow string array"));
    }
    let n = array.length as usize;
    let off = array.offset as usize;
    if n == 0 {
        return Ok(());
    }
    unsafe {
        let buffers = std::slice::from_raw_parts(array.buffers, array.n_buffers as usize);
        let validity = buffers[0] as *const u8;
        let valid = |i: usize| -> bool {
            array.null_count == 0
                || validity.is_null()
                || (*validity.add((off + i) / 8) >> ((off + i) % 8)) & 1 == 1
        };
        rows.reserve(n);
        match layout {
            Layout::Utf8 | Layout::LargeUtf8 => {
                let data = buffers[2] as *const u8;
                for i in 0..n {
                    if !valid(i) {
                        rows.push(None);
                        continue;
                    }
                    let (s, e) = if layout == Layout::Utf8 {
                        let o = buffers[1] as *const i32;
                        (*o.add(off + i) as usize, *o.add(off + i + 1) as usize)
                    } else {
                        let o = buffers[1] as *const i64;
                        (*o.add(off + i) as usize, *o.add(off + i + 1) as usize)
                    };
                    if e < s {
                        return Err(PyValueError::new_err(
                            "malformed Arrow string array offsets",
                        ));
                    }
                    rows.push(Some(if e == s {
                        &[]
                    } else {
                        std::slice::from_raw_parts(data.add(s), e - s)
                    }));
                }
            }
            Layout::View => {
                // 16-byte views: length (i32), then the bytes inline when they fit in 12, else a
                // 4-byte prefix, the data buffer's index and the offset in it.
                let views = buffers[1] as *const u8;
                let data = &buffers[2..array.n_buffers as usize - 1];
                for i in 0..n {
                    if !valid(i) {
                        rows.push(None);
                        continue;
                    }
                    let view = views.add((off + i) * 16);
                    let len = (view as *const i32).read_unaligned();
                    if len < 0 {
                        return Err(PyValueError::new_err("malformed Arrow string view"));
                    }
                    let len = len as usize;
                    if len <= 12 {
                        rows.push(Some(std::slice::from_raw_parts(view.add(4), len)));
                    } else {
                        let index = (view.add(8) as *const i32).read_unaligned() as usize;
                        let start = (view.add(12) as *const i32).read_unaligned() as usize;
                        let Some(buffer) = data.get(index) else {
                            return Err(PyValueError::new_err("malformed Arrow string view"));
                        };
                        rows.push(Some(std::slice::from_raw_parts(
                            (*buffer as *const u8).add(start),
                            len,
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

fn capsule_pointer<T>(capsule: &Bound<'_, PyAny>, name: &CStr) -> PyResult<NonNull<T>> {
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(format!(
            "the Arrow PyCapsule interface returned something other than a capsule ({})",
            name.to_string_lossy()
        ))
    })?;
    Ok(capsule.pointer_checked(Some(name))?.cast())
}

/// Imported rows and what keeps their memory alive (the slices are valid while the holder is).
pub type Imported<'py> = (Holder<'py>, Vec<Option<&'static [u8]>>);

/// The rows of an object exposing `__arrow_c_array__` or `__arrow_c_stream__`, or `None` when it
/// exposes neither. The slices live as long as the returned holder.
pub fn import<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Imported<'py>>> {
    let mut rows = Vec::new();
    // An array (pyarrow's Array has both methods: the array one needs no stream).
    if obj.hasattr("__arrow_c_array__")? {
        let pair = obj.call_method0("__arrow_c_array__")?;
        let pair = pair.cast::<PyTuple>().map_err(|_| {
            PyTypeError::new_err("__arrow_c_array__ must return a (schema, array) tuple")
        })?;
        if pair.len() != 2 {
            return Err(PyTypeError::new_err(
                "__arrow_c_array__ must return a (schema, array) tuple",
            ));
        }
        let (schema_capsule, array_capsule) = (pair.get_item(0)?, pair.get_item(1)?);
        let schema = capsule_pointer::<ArrowSchema>(&schema_capsule, c"arrow_schema")?;
        let array = capsule_pointer::<ArrowArray>(&array_capsule, c"arrow_array")?;
        // SAFETY: the capsules hold valid structs, kept alive (unreleased) by the holder.
        unsafe {
            let layout = layout(schema.as_ref())?;
            push_rows(array.as_ref(), layout, &mut rows)?;
        }
        let holder = Holder {
            _capsules: vec![schema_capsule, array_capsule],
            owned_arrays: Vec::new(),
            owned_schema: None,
        };
        return Ok(Some((holder, rows)));
    }
    if !obj.hasattr("__arrow_c_stream__")? {
        return Ok(None);
    }
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let stream_ptr = capsule_pointer::<ArrowArrayStream>(&capsule, c"arrow_array_stream")?;
    // Move the stream out of the capsule (the capsule's destructor then leaves it alone).
    // SAFETY: a valid stream struct; after the read the capsule's copy is marked released.
    let mut stream = unsafe {
        let s = std::ptr::read(stream_ptr.as_ptr());
        (*stream_ptr.as_ptr()).release = None;
        s
    };
    struct StreamGuard<'s>(&'s mut ArrowArrayStream);
    impl Drop for StreamGuard<'_> {
        fn drop(&mut self) {
            if let Some(release) = self.0.release {
                // SAFETY: we own the stream and release it once.
                unsafe { release(self.0) };
            }
        }
    }
    let guard = StreamGuard(&mut stream);
    let error = |stream: &mut ArrowArrayStream, code: c_int| -> PyErr {
        let detail = stream
            .get_last_error
            // SAFETY: the stream's own callback; it returns a C string or null.
            .map(|f| unsafe { f(stream) })
            .filter(|p| !p.is_null())
            .map(|p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("error code {code}"));
        PyValueError::new_err(format!("reading the Arrow stream: {detail}"))
    };
    let mut holder = Holder {
        _capsules: vec![capsule],
        owned_arrays: Vec::new(),
        owned_schema: Some(Box::new(ArrowSchema::empty())),
    };
    let (Some(get_schema), Some(get_next)) = (guard.0.get_schema, guard.0.get_next) else {
        return Err(PyValueError::new_err("malformed Arrow stream"));
    };
    // SAFETY: the stream's callbacks, called as the C Stream Interface specifies.
    let layout = unsafe {
        let schema: *mut ArrowSchema = &mut **holder.owned_schema.as_mut().unwrap();
        let code = get_schema(guard.0, schema);
        if code != 0 {
            return Err(error(guard.0, code));
        }
        layout(&*schema)?
    };
    loop {
        let mut array = ArrowArray::empty();
        // SAFETY: as above; the array is ours once filled, released by the holder.
        let code = unsafe { get_next(guard.0, &mut array) };
        if code != 0 {
            return Err(error(guard.0, code));
        }
        if array.release.is_none() {
            break; // end of stream
        }
        holder.owned_arrays.push(array);
        let array = holder.owned_arrays.last().unwrap();
        // SAFETY: the array is valid and kept alive (unreleased) by the holder.
        unsafe { push_rows(array, layout, &mut rows)? };
    }
    drop(guard);
    Ok(Some((holder, rows)))
}
