//! Bytes to text with a declared charset, never failing.
//!
//! The rule streamnb always applied: a charset the decoder knows decodes with U+FFFD for
//! bytes it cannot map; an absent, unknown or ASCII charset ("us-ascii" is very often
//! declared on 8-bit text) reads the bytes as UTF-8 if they are valid UTF-8, else as
//! Latin-1, so no byte is lost. The decoders are encoding_rs's, i.e. the WHATWG Encoding
//! Standard's (what browsers and mail readers use): its labels first, then Python's codec
//! names and aliases (which mail also carries, e.g. "latin_1", "ks_c_5601") mapped to the
//! same decoders. Where the two disagree the WHATWG reading is taken, because that is how
//! the recipient's reader displays the mail: "iso-8859-1" bytes 0x80-0x9F are Windows-1252
//! characters (Python's Latin-1 codec made them C1 controls), "gb2312"/"big5"/"shift_jis"
//! are read with their supersets (GBK, Big5-HKSCS, Windows-31J) instead of U+FFFD.
//! Charsets encoding_rs cannot decode faithfully (its "replacement" encoding for ISO-2022-KR,
//! HZ and ISO-2022-CN, and x-user-defined) count as unknown.

use crate::tokenize::py_strip;
use encoding_rs::{Encoding, REPLACEMENT, X_USER_DEFINED};

/// Declared charsets read as undeclared (mail labelled ASCII is often 8-bit text).
const ASCII_NAMES: &[&str] = &["us-ascii", "ascii", "ansi_x3.4-1968", "us", "iso646-us", "7bit", "8bit"];

/// How a charset name decodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Charset {
    /// Python's "ascii" codec under another of its names: bytes >= 0x80 become U+FFFD.
    Ascii,
    Known(&'static Encoding),
}

/// Python's codec name normalisation (`encodings.normalize_encoding`, lowercased): runs of
/// characters other than ASCII letters, digits and "." become one "_".
fn python_normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut punct = false;
    for c in name.chars() {
        if c.is_alphanumeric() || c == '.' {
            if punct && !out.is_empty() {
                out.push('_');
            }
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            }
            punct = false;
        } else {
            punct = true;
        }
    }
    out
}

/// The decoder of a (stripped, lowercased) charset name, None if unknown.
pub fn lookup(name: &str) -> Option<Charset> {
    let normalized = python_normalize(name);
    let python = |key: &str| {
        PYTHON_NAMES
            .binary_search_by_key(&key, |&(k, _)| k)
            .ok()
            .map(|i| PYTHON_NAMES[i].1)
    };
    if python(&normalized) == Some("ascii") {
        return Some(Charset::Ascii);
    }
    let found = Encoding::for_label_no_replacement(name.as_bytes())
        .or_else(|| python(&normalized).and_then(|label| Encoding::for_label(label.as_bytes())))
        .or_else(|| python(&normalized.replace('.', "_")).and_then(|label| Encoding::for_label(label.as_bytes())));
    match found {
        Some(encoding) if encoding != REPLACEMENT && encoding != X_USER_DEFINED => Some(Charset::Known(encoding)),
        _ => None,
    }
}

/// The charset a message declares, as decode_into reads it: None for undeclared or ASCII.
pub fn declared(charset: Option<&str>) -> Option<Charset> {
    let name = py_strip(charset?).trim_matches(|c| c == '"' || c == '\'');
    if name.is_empty() {
        return None;
    }
    let lower = name.to_lowercase();
    if ASCII_NAMES.contains(&lower.as_str()) {
        return None;
    }
    lookup(&lower)
}

/// Append `data` decoded with `charset` (see the module docs) to `out`.
pub fn decode_into(data: &[u8], charset: Option<&str>, out: &mut String) {
    match declared(charset) {
        Some(Charset::Known(encoding)) => {
            let text = if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
                // Python's utf-16 codecs drop a leading byte order mark.
                encoding.decode(data).0
            } else {
                encoding.decode_without_bom_handling(data).0
            };
            out.push_str(&text);
        }
        Some(Charset::Ascii) if data.is_ascii() => out.push_str(std::str::from_utf8(data).unwrap_or_default()),
        Some(Charset::Ascii) => byte_per_char(data, out, |_| '\u{fffd}'),
        None => decode_undeclared(data, out),
    }
}

/// UTF-8 if the bytes are valid UTF-8, else Latin-1 (every byte one character).
pub fn decode_undeclared(data: &[u8], out: &mut String) {
    match std::str::from_utf8(data) {
        Ok(text) => out.push_str(text),
        Err(_) => byte_per_char(data, out, char::from),
    }
}

