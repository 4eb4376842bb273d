//! The text of one JSON line (`--input-format jsonl`): the string in one field of an object.
//!
//! A line is parsed in one pass with `serde_json`, keeping only that field: other values are
//! skipped without being built (no map, no strings allocated), and the text is borrowed from the
//! line when it holds no escape. The whole line is still validated, so an invalid line is an
//! error wherever its fault is. Building a `serde_json::Value` of each line instead cost more
//! than encoding it with a fast model.

use std::borrow::Cow;
use std::fmt;

use serde::Deserializer as _;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The string in `field` of the JSON object `line`, or why there is none: invalid JSON, not an
/// object, no such field, or a field that is not a string. With the field given twice, the last
/// one counts (as a JSON object read into a map).
pub fn field_text<'a>(line: &'a str, field: &str) -> Result<Cow<'a, str>, String> {
    match parse(line, field, None)? {
        Text::Borrowed(text) => Ok(Cow::Borrowed(text)),
        Text::Owned(text) => Ok(Cow::Owned(text)),
        Text::Appended(_) => unreachable!("no buffer was given"),
    }
}

/// What [`field_text_into`] found: the text borrowed from the line when it has no escape, else
/// where it was unescaped onto the end of the caller's buffer (no `String` of its own).
pub enum FieldText<'a> {
    Borrowed(&'a str),
    /// These bytes of the buffer.
    Appended(std::ops::Range<usize>),
}

/// [`field_text`], an unescaped text appended to `buf`.
pub fn field_text_into<'a>(
    line: &'a str,
    field: &str,
    buf: &mut String,
) -> Result<FieldText<'a>, String> {
    let before = buf.len();
    let text = parse(line, field, Some(&mut *buf)).inspect_err(|_| buf.truncate(before))?;
    match text {
        Text::Borrowed(text) => Ok(FieldText::Borrowed(text)),
        Text::Appended(range) => Ok(FieldText::Appended(range)),
        Text::Owned(_) => unreachable!("a buffer was given"),
    }
}

/// The field's text, or why there is none; with `buf`, unescaped text goes there.
fn parse<'a>(line: &'a str, field: &str, buf: Option<&mut String>) -> Result<Text<'a>, String> {
    let mut de = serde_json::Deserializer::from_str(line);
    let found = de
        .deserialize_any(Object { field, buf })
        .and_then(|found| de.end().map(|()| found))
        .map_err(|e| {
            // Each record is one line, so serde_json's "line 1" says nothing: keep the column.
            format!(
                "invalid JSON: {}",
                e.to_string().replace(" at line 1 column ", " at column ")
            )
        })?;
    match found {
        Found::NotObject(kind) => Err(format!("expected a JSON object, found {kind}")),
        Found::Field(Value::Text(text)) => Ok(text),
        Found::Field(Value::Other(kind)) => Err(format!("field {field:?} is {kind}, not a string")),
        Found::Missing => Err(format!("no field {field:?} in the object")),
    }
}

