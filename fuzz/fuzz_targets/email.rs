//! The email reader and tokenizer on any bytes: no panic, no hang, bounded memory.
//!
//! `cargo +nightly fuzz run email fuzz/corpus/email -- -max_len=65536 -timeout=2 -rss_limit_mb=2048`
//! (seed the corpus with real mail first, e.g. the SpamAssassin messages). Every settings
//! path runs: default features, word pairs with binary counts, and the parsed message.
#![no_main]

use _core::bag::Bag;
use _core::mail::features::EmailFeatures;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let hasher = foldhash::fast::FixedState::with_seed(7);
    let mut bag = Bag::default();
    let default = EmailFeatures::default();
    default.count_into(data, &mut bag, &hasher);
    assert!(!bag.is_empty() || data.iter().all(|b| b.is_ascii_whitespace() || *b == 0x0b));
    let mut pairs = EmailFeatures {
        binary: true,
        ..EmailFeatures::default()
    };
    pairs.words.ngram_range = Some((1, 2));
    pairs.count_into(data, &mut bag, &hasher);
    let parsed = default.parse(data);
    let _ = (
        parsed.subject(),
        parsed.headers.iter().map(|h| h.value().len()).sum::<usize>(),
    );
});
