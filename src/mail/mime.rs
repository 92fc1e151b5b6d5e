//! The MIME structure of a raw message, read line by line as Python's email package reads
//! it (`email.feedparser` under `policy=compat32`), within fixed limits.
//!
//! Why not a MIME crate: mail-parser 0.11 (measured on the SpamAssassin corpus) parses at
//! ~270 MB/s (19 µs a message, most of the tokenizer's budget) decoding every part, drops
//! the lines of a header block that are not headers instead of starting the body there (a
//! message without headers parses to nothing), takes the last Content-Type of a part where
//! mail readers take the first, finds boundaries in the middle of lines, and has no limit
//! on nesting, parts or headers. The reading here is the one streamnb's features were built
//! on, so the features keep their meaning; bodies are decoded only for the text parts read.
//!
//! Lines end at "\r\n", "\r" or "\n". A header block runs to the first line that is neither
//! `Name:` (printable ASCII name), a continuation (leading space or tab) nor an mbox
//! "From " line; a blank line ends it silently, any other line starts the body (a defect).
//! A multipart part's children are separated by `--boundary` lines (optionally followed by
//! `--`, spaces and tabs); any enclosing boundary line ends an inner part. message/* parts
//! hold a message; message/delivery-status holds blocks of headers.

use super::header::{boundary, content_type, fix_8bit};
use std::borrow::Cow;

/// Bounds that hold whatever the input (see `Limits::default` for the values).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Nesting of containers (multipart and message/* parts) read; deeper ones are skipped.
    pub max_depth: usize,
    /// Parts (containers included) read; the rest of the message is skipped.
    pub max_parts: usize,
    /// Header fields kept per header block.
    pub max_headers: usize,
    /// Bytes kept of one header field's value.
    pub max_header_bytes: usize,
    /// Bytes of decoded text read from all the text parts together.
    pub max_text_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 20,
            max_parts: 1_000,
            max_headers: 1_000,
            max_header_bytes: 64 * 1024,
            max_text_bytes: 8_000_000,
        }
    }
}

pub type Span = (usize, usize);

/// One header field: its name (as written) and raw value (without the name, the colon,
/// leading spaces and tabs, and trailing line ends), as spans of the input.
#[derive(Clone, Copy, Debug)]
pub struct RawHeader {
    pub name: Span,
    pub value: Span,
}

#[derive(Debug)]
pub enum Body {
    /// The lines of a non-container part (one or two runs of the input).
    Leaf(Vec<Span>),
    /// The parts inside a multipart or message/* part.
    Children(Vec<usize>),
}

#[derive(Debug)]
pub struct Part {
    pub headers: Vec<RawHeader>,
    /// The MIME type the structure follows (Content-Type, else the default type).
    pub content_type: String,
    pub defects: Vec<&'static str>,
    pub body: Body,
    /// A container too deep to read (its content was skipped).
    pub too_deep: bool,
}

impl Part {
    pub fn maintype(&self) -> &str {
        self.content_type.split('/').next().unwrap_or("")
    }
}

/// A parsed message: its parts (the root is part 0) and message-level defects.
#[derive(Debug)]
pub struct Tree {
    pub parts: Vec<Part>,
    /// Limits reached (names of defects).
    pub limits: Vec<&'static str>,
}

enum Matcher {
    /// "--" + boundary: a line that starts with it, then optional "--", spaces/tabs, EOL.
    Boundary(Vec<u8>),
    /// An empty line (ends a block of delivery-status headers).
    Blank,
}

impl Matcher {
    fn matches(&self, line: &[u8]) -> bool {
        match self {
            Matcher::Blank => is_blank(line),
            Matcher::Boundary(separator) => boundary_match(line, separator).is_some(),
        }
    }
}

#[inline]
fn is_blank(line: &[u8]) -> bool {
    matches!(line.first(), Some(b'\r' | b'\n'))
}

/// Some(true) for a closing delimiter `--boundary--`, Some(false) for `--boundary`.
fn boundary_match(line: &[u8], separator: &[u8]) -> Option<bool> {
    let rest = line.strip_prefix(separator)?;
    let (close, rest) = match rest.strip_prefix(b"--") {
        Some(after) if only_blanks_then_eol(after) => (true, after),
        _ => (false, rest),
    };
    only_blanks_then_eol(rest).then_some(close)
}

