//! Conformance with upstream's own code: replay all 114 telecom base tasks and reproduce
//! tests/golden/telecom_vectors.json (written by tests/golden/gen_telecom_vectors.py with
//! upstream's package) — DB hashes, every env assertion's result, every gold action's output
//! and a fixed set of read calls, on the broken start state, after the evaluator's gold
//! replay, and after the gold actions performed as in a conversation.

mod common;

use lrab_tau2::{as_bool, Env, Message, ToolCall};
use serde_json::{Map, Value};

fn vectors() -> Value {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/telecom_vectors.json");
    serde_json::from_str(&std::fs::read_to_string(p).expect("vectors")).expect("json")
}

struct Check<'a> {
    texts: &'a [Value],
    failures: Vec<String>,
}

impl Check<'_> {
    fn output(&mut self, at: &str, got: &Message, want: &Value) {
        let text = self.texts[want[0].as_u64().unwrap() as usize]
            .as_str()
            .unwrap();
        if got.text() != text || got.error != Some(want[1].as_bool().unwrap()) {
            self.failures.push(format!(
                "{at}: got {:?} (error {:?}), want {text:?}",
                got.text(),
                got.error
            ));
        }
    }
    fn eq<T: PartialEq + std::fmt::Debug>(&mut self, at: &str, got: T, want: T) {
        if got != want {
            self.failures
                .push(format!("{at}: got {got:?}, want {want:?}"));
        }
    }
}

fn call(req: &str, name: &str, args: &Value, id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.as_object().cloned().unwrap_or_default(),
        requestor: req.into(),
    }
}

fn assertions(env: &mut Env, task: &lrab_tau2::Task) -> Vec<bool> {
    let ec = task.evaluation_criteria.as_ref().unwrap();
    ec.env_assertions
        .iter()
        .flatten()
        .map(|a| {
            env.run_function(&a.env_type, &a.func_name, &a.arguments)
                .map_err(|e| e.to_string())
                .and_then(|o| as_bool(&o, &a.func_name).map_err(|e| e.to_string()))
                .map(|b| b == a.assert_value)
                .unwrap_or(false)
        })
        .collect()
}

fn hashes(env: &Env) -> (String, String) {
    (env.db_hash(), env.user_db_hash().unwrap())
}

fn want_hashes(v: &Value) -> (String, String) {
    (
        v["db_hash"].as_str().unwrap().into(),
        v["user_db_hash"].as_str().unwrap().into(),
    )
}

#[test]
fn all_114_telecom_tasks_reproduce_upstreams_vectors() {
    if common::data().is_none() {
        return;
    }
    let v = vectors();
    let d = common::domain("telecom");
    let texts = v["texts"].as_array().unwrap();
    let probes = v["probes"].as_array().unwrap();
    let mut c = Check {
        texts,
        failures: Vec::new(),
    };
    let (h, uh) = d.initial_hashes();
    c.eq("initial", (h, uh.unwrap()), want_hashes(&v["initial"]));
    let rows = v["tasks"].as_array().unwrap();
    assert_eq!(rows.len(), 114);
    let mut compared = 0;
    for row in rows {
        let id = row["id"].as_str().unwrap();
        let task = d.task(id).unwrap();
        let fresh = || {
            let mut env = d.env();
            env.set_state(task.initial_state.as_ref(), &[])
                .expect("initialization");
            env
        };
        let run_probes = |env: &mut Env, c: &mut Check, at: &str, want: &Value| {
            for (i, p) in probes.iter().enumerate() {
                let m = env.get_response(&call(
                    p[0].as_str().unwrap(),
                    p[1].as_str().unwrap(),
                    &p[2],
                    "probe",
                ));
                c.output(&format!("{id} {at} probe {}", p[1]), &m, &want[i]);
            }
        };
        // start: the broken phone
        let env = fresh();
        c.eq(
            &format!("{id} start hashes"),
            hashes(&env),
            want_hashes(&row["start"]),
        );
        let mut probe_env = fresh();
        let got = assertions(&mut probe_env, task);
        c.eq(
            &format!("{id} start assertions"),
            Value::from(got),
            row["start"]["assertions"].clone(),
        );
        run_probes(&mut probe_env, &mut c, "start", &row["start"]["probes"]);
        // the evaluator's gold replay: tools only, no sync
        let mut env = fresh();
        let actions = task
            .evaluation_criteria
            .as_ref()
            .unwrap()
            .actions
            .clone()
            .unwrap_or_default();
        for (i, a) in actions.iter().enumerate() {
            let m = match env.call_tool(&a.requestor, &a.name, &a.arguments) {
                Ok(o) => Message::tool("g", o.content(), &a.requestor, false),
                Err(e) => Message::tool("g", format!("Error: {e}"), &a.requestor, true),
            };
            c.output(
                &format!("{id} gold action {i} {}", a.name),
                &m,
                &row["gold"]["outputs"][i],
            );
        }
        c.eq(
            &format!("{id} gold hashes"),
            hashes(&env),
            want_hashes(&row["gold"]),
        );
        // the same actions as in a conversation, then graded like the evaluator does
        let mut env = fresh();
        for (i, a) in actions.iter().enumerate() {
            let args = Value::Object(a.arguments.clone().into_iter().collect::<Map<_, _>>());
            let m = env.get_response(&call(&a.requestor, &a.name, &args, "c"));
            c.output(
                &format!("{id} conversation action {i} {}", a.name),
                &m,
                &row["graded"]["outputs"][i],
            );
        }
        env.sync().unwrap();
        let got = assertions(&mut env, task);
        c.eq(
            &format!("{id} graded assertions"),
            Value::from(got),
            row["graded"]["assertions"].clone(),
        );
        c.eq(
            &format!("{id} graded hashes"),
            hashes(&env),
            want_hashes(&row["graded"]),
        );
        run_probes(&mut env, &mut c, "graded", &row["graded"]["probes"]);
        compared += 1;
    }
    assert_eq!(compared, 114);
    assert!(
        c.failures.is_empty(),
        "{} differences from upstream, first ones:\n{}",
        c.failures.len(),
        c.failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
