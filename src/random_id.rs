//! Random identifiers made per request (request ids, trace ids, the scope of
//! a sessionless anonymous caller): 128 bits from the thread's generator as
//! 32 lowercase hex digits, written in one piece rather than a character at
//! a time.

/// The 32 hex digits of `bits`.
pub fn hex_digits(bits: u128) -> [u8; 32] {
    let mut hex = [0u8; 32];
    // 16 bytes always fill exactly 32 digits.
    let _ = hex::encode_to_slice(bits.to_be_bytes(), &mut hex);
    hex
}

/// 128 random bits as hex digits.
pub fn random_hex() -> [u8; 32] {
    hex_digits(rand::random())
}

/// `digits` as text.
pub fn as_str(digits: &[u8; 32]) -> &str {
    // Hex digits are ASCII.
    std::str::from_utf8(digits).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_written_as_lowercase_hex() {
        assert_eq!(
            as_str(&hex_digits(0x0123_4567_89ab_cdef_0011_2233_4455_66ff)),
            "0123456789abcdef00112233445566ff"
        );
        assert_ne!(random_hex(), random_hex());
    }
}
