//! HTML to text, link targets, and URLs written in text.
//!
//! The same reading as streamnb's regular expressions (kept in the docs below), as linear
//! scans: comments are removed without a trace (spammers split words with them:
//! `V<!-- -->iagra` reads "Viagra"), script and style blocks are dropped, every tag becomes
//! a space and character references are unescaped as `html.unescape` does. An unclosed
//! comment or script runs to the end once; a tag cannot span another "<".

use super::entities::{INVALID_CHARREFS, INVALID_CODEPOINTS, NAMED};
use crate::tokenize::{is_space, is_word_char};
use memchr::{memchr, memchr2, memmem};

/// The character ending just before byte `at` of `text`, if any.
#[inline]
fn char_before(text: &str, at: usize) -> Option<char> {
    text[..at].chars().next_back()
}

/// Is byte `at` of `text` at the start of a word (`(?<!\w.)` on the character at `at`)?
#[inline]
fn not_after_word(text: &str, at: usize) -> bool {
    !char_before(text, at).is_some_and(is_word_char)
}

#[inline]
fn starts_with_ignore_case(text: &[u8], at: usize, word: &[u8]) -> bool {
    text.len() >= at + word.len() && text[at..at + word.len()].eq_ignore_ascii_case(word)
}

/// Bytes of `\s*` from `at`.
#[inline]
fn skip_spaces(text: &str, mut at: usize) -> usize {
    while let Some(c) = text[at..].chars().next() {
        if !is_space(c) {
            break;
        }
        at += c.len_utf8();
    }
    at
}

/// Is there a `\b` after a word character at byte `at` (end of text, or a non-word char)?
#[inline]
fn word_ends(text: &str, at: usize) -> bool {
    !text[at..].chars().next().is_some_and(is_word_char)
}

/// Link targets and URLs, back to back in one String: a message has dozens, and a String
/// each cost an allocation and a free apiece.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Urls {
    text: String,
    ends: Vec<usize>,
}

impl Urls {
    pub fn push(&mut self, url: &str) {
        self.push_with(|text| text.push_str(url));
    }

