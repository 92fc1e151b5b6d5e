//! A raw message read as text: headers, the readable body, link targets, MIME parts and
//! defects (what streamnb's `ParsedMessage` holds).
//!
//! The body is the text/* parts (text attachments too: mail readers show them inline),
//! joined by "\n"; of a multipart/alternative only the last text or multipart alternative
//! is read (RFC 2046 orders them by increasing preference, so it is the one shown). HTML
//! (and text/plain that starts like HTML) is reduced to its visible text, its link targets
//! kept; URLs written in the text are collected too.

use super::header::{self, content_type, decode_text, fix_8bit, mime_params};
use super::mime::{self, Body, Limits, Tree};
use super::transfer::{a2b_qp, decode_base64_body};
use super::{charset, html};
use crate::bag::same_bytes;
use crate::tokenize::{py_strip, python_lower};
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A header of the message: lowercase name, raw or decoded value.
#[derive(Clone, Debug)]
pub struct Header<'a> {
    pub name: Cow<'static, str>,
    pub value: HeaderValue<'a>,
}

#[derive(Clone, Debug)]
pub enum HeaderValue<'a> {
    Raw(&'a [u8]),
    Decoded(String),
}

impl Header<'_> {
    /// The decoded value (see `header`), decoded on demand: most headers are never read.
    pub fn value(&self) -> Cow<'_, str> {
        match &self.value {
            HeaderValue::Raw(raw) => Cow::Owned(header::decode_value(raw)),
            HeaderValue::Decoded(text) => Cow::Borrowed(text),
        }
    }
}

/// One MIME part: its type and how it was encoded (containers carry only their type).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MimePart {
    pub content_type: String,
    pub charset: Option<String>,
    pub transfer_encoding: Option<String>,
    pub attachment: bool,
    pub filename: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Parsed<'a> {
    pub headers: Vec<Header<'a>>,
    pub body: String,
    pub urls: html::Urls,
    pub parts: Vec<MimePart>,
    /// The parser's complaints (the email package's defect names), then the limits reached
    /// ("TooLarge", "TooManyParts" ...) and "Truncated" if any was.
    pub defects: Vec<Cow<'static, str>>,
}

impl Parsed<'_> {
    /// The first Subject, decoded ("" if none).
    pub fn subject(&self) -> Cow<'_, str> {
        self.headers
            .iter()
            .find(|h| h.name == "subject")
            .map_or(Cow::Borrowed(""), Header::value)
    }
}

/// Read `raw` (its first `max_bytes` bytes); never fails and never panics: a bug in the
/// reading gives the whole input as the body and the defect "unparsed".
pub fn parse(raw: &[u8], max_bytes: Option<usize>, limits: Limits) -> Parsed<'_> {
    let mut data = raw;
    let mut cut = false;
    if let Some(max) = max_bytes {
        if data.len() > max {
            data = &data[..max];
            cut = true;
        }
    }
    if data.iter().all(|b| b.is_ascii_whitespace() || *b == 0x0b) {
        return Parsed::default();
    }
    let read = catch_unwind(AssertUnwindSafe(|| read(data, limits, cut)));
    read.unwrap_or_else(|_| unparsed(data))
}

/// The fallback: the input as undeclared text.
pub fn unparsed(data: &[u8]) -> Parsed<'_> {
    let mut body = String::with_capacity(data.len());
    charset::decode_undeclared(data, &mut body);
    let mut urls = html::Urls::default();
    html::text_urls(&body, &mut urls);
    Parsed {
        body,
        urls,
        defects: vec![Cow::Borrowed("unparsed")],
        ..Parsed::default()
    }
}

fn read(data: &[u8], limits: Limits, cut: bool) -> Parsed<'_> {
    let tree = mime::parse(data, limits);
    let headers = tree.parts[0]
        .headers
        .iter()
        .map(|h| Header {
            name: header_name(&data[h.name.0..h.name.1]),
            value: HeaderValue::Raw(&data[h.value.0..h.value.1]),
        })
        .collect();
    let mut walk = Walk {
        data,
        tree: &tree,
        out: Parsed {
            headers,
            ..Parsed::default()
        },
        limits,
        texts: 0,
        full: false,
    };
    walk.part(0);
    let mut reached: Vec<&'static str> = Vec::new();
    if cut {
        reached.push("TooLarge");
    }
    reached.extend(tree.limits.iter().copied());
    if walk.full {
        reached.push("DecodedTooLarge");
    }
    let mut out = walk.out;
    if !reached.is_empty() {
        for what in reached {
            if !out.defects.iter().any(|d| d == what) {
                out.defects.push(Cow::Borrowed(what));
            }
        }
        out.defects.push(Cow::Borrowed("Truncated"));
    }
    out
}

