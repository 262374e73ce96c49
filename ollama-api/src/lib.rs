//! Wire types of the Ollama native and OpenAI-compatible chat APIs, shared by client, fake server and proxy.
