//! The requests and responses carried inside the encrypted channel: small JSON documents, one per
//! Noise transport message, with byte strings as standard base64.
//!
//! ```text
//! request:  "ping" | {"wrap":{"context":"…","plaintext":"<b64>"}} | {"unwrap":{"context":"…","ciphertext":"<b64>"}}
//! response: "pong" | {"wrapped":{"ciphertext":"<b64>"}} | {"unwrapped":{"plaintext":"<b64>"}} | {"error":{"message":"…"}}
//! ```
//!
//! Plaintexts travel only inside these messages; the buffers that hold them (encoded or not) are
//! zeroed when dropped, as far as serde allows (it may copy a string that needs unescaping, which
//! base64 never does).

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use zeroize::Zeroizing;

/// A request from the runtime.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Request {
    /// Health check; answered with [`Response::Pong`].
    Ping,
    /// Wrap `plaintext` under the active master key, bound to `context`.
    Wrap { context: String, plaintext: Bytes },
    /// Unwrap `ciphertext`, which must have been wrapped under `context`.
    Unwrap { context: String, ciphertext: Bytes },
}

impl Request {
    /// The operation's name, for logs.
    pub(crate) fn op(&self) -> &'static str {
        match self {
            Self::Ping => "ping",
            Self::Wrap { .. } => "wrap",
            Self::Unwrap { .. } => "unwrap",
        }
    }
}

/// The daemon's answer to one request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Response {
    /// Answer to [`Request::Ping`].
    Pong,
    /// Answer to [`Request::Wrap`].
    Wrapped { ciphertext: Bytes },
    /// Answer to [`Request::Unwrap`].
    Unwrapped { plaintext: Bytes },
    /// The request was refused; the message says why (never with secrets in it).
    Error { message: String },
}

/// Encodes a message for [`crate::wire::Channel::send`]. The buffer is zeroed on drop; it is
/// allocated large enough up front that it never reallocates (which would leave an unzeroed copy).
pub(crate) fn encode<T: Serialize>(message: &T) -> Result<Zeroizing<Vec<u8>>, serde_json::Error> {
    let mut out = Zeroizing::new(Vec::with_capacity(16 * 1024));
    serde_json::to_writer(&mut *out, message)?;
    Ok(out)
}

/// Decodes a message received from [`crate::wire::Channel::recv`].
pub(crate) fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// Bytes that travel as base64 and are zeroed when dropped (plaintexts and ciphertexts alike, so
/// one type covers both).
pub(crate) struct Bytes(pub(crate) Zeroizing<Vec<u8>>);

impl Bytes {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        Self(Zeroizing::new(bytes.to_vec()))
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bytes({} bytes)", self.0.len())
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let encoded = Zeroizing::new(BASE64.encode(&*self.0));
        serializer.serialize_str(&encoded)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Base64Visitor;
        impl Visitor<'_> for Base64Visitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a base64 string")
            }
            // Only `visit_str`: serde_json hands borrowed and escaped strings alike to it, so the
            // text is decoded straight from the input without an owned copy.
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                BASE64
                    .decode(v)
                    .map(|b| Bytes(Zeroizing::new(b)))
                    .map_err(|_| E::custom("invalid base64"))
            }
        }
        deserializer.deserialize_str(Base64Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_format_is_the_documented_one() {
        assert_eq!(&**encode(&Request::Ping).unwrap(), br#""ping""#);
        let wrap = Request::Wrap {
            context: "t1/k1".into(),
            plaintext: Bytes::new(b"\x00\x01\x02"),
        };
        assert_eq!(
            std::str::from_utf8(&encode(&wrap).unwrap()).unwrap(),
            r#"{"wrap":{"context":"t1/k1","plaintext":"AAEC"}}"#
        );
        let err = Response::Error {
            message: "no".into(),
        };
        assert_eq!(&**encode(&err).unwrap(), br#"{"error":{"message":"no"}}"#);
        let back: Request = decode(br#"{"unwrap":{"context":"c","ciphertext":"AAEC"}}"#).unwrap();
        let Request::Unwrap {
            context,
            ciphertext,
        } = back
        else {
            panic!("wrong variant");
        };
        assert_eq!(
            (context.as_str(), &**ciphertext.0),
            ("c", &b"\x00\x01\x02"[..])
        );
    }

    #[test]
    fn malformed_messages_are_errors() {
        for bad in [
            &br#""pang""#[..],
            br#"{"wrap":{"context":"c","plaintext":"!!"}}"#,
            br#"{"wrap":{"context":"c","plaintext":"AAEC","extra":1}}"#,
            br#"{"wrap":{"context":"c"}}"#,
            b"\xff\xfe",
        ] {
            assert!(
                decode::<Request>(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn debug_never_shows_the_bytes() {
        let wrap = Request::Wrap {
            context: "c".into(),
            plaintext: Bytes::new(b"secret"),
        };
        assert!(!format!("{wrap:?}").contains("secret"));
    }
}