fn only_blanks_then_eol(rest: &[u8]) -> bool {
    let trimmed = rest
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .map_or(&rest[rest.len()..], |i| &rest[i..]);
    matches!(trimmed, b"" | b"\n" | b"\r" | b"\r\n")
}

/// `^(From |[\041-\071\073-\176]*:|[\t ])`
fn is_header_line(line: &[u8]) -> bool {
    if line.starts_with(b"From ") || matches!(line.first(), Some(b' ' | b'\t')) {
        return true;
    }
    for &b in line {
        if b == b':' {
            return true;
        }
        if !(0x21..=0x7e).contains(&b) {
            return false;
        }
    }
    false
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    pending: Option<Span>,
    matchers: Vec<Matcher>,
}

impl<'a> Cursor<'a> {
    fn line_end(&self, start: usize) -> usize {
        match memchr::memchr2(b'\r', b'\n', &self.data[start..]) {
            Some(i) => {
                let at = start + i;
                if self.data[at] == b'\r' && self.data.get(at + 1) == Some(&b'\n') {
                    at + 2
                } else {
                    at + 1
                }
            }
            None => self.data.len(),
        }
    }

    fn at_false_eof(&self, line: &[u8]) -> bool {
        // Boundary lines start with "--": most lines are rejected on their first bytes.
        let candidate = line.starts_with(b"--") || is_blank(line);
        candidate && self.matchers.iter().rev().any(|m| m.matches(line))
    }

    /// The next line, None at the end of the input or at a line an enclosing part ends at.
    fn read_line(&mut self) -> Option<Span> {
        if let Some(line) = self.pending {
            if self.at_false_eof(&self.data[line.0..line.1]) {
                return None;
            }
            self.pending = None;
            return Some(line);
        }
        if self.pos >= self.data.len() {
            return None;
        }
        let end = self.line_end(self.pos);
        let line = (self.pos, end);
        if self.at_false_eof(&self.data[line.0..line.1]) {
            return None;
        }
        self.pos = end;
        Some(line)
    }

    fn unread(&mut self, line: Span) {
        if line.1 == self.pos && self.pending.is_none() {
            self.pos = line.0;
        } else {
            self.pending = Some(line);
        }
    }

    /// Every line up to the (false) end, as runs of the input.
    fn rest(&mut self) -> Vec<Span> {
        let mut runs: Vec<Span> = Vec::with_capacity(1);
        while let Some(line) = self.read_line() {
            match runs.last_mut() {
                Some(run) if run.1 == line.0 => run.1 = line.1,
                _ => runs.push(line),
            }
            if self.matchers.is_empty() && self.pending.is_none() {
                // Nothing can end the part early: the rest of the input is its body.
                let last = runs.last_mut().expect("a run was just pushed");
                last.1 = self.data.len();
                self.pos = self.data.len();
                break;
            }
        }
        runs
    }

    fn skip_rest(&mut self) {
        while self.read_line().is_some() {}
    }
}

struct Parser<'a> {
    cursor: Cursor<'a>,
    parts: Vec<Part>,
    limits: Limits,
    hit: Vec<&'static str>,
    last_created: usize,
}

fn note(hit: &mut Vec<&'static str>, what: &'static str) {
    if !hit.contains(&what) {
        hit.push(what);
    }
}

