//! The walk accepts an event only when the typed parse reads the same text from it: on the
//! servers' own shapes (the SSE bodies of `testdata/ollama_wire/`, written from Ollama's,
//! llama.cpp's and vLLM's code, and OpenAI's and LM Studio's documented chunks) and on
//! thousands of mutations of them.

use std::borrow::Cow;

use super::super::fast::parsed_openai_text;
use super::openai_plain_text;

/// The `data:` payloads of the wire scenarios' SSE bodies, and a few documented shapes.
fn corpus() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/ollama_wire");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines() {
            if let Some(at) = line.find("data: {") {
                let data = line[at + 5..].trim_end_matches("'''").trim();
                out.push(data.to_string());
            }
        }
    }
    out.extend(
        [
            // OpenAI (with usage requested, and its obfuscation padding)
            r#"{"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1"}"#,
            // vLLM
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-4B","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null,"stop_reason":null}]}"#,
            // llama.cpp's server, a mid-answer chunk and the last one with its timings
            r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"ok"}}],"created":1,"id":"chatcmpl-2","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk"}"#,
            r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"ok"}}],"timings":{"prompt_n":3,"predicted_per_second":12.5e0}}"#,
            // LM Studio
            r#"{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"qwen3-4b","system_fingerprint":"qwen3-4b","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"logprobs":null,"finish_reason":null}]}"#,
            // the proxy bench's fake
            r#"{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"word0 "},"finish_reason":null}]}"#,
            // whitespace between tokens, text beyond ASCII, nested and numeric values skipped
            " { \"choices\" : [ { \"delta\" : { \"content\" : \"café ✓\" } , \"logprobs\" : {\"content\":[{\"token\":\"a\",\"logprob\":-0.25,\"bytes\":[97],\"top_logprobs\":[]}]} } ] } ",
            r#"{"x":[1,-0,2.5,1e3,-1.5E-2,true,false,null,"\u00e9\"\\\/\b\f\n\r\t",{},[]],"choices":[{"delta":{"content":"t"}}]}"#,
        ]
        .map(String::from),
    );
    out
}

/// Checks one payload: whatever the walk takes, the typed parse reads the same.
fn agrees(data: &str) -> bool {
    let Some(text) = openai_plain_text(data) else {
        return false;
    };
    assert_eq!(
        parsed_openai_text(data).as_deref(),
        Some(text),
        "the walk read {text:?} from {data:?}"
    );
    true
}

#[test]
fn the_walk_takes_the_servers_text_events_and_reads_them_as_the_parse_does() {
    let corpus = corpus();
    assert!(corpus.len() > 100, "{}", corpus.len());
    let mut taken = 0;
    for data in &corpus {
        if agrees(data) {
            taken += 1;
        } else if let Some(Cow::Borrowed(_)) = parsed_openai_text(data) {
            panic!("the walk left a text event with no escape to the parse: {data}");
        }
    }
    assert!(taken >= 20, "{taken} of {} taken", corpus.len());
}

#[test]
fn what_the_walk_leaves_or_refuses() {
    let left = [
        // not text only
        r#"{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}"#,
        r#"{"choices":[{"delta":{"content":"a","reasoning_content":"r"}}]}"#,
        r#"{"choices":[{"delta":{"content":"a","tool_calls":[]}}]}"#,
        r#"{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1}}"#,
        r#"{"choices":[{"delta":{"content":"a"}}],"error":{"message":"x"}}"#,
        r#"{"choices":[{"delta":{"content":""}}]}"#,
        r#"{"choices":[{"delta":{"content":null}}]}"#,
        r#"{"choices":[{"delta":{}}]}"#,
        r#"{"choices":[]}"#,
        r#"{"choices":[{"delta":{"content":7}}]}"#,
        // the parse's to decide
        r#"{"choices":[{"delta":{"content":"a\nb"}}]}"#,
        r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}"#,
        r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
        r#"{"choices":[{"delta":{"content":"a"}}],"choices":[]}"#,
        r#"{"choi\u0063es":[{"delta":{"content":"a"}}]}"#,
        // not JSON
        r#"{"choices":[{"delta":{"content":"a"}}]"#,
        r#"{"choices":[{"delta":{"content":"a"}}]}x"#,
        r#"{"choices":[{"delta":{"content":"a"}}],}"#,
        r#"{"x":01,"choices":[{"delta":{"content":"a"}}]}"#,
        r#"{"x":1.,"choices":[{"delta":{"content":"a"}}]}"#,
        r#"{"x":"\q","choices":[{"delta":{"content":"a"}}]}"#,
        r#"{"x":tru,"choices":[{"delta":{"content":"a"}}]}"#,
        "{\"x\":\"a\u{1}\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
    ];
    for data in left {
        assert_eq!(openai_plain_text(data), None, "{data}");
    }
    let deep = format!(
        r#"{{"x":{}{},"choices":[{{"delta":{{"content":"a"}}}}]}}"#,
        "[".repeat(40),
        "]".repeat(40)
    );
    assert_eq!(openai_plain_text(&deep), None);
    assert_eq!(parsed_openai_text(&deep).as_deref(), Some("a"));
}

/// A small deterministic generator (xorshift), for the mutations.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// `data` with one random edit: a byte replaced, removed or repeated, or a snippet inserted.
fn mutate(data: &str, rng: &mut Rng) -> Vec<u8> {
    const BYTES: &[u8] = b"\"\\{}[],: 0-1eEn.a\x01\xc3";
    const SNIPPETS: [&str; 8] = [
        r#","usage":null"#,
        r#","usage":{}"#,
        r#","content":"x""#,
        r#","finish_reason":"stop""#,
        r#","tool_calls":null"#,
        r#"\u00e9"#,
        r#"{"a":[1,{"b":null}]}"#,
        r#""k":"v","#,
    ];
    let mut b = data.as_bytes().to_vec();
    let at = rng.below(b.len());
    match rng.below(4) {
        0 => b[at] = BYTES[rng.below(BYTES.len())],
        1 => {
            b.remove(at);
        }
        2 => {
            let end = (at + 1 + rng.below(8)).min(b.len());
            let piece = b[at..end].to_vec();
            b.splice(at..at, piece);
        }
        _ => {
            let s = SNIPPETS[rng.below(SNIPPETS.len())].as_bytes();
            b.splice(at..at, s.iter().copied());
        }
    }
    b
}

#[test]
fn mutated_events_are_taken_only_when_the_parse_reads_the_same() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut tried, mut taken) = (0, 0);
    for data in corpus() {
        for _ in 0..60 {
            let mut m = mutate(&data, &mut rng);
            if rng.below(3) == 0 {
                m = mutate(std::str::from_utf8(&m).unwrap_or(&data), &mut rng);
            }
            let Ok(m) = std::str::from_utf8(&m) else {
                continue;
            };
            tried += 1;
            taken += agrees(m) as usize;
        }
    }
    // most edits break the event or make it something else; some keep it a text event
    assert!(tried > 5_000 && taken > 200, "{taken} of {tried}");
}
