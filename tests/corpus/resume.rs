//! `encode --shard-tokens N --resume`: a sharded run killed (SIGKILL) at random points and
//! resumed, again and again, ends with the very files an uninterrupted run writes — no document
//! lost or written twice; after every kill the manifest lists only shards whose files are whole
//! and final. Also: a manifest of another run is refused, and a complete run is not redone.

use crate::cli;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cli::{data, scratch, stderr};

const MODEL: &str = "sentencepiece/botchan_en_unigram_1000.model";

/// Six input files of lines, some hundreds of kilobytes in all.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    (0..6)
        .map(|f| {
            let text: String = (0..1500)
                .map(|i| match (i * 7 + f) % 11 {
                    0 => "\n".to_owned(),
                    k => format!("File {f} line {i}: {}\n", "some words to encode ".repeat(k)),
                })
                .collect();
            let path = dir.join(format!("part-{f}.txt"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

fn command(format: &str, out: &Path, inputs: &[PathBuf], resume: bool) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_simdtok"));
    cmd.args(["encode", "--model", &data(MODEL), "--output-format", format])
        .arg("--output")
        .arg(out)
        .args(["--shard-tokens", "3000", "--append-eos", "--threads", "2"]);
    for input in inputs {
        cmd.arg("--input").arg(input);
    }
    if resume {
        cmd.arg("--resume");
    }
    cmd.env_remove("SIMDTOK_TIER")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// The named files of `dir` (not the temporaries of a killed run) and their bytes.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_name().to_string_lossy().starts_with(".simdtok-"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// A small xorshift for the kill times.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

#[test]
fn a_killed_run_resumes_to_the_uninterrupted_runs_files() {
    let input_dir = scratch("resume", "inputs");
    let inputs = inputs(&input_dir);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for format in ["megatron", "datatrove"] {
        let name = if format == "megatron" {
            "train"
        } else {
            "train.ds"
        };
        let whole_dir = scratch("resume", &format!("{format}-whole"));
        let started = Instant::now();
        let run = command(format, &whole_dir.join(name), &inputs, false)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", stderr(&run));
        let took = started.elapsed();
        let want = outputs(&whole_dir);
        assert!(want.len() > 10, "several shards: {}", want.len());
        for round in 0..6 {
            let dir = scratch("resume", &format!("{format}-{round}"));
            let out = dir.join(name);
            let mut kills = 0;
            loop {
                let mut child = command(format, &out, &inputs, true).spawn().unwrap();
                // Killed at a random point of a run's length, up to three times a round.
                let delay = rng.below(took.as_micros() as u64 + 1);
                std::thread::sleep(Duration::from_micros(delay));
                if kills < 3 && child.try_wait().unwrap().is_none() {
                    child.kill().unwrap(); // SIGKILL
                    child.wait().unwrap();
                    kills += 1;
                    // Every shard the manifest lists is in place, whole, as the full run's.
                    let manifest = simdtok::corpus::manifest::Manifest::path_for(&out);
                    if let Ok(bytes) = std::fs::read(&manifest) {
                        let m: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                        let got = outputs(&dir);
                        for shard in m["shards"].as_array().unwrap() {
                            let k = shard["shard"].as_u64().unwrap() as usize;
                            let stem = format!("train_{k:05}");
                            for (file, bytes) in want.iter().filter(|(f, _)| f.starts_with(&stem)) {
                                let found = got.iter().find(|(f, _)| f == file);
                                assert_eq!(found.map(|g| &g.1), Some(bytes), "{file} after a kill");
                            }
                        }
                    }
                    continue;
                }
                let done = child.wait_with_output().unwrap();
                assert!(done.status.success(), "{}", stderr(&done));
                break;
            }
            assert_eq!(
                outputs(&dir).iter().map(|f| &f.0).collect::<Vec<_>>(),
                want.iter().map(|f| &f.0).collect::<Vec<_>>(),
                "{format} round {round} ({kills} kills)"
            );
            assert!(
                outputs(&dir) == want,
                "{format} round {round}: the files differ"
            );
            // No temporary is left once the run is complete.
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), want.len());
        }
    }
}

#[test]
fn a_complete_run_is_not_redone_and_another_runs_manifest_is_refused() {
    let input_dir = scratch("resume", "inputs-2");
    let inputs = inputs(&input_dir)[..2].to_vec();
    let dir = scratch("resume", "complete");
    let out = dir.join("train.ds");
    let run = command("datatrove", &out, &inputs, false).output().unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let before = outputs(&dir);
    let again = command("datatrove", &out, &inputs, true).output().unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stderr(&again).contains("complete"), "{}", stderr(&again));
    assert!(outputs(&dir) == before);
    // Other inputs (one fewer): refused, naming the manifest.
    let other = command("datatrove", &out, &inputs[..1], true)
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(1), "{}", stderr(&other));
    assert!(
        stderr(&other).contains("other inputs"),
        "{}",
        stderr(&other)
    );
    // --resume without shards, or from stdin: usage errors.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_simdtok"));
    let plain = cmd
        .args([
            "encode",
            "--model",
            &data(MODEL),
            "--output-format",
            "datatrove",
        ])
        .arg("--output")
        .arg(dir.join("x.ds"))
        .arg("--resume")
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(2), "{}", stderr(&plain));
}

