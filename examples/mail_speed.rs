//! Speed of the email tokenizer on a folder of raw messages (one message a file), with the
//! default settings of Python's `EmailTokenizer()` and the bag hasher of `_core`.
//!
//! cargo run --release --example mail_speed -- DIR [--rounds N] [--step K] [--limit N]
//!     [--dump FILE] [--check FILE]
//!
//! `--step K` keeps every K-th message (a spread subset, e.g. for callgrind), `--limit N`
//! the first N of those. Prints µs/message and MB/s (the fastest round). `--dump` writes every message's features
//! (in bag order: name, tab, count) to FILE; `--check` compares them with such a file and
//! counts the messages whose features differ (a differential check across code changes).

use _core::bag::Bag;
use _core::mail::features::EmailFeatures;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .expect("usage: mail_speed DIR [--rounds N] [--step K] [--limit N] [--dump FILE] [--check FILE]");
    let (mut rounds, mut step, mut limit, mut dump, mut check) = (5usize, 1usize, usize::MAX, None, None);
    while let Some(flag) = args.next() {
        let value = args.next().expect("a value after each flag");
        match flag.as_str() {
            "--rounds" => rounds = value.parse().expect("--rounds N"),
            "--step" => step = value.parse().expect("--step K"),
            "--limit" => limit = value.parse().expect("--limit N"),
            "--dump" => dump = Some(value),
            "--check" => check = Some(value),
            _ => panic!("unknown flag {flag}"),
        }
    }
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("a readable folder")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    names.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str())); // (cheaper than by components)
    names = names.into_iter().step_by(step.max(1)).take(limit).collect();
    let messages: Vec<Vec<u8>> = names.iter().map(|p| std::fs::read(p).expect("a message")).collect();
    let bytes: usize = messages.iter().map(Vec::len).sum();
    let features = EmailFeatures::default();
    let hasher = foldhash::fast::FixedState::with_seed(0x5eed); // python::tokenizer::bag_hasher

    let mut best = f64::INFINITY;
    let mut distinct = 0usize;
    for _ in 0..rounds {
        distinct = 0;
        let start = Instant::now();
        for raw in &messages {
            // A new bag a message, as `_core` counts one (EmailTokenizer.count, model paths).
            let mut bag = Bag::default();
            features.count_into(raw, &mut bag, &hasher);
            distinct += bag.len();
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    if rounds > 0 {
        println!(
            "{} messages, {:.1} MB, {} rounds: {:.2} µs/message, {:.1} MB/s (fastest round), {} features",
            messages.len(),
            bytes as f64 / 1e6,
            rounds,
            best / messages.len() as f64 * 1e6,
            bytes as f64 / 1e6 / best,
            distinct
        );
    }

    if dump.is_none() && check.is_none() {
        return;
    }
    // One block a message: "== name", then a line per feature.
    let listed: Vec<String> = messages
        .iter()
        .zip(&names)
        .map(|(raw, name)| {
            let mut bag = Bag::default();
            features.count_into(raw, &mut bag, &hasher);
            let mut block = format!("== {}\n", name.file_name().unwrap_or_default().to_string_lossy());
            for i in 0..bag.len() {
                block.push_str(&String::from_utf8_lossy(bag.feature(i)));
                block.push_str(&format!("\t{}\n", bag.count(i)));
            }
            block
        })
        .collect();
    if let Some(path) = dump {
        std::fs::write(&path, listed.concat()).expect("a writable dump file");
        println!("features of {} messages written to {path}", listed.len());
    }
    if let Some(path) = check {
        let before = std::fs::read_to_string(&path).expect("a dump file");
        let blocks: Vec<String> = before.split_inclusive('\n').fold(Vec::new(), |mut blocks, line| {
            if line.starts_with("== ") || blocks.is_empty() {
                blocks.push(String::new());
            }
            blocks.last_mut().expect("a block").push_str(line);
            blocks
        });
        let mismatched: Vec<&str> = listed
            .iter()
            .enumerate()
            .filter(|&(i, block)| blocks.get(i) != Some(block))
            .map(|(_, block)| block.lines().next().unwrap_or(""))
            .collect();
        println!(
            "compared {} messages with {path} ({} there): {} mismatches {:?}",
            listed.len(),
            blocks.len(),
            mismatched.len(),
            &mismatched[..mismatched.len().min(10)]
        );
    }
}
