//! Reading report files and writing the four outputs (`report.json`, `report.md`,
//! `report.svg`, `report.html`) into a directory.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::chart::{Panel, Series, render_svg};
use super::doc::Doc;
use super::schema::{KIND_COMPARISON, KIND_REPORT, Report, SCHEMA_VERSION};
use crate::bench::error::BenchError;

/// The names of the outputs, in the order they are written.
pub const OUTPUTS: [&str; 4] = ["report.json", "report.md", "report.svg", "report.html"];

/// Writes the four files into `dir` (created if needed); returns their paths.
pub fn write_outputs<T: Serialize>(
    dir: &Path,
    json: &T,
    doc: &Doc,
    series: &[Series],
    panels: &[Panel],
) -> Result<Vec<PathBuf>, BenchError> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    let svg = render_svg(&doc.title, &doc.subtitle, series, panels)?;
    let mut json_text = serde_json::to_string_pretty(json)
        .map_err(|e| BenchError::Invalid(format!("serializing the report: {e}")))?;
    json_text.push('\n');
    let contents = [json_text, doc.to_markdown(), svg.clone(), doc.to_html(&svg)];
    let mut paths = Vec::new();
    for (name, text) in OUTPUTS.iter().zip(contents) {
        let path = dir.join(name);
        write_file(&path, text.as_bytes())?;
        paths.push(path);
    }
    Ok(paths)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`: a reader
/// never sees half a report. (Created with `File::create`, so the file gets the usual
/// permissions of the user's umask.)
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), BenchError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(BenchError::io(path, e));
    }
    Ok(())
}

/// Reads a report written by `simdtok report`: the file must be JSON with this version's
/// `schema_version` and `kind` `report`.
pub fn read_report(path: &Path) -> Result<Report, BenchError> {
    let bad = |message: String| BenchError::BadReport {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, e))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => {
            return Err(bad(format!(
                "schema_version {v} is not supported (this simdtok reads {SCHEMA_VERSION}); \
                 make the report again with this version"
            )));
        }
        None => return Err(bad("no schema_version: not a simdtok report".into())),
    }
    match value.get("kind").and_then(|v| v.as_str()) {
        Some(KIND_REPORT) => {}
        Some(KIND_COMPARISON) => {
            return Err(bad(
                "a comparison, not a report: compare the reports it was made from".into(),
            ));
        }
        _ => return Err(bad("no kind \"report\": not a simdtok report".into())),
    }
    serde_json::from_value(value).map_err(|e| bad(format!("not a valid report: {e}")))
}
