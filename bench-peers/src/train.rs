//! `--family train` (issue 25): simdtok's BPE trainer (`simdtok::train`) against Hugging Face
//! `tokenizers` 0.23.2's `BpeTrainer`, end to end (file in, merges out), cl100k pre-tokenizer,
//! vocabulary 32 000, on 1, 10 and 100 MB of English, on one thread and on all of them.
//!
//! Every measured run is a child process of this binary (`--train-child`, below), so that its
//! peak resident set (`ru_maxrss`, from `wait4`) and its CPU time belong to that one run. The
//! child times itself from its start to its merges written, and writes the merges (one JSON
//! array `[left, right]` a line, by rank) to a file that the parent compares with those of the
//! reference's first run at that size.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use simdtok::kernels::Kernels;
use simdtok::pretokenize::Pattern;
use simdtok::train::{Counter, Counting, PreTokenizer, Settings, WordCounts};
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::bpe::{BPE, BpeTrainer};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{SplitDelimiterBehavior, TokenizerBuilder, TokenizerImpl};

use crate::Options;
use crate::measure::median;
use crate::report;

/// The corpora (under `<data>/corpora`, `.txt`), concatenated in this order: the largest real
/// English at hand, about 6.3 MB.
const SOURCES: [&str; 3] = ["en_jargon_file_4.4.7", "en_kjv_bible", "botchan"];

/// The corpus sizes (10^6 bytes); `--quick` runs the first two.
const SIZES_MB: [usize; 3] = [1, 10, 100];

/// The vocabulary size of every run.
const VOCAB_SIZE: usize = 32_000;

/// simdtok's read blocks (as `simdtok train-bpe`'s), and the reference's `BufReader`.
const BLOCK: usize = 256 << 10;

/// The per-MB time at the largest size may be this much above that at the one before it and
/// still count as linear growth.
const LINEAR_SLACK: f64 = 1.1;

/// The two trainers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trainer {
    Simdtok,
    Tokenizers,
}

impl Trainer {
    fn key(self) -> &'static str {
        match self {
            Trainer::Simdtok => "simdtok",
            Trainer::Tokenizers => "tokenizers",
        }
    }

    fn from_key(key: &str) -> Option<Trainer> {
        match key {
            "simdtok" => Some(Trainer::Simdtok),
            "tokenizers" => Some(Trainer::Tokenizers),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Trainer::Simdtok => "simdtok",
            Trainer::Tokenizers => "tokenizers 0.23.2",
        }
    }
}

// ---- the child: one training run ----

/// The arguments of `--train-child IMPL --file F --threads N --out MERGES [--vocab-size V]`.
#[derive(Debug, PartialEq, Eq)]
pub struct ChildArgs {
    pub trainer: Trainer,
    pub file: PathBuf,
    pub threads: usize,
    pub out: PathBuf,
    pub vocab_size: usize,
}

fn parse_child(args: &[String]) -> Result<ChildArgs, String> {
    let mut it = args.iter();
    let trainer = it
        .next()
        .and_then(|k| Trainer::from_key(k))
        .ok_or("--train-child simdtok|tokenizers --file F --threads N --out MERGES")?;
    let (mut file, mut threads, mut out, mut vocab_size) = (None, None, None, VOCAB_SIZE);
    while let Some(arg) = it.next() {
        let value = it.next().ok_or(format!("{arg} needs a value"))?;
        let number = || {
            value
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or(format!("{arg} {value}: not a positive integer"))
        };
        match arg.as_str() {
            "--file" => file = Some(PathBuf::from(value)),
            "--threads" => threads = Some(number()?),
            "--out" => out = Some(PathBuf::from(value)),
            "--vocab-size" => vocab_size = number()?,
            other => return Err(format!("--train-child: unknown argument {other}")),
        }
    }
    Ok(ChildArgs {
        trainer,
        file: file.ok_or("--train-child needs --file")?,
        threads: threads.ok_or("--train-child needs --threads")?,
        out: out.ok_or("--train-child needs --out")?,
        vocab_size,
    })
}

/// What a run reports besides its merges.
#[derive(Debug)]
struct Trained {
    /// Seconds to read and count the words (simdtok only: `tokenizers` does both in `train`).
    counting: Option<f64>,
    /// Unique words (pre-tokens) counted.
    words: usize,
    /// The merges by rank, one JSON array `[left, right]` each.
    merges: Vec<String>,
}

