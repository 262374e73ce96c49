//! The commonest streamed event of an OpenAI backend, a chunk carrying only text, read by one
//! validating walk over its bytes: nothing is built, only the text is found. Servers differ in
//! the fields around it (vLLM's `logprobs` and `stop_reason`, llama.cpp's `timings`, OpenAI's
//! `obfuscation` and `usage: null`, Ollama's `system_fingerprint`), so the walk reads any JSON
//! and looks only at the fields the translation reads. It accepts an event only when the
//! typed parse of [`super::fast::openai_text_event`] reads the same text from it (tested
//! against it, on servers' shapes and on mutations of them); for anything it is unsure of (an
//! escape in a key or in the text, a repeated field, a second choice, nesting deeper than
//! [`DEPTH`]) it answers `None` and the typed parse decides.

use std::ops::Range;

/// Deeper than this, the walk leaves the event to the typed parse.
const DEPTH: usize = 32;

/// The text of a `data:` payload (the JSON, trimmed) whose event carries only non-empty text
/// that needs no unescaping; `None`: not sure, ask the typed parse.
pub fn openai_plain_text(data: &str) -> Option<&str> {
    let mut w = Walk {
        s: data.as_bytes(),
        i: 0,
        depth: 0,
    };
    let text = w.event()?;
    w.ws();
    (w.i == w.s.len()).then_some(())?;
    // between two quotes: on character boundaries of the payload
    data.get(text)
}

/// A position in the payload.
struct Walk<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl<'a> Walk<'a> {
    /// The top-level object: `choices` read, `error`, `usage` and `timings` only as null.
    fn event(&mut self) -> Option<Range<usize>> {
        self.object("choices", &["error", "usage", "timings"], Self::choices)
    }

    /// `[choice]`: exactly one choice (the typed parse reads every element of more).
    fn choices(&mut self) -> Option<Range<usize>> {
        self.eat(b'[')?;
        let text = self.object("delta", &["finish_reason"], Self::delta)?;
        self.eat(b']')?;
        Some(text)
    }

    /// A delta with a plain non-empty `content` and null (or no) reasoning and calls.
    fn delta(&mut self) -> Option<Range<usize>> {
        let null = ["reasoning_content", "reasoning", "tool_calls"];
        self.object("content", &null, Self::text)
    }

    /// A string with no escape, not empty: where its text lies.
    fn text(&mut self) -> Option<Range<usize>> {
        self.ws();
        self.eat_now(b'"')?;
        let start = self.i;
        let (t, escaped) = self.string_body()?;
        (!escaped && !t.is_empty()).then_some(start..start + t.len())
    }

    /// An object whose field `key` is read by `read` and whose fields named in `null` may only
    /// be null, each at most once (a derived struct refuses a repeated field; `key` must be
    /// there); every other value is skipped.
    fn object(
        &mut self,
        key: &str,
        null: &[&str],
        read: fn(&mut Self) -> Option<Range<usize>>,
    ) -> Option<Range<usize>> {
        self.eat(b'{')?;
        let (mut seen, mut found) = (0u32, None);
        if self.peek()? == b'}' {
            return None;
        }
        loop {
            self.ws();
            self.eat_now(b'"')?;
            let (name, escaped) = self.string_body()?;
            (!escaped).then_some(())?;
            self.eat(b':')?;
            if name == key.as_bytes() {
                found.is_none().then_some(())?;
                found = Some(read(self)?);
            } else if let Some(n) = null.iter().position(|k| k.as_bytes() == name) {
                (seen & 1 << n == 0).then_some(())?;
                seen |= 1 << n;
                self.null()?;
            } else {
                self.value()?;
            }
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return found;
                }
                _ => return None,
            }
        }
    }

    fn null(&mut self) -> Option<()> {
        self.ws();
        self.literal(b"null")
    }

    /// Skips one JSON value, checking it as the parser would.
    fn value(&mut self) -> Option<()> {
        self.ws();
        match *self.s.get(self.i)? {
            b'"' => {
                self.i += 1;
                self.string_body().map(|_| ())
            }
            b'{' | b'[' => self.nested(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number(),
        }
    }

    /// An object or array skipped whole.
    fn nested(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= DEPTH).then_some(())?;
        let close = if self.s[self.i] == b'{' { b'}' } else { b']' };
        self.i += 1;
        if self.peek()? == close {
            self.i += 1;
        } else {
            loop {
                if close == b'}' {
                    self.ws();
                    self.eat_now(b'"')?;
                    self.string_body()?;
                    self.eat(b':')?;
                }
                self.value()?;
                match self.peek()? {
                    b',' => self.i += 1,
                    c if c == close => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// A string's body after its opening quote, up to and past the closing one, and whether
    /// it holds an escape (each checked as JSON allows them); raw control bytes refuse it.
    fn string_body(&mut self) -> Option<(&'a [u8], bool)> {
        let start = self.i;
        let mut escaped = false;
        loop {
            let c = *self.s.get(self.i)?;
            self.i += 1;
            match c {
                b'"' => return Some((&self.s[start..self.i - 1], escaped)),
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                0..=0x1f => return None,
                _ => {}
            }
        }
    }

    /// One escape after its backslash.
    fn escape(&mut self) -> Option<()> {
        let c = *self.s.get(self.i)?;
        self.i += 1;
        match c {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(()),
            // a \u escape may be half of a pair; its reading is the parser's
            b'u' => {
                let hex = self.s.get(self.i..self.i + 4)?;
                self.i += 4;
                hex.iter().all(u8::is_ascii_hexdigit).then_some(())
            }
            _ => None,
        }
    }

    /// A number in JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match *self.s.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits()?,
            _ => return None,
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            self.digits()?;
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.digits()?;
        }
        Some(())
    }

    /// One or more digits.
    fn digits(&mut self) -> Option<()> {
        let n = self.s[self.i..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        self.i += n;
        (n > 0).then_some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.s[self.i..].starts_with(word).then_some(())?;
        self.i += word.len();
        Some(())
    }

    /// Skips JSON whitespace.
    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// The next byte after whitespace, not taken.
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    /// Takes `c` after whitespace.
    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        self.eat_now(c)
    }

    /// Takes `c` here.
    fn eat_now(&mut self, c: u8) -> Option<()> {
        (self.s.get(self.i) == Some(&c)).then_some(())?;
        self.i += 1;
        Some(())
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
