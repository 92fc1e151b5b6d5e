//! A mutation fuzzer over the email reader and tokenizer (no coverage guidance, so it runs
//! at full speed: ~10^6 inputs in minutes). Seeds are real messages; each input is a seed
//! with 1-4 mutations (byte flips, cuts, repeats, splices with another seed, MIME tokens
//! inserted). Any panic counts, even one the reader catches (a panic hook counts them);
//! the peak memory is reported, and the 20 slowest inputs are timed again (best of 5, so
//! that a moment the process was not running does not count) to report the slowest.
//!
//! `MAIL_FUZZ_SEEDS=<folder of raw messages> MAIL_FUZZ_RUNS=1000000 \
//!  cargo test --release --lib mail::fuzz_harness -- --ignored --nocapture`

use super::features::EmailFeatures;
use crate::bag::Bag;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static PANICS: AtomicUsize = AtomicUsize::new(0);

const TOKENS: &[&[u8]] = &[
    b"--",
    b"\n",
    b"\r\n",
    b"\r",
    b"\n\n",
    b"=?",
    b"?=",
    b"=?utf-8?q?",
    b"=?gb2312?b?",
    b"?Q?",
    b"Content-Type: ",
    b"multipart/mixed; boundary=",
    b"multipart/alternative; boundary=\"B\"",
    b"--B",
    b"--B--",
    b"message/rfc822",
    b"message/delivery-status",
    b"text/html",
    b"text/plain; charset=",
    b"big5",
    b"utf-16",
    b"iso-2022-jp",
    b"Content-Transfer-Encoding: base64\n",
    b"Content-Transfer-Encoding: quoted-printable\n",
    b"=E9",
    b"=\n",
    b"<a href=\"http://",
    b"<!--",
    b"-->",
    b"<script>",
    b"</script>",
    b"&#",
    b"&#x10FFFF;",
    b"&amp",
    b"\xce\xa3",
    b"From ",
    b": ",
    b"\t",
    b" ",
    b"@",
    b"www.",
    b"://",
    b"%",
    b"\xff",
    b"\xe9",
    b"\x00",
    b";",
    b"\"",
    b"'",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &mut Vec<u8>) {
    input.clear();
    input.extend_from_slice(&seeds[rng.below(seeds.len())]);
    for _ in 0..1 + rng.below(4) {
        let len = input.len();
        match rng.below(7) {
            0 => {
                for _ in 0..1 + rng.below(8) {
                    if !input.is_empty() {
                        let at = rng.below(input.len());
                        input[at] ^= 1 << rng.below(8);
                    }
                }
            }
            1 => {
                let start = rng.below(len);
                let end = (start + rng.below(len - start + 1)).min(len);
                input.drain(start..end);
            }
            2 => {
                let start = rng.below(len);
                let piece: Vec<u8> = input[start..(start + rng.below(256)).min(len)].to_vec();
                let at = rng.below(input.len() + 1);
                for _ in 0..1 + rng.below(64) {
                    input.splice(at..at, piece.iter().copied());
                }
            }
            3 => {
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len());
                let at = rng.below(len + 1);
                input.truncate(at);
                input.extend_from_slice(&other[from..]);
            }
            4 => input.truncate(rng.below(len + 1)),
            _ => {
                let token = TOKENS[rng.below(TOKENS.len())];
                let at = rng.below(len + 1);
                for _ in 0..1 + rng.below(3) {
                    input.splice(at..at, token.iter().copied());
                }
            }
        }
    }
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
#[ignore = "long: set MAIL_FUZZ_SEEDS (and MAIL_FUZZ_RUNS) and run with --ignored"]
fn mutation_fuzz() {
    let folder = std::env::var("MAIL_FUZZ_SEEDS").expect("MAIL_FUZZ_SEEDS: a folder of raw messages");
    let runs: usize = std::env::var("MAIL_FUZZ_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1_000_000);
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&folder)
        .expect("seed folder")
        .filter_map(|e| std::fs::read(e.ok()?.path()).ok())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {
        PANICS.fetch_add(1, Ordering::Relaxed);
    }));
    let settings = EmailFeatures::default();
    let mut pairs = EmailFeatures {
        binary: true,
        ..EmailFeatures::default()
    };
    pairs.words.ngram_range = Some((1, 2));
    let hasher = foldhash::fast::FixedState::with_seed(7);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut input = Vec::new();
    let mut bag = Bag::default();
    let mut slow: Vec<(Duration, usize, Vec<u8>)> = Vec::new(); // (time, run, input), 20 slowest
    let mut bytes = 0usize;
    let started = Instant::now();
    for run in 0..runs {
        mutate(&mut rng, &seeds, &mut input);
        bytes += input.len();
        let settings = if run % 2 == 0 { &settings } else { &pairs };
        let start = Instant::now();
        settings.count_into(&input, &mut bag, &hasher);
        let elapsed = start.elapsed();
        if slow.len() < 20 || elapsed > slow[slow.len() - 1].0 {
            slow.push((elapsed, run, input.clone()));
            slow.sort_by_key(|s| std::cmp::Reverse(s.0));
            slow.truncate(20);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let retimed = slow.iter().map(|(_, run, input)| {
        let settings = if run % 2 == 0 { &settings } else { &pairs };
        let best = (0..5)
            .map(|_| {
                let start = Instant::now();
                settings.count_into(input, &mut bag, &hasher);
                start.elapsed()
            })
            .min()
            .unwrap_or_default();
        (best, input.len())
    });
    let (slowest, slowest_len) = retimed.max().unwrap_or_default();
    std::panic::set_hook(hook);
    let panics = PANICS.load(Ordering::Relaxed);
    eprintln!(
        "mutation fuzz: {runs} inputs ({:.0} MB) in {seconds:.1} s, {panics} panics, slowest input {:.2} ms \
         ({slowest_len} bytes; first timing {:.2} ms), peak RSS {:?} KiB",
        bytes as f64 / 1e6,
        slowest.as_secs_f64() * 1e3,
        slow.first().map_or(0.0, |s| s.0.as_secs_f64() * 1e3),
        peak_rss_kib()
    );
    assert_eq!(panics, 0);
}
