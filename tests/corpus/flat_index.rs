//! `encode --index PATH` beside a flat array of ids (npy, u16, u32): `n + 1` little-endian
//! int64 offsets, so that `tokens[o[i]..o[i + 1]]` is text `i` (its `--separator-id` included),
//! for lines on several threads and for a raw text in parts; refused for the other formats.

use crate::cli;

use cli::{data, encode_to, ids_per_line, scratch, simdtok, stderr};

/// The file at `path` as little-endian words of `N` bytes.
fn words<const N: usize>(path: &std::path::Path) -> Vec<[u8; N]> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(N)
        .map(|c| c.try_into().unwrap())
        .collect()
}

fn int64s(path: &std::path::Path) -> Vec<i64> {
    words::<8>(path)
        .into_iter()
        .map(i64::from_le_bytes)
        .collect()
}

fn u32s(path: &std::path::Path) -> Vec<u32> {
    words::<4>(path)
        .into_iter()
        .map(u32::from_le_bytes)
        .collect()
}

#[test]
fn the_index_cuts_the_ids_into_the_texts() {
    let model = data("bpe/encoder.json");
    let corpus = std::fs::read_to_string(data("corpus/udhr_scripts.txt")).unwrap();
    let text: String = corpus.lines().take(400).map(|l| format!("{l}\n")).collect();
    let want = ids_per_line(&model, text.as_bytes(), &[]);
    let dir = scratch("flat_index", "lines");
    let (ids, index) = (dir.join("ids.u32"), dir.join("ids.idx"));
    let (ids_arg, index_arg) = (ids.display().to_string(), index.display().to_string());
    for separator in [None, Some("50256")] {
        let mut extra = vec!["--index", &index_arg, "--threads", "3"];
        if let Some(s) = separator {
            extra.extend(["--separator-id", s]);
        }
        let out = encode_to(&model, "u32", &ids_arg, &extra, text.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
        let (tokens, offsets) = (u32s(&ids), int64s(&index));
        assert_eq!(offsets.len(), want.len() + 1);
        assert_eq!(offsets[0], 0);
        assert_eq!(*offsets.last().unwrap() as usize, tokens.len());
        for (i, w) in want.iter().enumerate() {
            let doc = &tokens[offsets[i] as usize..offsets[i + 1] as usize];
            let extra = usize::from(separator.is_some());
            assert_eq!(&doc[..doc.len() - extra], &w[..], "text {i}");
        }
    }
    // A raw text in parts: one document.
    let long = std::fs::read_to_string(data("corpus/en_kjv_bible.head.txt"))
        .unwrap()
        .repeat(3);
    let extra = ["--input-format", "raw", "--index", &index_arg];
    let out = encode_to(&model, "u32", &ids_arg, &extra, long.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(int64s(&index), [0, u32s(&ids).len() as i64]);
    // Refused where it does not apply.
    let out = simdtok(
        &["encode", "--model", &model, "--index", &index_arg],
        b"x\n",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
