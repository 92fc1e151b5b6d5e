//! Host names of links and addresses, and the domain suffixes that become features.

use super::transfer::unquote;
use crate::tokenize::{is_digit, is_word_char, py_strip, python_lower};

/// Link labels kept per host: `a.b.c.d.e.f.g.h.i.j` gives its last 8 labels' suffixes.
const MAX_HOST_LABELS: usize = 8;

/// Lowercase host of an absolute URL (`http://user@Www.Example.com:80/x` ->
/// `www.example.com`), None for relative, mailto: and malformed links. The authority is
/// `(?:(?:https?|ftp):)?//([^/?#\\]*)|(www\.[^/?#\\]*)` (ignoring case) at the start; the
/// host must read `[\w-]+(?:\.[\w-]+)*` (at most 253 characters) once %-escapes are decoded.
pub fn host(url: &str) -> Option<String> {
    let mut lower = String::new();
    host_into(url, &mut lower).then_some(lower)
}

/// `host` written into `lower` (cleared first; a buffer reused across URLs, where `host`
/// allocated a String each): false, and `lower` unspecified, when there is none.
pub fn host_into(url: &str, lower: &mut String) -> bool {
    lower.clear();
    let url = py_strip(url);
    // The longest prefix sought is 8 bytes: those are lowercased once, not once a prefix.
    let mut head = [0u8; 8];
    let n = url.len().min(head.len());
    head[..n].copy_from_slice(&url.as_bytes()[..n]);
    head.make_ascii_lowercase();
    let head = &head[..n];
    let after_scheme = [&b"https://"[..], b"http://", b"ftp://", b"//"]
        .into_iter()
        .find(|p| head.starts_with(p))
        .map(|p| p.len());
    let authority_start = match after_scheme {
        Some(start) => start,
        None if head.starts_with(b"www.") => 0,
        None => return false,
    };
    // The delimiters are ASCII: byte searches find the same places as char searches.
    let rest = &url[authority_start..];
    let authority = &rest[..rest
        .bytes()
        .position(|b| matches!(b, b'/' | b'?' | b'#' | b'\\'))
        .unwrap_or(rest.len())];
    let host = memchr::memrchr(b'@', authority.as_bytes()).map_or(authority, |at| &authority[at + 1..]);
    let host = &host[..memchr::memchr(b':', host.as_bytes()).unwrap_or(host.len())];
    let decoded;
    let host = if host.as_bytes().contains(&b'%') {
        decoded = unquote(host);
        decoded.as_str()
    } else {
        host
    };
    let host = host.trim_matches('.');
    // Most hosts are valid ASCII: checked before lowercasing (which changes no ASCII
    // host's validity), they are copied once; other hosts are checked as Python lowers them.
    if ascii_host(host.as_bytes()) {
        lower.push_str(host);
        lower.make_ascii_lowercase();
        return true;
    }
    python_lower(host, lower);
    !lower.is_empty()
        && if lower.is_ascii() {
            ascii_host(lower.as_bytes())
        } else {
            lower.chars().count() <= 253
                && lower
                    .split('.')
                    .all(|label| !label.is_empty() && label.chars().all(|c| c == '-' || is_word_char(c)))
        }
}

/// Is `host` ASCII labels `[\w-]+` joined by single dots, at most 253 bytes? One pass over
/// the bytes (false for non-ASCII hosts: they are checked by characters).
fn ascii_host(host: &[u8]) -> bool {
    let mut label = 0usize;
    for &b in host {
        if b == b'.' {
            if label == 0 {
                return false;
            }
            label = 0;
        } else if b == b'-' || (b.is_ascii() && is_word_char(char::from(b))) {
            label += 1;
        } else {
            return false;
        }
    }
    label > 0 && host.len() <= 253
}

/// `a.b.example.com` -> the host and each parent domain down to `com`; an IPv4 host
/// (`\d{1,3}(?:\.\d{1,3}){3}`) is itself plus `ip` (numeric hosts have no hierarchy).
pub fn suffixes(host: &str, mut emit: impl FnMut(&str)) {
    let dots = host.bytes().filter(|&b| b == b'.').count();
    let ipv4 = dots == 3
        && host
            .split('.')
            .all(|l| (1..=3).contains(&l.chars().count()) && l.chars().all(is_digit));
    if ipv4 {
        emit(host);
        emit("ip");
        return;
    }
    // The last MAX_HOST_LABELS labels: start after the dot that many labels from the end.
    // (Hosts are short: a byte loop finds their dots faster than a str search.)
    let skip = (dots + 1).saturating_sub(MAX_HOST_LABELS);
    let bytes = host.as_bytes();
    let mut start = if skip == 0 {
        0
    } else {
        memchr::memchr_iter(b'.', bytes).nth(skip - 1).map_or(0, |at| at + 1)
    };
    loop {
        emit(&host[start..]);
        match bytes[start..].iter().position(|&b| b == b'.') {
            Some(dot) => start += dot + 1,
            None => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_as_python() {
        let cases = [
            ("http://Www.Example.COM/path", Some("www.example.com")),
            ("https://user:pw@example.com:8443/x?y#z", Some("example.com")),
            ("ftp://files.example.org", Some("files.example.org")),
            ("//cdn.example.net/a.js", Some("cdn.example.net")),
            ("www.example.co.uk/offer", Some("www.example.co.uk")),
            ("http://%77%77%77.example.com/", Some("www.example.com")),
            ("http://10.0.0.1/", Some("10.0.0.1")),
            ("http://example.com./", Some("example.com")),
            ("mailto:a@example.com", None),
            ("/relative/path", None),
            ("http:///nohost", None),
            ("http://bad host/", None),
            ("javascript:alert(1)", None),
            ("HTTP://A..B/", None),
            ("http://\u{212a}.Example.com/", Some("k.example.com")), // Kelvin sign: lowers to ASCII
            ("http://Caf\u{e9}.example/", Some("caf\u{e9}.example")),
            ("http://a_b-c.d.e.f/", Some("a_b-c.d.e.f")),
            ("http://a.b-/", Some("a.b-")),
            ("http://.a./", Some("a")),
            ("http://a$b.com/", None),
        ];
        for (url, expected) in cases {
            assert_eq!(host(url).as_deref(), expected, "{url}");
        }
    }

    #[test]
    fn suffixes_of_hosts() {
        let mut out = Vec::new();
        suffixes("a.b.example.com", |s| out.push(s.to_string()));
        suffixes("10.0.0.1", |s| out.push(s.to_string()));
        suffixes("1.2.3.4.5.6.7.8.9.10", |s| out.push(s.to_string()));
        assert_eq!(
            out[..6],
            [
                "a.b.example.com",
                "b.example.com",
                "example.com",
                "com",
                "10.0.0.1",
                "ip"
            ]
        );
        assert_eq!(out[6], "3.4.5.6.7.8.9.10");
        assert_eq!(out.len(), 14);
    }
}
