//! The lrab agent harness arm for small local models.
