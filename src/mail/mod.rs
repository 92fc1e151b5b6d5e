//! Email: raw RFC 822 bytes -> the email tokenizer's features, bounded on any input.

pub mod charset;
pub mod features;
mod entities;
pub mod header;
pub mod html;
pub mod message;
pub mod mime;
pub mod transfer;
pub mod url;
#[cfg(test)]
mod fuzz_harness;
