//! The exact optimal BPE search (`simdtok::train::exact`): against brute-force enumeration on
//! thousands of tiny corpora, against the greedy sequence, its memo, its limits, and (ignored)
//! the table of `docs/bpe-exact.md`.

use std::time::Instant;

use proptest::prelude::*;
use simdtok::train::Counting;
use simdtok::train::exact::{
    ExactError, Limits, Outcome, brute_force, brute_force_counted, compare, greedy, optimal,
};

type Words = Vec<(Vec<u32>, u64)>;

/// SplitMix64: a deterministic generator for the random corpora.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Applies `merges` the plain way (new ids from `alphabet` on; left to right, without overlap)
/// and returns the utility, checking that every merge is of a pair present when it is made.
fn replay(words: &Words, alphabet: u32, merges: &[(u32, u32)]) -> u64 {
    let mut now: Vec<Vec<u32>> = words.iter().map(|(w, _)| w.clone()).collect();
    for (i, &(x, y)) in merges.iter().enumerate() {
        let z = alphabet + i as u32;
        let mut present = false;
        for (w, (_, n)) in now.iter_mut().zip(words) {
            let mut out = Vec::new();
            let mut j = 0;
            while j < w.len() {
                if j + 1 < w.len() && w[j] == x && w[j + 1] == y {
                    out.push(z);
                    present |= *n > 0;
                    j += 2;
                } else {
                    out.push(w[j]);
                    j += 1;
                }
            }
            *w = out;
        }
        assert!(
            present,
            "merge {i} ({x}, {y}) of {merges:?} is of no present pair"
        );
    }
    words
        .iter()
        .zip(&now)
        .map(|((w, n), v)| n * (w.len() - v.len()) as u64)
        .sum()
}

fn random_corpus(rng: &mut Rng) -> (Words, u32, usize) {
    let alphabet = rng.range(1, 4) as u32;
    let words = (0..rng.range(1, 3))
        .map(|_| {
            let len = rng.range(0, 8) as usize;
            let w = (0..len).map(|_| rng.range(0, alphabet as u64 - 1) as u32);
            (w.collect(), rng.range(1, 5))
        })
        .collect();
    (words, alphabet, rng.range(0, 4) as usize)
}

