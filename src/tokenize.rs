//! The default word tokenizer: text -> words -> features, exactly as streamnb's `Tokenizer`
//! (and scikit-learn's `CountVectorizer` default analyzer) sees text.
//!
//! Steps (numbered as in the Python docstring of `streamnb.features.text.Tokenizer`):
//! 1. keep the first `max_chars` characters;
//! 2. lowercase as Python's `str.lower()` (tables from Python's Unicode database);
//! 3. words = runs of 2+ characters that Python's `re` calls `\w` (`str.isalnum()` or `_`),
//!    the first `max_tokens` of them;
//! 4. drop stop words;
//! 5. character n-grams inside each word padded with one space on each side (`c:` prefix
//!    when word features are produced too);
//! 7. word n-grams joined by one space.
//!
//! (Step 6, stemming, is Python's snowballstemmer: a caller that stems passes the stems in.)
//! Features are emitted one occurrence at a time, in the order Python counts them, so a
//! consumer can count them, look them up in a vocabulary, or build a dict.

use crate::unicode_tables::{CASED_RANGES, CASE_IGNORABLE_RANGES, DIGIT_RANGES, LOWER_MAP, SPACE_RANGES, WORD_RANGES};
use std::collections::HashSet;

/// Latin-1 characters: bit 0x100 set = word character; low byte = `str.lower()` of the
/// character (which stays in Latin-1 for every Latin-1 character; a test checks it).
static LATIN1: [u16; 256] = build_latin1();

const fn build_latin1() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut code = 0;
    while code < 256 {
        let mut word = false;
        let mut i = 0;
        while i < WORD_RANGES.len() {
            if WORD_RANGES[i].0 <= code && code <= WORD_RANGES[i].1 {
                word = true;
            }
            i += 1;
        }
        let lower = if (code >= 0x41 && code <= 0x5a) || (code >= 0xc0 && code <= 0xde && code != 0xd7) {
            code + 32
        } else {
            code
        };
        table[code as usize] = (lower as u16) | if word { 0x100 } else { 0 };
        code += 1;
    }
    table
}

/// ASCII byte -> its lowercase if it is a word character, 0 if it is not; bytes >= 128
/// (parts of other characters) are kept.
static ASCII_LOWER: [u8; 256] = ascii_table(true);
/// The same without lowercasing.
static ASCII_KEEP: [u8; 256] = ascii_table(false);

const fn ascii_table(lowercase: bool) -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut code = 0;
    while code < 256 {
        table[code] = if code >= 128 {
            code as u8
        } else if LATIN1[code] & 0x100 != 0 {
            if lowercase {
                (LATIN1[code] & 0xff) as u8
            } else {
                code as u8
            }
        } else {
            0
        };
        code += 1;
    }
    table
}

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// For 64 bytes: (a bit per nonzero byte, a bit per byte >= 128), bit i for byte i.
#[inline]
fn chunk_masks(chunk: &[u8]) -> (u64, u64) {
    let (mut words, mut high) = (0u64, 0u64);
    for (k, block) in chunk.chunks_exact(8).enumerate() {
        let block = u64::from_le_bytes(block.try_into().unwrap_or([0; 8]));
        words |= gather_bits(!zero_bytes(block) & HIGH_BITS) << (8 * k);
        high |= gather_bits(block & HIGH_BITS) << (8 * k);
    }
    (words, high)
}

/// `ASCII_LOWER` (or `ASCII_KEEP`) applied to the 8 bytes of `block` at once: an ASCII
/// word character ([0-9A-Za-z_]) is kept (lowercased when asked), another ASCII byte
/// becomes 0, a byte >= 128 is kept.
#[inline(always)]
fn map_block(block: u64, lowercase: bool) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // For ASCII bytes b (bit 7 clear), bit 7 of (b | 0x80) - n is set iff b >= n (no
    // borrow crosses bytes since every byte is >= 0x80 before the subtraction).
    let set = block | HIGH_BITS;
    let at_least = |n: u8| set.wrapping_sub(ONES * n as u64) & HIGH_BITS;
    let range = |low: u8, high: u8| at_least(low) & !at_least(high + 1);
    let ascii = !block & HIGH_BITS;
    let upper = range(b'A', b'Z') & ascii;
    let word = (range(b'0', b'9') | upper | range(b'a', b'z') | zero_bytes(block ^ (ONES * b'_' as u64))) & ascii;
    // Byte masks: 0xFF where the byte is kept.
    let keep = ((word | (block & HIGH_BITS)) >> 7).wrapping_mul(0xff);
    let lowered = if lowercase { block + (upper >> 2) } else { block };
    lowered & keep
}

