//! The tables every kernel is tested with: class specifications (from one term to sixteen),
//! pruning tables (from no distinct row to sixteen), and tries (small, with every byte, large,
//! and one with darts-clone's zero-filled free units).

use std::sync::LazyLock;

use simdtok_kernels::{ByteClassSpec, ByteClassTable, ByteSet, ClassSet, DoubleArray, PruneTable};

use crate::naive::Dictionary;

/// A deterministic xorshift generator: tests need no seedable RNG crate.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}

pub struct ClassFixture {
    pub name: String,
    pub spec: ByteClassSpec,
    pub keep: ClassSet,
    pub table: ByteClassTable,
    /// The sets `find_in` / `find_not_in` are asked about: the bytes with a kept class in the
    /// given set.
    pub sets: Vec<(ClassSet, ByteSet)>,
}

pub struct PruneFixture {
    pub name: &'static str,
    pub values: [u8; 256],
    pub table: PruneTable,
}

pub struct TrieFixture {
    pub name: &'static str,
    pub trie: DoubleArray,
    /// `None` where the naive dictionary does not describe the array (darts-clone's zero free
    /// units make a 0 byte in the text a phantom edge); tiers are still compared with scalar.
    pub dictionary: Option<Dictionary>,
    pub keys: Vec<Vec<u8>>,
}

pub struct Fixtures {
    pub classes: Vec<ClassFixture>,
    pub prunes: Vec<PruneFixture>,
    pub tries: Vec<TrieFixture>,
}

pub static FIXTURES: LazyLock<Fixtures> = LazyLock::new(Fixtures::standard);

impl ClassFixture {
    pub fn new(
        name: impl Into<String>,
        spec: ByteClassSpec,
        keep: ClassSet,
        mut sets: Vec<ClassSet>,
    ) -> ClassFixture {
        let table = ByteClassTable::new(&spec, keep);
        sets.insert(0, keep);
        let sets = sets
            .into_iter()
            .map(|s| (s, ByteSet::of_classes(&spec, keep & s)))
            .collect();
        ClassFixture {
            name: name.into(),
            spec,
            keep,
            table,
            sets,
        }
    }
}

impl PruneFixture {
    pub fn new(name: &'static str, values: [u8; 256]) -> PruneFixture {
        PruneFixture {
            name,
            values,
            table: PruneTable::new(values),
        }
    }
}

/// A spec whose every class has sixteen distinct rows: the largest table a spec can compile to.
pub fn random_spec(seed: u64) -> ByteClassSpec {
    let mut rng = Rng::new(seed);
    let mut spec = ByteClassSpec::empty();
    for b in 0..=255u8 {
        spec.set(b, ClassSet::from_bits(rng.byte()));
    }
    spec
}

fn words() -> Vec<&'static str> {
    "the of and to in is was he for it with as his on be at by had are but from or have an they \
     which one you were all her she there would their we him been has when who will no more if \
     out so up said what its about than into them can only other time new some could these two \
     may first then do any like my now over such our man me even most made after also did many \
     off before must well back through years much where your way down should because each just \
     those people how too little state good very make world still see own men work long here get \
     both between life being under never day same another know while last might us great old \
     year a ab abc abcd abcde b bc bcd token tokenizer tokenization hello world naïve café"
        .split_whitespace()
        .collect()
}

fn pieces() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for w in words() {
        keys.push(w.as_bytes().to_vec());
        keys.push(format!("\u{2581}{w}").into_bytes());
        keys.push(format!("##{w}").into_bytes());
    }
    for s in [
        "日",
        "日本",
        "日本語",
        "語",
        "中文",
        "🎉",
        "🎉🎉",
        "\u{2581}",
        "..",
        "...",
        "\r\n",
        "\t",
    ] {
        keys.push(s.as_bytes().to_vec());
    }
    // Keys with raw bytes ≥ 0x80 that are not UTF-8.
    keys.push(vec![0xFF]);
    keys.push(vec![0xFF, 0xFE, 0x80]);
    keys.push(vec![0xC0, b'a']);
    keys.sort();
    keys.dedup();
    keys
}

fn with_values(keys: Vec<Vec<u8>>) -> Vec<(Vec<u8>, u32)> {
    keys.into_iter()
        .enumerate()
        .map(|(i, k)| (k, i as u32 * 3 + 1))
        .collect()
}

