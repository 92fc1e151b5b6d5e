//! Byte n-grams: every window of n consecutive bytes in the first `max_bytes` bytes of a
//! message, the features of the TREC spam filters that ranked best (Goodman & Yih 2006;
//! Cormack, TREC 2007 Spam Track Overview). They need no parsing at all, so they read
//! headers, MIME structure, encodings and obfuscations alike, and cost O(max_bytes).
//!
//! A gram's feature key is its bytes read as Latin-1, as UTF-8 (a byte below 0x80 is itself,
//! a byte above is two): the key of the Python `str` `gram.decode("latin-1")`, so a
//! mapping {gram: 1} made in Python is the same feature as the gram read here.

use crate::vocab::crc32_update;

/// The most buckets `ByteNgrams::for_each_distinct_bucket` tracks with a bitmap.
pub const DISTINCT_BITMAP_BUCKETS: u32 = 1 << 20;

/// The settings of a byte n-gram reader.
#[derive(Clone, Debug, PartialEq)]
pub struct ByteNgrams {
    pub n: usize,
    pub max_bytes: usize,
    /// Written before every gram's key (to keep grams apart from other features of a document).
    pub prefix: Vec<u8>,
}

impl ByteNgrams {
    /// Call `emit` with the key of every gram of `raw`, in order (repeats included).
    pub fn for_each(&self, raw: &[u8], scratch: &mut Vec<u8>, mut emit: impl FnMut(&[u8])) {
        if self.prefix.is_empty() {
            return self.for_each_window(raw, emit);
        }
        self.for_each_window(raw, |window| {
            scratch.clear();
            scratch.extend_from_slice(&self.prefix);
            scratch.extend_from_slice(window);
            emit(scratch);
        });
    }

    /// Call `emit` with the bucket of every gram's key (`vocab::bucket`, the CRC-32 of the
    /// key modulo `n_buckets`, continued from the prefix's CRC state, so the prefix is
    /// hashed once a message rather than once a gram).
    pub fn for_each_bucket(&self, raw: &[u8], n_buckets: u32, mut emit: impl FnMut(u32)) {
        let after_prefix = crc32_update(!0, &self.prefix);
        let mask = n_buckets.is_power_of_two().then(|| n_buckets - 1);
        self.for_each_window(raw, |window| {
            let crc = !crc32_update(after_prefix, window);
            emit(match mask {
                Some(mask) => crc & mask,
                None => crc % n_buckets,
            });
        });
    }

    /// `for_each_bucket`, each bucket once, at its first appearance (binary features): a bit
    /// per bucket says which were seen, a bit test where counting would probe a table. For
    /// at most `DISTINCT_BITMAP_BUCKETS` buckets (a bitmap of 128 KiB at most, zeroed once
    /// a message).
    pub fn for_each_distinct_bucket(&self, raw: &[u8], n_buckets: u32, mut emit: impl FnMut(u32)) {
        assert!(n_buckets <= DISTINCT_BITMAP_BUCKETS, "a bitmap of at most 2^20 buckets");
        let mut seen = vec![0u64; (n_buckets as usize).div_ceil(64)];
        self.for_each_bucket(raw, n_buckets, |id| {
            let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                emit(id);
            }
        });
    }

    /// Every window of n characters of the head, as UTF-8 bytes (no prefix). An ASCII head
    /// is its own UTF-8; any other is transcoded once, and the windows are cut from it.
    fn for_each_window(&self, raw: &[u8], mut emit: impl FnMut(&[u8])) {
        let head = &raw[..raw.len().min(self.max_bytes)];
        let n = self.n;
        if n == 0 || head.len() < n {
            return;
        }
        if head.is_ascii() {
            head.windows(n).for_each(emit);
            return;
        }
        let mut text = Vec::with_capacity(2 * head.len());
        let mut starts = Vec::with_capacity(head.len() + 1);
        for &b in head {
            starts.push(text.len());
            if b < 0x80 {
                text.push(b);
            } else {
                text.extend_from_slice(&[0xC0 | (b >> 6), 0x80 | (b & 0x3F)]);
            }
        }
        starts.push(text.len());
        for i in 0..=head.len() - n {
            emit(&text[starts[i]..starts[i + n]]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams(settings: &ByteNgrams, raw: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        settings.for_each(raw, &mut Vec::new(), |g| out.push(g.to_vec()));
        out
    }

    #[test]
    fn distinct_buckets_are_the_buckets_counted_once_in_first_appearance_order() {
        let mut x: u64 = 0xdead_beef;
        for n_buckets in [
            1u32,
            2,
            63,
            64,
            65,
            1000,
            4096,
            DISTINCT_BITMAP_BUCKETS - 1,
            DISTINCT_BITMAP_BUCKETS,
        ] {
            for n in [1usize, 2, 3, 5] {
                for len in [0usize, 1, 2, 10, 300, 5000] {
                    let raw: Vec<u8> = (0..len)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            if x.is_multiple_of(5) {
                                (x >> 8) as u8 // some bytes above 0x7F: the transcoded path
                            } else {
                                b'a' + (x % 4) as u8
                            }
                        })
                        .collect();
                    let settings = ByteNgrams {
                        n,
                        max_bytes: 4000,
                        prefix: b"g:".to_vec(),
                    };
                    let mut counted = crate::doc::IdCounts::with_capacity(len);
                    settings.for_each_bucket(&raw, n_buckets, |id| counted.add(id, 1.0));
                    let mut distinct = Vec::new();
                    settings.for_each_distinct_bucket(&raw, n_buckets, |id| distinct.push(id));
                    assert_eq!(distinct, counted.ids, "{n_buckets} buckets, n = {n}, {len} bytes");
                }
            }
        }
    }

    #[test]
    fn windows_of_the_head_only() {
        let s = ByteNgrams {
            n: 3,
            max_bytes: 5,
            prefix: Vec::new(),
        };
        assert_eq!(
            grams(&s, b"abcdefg"),
            vec![b"abc".to_vec(), b"bcd".to_vec(), b"cde".to_vec()]
        );
        assert!(grams(&s, b"ab").is_empty());
        assert!(grams(&ByteNgrams { n: 0, ..s.clone() }, b"abcdef").is_empty());
    }

    #[test]
    fn keys_are_latin1_as_utf8_after_the_prefix() {
        let s = ByteNgrams {
            n: 2,
            max_bytes: 100,
            prefix: b"b:".to_vec(),
        };
        let keys = grams(&s, &[b'a', 0xE9, 0xFF]);
        assert_eq!(keys[0], "b:a\u{e9}".as_bytes());
        assert_eq!(keys[1], "b:\u{e9}\u{ff}".as_bytes());
    }

    #[test]
    fn buckets_are_the_buckets_of_the_keys() {
        for prefix in [&b""[..], b"b:"] {
            let s = ByteNgrams {
                n: 4,
                max_bytes: 64,
                prefix: prefix.to_vec(),
            };
            let raw = b"Subject: caf\xe9 \xff\x80 and more text than sixty-four bytes, to be cut at the limit";
            for n_buckets in [1 << 20, 1_000_003] {
                let mut buckets = Vec::new();
                s.for_each_bucket(raw, n_buckets, |b| buckets.push(b));
                let keyed: Vec<u32> = grams(&s, raw)
                    .iter()
                    .map(|k| crate::vocab::bucket(k, n_buckets))
                    .collect();
                assert_eq!(buckets, keyed);
                assert_eq!(buckets.len(), 61);
            }
        }
    }
}
