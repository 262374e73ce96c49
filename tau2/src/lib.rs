//! tau2-bench airline/retail/mock domains, hashing, evaluation and orchestration in Rust.