/// The child side. Prints `ok\tSECONDS\tCOUNTING\tWORDS\tMERGES\tVMHWM` (seconds from its start
/// to the merges written; `-` where there is no figure) or `err\tMESSAGE`.
pub fn child(args: Vec<String>) -> ExitCode {
    let args = match parse_child(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let trained = match args.trainer {
        Trainer::Simdtok => simdtok_train(&args.file, args.threads, args.vocab_size),
        Trainer::Tokenizers => tokenizers_train(&args.file, args.vocab_size),
    };
    let written = trained.and_then(|t| {
        write_merges(&args.out, &t.merges).map_err(|e| format!("{}: {e}", args.out.display()))?;
        Ok(t)
    });
    let seconds = start.elapsed().as_secs_f64();
    match written {
        Ok(t) => {
            let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
            println!(
                "ok\t{seconds}\t{}\t{}\t{}\t{}",
                opt(t.counting.map(|c| c.to_string())),
                t.words,
                t.merges.len(),
                opt(vm_hwm().map(|b| b.to_string()))
            );
        }
        Err(e) => println!("err\t{}", e.replace(['\t', '\n'], " ")),
    }
    ExitCode::SUCCESS
}

fn write_merges(path: &Path, merges: &[String]) -> std::io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    for m in merges {
        out.write_all(m.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// A merge as a line: the JSON array `[left, right]` (tokens are GPT-2 byte characters, so
/// hold neither spaces nor line ends, but JSON keeps that safe anyway).
fn merge_line(left: &str, right: &str) -> String {
    serde_json::to_string(&[left, right]).expect("strings serialize")
}

/// This process's peak resident set (`VmHWM` of /proc/self/status), in bytes.
fn vm_hwm() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// simdtok end to end: the file read in blocks on `threads` threads (each its own range of the
/// file, cut at line ends, into its own `Counter`), the tables added up, `simdtok::train::train`.
fn simdtok_train(path: &Path, threads: usize, vocab_size: usize) -> Result<Trained, String> {
    let start = Instant::now();
    let kernels = Kernels::active().map_err(|e| e.to_string())?;
    let counts = count_words(path, threads, kernels)?;
    let counting = start.elapsed().as_secs_f64();
    let settings = Settings {
        vocab_size,
        min_frequency: 0,
        max_token_length: None,
        counting: Counting::Windows,
    };
    let model = simdtok::train::train(&counts, PreTokenizer::Cl100k, &[], &settings, &mut |_| {})
        .map_err(|e| e.to_string())?;
    let tokens = &model.trained.tokens;
    let merges = model
        .saved_merges()
        .iter()
        .map(|&(l, r)| merge_line(&tokens[l as usize], &tokens[r as usize]))
        .collect();
    Ok(Trained {
        counting: Some(counting),
        words: counts.len(),
        merges,
    })
}

/// The words of `path` counted on `threads` threads: the calling thread takes the first range.
fn count_words(
    path: &Path,
    threads: usize,
    kernels: &'static Kernels,
) -> Result<WordCounts, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let cuts = line_cuts(path, threads).map_err(fail)?;
    let parts: Vec<Result<WordCounts, String>> = std::thread::scope(|scope| {
        let others: Vec<_> = cuts[1..]
            .windows(2)
            .map(|w| {
                let (from, to) = (w[0], w[1]);
                scope.spawn(move || count_range(path, from, to, kernels))
            })
            .collect();
        let first = count_range(path, cuts[0], cuts[1], kernels);
        std::iter::once(first)
            .chain(
                others
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
            )
            .collect()
    });
    let mut parts = parts.into_iter();
    let mut counts = parts.next().expect("at least one range")?;
    for part in parts {
        counts.absorb(part?);
    }
    Ok(counts)
}

/// `threads + 1` offsets splitting the file into ranges that start at line starts.
fn line_cuts(path: &Path, threads: usize) -> std::io::Result<Vec<u64>> {
    let len = std::fs::metadata(path)?.len();
    let mut cuts = vec![0];
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 64 << 10];
    for k in 1..threads as u64 {
        let mut at = (len * k / threads as u64).max(*cuts.last().expect("not empty"));
        // The first line start after `at`.
        file.seek(SeekFrom::Start(at))?;
        let cut = loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break len;
            }
            if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
                break at + i as u64 + 1;
            }
            at += n as u64;
        };
        cuts.push(cut);
    }
    cuts.push(len);
    Ok(cuts)
}

/// Counts the words of bytes `from..to` of `path` (whole lines), read in blocks.
fn count_range(
    path: &Path,
    from: u64,
    to: u64,
    kernels: &'static Kernels,
) -> Result<WordCounts, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = File::open(path).map_err(fail)?;
    file.seek(SeekFrom::Start(from)).map_err(fail)?;
    let mut file = file.take(to - from);
    let mut counter = Counter::new(PreTokenizer::Cl100k, &[], kernels);
    let mut buf = vec![0u8; BLOCK];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            // A line longer than the block.
            buf.resize(2 * buf.len(), 0);
        }
        // Fill the block (or reach the end of the range).
        let mut ended = false;
        while filled < buf.len() {
            match file.read(&mut buf[filled..]) {
                Ok(0) => {
                    ended = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(fail(e)),
            }
        }
        let upto = if ended {
            filled
        } else {
            match buf[..filled].iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => continue,
            }
        };
        add_lines(&mut counter, &buf[..upto])
            .map_err(|e| format!("{}: not UTF-8: {e}", path.display()))?;
        buf.copy_within(upto..filled, 0);
        filled -= upto;
        if ended {
            return Ok(counter.into_counts());
        }
    }
}

/// Counts the texts of `bytes` (whole lines, the last perhaps without its line end): each line
/// without its `\n`, and a `\r` just before it, as `simdtok train-bpe --input-format lines`
/// reads them.
fn add_lines(counter: &mut Counter, bytes: &[u8]) -> Result<(), std::str::Utf8Error> {
    let text = std::str::from_utf8(bytes)?;
    let (body, tail) = match text.rfind('\n') {
        Some(i) => text.split_at(i + 1),
        None => ("", text),
    };
    for line in body.split_terminator('\n') {
        counter.add(line.strip_suffix('\r').unwrap_or(line));
    }
    if !tail.is_empty() {
        counter.add(tail);
    }
    Ok(())
}

type HfTokenizer = TokenizerImpl<
    BPE,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

