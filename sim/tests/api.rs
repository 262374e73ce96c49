//! The HTTP surface: endpoints, shapes, Ollama's error forms, determinism, faults.

mod common;
use common::*;
use lrab_sim::{FaultConfig, ModelSpec, Profile, SimConfig};
use serde_json::{json, Value};

fn get(url: &str) -> (u16, String) {
    match ureq::get(url).call() {
        Ok(r) => (r.status(), r.into_string().unwrap()),
        Err(ureq::Error::Status(c, r)) => (c, r.into_string().unwrap()),
        Err(e) => panic!("{e}"),
    }
}

fn no_tools_sim() -> lrab_sim::SimHandle {
    start(SimConfig {
        extra_models: vec![ModelSpec::from_profile(Profile {
            name: "sim-notools".into(),
            thinking: false,
            ..Profile::oracle()
        })
        .without_tools()],
        ..Default::default()
    })
}

#[test]
fn discovery_endpoints() {
    let sim = start(SimConfig::default());
    let u = sim.url();
    assert_eq!(
        get(&format!("{u}/")),
        (200, "Ollama is running".to_string())
    );
    let (c, v) = get(&format!("{u}/api/version"));
    assert_eq!(c, 200);
    assert!(serde_json::from_str::<Value>(&v).unwrap()["version"].is_string());
    let tags: lrab_ollama::TagsResponse =
        serde_json::from_str(&get(&format!("{u}/api/tags")).1).unwrap();
    let names: Vec<&str> = tags.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "sim-oracle:latest",
            "sim-2b:latest",
            "sim-4b:latest",
            "sim-12b:latest",
            "sim-35b:latest",
            "sim-adversary:latest"
        ]
    );
    let (c, _, body) = post_raw(&format!("{u}/api/show"), r#"{"model":"sim-4b"}"#);
    assert_eq!(c, 200);
    let show: lrab_ollama::ShowResponse = serde_json::from_str(&body).unwrap();
    assert_eq!(show.context_length(), Some(131_072));
    assert!(show.has_capability("tools") && show.has_capability("thinking"));
    let (_, _, body) = post_raw(&format!("{u}/api/show"), r#"{"name":"sim-2b:latest"}"#);
    let show: lrab_ollama::ShowResponse = serde_json::from_str(&body).unwrap();
    assert!(show.has_capability("tools") && !show.has_capability("thinking"));
    // ps: empty, then the context the request asked for
    let ps: lrab_ollama::PsResponse = serde_json::from_str(&get(&format!("{u}/api/ps")).1).unwrap();
    assert!(ps.models.is_empty());
    let (c, _, _) = post_raw(
        &format!("{u}/api/chat"),
        r#"{"model":"sim-12b","messages":[{"role":"user","content":"hi"}],"stream":false,"options":{"num_ctx":32768}}"#,
    );
    assert_eq!(c, 200);
    let ps: lrab_ollama::PsResponse = serde_json::from_str(&get(&format!("{u}/api/ps")).1).unwrap();
    assert_eq!(ps.models[0].name, "sim-12b:latest");
    assert_eq!(ps.models[0].context_length, 32768);
    let models: lrab_ollama::openai::ModelList =
        serde_json::from_str(&get(&format!("{u}/v1/models")).1).unwrap();
    assert_eq!(models.data.len(), 6);
    assert_eq!(models.data[0].owned_by, "library");
    assert_eq!(get(&format!("{u}/v1/models/sim-2b")).0, 200);
    assert_eq!(get(&format!("{u}/v1/models/nope")).0, 404);
}

/// All on one server, one after another: none of them may bring it down.
#[test]
fn errors_have_ollama_shapes_and_never_crash() {
    let sim = no_tools_sim();
    let u = sim.url();
    native_errors_have_ollama_messages(&u);
    openai_errors_have_openai_shapes(&u);
    unknown_models_are_404_on_show_and_generate(&u);
    garbage_on_every_post_route_is_a_4xx_json_error(&u);
    // still serving
    assert_eq!(get(&format!("{u}/api/version")).0, 200);
}

/// The `error` string of an Ollama error body.
fn err(s: &str) -> String {
    serde_json::from_str::<Value>(s).unwrap()["error"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `/api/chat`: unknown model, bad JSON, empty body, missing model, bad messages, tools or
/// thinking the model lacks, a thinking level it does not know.
fn native_errors_have_ollama_messages(u: &str) {
    let chat = format!("{u}/api/chat");
    let (c, ct, b) = post_raw(&chat, r#"{"model":"nope","messages":[]}"#);
    assert_eq!((c, err(&b)), (404, "model 'nope' not found".to_string()));
    assert!(ct.starts_with("application/json"));
    let (c, _, b) = post_raw(&chat, "{not json");
    assert_eq!(c, 400);
    assert!(!err(&b).is_empty());
    let (c, _, b) = post_raw(&chat, "");
    assert_eq!((c, err(&b)), (400, "missing request body".to_string()));
    let (c, _, b) = post_raw(&chat, r#"{"messages":[]}"#);
    assert_eq!((c, err(&b)), (400, "model is required".to_string()));
    let (c, _, b) = post_raw(&chat, r#"{"model":"sim-2b","messages":"x"}"#);
    assert_eq!(c, 400, "{b}");
    let tools = r#"[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]"#;
    let (c, _, b) = post_raw(
        &chat,
        &format!(
            r#"{{"model":"sim-notools","messages":[{{"role":"user","content":"x"}}],"tools":{tools}}}"#
        ),
    );
    assert_eq!(
        (c, err(&b)),
        (
            400,
            "registry.ollama.ai/library/sim-notools:latest does not support tools".to_string()
        )
    );
    let (c, _, b) = post_raw(
        &chat,
        r#"{"model":"sim-2b","messages":[{"role":"user","content":"x"}],"think":true}"#,
    );
    assert_eq!(
        (c, err(&b)),
        (400, "\"sim-2b\" does not support thinking".to_string())
    );
    let (c, _, _) = post_raw(
        &chat,
        r#"{"model":"sim-4b","messages":[{"role":"user","content":"x"}],"think":"extreme"}"#,
    );
    assert_eq!(c, 400);
}

/// `/v1/chat/completions`: OpenAI's error objects.
fn openai_errors_have_openai_shapes(u: &str) {
    let v1 = format!("{u}/v1/chat/completions");
    let (c, _, b) = post_raw(
        &v1,
        r#"{"model":"nope","messages":[{"role":"user","content":"x"}]}"#,
    );
    let v: Value = serde_json::from_str(&b).unwrap();
    assert_eq!(c, 404);
    assert_eq!(v["error"]["type"], "not_found_error");
    assert_eq!(v["error"]["param"], Value::Null);
    let (c, _, b) = post_raw(&v1, r#"{"model":"sim-2b","messages":[]}"#);
    assert_eq!(c, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&b).unwrap()["error"]["message"],
        "[] is too short - 'messages'"
    );
    let (c, _, b) = post_raw(&v1, "[1,2");
    assert_eq!(c, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&b).unwrap()["error"]["type"],
        "invalid_request_error"
    );
}

/// A model nobody serves is a 404 on `/api/show` and `/api/generate` too.
fn unknown_models_are_404_on_show_and_generate(u: &str) {
    let (c, _, _) = post_raw(&format!("{u}/api/show"), r#"{"model":"ghost"}"#);
    assert_eq!(c, 404);
    let (c, _, _) = post_raw(
        &format!("{u}/api/generate"),
        r#"{"model":"ghost","prompt":"x"}"#,
    );
    assert_eq!(c, 404);
}

/// Assorted garbage on every POST route: always a 4xx JSON error (or a 200), never a crash.
fn garbage_on_every_post_route_is_a_4xx_json_error(u: &str) {
    let deep = "[".repeat(5000);
    let garbage: Vec<Vec<u8>> = vec![
        b"null".to_vec(),
        b"42".to_vec(),
        b"\"text\"".to_vec(),
        vec![0xff, 0xfe, b'{'],
        deep.into_bytes(),
        br#"{"model":"sim-2b","messages":[{"role":"user"}]}"#.to_vec(),
        br#"{"model":"sim-2b","messages":[{"content":"x"}]}"#.to_vec(),
        br#"{"model":"sim-2b","messages":[{"role":"user","content":"x"}],"options":{"num_ctx":"big"}}"#.to_vec(),
        br#"{"model":"sim-2b","messages":[{"role":"assistant","content":"x","tool_calls":[{"function":{"name":"f","arguments":"{bad"}}]}]}"#.to_vec(),
        br#"{"model":7}"#.to_vec(),
    ];
    for route in [
        "/api/chat",
        "/api/generate",
        "/api/show",
        "/v1/chat/completions",
    ] {
        for g in &garbage {
            let r = ureq::post(&format!("{u}{route}")).send_bytes(g);
            let code = match r {
                Ok(r) => r.status(),
                Err(ureq::Error::Status(c, r)) => {
                    let b = r.into_string().unwrap();
                    assert!(
                        serde_json::from_str::<Value>(&b)
                            .unwrap()
                            .get("error")
                            .is_some(),
                        "{route}: {b}"
                    );
                    c
                }
                Err(e) => panic!("{route}: transport error {e}"),
            };
            assert!(
                code == 200 || (400..500).contains(&code),
                "{route} {code} for {:?}",
                String::from_utf8_lossy(g)
            );
        }
    }
}

#[test]
fn load_and_unload_with_empty_messages() {
    let sim = start(SimConfig::default());
    let u = sim.url();
    let (_, _, b) = post_raw(
        &format!("{u}/api/chat"),
        r#"{"model":"sim-2b","messages":[]}"#,
    );
    let v: Value = serde_json::from_str(&b).unwrap();
    assert_eq!(
        (v["done"].clone(), v["done_reason"].clone()),
        (json!(true), json!("load"))
    );
    let (_, _, b) = post_raw(
        &format!("{u}/api/chat"),
        r#"{"model":"sim-2b","messages":[],"keep_alive":0}"#,
    );
    assert_eq!(
        serde_json::from_str::<Value>(&b).unwrap()["done_reason"],
        "unload"
    );
    let ps: lrab_ollama::PsResponse = serde_json::from_str(&get(&format!("{u}/api/ps")).1).unwrap();
    assert!(ps.models.is_empty());
}

fn task_body(model: &str, stream: bool) -> String {
    let pack = pack();
    let prompt = pack.get("WF-04").unwrap().render_prompt();
    json!({"model": model, "stream": stream, "think": false,
        "messages": [{"role": "system", "content": "agent"}, {"role": "user", "content": prompt}],
        "tools": tools_for(Toolset::Rich)})
    .to_string()
}

#[test]
fn native_stream_shape() {
    let sim = start(SimConfig::default());
    let (c, ct, body) = post_raw(
        &format!("{}/api/chat", sim.url()),
        &task_body("sim-oracle", true),
    );
    assert_eq!(c, 200);
    assert_eq!(ct, "application/x-ndjson");
    assert!(body.ends_with('\n'));
    let lines: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["done"], true);
    assert_eq!(last["done_reason"], "stop");
    for k in [
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    ] {
        assert!(last[k].as_u64().unwrap() > 0, "{k}");
    }
    for l in &lines[..lines.len() - 1] {
        assert_eq!(l["done"], false);
        assert!(l.get("eval_count").is_none() && l.get("done_reason").is_none());
    }
    let calls: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"].get("tool_calls").is_some())
        .collect();
    assert_eq!(calls.len(), 1);
    let tc = &calls[0]["message"]["tool_calls"][0];
    assert_eq!(calls[0]["message"]["content"], "");
    let id = tc["id"].as_str().unwrap();
    assert!(
        id.starts_with("call_")
            && id.len() == 13
            && id[5..]
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    );
    assert_eq!(tc["function"]["index"], 0);
    assert!(tc["function"]["arguments"].is_object());
    assert!(lines[0]["created_at"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn openai_stream_and_whole_shapes() {
    let sim = start(SimConfig::default());
    let mut v: Value = serde_json::from_str(&task_body("sim-oracle", true)).unwrap();
    v.as_object_mut().unwrap().remove("think");
    v["stream_options"] = json!({"include_usage": true});
    let (c, ct, body) = post_raw(
        &format!("{}/v1/chat/completions", sim.url()),
        &v.to_string(),
    );
    assert_eq!(c, 200);
    assert_eq!(ct, "text/event-stream");
    assert!(body.ends_with("data: [DONE]\n\n"));
    let events: Vec<&str> = body.split("\n\n").filter(|e| !e.is_empty()).collect();
    let json_events: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e.strip_prefix("data: ").unwrap()).unwrap())
        .collect();
    assert_eq!(json_events[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(json_events[0]["object"], "chat.completion.chunk");
    let n = json_events.len();
    assert_eq!(json_events[n - 2]["choices"][0]["delta"], json!({}));
    assert_eq!(
        json_events[n - 2]["choices"][0]["finish_reason"],
        "tool_calls"
    );
    assert_eq!(json_events[n - 1]["choices"], json!([]));
    assert!(
        json_events[n - 1]["usage"]["total_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    let tc = json_events
        .iter()
        .find_map(|e| e["choices"][0]["delta"].get("tool_calls"))
        .unwrap();
    assert!(tc[0]["function"]["arguments"].is_string());
    assert_eq!(tc[0]["type"], "function");
    v["stream"] = json!(false);
    let (_, ct, body) = post_raw(
        &format!("{}/v1/chat/completions", sim.url()),
        &v.to_string(),
    );
    assert!(ct.starts_with("application/json"));
    let w: lrab_ollama::openai::ChatCompletion = serde_json::from_str(&body).unwrap();
    assert!(w.id.starts_with("chatcmpl-"));
    assert_eq!(w.system_fingerprint, "fp_ollama");
    assert_eq!(w.choices[0].finish_reason.as_deref(), Some("tool_calls"));
}

#[test]
fn same_requests_same_bytes_and_seeds_matter() {
    let a = start(SimConfig {
        seed: 7,
        ..Default::default()
    });
    let b = start(SimConfig {
        seed: 7,
        ..Default::default()
    });
    let pack = pack();
    let run = |url: &str, model: &str| {
        let (_t, wd, _m) = fresh(&pack, "WF-02");
        let mut ag = Agent::new(url, model, Api::NativeStream, Toolset::Rich);
        ag.max_turns = 25;
        ag.nudges = 3;
        ag.run(&pack.get("WF-02").unwrap().render_prompt(), &wd)
            .raw_bodies
    };
    assert_eq!(run(&a.url(), "sim-2b"), run(&b.url(), "sim-2b"));
    // other seeds: the 2b model's runs differ for at least one seed
    let mut differs = false;
    for seed in 1..6 {
        let c = start(SimConfig {
            seed,
            ..Default::default()
        });
        if run(&c.url(), "sim-2b") != run(&a.url(), "sim-2b") {
            differs = true;
            break;
        }
    }
    assert!(differs);
}

#[test]
fn generate_minimal() {
    let sim = start(SimConfig::default());
    let (c, _, b) = post_raw(
        &format!("{}/api/generate", sim.url()),
        r#"{"model":"sim-2b","prompt":"Why is the sky blue?","stream":false}"#,
    );
    assert_eq!(c, 200);
    let v: lrab_ollama::GenerateResponse = serde_json::from_str(&b).unwrap();
    assert!(v.done && !v.response.is_empty());
    let (_, ct, b) = post_raw(
        &format!("{}/api/generate", sim.url()),
        r#"{"model":"sim-2b","prompt":"Why is the sky blue?"}"#,
    );
    assert_eq!(ct, "application/x-ndjson");
    assert_eq!(
        serde_json::from_str::<Value>(b.lines().last().unwrap()).unwrap()["done"],
        true
    );
}

#[test]
fn chat_policy_and_user_simulator() {
    let sim = start(SimConfig::default());
    let chat = |msgs: Value, tools: Value| -> Value {
        let body = json!({"model": "sim-12b", "messages": msgs, "tools": tools, "stream": false});
        ureq::post(&format!("{}/api/chat", sim.url()))
            .send_json(body)
            .unwrap()
            .into_json::<Value>()
            .unwrap()["message"]
            .clone()
    };
    let m = chat(
        json!([{"role": "user", "content": "Hello, what can you do?"}]),
        json!([]),
    );
    assert!(!m["content"].as_str().unwrap().is_empty());
    let lookup = json!([{"type": "function", "function": {"name": "get_user_details", "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}}}]);
    let m = chat(
        json!([{"role": "system", "content": "airline policy"}, {"role": "user", "content": "My user id is mia_li_3668, change my flight"}]),
        lookup.clone(),
    );
    assert_eq!(
        m["tool_calls"][0]["function"]["arguments"]["user_id"],
        "mia_li_3668"
    );
    let m = chat(
        json!([{"role": "user", "content": "My user id is mia_li_3668"}, m, {"role": "tool", "content": "{\"name\": \"Mia\"}"}]),
        lookup,
    );
    assert!(m["content"].as_str().unwrap().contains("Mia"));
    let sys = "Play the customer. End with ###STOP### when done.\nReason for call: I want to cancel reservation ABC123.\nKnown info: user id mia_li_3668";
    let m = chat(
        json!([{"role": "system", "content": sys}, {"role": "user", "content": "Hi! How can I help you today?"}]),
        json!([]),
    );
    assert!(m["content"]
        .as_str()
        .unwrap()
        .contains("cancel reservation ABC123"));
    let m = chat(
        json!([{"role": "system", "content": sys}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "id?"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "Done."}]),
        json!([]),
    );
    assert!(m["content"].as_str().unwrap().contains("###STOP###"));
}

#[test]
fn faults_are_injected_and_retries_succeed() {
    let cfg = |f: FaultConfig| {
        start(SimConfig {
            faults: f,
            ..Default::default()
        })
    };
    let body = r#"{"model":"sim-2b","messages":[{"role":"user","content":"hi"}],"stream":false}"#;
    let sim = cfg(FaultConfig {
        http500: 1.0,
        first_attempts: Some(1),
        ..Default::default()
    });
    let (c, _, b) = post_raw(&format!("{}/api/chat", sim.url()), body);
    assert_eq!(c, 500);
    assert!(serde_json::from_str::<Value>(&b).unwrap()["error"].is_string());
    let (c, _, _) = post_raw(&format!("{}/api/chat", sim.url()), body);
    assert_eq!(c, 200, "the retry succeeds");
    let sim = cfg(FaultConfig {
        malformed: 1.0,
        ..Default::default()
    });
    let (c, _, b) = post_raw(&format!("{}/api/chat", sim.url()), body);
    assert_eq!(c, 200);
    assert!(serde_json::from_str::<Value>(&b).is_err());
    let sim = cfg(FaultConfig {
        drop: 1.0,
        ..Default::default()
    });
    let r = ureq::post(&format!("{}/api/chat", sim.url()))
        .send_string(body)
        .map_err(|e| e.to_string())
        .and_then(|r| r.into_string().map_err(|e| e.to_string()));
    assert!(r.is_err(), "dropped connection must fail the request");
    let sim = cfg(FaultConfig {
        midstream: 1.0,
        ..Default::default()
    });
    let streaming = body.replace("false", "true");
    let r = ureq::post(&format!("{}/api/chat", sim.url()))
        .send_string(&streaming)
        .map_err(|e| e.to_string())
        .and_then(|r| r.into_string().map_err(|e| e.to_string()));
    match r {
        Err(_) => {}
        Ok(text) => assert!(
            !text.contains("\"done\":true"),
            "stream must be cut: {text}"
        ),
    }
    let sim = cfg(FaultConfig {
        slow: 1.0,
        slow_ms: 300,
        ..Default::default()
    });
    let t0 = std::time::Instant::now();
    let (c, _, _) = post_raw(&format!("{}/api/chat", sim.url()), body);
    assert_eq!(c, 200);
    assert!(t0.elapsed() >= std::time::Duration::from_millis(300));
}

#[test]
fn many_concurrent_streams() {
    let sim = start(SimConfig::default());
    let body = task_body("sim-35b", true);
    let handles: Vec<_> = (0..100)
        .map(|_| {
            let (u, b) = (sim.url(), body.clone());
            std::thread::spawn(move || post_raw(&format!("{u}/api/chat"), &b))
        })
        .collect();
    let bodies: Vec<String> = handles
        .into_iter()
        .map(|h| {
            let (c, _, b) = h.join().unwrap();
            assert_eq!(c, 200);
            b
        })
        .collect();
    // the same answer every time; only the durations differ (the first request loads the
    // model, the others find the prompt in the KV cache)
    let content = |b: &String| {
        b.lines()
            .filter(|l| !l.contains("\"done\":true"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(bodies.windows(2).all(|w| content(&w[0]) == content(&w[1])));
}