/// Every byte one character: ASCII bytes as they are, each other byte as `high` maps it.
/// Mail text is mostly ASCII even when it is not UTF-8: its runs are copied whole, not
/// pushed character by character.
fn byte_per_char(data: &[u8], out: &mut String, high: impl Fn(u8) -> char) {
    out.reserve(data.len());
    let mut rest = data;
    while let Some(at) = rest.iter().position(|&b| b >= 0x80) {
        out.push_str(std::str::from_utf8(&rest[..at]).unwrap_or_default());
        out.push(high(rest[at]));
        rest = &rest[at + 1..];
    }
    out.push_str(std::str::from_utf8(rest).unwrap_or_default());
}

/// `decode_into` to a new String.
pub fn decode(data: &[u8], charset: Option<&str>) -> String {
    let mut out = String::with_capacity(data.len());
    decode_into(data, charset, &mut out);
    out
}

/// Python codec names and aliases (normalised) -> the WHATWG label of the same charset.
/// From Python's encodings.aliases for the codecs encoding_rs also implements.
static PYTHON_NAMES: &[(&str, &str)] = &[
    ("1250", "windows-1250"),
    ("1251", "windows-1251"),
    ("1252", "windows-1252"),
    ("1253", "windows-1253"),
    ("1254", "windows-1254"),
    ("1255", "windows-1255"),
    ("1256", "windows-1256"),
    ("1257", "windows-1257"),
    ("1258", "windows-1258"),
    ("646", "ascii"),
    ("866", "IBM866"),
    ("8859", "windows-1252"),
    ("932", "Shift_JIS"),
    ("936", "GBK"),
    ("949", "EUC-KR"),
    ("950", "Big5"),
    ("ansi_x3.4_1968", "ascii"),
    ("ansi_x3.4_1986", "ascii"),
    ("ansi_x3_4_1968", "ascii"),
    ("arabic", "ISO-8859-6"),
    ("ascii", "ascii"),
    ("asmo_708", "ISO-8859-6"),
    ("big5", "Big5"),
    ("big5_hkscs", "Big5"),
    ("big5_tw", "Big5"),
    ("big5hkscs", "Big5"),
    ("chinese", "GBK"),
    ("cp1250", "windows-1250"),
    ("cp1251", "windows-1251"),
    ("cp1252", "windows-1252"),
    ("cp1253", "windows-1253"),
    ("cp1254", "windows-1254"),
    ("cp1255", "windows-1255"),
    ("cp1256", "windows-1256"),
    ("cp1257", "windows-1257"),
    ("cp1258", "windows-1258"),
    ("cp367", "ascii"),
    ("cp65001", "UTF-8"),
    ("cp819", "windows-1252"),
    ("cp866", "IBM866"),
    ("cp874", "windows-874"),
    ("cp932", "Shift_JIS"),
    ("cp936", "GBK"),
    ("cp949", "EUC-KR"),
    ("cp950", "Big5"),
    ("csascii", "ascii"),
    ("csbig5", "Big5"),
    ("csibm866", "IBM866"),
    ("csiso2022jp", "ISO-2022-JP"),
    ("csiso58gb231280", "GBK"),
    ("csisolatin1", "windows-1252"),
    ("csisolatin2", "ISO-8859-2"),
    ("csisolatin3", "ISO-8859-3"),
    ("csisolatin4", "ISO-8859-4"),
    ("csisolatin5", "windows-1254"),
    ("csisolatin6", "ISO-8859-10"),
    ("csisolatinarabic", "ISO-8859-6"),
    ("csisolatincyrillic", "ISO-8859-5"),
    ("csisolatingreek", "ISO-8859-7"),
    ("csisolatinhebrew", "ISO-8859-8"),
    ("cskoi8r", "KOI8-R"),
    ("csshiftjis", "Shift_JIS"),
    ("cyrillic", "ISO-8859-5"),
    ("ecma_114", "ISO-8859-6"),
    ("ecma_118", "ISO-8859-7"),
    ("elot_928", "ISO-8859-7"),
    ("euc_cn", "GBK"),
    ("euc_jp", "EUC-JP"),
    ("euc_kr", "EUC-KR"),
    ("euccn", "GBK"),
    ("eucgb2312_cn", "GBK"),
    ("eucjp", "EUC-JP"),
    ("euckr", "EUC-KR"),
    ("gb18030", "gb18030"),
    ("gb18030_2000", "gb18030"),
    ("gb2312", "GBK"),
    ("gb2312_1980", "GBK"),
    ("gb2312_80", "GBK"),
    ("gbk", "GBK"),
    ("greek", "ISO-8859-7"),
    ("greek8", "ISO-8859-7"),
    ("hebrew", "ISO-8859-8"),
    ("hkscs", "Big5"),
    ("ibm367", "ascii"),
    ("ibm819", "windows-1252"),
    ("ibm866", "IBM866"),
    ("iso2022_jp", "ISO-2022-JP"),
    ("iso2022jp", "ISO-2022-JP"),
    ("iso646_us", "ascii"),
    ("iso8859", "windows-1252"),
    ("iso8859_1", "windows-1252"),
    ("iso8859_10", "ISO-8859-10"),
    ("iso8859_11", "windows-874"),
    ("iso8859_13", "ISO-8859-13"),
    ("iso8859_14", "ISO-8859-14"),
    ("iso8859_15", "ISO-8859-15"),
    ("iso8859_16", "ISO-8859-16"),
    ("iso8859_2", "ISO-8859-2"),
    ("iso8859_3", "ISO-8859-3"),
    ("iso8859_4", "ISO-8859-4"),
    ("iso8859_5", "ISO-8859-5"),
    ("iso8859_6", "ISO-8859-6"),
    ("iso8859_7", "ISO-8859-7"),
    ("iso8859_8", "ISO-8859-8"),
    ("iso8859_9", "windows-1254"),
    ("iso_2022_jp", "ISO-2022-JP"),
    ("iso_646.irv_1991", "ascii"),
    ("iso_8859_1", "windows-1252"),
    ("iso_8859_10", "ISO-8859-10"),
    ("iso_8859_10_1992", "ISO-8859-10"),
    ("iso_8859_11", "windows-874"),
    ("iso_8859_11_2001", "windows-874"),
    ("iso_8859_13", "ISO-8859-13"),
    ("iso_8859_14", "ISO-8859-14"),
    ("iso_8859_14_1998", "ISO-8859-14"),
    ("iso_8859_15", "ISO-8859-15"),
    ("iso_8859_16", "ISO-8859-16"),
    ("iso_8859_16_2001", "ISO-8859-16"),
    ("iso_8859_1_1987", "windows-1252"),
    ("iso_8859_2", "ISO-8859-2"),
    ("iso_8859_2_1987", "ISO-8859-2"),
    ("iso_8859_3", "ISO-8859-3"),
    ("iso_8859_3_1988", "ISO-8859-3"),
    ("iso_8859_4", "ISO-8859-4"),
    ("iso_8859_4_1988", "ISO-8859-4"),
    ("iso_8859_5", "ISO-8859-5"),
    ("iso_8859_5_1988", "ISO-8859-5"),
    ("iso_8859_6", "ISO-8859-6"),
    ("iso_8859_6_1987", "ISO-8859-6"),
    ("iso_8859_7", "ISO-8859-7"),
    ("iso_8859_7_1987", "ISO-8859-7"),
    ("iso_8859_8", "ISO-8859-8"),
    ("iso_8859_8_1988", "ISO-8859-8"),
    ("iso_8859_9", "windows-1254"),
    ("iso_8859_9_1989", "windows-1254"),
    ("iso_celtic", "ISO-8859-14"),
    ("iso_ir_100", "windows-1252"),
    ("iso_ir_101", "ISO-8859-2"),
    ("iso_ir_109", "ISO-8859-3"),
    ("iso_ir_110", "ISO-8859-4"),
    ("iso_ir_126", "ISO-8859-7"),
    ("iso_ir_127", "ISO-8859-6"),
    ("iso_ir_138", "ISO-8859-8"),
    ("iso_ir_144", "ISO-8859-5"),
    ("iso_ir_148", "windows-1254"),
    ("iso_ir_157", "ISO-8859-10"),
    ("iso_ir_166", "windows-874"),
    ("iso_ir_199", "ISO-8859-14"),
    ("iso_ir_226", "ISO-8859-16"),
    ("iso_ir_58", "GBK"),
    ("iso_ir_6", "ascii"),
    ("koi8_r", "KOI8-R"),
    ("koi8_u", "KOI8-U"),
    ("korean", "EUC-KR"),
    ("ks_c_5601", "EUC-KR"),
    ("ks_c_5601_1987", "EUC-KR"),
    ("ks_x_1001", "EUC-KR"),
    ("ksc5601", "EUC-KR"),
    ("ksx1001", "EUC-KR"),
    ("l1", "windows-1252"),
    ("l10", "ISO-8859-16"),
    ("l2", "ISO-8859-2"),
    ("l3", "ISO-8859-3"),
    ("l4", "ISO-8859-4"),
    ("l5", "windows-1254"),
    ("l6", "ISO-8859-10"),
    ("l7", "ISO-8859-13"),
    ("l8", "ISO-8859-14"),
    ("l9", "ISO-8859-15"),
    ("latin", "windows-1252"),
    ("latin1", "windows-1252"),
    ("latin10", "ISO-8859-16"),
    ("latin2", "ISO-8859-2"),
    ("latin3", "ISO-8859-3"),
    ("latin4", "ISO-8859-4"),
    ("latin5", "windows-1254"),
    ("latin6", "ISO-8859-10"),
    ("latin7", "ISO-8859-13"),
    ("latin8", "ISO-8859-14"),
    ("latin9", "ISO-8859-15"),
    ("latin_1", "windows-1252"),
    ("mac_cyrillic", "x-mac-cyrillic"),
    ("mac_roman", "macintosh"),
    ("maccyrillic", "x-mac-cyrillic"),
    ("macintosh", "macintosh"),
    ("macroman", "macintosh"),
    ("ms932", "Shift_JIS"),
    ("ms936", "GBK"),
    ("ms949", "EUC-KR"),
    ("ms950", "Big5"),
    ("ms_kanji", "Shift_JIS"),
    ("mskanji", "Shift_JIS"),
    ("s_jis", "Shift_JIS"),
    ("shift_jis", "Shift_JIS"),
    ("shiftjis", "Shift_JIS"),
    ("sjis", "Shift_JIS"),
    ("thai", "windows-874"),
    ("tis620", "windows-874"),
    ("tis_620", "windows-874"),
    ("tis_620_0", "windows-874"),
    ("tis_620_2529_0", "windows-874"),
    ("tis_620_2529_1", "windows-874"),
    ("u16", "UTF-16LE"),
    ("u8", "UTF-8"),
    ("u_jis", "EUC-JP"),
    ("uhc", "EUC-KR"),
    ("ujis", "EUC-JP"),
    ("unicodebigunmarked", "UTF-16BE"),
    ("unicodelittleunmarked", "UTF-16LE"),
    ("us", "ascii"),
    ("us_ascii", "ascii"),
    ("utf", "UTF-8"),
    ("utf16", "UTF-16LE"),
    ("utf8", "UTF-8"),
    ("utf8_ucs2", "UTF-8"),
    ("utf8_ucs4", "UTF-8"),
    ("utf_16", "UTF-16LE"),
    ("utf_16_be", "UTF-16BE"),
    ("utf_16_le", "UTF-16LE"),
    ("utf_16be", "UTF-16BE"),
    ("utf_16le", "UTF-16LE"),
    ("utf_8", "UTF-8"),
    ("windows_1250", "windows-1250"),
    ("windows_1251", "windows-1251"),
    ("windows_1252", "windows-1252"),
    ("windows_1253", "windows-1253"),
    ("windows_1254", "windows-1254"),
    ("windows_1255", "windows-1255"),
    ("windows_1256", "windows-1256"),
    ("windows_1257", "windows-1257"),
    ("windows_1258", "windows-1258"),
    ("x_mac_japanese", "Shift_JIS"),
    ("x_mac_korean", "EUC-KR"),
    ("x_mac_simp_chinese", "GBK"),
    ("x_mac_trad_chinese", "Big5"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_and_whatwg_names() {
        assert_eq!(decode(b"caf\xc3\xa9", None), "café");
        assert_eq!(decode(b"caf\xe9", None), "café");
        assert_eq!(decode(b"caf\xe9", Some("iso-8859-15")), "café");
        assert_eq!(decode(b"\xa4", Some("iso-8859-15")), "€");
        assert_eq!(decode(b"\xa4", Some(" ISO_8859-15 ")), "€");
        assert_eq!(decode(b"\xa4", Some("latin9")), "€");
        assert_eq!(decode(b"caf\xe9", Some("utf-8")), "caf\u{fffd}");
        assert_eq!(decode(b"caf\xe9", Some("\"bogus\"")), "café");
        assert_eq!(decode(b"caf\xe9", Some("us-ascii")), "café");
        assert_eq!(decode(b"caf\xe9", Some("646")), "caf\u{fffd}");
        assert_eq!(decode(b"\x93q\x94", Some("iso-8859-1")), "\u{201c}q\u{201d}");
        assert_eq!(decode(b"\xb0\xa1", Some("ks_c_5601-1987")), "가");
        assert_eq!(decode(b"\xf0\xd2\xc9\xd7\xc5\xd4", Some("koi8-r")), "Привет");
        assert_eq!(decode(b"abc", Some("hz-gb-2312")), "abc");
        assert_eq!(decode(b"\xff\xfea\x00", Some("utf-16")), "a");
    }
}
