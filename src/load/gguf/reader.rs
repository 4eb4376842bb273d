//! The metadata of a GGUF file (llama.cpp's model format): its header and key–value pairs,
//! read in place from the file's bytes (a memory map), never its tensor infos or data.
//!
//! Layout (little-endian): `GGUF`, a `u32` version, a `u64` tensor count, a `u64` key–value
//! count, then the pairs: a string key, a `u32` value type, the value. A string is a `u64`
//! length and that many bytes; an array a `u32` element type, a `u64` count and the elements.
//! Versions 2 and 3 share this layout; version 1 had `u32` counts and lengths and is refused,
//! as is a big-endian file. Every length and count is checked against the bytes left before
//! it is used, so a damaged or hostile file is an error naming the offset, never a panic or a
//! large allocation: nothing here allocates in proportion to a count it has not already
//! walked over in the file.

/// The file's magic bytes.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// How deep arrays of arrays may nest (llama.cpp writes none; a bound keeps the walk's
/// recursion small on a hostile file).
const MAX_DEPTH: u32 = 8;

/// A value type of GGUF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    Bool,
    String,
    Array,
    U64,
    I64,
    F64,
}

impl ValueType {
    fn from_u32(v: u32) -> Option<ValueType> {
        use ValueType::*;
        Some(match v {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }

    /// The size of a value of a fixed-size type (`None` for strings and arrays).
    fn fixed_size(self) -> Option<usize> {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => Some(1),
            U16 | I16 => Some(2),
            U32 | I32 | F32 => Some(4),
            U64 | I64 | F64 => Some(8),
            String | Array => None,
        }
    }

    /// The fewest bytes a value of this type takes.
    fn min_size(self) -> usize {
        match self {
            ValueType::String => 8,
            ValueType::Array => 12,
            t => t.fixed_size().expect("fixed"),
        }
    }

    /// Its name, as GGUF's specification writes it.
    pub fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            U8 => "uint8",
            I8 => "int8",
            U16 => "uint16",
            I16 => "int16",
            U32 => "uint32",
            I32 => "int32",
            F32 => "float32",
            Bool => "bool",
            String => "string",
            Array => "array",
            U64 => "uint64",
            I64 => "int64",
            F64 => "float64",
        }
    }
}

/// A value, its bytes still in the file.
#[derive(Clone, Copy, Debug)]
pub struct Value<'a> {
    pub ty: ValueType,
    /// The value's bytes: a string's without its length; an array's elements without its
    /// header.
    bytes: &'a [u8],
    /// An array's element type and count.
    elem: Option<(ValueType, u64)>,
    /// Where the value starts in the file, for messages.
    pub offset: usize,
}

/// One key–value pair.
#[derive(Clone, Copy, Debug)]
pub struct Pair<'a> {
    pub key: &'a str,
    pub value: Value<'a>,
}

/// A GGUF file's header and metadata.
#[derive(Debug)]
pub struct Metadata<'a> {
    pub version: u32,
    pub tensor_count: u64,
    pub pairs: Vec<Pair<'a>>,
}