    /// One more URL, the one `write` appends to the text.
    pub fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        write(&mut self.text);
        self.ends.push(self.text.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    #[inline]
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> {
        (0..self.len()).map(move |i| self.get(i))
    }
}

impl<S: AsRef<str>> FromIterator<S> for Urls {
    fn from_iter<I: IntoIterator<Item = S>>(urls: I) -> Self {
        let mut out = Urls::default();
        urls.into_iter().for_each(|url| out.push(url.as_ref()));
        out
    }
}

/// Link targets of attributes href, src, action and background, in order (quoted or not):
/// `[hHsSaAbB](?<!\w.)(?:(?<=[hH])(?i:ref)|(?<=[sS])(?i:rc)|(?<=[aA])(?i:ction)|(?<=[bB])(?i:ackground))\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`,
/// each unescaped when it holds "&". Every match holds a "=", so the candidates are found
/// from the "=" signs (a SIMD search) and checked forward, left to right as the regex.
pub fn links(markup: &str, out: &mut Urls) {
    let bytes = markup.as_bytes();
    let mut resume = 0;
    for equals in memchr::memchr_iter(b'=', bytes) {
        if equals < resume {
            continue;
        }
        let mut keyword_end = equals;
        while let Some(c) = char_before(markup, keyword_end) {
            if !is_space(c) {
                break;
            }
            keyword_end -= c.len_utf8();
        }
        for length in [4, 3, 6, 10] {
            let Some(start) = keyword_end.checked_sub(length) else {
                continue;
            };
            if start < resume {
                continue;
            }
            if let Some((value_start, value_stop, next)) = link_at(markup, start) {
                let link = &markup[value_start..value_stop];
                if link.contains('&') {
                    out.push_with(|text| unescape_into(link, text));
                } else {
                    out.push(link);
                }
                resume = next;
                break;
            }
        }
    }
}

/// The link attribute matching at byte `at`: (value start, value end, match end).
fn link_at(markup: &str, at: usize) -> Option<(usize, usize, usize)> {
    let bytes = markup.as_bytes();
    let rest: &[u8] = match bytes[at] {
        b'h' | b'H' => b"ref",
        b's' | b'S' => b"rc",
        b'a' | b'A' => b"ction",
        b'b' | b'B' => b"ackground",
        _ => return None,
    };
    if !starts_with_ignore_case(bytes, at + 1, rest) || !not_after_word(markup, at) {
        return None;
    }
    let mut end = skip_spaces(markup, at + 1 + rest.len());
    if bytes.get(end) != Some(&b'=') {
        return None;
    }
    end = skip_spaces(markup, end + 1);
    match bytes.get(end) {
        Some(&quote @ (b'"' | b'\'')) => {
            memchr(quote, &bytes[end + 1..]).map(|length| (end + 1, end + 1 + length, end + 2 + length))
        }
        Some(_) => {
            let mut stop = end;
            while let Some(c) = markup[stop..].chars().next() {
                if is_space(c) || c == '"' || c == '\'' || c == '>' {
                    break;
                }
                stop += c.len_utf8();
            }
            (stop > end).then_some((end, stop, stop))
        }
        None => None,
    }
}

/// Visible text of an HTML document (see the module docs), appended to `out`.
pub fn to_text(markup: &str, out: &mut String) {
    let without_comments = remove_comments(markup);
    let without_scripts = remove_scripts(&without_comments);
    let start = out.len();
    replace_tags(&without_scripts, out);
    if out[start..].contains('&') {
        let tagless = out.split_off(start);
        unescape_into(&tagless, out);
    }
}

/// `<!--.*?(?:-->|\Z)` (dot matching newlines) removed.
fn remove_comments(text: &str) -> std::borrow::Cow<'_, str> {
    let Some(first) = memmem::find(text.as_bytes(), b"<!--") else {
        return text.into();
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut next = Some(first);
    while let Some(open) = next {
        out.push_str(&text[at..open]);
        match memmem::find(&text.as_bytes()[open + 4..], b"-->") {
            Some(close) => at = open + 4 + close + 3,
            None => return out.into(),
        }
        next = memmem::find(&text.as_bytes()[at..], b"<!--").map(|i| at + i);
    }
    out.push_str(&text[at..]);
    out.into()
}

/// `<(script|style)\b.*?(?:</\1\s*>|\Z)` (ignoring case) replaced by a space.
fn remove_scripts(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = memchr(b'<', &bytes[at..]) {
        let open = at + found;
        let name: Option<&[u8]> = [&b"script"[..], b"style"]
            .into_iter()
            .find(|name| starts_with_ignore_case(bytes, open + 1, name) && word_ends(text, open + 1 + name.len()));
        let Some(name) = name else {
            at = open + 1;
            continue;
        };
        let mut end = bytes.len();
        let mut search = open + 1 + name.len();
        while let Some(close) = memmem::find(&bytes[search..], b"</") {
            let tag = search + close;
            if starts_with_ignore_case(bytes, tag + 2, name) {
                let after = skip_spaces(text, tag + 2 + name.len());
                if bytes.get(after) == Some(&b'>') {
                    end = after + 1;
                    break;
                }
            }
            search = tag + 2;
        }
        let buffer = out.get_or_insert_with(|| String::with_capacity(text.len()));
        buffer.push_str(&text[copied..open]);
        buffer.push(' ');
        copied = end;
        at = end;
        if at >= bytes.len() {
            break;
        }
    }
    match out {
        None => text.into(),
        Some(mut buffer) => {
            buffer.push_str(&text[copied..]);
            buffer.into()
        }
    }
}

/// `<[a-zA-Z/!?][^<>]*>` replaced by a space, appended to `out`.
fn replace_tags(text: &str, out: &mut String) {
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = memchr(b'<', &bytes[at..]) {
        let open = at + found;
        let valid = bytes
            .get(open + 1)
            .is_some_and(|&b| b.is_ascii_alphabetic() || matches!(b, b'/' | b'!' | b'?'));
        if valid {
            match memchr2(b'<', b'>', &bytes[open + 2..]) {
                Some(i) if bytes[open + 2 + i] == b'>' => {
                    out.push_str(&text[copied..open]);
                    out.push(' ');
                    copied = open + 2 + i + 1;
                    at = copied;
                    continue;
                }
                Some(i) => {
                    at = open + 2 + i;
                    continue;
                }
                None => break,
            }
        }
        at = open + 1;
    }
    out.push_str(&text[copied..]);
}

/// `html.unescape` of `text` (numeric and named character references, HTML5 rules),
/// appended to `out`.
fn unescape_into(text: &str, out: &mut String) {
    out.reserve(text.len());
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = memchr(b'&', &bytes[at..]) {
        let amp = at + found;
        let body = amp + 1;
        if bytes.get(body) == Some(&b'#') {
            let hex = matches!(bytes.get(body + 1), Some(b'x' | b'X'));
            let digits_start = body + 1 + hex as usize;
            let digits = bytes[digits_start..]
                .iter()
                .take_while(|b| if hex { b.is_ascii_hexdigit() } else { b.is_ascii_digit() })
                .count();
            if digits > 0 {
                let mut end = digits_start + digits;
                if bytes.get(end) == Some(&b';') {
                    end += 1;
                }
                out.push_str(&text[copied..amp]);
                numeric_reference(&text[digits_start..digits_start + digits], hex, out);
                copied = end;
                at = end;
                continue;
            }
            at = body;
            continue;
        }
        // [^\t\n\f <&#;]{1,32};?
        let mut end = body;
        let mut count = 0;
        while count < 32 {
            match text[end..].chars().next() {
                Some(c) if !matches!(c, '\t' | '\n' | '\x0c' | ' ' | '<' | '&' | '#' | ';') => {
                    end += c.len_utf8();
                    count += 1;
                }
                _ => break,
            }
        }
        if count == 0 {
            at = body;
            continue;
        }
        if bytes.get(end) == Some(&b';') {
            end += 1;
        }
        out.push_str(&text[copied..amp]);
        named_reference(&text[body..end], out);
        copied = end;
        at = end;
    }
    out.push_str(&text[copied..]);
}

fn named(name: &str) -> Option<&'static str> {
    common_named(name).or_else(|| NAMED.binary_search_by_key(&name, |&(k, _)| k).ok().map(|i| NAMED[i].1))
}

