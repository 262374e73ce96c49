//! Simulated models behind a faithful Ollama HTTP API.
