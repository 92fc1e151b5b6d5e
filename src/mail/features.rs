//! The email tokenizer: a raw message -> features named after where they came from.
//!
//! In the order they are counted (so a Bag lists them as Python's dict did):
//! - body words, unprefixed, by the body tokenizer settings (`tokenize::Options`);
//! - `subject:<feature>` for the Subject's features by the same settings;
//! - for each header in order, unless ignored: `header:<name>` the first time the name is
//!   seen, `<name>:<domain suffix>` for the address domains of the address headers (at most
//!   16 domains a header), `<name>:<word>` for the first 16 words of the word headers;
//! - `from-address:<local part@domain>` for the first address of the first From header, when
//!   `sender_address` is set (off by default): the sender itself, so that a model learns a
//!   correspondent's reputation from the stream (the domain suffixes above are shared by
//!   everyone at a domain);
//! - `url:<domain suffix>` for every link target and URL in the text (IPv4: the address
//!   and `url:ip`);
//! - `content-type:`, `charset:`, `encoding:` and `attachment:` for every MIME part, and
//!   `mime:<defect>` for every defect (limits reached included, e.g. `mime:truncated`).
//!
//! Binary settings make every feature 1.

use super::message::{self, Parsed};
use super::mime::Limits;
use super::url;
use crate::bag::{same_bytes, Bag};
use crate::tokenize::{is_word_char, python_lower, Options};
use std::hash::BuildHasher;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Words kept per header value (bounds the features of absurdly long header lines).
const MAX_HEADER_WORDS: usize = 16;

/// The email tokenizer's settings (`streamnb.features.email.EmailTokenizer`'s parameters).
#[derive(Clone, Debug)]
pub struct EmailFeatures {
    /// Body (and subject) tokenizer settings.
    pub words: Options,
    /// Every feature 1 (the body settings' `binary`).
    pub binary: bool,
    pub subject: bool,
    /// Lowercase header names.
    pub address_headers: Vec<String>,
    pub word_headers: Vec<String>,
    pub header_names: bool,
    /// `from-address:<address>` for the sender's address.
    pub sender_address: bool,
    /// Lowercase names; a trailing "*" matches a prefix.
    pub ignored_headers: Vec<String>,
    pub urls: bool,
    pub mime: bool,
    /// Bytes of the raw message read (None: all).
    pub max_bytes: Option<usize>,
    pub limits: Limits,
}

/// Only the first 2 MB of a message are read: enough for any real text part, and it bounds
/// time and memory on huge attachments or hostile input (a cut message has `mime:toolarge`).
pub const DEFAULT_MAX_BYTES: usize = 2_000_000;

/// Headers whose address domains become `<header>:<domain suffix>`. Sender domains are strong
/// evidence (forged, free-mail, or a known correspondent); recipient domains tell a list
/// message from a harvested-address blast.
pub const DEFAULT_ADDRESS_HEADERS: [&str; 5] = ["from", "to", "cc", "reply-to", "sender"];

/// Headers whose value words become `<header>:<word>`: the sending software and the priority
/// flags bulk mailers like to set. In the SpamAssassin corpus X-Mailer is on 38% of ham and
/// 45% of spam, X-Priority/X-MSMail-Priority on ~11% of ham and ~25% of spam, while
/// User-Agent and Organization are almost only in ham, and Precedence ("list"/"bulk") in 75%
/// of ham and 18% of spam.
pub const DEFAULT_WORD_HEADERS: [&str; 8] = [
    "x-mailer",
    "user-agent",
    "x-priority",
    "x-msmail-priority",
    "importance",
    "precedence",
    "organization",
    "x-mimeole",
];

/// Headers that produce no features: they are added on the receiving side (trace, delivery,
/// mailbox and scanner headers), so they describe how and where a message was collected
/// rather than what the sender sent. In the SpamAssassin corpus they differ between the ham
/// and spam folders for archival reasons (e.g. X-Keywords on 31% of spam and 1% of ham,
/// Delivery-Date on 28% vs 4%, X-MailScanner on 9% of ham only), so a model using them would
/// learn the corpus, not spam. A trailing "*" matches a prefix. X-Authentication-Warning and
/// X-MIME-Autoconverted are notes written by the relays a message passes through, the
/// collecting host among them (143 corpus messages were converted "by dogma.slashnull.org",
/// the collector's own relay), so they are trace headers like Received. Dropping them is a
/// matter of principle, not of score: on the Date-ordered stream (binary multinomial, alpha
/// 0.01) the (1-AUC)% went from 0.4718 to 0.4714 and no prediction changed at the default
/// decision.
pub const DEFAULT_IGNORED_HEADERS: [&str; 18] = [
    "received",
    "return-path",
    "delivered-to",
    "delivery-date",
    "envelope-to",
    "x-original-to",
    "x-envelope-*",
    "status",
    "x-status",
    "x-keywords",
    "x-uid",
    "content-length",
    "lines",
    "x-spam-*",
    "x-mailscanner*",
    "x-virus-*",
    "x-authentication-warning",
    "x-mime-autoconverted",
];