/// Common header names, lowercase, sorted by length then bytes (a lookup compares bytes
/// only among names of the right length): most headers of a message are one of these, and
/// need no String of their own.
static COMMON_NAMES: &[&str] = &[
    "cc",
    "to",
    "bcc",
    "date",
    "from",
    "lines",
    "x-uid",
    "x-url",
    "sender",
    "status",
    "x-face",
    "x-loop",
    "list-id",
    "subject",
    "comments",
    "keywords",
    "received",
    "reply-to",
    "x-mailer",
    "x-sender",
    "x-status",
    "errors-to",
    "list-help",
    "list-post",
    "resent-to",
    "x-mimeole",
    "content-id",
    "importance",
    "list-owner",
    "message-id",
    "precedence",
    "references",
    "user-agent",
    "x-keywords",
    "x-priority",
    "envelope-to",
    "in-reply-to",
    "resent-date",
    "resent-from",
    "return-path",
    "x-beenthere",
    "content-type",
    "delivered-to",
    "list-archive",
    "mailing-list",
    "mime-version",
    "organization",
    "thread-index",
    "thread-topic",
    "x-spam-level",
    "content-class",
    "delivery-date",
    "x-envelope-to",
    "x-original-to",
    "x-spam-status",
    "content-length",
    "list-subscribe",
    "x-mailing-list",
    "x-apparently-to",
    "x-complaints-to",
    "x-envelope-from",
    "x-ms-has-attach",
    "x-virus-scanned",
    "content-language",
    "list-unsubscribe",
    "mail-followup-to",
    "x-originating-ip",
    "resent-message-id",
    "x-accept-language",
    "x-mailman-version",
    "x-msmail-priority",
    "content-description",
    "content-disposition",
    "x-mime-autoconverted",
    "x-ms-tnef-correlator",
    "x-originalarrivaltime",
    "x-spam-checker-version",
    "x-authentication-warning",
    "content-transfer-encoding",
    "disposition-notification-to",
];

/// Longest name of `COMMON_NAMES` that `header_name` looks up.
const LONGEST_COMMON: usize = 32;

/// `COMMON_NAMES[BY_LENGTH[n]..BY_LENGTH[n + 1]]` are the names of n bytes.
static BY_LENGTH: [usize; LONGEST_COMMON + 2] = {
    let mut starts = [0; LONGEST_COMMON + 2];
    let mut n = 0;
    while n < starts.len() {
        let mut i = 0;
        while i < COMMON_NAMES.len() && COMMON_NAMES[i].len() < n {
            i += 1;
        }
        starts[n] = i;
        n += 1;
    }
    starts
};

/// The lowercase name of a header (`String::from_utf8_lossy(raw).to_ascii_lowercase()`).
fn header_name(raw: &[u8]) -> Cow<'static, str> {
    let n = raw.len();
    if n <= LONGEST_COMMON {
        let mut lower = [0u8; LONGEST_COMMON];
        let lower = &mut lower[..n];
        lower.copy_from_slice(raw);
        lower.make_ascii_lowercase();
        // The few names of this length (at most 9), compared inline: a binary search over
        // all of them cost more than the comparisons.
        let same_length = &COMMON_NAMES[BY_LENGTH[n]..BY_LENGTH[n + 1]];
        if let Some(name) = same_length.iter().find(|name| same_bytes(name.as_bytes(), lower)) {
            return Cow::Borrowed(name);
        }
    }
    Cow::Owned(String::from_utf8_lossy(raw).to_ascii_lowercase())
}

struct Walk<'a, 't> {
    data: &'a [u8],
    tree: &'t Tree,
    out: Parsed<'a>,
    limits: Limits,
    /// Text parts read so far (the body joins them with "\n").
    texts: usize,
    full: bool,
}

