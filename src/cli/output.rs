//! Where results go: stdout, or a file that appears under its name only once complete. A file is
//! written as a temporary file beside its final name (same file system, so the rename is atomic)
//! and renamed into place by [`Output::finish`]; dropped unfinished, on any failure, it is removed.
//! A path that names something other than a regular file (`/dev/null`, a FIFO, a terminal) is
//! written in place: renaming a file over it would replace the device or pipe with a plain file.
//! A symbolic link to a file keeps its link: the file it points to is the one replaced.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Stdout, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::{CliResult, Failure};

/// An open output.
pub struct Output {
    /// Its name for messages (the path, or `<stdout>`).
    pub name: String,
    target: Target,
}

enum Target {
    Stdout(BufWriter<Stdout>),
    /// A device or pipe, written as a stream.
    Stream(BufWriter<File>),
    File {
        writer: BufWriter<NamedTempFile>,
        path: PathBuf,
    },
}

const BUFFER: usize = 1 << 16;

impl Output {
    /// Opens `path` (`-` or none: stdout).
    pub fn create(path: &Option<PathBuf>) -> CliResult<Output> {
        let Some(path) = path.as_ref().filter(|p| p.as_os_str() != "-") else {
            return Ok(Output {
                name: "<stdout>".to_owned(),
                target: Target::Stdout(BufWriter::with_capacity(BUFFER, io::stdout())),
            });
        };
        let name = path.display().to_string();
        let fail = |e: io::Error| Failure::runtime(format!("{name}: {e}"));
        // Follows symbolic links: what matters is what the path finally names.
        match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() => {
                let file = File::options().write(true).open(path).map_err(fail)?;
                return Ok(Output {
                    name,
                    target: Target::Stream(BufWriter::with_capacity(BUFFER, file)),
                });
            }
            Ok(_) if path.is_symlink() => {
                let target = std::fs::canonicalize(path).map_err(fail)?;
                return Output::create_file(name, target);
            }
            _ => {}
        }
        Output::create_file(name, path.clone())
    }

    /// A regular file at `path`, written beside it and renamed into place by `finish`.
    fn create_file(name: String, path: PathBuf) -> CliResult<Output> {
        let temp = temporary_beside(&path).map_err(|e| Failure::runtime(format!("{name}: {e}")))?;
        Ok(Output {
            name,
            target: Target::File {
                writer: BufWriter::with_capacity(BUFFER, temp),
                path,
            },
        })
    }

    /// Writes `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> CliResult {
        let written = match &mut self.target {
            Target::Stdout(w) => w.write_all(bytes),
            Target::Stream(w) => w.write_all(bytes),
            Target::File { writer, .. } => writer.write_all(bytes),
        };
        written.map_err(|e| self.error(e))
    }

    /// Whether the output can be rewritten at its start (a file, not stdout or a device).
    pub fn is_seekable(&self) -> bool {
        matches!(self.target, Target::File { .. })
    }

    /// Overwrites the start of a file output with `bytes` (for the `.npy` header, whose length
    /// is known only at the end), then returns to its end.
    pub fn overwrite_start(&mut self, bytes: &[u8]) -> CliResult {
        let Target::File { writer, .. } = &mut self.target else {
            unreachable!("only file outputs are rewritten");
        };
        let result = (|| {
            writer.seek(SeekFrom::Start(0))?;
            writer.write_all(bytes)?;
            writer.seek(SeekFrom::End(0)).map(drop)
        })();
        result.map_err(|e| self.error(e))
    }

    /// Flushes everything and, for a file, renames it into place.
    pub fn finish(self) -> CliResult {
        match self.target {
            Target::Stdout(mut w) => w.flush().map_err(stdout_error),
            Target::Stream(mut w) => w
                .flush()
                .map_err(|e| Failure::runtime(format!("{}: {e}", self.name))),
            Target::File { writer, path } => {
                let fail = |e: io::Error| Failure::runtime(format!("{}: {e}", self.name));
                let temp = writer.into_inner().map_err(|e| fail(e.into_error()))?;
                // On disk before it gets its name: a crash must not leave a truncated result.
                temp.as_file().sync_data().map_err(fail)?;
                temp.persist(&path).map(drop).map_err(|e| fail(e.error))
            }
        }
    }

    fn error(&self, e: io::Error) -> Failure {
        match self.target {
            Target::Stdout(_) => stdout_error(e),
            Target::Stream(_) | Target::File { .. } => {
                Failure::runtime(format!("{}: {e}", self.name))
            }
        }
    }
}

/// A failed write to stdout: a closed pipe ends the command quietly (see
/// [`Failure::stdout_closed`]), anything else is an error.
fn stdout_error(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::stdout_closed()
    } else {
        Failure::runtime(format!("<stdout>: {e}"))
    }
}

/// A new temporary file in `path`'s directory, named after it, with the permissions a plain
/// `File::create` would give (tempfile's default of 0600 would surprise whoever reads the result).
fn temporary_beside(path: &Path) -> io::Result<NamedTempFile> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut builder = tempfile::Builder::new();
    let prefix = format!(".{stem}.");
    builder.prefix(&prefix).suffix(".partial");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The process umask still applies, as for File::create.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// An anonymous temporary file (for `.npy` data bound for stdout; see `npy`).
pub fn spill_file() -> CliResult<File> {
    tempfile::tempfile().map_err(|e| Failure::runtime(format!("temporary file: {e}")))
}
