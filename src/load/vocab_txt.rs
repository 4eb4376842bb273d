//! BERT `vocab.txt`: one token per line, the id is the line number — read as `tokenizers`'
//! `WordPiece::read_file` does (lines split on `\n` with a `\r` before it removed, trailing
//! whitespace trimmed, a later duplicate taking the token).

/// The (token, id) pairs of a vocab.txt file's bytes.
pub fn parse(bytes: &[u8]) -> Result<Vec<(String, u32)>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        format!("line {line}: invalid UTF-8 in a vocab.txt file")
    })?;
    let mut vocab = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let id = u32::try_from(index)
            .ok()
            .filter(|&id| id < u32::MAX)
            .ok_or("more lines than ids fit in 32 bits")?;
        vocab.push((line.trim_end().to_string(), id));
    }
    if vocab.is_empty() {
        return Err("the vocabulary is empty".into());
    }
    Ok(vocab)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_trimmed_and_numbered() {
        let v = parse(b"[PAD]\r\nhello \n##lo\n\nx").unwrap();
        let want = [("[PAD]", 0), ("hello", 1), ("##lo", 2), ("", 3), ("x", 4)];
        assert_eq!(v.len(), want.len());
        for ((t, id), (wt, wid)) in v.iter().zip(want) {
            assert_eq!((t.as_str(), *id), (wt, wid));
        }
    }

    #[test]
    fn bad_utf8_names_the_line() {
        let e = parse(b"a\nb\n\xff\n").unwrap_err();
        assert!(e.starts_with("line 3:"), "{e}");
    }
}