/// The bit 7 of each byte of `flags` (all other bits zero) packed into bits 0-7.
#[inline]
fn gather_bits(flags: u64) -> u64 {
    ((flags >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// Bit 7 of each byte of the result is set exactly where the byte of `block` is zero.
#[inline]
fn zero_bytes(block: u64) -> u64 {
    !(((block & 0x7f7f_7f7f_7f7f_7f7f).wrapping_add(0x7f7f_7f7f_7f7f_7f7f)) | block) & HIGH_BITS
}

/// The words of a run holding non-ASCII characters, character by character: each is
/// lowercased (when asked) and the run splits where a character is no word character.
/// Returns false when `matched` says to stop.
fn split_unicode(run: &str, lowercase: bool, word: &mut Vec<u8>, matched: &mut impl FnMut(&[u8]) -> bool) -> bool {
    word.clear();
    let mut chars = 0usize;
    let mut go_on = true;
    let mut add = |c: char, word: &mut Vec<u8>, chars: &mut usize| {
        if !go_on {
            return;
        }
        if is_word_char(c) {
            let mut buf = [0u8; 4];
            word.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            *chars += 1;
        } else {
            if *chars >= 2 {
                go_on = matched(word);
            }
            word.clear();
            *chars = 0;
        }
    };
    for c in run.chars() {
        if lowercase {
            lower_char(c, |lc| add(lc, word, &mut chars));
        } else {
            add(c, word, &mut chars);
        }
    }
    if go_on && chars >= 2 {
        go_on = matched(word);
    }
    go_on
}

/// Is `code` in one of the sorted inclusive `ranges`?
#[inline]
fn in_ranges(ranges: &[(u32, u32)], code: u32) -> bool {
    ranges
        .binary_search_by(|&(low, high)| {
            if high < code {
                std::cmp::Ordering::Less
            } else if low > code {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Is `c` a character Python's `re` matches with `\w`?
#[inline]
pub fn is_word_char(c: char) -> bool {
    let code = c as u32;
    if code < 256 {
        return LATIN1[code as usize] & 0x100 != 0;
    }
    in_ranges(WORD_RANGES, code)
}

/// Is `c` a character Python's `re` matches with `\s` (`str.isspace()`)?
#[inline]
pub fn is_space(c: char) -> bool {
    let code = c as u32;
    if code < 128 {
        return matches!(code, 0x09..=0x0d | 0x1c..=0x20);
    }
    in_ranges(SPACE_RANGES, code)
}

/// Is `c` a character Python's `re` matches with `\d` (a Unicode decimal digit)?
#[inline]
pub fn is_digit(c: char) -> bool {
    let code = c as u32;
    if code < 128 {
        return c.is_ascii_digit();
    }
    in_ranges(DIGIT_RANGES, code)
}

/// Python's `str.strip()`: without the leading and trailing `\s` characters.
pub fn py_strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// Python's `str.lower()` of a whole text, final sigma included: U+03A3 lowers to U+03C2
/// after a cased character (case-ignorable ones skipped) not followed by one.
pub fn python_lower(text: &str, out: &mut String) {
    if text.is_ascii() {
        let start = out.len();
        out.push_str(text);
        out[start..].make_ascii_lowercase();
        return;
    }
    if !needs_python_lower(text) {
        for c in text.chars() {
            lower_char(c, |lc| out.push(lc));
        }
        return;
    }
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c != '\u{3a3}' {
            lower_char(c, |lc| out.push(lc));
            continue;
        }
        let cased = |c: char| in_ranges(CASED_RANGES, c as u32);
        let ignorable = |c: char| in_ranges(CASE_IGNORABLE_RANGES, c as u32);
        let before = chars[..i].iter().rev().find(|&&b| !ignorable(b));
        let mut last = before.is_some_and(|&b| cased(b));
        if last {
            let after = chars[i + 1..].iter().find(|&&a| !ignorable(a));
            last = after.is_none_or(|&a| !cased(a));
        }
        out.push(if last { '\u{3c2}' } else { '\u{3c3}' });
    }
}

/// Python's `str.lower()` of one character (U+03A3 aside, see `needs_python_lower`).
#[inline]
pub fn lower_char(c: char, mut out: impl FnMut(char)) {
    let code = c as u32;
    if code < 256 {
        out(char::from((LATIN1[code as usize] & 0xff) as u8));
        return;
    }
    match LOWER_MAP.binary_search_by_key(&code, |&(k, _)| k) {
        Ok(i) => LOWER_MAP[i].1.chars().for_each(out),
        Err(_) => out(c),
    }
}

/// Text whose lowercase depends on context (capital sigma lowers to a final sigma at the
/// end of a word): the caller lowercases it with Python itself.
pub fn needs_python_lower(text: &str) -> bool {
    // U+03A3 is the bytes CE A3 in UTF-8 (A3 is a continuation byte: it follows its lead).
    let bytes = text.as_bytes();
    memchr::memchr_iter(0xa3, bytes).any(|at| at > 0 && bytes[at - 1] == 0xce)
}

/// The words matched by a scan, counted against max_tokens: one run of 2+ characters is a
/// match; a stop word is matched but not emitted.
struct Matches<'a, F> {
    count: usize,
    max_tokens: usize,
    stop: Option<&'a HashSet<Box<[u8]>>>,
    emit: F,
}

impl<F: FnMut(&[u8])> Matches<'_, F> {
    /// One more match; false once max_tokens words have been matched. Always inlined: it
    /// runs once a word, and a call (a closure LLVM kept out of line) cost a quarter of it.
    #[inline(always)]
    fn word(&mut self, word: &[u8]) -> bool {
        self.count += 1;
        if !self.stop.is_some_and(|stop| stop.contains(word)) {
            (self.emit)(word);
        }
        self.count < self.max_tokens
    }
}

/// Tokenizer settings (the `streamnb.features.text.Tokenizer` parameters the core implements).
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub lowercase: bool,
    pub stop_words: Option<HashSet<Box<[u8]>>>,
    pub ngram_range: Option<(usize, usize)>,
    pub char_ngram_range: Option<(usize, usize)>,
    pub max_tokens: Option<usize>,
    pub max_chars: Option<usize>,
}

/// A list of words in one buffer (no allocation per word).
#[derive(Default, Debug)]
pub struct Words {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Words {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    pub fn push(&mut self, word: &[u8]) {
        self.bytes.extend_from_slice(word);
        self.ends.push(self.bytes.len());
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(move |i| self.get(i))
    }
}

impl Options {
    /// Text holding a capital sigma (whose lowercase depends on context), cut to max_chars
    /// and lowercased whole, as Python's str.lower does it; None for any other text (the
    /// scan lowercases it as it goes).
    fn lowered_whole(&self, text: &str) -> Option<String> {
        if !(self.lowercase && needs_python_lower(text)) {
            return None;
        }
        let cut = match self.max_chars {
            Some(n) => text.char_indices().nth(n).map_or(text, |(at, _)| &text[..at]),
            None => text,
        };
        let mut lowered = String::with_capacity(cut.len());
        python_lower(cut, &mut lowered);
        Some(lowered)
    }

    /// Steps 1-4: the words of `text`, appended to `words`. Text holding a capital sigma
    /// (whose lowercase depends on context) is cut and lowercased whole first.
    pub fn words(&self, text: &str, words: &mut Words) {
        if let Some(lowered) = self.lowered_whole(text) {
            return self.words_with(&lowered, false, None, words);
        }
        self.words_with(text, self.lowercase, self.max_chars, words)
    }

    /// `words` with steps 1 and 2 set apart: for text the caller has already cut and
    /// lowercased (see `needs_python_lower`), pass `false, None`.
    pub fn words_with(&self, text: &str, lowercase: bool, max_chars: Option<usize>, words: &mut Words) {
        let mut scratch = Vec::new();
        self.scan(text, lowercase, max_chars, &mut scratch, |word| words.push(word));
    }

    /// Steps 1-4: `emit` gets each word (stop words left out), in order.
    ///
    /// Two tight passes, as `bytes.translate` + `split` would do it: every ASCII byte is
    /// mapped through one table (its lowercase if it is a word character, 0 otherwise;
    /// other bytes are kept), then the runs of nonzero bytes are the words. A run holding
    /// non-ASCII characters is read again character by character (decoded, lowercased
    /// through Python's tables, split where a character is no word character).
    pub fn scan(
        &self,
        text: &str,
        lowercase: bool,
        max_chars: Option<usize>,
        buffer: &mut Vec<u8>,
        emit: impl FnMut(&[u8]),
    ) {
        let bytes = text.as_bytes();
        // Step 1: the byte offset of the first character past max_chars (a text with no
        // more bytes than max_chars has no more characters either).
        let end = match max_chars {
            Some(limit) if bytes.len() > limit => text.char_indices().nth(limit).map_or(bytes.len(), |(at, _)| at),
            _ => bytes.len(),
        };
        let table = if lowercase { &ASCII_LOWER } else { &ASCII_KEEP };
        buffer.clear();
        buffer.resize(end.div_ceil(64) * 64 + 64, 0); // whole 64-byte chunks, zero-padded
        let whole = end / 8 * 8;
        for (out, block) in buffer[..whole].chunks_exact_mut(8).zip(bytes[..whole].chunks_exact(8)) {
            let block = u64::from_le_bytes(block.try_into().unwrap_or([0; 8]));
            out.copy_from_slice(&map_block(block, lowercase).to_le_bytes());
        }
        for (out, &b) in buffer[whole..end].iter_mut().zip(&bytes[whole..end]) {
            *out = table[b as usize];
        }
        let mut matches = Matches {
            count: 0,
            max_tokens: self.max_tokens.unwrap_or(usize::MAX),
            stop: self.stop_words.as_ref(),
            emit,
        };
        let mut slow = Vec::new();
        let mapped = &buffer[..];
        // The runs of nonzero bytes, 64 bytes at a time: one bit per byte for "in a run" and
        // one for "not ASCII"; a run's ends are where the first mask changes. An ASCII run
        // is a word as it stands; a run holding other characters is read character by
        // character.
        let mut pending: Option<usize> = None; // a run that began in an earlier chunk
        let mut base = 0usize;
        while base < end {
            let (words, high) = chunk_masks(&mapped[base..base + 64]);
            let mut rest = words;
            loop {
                let (start, from) = match pending {
                    Some(start) => (start, 0),
                    None if rest == 0 => break,
                    None => {
                        let from = rest.trailing_zeros() as usize;
                        (base + from, from)
                    }
                };
                let after = !words & (u64::MAX << from); // the separators from the start on
                if after == 0 {
                    pending = Some(start); // the run goes on into the next chunk
                    break;
                }
                let stop = after.trailing_zeros() as usize;
                rest = words & (u64::MAX << stop);
                let word = &mapped[start..base + stop];
                let ascii = if pending.take().is_some() {
                    word.is_ascii()
                } else {
                    high & (u64::MAX << from) & !(u64::MAX << stop) == 0
                };
                let go_on = if !ascii {
                    split_unicode(&text[start..base + stop], lowercase, &mut slow, &mut |w| {
                        matches.word(w)
                    })
                } else {
                    word.len() < 2 || matches.word(word)
                };
                if !go_on {
                    return;
                }
            }
            base += 64;
        }
        if let Some(start) = pending {
            if mapped[start..end].is_ascii() {
                if end - start >= 2 {
                    matches.word(&mapped[start..end]);
                }
            } else {
                split_unicode(&text[start..end], lowercase, &mut slow, &mut |w| matches.word(w));
            }
        }
    }

    /// Every feature occurrence of `text` (steps 1-5 and 7) in the order Python counts
    /// them; unigram counts stream straight from the scan.
    pub fn for_each_feature(
        &self,
        text: &str,
        lowercase: bool,
        max_chars: Option<usize>,
        scratch: &mut Vec<u8>,
        mut emit: impl FnMut(&[u8]),
    ) {
        if self.unigrams_only() {
            self.scan(text, lowercase, max_chars, scratch, emit);
            return;
        }
        let mut words = Words::default();
        self.scan(text, lowercase, max_chars, scratch, |w| words.push(w));
        self.features(&words, None, scratch, &mut emit);
    }

    /// `for_each_feature` with this tokenizer's own steps 1 and 2: text holding a capital
    /// sigma (whose lowercase depends on context) is cut and lowercased whole first, as
    /// `words` does it.
    pub fn each_feature(&self, text: &str, scratch: &mut Vec<u8>, emit: impl FnMut(&[u8])) {
        if let Some(lowered) = self.lowered_whole(text) {
            return self.for_each_feature(&lowered, false, None, scratch, emit);
        }
        self.for_each_feature(text, self.lowercase, self.max_chars, scratch, emit)
    }

    /// Steps 5 and 7: every feature occurrence of the words, in the order Python counts
    /// them (character n-grams of every word first, then word n-grams by increasing n).
    /// `stems` (step 6, computed by the caller) replaces the words in word n-grams.
    pub fn features(&self, words: &Words, stems: Option<&Words>, scratch: &mut Vec<u8>, mut emit: impl FnMut(&[u8])) {
        if let Some((low, high)) = self.char_ngram_range {
            let prefix: &[u8] = if self.ngram_range.is_some() { b"c:" } else { b"" };
            let mut starts: Vec<usize> = Vec::new();
            for word in words.iter() {
                char_ngrams(word, low, high, prefix, scratch, &mut starts, &mut emit);
            }
        }
        let Some((low, high)) = self.ngram_range else {
            return;
        };
        let grams = stems.unwrap_or(words);
        for n in low..=high {
            if n == 1 {
                grams.iter().for_each(&mut emit);
                continue;
            }
            if grams.len() < n {
                break;
            }
            for i in 0..=grams.len() - n {
                scratch.clear();
                for j in i..i + n {
                    if j > i {
                        scratch.push(b' ');
                    }
                    scratch.extend_from_slice(grams.get(j));
                }
                emit(scratch);
            }
        }
    }

    /// Does `features` emit exactly the words (plain unigram counts)?
    pub fn unigrams_only(&self) -> bool {
        self.ngram_range == Some((1, 1)) && self.char_ngram_range.is_none()
    }
}

/// Character n-grams of ` word ` (in characters); a padded word no longer than n is
/// emitted once, whole, and ends the word's n-grams.
fn char_ngrams(
    word: &[u8],
    low: usize,
    high: usize,
    prefix: &[u8],
    scratch: &mut Vec<u8>,
    starts: &mut Vec<usize>,
    emit: &mut impl FnMut(&[u8]),
) {
    let mut padded = Vec::with_capacity(word.len() + 2);
    padded.push(b' ');
    padded.extend_from_slice(word);
    padded.push(b' ');
    // Byte offset of every character of the padded word, plus its end.
    starts.clear();
    starts.extend(
        padded
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b & 0xC0 != 0x80)
            .map(|(i, _)| i),
    );
    let length = starts.len();
    starts.push(padded.len());
    for n in low..=high {
        if length <= n {
            scratch.clear();
            scratch.extend_from_slice(prefix);
            scratch.extend_from_slice(&padded);
            emit(scratch);
            break;
        }
        for i in 0..=length - n {
            scratch.clear();
            scratch.extend_from_slice(prefix);
            scratch.extend_from_slice(&padded[starts[i]..starts[i + n]]);
            emit(scratch);
        }
    }
}

/// Common English function words (the list of `streamnb.features.text.ENGLISH_STOP_WORDS`).
pub fn english_stop_words() -> HashSet<Box<[u8]>> {
    ENGLISH_STOP_WORDS
        .split_whitespace()
        .map(|w| w.as_bytes().to_vec().into_boxed_slice())
        .collect()
}

/// Articles, pronouns, auxiliaries, prepositions, conjunctions and frequent adverbs and
/// determiners that carry little topical signal (written for streamnb; one-letter words
/// included for custom token patterns that keep them).
pub const ENGLISH_STOP_WORDS: &str = "
    a an the
    i me my mine myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs themselves
    this that these those who whom whose which what whatever whoever whichever
    am is are was were be been being have has had having do does did doing done
    will would shall should can could may might must ought
    isn aren wasn weren hasn haven hadn doesn don didn won wouldn shan shouldn can cannot
    couldn mightn mustn needn ll ve re
    and but or nor so yet if then else than because as until while although though unless
    whether since once
    of at by for with about against between into through during before after above below
    to from up down in out on off over under again further upon within without along
    across among around behind beyond toward towards onto via per
    here there when where why how all any both each few more most other some such no not
    only own same too very just also even ever still already almost quite rather
    again always never often sometimes much many several enough less least
    s t d m o y
";

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(options: &Options, text: &str) -> Vec<String> {
        let mut words = Words::default();
        options.words(text, &mut words);
        words.iter().map(|w| String::from_utf8(w.to_vec()).unwrap()).collect()
    }

    fn features_of(options: &Options, text: &str) -> Vec<String> {
        let mut words = Words::default();
        options.words(text, &mut words);
        let mut out = Vec::new();
        options.features(&words, None, &mut Vec::new(), |f| {
            out.push(String::from_utf8(f.to_vec()).unwrap())
        });
        out
    }

    fn default_options() -> Options {
        Options {
            lowercase: true,
            ngram_range: Some((1, 1)),
            ..Options::default()
        }
    }

    #[test]
    fn words_are_lowercased_runs_of_two_or_more_word_characters() {
        let o = default_options();
        assert_eq!(
            words_of(&o, "The cat sat on a mat, THE END_1 x é Été"),
            vec!["the", "cat", "sat", "on", "mat", "the", "end_1", "été"]
        );
    }

    #[test]
    fn combining_marks_split_words_as_in_python() {
        // U+0301 (combining acute) is not \w in Python's re.
        let o = default_options();
        assert_eq!(words_of(&o, "cafe\u{301}s ab"), vec!["cafe", "ab"]);
    }

    #[test]
    fn max_tokens_and_max_chars_cap_the_matches() {
        let o = Options {
            max_tokens: Some(2),
            ..default_options()
        };
        assert_eq!(words_of(&o, "aa b cc dd ee"), vec!["aa", "cc"]);
        let o = Options {
            max_chars: Some(5),
            ..default_options()
        };
        assert_eq!(words_of(&o, "abc defgh"), vec!["abc"]);
        let stop = Some(["the".as_bytes().to_vec().into_boxed_slice()].into_iter().collect());
        let o = Options {
            max_tokens: Some(2),
            stop_words: stop,
            ..default_options()
        };
        assert_eq!(words_of(&o, "the cat the dog"), vec!["cat"]);
    }

    #[test]
    fn ngrams_follow_pythons_order() {
        let o = Options {
            ngram_range: Some((1, 2)),
            ..default_options()
        };
        assert_eq!(
            features_of(&o, "a cat sat down"),
            vec!["cat", "sat", "down", "cat sat", "sat down"]
        );
        let o = Options {
            char_ngram_range: Some((2, 3)),
            ngram_range: None,
            ..default_options()
        };
        assert_eq!(features_of(&o, "ab"), vec![" a", "ab", "b ", " ab", "ab "]);
        let o = Options {
            char_ngram_range: Some((4, 6)),
            ..default_options()
        };
        assert_eq!(features_of(&o, "ab"), vec!["c: ab ", "ab"]);
    }

    #[test]
    fn blocks_map_as_the_tables() {
        for lowercase in [false, true] {
            let table = if lowercase { &ASCII_LOWER } else { &ASCII_KEEP };
            for start in (0..256usize).step_by(8) {
                for shift in 0..8 {
                    let bytes: Vec<u8> = (0..8).map(|k| ((start + k * 37 + shift * 11) % 256) as u8).collect();
                    let got = map_block(u64::from_le_bytes(bytes.clone().try_into().unwrap()), lowercase).to_le_bytes();
                    let want: Vec<u8> = bytes.iter().map(|&b| table[b as usize]).collect();
                    assert_eq!(got.to_vec(), want, "{bytes:?}");
                }
            }
            for b in 0..=255u8 {
                let got = map_block(u64::from_le_bytes([b; 8]), lowercase).to_le_bytes();
                assert_eq!(got, [table[b as usize]; 8]);
            }
        }
    }

    #[test]
    fn lowercase_uses_the_full_mapping() {
        // U+0130 lowercases to "i" + U+0307 (a combining mark, so not a word character).
        let o = default_options();
        assert_eq!(words_of(&o, "\u{130}stanbul"), vec!["stanbul"]);
        assert!(needs_python_lower("ΟΔΟΣ"));
    }
}