/// The reference as issue 25 describes it: `BPE::default()`, pre-tokenizer
/// `Sequence[Split(Regex(cl100k), Isolated), ByteLevel(add_prefix_space=false, trim_offsets=true,
/// use_regex=false)]`, `BpeTrainer` (vocabulary size, `min_frequency` 0, GPT-2's byte alphabet),
/// `Tokenizer::train` over the file's lines (`BufRead::lines`: without `\n` and a `\r` before
/// it). Its threads are rayon's global pool (`RAYON_NUM_THREADS` in the environment), or with
/// `TOKENIZERS_PARALLELISM=false` none: everything on the calling thread.
fn tokenizers_train(path: &Path, vocab_size: usize) -> Result<Trained, String> {
    let cl100k = Pattern::Cl100k { digits: 3 }.regex_source();
    let split = Split::new(
        SplitPattern::Regex(cl100k.to_owned()),
        SplitDelimiterBehavior::Isolated,
        false,
    )
    .map_err(|e| e.to_string())?;
    let pre = Sequence::new(vec![
        split.into(),
        ByteLevel::new(false, true, false).into(),
    ]);
    let mut tokenizer: HfTokenizer = TokenizerBuilder::new()
        .with_model(BPE::default())
        .with_pre_tokenizer(Some(pre.into()))
        .build()
        .map_err(|e| e.to_string())?;
    let mut trainer = BpeTrainer::builder()
        .vocab_size(vocab_size)
        .min_frequency(0)
        .show_progress(false)
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .build();
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let lines = BufReader::with_capacity(BLOCK, file)
        .lines()
        .map(|l| l.expect("the corpus is UTF-8 text"));
    tokenizer
        .train(&mut trainer, lines)
        .map_err(|e| e.to_string())?;
    // The model's merges by rank, as its `tokenizer.json` has them.
    let model = serde_json::to_value(tokenizer.get_model()).map_err(|e| e.to_string())?;
    let merges = model["merges"]
        .as_array()
        .ok_or("the serialized model has no merges")?
        .iter()
        .map(|m| match m.as_array().map(Vec::as_slice) {
            Some([l, r]) => match (l.as_str(), r.as_str()) {
                (Some(l), Some(r)) => Ok(merge_line(l, r)),
                _ => Err(format!("a merge that is not two strings: {m}")),
            },
            _ => Err(format!("a merge that is not a pair: {m}")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Trained {
        counting: None,
        words: trainer.get_word_count(),
        merges,
    })
}

// ---- the parent: corpora, runs, checks ----

/// One corpus file.
struct Corpus {
    mb: usize,
    path: PathBuf,
    bytes: u64,
    lines: usize,
}

/// Writes the sources repeated to each size (cut after the line end at or past it) into `dir`.
fn write_corpora(data: &Path, dir: &Path, sizes: &[usize]) -> Result<(Vec<Corpus>, u64), String> {
    let mut text = Vec::new();
    for name in SOURCES {
        let path = data.join("corpora").join(format!("{name}.txt"));
        let mut bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        text.extend_from_slice(&bytes);
    }
    std::str::from_utf8(&text).map_err(|e| format!("the sources are not UTF-8: {e}"))?;
    let source_bytes = text.len() as u64;
    let mut corpora = Vec::new();
    for &mb in sizes {
        let target = mb * 1_000_000;
        let path = dir.join(format!("en-{mb}mb.txt"));
        let fail = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut out = BufWriter::new(File::create(&path).map_err(fail)?);
        let (mut written, mut lines) = (0, 0);
        while written < target {
            let left = target - written;
            let piece = if left >= text.len() {
                &text[..]
            } else {
                // Up to the line end at or past the target.
                let end = text[left - 1..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(text.len(), |i| left + i);
                &text[..end]
            };
            out.write_all(piece).map_err(fail)?;
            written += piece.len();
            lines += piece.iter().filter(|&&b| b == b'\n').count();
        }
        out.flush().map_err(fail)?;
        corpora.push(Corpus {
            mb,
            path,
            bytes: written as u64,
            lines,
        });
    }
    Ok((corpora, source_bytes))
}

/// One configuration of a size's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Config {
    trainer: Trainer,
    threads: usize,
}

/// One child run, as measured.
#[derive(Clone, Debug)]
struct Run {
    /// The child's own time, from its start to its merges written.
    seconds: f64,
    /// The parent's time around the child, from spawning it to reaping it.
    process_seconds: f64,
    counting: Option<f64>,
    /// User + system CPU seconds of the child (`wait4`).
    cpu: f64,
    /// `ru_maxrss` of the child, in bytes.
    max_rss: u64,
    /// The child's own `VmHWM`, in bytes.
    hwm: Option<u64>,
    words: usize,
    merges: usize,
}

/// How a run's merges compare with the reference's first run at its size.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Check {
    Identical,
    /// The first rank (0-based) that differs, or where one list ends.
    Differs(String),
    /// No reference merges to compare with.
    Unverified,
}

/// A configuration's runs at one size.
struct Cell {
    config: Config,
    runs: Vec<Run>,
    failures: Vec<String>,
    checks: Vec<Check>,
}

impl Cell {
    fn seconds(&self) -> Option<f64> {
        (!self.runs.is_empty())
            .then(|| median(&self.runs.iter().map(|r| r.seconds).collect::<Vec<_>>()))
    }

    fn rss(&self) -> Option<f64> {
        (!self.runs.is_empty()).then(|| {
            median(
                &self
                    .runs
                    .iter()
                    .map(|r| r.max_rss as f64)
                    .collect::<Vec<_>>(),
            )
        })
    }

    fn counting(&self) -> Option<f64> {
        let c: Vec<f64> = self.runs.iter().filter_map(|r| r.counting).collect();
        (!c.is_empty()).then(|| median(&c))
    }

    fn cpu_per_wall(&self) -> Option<f64> {
        let wall: f64 = self.runs.iter().map(|r| r.process_seconds).sum();
        let cpu: f64 = self.runs.iter().map(|r| r.cpu).sum();
        (wall > 0.0).then(|| cpu / wall)
    }

    fn verdict(&self) -> String {
        if !self.failures.is_empty() {
            return format!("**failed**: {}", self.failures[0]);
        }
        match self.checks.iter().find(|c| **c != Check::Identical) {
            None => "identical".to_owned(),
            Some(Check::Differs(why)) => format!("**differs**: {why}"),
            Some(Check::Unverified) => "unverified (no reference merges)".to_owned(),
            Some(Check::Identical) => unreachable!(),
        }
    }

    fn ok(&self) -> bool {
        self.failures.is_empty() && self.checks.iter().all(|c| *c == Check::Identical)
    }
}

/// Runs one child and reaps it with `wait4`.
fn run_child(config: Config, corpus: &Corpus, out: &Path) -> Result<Run, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot re-run myself: {e}"))?;
    let threads = config.threads.to_string();
    let mut command = Command::new(exe);
    command
        .arg("--train-child")
        .arg(config.trainer.key())
        .arg("--file")
        .arg(&corpus.path)
        .args(["--threads", &threads])
        .arg("--out")
        .arg(out)
        // `tokenizers`' threads: rayon's global pool (parallelism on, as by default).
        .env("RAYON_NUM_THREADS", &threads)
        .env_remove("TOKENIZERS_PARALLELISM")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if config.threads == 1 {
        // One thread: `tokenizers`' serial mode, everything on the calling thread. With
        // `RAYON_NUM_THREADS=1` alone it also runs on one thread at a time, but every parallel
        // step of its trainer is handed to the pool's thread and back: on this workspace's
        // machine that took 1.0 s more at 1 MB, 1.4 s at 10 MB and 1.9 s at 100 MB (2026-11-27).
        command.env("TOKENIZERS_PARALLELISM", "false");
    }
    let started = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot re-run myself: {e}"))?;
    let mut stdout = String::new();
    let read = child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut stdout);
    let pid = libc::pid_t::try_from(child.id()).map_err(|e| e.to_string())?;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it and `status` for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pointers to live locals; `pid` is a child of this process not yet reaped
        // (std's `Child` is never waited on).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4: {e}"));
        }
    }
    let process_seconds = started.elapsed().as_secs_f64();
    read.map_err(|e| format!("reading the child's answer: {e}"))?;
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(format!("the child failed (wait status {status:#x})"));
    }
    let line = stdout.lines().last().unwrap_or("");
    let fields: Vec<&str> = line.split('\t').collect();
    let number = |s: &str| s.parse::<f64>().ok();
    match fields.as_slice() {
        ["ok", secs, counting, words, merges, hwm] => {
            let secs_of = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
            Ok(Run {
                seconds: number(secs).ok_or(format!("bad answer {line:?}"))?,
                process_seconds,
                counting: number(counting),
                cpu: secs_of(usage.ru_utime) + secs_of(usage.ru_stime),
                // Linux gives ru_maxrss in KiB.
                max_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
                hwm: hwm.parse().ok(),
                words: words.parse().unwrap_or(0),
                merges: merges.parse().unwrap_or(0),
            })
        }
        ["err", msg] => Err((*msg).to_owned()),
        _ => Err(format!("bad answer from the child: {line:?}")),
    }
}