/// A cursor over the file's bytes, every read checked.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], String> {
        if n > self.left() as u64 {
            return Err(format!(
                "truncated or damaged GGUF: {what} at offset {} needs {n} bytes, {} are left",
                self.pos,
                self.left()
            ));
        }
        let n = n as usize;
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// A string's bytes.
    fn string(&mut self, what: &str) -> Result<&'a [u8], String> {
        let n = self.u64(what)?;
        self.take(n, what)
    }

    fn value_type(&mut self, what: &str) -> Result<ValueType, String> {
        let at = self.pos;
        let raw = self.u32(what)?;
        ValueType::from_u32(raw)
            .ok_or_else(|| format!("damaged GGUF: {what} at offset {at} has unknown type {raw}"))
    }

    /// Walks over a value of type `ty`, checking its lengths.
    fn value(&mut self, ty: ValueType, what: &str, depth: u32) -> Result<Value<'a>, String> {
        let offset = self.pos;
        if let Some(size) = ty.fixed_size() {
            let bytes = self.take(size as u64, what)?;
            return Ok(Value {
                ty,
                bytes,
                elem: None,
                offset,
            });
        }
        if ty == ValueType::String {
            let bytes = self.string(what)?;
            return Ok(Value {
                ty,
                bytes,
                elem: None,
                offset,
            });
        }
        if depth >= MAX_DEPTH {
            return Err(format!(
                "damaged GGUF: {what} at offset {offset} nests arrays more than {MAX_DEPTH} deep"
            ));
        }
        let elem = self.value_type(what)?;
        let count = self.u64(what)?;
        let min = elem.min_size() as u64;
        if count
            .checked_mul(min)
            .is_none_or(|n| n > self.left() as u64)
        {
            return Err(format!(
                "truncated or damaged GGUF: {what} at offset {offset} claims {count} elements \
                 of type {}, more than the {} bytes left can hold",
                elem.name(),
                self.left()
            ));
        }
        let start = self.pos;
        match elem.fixed_size() {
            Some(size) => {
                self.take(count * size as u64, what)?;
            }
            None => {
                for _ in 0..count {
                    self.value(elem, what, depth + 1)?;
                }
            }
        }
        Ok(Value {
            ty,
            bytes: &self.bytes[start..self.pos],
            elem: Some((elem, count)),
            offset,
        })
    }
}

/// Reads the header and key–value pairs of the GGUF file `bytes`; the tensor infos and data
/// after them are never looked at.
pub fn read(bytes: &[u8]) -> Result<Metadata<'_>, String> {
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        return Err("not a GGUF file (it does not start with the bytes GGUF)".into());
    }
    let mut c = Cursor { bytes, pos: 4 };
    let version = c.u32("the version")?;
    if version == 0 || version > 0xFFFF {
        let swapped = version.swap_bytes();
        if (1..=0xFFFF).contains(&swapped) {
            return Err(format!(
                "big-endian GGUF is not supported (version {swapped}, byte-swapped)"
            ));
        }
        return Err(format!("damaged GGUF: version {version} is not plausible"));
    }
    match version {
        1 => return Err("GGUF version 1 is not supported (only versions 2 and 3 are)".into()),
        2 | 3 => {}
        v => {
            return Err(format!(
                "GGUF version {v} is not supported (only 2 and 3 are)"
            ));
        }
    }
    let tensor_count = c.u64("the tensor count")?;
    let kv_count = c.u64("the key-value count")?;
    // A pair takes at least a key length (8), a type (4) and a one-byte value.
    if kv_count.checked_mul(13).is_none_or(|n| n > c.left() as u64) {
        return Err(format!(
            "truncated or damaged GGUF: {kv_count} key-value pairs claimed, more than the {} \
             bytes left can hold",
            c.left()
        ));
    }
    let mut pairs = Vec::with_capacity(kv_count as usize);
    for i in 0..kv_count {
        let at = c.pos;
        let key = c.string(&format!("key #{i}"))?;
        let key = std::str::from_utf8(key)
            .map_err(|_| format!("damaged GGUF: key #{i} at offset {at} is not UTF-8"))?;
        let ty = c.value_type(key)?;
        let value = c.value(ty, key, 0)?;
        pairs.push(Pair { key, value });
    }
    Ok(Metadata {
        version,
        tensor_count,
        pairs,
    })
}

impl<'a> Metadata<'a> {
    /// The value of `key`, if present (the last one, should a key repeat).
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        self.pairs
            .iter()
            .rev()
            .find(|p| p.key == key)
            .map(|p| p.value)
    }
}

impl<'a> Value<'a> {
    fn wrong(&self, key: &str, wanted: &str) -> String {
        let found = match self.elem {
            Some((e, _)) => format!("an array of {}", e.name()),
            None => self.ty.name().to_string(),
        };
        format!("{key} (offset {}) is {found}, not {wanted}", self.offset)
    }