impl<'a> Parser<'a> {
    fn text(&self, span: Span) -> &'a [u8] {
        &self.cursor.data[span.0..span.1]
    }

    /// The first value of a header in a part's header list, raw.
    fn first_value(&self, headers: &[RawHeader], name: &str) -> Option<&'a [u8]> {
        headers
            .iter()
            .find(|h| self.text(h.name).eq_ignore_ascii_case(name.as_bytes()))
            .map(|h| self.text(h.value))
    }

    /// Read a header block into `part` (Python's header loop and `_parse_headers`).
    fn read_headers(&mut self, headers: &mut Vec<RawHeader>, defects: &mut Vec<&'static str>) {
        // Room for a common header block at once (a message's top block runs to 30-60
        // lines), rather than growing from 4 five times.
        let mut lines: Vec<Span> = Vec::with_capacity(64);
        while let Some(line) = self.cursor.read_line() {
            let bytes = self.text(line);
            if !is_header_line(bytes) {
                if !is_blank(bytes) {
                    defects.push("MissingHeaderBodySeparatorDefect");
                    self.cursor.unread(line);
                }
                break;
            }
            lines.push(line);
        }
        headers.reserve(lines.len().min(self.limits.max_headers)); // at most one a line
        let mut current: Option<RawHeader> = None;
        let data = self.cursor.data;
        let max_headers = self.limits.max_headers;
        let max_header_bytes = self.limits.max_header_bytes;
        let hit = &mut self.hit;
        let mut emit = |header: RawHeader, headers: &mut Vec<RawHeader>| {
            // rstrip("\r\n") of the value.
            let (start, mut end) = header.value;
            while end > start && matches!(data[end - 1], b'\r' | b'\n') {
                end -= 1;
            }
            if end - start > max_header_bytes {
                end = start + max_header_bytes;
                note(hit, "HeaderTooLong");
            }
            if headers.len() >= max_headers {
                note(hit, "TooManyHeaders");
                return;
            }
            headers.push(RawHeader {
                name: header.name,
                value: (start, end),
            });
        };
        let count = lines.len();
        for (number, &line) in lines.iter().enumerate() {
            let bytes = &data[line.0..line.1];
            if matches!(bytes[0], b' ' | b'\t') {
                match current.as_mut() {
                    Some(header) => header.value.1 = line.1,
                    None => defects.push("FirstHeaderLineIsContinuationDefect"),
                }
                continue;
            }
            if let Some(header) = current.take() {
                emit(header, headers);
            }
            if bytes.starts_with(b"From ") {
                if number == 0 {
                    continue; // the mbox envelope line
                } else if number == count - 1 {
                    // Probably the first line of the body: read it again as such.
                    self.cursor.unread(line);
                    return;
                }
                defects.push("MisplacedEnvelopeHeaderDefect");
                continue;
            }
            let colon = bytes.iter().position(|&b| b == b':').unwrap_or(0);
            if colon == 0 {
                defects.push("InvalidHeaderDefect");
                continue;
            }
            let mut value_start = line.0 + colon + 1;
            while value_start < line.1 && matches!(data[value_start], b' ' | b'\t') {
                value_start += 1;
            }
            current = Some(RawHeader {
                name: (line.0, line.0 + colon),
                value: (value_start, line.1),
            });
        }
        if let Some(header) = current.take() {
            emit(header, headers);
        }
    }

    /// Structure-level text of a header value: 8-bit bytes become U+FFFD (as the email
    /// package's str() of such a header).
    fn structural(raw: &[u8]) -> Cow<'_, str> {
        if raw.is_ascii() {
            return fix_8bit(raw);
        }
        Cow::Owned(
            raw.iter()
                .map(|&b| if b < 0x80 { b as char } else { '\u{fffd}' })
                .collect(),
        )
    }

    /// Parse one part (and what it contains) from the cursor; its index.
    fn parse_part(&mut self, depth: usize, default_type: &str) -> usize {
        let index = self.parts.len();
        self.last_created = index;
        let mut headers = Vec::new();
        let mut defects = Vec::new();
        self.read_headers(&mut headers, &mut defects);
        let declared = self.first_value(&headers, "content-type");
        let content_type = match declared {
            Some(raw) => content_type(&Self::structural(raw)),
            None => default_type.to_string(),
        };
        self.parts.push(Part {
            headers,
            content_type,
            defects,
            body: Body::Leaf(Vec::new()),
            too_deep: false,
        });
        let maintype = self.parts[index].maintype().to_string();
        let container = maintype == "message" || maintype == "multipart";
        if container && depth >= self.limits.max_depth {
            self.parts[index].too_deep = true;
            self.parts[index].body = Body::Children(Vec::new());
            note(&mut self.hit, "TooDeeplyNested");
            self.cursor.skip_rest();
            return index;
        }
        if self.parts[index].content_type == "message/delivery-status" {
            self.delivery_status(index, depth);
        } else if maintype == "message" {
            let child = self.child(depth, "text/plain");
            self.parts[index].body = Body::Children(child.into_iter().collect());
        } else if maintype == "multipart" {
            self.multipart(index, depth, declared);
        } else {
            let runs = self.cursor.rest();
            self.parts[index].body = Body::Leaf(runs);
        }
        index
    }

    /// A child part, unless the part limit is reached (then the rest is skipped).
    fn child(&mut self, depth: usize, default_type: &str) -> Option<usize> {
        if self.parts.len() >= self.limits.max_parts {
            note(&mut self.hit, "TooManyParts");
            self.cursor.skip_rest();
            return None;
        }
        Some(self.parse_part(depth + 1, default_type))
    }

    fn delivery_status(&mut self, index: usize, depth: usize) {
        let mut children = Vec::new();
        loop {
            self.cursor.matchers.push(Matcher::Blank);
            let child = self.child(depth, "text/plain");
            self.cursor.matchers.pop();
            match child {
                Some(child) => children.push(child),
                None => break,
            }
            // The blank line, then: the end, or the next block.
            let _ = self.cursor.read_line();
            match self.cursor.read_line() {
                Some(line) => self.cursor.unread(line),
                None => break,
            }
        }
        self.parts[index].body = Body::Children(children);
    }

    fn multipart(&mut self, index: usize, depth: usize, declared: Option<&'a [u8]>) {
        let boundary = declared.and_then(|raw| boundary(&Self::structural(raw)));
        let Some(boundary) = boundary else {
            self.parts[index].defects.push("NoBoundaryInMultipartDefect");
            let runs = self.cursor.rest();
            self.parts[index].body = Body::Leaf(runs);
            return;
        };
        let cte = self.first_value(&self.parts[index].headers, "content-transfer-encoding");
        let cte = cte.map_or(Cow::Borrowed("8bit"), Self::structural).to_lowercase();
        if !matches!(cte.as_str(), "7bit" | "8bit" | "binary") {
            self.parts[index]
                .defects
                .push("InvalidMultipartContentTransferEncodingDefect");
        }
        // A boundary with 8-bit bytes never matches (the email package reads it as U+FFFD).
        let separator: Vec<u8> = if boundary.contains('\u{fffd}') {
            Vec::new()
        } else {
            [b"--", boundary.as_bytes()].concat()
        };
        let matches = |line: &[u8]| {
            if separator.is_empty() {
                None
            } else {
                boundary_match(line, &separator)
            }
        };
        let default_type = if self.parts[index].content_type == "multipart/digest" {
            "message/rfc822"
        } else {
            "text/plain"
        };
        let mut preamble: Vec<Span> = Vec::new();
        let mut in_preamble = true;
        let mut closed = false;
        let mut limited = false;
        let mut children = Vec::new();
        while let Some(line) = self.cursor.read_line() {
            let Some(close) = matches(self.text(line)) else {
                preamble.push(line);
                continue;
            };
            if close {
                closed = true;
                break;
            }
            if in_preamble {
                in_preamble = false;
                self.cursor.unread(line);
                continue;
            }
            // Consume repeated boundary lines (closing ones included, as the email package).
            while let Some(next) = self.cursor.read_line() {
                if matches(self.text(next)).is_none() {
                    self.cursor.unread(next);
                    break;
                }
            }
            self.cursor.matchers.push(Matcher::Boundary(separator.clone()));
            let child = self.child(depth, default_type);
            self.cursor.matchers.pop();
            let Some(child) = child else {
                limited = true;
                break;
            };
            children.push(child);
            // The line end before a boundary belongs to the boundary.
            let last = self.last_created;
            if self.parts[last].maintype() != "multipart" {
                if let Body::Leaf(runs) = &mut self.parts[last].body {
                    if let Some(run) = runs.last_mut() {
                        let data = self.cursor.data;
                        if run.1 > run.0 && data[run.1 - 1] == b'\n' {
                            run.1 -= 1;
                            if run.1 > run.0 && data[run.1 - 1] == b'\r' {
                                run.1 -= 1;
                            }
                        } else if run.1 > run.0 && data[run.1 - 1] == b'\r' {
                            run.1 -= 1;
                        }
                    }
                }
            }
            // From here on this multipart is the last part seen (an enclosing multipart
            // then leaves its children's line ends alone).
            self.last_created = index;
        }
        if in_preamble {
            self.parts[index].defects.push("StartBoundaryNotFoundDefect");
            self.cursor.skip_rest();
            self.parts[index].body = Body::Leaf(preamble);
            return;
        }
        self.parts[index].body = Body::Children(children);
        if !closed && !limited {
            self.parts[index].defects.push("CloseBoundaryNotFoundDefect");
            return;
        }
        self.cursor.skip_rest(); // the epilogue
    }
}