/// Compares two merges files line by line.
fn compare_merges(reference: &Path, got: &Path) -> Result<Check, String> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let (want, have) = (read(reference)?, read(got)?);
    if want == have {
        return Ok(Check::Identical);
    }
    let (want, have): (Vec<&str>, Vec<&str>) = (want.lines().collect(), have.lines().collect());
    let check = match want.iter().zip(&have).position(|(a, b)| a != b) {
        Some(rank) => Check::Differs(format!(
            "first at rank {rank}: {} vs the reference's {}",
            have[rank], want[rank]
        )),
        None => Check::Differs(format!(
            "{} merges vs the reference's {} (the first {} agree)",
            have.len(),
            want.len(),
            want.len().min(have.len())
        )),
    };
    Ok(check)
}

/// One size's results.
struct SizeResult {
    corpus: Corpus,
    cells: Vec<Cell>,
}

impl SizeResult {
    fn cell(&self, trainer: Trainer, threads: usize) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.config == Config { trainer, threads })
    }
}

/// `--family train`: prints the report; fails when a run failed or its merges differ.
pub fn main(opts: &Options) -> ExitCode {
    match run(opts) {
        Ok((report, ok)) => {
            print!("{report}");
            if ok {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "bench-peers: a training run failed or its merges differ (see the report)"
                );
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("bench-peers: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(opts: &Options) -> Result<(String, bool), String> {
    if !opts.data.is_dir() {
        return Err(format!(
            "shared data not found at {} (set SIMDTOK_SHARED_DATA or --data)",
            opts.data.display()
        ));
    }
    let started = Instant::now();
    let load_before = load_average();
    let sizes: &[usize] = if opts.quick {
        &SIZES_MB[..2]
    } else {
        &SIZES_MB
    };
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = if all > 1 { vec![1, all] } else { vec![1] };
    let dir = std::env::temp_dir().join("bench-peers-train");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    eprintln!("== BPE training: writing the corpora to {}", dir.display());
    let (corpora, source_bytes) = write_corpora(&opts.data, &dir, sizes)?;
    // The reference first: its first run's merges are what every run is checked against.
    let configs: Vec<Config> = threads
        .iter()
        .flat_map(|&t| {
            [Trainer::Tokenizers, Trainer::Simdtok].map(|trainer| Config {
                trainer,
                threads: t,
            })
        })
        .collect();
    let passes = opts.train_passes;
    let mut results = Vec::new();
    let mut keep_files = false;
    for corpus in corpora {
        eprintln!(
            "== {} MB ({} bytes, {} lines)",
            corpus.mb, corpus.bytes, corpus.lines
        );
        let mut cells: Vec<Cell> = configs
            .iter()
            .map(|&config| Cell {
                config,
                runs: Vec::new(),
                failures: Vec::new(),
                checks: Vec::new(),
            })
            .collect();
        let reference = dir.join(format!("merges-{}mb-reference.txt", corpus.mb));
        let mut have_reference = false;
        // Round robin, so that drifts of the machine hit every configuration alike.
        for pass in 0..passes {
            for cell in &mut cells {
                let config = cell.config;
                let out = dir.join(format!(
                    "merges-{}mb-{}-{}t-{pass}.txt",
                    corpus.mb,
                    config.trainer.key(),
                    config.threads
                ));
                let label = format!(
                    "   {:>3} MB  {:<10} {} thread{}  pass {}/{passes}",
                    corpus.mb,
                    config.trainer.key(),
                    config.threads,
                    if config.threads == 1 { " " } else { "s" },
                    pass + 1
                );
                let run = match run_child(config, &corpus, &out) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("{label}: failed: {e}");
                        cell.failures.push(e);
                        continue;
                    }
                };
                let check = if !have_reference && config.trainer == Trainer::Tokenizers {
                    std::fs::rename(&out, &reference)
                        .map_err(|e| format!("{}: {e}", reference.display()))?;
                    have_reference = true;
                    Check::Identical
                } else if have_reference {
                    let check = compare_merges(&reference, &out)?;
                    if check == Check::Identical {
                        let _ = std::fs::remove_file(&out);
                    } else {
                        keep_files = true;
                    }
                    check
                } else {
                    keep_files = true;
                    Check::Unverified
                };
                eprintln!(
                    "{label}: {:>7.2} s  {:>7.2} MB/s  cpu/wall {:.2}  peak RSS {:>7.1} MiB  {} merges  {}",
                    run.seconds,
                    corpus.bytes as f64 / run.seconds / 1e6,
                    run.cpu / run.process_seconds,
                    run.max_rss as f64 / MIB,
                    run.merges,
                    match &check {
                        Check::Identical => "identical".to_owned(),
                        Check::Differs(why) => format!("DIFFERS: {why}"),
                        Check::Unverified => "unverified".to_owned(),
                    }
                );
                cell.runs.push(run);
                cell.checks.push(check);
            }
        }
        if !have_reference {
            keep_files = true;
        }
        let _ = std::fs::remove_file(&corpus.path);
        results.push(SizeResult { corpus, cells });
    }
    let ok = results.iter().all(|r| r.cells.iter().all(Cell::ok));
    if keep_files {
        eprintln!("   the merges files are kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("done in {seconds:.0} s");
    Ok((
        render(
            opts,
            &results,
            &threads,
            source_bytes,
            &dir,
            seconds,
            [load_before, load_average()],
        ),
        ok,
    ))
}

// ---- the report ----

const MIB: f64 = 1024.0 * 1024.0;

fn fmt_ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "–".to_owned(),
    }
}

/// The 1, 5 and 15 minute load averages (/proc/loadavg).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or("?".to_owned(), |l| {
        l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    })
}