#[test]
fn optimal_equals_brute_force_on_random_tiny_corpora() {
    let mut rng = Rng(25);
    let limits = Limits::default();
    let mut strictly_better = [0usize; 2];
    for case in 0..10_000 {
        let (words, alphabet, m) = random_corpus(&mut rng);
        let what = format!("case {case}: {words:?}, alphabet {alphabet}, {m} merges");
        let exact = optimal(&words, alphabet, m, &limits).expect(&what);
        let brute = brute_force(&words, alphabet, m);
        // The same utility, and the same sequence: both return the smallest optimal one.
        assert_eq!(exact, brute, "{what}");
        assert!(exact.merges.len() <= m, "{what}");
        assert_eq!(
            replay(&words, alphabet, &exact.merges),
            exact.utility,
            "{what}"
        );
        for (i, counting) in [Counting::Windows, Counting::NonOverlapping]
            .into_iter()
            .enumerate()
        {
            let g = greedy(&words, alphabet, m, counting);
            assert!(g.merges.len() <= m, "{what}");
            assert_eq!(replay(&words, alphabet, &g.merges), g.utility, "{what}");
            assert!(
                g.utility <= exact.utility,
                "{what}: greedy {counting:?} {g:?}"
            );
            strictly_better[i] += (g.utility < exact.utility) as usize;
        }
    }
    // The generator does reach the cases where greedy falls short.
    eprintln!("greedy below the optimum (windows, non-overlapping): {strictly_better:?}");
    assert!(
        strictly_better.iter().all(|&n| n > 0),
        "{strictly_better:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Larger inputs than brute force can take: the optimum is never below either greedy, and
    /// its sequence replays to its utility.
    #[test]
    fn optimal_is_never_below_greedy(
        words in prop::collection::vec(
            (prop::collection::vec(0u32..5, 0..12), 1u64..6), 1..4),
        m in 0usize..6,
    ) {
        let exact = optimal(&words, 5, m, &Limits::default()).unwrap();
        prop_assert_eq!(replay(&words, 5, &exact.merges), exact.utility);
        for counting in [Counting::Windows, Counting::NonOverlapping] {
            let g = greedy(&words, 5, m, counting);
            prop_assert!(g.utility <= exact.utility, "{:?} {:?}", g, exact);
        }
    }
}

/// `aabaaab`: greedy merges `aa` (3 windows, or 2 non-overlapping tied with `ab` and taken as
/// the smaller pair), then saves one more; merging `ab` first and then `a`+`ab` saves 4.
#[test]
fn greedy_is_suboptimal_on_aabaaab() {
    let words: Words = vec![(vec![0, 0, 1, 0, 0, 0, 1], 1)];
    let limits = Limits::default();
    for counting in [Counting::Windows, Counting::NonOverlapping] {
        let c = compare(&words, 2, 2, counting, &limits).unwrap();
        assert_eq!(c.greedy.merges[0], (0, 0));
        assert_eq!(c.greedy.utility, 3);
        assert_eq!(c.optimal.merges, [(0, 1), (0, 2)]);
        assert_eq!(c.optimal.utility, 4);
        assert_eq!(c.optimal, brute_force(&words, 2, 2));
    }
    // `aabaaaba`, 3 merges: the optimum saves 6, greedy 4.
    let words: Words = vec![(vec![0, 0, 1, 0, 0, 0, 1, 0], 1)];
    let o = optimal(&words, 2, 3, &limits).unwrap();
    assert_eq!(o.utility, 6);
    assert_eq!(o, brute_force(&words, 2, 3));
    for counting in [Counting::Windows, Counting::NonOverlapping] {
        assert_eq!(greedy(&words, 2, 3, counting).utility, 4);
    }
}

/// Fragments of the corpus files where greedy falls short (found by the survey below); the
/// pinned utilities are checked by brute force too.
#[test]
fn greedy_is_suboptimal_on_real_text() {
    let limits = Limits::default();
    // (string, merges, greedy windows, greedy non-overlapping, optimal)
    let cases = [
        ("Thorns also and thistles shall i", 2, 3, 3, 4),
        ("\"\"\"Command-line parsing library", 2, 3, 4, 4),
        ("And the LORD God said, Behold, t", 3, 5, 5, 6),
    ];
    for (s, m, w, n, o) in cases {
        let (words, alphabet) = bytes_word(s);
        let c = compare(&words, alphabet, m, Counting::Windows, &limits).unwrap();
        assert_eq!(c.greedy.utility, w, "{s}");
        assert_eq!(
            greedy(&words, alphabet, m, Counting::NonOverlapping).utility,
            n,
            "{s}"
        );
        assert_eq!(c.optimal.utility, o, "{s}");
        assert_eq!(c.optimal, brute_force(&words, alphabet, m), "{s}");
    }
}

/// Windows and non-overlapping greedy differ on runs: windows counts `aaa` as two `aa`, but
/// merging it saves only one symbol.
#[test]
fn greedy_counting_modes_differ() {
    let words: Words = vec![(vec![0, 0, 0], 3), (vec![0, 1, 0, 1, 0, 1, 0, 1], 1)];
    // Windows: (a, a) 6 > (a, b) 4; non-overlapping: (a, a) 3 < (a, b) 4.
    assert_eq!(greedy(&words, 2, 1, Counting::Windows).merges, [(0, 0)]);
    assert_eq!(
        greedy(&words, 2, 1, Counting::NonOverlapping).merges,
        [(0, 1)]
    );
    let o = optimal(&words, 2, 1, &Limits::default()).unwrap();
    assert_eq!(o, brute_force(&words, 2, 1));
    assert_eq!(o.utility, 4);
}

/// Words whose pairs share no symbol: every order of the same merges ends in the same state,
/// which the memo (and the renaming) count once; the bound cuts the rest. (The unit test
/// `memo_alone_visits_fewer_states_than_brute_force` measures the memo without the bound.)
#[test]
fn memo_visits_fewer_states_than_brute_force() {
    let words: Words = (0..5u32).map(|i| (vec![2 * i, 2 * i + 1], 1)).collect();
    let words = [words, vec![(vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 2)]].concat();
    let c = compare(&words, 10, 4, Counting::Windows, &Limits::default()).unwrap();
    let (brute, sequences) = brute_force_counted(&words, 10, 4);
    assert_eq!(c.optimal, brute);
    eprintln!(
        "memo {} states, brute force {sequences} sequences",
        c.states_visited
    );
    assert!(
        (c.states_visited as u64) * 10 < sequences,
        "memo {} states, brute force {sequences} sequences",
        c.states_visited
    );
}

#[test]
fn inputs_over_the_limits_are_refused_with_the_limit() {
    let limits = Limits::default();
    // Too many symbols.
    let long: Words = vec![((0..200).map(|i| i % 7).collect(), 1)];
    let e = optimal(&long, 7, 2, &limits).unwrap_err();
    assert!(
        matches!(e, ExactError::TooManySymbols { found: 200, .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains(&format!("at most {} symbols", limits.max_symbols)),
        "{text}"
    );
    assert!(text.contains("has 200 symbols"), "{text}");
    // Too many merges (but asking for more than the input can take is capped, not refused).
    let words: Words = vec![((0..20).map(|i| i % 5).collect(), 1)];
    let e = optimal(&words, 5, 100, &limits).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains(&format!("at most {} merges", limits.max_merges)),
        "{text}"
    );
    assert!(text.contains("100 were asked for"), "{text}");
    assert!(optimal(&[(vec![0, 1, 2], 1)], 3, 100, &limits).is_ok());
    // The state budget.
    let tight = Limits {
        max_states: 5,
        ..limits
    };
    let e = compare(&words, 5, 4, Counting::Windows, &tight).unwrap_err();
    assert_eq!(e, ExactError::TooManyStates { limit: 5 });
    assert!(e.to_string().contains("after 5 states"), "{e}");
    // Limits above what the search can represent act as its caps.
    let wide = Limits {
        max_symbols: usize::MAX,
        max_merges: usize::MAX,
        max_states: 10,
    };
    let e = optimal(&[(vec![0; 300], 1)], 1, 1, &wide).unwrap_err();
    assert!(e.to_string().contains("at most 250 symbols"), "{e}");
}

#[test]
fn odd_inputs_do_not_panic() {
    let limits = Limits::default();
    let cases: Vec<(Words, u32)> = vec![
        (vec![], 0),
        (vec![(vec![], 1), (vec![0], 5)], 1),
        (vec![(vec![0, 0, 0], 0)], 1),
        (
            vec![(vec![0, 1, 0, 1], u64::MAX), (vec![0, 1, 0, 1], u64::MAX)],
            2,
        ),
        (vec![(vec![u32::MAX, u32::MAX, u32::MAX], 1)], u32::MAX),
        (vec![(vec![3, 3, 3, 3], 1)], 0),
    ];
    for (words, alphabet) in &cases {
        for m in [0, 1, 3, usize::MAX] {
            let o = optimal(words, *alphabet, m, &limits).unwrap();
            let g = greedy(words, *alphabet, m, Counting::NonOverlapping);
            assert!(g.utility <= o.utility);
            if m <= 3 {
                assert_eq!(brute_force(words, *alphabet, m), o);
            }
        }
    }
    let empty = Outcome::default();
    assert_eq!(optimal(&cases[0].0, 0, 5, &limits).unwrap(), empty);
    // Counts beyond u64 saturate.
    assert_eq!(
        optimal(&cases[3].0, 2, 2, &limits).unwrap().utility,
        u64::MAX
    );
    // The one id left above u32::MAX − 1... none above u32::MAX: no merge.
    assert_eq!(optimal(&cases[4].0, u32::MAX, 2, &limits).unwrap(), empty);
    // Greedy on a long input with every merge it can take.
    let long: Words = vec![((0..2000).map(|i| (i * 7 % 13) as u32).collect(), 3)];
    let g = greedy(&long, 13, usize::MAX, Counting::Windows);
    assert_eq!(g.utility, 3 * 1999);
}

/// The strings of the table in `docs/bpe-exact.md`, with the file of `tests/data/corpus/` each
/// is taken from.
const TABLE: &[(&str, &str)] = &[
    ("en_kjv_bible.head.txt", "Thorns also and thistles shall i"),
    ("en_kjv_bible.head.txt", "These are the generations of the"),
    ("en_kjv_bible.head.txt", "And the LORD God said, Behold, t"),
    ("en_kjv_bible.head.txt", "But of the fruit of the tree whi"),
    (
        "python311_stdlib.head.py.txt",
        "\"\"\"Command-line parsing library",
    ),
    (
        "python311_stdlib.head.py.txt",
        "self._indent_increment = indent_",
    ),
    ("udhr_scripts.txt", "모든 사람은 의견의 자"),
    ("udhr_scripts.txt", "すべての人は、法の下"),
];

/// Strings of about 64 bytes (the default symbol limit) for the cost of the default limits.
const AT_THE_LIMITS: &[(&str, &str)] = &[
    (
        "en_kjv_bible.head.txt",
        "And God called the light Day, and the darkness he called Night.",
    ),
    (
        "python311_stdlib.head.py.txt",
        "        description='sum the integers at the command line')",
    ),
    (
        "udhr_scripts.txt",
        "人類社会のすべての構成員の固有の尊厳と平等",
    ),
    ("udhr_scripts.txt", "Всеобщая декларация прав человека"),
    ("udhr_scripts.txt", "الإعلان العالمي لحقوق الإنسان"),
];

/// One word of bytes: the alphabet is the distinct bytes, ids in byte order.
fn bytes_word(s: &str) -> (Words, u32) {
    let mut alphabet: Vec<u8> = s.bytes().collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    let ids = s
        .bytes()
        .map(|b| alphabet.binary_search(&b).unwrap() as u32);
    (vec![(ids.collect(), 1)], alphabet.len() as u32)
}

/// Reads the strings' files and checks that each string is in its file.
fn checked(strings: &[(&'static str, &'static str)]) -> Vec<&'static str> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus/");
    strings
        .iter()
        .map(|&(file, s)| {
            let text = std::fs::read_to_string(format!("{dir}{file}")).unwrap();
            assert!(text.contains(s), "{s:?} is not in {file}");
            s
        })
        .collect()
}

fn gap(optimal: u64, greedy: u64) -> String {
    format!(
        "{:.1} %",
        100.0 * (optimal - greedy) as f64 / optimal as f64
    )
}

/// Prints the table of `docs/bpe-exact.md` (M from 2 up to 12, or until a search takes over
/// 2 s or visits 5 million states):
/// `cargo test --release --test train_exact -- --ignored --nocapture table`.
#[test]
#[ignore]
fn table() {
    let limits = Limits {
        max_symbols: 64,
        max_merges: 12,
        max_states: 5_000_000,
    };
    println!(
        "| string | bytes | M | greedy (windows) | greedy (non-overlapping) | optimal | gap \
         (windows) | gap (non-overlapping) | states | time |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for s in checked(TABLE) {
        let (words, alphabet) = bytes_word(s);
        for m in 2..=limits.max_merges {
            let start = Instant::now();
            let Ok(c) = compare(&words, alphabet, m, Counting::Windows, &limits) else {
                break;
            };
            let seconds = start.elapsed().as_secs_f64();
            let n = greedy(&words, alphabet, m, Counting::NonOverlapping);
            assert!(c.greedy.utility <= c.optimal.utility && n.utility <= c.optimal.utility);
            println!(
                "| `{s}` | {} | {m} | {} | {} | {} | {} | {} | {} | {seconds:.3} s |",
                s.len(),
                c.greedy.utility,
                n.utility,
                c.optimal.utility,
                gap(c.optimal.utility, c.greedy.utility),
                gap(c.optimal.utility, n.utility),
                c.states_visited,
            );
            if seconds > 2.0 {
                break;
            }
        }
    }
}

/// Prints what the default limits cost: M = 4, 6 and 8 (the merge limit) on strings of about 64
/// bytes (the symbol limit), then M = 8 on random strings of 64 symbols over 26 letters, the
/// hard case: `cargo test --release --test train_exact -- --ignored --nocapture
/// cost_at_the_limits`.
#[test]
#[ignore]
fn cost_at_the_limits() {
    let limits = Limits::default();
    println!("| input | symbols | M | optimal | greedy (windows) | states | time |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let row = |name: &str, words: &Words, alphabet: u32, m: usize| {
        let start = Instant::now();
        let c = compare(words, alphabet, m, Counting::Windows, &limits);
        let seconds = start.elapsed().as_secs_f64();
        let (optimal, greedy, states) = match c {
            Ok(c) => (
                c.optimal.utility.to_string(),
                c.greedy.utility.to_string(),
                c.states_visited.to_string(),
            ),
            Err(e) => (format!("error: {e}"), String::new(), String::new()),
        };
        let symbols = words[0].0.len();
        println!("| {name} | {symbols} | {m} | {optimal} | {greedy} | {states} | {seconds:.3} s |");
    };
    for s in checked(AT_THE_LIMITS) {
        let (words, alphabet) = bytes_word(s);
        for m in [4, 6, limits.max_merges] {
            row(&format!("`{s}`"), &words, alphabet, m);
        }
    }
    let mut rng = Rng(64);
    for i in 0..8 {
        let word = (0..64).map(|_| rng.range(0, 25) as u32).collect();
        row(
            &format!("random {i}"),
            &vec![(word, 1)],
            26,
            limits.max_merges,
        );
    }
}

/// The fragments of the survey: the first 32 bytes (cut at a character boundary) of each of the
/// first 400 lines of a file, verse numbers and indentation dropped, when that is at least 20
/// bytes.
fn fragments(text: &str) -> Vec<&str> {
    text.lines()
        .take(400)
        .filter_map(|line| {
            let line = line.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' ');
            let end = line
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .take_while(|&e| e <= 32)
                .last()
                .unwrap_or(0);
            (end >= 20).then(|| &line[..end])
        })
        .collect()
}