    /// A string value.
    pub fn as_str(&self, key: &str) -> Result<&'a str, String> {
        if self.ty != ValueType::String {
            return Err(self.wrong(key, "a string"));
        }
        std::str::from_utf8(self.bytes).map_err(|_| format!("{key} is not UTF-8"))
    }

    /// A string value's bytes.
    pub fn as_bytes_of_string(&self, key: &str) -> Result<&'a [u8], String> {
        if self.ty != ValueType::String {
            return Err(self.wrong(key, "a string"));
        }
        Ok(self.bytes)
    }

    /// A bool value.
    pub fn as_bool(&self, key: &str) -> Result<bool, String> {
        if self.ty != ValueType::Bool {
            return Err(self.wrong(key, "a bool"));
        }
        match self.bytes[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!(
                "{key} (offset {}) is a bool of value {b}",
                self.offset
            )),
        }
    }

    /// An integer value of any integer type, as u64 (negative: an error).
    pub fn as_u64(&self, key: &str) -> Result<u64, String> {
        let b = self.bytes;
        let v: i128 = match self.ty {
            ValueType::U8 => b[0] as i128,
            ValueType::I8 => b[0] as i8 as i128,
            ValueType::U16 => u16::from_le_bytes([b[0], b[1]]) as i128,
            ValueType::I16 => i16::from_le_bytes([b[0], b[1]]) as i128,
            ValueType::U32 => u32::from_le_bytes(b.try_into().expect("4")) as i128,
            ValueType::I32 => i32::from_le_bytes(b.try_into().expect("4")) as i128,
            ValueType::U64 => u64::from_le_bytes(b.try_into().expect("8")) as i128,
            ValueType::I64 => i64::from_le_bytes(b.try_into().expect("8")) as i128,
            _ => return Err(self.wrong(key, "an integer")),
        };
        u64::try_from(v).map_err(|_| format!("{key} (offset {}) is negative: {v}", self.offset))
    }

    fn array_of(&self, key: &str, elem: ValueType, wanted: &str) -> Result<u64, String> {
        match self.elem {
            Some((e, n)) if e == elem => Ok(n),
            _ => Err(self.wrong(key, wanted)),
        }
    }

    /// An array of strings, each UTF-8.
    pub fn as_strings(&self, key: &str) -> Result<Vec<&'a str>, String> {
        let n = self.array_of(key, ValueType::String, "an array of strings")?;
        // Walked once already: every length is within the array's bytes.
        let mut c = Cursor {
            bytes: self.bytes,
            pos: 0,
        };
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            let s = c.string(key)?;
            out.push(
                std::str::from_utf8(s).map_err(|_| format!("{key}[{i}] is not UTF-8: {s:?}"))?,
            );
        }
        Ok(out)
    }

    /// An array of float32.
    pub fn as_f32s(&self, key: &str) -> Result<Vec<f32>, String> {
        self.array_of(key, ValueType::F32, "an array of float32")?;
        Ok(self
            .bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4")))
            .collect())
    }

    /// An array of int32 (or uint32, which llama.cpp's older writers used).
    pub fn as_i32s(&self, key: &str) -> Result<Vec<i32>, String> {
        match self.elem {
            Some((ValueType::I32 | ValueType::U32, _)) => Ok(self
                .bytes
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes(b.try_into().expect("4")))
                .collect()),
            _ => Err(self.wrong(key, "an array of int32")),
        }
    }

    /// An array of bytes (uint8 or int8).
    pub fn as_byte_array(&self, key: &str) -> Result<&'a [u8], String> {
        match self.elem {
            Some((ValueType::U8 | ValueType::I8, _)) => Ok(self.bytes),
            _ => Err(self.wrong(key, "an array of uint8")),
        }
    }
}
