//! Seeded, byte-reproducible input generators for the long-horizon LRAB tasks.
