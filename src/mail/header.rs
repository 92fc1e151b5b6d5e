//! Header values: 8-bit bytes, folding, RFC 2047 encoded words, MIME parameters.
//!
//! Header values are decoded as streamnb always decoded them: raw 8-bit bytes are read as
//! UTF-8 if valid, else Latin-1 (over the whole value); folding line breaks are removed;
//! the whitespace between two encoded words is dropped (RFC 2047) and each encoded word
//! `=?charset?B|Q?text?=` is replaced by its text, an undecodable one kept as written;
//! then the value is stripped. MIME parameters and the multipart boundary are read with
//! Python's email package rules (first header wins; `_parseparam` quoting).

use super::charset;
use super::transfer::{a2b_qp, decode_base64_word, unquote as percent_unquote};
use crate::tokenize::{is_space, py_strip, python_lower};
use std::borrow::Cow;

/// Raw header bytes as text: ASCII as is, else UTF-8 if valid, else Latin-1.
pub fn fix_8bit(raw: &[u8]) -> Cow<'_, str> {
    if raw.is_ascii() {
        // ASCII is valid UTF-8.
        return Cow::Borrowed(std::str::from_utf8(raw).unwrap_or_default());
    }
    let mut out = String::with_capacity(raw.len() + raw.len() / 2);
    charset::decode_undeclared(raw, &mut out);
    Cow::Owned(out)
}

/// A raw header value decoded (see the module docs).
pub fn decode_value(raw: &[u8]) -> String {
    decode_text(&fix_8bit(raw))
}

/// `decode_value` for a value already read as text.
pub fn decode_text(value: &str) -> String {
    let unfolded: Cow<'_, str> = if value.contains('\n') {
        Cow::Owned(unfold(value))
    } else {
        Cow::Borrowed(value)
    };
    if !unfolded.contains("=?") {
        return py_strip(&unfolded).to_string();
    }
    let joined = join_encoded_words(&unfolded);
    let decoded = decode_encoded_words(&joined);
    py_strip(&decoded).to_string()
}

/// `\r?\n` followed by a space or tab removed.
fn unfold(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = String::with_capacity(value.len());
    let mut copied = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' && matches!(bytes.get(i + 1), Some(b' ' | b'\t')) {
            let start = if i > 0 && bytes[i - 1] == b'\r' { i - 1 } else { i };
            out.push_str(&value[copied..start]);
            copied = i + 1;
        }
    }
    out.push_str(&value[copied..]);
    out
}

/// `(?<=\?=)[ \t\r\n]+(?==\?)` removed: whitespace between adjacent encoded words.
fn join_encoded_words(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = String::with_capacity(value.len());
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        if at >= 2 && &bytes[at - 2..at] == b"?=" && matches!(bytes[at], b' ' | b'\t' | b'\r' | b'\n') {
            let mut end = at;
            while end < bytes.len() && matches!(bytes[end], b' ' | b'\t' | b'\r' | b'\n') {
                end += 1;
            }
            if bytes[end..].starts_with(b"=?") {
                out.push_str(&value[copied..at]);
                copied = end;
            }
            at = end;
            continue;
        }
        at += 1;
    }
    out.push_str(&value[copied..]);
    out
}

/// The end (exclusive) of the run `[^?\s]*` starting at byte `at`.
fn run_end(value: &str, mut at: usize) -> usize {
    while let Some(c) = value[at..].chars().next() {
        if c == '?' || is_space(c) {
            break;
        }
        at += c.len_utf8();
    }
    at
}