/// Rewrites the manifest beside `out` by `edit`: the state a kill at a chosen point leaves.
fn edit_manifest(out: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = simdtok::corpus::manifest::Manifest::path_for(out);
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut m);
    std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
}

/// A change to a complete run's manifest.
type ManifestEdit = fn(&mut serde_json::Value);

/// Killed after the last shard is listed, before the run is recorded complete.
fn killed_after_the_last_listing(m: &mut serde_json::Value) {
    m["complete"] = false.into();
}

/// Killed after the last shard's files are in place, before it is listed.
fn killed_before_the_last_listing(m: &mut serde_json::Value) {
    m["complete"] = false.into();
    m["shards"].as_array_mut().unwrap().pop();
}

/// A copy of the folder `from` (its files only) in a fresh scratch folder.
fn copy_of(from: &Path, name: &str) -> PathBuf {
    let dir = scratch("resume", name);
    for (file, bytes) in outputs(from) {
        std::fs::write(dir.join(file), bytes).unwrap();
    }
    dir
}

/// The kill points around the run's last shard, made exactly rather than hit by chance (the
/// random kills of the test above found the first once in many runs: the resumed run, with
/// nothing left to write, opened one more, empty, shard).
#[test]
fn a_run_killed_at_its_last_shard_resumes_to_the_same_files() {
    let input_dir = scratch("resume", "inputs-3");
    let inputs = inputs(&input_dir)[..2].to_vec();
    for (format, name) in [("megatron", "train"), ("datatrove", "train.ds")] {
        let whole = scratch("resume", &format!("{format}-last-whole"));
        let run = command(format, &whole.join(name), &inputs, true)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", stderr(&run));
        let want = outputs(&whole);
        let kills: [(&str, ManifestEdit); 2] = [
            ("listed", killed_after_the_last_listing),
            ("in-place", killed_before_the_last_listing),
        ];
        for (kill, edit) in kills {
            let dir = copy_of(&whole, &format!("{format}-last-{kill}"));
            edit_manifest(&dir.join(name), edit);
            let again = command(format, &dir.join(name), &inputs, true)
                .output()
                .unwrap();
            assert!(again.status.success(), "{}", stderr(&again));
            let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
                files.iter().map(|f| f.0.clone()).collect()
            };
            let got = outputs(&dir);
            assert_eq!(names(&got), names(&want), "{format}, killed {kill}");
            assert!(got == want, "{format}, killed {kill}: the files differ");
        }
    }
}

/// Killed while writing its first manifest (the temporary written, not yet renamed): no manifest
/// is found, and the resumed run, a new one, still removes the temporary.
#[test]
fn a_run_killed_before_its_first_manifest_leaves_no_temporary() {
    let input_dir = scratch("resume", "inputs-4");
    let inputs = inputs(&input_dir)[..1].to_vec();
    let dir = scratch("resume", "first-manifest");
    std::fs::write(dir.join(".simdtok-Kx9aQ2.tmp"), "{\"simdtok_manif").unwrap();
    let run = command("datatrove", &dir.join("train.ds"), &inputs, true)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let temporaries: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".simdtok-"))
        .collect();
    assert!(temporaries.is_empty(), "{temporaries:?}");
}