/// Prints how often greedy falls short on the fragments of the three corpus files, M = 2 to 8:
/// `cargo test --release --test train_exact -- --ignored --nocapture survey`.
#[test]
#[ignore]
fn survey() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus/");
    let limits = Limits::default();
    println!(
        "| file | fragments | runs (M = 2..8) | greedy (windows) below the optimum | greedy \
         (non-overlapping) below | largest gap |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for file in [
        "en_kjv_bible.head.txt",
        "python311_stdlib.head.py.txt",
        "udhr_scripts.txt",
    ] {
        let text = std::fs::read_to_string(format!("{dir}{file}")).unwrap();
        let fragments = fragments(&text);
        let (mut runs, mut below_w, mut below_n, mut largest) = (0, 0, 0, 0.0f64);
        let mut strings = [0usize; 2];
        for s in &fragments {
            let (words, alphabet) = bytes_word(s);
            let mut short = [false; 2];
            for m in 2..=limits.max_merges {
                let c = compare(&words, alphabet, m, Counting::Windows, &limits).unwrap();
                let n = greedy(&words, alphabet, m, Counting::NonOverlapping);
                let o = c.optimal.utility;
                assert!(c.greedy.utility <= o && n.utility <= o, "{s:?} {m}");
                runs += 1;
                below_w += (c.greedy.utility < o) as usize;
                below_n += (n.utility < o) as usize;
                short[0] |= c.greedy.utility < o;
                short[1] |= n.utility < o;
                let worst = c.greedy.utility.min(n.utility);
                largest = largest.max(100.0 * (o - worst) as f64 / o as f64);
            }
            strings[0] += short[0] as usize;
            strings[1] += short[1] as usize;
        }
        println!(
            "| {file} | {} | {runs} | {below_w} runs ({} fragments) | {below_n} runs ({} \
             fragments) | {largest:.1} % |",
            fragments.len(),
            strings[0],
            strings[1],
        );
    }
}