fn trie_fixture(name: &'static str, keys: Vec<Vec<u8>>) -> TrieFixture {
    let entries = with_values(keys.clone());
    TrieFixture {
        name,
        trie: DoubleArray::build(&entries).expect("valid keys"),
        dictionary: Some(Dictionary::new(&entries)),
        keys,
    }
}

impl Fixtures {
    fn standard() -> Fixtures {
        let std = ByteClassSpec::standard();
        let mut classes = vec![ClassFixture::new(
            "standard/all",
            std.clone(),
            ClassSet::ALL,
            vec![
                ClassSet::WHITESPACE,
                ClassSet::ALNUM,
                ClassSet::UTF8_LEAD | ClassSet::UTF8_CONTINUATION,
                ClassSet::PUNCT | ClassSet::CONTROL,
                ClassSet::EMPTY,
            ],
        )];
        for k in 0..8 {
            classes.push(ClassFixture::new(
                format!("standard/class{k}"),
                std.clone(),
                ClassSet::single(k),
                vec![],
            ));
        }
        classes.push(ClassFixture::new(
            "standard/ws+punct",
            std.clone(),
            ClassSet::WHITESPACE | ClassSet::PUNCT,
            vec![ClassSet::PUNCT],
        ));
        classes.push(ClassFixture::new(
            "standard/empty",
            std,
            ClassSet::EMPTY,
            vec![ClassSet::ALL],
        ));
        for seed in 1..=3 {
            classes.push(ClassFixture::new(
                format!("random{seed}/all"),
                random_spec(seed),
                ClassSet::ALL,
                vec![ClassSet::single(seed as usize), ClassSet::from_bits(0x5A)],
            ));
        }
        // Sixteen distinct rows in one class: the two-term worst case of a byte set.
        classes.push(ClassFixture::new(
            "staircase",
            ByteClassSpec::empty().with_class(0, |b| (b & 15) <= (b >> 4)),
            ClassSet::ALL,
            vec![],
        ));

        let mut letters = [0u8; 256];
        for b in 0..=255u8 {
            letters[b as usize] = match b {
                b'a'..=b'z' | b'A'..=b'Z' => 1 + b % 16,
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF4 => 4,
                0x80..=0xBF => 0,
                _ => 1,
            };
        }
        let mut random = [0u8; 256];
        let mut rng = Rng::new(7);
        for v in random.iter_mut() {
            *v = if rng.below(2) == 0 { 0 } else { rng.byte() };
        }
        let mut one = [0u8; 256];
        one[0xFF] = 7;
        let mut distinct_rows = [0u8; 256];
        for (b, v) in distinct_rows.iter_mut().enumerate() {
            *v = (b as u8).wrapping_mul(31).wrapping_add((b >> 4) as u8);
        }
        let prunes = vec![
            PruneFixture::new("letters", letters),
            PruneFixture::new("random", random),
            PruneFixture::new("zero", [0; 256]),
            PruneFixture::new("all-nonzero", [255; 256]),
            PruneFixture::new("only-0xff", one),
            PruneFixture::new("sixteen-rows", distinct_rows),
        ];

        let small = pieces();
        let mut bytes = small.clone();
        bytes.extend((1..=255u8).map(|b| vec![b]));
        bytes.sort();
        bytes.dedup();
        let mut large: Vec<Vec<u8>> = small.clone();
        let mut rng = Rng::new(11);
        while large.len() < 30_000 {
            let len = 1 + rng.below(12);
            let key: Vec<u8> = (0..len)
                .map(|_| match rng.below(4) {
                    0 => 1 + rng.below(255) as u8,
                    _ => b'a' + rng.below(6) as u8,
                })
                .collect();
            large.push(key);
        }
        large.sort();
        large.dedup();
        let mut darts_like = trie_fixture("darts-zero-free-units", bytes.clone());
        let zeroed: Vec<u32> = darts_like
            .trie
            .units()
            .iter()
            .map(|&u| if u == 1 << 31 { 0 } else { u })
            .collect();
        darts_like.trie = DoubleArray::from_units(zeroed).expect("still a valid array");
        darts_like.dictionary = None;
        let tries = vec![
            trie_fixture("pieces", small),
            trie_fixture("pieces+bytes", bytes),
            trie_fixture("large", large),
            darts_like,
        ];
        Fixtures {
            classes,
            prunes,
            tries,
        }
    }
}