impl Default for EmailFeatures {
    fn default() -> Self {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        EmailFeatures {
            words: Options {
                lowercase: true,
                ngram_range: Some((1, 1)),
                max_chars: Some(1_000_000),
                ..Options::default()
            },
            binary: false,
            subject: true,
            address_headers: names(&DEFAULT_ADDRESS_HEADERS),
            word_headers: names(&DEFAULT_WORD_HEADERS),
            header_names: true,
            sender_address: false,
            ignored_headers: names(&DEFAULT_IGNORED_HEADERS),
            urls: true,
            mime: true,
            max_bytes: Some(DEFAULT_MAX_BYTES),
            limits: Limits::default(),
        }
    }
}

/// The part of a message a feature came from: what `EmailWeights` gives a mass each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Body,
    Subject,
    Url,
    Address,
    Header,
    Mime,
    Sender,
    Other,
}

impl Field {
    pub const COUNT: usize = 8;
    pub const ALL: [Field; Field::COUNT] = [
        Field::Body,
        Field::Subject,
        Field::Url,
        Field::Address,
        Field::Header,
        Field::Mime,
        Field::Sender,
        Field::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Field::Body => "body",
            Field::Subject => "subject",
            Field::Url => "url",
            Field::Address => "address",
            Field::Header => "header",
            Field::Mime => "mime",
            Field::Sender => "sender",
            Field::Other => "other",
        }
    }

    pub fn from_name(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Reusable buffers of one count.
#[derive(Default)]
struct Scratch {
    feature: Vec<u8>,
    name: Vec<u8>,
}

impl EmailFeatures {
    fn ignored(&self, name: &str) -> bool {
        self.ignored_headers
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => same_bytes(pattern.as_bytes(), name.as_bytes()),
            })
    }

    /// The field of a feature, by the prefix before its first ':' (none: a body word):
    /// `subject:`, `url:`, `header:` name their field; an address header's name gives
    /// `Address`; `content-type:`, `charset:`, `encoding:`, `attachment:`, `mime:` give
    /// `Mime`; `from-address:` gives `Sender` when `sender_address` is set; anything else
    /// (the word headers) `Other`.
    pub fn field(&self, feature: &[u8]) -> Field {
        let Some(colon) = feature.iter().position(|&b| b == b':') else {
            return Field::Body;
        };
        let prefix = &feature[..colon];
        match prefix {
            b"subject" => Field::Subject,
            b"url" => Field::Url,
            b"header" => Field::Header,
            _ if self.address_headers.iter().any(|h| h.as_bytes() == prefix) => Field::Address,
            b"content-type" | b"charset" | b"encoding" | b"attachment" | b"mime" => Field::Mime,
            b"from-address" if self.sender_address => Field::Sender,
            _ => Field::Other,
        }
    }

    /// Read a raw message (never fails; see `message::parse`).
    pub fn parse<'a>(&self, raw: &'a [u8]) -> Parsed<'a> {
        message::parse(raw, self.max_bytes, self.limits)
    }

    /// Fill `bag` (cleared first) with the features of the raw message `raw` and their
    /// counts, in first-appearance order, each hashed with `hasher`. Never panics: a bug in
    /// reading or counting gives the features of the input read as plain text, and if even
    /// that fails, the one feature `mime:unparsed`.
    pub fn count_into<H: BuildHasher>(&self, raw: &[u8], bag: &mut Bag, hasher: &H) {
        bag.clear();
        // About one distinct feature per 32 bytes of mail (a few hundred a message): room
        // made once rather than grown step by step.
        let room = (raw.len() / 32 + 64).min(1 << 11);
        bag.reserve(room, 12 * room);
        let counted = catch_unwind(AssertUnwindSafe(|| {
            let parsed = self.parse(raw);
            self.count_parsed(&parsed, bag, hasher);
        }));
        if counted.is_ok() {
            return;
        }
        bag.clear();
        let cut = &raw[..self.max_bytes.map_or(raw.len(), |m| m.min(raw.len()))];
        let fallback = catch_unwind(AssertUnwindSafe(|| {
            self.count_parsed(&message::unparsed(cut), bag, hasher)
        }));
        if fallback.is_err() {
            bag.clear();
            bag.add(b"mime:unparsed", hasher.hash_one(&b"mime:unparsed"[..]), 1.0);
        }
    }

    /// The features of a parsed message added to `bag`.
    pub fn count_parsed<H: BuildHasher>(&self, parsed: &Parsed<'_>, bag: &mut Bag, hasher: &H) {
        let mut scratch = Scratch::default();
        #[inline(always)]
        fn add<H: BuildHasher>(feature: &[u8], bag: &mut Bag, hasher: &H) {
            bag.add(feature, hasher.hash_one(feature), 1.0)
        }
        // A body word's hash and count inlined into the word scan: out of line (LLVM saw
        // two calls in for_each_feature), their call cost a fifth of them.
        self.words.each_feature(
            &parsed.body,
            &mut scratch.feature,
            #[inline(always)]
            |f| add(f, bag, hasher),
        );
        if self.subject {
            let subject = parsed.subject();
            if !subject.is_empty() {
                let prefixed = &mut scratch.name;
                self.words.each_feature(&subject, &mut scratch.feature, |f| {
                    prefixed.clear();
                    prefixed.extend_from_slice(b"subject:");
                    prefixed.extend_from_slice(f);
                    add(prefixed, bag, hasher);
                });
            }
        }
        self.count_extras(parsed, &mut scratch, &mut |f: &[u8]| add(f, bag, hasher));
        if self.binary {
            bag.binarize();
        }
    }

    /// The header, URL and MIME features of a parsed message, in order.
    fn count_extras(&self, parsed: &Parsed<'_>, scratch: &mut Scratch, emit: &mut dyn FnMut(&[u8])) {
        let mut seen: Vec<&str> = Vec::with_capacity(parsed.headers.len());
        let mut sender_done = !self.sender_address;
        let mut lower = String::new();
        let feature = &mut scratch.feature;
        let mut prefixed = |prefix: &str, rest: &str, emit: &mut dyn FnMut(&[u8])| {
            feature.clear();
            feature.extend_from_slice(prefix.as_bytes());
            feature.push(b':');
            feature.extend_from_slice(rest.as_bytes());
            emit(feature);
        };
        for header in &parsed.headers {
            let name: &str = &header.name;
            if self.ignored(name) {
                continue;
            }
            // Header names are compared with same_bytes: short, they cost a memcmp call each
            // with ==, and every header of a message is checked against a few lists.
            if self.header_names && !seen.iter().any(|s| same_bytes(s.as_bytes(), name.as_bytes())) {
                seen.push(name);
                prefixed("header", name, emit);
            }
            let sender = !sender_done && name == "from";
            let address = self
                .address_headers
                .iter()
                .any(|h| same_bytes(h.as_bytes(), name.as_bytes()));
            let wordy = self
                .word_headers
                .iter()
                .any(|h| same_bytes(h.as_bytes(), name.as_bytes()));
            if !address && !wordy && !sender {
                continue;
            }
            let value = header.value();
            if sender {
                sender_done = true;
                if let Some(found) = first_address(&value) {
                    lower.clear();
                    python_lower(found, &mut lower);
                    prefixed("from-address", &lower, emit);
                }
            }
            if address {
                for domain in address_domains(&value).take(MAX_HEADER_WORDS) {
                    lower.clear();
                    python_lower(domain.trim_matches('.'), &mut lower);
                    if !lower.is_empty() {
                        url::suffixes(&lower, |suffix| prefixed(name, suffix, emit));
                    }
                }
            }
            if wordy {
                lower.clear();
                python_lower(&value, &mut lower);
                for word in lower
                    .split(|c: char| !is_word_char(c))
                    .filter(|w| !w.is_empty())
                    .take(MAX_HEADER_WORDS)
                {
                    prefixed(name, word, emit);
                }
            }
        }
        if self.urls {
            let mut host = String::new();
            // "url:" written once for all the message's links, each suffix after it (there
            // are a few per link, often dozens of links).
            let named = &mut scratch.name;
            named.clear();
            named.extend_from_slice(b"url:");
            for link in parsed.urls.iter() {
                if url::host_into(link, &mut host) {
                    url::suffixes(&host, |suffix| {
                        named.truncate(4);
                        named.extend_from_slice(suffix.as_bytes());
                        emit(named);
                    });
                }
            }
        }
        if self.mime {
            for part in &parsed.parts {
                prefixed("content-type", &part.content_type, emit);
                if let Some(charset) = &part.charset {
                    prefixed("charset", charset, emit);
                }
                if let Some(encoding) = &part.transfer_encoding {
                    prefixed("encoding", encoding, emit);
                }
                if part.attachment {
                    prefixed("attachment", &part.content_type, emit);
                }
            }
            for defect in &parsed.defects {
                lower.clear();
                python_lower(defect, &mut lower);
                prefixed("mime", &lower, emit);
            }
        }
    }

    /// The header, URL and MIME features alone, in order (for callers that tokenize the
    /// body and subject themselves).
    pub fn extras<H: BuildHasher>(&self, parsed: &Parsed<'_>, bag: &mut Bag, hasher: &H) {
        let mut scratch = Scratch::default();
        self.count_extras(parsed, &mut scratch, &mut |f: &[u8]| {
            bag.add(f, hasher.hash_one(f), 1.0)
        });
    }
}