/// The commonest references in mail, as NAMED reads them (tested), answered without
/// a binary search of its 2,231 names (a string comparison a step).
fn common_named(name: &str) -> Option<&'static str> {
    match name {
        "nbsp;" => Some("\u{a0}"),
        "amp;" => Some("&"),
        "lt;" => Some("<"),
        "gt;" => Some(">"),
        "quot;" => Some("\""),
        _ => None,
    }
}

fn named_reference(name: &str, out: &mut String) {
    if let Some(value) = named(name) {
        out.push_str(value);
        return;
    }
    // The longest known prefix of 2+ characters (the HTML5 rule for missing ";").
    let ends: Vec<usize> = name.char_indices().map(|(i, _)| i).skip(2).collect();
    for &end in ends.iter().rev() {
        if let Some(value) = named(&name[..end]) {
            out.push_str(value);
            out.push_str(&name[end..]);
            return;
        }
    }
    out.push('&');
    out.push_str(name);
}

fn numeric_reference(digits: &str, hex: bool, out: &mut String) {
    let radix = if hex { 16 } else { 10 };
    let mut value: u64 = 0;
    for c in digits.chars() {
        value = value
            .saturating_mul(radix)
            .saturating_add(c.to_digit(radix as u32).unwrap_or(0) as u64);
    }
    if let Ok(i) = INVALID_CHARREFS.binary_search_by_key(&value, |&(k, _)| k as u64) {
        out.push_str(INVALID_CHARREFS[i].1);
        return;
    }
    if (0xD800..=0xDFFF).contains(&value) || value > 0x10FFFF {
        out.push('\u{fffd}');
        return;
    }
    if INVALID_CODEPOINTS.binary_search(&(value as u32)).is_ok() {
        return;
    }
    out.push(char::from_u32(value as u32).unwrap_or('\u{fffd}'));
}

/// Does text start like HTML? `<(?:html|body|head|table|font|a\s+href|p|br|div)\b`
/// (ignoring case) in the first 4,096 characters.
pub fn looks_like_html(text: &str) -> bool {
    // The first 4,096 characters: as many bytes when they are ASCII.
    let window = if text.len() <= 4096 || text.as_bytes()[..4096].is_ascii() {
        &text[..text.len().min(4096)]
    } else {
        text.char_indices().nth(4096).map_or(text, |(end, _)| &text[..end])
    };
    let bytes = window.as_bytes();
    let mut at = 0;
    while let Some(found) = memchr(b'<', &bytes[at..]) {
        let open = at + found + 1;
        for name in [&b"html"[..], b"body", b"head", b"table", b"font", b"p", b"br", b"div"] {
            if starts_with_ignore_case(bytes, open, name) && word_ends(window, open + name.len()) {
                return true;
            }
        }
        if starts_with_ignore_case(bytes, open, b"a") {
            let after = skip_spaces(window, open + 1);
            if after > open + 1 && starts_with_ignore_case(bytes, after, b"href") && word_ends(window, after + 4) {
                return true;
            }
        }
        at = open;
    }
    false
}

/// URLs written in text: `[hHfFwW](?<!\w.)(?:(?i:ttps?|tp)://|(?i:ww)\.)[^\s<>"'`{}|\\^\[\]]+`.
/// Every match holds "://" or "ww." (any case) a few bytes after its start: candidates are found from
/// those (SIMD searches) and checked forward, left to right as the regex.
pub fn text_urls(text: &str, out: &mut Urls) {
    let bytes = text.as_bytes();
    // Each kind of candidate comes in increasing order ("://" matches are 3 bytes apart or
    // more), so the two streams are merged rather than collected and sorted.
    let mut schemes = memmem::find_iter(bytes, b"://")
        .flat_map(|found| (3..=5).rev().filter_map(move |back| found.checked_sub(back)))
        .peekable();
    // "ww." in any case: from the dots.
    let mut www = memchr::memchr_iter(b'.', bytes)
        .filter(|&dot| dot >= 3 && bytes[dot - 2..dot].eq_ignore_ascii_case(b"ww"))
        .map(|dot| dot - 3)
        .peekable();
    let mut resume = 0;
    loop {
        let start = match (schemes.peek(), www.peek()) {
            (Some(scheme), Some(w)) if w < scheme => www.next(),
            (Some(_), _) => schemes.next(),
            (None, _) => www.next(),
        };
        let Some(start) = start else {
            break;
        };
        if start < resume {
            continue;
        }
        if let Some(end) = url_at(text, start) {
            out.push(&text[start..end]);
            resume = end;
        }
    }
}

