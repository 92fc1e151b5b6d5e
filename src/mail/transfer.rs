//! Content transfer decodings, byte for byte as Python's binascii reads them.
//!
//! streamnb's parser decoded base64 with `binascii.a2b_base64` (keeping what can be read of
//! a damaged body), quoted-printable with `binascii.a2b_qp` and %-escapes with
//! `urllib.parse.unquote`; these are the same algorithms, so bodies decode to the same
//! bytes. All are single linear passes whose output is never longer than their input.

/// Base64 alphabet value of a byte, 0xFF for bytes outside it.
static BASE64: [u8; 256] = {
    let mut table = [0xFFu8; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// `binascii.a2b_base64(data)` (non-strict): bytes outside the alphabet are skipped, a
/// completed "=" padding ends the data; false if the data stops inside a group (Python
/// raises binascii.Error).
pub fn a2b_base64(data: &[u8], out: &mut Vec<u8>) -> bool {
    let mut quad = 0u8;
    let mut pads = 0u8;
    let mut left = 0u8;
    for &byte in data {
        if byte == b'=' {
            if quad >= 2 {
                pads += 1;
                if quad + pads >= 4 {
                    return true;
                }
            }
            continue;
        }
        let value = BASE64[byte as usize];
        if value == 0xFF {
            continue;
        }
        pads = 0;
        match quad {
            0 => {
                quad = 1;
                left = value;
            }
            1 => {
                quad = 2;
                out.push((left << 2) | (value >> 4));
                left = value & 0x0f;
            }
            2 => {
                quad = 3;
                out.push((left << 4) | (value >> 2));
                left = value & 0x03;
            }
            _ => {
                quad = 0;
                out.push((left << 6) | value);
            }
        }
    }
    quad == 0
}

/// A base64 body, keeping what can be read of a truncated or damaged one: where
/// a2b_base64 fails, the alphabet characters alone are decoded, the incomplete last group
/// dropped (streamnb's rule for bodies cut in transit).
pub fn decode_base64_body(data: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    if a2b_base64(data, out) {
        return;
    }
    out.truncate(start);
    let cleaned: Vec<u8> = data.iter().copied().filter(|&b| BASE64[b as usize] != 0xFF).collect();
    let whole = cleaned.len() / 4 * 4;
    a2b_base64(&cleaned[..whole], out);
}

/// An RFC 2047 "B" encoded word: `base64.b64decode(text + padding, validate=True)`; None
/// if it is not valid base64 (the word is then kept as written).
pub fn decode_base64_word(text: &[u8]) -> Option<Vec<u8>> {
    let pad = (4 - text.len() % 4) % 4;
    // validate=True: the padded text must read [A-Za-z0-9+/]*={0,2}.
    let data_end = text.iter().position(|&b| b == b'=').unwrap_or(text.len());
    if text[..data_end].iter().any(|&b| BASE64[b as usize] == 0xFF)
        || text[data_end..].iter().any(|&b| b != b'=')
        || text.len() - data_end + pad > 2
    {
        return None;
    }
    let mut padded = text.to_vec();
    padded.extend(std::iter::repeat_n(b'=', pad));
    let mut out = Vec::with_capacity(text.len());
    a2b_base64(&padded, &mut out).then_some(out)
}

#[inline]
fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

/// `binascii.a2b_qp(data, header)`: "=XX" escapes, "=" line ends are soft breaks, "=="
/// is "=", any other "=" stays; with `header`, "_" is a space.
pub fn a2b_qp(data: &[u8], header: bool, out: &mut Vec<u8>) {
    let mut at = 0;
    let n = data.len();
    while at < n {
        // Copy the run up to the next "=" (or "_" in a header) at once.
        let special = if header {
            memchr::memchr2(b'=', b'_', &data[at..])
        } else {
            memchr::memchr(b'=', &data[at..])
        };
        let run = special.unwrap_or(n - at);
        out.extend_from_slice(&data[at..at + run]);
        at += run;
        if at >= n {
            break;
        }
        let byte = data[at];
        if byte == b'=' {
            at += 1;
            if at >= n {
                break;
            }
            let next = data[at];
            if next == b'\n' || next == b'\r' {
                if next != b'\n' {
                    while at < n && data[at] != b'\n' {
                        at += 1;
                    }
                }
                if at < n {
                    at += 1;
                }
            } else if next == b'=' {
                out.push(b'=');
                at += 1;
            } else if let (Some(high), Some(low)) = (hex_value(next), data.get(at + 1).and_then(|&b| hex_value(b))) {
                out.push((high << 4) | low);
                at += 2;
            } else {
                out.push(b'=');
            }
        } else if header && byte == b'_' {
            out.push(b' ');
            at += 1;
        } else {
            out.push(byte);
            at += 1;
        }
    }
}

/// `urllib.parse.unquote(text)`: %XX escapes in the ASCII runs become bytes, read as UTF-8
/// with U+FFFD for invalid sequences; other characters stay.
pub fn unquote(text: &str) -> String {
    if !text.contains('%') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut run: Vec<u8> = Vec::new();
    let flush = |run: &mut Vec<u8>, out: &mut String| {
        if !run.is_empty() {
            out.push_str(&String::from_utf8_lossy(run));
            run.clear();
        }
    };
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte >= 0x80 {
            flush(&mut run, &mut out);
            let c = text[at..].chars().next().unwrap_or('\u{fffd}');
            out.push(c);
            at += c.len_utf8();
            continue;
        }
        if byte == b'%' {
            if let (Some(high), Some(low)) = (
                bytes.get(at + 1).and_then(|&b| hex_value(b)),
                bytes.get(at + 2).and_then(|&b| hex_value(b)),
            ) {
                run.push((high << 4) | low);
                at += 3;
                continue;
            }
        }
        run.push(byte);
        at += 1;
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(data: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        a2b_base64(data, &mut out).then_some(out)
    }

    #[test]
    fn base64_as_binascii() {
        assert_eq!(b64(b"QUJD"), Some(b"ABC".to_vec()));
        assert_eq!(b64(b"QQ==QUJD"), Some(b"A".to_vec()));
        assert_eq!(b64(b"Q U\nJ*D"), Some(b"ABC".to_vec()));
        assert_eq!(b64(b"QUJDRA"), None);
        let mut out = Vec::new();
        decode_base64_body(b"QUJDRA", &mut out);
        assert_eq!(out, b"ABC");
        assert_eq!(decode_base64_word(b"w6k"), Some("é".as_bytes().to_vec()));
        assert_eq!(decode_base64_word(b"@@@"), None);
        assert_eq!(decode_base64_word(b"Q"), None);
    }

    #[test]
    fn quoted_printable_as_binascii() {
        let mut out = Vec::new();
        a2b_qp(b"caf=E9 =\r\nx==y=zz=4", false, &mut out);
        assert_eq!(out, b"caf\xe9 x=y=zz=4");
        out.clear();
        a2b_qp(b"a_b=5F", true, &mut out);
        assert_eq!(out, b"a b_");
    }

    #[test]
    fn unquote_as_urllib() {
        assert_eq!(unquote("%77%77%77.x"), "www.x");
        assert_eq!(unquote("r%C3%A9sum%C3%A9%zz%"), "résumé%zz%");
        assert_eq!(unquote("%FFé"), "\u{fffd}é");
    }
}