/// The first address `local@domain` of a header value: the word characters and `.+=-'`
/// before the first `@` that has a domain after it, and that domain (as `address_domains`
/// reads it). None when there is no such address.
fn first_address(value: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(found) = value[from..].find('@') {
        let at = from + found;
        let local_ok = |c: char| is_word_char(c) || matches!(c, '.' | '+' | '=' | '-' | '\'');
        let start = value[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| local_ok(c))
            .last()
            .map_or(at, |(i, _)| i);
        let domain = address_domains(&value[at..]).next();
        if let Some(domain) = domain {
            // address_domains skips spaces after the "@": the domain must follow it directly.
            let begins = at + 1;
            if start < at && value[begins..].starts_with(domain) {
                let local = value[start..at].trim_start_matches('.');
                if !local.is_empty() {
                    let start = at - local.len();
                    return Some(&value[start..begins + domain.len()]);
                }
            }
        }
        from = at + 1;
    }
    None
}

/// Domains of the addresses in a header value: `@\s*([\w-]+(?:\.[\w-]+)*)` (a display name
/// holding an address gives its domain too, which is what the reader sees anyway).
fn address_domains(value: &str) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || {
        while let Some(found) = value[at..].find('@') {
            let mut start = at + found + 1;
            while let Some(c) = value[start..].chars().next() {
                if !crate::tokenize::is_space(c) {
                    break;
                }
                start += c.len_utf8();
            }
            // [\w-]+ labels joined by single dots.
            let mut end = start;
            let mut label = 0usize;
            let mut last_good = start;
            for c in value[start..].chars() {
                if c == '-' || is_word_char(c) {
                    label += 1;
                    end += c.len_utf8();
                    last_good = end;
                } else if c == '.' && label > 0 {
                    label = 0;
                    end += 1;
                } else {
                    break;
                }
            }
            at = at + found + 1;
            if last_good > start {
                at = last_good;
                return Some(&value[start..last_good]);
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_by_prefix() {
        let plain = EmailFeatures::default();
        let cases: [(&[u8], Field); 10] = [
            (b"free", Field::Body),
            (b"subject:free", Field::Subject),
            (b"url:example.com", Field::Url),
            (b"header:x-mailer", Field::Header),
            (b"from:example.com", Field::Address),
            (b"charset:utf-8", Field::Mime),
            (b"mime:truncated", Field::Mime),
            (b"x-mailer:mutt", Field::Other),
            (b"from-address:a@b.c", Field::Other),
            (b"subject:a:b", Field::Subject),
        ];
        for (feature, field) in cases {
            assert_eq!(plain.field(feature), field, "{}", String::from_utf8_lossy(feature));
        }
        let sender = EmailFeatures {
            sender_address: true,
            ..EmailFeatures::default()
        };
        assert_eq!(sender.field(b"from-address:a@b.c"), Field::Sender);
        assert!(Field::ALL.iter().all(|&f| Field::from_name(f.name()) == Some(f)));
    }

    fn features(settings: &EmailFeatures, raw: &[u8]) -> Vec<(String, f64)> {
        let mut bag = Bag::default();
        settings.count_into(raw, &mut bag, &foldhash::fast::FixedState::with_seed(1));
        (0..bag.len())
            .map(|i| (String::from_utf8(bag.feature(i).to_vec()).unwrap(), bag.count(i)))
            .collect()
    }

    #[test]
    fn features_in_pythons_order() {
        let raw = b"From: \"A\" <a@Mail.Example.com>\nSubject: Hi hi\nX-Mailer: Mutt 1.5\nReceived: x\nContent-Type: text/html\n\n<a href='http://w.example.org/x'>Hi there</a>\n";
        let got = features(&EmailFeatures::default(), raw);
        let names: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            names,
            [
                "hi",
                "there",
                "subject:hi",
                "header:from",
                "from:mail.example.com",
                "from:example.com",
                "from:com",
                "header:subject",
                "header:x-mailer",
                "x-mailer:mutt",
                "x-mailer:1",
                "x-mailer:5",
                "header:content-type",
                "url:w.example.org",
                "url:example.org",
                "url:org",
                "content-type:text/html",
            ]
        );
        assert_eq!(got[2].1, 2.0);
    }

    /// A hasher that panics on one feature: stands in for a bug anywhere in the reading.
    struct PanicOn(&'static [u8]);
    struct Hashing(&'static [u8], Vec<u8>);

    impl BuildHasher for PanicOn {
        type Hasher = Hashing;
        fn build_hasher(&self) -> Hashing {
            Hashing(self.0, Vec::new())
        }
    }

    impl std::hash::Hasher for Hashing {
        fn write(&mut self, bytes: &[u8]) {
            self.1.extend_from_slice(bytes);
        }
        fn finish(&self) -> u64 {
            // Vec<u8>/[u8] hashing writes a length prefix first: compare the tail.
            assert!(!self.1.ends_with(self.0), "deliberate panic");
            self.1.len() as u64
        }
    }

    #[test]
    fn a_panic_gives_a_best_effort_result() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let raw = b"Subject: boom\n\nhello\n";
        let mut bag = Bag::default();
        EmailFeatures::default().count_into(raw, &mut bag, &PanicOn(b"subject:boom"));
        let mut names: Vec<&[u8]> = (0..bag.len()).map(|i| bag.feature(i)).collect();
        names.sort();
        assert_eq!(names, [&b"boom"[..], b"hello", b"mime:unparsed", b"subject"]);
        EmailFeatures::default().count_into(raw, &mut bag, &PanicOn(b"hello"));
        std::panic::set_hook(hook);
        assert_eq!(
            (0..bag.len()).map(|i| bag.feature(i)).collect::<Vec<_>>(),
            [&b"mime:unparsed"[..]]
        );
    }

    #[test]
    fn sender_address_only_when_asked() {
        let raw = b"From: \"Jo\" <Jo.Doe+x@Mail.Example.com>\nFrom: other@example.org\nSubject: hi\n\nbody\n";
        let plain = features(&EmailFeatures::default(), raw);
        assert!(plain.iter().all(|(f, _)| !f.starts_with("from-address:")));
        let with = features(
            &EmailFeatures {
                sender_address: true,
                ..EmailFeatures::default()
            },
            raw,
        );
        let senders: Vec<&str> = with
            .iter()
            .map(|(f, _)| f.as_str())
            .filter(|f| f.starts_with("from-address:"))
            .collect();
        assert_eq!(senders, ["from-address:jo.doe+x@mail.example.com"]);
        let others: Vec<_> = with
            .iter()
            .filter(|(f, _)| !f.starts_with("from-address:"))
            .cloned()
            .collect();
        assert_eq!(others, plain);
    }

    #[test]
    fn first_address_of_a_header() {
        assert_eq!(first_address("\"A\" <a.b@c.d>"), Some("a.b@c.d"));
        assert_eq!(first_address("x@ y.z, a@b.c"), Some("a@b.c"));
        assert_eq!(first_address("@b.c d@"), None);
        assert_eq!(first_address("..@b.c"), None);
        assert_eq!(
            first_address("Fool@motleyfool.com (The Fool)"),
            Some("Fool@motleyfool.com")
        );
        assert_eq!(first_address("no address"), None);
    }

    #[test]
    fn address_domains_as_the_regex() {
        let found: Vec<&str> = address_domains("a@b.c, d@ e-f.g. x@.y @@z.w").collect();
        assert_eq!(found, ["b.c", "e-f.g", "z.w"]);
    }
}
