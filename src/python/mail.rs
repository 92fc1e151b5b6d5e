//! `_core.EmailTokenizer` and the email reading functions behind `streamnb.features.email`.

use super::errors::guard;
use super::tokenizer::{bag_hasher, bag_to_dict, WordTokenizer};
use crate::bag::Bag;
use crate::mail::features::EmailFeatures;
use crate::mail::message::{self, Header, HeaderValue, MimePart, Parsed};
use crate::mail::mime::Limits;
use crate::mail::{charset, header, html, url};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::borrow::Cow;
use std::sync::Mutex;

static COUNTER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// (content type, charset, transfer encoding, attachment, filename) of a MIME part.
type PartTuple = (String, Option<String>, Option<String>, bool, Option<String>);

/// The email tokenizer's settings in the core. A model path holding the Python
/// `EmailTokenizer` takes its `_core` attribute (this class) and calls
/// `features.count_into(raw, bag, hasher)`: bytes to a Bag with no Python string per token.
#[pyclass(module = "streamnb._core", frozen)]
pub struct EmailTokenizer {
    pub features: EmailFeatures,
    /// The Python strings of recent features, by their bag hash: a message's features are
    /// mostly ones seen before (header names, common words, domains), and a cached string
    /// costs neither decoding nor hashing again when the Counter is filled.
    strings: Mutex<Strings>,
}

/// Slots of the string cache (direct-mapped by the bag hash). 2^14 slots hit about a
/// tenth more of a message's features than 2^12 did on the SpamAssassin corpus (the
/// Counter's cost 21 -> 19 us a message); 2^16 gained little more.
const STRING_SLOTS: usize = 1 << 14;
/// Longer features are not cached (the cache holds at most STRING_SLOTS x this many bytes).
const CACHED_BYTES: usize = 64;

/// The last Python string seen in each slot, with its bag hash. The slots are allocated
/// at the first Counter filled: a tokenizer that only feeds a model (bytes to ids in the
/// core: every model's, one per user in `streamnb serve`) never holds them.
#[derive(Default)]
struct Strings {
    slots: Vec<Option<(u64, Py<PyString>)>>,
}

impl Strings {
    /// The str of a feature (hash: its bag hash): the cached one if it holds these bytes,
    /// else a new one, which takes the slot.
    fn get<'py>(&mut self, py: Python<'py>, feature: &[u8], hash: u64) -> PyResult<Bound<'py, PyAny>> {
        if feature.len() > CACHED_BYTES {
            return super::keys::token_of(py, feature);
        }
        if self.slots.is_empty() {
            self.slots.resize_with(STRING_SLOTS, || None);
        }
        let slot = &mut self.slots[(hash >> 50) as usize % STRING_SLOTS];
        if let Some((h, text)) = slot {
            if *h == hash && text.bind(py).to_str().is_ok_and(|s| s.as_bytes() == feature) {
                return Ok(text.bind(py).clone().into_any());
            }
        }
        let token = super::keys::token_of(py, feature)?;
        if let Ok(text) = token.cast::<PyString>() {
            *slot = Some((hash, text.clone().unbind()));
        }
        Ok(token)
    }
}

fn names(list: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    list.try_iter()?.map(|item| item?.extract::<String>()).collect()
}

fn parsed_tuple<'py>(py: Python<'py>, parsed: &Parsed<'_>) -> PyResult<Bound<'py, PyTuple>> {
    let headers = PyList::empty(py);
    for h in &parsed.headers {
        headers.append((h.name.as_ref(), h.value().as_ref()))?;
    }
    let parts = PyList::empty(py);
    for p in &parsed.parts {
        parts.append((
            p.content_type.as_str(),
            p.charset.as_deref(),
            p.transfer_encoding.as_deref(),
            p.attachment,
            p.filename.as_deref(),
        ))?;
    }
    let defects: Vec<&str> = parsed.defects.iter().map(|d| d.as_ref()).collect();
    PyTuple::new(
        py,
        [
            parsed.subject().into_pyobject(py)?.into_any(),
            parsed.body.as_str().into_pyobject(py)?.into_any(),
            headers.into_any(),
            PyList::new(py, parsed.urls.iter())?.into_any(),
            parts.into_any(),
            PyList::new(py, defects)?.into_any(),
        ],
    )
}

