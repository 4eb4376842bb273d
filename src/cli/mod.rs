//! The commands of the `simdtok` binary, one module per job (see `docs/cli.md` for the contract).
//!
//! These modules belong to the binary, not to the library: they turn command-line options into
//! calls of the library's API and its results into files, and report failures with the exit
//! statuses of the contract.

pub mod align;
pub mod args;
pub mod bench;
pub mod count;
pub mod cpu;
pub mod dataset;
pub mod decode;
pub mod driver;
pub mod encode;
pub mod format;
pub mod input;
pub mod json;
pub mod model;
pub mod npy;
pub mod output;
pub mod parts;
pub mod progress;
pub mod report;
pub mod summary;
pub mod train;

use std::fmt::Display;

/// Exit status for bad input or a runtime error.
pub const FAILURE: u8 = 1;
/// Exit status for a usage error (as clap's own).
pub const USAGE: u8 = 2;

/// Why a command stopped: the exit status and the message for stderr (none when the command ends
/// quietly, e.g. because the reader of stdout went away).
#[derive(Clone, Debug)]
pub struct Failure {
    /// The exit status.
    pub status: u8,
    /// What to print after `simdtok: `; `None` to print nothing.
    pub message: Option<String>,
    /// For bad input: the input's name, the line, and the cause (the message is
    /// `name:line: cause`), kept apart so that the line can be moved (see
    /// [`Failure::after_lines`]).
    at: Option<(String, u64, String)>,
}

impl Failure {
    /// Bad input or a runtime error (exit status 1).
    pub fn runtime(message: impl Display) -> Failure {
        Failure {
            status: FAILURE,
            message: Some(message.to_string()),
            at: None,
        }
    }

    /// A usage error (exit status 2).
    pub fn usage(message: impl Display) -> Failure {
        Failure {
            status: USAGE,
            message: Some(message.to_string()),
            at: None,
        }
    }

    /// The reader of stdout closed it (`simdtok encode ... | head`): nothing more is wanted, so
    /// the command ends quietly and successfully, as `head`'s users expect.
    pub fn stdout_closed() -> Failure {
        Failure {
            status: 0,
            message: None,
            at: None,
        }
    }

    /// Bad input at `line` of the input `name` (its message is `name:line: cause`).
    pub fn at(name: &str, line: u64, cause: impl Display) -> Failure {
        let cause = cause.to_string();
        let mut failure = Failure::runtime(format!("{name}:{line}: {cause}"));
        failure.at = Some((name.to_owned(), line, cause));
        failure
    }

    /// The same failure with its line moved down by `lines`: a worker numbers the lines of its
    /// block from 1, and the writer, which knows how many lines came before the block, moves the
    /// line to its place in the input.
    pub fn after_lines(mut self, lines: u64) -> Failure {
        if let Some((name, line, cause)) = self.at.take() {
            self = Failure::at(&name, line + lines, cause);
        }
        self
    }
}

/// The result of a command.
pub type CliResult<T = ()> = Result<T, Failure>;