/// The ASCII characters that end a text URL, a bit each: `\s` (as `is_space` reads ASCII)
/// and `<>"'`{}|\^[]`.
const URL_END: u128 = {
    let ends = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f <>\"'`{}|\\^[]";
    let mut bits = 0u128;
    let mut i = 0;
    while i < ends.len() {
        bits |= 1 << ends[i];
        i += 1;
    }
    bits
};

/// The end of the text URL matching at byte `at`, if one does.
fn url_at(text: &str, at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if !matches!(bytes[at], b'h' | b'H' | b'f' | b'F' | b'w' | b'W') {
        return None;
    }
    let after = at + 1;
    let prefix_end = if starts_with_ignore_case(bytes, after, b"ttps://") {
        after + 7
    } else if starts_with_ignore_case(bytes, after, b"ttp://") {
        after + 6
    } else if starts_with_ignore_case(bytes, after, b"tp://") {
        after + 5
    } else if starts_with_ignore_case(bytes, after, b"ww.") {
        after + 3
    } else {
        return None;
    };
    if !not_after_word(text, at) {
        return None;
    }
    let mut end = prefix_end;
    while let Some(&byte) = bytes.get(end) {
        // An ASCII byte is its character, looked up in URL_END; only other characters need
        // decoding (Unicode spaces end a URL too).
        if byte.is_ascii() {
            if URL_END >> byte & 1 != 0 {
                break;
            }
            end += 1;
            continue;
        }
        let c = text[end..].chars().next().unwrap_or(' ');
        if is_space(c) {
            break;
        }
        end += c.len_utf8();
    }
    (end > prefix_end).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(markup: &str) -> String {
        let mut out = String::new();
        to_text(markup, &mut out);
        out
    }

    #[test]
    fn html_reads_as_python_did() {
        assert_eq!(
            text_of("<p>Cheap V<!-- x -->iagra &amp; more</p>"),
            " Cheap Viagra & more "
        );
        assert_eq!(text_of("a<script>x</SCRIPT >b<style>c"), "a b ");
        assert_eq!(text_of("<scripts>x"), " x");
        assert_eq!(text_of("a < b <c <d>"), "a < b <c  ");
        assert_eq!(text_of("<script>xx<!-- a < b"), " ");
        let mut found = Urls::default();
        links(
            "<a HREF=\"http://x/?a=1&amp;b\">s</a> data-src=y <img src=z> xhref=q href=\"unterminated",
            &mut found,
        );
        assert_eq!(found.iter().collect::<Vec<_>>(), ["http://x/?a=1&b", "y", "z"]);
        assert!(looks_like_html("hello <P>"));
        assert!(looks_like_html("x <a  href=1>"));
        assert!(!looks_like_html("x <pre>"));
        let mut urls = Urls::default();
        text_urls(
            "WWW.UP.COM see http://a.b/c, www.x.org. xhttp://no ftp://f htp://odd https:// ",
            &mut urls,
        );
        assert_eq!(
            urls.iter().collect::<Vec<_>>(),
            ["WWW.UP.COM", "http://a.b/c,", "www.x.org.", "ftp://f", "htp://odd"]
        );
    }

    #[test]
    fn common_named_references_are_as_the_table_reads_them() {
        for name in ["nbsp;", "amp;", "lt;", "gt;", "quot;"] {
            let listed = NAMED.binary_search_by_key(&name, |&(k, _)| k).ok().map(|i| NAMED[i].1);
            assert_eq!(common_named(name), listed, "{name}");
            assert!(listed.is_some());
        }
    }

    #[test]
    fn url_ends_are_spaces_and_the_regex_punctuation() {
        for byte in 0..128u8 {
            let c = char::from(byte);
            let ends = is_space(c) || "<>\"'`{}|\\^[]".contains(c);
            assert_eq!(URL_END >> byte & 1 != 0, ends, "{byte}");
        }
    }

    #[test]
    fn unescape_as_python() {
        let mut out = String::from("kept ");
        unescape_into(
            "&amp;&lt;&#8212;&#x41;&#150;&#0;&#xD800;&#1;&notit;&amp x &zz; &#;",
            &mut out,
        );
        assert_eq!(out, "kept &<—A–\u{fffd}\u{fffd}¬it;& x &zz; &#;");
    }
}
