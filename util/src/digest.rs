//! Content digests.

use sha2::{Digest, Sha256};

/// Lower-case hex sha256 of `bytes` (the form `sha256sum` prints).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The FNV-1a offset basis: the state [`fnv1a`] starts from.
pub const FNV1A_START: u64 = 0xcbf29ce484222325;

/// 64-bit FNV-1a of `bytes`, continued from state `h` (start from [`FNV1A_START`]). Used where a
/// cheap, build-independent fingerprint is enough (seeds, cache keys); unlike `DefaultHasher`
/// its value is the same in every build and on every machine.
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

#[cfg(test)]
mod tests {
    #[test]
    fn fnv1a_known_vectors() {
        // the published FNV-1a 64-bit test values
        assert_eq!(super::fnv1a(super::FNV1A_START, b""), 0xcbf29ce484222325);
        assert_eq!(super::fnv1a(super::FNV1A_START, b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(
            super::fnv1a(super::FNV1A_START, b"foobar"),
            0x85944171f73967e8
        );
        // continuing equals hashing the concatenation
        let h = super::fnv1a(super::FNV1A_START, b"foo");
        assert_eq!(super::fnv1a(h, b"bar"), 0x85944171f73967e8);
    }

    #[test]
    fn known_vector() {
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
