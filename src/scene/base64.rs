//! Base64 of glTF `data:` URIs, through the `base64` crate: standard (RFC 4648 §4,
//! padded) when writing; when reading, what exporters write — padding optional, the
//! URL-safe alphabet (§5) accepted, whitespace skipped.

use ::base64::alphabet;
use ::base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use ::base64::engine::{DecodePaddingMode, Engine};
use ::base64::DecodeError;
use std::borrow::Cow;

/// Reading: padding may be left out, and the unused low bits of the last character
/// need not be zero (some encoders leave them set).
const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// `data` as standard base64 with `=` padding (RFC 4648 §4).
pub fn encode(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// Decodes base64, accepting missing padding and the URL-safe alphabet (`-` and `_`
/// instead of `+` and `/`, not both in one text); whitespace is skipped. The error says
/// what is wrong and where (a character's position counts from the start of `text`).
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, String> {
    let compact: Cow<str> = if text.bytes().any(|c| c.is_ascii_whitespace()) {
        Cow::Owned(text.chars().filter(|c| !c.is_ascii_whitespace()).collect())
    } else {
        Cow::Borrowed(text)
    };
    let engine = if compact.bytes().any(|c| c == b'-' || c == b'_') {
        &URL_SAFE_LENIENT
    } else {
        &STANDARD_LENIENT
    };
    engine
        .decode(compact.as_bytes())
        .map_err(|e| describe(e, text))
}

/// The position in `text` of its `k`-th character that is not whitespace.
fn position(text: &str, k: usize) -> usize {
    text.bytes()
        .enumerate()
        .filter(|(_, c)| !c.is_ascii_whitespace())
        .nth(k)
        .map_or(text.len(), |(i, _)| i)
}

fn describe(e: DecodeError, text: &str) -> String {
    match e {
        DecodeError::InvalidByte(k, b'=') => format!(
            "'=' padding before the end, at character {}: the data is cut or two \
             payloads were joined",
            position(text, k)
        ),
        DecodeError::InvalidByte(k, c) => format!(
            "invalid base64 character {:?} at {}",
            char::from(c),
            position(text, k)
        ),
        DecodeError::InvalidLength(n) => format!(
            "{n} base64 characters leave one over (4 make 3 bytes; 2 or 3 end the data): \
             the data is cut"
        ),
        DecodeError::InvalidLastSymbol { offset, symbol, .. } => format!(
            "invalid last base64 character {:?} at {}",
            char::from(symbol),
            position(text, offset)
        ),
        DecodeError::InvalidPadding => "malformed '=' padding at the end".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_matches_rfc_vectors() {
        // The test vectors of RFC 4648 §10.
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in vectors {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).as_deref(), Ok(plain.as_bytes()));
            // Without padding, too.
            let bare = coded.trim_end_matches('=');
            assert_eq!(decode(bare).as_deref(), Ok(plain.as_bytes()), "{bare}");
        }
        let all: Vec<u8> = (0..=255u8).collect();
        assert_eq!(decode(&encode(&all)), Ok(all));
    }

    #[test]
    fn url_safe_text_and_whitespace_are_read() {
        // 0xFB 0xFF 0xBF is "+/+/" in the standard alphabet (RFC 4648 §4 table 1 and
        // §5 table 2: 62 and 63 are '+' '/' or '-' '_').
        let bytes = [0xFB, 0xFF, 0xBF];
        assert_eq!(encode(&bytes), "+/+/");
        assert_eq!(decode("-_-_").as_deref(), Ok(&bytes[..]));
        assert_eq!(decode(" Zm9v\n YmFy\r\n").as_deref(), Ok(&b"foobar"[..]));
    }

    #[test]
    fn bad_text_is_an_error_saying_where() {
        let e = decode("Zm9v!").expect_err("bad character");
        assert!(e.contains("'!' at 4"), "{e}");
        // Positions count the whitespace skipped.
        let e = decode("Zm9v\n  Y*Fy").expect_err("bad character");
        assert!(e.contains("'*' at 8"), "{e}");
        let e = decode("Zg==Zm9v").expect_err("padding in the middle");
        assert!(e.contains("padding before the end"), "{e}");
        let e = decode("Zm9vY").expect_err("one character over");
        assert!(e.contains("cut"), "{e}");
        // Both alphabets in one text.
        assert!(decode("+/-_").is_err());
    }
}