/// Every `=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=` replaced by its decoded text.
fn decode_encoded_words(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = String::with_capacity(value.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = memchr::memmem::find(&bytes[at..], b"=?") {
        let start = at + found;
        let charset_end = run_end(value, start + 2);
        let kind = bytes.get(charset_end + 1).copied();
        let well_formed = charset_end > start + 2
            && bytes.get(charset_end) == Some(&b'?')
            && matches!(kind, Some(b'b' | b'B' | b'q' | b'Q'))
            && bytes.get(charset_end + 2) == Some(&b'?');
        if !well_formed {
            at = start + 1;
            continue;
        }
        let text_start = charset_end + 3;
        let text_end = run_end(value, text_start);
        if !bytes[text_end..].starts_with(b"?=") {
            at = start + 1;
            continue;
        }
        let end = text_end + 2;
        let charset_name = &value[start + 2..charset_end];
        let charset_name = charset_name.split('*').next().unwrap_or("");
        let text = &value[text_start..text_end];
        let data = if matches!(kind, Some(b'b' | b'B')) {
            decode_base64_word(text.as_bytes())
        } else {
            // Python encodes the text as ASCII with "?" for other characters first.
            let ascii: Vec<u8> = text
                .chars()
                .map(|c| if c.is_ascii() { c as u8 } else { b'?' })
                .collect();
            let mut data = Vec::with_capacity(ascii.len());
            a2b_qp(&ascii, true, &mut data);
            Some(data)
        };
        out.push_str(&value[copied..start]);
        match data {
            Some(data) => charset::decode_into(&data, Some(charset_name), &mut out),
            None => out.push_str(&value[start..end]),
        }
        copied = end;
        at = end;
    }
    out.push_str(&value[copied..]);
    out
}

/// MIME parameters charset, filename and name of a (fixed) header value, in order:
/// `(?i);\s*(charset|filename|name)(\*)?\s*=\s*(?:"([^"]*)"|([^\s;]*))`, RFC 2231
/// `charset'language'%-encoded` values decoded; each name is added if not yet present.
pub fn mime_params(value: &str, params: &mut Vec<(&'static str, String)>) {
    let bytes = value.as_bytes();
    let mut at = 0;
    while let Some(found) = memchr::memchr(b';', &bytes[at..]) {
        let semi = at + found;
        at = semi + 1;
        let mut i = skip_spaces(value, semi + 1);
        let key = ["charset", "filename", "name"]
            .into_iter()
            .find(|k| bytes.len() >= i + k.len() && bytes[i..i + k.len()].eq_ignore_ascii_case(k.as_bytes()));
        let Some(key) = key else { continue };
        i += key.len();
        let extended = bytes.get(i) == Some(&b'*');
        if extended {
            i += 1;
        }
        i = skip_spaces(value, i);
        if bytes.get(i) != Some(&b'=') {
            continue;
        }
        i = skip_spaces(value, i + 1);
        let (text, end) = if bytes.get(i) == Some(&b'"') {
            match memchr::memchr(b'"', &bytes[i + 1..]) {
                Some(len) => (&value[i + 1..i + 1 + len], i + 2 + len),
                None => bare_value(value, i),
            }
        } else {
            bare_value(value, i)
        };
        at = end.max(semi + 1);
        let mut text = text.to_string();
        if extended && text.contains('\'') {
            let encoded = text.splitn(3, '\'').last().unwrap_or("").to_string();
            text = percent_unquote(&encoded);
        }
        if !params.iter().any(|(k, _)| *k == key) {
            params.push((key, text));
        }
    }
}

fn bare_value(value: &str, start: usize) -> (&str, usize) {
    let mut end = start;
    while let Some(c) = value[end..].chars().next() {
        if c == ';' || is_space(c) {
            break;
        }
        end += c.len_utf8();
    }
    (&value[start..end], end)
}

fn skip_spaces(value: &str, mut at: usize) -> usize {
    while let Some(c) = value[at..].chars().next() {
        if !is_space(c) {
            break;
        }
        at += c.len_utf8();
    }
    at
}

/// The MIME type of a Content-Type value: before ";", stripped, lowercased; "text/plain"
/// if it does not hold exactly one "/" (RFC 2045).
pub fn content_type(value: &str) -> String {
    let main = py_strip(value.split(';').next().unwrap_or(""));
    let mut lower = String::with_capacity(main.len());
    python_lower(main, &mut lower);
    if lower.matches('/').count() != 1 {
        return "text/plain".to_string();
    }
    lower
}

/// `email.utils.unquote`.
fn email_unquote(text: &str) -> Cow<'_, str> {
    if text.chars().count() > 1 {
        if text.starts_with('"') && text.ends_with('"') {
            return Cow::Owned(text[1..text.len() - 1].replace("\\\\", "\\").replace("\\\"", "\""));
        }
        if text.starts_with('<') && text.ends_with('>') {
            return Cow::Borrowed(&text[1..text.len() - 1]);
        }
    }
    Cow::Borrowed(text)
}

/// `email.utils.quote`.
fn email_quote(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Python's `_parseparam`: the ";"-separated pieces of a header value, a ";" inside
/// double quotes not separating, "name = value" tightened to "name=value".
fn parse_params(value: &str) -> Vec<String> {
    let bytes = value.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0; // the piece starts after the ';' at start - 1 (or at 0)
    loop {
        // Find the end: the first ';' after which the count of '"' minus '\"' is even.
        let mut end = None;
        let mut parity = 0usize;
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b';' if i > start && parity.is_multiple_of(2) => {
                    end = Some(i);
                    break;
                }
                b';' if i == start => {
                    end = Some(i);
                    break;
                }
                b'"' => {
                    parity += 1;
                    if i > start && bytes[i - 1] == b'\\' {
                        parity += 1; // an escaped quote counts -1: same parity as +1
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let stop = end.unwrap_or(bytes.len());
        let piece = &value[start..stop];
        let piece = match piece.find('=') {
            Some(eq) => {
                let mut name = String::new();
                python_lower(py_strip(&piece[..eq]), &mut name);
                format!("{}={}", name, py_strip(&piece[eq + 1..]))
            }
            None => piece.to_string(),
        };
        pieces.push(py_strip(&piece).to_string());
        match end {
            Some(semi) => start = semi + 1,
            None => break,
        }
    }
    pieces
}

/// The boundary of a multipart Content-Type value, as `Message.get_boundary()` reads it
/// (first "boundary" parameter, unquoted, RFC 2231 continuations joined), right-stripped.
pub fn boundary(value: &str) -> Option<String> {
    let pieces = parse_params(value);
    let mut plain: Option<String> = None;
    let mut continued: Vec<(Option<u32>, String, bool)> = Vec::new();
    for piece in pieces.iter().skip(1) {
        let (name, val) = match piece.split_once('=') {
            Some((n, v)) => (py_strip(n).to_string(), py_strip(v).to_string()),
            None => (py_strip(piece).to_string(), String::new()),
        };
        let encoded = name.ends_with('*');
        let val = email_unquote(&val).into_owned();
        // ^(?P<name>\w+)\*((?P<num>[0-9]+)\*?)?$ (ASCII)
        if let Some((base, rest)) = name.split_once('*') {
            let base_ok = !base.is_empty() && base.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            let rest_digits = rest.trim_end_matches('*');
            let rest_ok = rest.is_empty()
                || (!rest_digits.is_empty()
                    && rest_digits.bytes().all(|b| b.is_ascii_digit())
                    && rest.len() - rest_digits.len() <= 1);
            if base_ok && rest_ok {
                if base.eq_ignore_ascii_case("boundary") {
                    continued.push((rest_digits.parse().ok(), val, encoded));
                }
                continue;
            }
        }
        if plain.is_none() && name.eq_ignore_ascii_case("boundary") {
            plain = Some(email_quote(&val));
        }
    }
    let found = match plain {
        Some(quoted) => email_unquote(&email_unquote(&format!("\"{quoted}\""))).into_owned(),
        None if !continued.is_empty() => {
            continued.sort_by_key(|c| c.0);
            let extended = continued.iter().any(|c| c.2);
            let joined: String = continued
                .iter()
                .map(|(_, s, enc)| if *enc { latin1_unquote(s) } else { s.clone() })
                .collect();
            if extended {
                let parts: Vec<&str> = joined.splitn(3, '\'').collect();
                if parts.len() == 3 {
                    let raw: Vec<u8> = parts[2].chars().map(|c| c as u32 as u8).collect();
                    let name = if parts[0].is_empty() { "us-ascii" } else { parts[0] };
                    charset::decode(&raw, Some(name))
                } else {
                    joined
                }
            } else {
                email_unquote(&joined).into_owned()
            }
        }
        None => return None,
    };
    Some(found.trim_end_matches(is_space).to_string())
}

/// %XX escapes as Latin-1 characters (each the byte's value).
fn latin1_unquote(text: &str) -> String {
    let decoded = percent_unquote(text);
    if decoded == text {
        return decoded;
    }
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            let value = u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap_or(b'?');
            out.push(value as char);
            i += 3;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_as_python() {
        let cases: [(&[u8], &str); 10] = [
            (b"plain", "plain"),
            (b"=?UTF-8?B?w6k=?=", "é"),
            (b"=?utf-8?b?w6k?=", "é"),
            (b"=?iso-8859-1?Q?a=E9_b?=", "aé b"),
            (b"=?utf-8*en?q?caf=C3=A9?=", "café"),
            (b"=?no-such?q?abc?=", "abc"),
            (b"=?utf-8?B?@@@?=", "=?utf-8?B?@@@?="),
            (b"x\r\n y", "x y"),
            (b"caf\xe9", "café"),
            (
                b"=?utf-8?B?R3LDvMOfZQ==?= =?utf-8?q?aus_M=C3=BCnchen?=",
                "Grüßeaus München",
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(decode_value(raw), expected);
        }
        assert_eq!(decode_value(b"=?=?utf-8?q?x?= =?"), "=?x=?");
    }

    #[test]
    fn parameters_as_python() {
        let mut params = Vec::new();
        mime_params(
            "text/plain; CHARSET = \"iso-8859-1\"; name=a.txt; charset=x",
            &mut params,
        );
        assert_eq!(
            params,
            vec![("charset", "iso-8859-1".to_string()), ("name", "a.txt".to_string())]
        );
        let mut params = Vec::new();
        mime_params("attachment; filename*=utf-8''r%C3%A9sum%C3%A9.pdf", &mut params);
        assert_eq!(params, vec![("filename", "résumé.pdf".to_string())]);
        assert_eq!(content_type(" Multipart/Mixed ; boundary=x"), "multipart/mixed");
        assert_eq!(content_type("text"), "text/plain");
        assert_eq!(boundary("multipart/mixed; boundary=\"AB;C\" ").as_deref(), Some("AB;C"));
        assert_eq!(boundary("multipart/mixed;\n\tBOUNDARY = ab  ").as_deref(), Some("ab"));
        assert_eq!(boundary("multipart/mixed; x=1").as_deref(), None);
        assert_eq!(
            boundary("multipart/mixed; boundary*0=a; boundary*1=b").as_deref(),
            Some("ab")
        );
    }
}