/// The simdtok measured: `git describe --always --dirty` of the repository around this crate.
fn simdtok_version() -> String {
    Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or("?".to_owned(), |o| {
            String::from_utf8_lossy(&o.stdout).trim().to_owned()
        })
}

/// simdtok's 1-to-`n`-thread speed-up if its one-thread counting time were divided by `n` and
/// the rest (the merges, serial) stayed: an upper bound for the measured one.
fn simdtok_bound(r: &SizeResult, n: usize) -> Option<f64> {
    let cell = r.cell(Trainer::Simdtok, 1)?;
    let (total, counting) = (cell.seconds()?, cell.counting()?);
    Some(total / (counting / n as f64 + (total - counting)))
}

fn threads_label(threads: usize) -> String {
    if threads == 1 {
        "1".to_owned()
    } else {
        format!("{threads} (all)")
    }
}

fn render(
    opts: &Options,
    results: &[SizeResult],
    threads: &[usize],
    source_bytes: u64,
    dir: &Path,
    seconds: f64,
    load: [String; 2],
) -> String {
    let mut out = String::new();
    let tier = Kernels::active().map_or("?".to_owned(), |k| k.tier().to_string());
    report::preamble(&mut out, &tier, seconds);
    let _ = writeln!(
        out,
        "simdtok at `{}`; load average (1, 5, 15 min) {} at the start, {} at the end (the \
         machine's other users count too).  ",
        simdtok_version(),
        load[0],
        load[1]
    );
    let all = *threads.last().expect("one thread at least");
    let _ = writeln!(
        out,
        "BPE training end to end (file in, merges written), simdtok (`simdtok::train`) against \
         Hugging Face `tokenizers` 0.23.2's `BpeTrainer` (the Rust crate, `onig`), both with \
         the cl100k pre-tokenizer (the `tokenizer.json` spelling, digits in threes) and a \
         vocabulary of {VOCAB_SIZE}, `min_frequency` 0, on 1 thread and on all {all}. Each run \
         is a fresh process of this binary (`--train-child`); **seconds** are the child's own, \
         from its start to its merges written (the median of {} runs, round robin over the \
         configurations); **MB/s** = file bytes ÷ those seconds; **peak RSS** = the child's \
         `ru_maxrss` (`wait4`), median; **CPU ÷ wall** = the child's user + system time ÷ the \
         parent's wall time around it (spawn to reap), over all its runs: about 1 on one \
         thread. **Merges** are checked, every run, against the first run of `tokenizers` on \
         one thread at that size (one JSON `[left, right]` a line, by rank).",
        opts.train_passes
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "**Corpus**: `{}` under `corpora/` concatenated ({source_bytes} bytes: the largest real \
         English at hand), repeated and cut after the line end at or past each size. 10 and \
         100 MB repeat the same {:.1} MB, so they hold the same unique words as each other, \
         only with larger counts (the merge phase works on the unique words). Texts are the \
         lines without their `\\n` (and a `\\r` before it), as `simdtok train-bpe \
         --input-format lines` reads them.",
        SOURCES.join(".txt`, `") + ".txt",
        source_bytes as f64 / 1e6
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "- simdtok: the file read in {} KiB blocks by each of N threads, each its own range of \
         the file cut at line ends, into its own `simdtok::train::Counter` (cl100k); the tables \
         added up (`WordCounts::absorb`); `simdtok::train::train(&counts, PreTokenizer::Cl100k, \
         &[], &Settings {{ vocab_size: {VOCAB_SIZE}, min_frequency: 0, max_token_length: None, \
         counting: Counting::Windows }}, ..)` (the merges on one thread); `Model::saved_merges`. \
         *counting s* is the part of its seconds spent reading and counting.",
        BLOCK >> 10
    );
    let _ = writeln!(
        out,
        "- tokenizers 0.23.2: `TokenizerBuilder` with `BPE::default()` and the pre-tokenizer \
         `Sequence[Split(Regex(cl100k), Isolated, invert: false), ByteLevel(add_prefix_space: \
         false, trim_offsets: true, use_regex: false)]`; `BpeTrainer::builder().vocab_size({VOCAB_SIZE})\
         .min_frequency(0).show_progress(false).initial_alphabet(ByteLevel::alphabet())`; \
         `tokenizer.train(&mut trainer, lines)` over `BufReader::lines()` of the file; the \
         merges from the model serialized (ordered by rank). On 1 thread the child runs with \
         `TOKENIZERS_PARALLELISM=false`, its serial mode (its fastest on one thread: with \
         `RAYON_NUM_THREADS=1` instead, every parallel step of the trainer is handed to a pool \
         thread and back, which cost 1.0–1.9 s more per run here); on N threads with \
         `RAYON_NUM_THREADS=N` and `TOKENIZERS_PARALLELISM` unset (rayon's global pool)."
    );
    out.push('\n');

    // Per size.
    for r in results {
        let c = &r.corpus;
        let words = r
            .cells
            .iter()
            .flat_map(|cell| cell.runs.first())
            .map(|run| run.words)
            .next();
        let _ = writeln!(
            out,
            "**{} MB** ({} bytes, {} lines{}):\n",
            c.mb,
            c.bytes,
            c.lines,
            words.map_or(String::new(), |w| format!(", {w} unique words"))
        );
        let _ = writeln!(
            out,
            "| implementation | threads | seconds | MB/s | counting s | CPU ÷ wall | peak RSS MiB | merges | merges vs reference |\n\
             |:---|---:|---:|---:|---:|---:|---:|---:|:---|"
        );
        for cell in &r.cells {
            let secs = cell.seconds();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell.config.trainer.label(),
                threads_label(cell.config.threads),
                secs.map_or("–".to_owned(), |s| format!("{s:.2}")),
                secs.map_or("–".to_owned(), |s| format!(
                    "{:.2}",
                    c.bytes as f64 / s / 1e6
                )),
                cell.counting()
                    .map_or("–".to_owned(), |s| format!("{s:.2}")),
                cell.cpu_per_wall()
                    .map_or("–".to_owned(), |x| format!("{x:.2}")),
                cell.rss()
                    .map_or("–".to_owned(), |b| format!("{:.0}", b / MIB)),
                cell.runs
                    .first()
                    .map_or("–".to_owned(), |run| run.merges.to_string()),
                cell.verdict()
            );
        }
        out.push('\n');
    }

    // Ratios.
    let speed = |r: &SizeResult, t: Trainer, n: usize| {
        r.cell(t, n).and_then(Cell::seconds).map(|s| 1.0 / s)
    };
    let rss = |r: &SizeResult, t: Trainer, n: usize| r.cell(t, n).and_then(Cell::rss);
    let _ = writeln!(
        out,
        "**Ratios** (speed = 1 ÷ median seconds; memory = median peak RSS; *simdtok bound*: \
         the 1-to-{all}-thread speed-up simdtok would have if its reading and counting (on \
         1 thread) took 1/{all} of the time and the rest (the merges, on one thread by design) \
         the same; *counting*: the speed-up of its reading and counting alone):\n"
    );
    let _ = writeln!(
        out,
        "| MB | simdtok ÷ tokenizers, 1 thread | simdtok ÷ tokenizers, {all} threads | simdtok {all} ÷ 1 thread | simdtok bound | simdtok counting {all} ÷ 1 | tokenizers {all} ÷ 1 thread | RSS simdtok ÷ tokenizers, 1 thread | RSS simdtok ÷ tokenizers, {all} threads |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in results {
        let (s, t) = (Trainer::Simdtok, Trainer::Tokenizers);
        let counting = |n: usize| r.cell(s, n).and_then(Cell::counting);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.corpus.mb,
            fmt_ratio(speed(r, s, 1), speed(r, t, 1)),
            fmt_ratio(speed(r, s, all), speed(r, t, all)),
            fmt_ratio(speed(r, s, all), speed(r, s, 1)),
            fmt_ratio(simdtok_bound(r, all), Some(1.0)),
            fmt_ratio(counting(1), counting(all)),
            fmt_ratio(speed(r, t, all), speed(r, t, 1)),
            fmt_ratio(rss(r, s, 1), rss(r, t, 1)),
            fmt_ratio(rss(r, s, all), rss(r, t, all)),
        );
    }
    if all > 1 {
        let cpu: Vec<String> = [Trainer::Simdtok, Trainer::Tokenizers]
            .iter()
            .map(|&t| {
                let at: Vec<String> = results
                    .iter()
                    .map(|r| {
                        let x = r.cell(t, all).and_then(Cell::cpu_per_wall);
                        format!(
                            "{} at {} MB",
                            x.map_or("–".to_owned(), |x| format!("{x:.2}")),
                            r.corpus.mb
                        )
                    })
                    .collect();
                format!("{} {}", t.label(), at.join(", "))
            })
            .collect();
        let _ = writeln!(
            out,
            "\nCPU ÷ wall of the {all}-thread runs: {} ({all} = {all} cores busy all along; on \
             a machine whose other users hold a core, less).",
            cpu.join("; ")
        );
    }
    out.push('\n');

    // Linear growth.
    let per_mb = |r: &SizeResult, t: Trainer, n: usize| {
        r.cell(t, n)
            .and_then(Cell::seconds)
            .map(|s| s / (r.corpus.bytes as f64 / 1e6))
    };
    let sizes: Vec<String> = results
        .iter()
        .map(|r| format!("{} MB", r.corpus.mb))
        .collect();
    let (last, before) = match results {
        [.., a, b] => (Some(b), Some(a)),
        _ => (None, None),
    };
    let growth_head = match (before, last) {
        (Some(a), Some(b)) => format!(" {} MB ÷ {} MB |", b.corpus.mb, a.corpus.mb),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "**Linear growth** (seconds per MB of corpus; flat or falling = linear or better; the \
         last column is the per-MB time at the largest size ÷ that at the one before):\n"
    );
    let _ = writeln!(
        out,
        "| implementation | threads | {} |{growth_head}\n|:---|---:|{}{}",
        sizes.join(" | "),
        "---:|".repeat(sizes.len()),
        if growth_head.is_empty() { "" } else { "---:|" }
    );
    for t in [Trainer::Simdtok, Trainer::Tokenizers] {
        for &n in threads {
            let cells: Vec<String> = results
                .iter()
                .map(|r| per_mb(r, t, n).map_or("–".to_owned(), |x| format!("{x:.3}")))
                .collect();
            let growth = match (before, last) {
                (Some(a), Some(b)) => format!(" {} |", fmt_ratio(per_mb(b, t, n), per_mb(a, t, n))),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} |{growth}",
                t.label(),
                threads_label(n),
                cells.join(" | ")
            );
        }
    }
    out.push('\n');

    // Goals.
    let goal_sizes: Vec<&SizeResult> = results.iter().filter(|r| r.corpus.mb >= 10).collect();
    let _ = writeln!(
        out,
        "**Against the goals of issue 25** (on this machine; evaluated at {}; 1 MB is in the \
         linear-growth table only):\n",
        goal_sizes
            .iter()
            .map(|r| format!("{} MB", r.corpus.mb))
            .collect::<Vec<_>>()
            .join(" and ")
    );
    let _ = writeln!(out, "| goal | measured | verdict |\n|:---|:---|:---|");
    let mut goal =
        |name: &str, values: Vec<(usize, Option<f64>)>, unit: &str, met: &dyn Fn(f64) -> bool| {
            let measured: Vec<String> = values
                .iter()
                .map(|(mb, v)| {
                    format!(
                        "{mb} MB: {}",
                        v.map_or("–".to_owned(), |v| format!("{v:.2}{unit}"))
                    )
                })
                .collect();
            let verdict = if values.is_empty() || values.iter().any(|(_, v)| v.is_none()) {
                "?".to_owned()
            } else {
                let missed: Vec<String> = values
                    .iter()
                    .filter(|(_, v)| !met(v.expect("checked")))
                    .map(|(mb, _)| format!("{mb} MB"))
                    .collect();
                if missed.is_empty() {
                    "met".to_owned()
                } else {
                    format!("**not met** at {}", missed.join(", "))
                }
            };
            let _ = writeln!(out, "| {name} | {} | {verdict} |", measured.join("; "));
        };
    let (s, t) = (Trainer::Simdtok, Trainer::Tokenizers);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    goal(
        "≥ 3× `BpeTrainer` on one thread",
        goal_sizes
            .iter()
            .map(|r| (r.corpus.mb, ratio(speed(r, s, 1), speed(r, t, 1))))
            .collect(),
        "×",
        &|x| x >= 3.0,
    );
    goal(
        "≥ 20 MB/s end to end on one thread",
        goal_sizes
            .iter()
            .map(|r| {
                (
                    r.corpus.mb,
                    r.cell(s, 1)
                        .and_then(Cell::seconds)
                        .map(|secs| r.corpus.bytes as f64 / secs / 1e6),
                )
            })
            .collect(),
        " MB/s",
        &|x| x >= 20.0,
    );
    if all > 1 {
        goal(
            &format!(
                "≥ 1.8× from 1 to {all} threads (simdtok; the bound above: {})",
                goal_sizes
                    .iter()
                    .map(|r| format!(
                        "{} at {} MB",
                        fmt_ratio(simdtok_bound(r, all), Some(1.0)),
                        r.corpus.mb
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            goal_sizes
                .iter()
                .map(|r| (r.corpus.mb, ratio(speed(r, s, all), speed(r, s, 1))))
                .collect(),
            "×",
            &|x| x >= 1.8,
        );
    }
    for &n in threads {
        goal(
            &format!(
                "peak RSS below the reference's, {} thread{} (simdtok ÷ tokenizers)",
                n,
                if n == 1 { "" } else { "s" }
            ),
            goal_sizes
                .iter()
                .map(|r| (r.corpus.mb, ratio(rss(r, s, n), rss(r, t, n))))
                .collect(),
            "×",
            &|x| x < 1.0,
        );
    }
    if let (Some(a), Some(b)) = (before, last) {
        for &n in threads {
            goal(
                &format!(
                    "time linear in the corpus, simdtok {} thread{} (per-MB time at {} MB ÷ at {} MB ≤ {LINEAR_SLACK})",
                    n,
                    if n == 1 { "" } else { "s" },
                    b.corpus.mb,
                    a.corpus.mb
                ),
                vec![(b.corpus.mb, ratio(per_mb(b, s, n), per_mb(a, s, n)))],
                "×",
                &|x| x <= LINEAR_SLACK,
            );
        }
    }
    out.push('\n');

    // Notes: the peak-memory cross-check, failures, where differing merges are.
    let runs: Vec<&Run> = results
        .iter()
        .flat_map(|r| &r.cells)
        .flat_map(|c| &c.runs)
        .collect();
    let gap = runs
        .iter()
        .filter_map(|r| Some((r.max_rss as f64 - r.hwm? as f64).abs()))
        .fold(0.0, f64::max);
    let _ = writeln!(
        out,
        "Peak RSS cross-check: each child's own `VmHWM` (/proc/self/status, read after its \
         merges are written) is within {:.1} MiB of its `ru_maxrss` in every run (`ru_maxrss` \
         would also count the parent's resident set at the `exec`).",
        gap / MIB
    );
    let bad = results.iter().any(|r| r.cells.iter().any(|c| !c.ok()));
    if bad {
        let _ = writeln!(
            out,
            "\n**A run failed or its merges differ**; the merges files are kept in `{}`.",
            dir.display()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn child_arguments() {
        let a = parse_child(&strings(&[
            "tokenizers",
            "--file",
            "/tmp/c.txt",
            "--threads",
            "2",
            "--out",
            "/tmp/m.txt",
        ]))
        .unwrap();
        assert_eq!(
            a,
            ChildArgs {
                trainer: Trainer::Tokenizers,
                file: "/tmp/c.txt".into(),
                threads: 2,
                out: "/tmp/m.txt".into(),
                vocab_size: VOCAB_SIZE,
            }
        );
        let a = parse_child(&strings(&[
            "simdtok",
            "--threads",
            "1",
            "--out",
            "m",
            "--file",
            "c",
            "--vocab-size",
            "500",
        ]))
        .unwrap();
        assert_eq!((a.trainer, a.vocab_size), (Trainer::Simdtok, 500));
        assert!(parse_child(&strings(&["nope", "--file", "c"])).is_err());
        assert!(parse_child(&strings(&["simdtok", "--file", "c", "--out", "m"])).is_err());
        assert!(parse_child(&strings(&["simdtok", "--threads", "0"])).is_err());
        assert!(parse_child(&strings(&["simdtok", "--file"])).is_err());
    }

    #[test]
    fn cuts_fall_after_line_ends() {
        let dir =
            std::env::temp_dir().join(format!("bench-peers-train-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cuts.txt");
        std::fs::write(&path, "aaaa\nbb\r\nc\n\ndddddddd\nlast").unwrap();
        let text = std::fs::read(&path).unwrap();
        for threads in 1..8 {
            let cuts = line_cuts(&path, threads).unwrap();
            assert_eq!(cuts.len(), threads + 1);
            assert_eq!((cuts[0], *cuts.last().unwrap()), (0, text.len() as u64));
            assert!(cuts.windows(2).all(|w| w[0] <= w[1]));
            for &c in &cuts[1..threads] {
                assert!(c == text.len() as u64 || text[c as usize - 1] == b'\n');
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Both trainers, in this process, on the repository's 200 KB of the King James Bible:
    /// the same merges (and simdtok's the same on 1 and 3 threads).
    #[test]
    fn both_trainers_agree_on_a_small_corpus() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/corpus/en_kjv_bible.head.txt");
        let ours = simdtok_train(&path, 1, 1000).unwrap();
        let threaded = simdtok_train(&path, 3, 1000).unwrap();
        let reference = tokenizers_train(&path, 1000).unwrap();
        assert!(ours.merges.len() > 600);
        assert_eq!(ours.words, reference.words);
        assert_eq!(ours.merges, reference.merges);
        assert_eq!(threaded.merges, reference.merges);
    }
}
