//! Email: raw RFC 822 bytes -> the email tokenizer's features, bounded on any input.

pub mod charset;
mod entities;
pub mod features;
#[cfg(test)]
mod fuzz_harness;
pub mod header;
pub mod html;
pub mod message;
pub mod mime;
pub mod transfer;
pub mod url;