/// The structure of `data` (already cut to the byte limit).
pub fn parse(data: &[u8], limits: Limits) -> Tree {
    let mut parser = Parser {
        cursor: Cursor {
            data,
            pos: 0,
            pending: None,
            matchers: Vec::new(),
        },
        parts: Vec::new(),
        limits,
        hit: Vec::new(),
        last_created: 0,
    };
    parser.parse_part(0, "text/plain");
    let root = &mut parser.parts[0];
    if root.maintype() == "multipart" && matches!(root.body, Body::Leaf(_)) {
        root.defects.push("MultipartInvariantViolationDefect");
    }
    Tree {
        parts: parser.parts,
        limits: parser.hit,
    }
}

impl Tree {
    /// The bytes of a leaf part's payload (borrowed when it is one run of the input).
    pub fn payload<'a>(&self, data: &'a [u8], index: usize) -> Cow<'a, [u8]> {
        match &self.parts[index].body {
            Body::Leaf(runs) if runs.len() == 1 => Cow::Borrowed(&data[runs[0].0..runs[0].1]),
            Body::Leaf(runs) => Cow::Owned(runs.iter().flat_map(|r| data[r.0..r.1].iter().copied()).collect()),
            Body::Children(_) => Cow::Borrowed(&[]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(raw: &[u8]) -> Vec<(String, Vec<&'static str>)> {
        parse(raw, Limits::default())
            .parts
            .into_iter()
            .map(|p| (p.content_type, p.defects))
            .collect()
    }

    #[test]
    fn structure_follows_the_email_package() {
        let raw = b"From x\nContent-Type: multipart/mixed; boundary=B\n\npre\n--B\n\nhello\n--B\nContent-Type: message/rfc822\n\nSubject: in\n\ninner\n--B--\nepilogue\n";
        let tree = parse(raw, Limits::default());
        let names: Vec<&str> = tree.parts.iter().map(|p| p.content_type.as_str()).collect();
        assert_eq!(names, ["multipart/mixed", "text/plain", "message/rfc822", "text/plain"]);
        assert_eq!(&*tree.payload(raw, 1), b"hello");
        assert_eq!(&*tree.payload(raw, 3), b"inner");
        assert!(tree.parts.iter().all(|p| p.defects.is_empty()));
        assert_eq!(
            types(b"Content-Type: multipart/mixed; boundary=B\n\n--B\n\nx\n"),
            vec![
                ("multipart/mixed".to_string(), vec!["CloseBoundaryNotFoundDefect"]),
                ("text/plain".to_string(), vec![]),
            ]
        );
        assert_eq!(
            types(b"Content-Type: multipart/mixed; boundary=B\n\nno start\n")[0].1,
            vec!["StartBoundaryNotFoundDefect", "MultipartInvariantViolationDefect"]
        );
        let body_only = parse(b"just words\n", Limits::default());
        assert_eq!(&*body_only.payload(b"just words\n", 0), b"just words\n");
        assert_eq!(body_only.parts[0].defects, ["MissingHeaderBodySeparatorDefect"]);
    }

    #[test]
    fn deep_nesting_is_cut() {
        let mut raw = Vec::new();
        for level in 0..10_000 {
            raw.extend_from_slice(
                format!("Content-Type: multipart/mixed; boundary=b{level}\n\n--b{level}\n").as_bytes(),
            );
        }
        let tree = parse(&raw, Limits::default());
        assert_eq!(tree.parts.len(), 21);
        assert_eq!(tree.limits, ["TooDeeplyNested"]);
    }
}
