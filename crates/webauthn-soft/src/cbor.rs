//! The few CBOR (RFC 8949) items WebAuthn needs, written by hand: unsigned and negative
//! integers, byte strings, text strings and map headers, always in the shortest form. Keys are
//! written in the order the caller gives, which the callers keep in CTAP2 canonical order.

/// Major type 0: unsigned integer.
const UNSIGNED: u8 = 0;
/// Major type 1: negative integer (`-1 - n`).
const NEGATIVE: u8 = 1;
/// Major type 2: byte string.
const BYTES: u8 = 2;
/// Major type 3: UTF-8 text string.
const TEXT: u8 = 3;
/// Major type 5: map of pairs.
const MAP: u8 = 5;

/// Writes an item head: the major type and its argument in the shortest encoding.
fn head(out: &mut Vec<u8>, major: u8, argument: u64) {
    let major = major << 5;
    if argument < 24 {
        // Fits the low five bits: the cast cannot truncate.
        out.push(major | argument as u8);
    } else if let Ok(small) = u8::try_from(argument) {
        out.extend_from_slice(&[major | 24, small]);
    } else if let Ok(short) = u16::try_from(argument) {
        out.push(major | 25);
        out.extend_from_slice(&short.to_be_bytes());
    } else if let Ok(word) = u32::try_from(argument) {
        out.push(major | 26);
        out.extend_from_slice(&word.to_be_bytes());
    } else {
        out.push(major | 27);
        out.extend_from_slice(&argument.to_be_bytes());
    }
}

/// Writes an integer (major type 0 or 1).
pub(crate) fn int(out: &mut Vec<u8>, value: i64) {
    match u64::try_from(value) {
        Ok(unsigned) => head(out, UNSIGNED, unsigned),
        // -1 - value is non-negative and fits: value is at least i64::MIN.
        Err(_) => head(out, NEGATIVE, (-1 - value).unsigned_abs()),
    }
}

/// Writes a byte string.
pub(crate) fn bytes(out: &mut Vec<u8>, value: &[u8]) {
    head(out, BYTES, value.len() as u64);
    out.extend_from_slice(value);
}

/// Writes a text string.
pub(crate) fn text(out: &mut Vec<u8>, value: &str) {
    head(out, TEXT, value.len() as u64);
    out.extend_from_slice(value.as_bytes());
}

/// Writes the head of a map of `pairs` pairs; the caller writes each key and value after it.
pub(crate) fn map(out: &mut Vec<u8>, pairs: u64) {
    head(out, MAP, pairs);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out);
        out
    }

    #[test]
    fn integers_use_the_shortest_head() {
        // RFC 8949 appendix A.
        assert_eq!(encoded(|o| int(o, 0)), [0x00]);
        assert_eq!(encoded(|o| int(o, 23)), [0x17]);
        assert_eq!(encoded(|o| int(o, 24)), [0x18, 0x18]);
        assert_eq!(encoded(|o| int(o, 1000)), [0x19, 0x03, 0xe8]);
        assert_eq!(
            encoded(|o| int(o, 1_000_000)),
            [0x1a, 0x00, 0x0f, 0x42, 0x40]
        );
        assert_eq!(
            encoded(|o| int(o, 1_000_000_000_000)),
            [0x1b, 0x00, 0x00, 0x00, 0xe8, 0xd4, 0xa5, 0x10, 0x00]
        );
        assert_eq!(encoded(|o| int(o, -1)), [0x20]);
        assert_eq!(encoded(|o| int(o, -7)), [0x26]);
        assert_eq!(encoded(|o| int(o, -100)), [0x38, 0x63]);
        assert_eq!(encoded(|o| int(o, -1000)), [0x39, 0x03, 0xe7]);
        assert_eq!(
            encoded(|o| int(o, i64::MIN)),
            [0x3b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn strings_and_maps() {
        assert_eq!(encoded(|o| bytes(o, &[1, 2, 3, 4])), [0x44, 1, 2, 3, 4]);
        assert_eq!(encoded(|o| text(o, "IETF")), [0x64, b'I', b'E', b'T', b'F']);
        assert_eq!(encoded(|o| map(o, 0)), [0xa0]);
        let long = [0u8; 300];
        assert_eq!(encoded(|o| bytes(o, &long))[..3], [0x59, 0x01, 0x2c]);
    }
}