#[pymethods]
impl EmailTokenizer {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (*, words, binary, subject, address_headers, word_headers, header_names, ignored_headers,
                        urls, mime, max_bytes, sender_address=false))]
    fn new(
        words: PyRef<'_, WordTokenizer>,
        binary: bool,
        subject: bool,
        address_headers: &Bound<'_, PyAny>,
        word_headers: &Bound<'_, PyAny>,
        header_names: bool,
        ignored_headers: &Bound<'_, PyAny>,
        urls: bool,
        mime: bool,
        max_bytes: Option<usize>,
        sender_address: bool,
    ) -> PyResult<Self> {
        guard(|| {
            Ok(EmailTokenizer {
                features: EmailFeatures {
                    words: words.options.clone(),
                    binary,
                    subject,
                    address_headers: names(address_headers)?,
                    word_headers: names(word_headers)?,
                    header_names,
                    sender_address,
                    ignored_headers: names(ignored_headers)?,
                    urls,
                    mime,
                    max_bytes,
                    limits: Limits::default(),
                },
                strings: Mutex::default(),
            })
        })
    }

    /// {feature: count} of a raw message, in first-appearance order (the GIL is released
    /// while the message is read and counted): a dict with binary settings, else a
    /// collections.Counter (as the Python tokenizer always returned), filled in place.
    fn count<'py>(&self, py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let bag = py.detach(|| {
                let mut bag = Bag::default();
                self.features.count_into(raw, &mut bag, &bag_hasher());
                bag
            });
            let out = if self.features.binary {
                PyDict::new(py)
            } else {
                // Counter.__new__(Counter): an empty Counter without running its Python
                // __init__ (which only updates from arguments; there are none).
                let counter = COUNTER.get_or_try_init(py, || {
                    Ok::<_, PyErr>(py.import("collections")?.getattr("Counter")?.unbind())
                })?;
                let counter = counter.bind(py);
                counter
                    .call_method1("__new__", (counter,))?
                    .cast_into::<PyDict>()
                    .map_err(PyErr::from)?
            };
            // Another thread filling its own Counter (free-threaded Python) goes without the cache.
            let mut cache = self.strings.try_lock().ok();
            for i in 0..bag.len() {
                let token = match cache.as_deref_mut() {
                    Some(cache) => cache.get(py, bag.feature(i), bag.hash(i))?,
                    None => super::keys::token_of(py, bag.feature(i))?,
                };
                out.set_item(token, bag.count(i) as i64)?;
            }
            Ok(out)
        })
    }

    /// The field a feature belongs to (`EmailFeatures::field`): "body", "subject", "url",
    /// "address", "header", "mime", "sender" or "other".
    fn field(&self, feature: &Bound<'_, PyString>) -> PyResult<&'static str> {
        guard(|| {
            let mut scratch = Vec::new();
            Ok(self.features.field(super::keys::str_key(feature, &mut scratch)?).name())
        })
    }

    /// The number of distinct features of a raw message: the core's whole work (reading,
    /// counting, hashing) without a Python string per feature, as a model path pays it.
    fn feature_count(&self, py: Python<'_>, raw: &[u8]) -> PyResult<usize> {
        guard(|| {
            Ok(py.detach(|| {
                let mut bag = Bag::default();
                self.features.count_into(raw, &mut bag, &bag_hasher());
                bag.len()
            }))
        })
    }

    /// (body, subject, {header/URL/MIME feature: count}) of a raw message, for body
    /// settings the core does not implement (a custom token pattern, stemming).
    fn split<'py>(&self, py: Python<'py>, raw: &[u8]) -> PyResult<(String, String, Bound<'py, PyDict>)> {
        guard(|| {
            let parsed = self.features.parse(raw);
            let mut bag = Bag::default();
            self.features.extras(&parsed, &mut bag, &bag_hasher());
            let subject = if self.features.subject {
                parsed.subject().into_owned()
            } else {
                String::new()
            };
            Ok((parsed.body.clone(), subject, bag_to_dict(py, &bag)?))
        })
    }

    /// {feature: count} of the header, URL and MIME features of an already parsed message
    /// (ParsedMessage's fields).
    fn extras<'py>(
        &self,
        py: Python<'py>,
        headers: Vec<(String, String)>,
        urls: Vec<String>,
        parts: Vec<PartTuple>,
        defects: Vec<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let parsed = Parsed {
                headers: headers
                    .into_iter()
                    .map(|(name, value)| Header {
                        name: name.into(),
                        value: HeaderValue::Decoded(value),
                    })
                    .collect(),
                body: String::new(),
                urls: urls.iter().collect(),
                parts: parts
                    .into_iter()
                    .map(
                        |(content_type, charset, transfer_encoding, attachment, filename)| MimePart {
                            content_type,
                            charset,
                            transfer_encoding,
                            attachment,
                            filename,
                        },
                    )
                    .collect(),
                defects: defects.into_iter().map(Cow::Owned).collect(),
            };
            let mut bag = Bag::default();
            self.features.extras(&parsed, &mut bag, &bag_hasher());
            bag_to_dict(py, &bag)
        })
    }
}

/// (subject, body, headers, urls, parts, defects) of a raw message.
#[pyfunction]
#[pyo3(signature = (raw, max_bytes))]
pub fn parse_message<'py>(py: Python<'py>, raw: &[u8], max_bytes: Option<usize>) -> PyResult<Bound<'py, PyTuple>> {
    guard(|| {
        let parsed = message::parse(raw, max_bytes, Limits::default());
        parsed_tuple(py, &parsed)
    })
}

/// Bytes decoded with a declared charset (see `mail::charset`).
#[pyfunction]
#[pyo3(signature = (data, charset=None))]
pub fn decode_bytes(data: &[u8], charset: Option<&str>) -> PyResult<String> {
    guard(|| Ok(charset::decode(data, charset)))
}

/// A raw header value decoded (8-bit bytes, folding, encoded words).
#[pyfunction]
pub fn decode_header_value(raw: &[u8]) -> PyResult<String> {
    guard(|| Ok(header::decode_value(raw)))
}

/// (visible text, link targets) of HTML.
#[pyfunction]
pub fn html_to_text(markup: &str) -> PyResult<(String, Vec<String>)> {
    guard(|| {
        let mut links = html::Urls::default();
        html::links(markup, &mut links);
        let mut text = String::with_capacity(markup.len());
        html::to_text(markup, &mut text);
        Ok((text, links.iter().map(str::to_string).collect()))
    })
}

/// The lowercase host of an absolute URL, None for others.
#[pyfunction]
pub fn url_host(link: &str) -> PyResult<Option<String>> {
    guard(|| Ok(url::host(link)))
}
