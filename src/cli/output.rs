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
    /// Stdout, and where its start can be rewritten, if it can (see [`rewritable_stdout`]).
    Stdout(BufWriter<Stdout>, Option<Rewrite>),
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
                target: Target::Stdout(
                    BufWriter::with_capacity(BUFFER, io::stdout()),
                    rewritable_stdout(),
                ),
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
        // Said plainly: the temporary file's errors name the temporary file.
        let dir = directory_of(&path);
        if !dir.is_dir() {
            return Err(Failure::runtime(format!(
                "{name}: no such directory: {}",
                dir.display()
            )));
        }
        let temp = temporary_beside(&path).map_err(|e| {
            // tempfile appends ` at path "<temporary name>"` to the cause.
            let message = e.to_string();
            let cause = message
                .rsplit_once(" at path ")
                .map_or(&*message, |(c, _)| c);
            Failure::runtime(format!("{name}: {cause}"))
        })?;
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
            Target::Stdout(w, _) => w.write_all(bytes),
            Target::Stream(w) => w.write_all(bytes),
            Target::File { writer, .. } => writer.write_all(bytes),
        };
        written.map_err(|e| self.error(e))
    }

    /// Whether the output can be rewritten at its start: a file, or a stdout that is a plain
    /// file not opened for appending, or `/dev/null` (not a pipe, terminal or other device).
    pub fn is_seekable(&self) -> bool {
        matches!(
            self.target,
            Target::File { .. } | Target::Stdout(_, Some(_))
        )
    }

    /// Overwrites the start of a file output with `bytes` (for the `.npy` header, whose length
    /// is known only at the end), then returns to its end.
    pub fn overwrite_start(&mut self, bytes: &[u8]) -> CliResult {
        let result = match &mut self.target {
            Target::File { writer, .. } => (|| {
                writer.seek(SeekFrom::Start(0))?;
                writer.write_all(bytes)?;
                writer.seek(SeekFrom::End(0)).map(drop)
            })(),
            Target::Stdout(writer, Some(rewrite)) => {
                writer.flush().and_then(|()| rewrite.write_at_start(bytes))
            }
            _ => unreachable!("only seekable outputs are rewritten"),
        };
        result.map_err(|e| self.error(e))
    }

    /// Flushes everything and, for a file, renames it into place.
    pub fn finish(self) -> CliResult {
        match self.target {
            Target::Stdout(mut w, _) => w.flush().map_err(stdout_error),
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
            Target::Stdout(..) => stdout_error(e),
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

/// The directory `path` is in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A new temporary file in `path`'s directory, named after it, with the permissions a plain
/// `File::create` would give (tempfile's default of 0600 would surprise whoever reads the result).
fn temporary_beside(path: &Path) -> io::Result<NamedTempFile> {
    let dir = directory_of(path);
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

/// Where a stdout that can be rewritten started: its own handle and the offset of its first byte.
struct Rewrite {
    file: File,
    start: u64,
}

impl Rewrite {
    /// Writes `bytes` at stdout's start, leaving its position where it was.
    fn write_at_start(&self, bytes: &[u8]) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file.write_all_at(bytes, self.start)
        }
        #[cfg(not(unix))]
        {
            let _ = (bytes, &self.file, self.start);
            Err(io::Error::other("stdout cannot be rewritten here"))
        }
    }
}

/// Whether stdout's start can be rewritten (for the `.npy` header, whose length is known at the
/// end; otherwise the ids wait in a temporary file): a plain file not opened for appending (the
/// shell's `> out.npy`; with `>>` a positioned write would append), or `/dev/null`, where every
/// write vanishes (GNU tar spots it the same way). Pipes, terminals and other devices cannot.
#[cfg(unix)]
fn rewritable_stdout() -> Option<Rewrite> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let file = File::from(io::stdout().as_fd().try_clone_to_owned().ok()?);
    let meta = file.metadata().ok()?;
    let null = std::fs::metadata("/dev/null").ok();
    let is_null =
        null.is_some_and(|n| !meta.is_file() && n.dev() == meta.dev() && n.ino() == meta.ino());
    if is_null {
        return Some(Rewrite { file, start: 0 });
    }
    // SAFETY: F_GETFL on a descriptor this process owns (a duplicate of stdout) reads its flags
    // and changes nothing.
    let flags = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&file), libc::F_GETFL) };
    if !meta.is_file() || flags < 0 || flags & libc::O_APPEND != 0 {
        return None;
    }
    let start = (&file).stream_position().ok()?;
    Some(Rewrite { file, start })
}

#[cfg(not(unix))]
fn rewritable_stdout() -> Option<Rewrite> {
    None
}
