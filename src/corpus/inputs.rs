//! The files a run reads, from what the user names: paths, directories (every file below, at
//! any depth) and glob patterns (`data/**/*.jsonl.gz`), in a stated, deterministic order — the
//! names in the order given, and within a directory or a pattern the files sorted by path
//! (byte order), so that two runs over the same tree read the same documents in the same order.
//! A file named twice is read once, at its first place. Within directories, names starting
//! with `.` (hidden files, and the temporary files simdtok's own writers leave while they work)
//! are skipped; a pattern or a directory that matches no file is an error, as is a path that
//! does not exist.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Whether `name` is a glob pattern (`*`, `?` or `[`).
fn is_pattern(name: &Path) -> bool {
    name.to_string_lossy().contains(['*', '?', '['])
}

/// The files of `names`, in order (see the module documentation); `-` stays as it is (stdin).
pub fn expand(names: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut push = |path: PathBuf, out: &mut Vec<PathBuf>| {
        if seen.insert(path.clone()) {
            out.push(path);
        }
    };
    for name in names {
        if name.as_os_str() == "-" {
            push(name.clone(), &mut out);
        } else if is_pattern(name) {
            let pattern = name.to_string_lossy();
            let mut found: Vec<PathBuf> = glob::glob(&pattern)
                .map_err(|e| format!("--input {pattern}: {e}"))?
                .filter_map(Result::ok)
                .filter(|p| p.is_file())
                .collect();
            if found.is_empty() {
                return Err(format!("--input {pattern}: no file matches"));
            }
            found.sort();
            for p in found {
                push(p, &mut out);
            }
        } else if name.is_dir() {
            let mut found = Vec::new();
            files_below(name, &mut found)
                .map_err(|e| format!("--input {}: {e}", name.display()))?;
            if found.is_empty() {
                return Err(format!(
                    "--input {}: no file in the directory",
                    name.display()
                ));
            }
            found.sort();
            for p in found {
                push(p, &mut out);
            }
        } else if name.exists() {
            push(name.clone(), &mut out);
        } else {
            return Err(format!(
                "--input {}: no such file or directory",
                name.display()
            ));
        }
    }
    Ok(out)
}

/// Every file below `dir`, at any depth, but those whose names start with `.`.
fn files_below(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            files_below(&path, out)?;
        } else if path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_directories_and_patterns_expand_in_a_stated_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "b/2.jsonl",
            "b/10.jsonl",
            "a/x.txt",
            "a/deep/y.jsonl",
            "a/.hidden",
            "c.jsonl",
        ] {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        let names = [
            root.join("c.jsonl"),
            root.join("a"),
            PathBuf::from(format!("{}/**/*.jsonl", root.display())),
        ];
        let got: Vec<String> = expand(&names)
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        // c.jsonl first (named first), then a/ sorted (no hidden file), then the pattern's
        // files sorted, less those already read.
        assert_eq!(
            got,
            [
                "c.jsonl",
                "a/deep/y.jsonl",
                "a/x.txt",
                "b/10.jsonl",
                "b/2.jsonl"
            ]
        );
        assert!(
            expand(&[root.join("nothing")])
                .unwrap_err()
                .contains("no such file")
        );
        let none = PathBuf::from(format!("{}/*.parquet", root.display()));
        assert!(expand(&[none]).unwrap_err().contains("no file matches"));
        assert_eq!(expand(&[PathBuf::from("-")]).unwrap(), [PathBuf::from("-")]);
    }
}