/// What the top-level value held.
enum Found<'a> {
    Field(Value<'a>),
    Missing,
    NotObject(&'static str),
}

/// The field's value: a string, or the kind of anything else.
enum Value<'a> {
    Text(Text<'a>),
    Other(&'static str),
}

/// A string value: borrowed from the line, unescaped into a `String`, or appended to the
/// caller's buffer.
enum Text<'a> {
    Borrowed(&'a str),
    Owned(String),
    Appended(std::ops::Range<usize>),
}

/// Visits the top-level value, looking for `field`.
struct Object<'f, 'b> {
    field: &'f str,
    buf: Option<&'b mut String>,
}

impl<'de> Visitor<'de> for Object<'_, '_> {
    type Value = Found<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Found<'de>, A::Error> {
        let mut found = Found::Missing;
        while let Some(is_field) = map.next_key_seed(Key { field: self.field })? {
            if is_field {
                // The field given again: the last one counts, and the first one's text goes.
                if let (Found::Field(Value::Text(Text::Appended(r))), Some(buf)) =
                    (&found, self.buf.as_deref_mut())
                {
                    buf.truncate(r.start);
                }
                let buf = self.buf.as_deref_mut();
                found = Found::Field(map.next_value_seed(AnyValue { buf })?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Found<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Found::NotObject("an array"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Found<'de>, E> {
        Ok(Found::NotObject("a string"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Found<'de>, E> {
        Ok(Found::NotObject("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Found<'de>, E> {
        Ok(Found::NotObject("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Found<'de>, E> {
        Ok(Found::NotObject("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Found<'de>, E> {
        Ok(Found::NotObject("a number"))
    }

    fn visit_unit<E>(self) -> Result<Found<'de>, E> {
        Ok(Found::NotObject("null"))
    }
}

/// A key: whether it is the field looked for (compared without allocating when it has no
/// escape).
struct Key<'f> {
    field: &'f str,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = bool;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.field)
    }
}

/// Any value: a string kept (borrowed when it can be, else appended to `buf` when given),
/// anything else skipped and named.
struct AnyValue<'b> {
    buf: Option<&'b mut String>,
}

impl AnyValue<'_> {
    /// A string that serde_json unescaped (so not borrowed from the line).
    fn unescaped<'de>(self, s: Cow<'_, str>) -> Value<'de> {
        Value::Text(match self.buf {
            Some(buf) => {
                let start = buf.len();
                buf.push_str(&s);
                Text::Appended(start..buf.len())
            }
            None => Text::Owned(s.into_owned()),
        })
    }
}

impl<'de> DeserializeSeed<'de> for AnyValue<'_> {
    type Value = Value<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AnyValue<'_> {
    type Value = Value<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Value<'de>, E> {
        Ok(Value::Text(Text::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value<'de>, E> {
        Ok(self.unescaped(Cow::Borrowed(s)))
    }

    fn visit_string<E>(self, s: String) -> Result<Value<'de>, E> {
        Ok(self.unescaped(Cow::Owned(s)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Value::Other("an object"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Other("an array"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Value<'de>, E> {
        Ok(Value::Other("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Value<'de>, E> {
        Ok(Value::Other("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Value<'de>, E> {
        Ok(Value::Other("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Value<'de>, E> {
        Ok(Value::Other("a number"))
    }

    fn visit_unit<E>(self) -> Result<Value<'de>, E> {
        Ok(Value::Other("null"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the old reader (a whole `serde_json::Value` per line) gave, for comparison.
    fn by_value(line: &str, field: &str) -> Result<String, String> {
        let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            format!(
                "invalid JSON: {}",
                e.to_string().replace(" at line 1 column ", " at column ")
            )
        })?;
        let kind = |v: &serde_json::Value| match v {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "a boolean",
            serde_json::Value::Number(_) => "a number",
            serde_json::Value::String(_) => "a string",
            serde_json::Value::Array(_) => "an array",
            serde_json::Value::Object(_) => "an object",
        };
        let serde_json::Value::Object(mut object) = value else {
            return Err(format!("expected a JSON object, found {}", kind(&value)));
        };
        match object.remove(field) {
            Some(serde_json::Value::String(s)) => Ok(s),
            Some(other) => Err(format!("field {field:?} is {}, not a string", kind(&other))),
            None => Err(format!("no field {field:?} in the object")),
        }
    }

    #[test]
    fn same_text_and_errors_as_a_whole_value() {
        let lines = [
            r#"{"text": "plain"}"#,
            r#"{"id": 1, "text": "esc\"aped\n\u00e9\ud83d\ude00", "x": [1, {"y": null}]}"#,
            r#"{"text": "first", "text": "last"}"#,
            r#"{"t\u0065xt": "escaped key"}"#,
            r#"{"text": 7}"#,
            r#"{"text": null}"#,
            r#"{"text": [1]}"#,
            r#"{"text": {"a": 1}}"#,
            r#"{"text": true}"#,
            r#"{"other": "x"}"#,
            r#"{}"#,
            r#"[1, 2]"#,
            r#""text""#,
            r#"3.5"#,
            r#"-3"#,
            r#"null"#,
            r#"false"#,
            r#""#,
            r#"{"text": "a"} x"#,
            r#"{"text": "a""#,
            r#"{"text": "bad \q escape"}"#,
            r#"{"text" "a"}"#,
            r#"{"text": "a",}"#,
            "{\"text\": \"raw\tcontrol\"}",
            r#"  {"text": "spaces around"}  "#,
            r#"{"text": "\ud800 lone surrogate"}"#,
        ];
        for line in lines {
            let got = field_text(line, "text").map(|c| c.into_owned());
            assert_eq!(got, by_value(line, "text"), "{line}");
        }
    }

    /// Appending to one buffer gives the texts of `field_text`, and nothing else: a field given
    /// twice leaves only the last one's text, a failed line leaves nothing.
    #[test]
    fn texts_appended_to_a_buffer_are_field_texts() {
        let lines = [
            r#"{"text": "plain"}"#,
            r#"{"text": "a\nb"}"#,
            r#"{"text": "x\ty", "text": "last\n"}"#,
            r#"{"text": "gone\n", "text": 7}"#,
            r#"{"text": "ok\n", "x": oops}"#,
            r#"{"text": "\u00e9t\u00e9"}"#,
        ];
        let mut buf = String::from("kept");
        let mut appended = String::from("kept");
        for line in lines {
            let want = field_text(line, "text");
            let got = field_text_into(line, "text", &mut buf);
            match (want, got) {
                (Ok(Cow::Borrowed(w)), Ok(FieldText::Borrowed(g))) => assert_eq!(w, g),
                (Ok(Cow::Owned(w)), Ok(FieldText::Appended(r))) => {
                    assert_eq!(w, &buf[r.clone()]);
                    appended.push_str(&w);
                }
                (Err(w), Err(g)) => assert_eq!(w, g),
                _ => panic!("{line}: not the same kind of result"),
            }
            assert_eq!(buf, appended, "{line}");
        }
    }

    #[test]
    fn text_without_escapes_is_borrowed() {
        let line = r#"{"a": "b", "text": "no escapes here"}"#;
        assert!(matches!(
            field_text(line, "text"),
            Ok(Cow::Borrowed("no escapes here"))
        ));
        assert!(matches!(
            field_text(r#"{"text": "a\nb"}"#, "text"),
            Ok(Cow::Owned(_))
        ));
    }
}