impl<'a> Walk<'a, '_> {
    fn first(&self, index: usize, name: &str) -> Option<&'a [u8]> {
        let data = self.data;
        self.tree.parts[index]
            .headers
            .iter()
            .find(|h| data[h.name.0..h.name.1].eq_ignore_ascii_case(name.as_bytes()))
            .map(|h| &data[h.value.0..h.value.1])
    }

    fn part(&mut self, index: usize) {
        let part = &self.tree.parts[index];
        self.out.defects.extend(part.defects.iter().map(|&d| Cow::Borrowed(d)));
        let declared_type = self.first(index, "content-type").map(fix_8bit);
        let mime_type = match &declared_type {
            Some(value) => content_type(value),
            None => part.content_type.clone(),
        };
        if let Body::Children(children) = &part.body {
            self.out.parts.push(MimePart {
                content_type: mime_type.clone(),
                ..MimePart::default()
            });
            if part.too_deep {
                self.out.defects.push(Cow::Borrowed("TooDeeplyNested"));
                return;
            }
            let chosen: &[usize] = if mime_type == "multipart/alternative" {
                let preferred = children
                    .iter()
                    .rposition(|&c| matches!(self.tree.parts[c].maintype(), "text" | "multipart"));
                match preferred {
                    Some(i) => &children[i..=i],
                    None => children,
                }
            } else {
                children
            };
            for &child in chosen {
                self.part(child);
            }
            return;
        }
        let disposition_value = self.first(index, "content-disposition").map(fix_8bit);
        let mut params = Vec::new();
        for value in [&declared_type, &disposition_value].into_iter().flatten() {
            if value.contains(';') {
                mime_params(value, &mut params);
            }
        }
        let param = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str());
        let charset = param("charset").map(|c| lower(py_strip(c))).filter(|c| !c.is_empty());
        let cte_raw = self.first(index, "content-transfer-encoding");
        let transfer_encoding = cte_raw
            .map(|raw| lower(&header::decode_value(raw)))
            .filter(|c| !c.is_empty());
        let disposition = disposition_value
            .as_ref()
            .map(|v| lower(py_strip(v.split(';').next().unwrap_or(""))));
        let filename = param("filename").or_else(|| param("name")).map(decode_text);
        let attachment = filename.is_some() || disposition.as_deref() == Some("attachment");
        let is_text = mime_type.starts_with("text/");
        self.out.parts.push(MimePart {
            content_type: mime_type.clone(),
            charset: charset.clone(),
            transfer_encoding: transfer_encoding.clone(),
            attachment,
            filename,
        });
        if !is_text {
            return;
        }
        let payload = self.tree.payload(self.data, index);
        let decoded: Cow<'_, [u8]> = if transfer_encoding.as_deref() == Some("base64") {
            let mut out = Vec::with_capacity(payload.len() / 4 * 3);
            decode_base64_body(&payload, &mut out);
            Cow::Owned(out)
        } else if cte_raw.is_some_and(|raw| lower(&String::from_utf8_lossy(raw)) == "quoted-printable") {
            let mut out = Vec::with_capacity(payload.len());
            a2b_qp(&payload, false, &mut out);
            Cow::Owned(out)
        } else {
            payload
        };
        self.text(&decoded, charset.as_deref(), &mime_type);
    }

    /// Decode one text part into the body (reduced to text if HTML), collecting URLs.
    fn text(&mut self, payload: &[u8], charset: Option<&str>, mime_type: &str) {
        if self.full {
            return;
        }
        let body = &mut self.out.body;
        if self.texts > 0 {
            body.push('\n');
        }
        self.texts += 1;
        let start = body.len();
        charset::decode_into(payload, charset, body);
        if mime_type == "text/html" || (mime_type == "text/plain" && html::looks_like_html(&body[start..])) {
            let markup = body.split_off(start);
            html::links(&markup, &mut self.out.urls);
            html::to_text(&markup, body);
        }
        let room = self.limits.max_text_bytes.saturating_sub(start);
        if body.len() - start > room {
            let mut end = start + room;
            while !body.is_char_boundary(end) {
                end -= 1;
            }
            body.truncate(end);
            self.full = true;
        }
        html::text_urls(&body[start..], &mut self.out.urls);
    }
}

fn lower(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    python_lower(text, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_lowercase_with_or_without_the_table() {
        assert!(COMMON_NAMES.windows(2).all(|w| (w[0].len(), w[0]) < (w[1].len(), w[1])));
        assert!(COMMON_NAMES
            .iter()
            .all(|n| n.len() <= LONGEST_COMMON && n.bytes().all(|b| !b.is_ascii_uppercase())));
        for n in 0..=LONGEST_COMMON {
            let names = &COMMON_NAMES[BY_LENGTH[n]..BY_LENGTH[n + 1]];
            assert_eq!(names.len(), COMMON_NAMES.iter().filter(|name| name.len() == n).count());
            assert!(names
                .iter()
                .all(|name| name.len() == n && header_name(name.as_bytes()) == *name));
        }
        for raw in [
            &b"Content-Type"[..],
            b"SUBJECT",
            b"X-Odd-Header",
            b"From",
            b"X-\xff\xfeName",
            b"",
            b"to",
        ] {
            assert_eq!(header_name(raw), String::from_utf8_lossy(raw).to_ascii_lowercase());
        }
        assert!(matches!(header_name(b"Message-ID"), Cow::Borrowed("message-id")));
        let long = [b'A'; 40];
        assert_eq!(header_name(&long), "a".repeat(40));
    }
}
