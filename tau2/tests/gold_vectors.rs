//! Conformance: gold replay reproduces upstream's initial and final DB hashes for every
//! airline (50), retail (114) and mock (10) base task in test_vectors.json.

use lrab_tau2::{replay_gold, Domain, DomainKind};
use serde_json::Value;

mod common;
use common::data_dir;

/// The vectors are carried in the repository (`data/tau2/test_vectors.json`, our own derived
/// file of hashes and counts; `data/README.md`); the domain data they check is fetched.
fn vectors() -> Value {
    let p = lrab_data::file("tau2/test_vectors.json").unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(p).expect("test_vectors.json");
    serde_json::from_str(&text).expect("json")
}

fn check_domain(kind: DomainKind, expect_tasks: usize) {
    let v = vectors();
    let d = Domain::load(&data_dir(), kind).expect("load");
    let name = kind.name();
    let (h, uh) = d.initial_hashes();
    assert_eq!(
        h,
        v["initial_db_hashes"][name]["agent_db"].as_str().unwrap(),
        "{name} initial hash"
    );
    assert_eq!(
        uh.as_deref(),
        v["initial_db_hashes"][name]["user_db"].as_str(),
        "{name} initial user hash"
    );
    let rows = v[name]["tasks"].as_array().unwrap();
    assert_eq!(rows.len(), expect_tasks);
    assert_eq!(d.tasks.len(), expect_tasks);
    let mut matched = 0;
    let mut failures = Vec::new();
    let mut errors = 0;
    for row in rows {
        let id = row["id"].as_str().unwrap();
        let t = d.task(id).expect("task");
        let out = replay_gold(&d, t).expect("replay");
        errors += out.errors.len();
        let ok = out.db_hash == row["gold_db_hash"].as_str().unwrap()
            && out.user_db_hash.as_deref() == row["gold_user_db_hash"].as_str();
        if ok {
            matched += 1;
        } else {
            failures.push(format!("{id}: {:?}", out.errors));
        }
        assert_eq!(
            out.errors.len() as u64,
            row["n_gold_action_errors"].as_u64().unwrap(),
            "{name} {id} error count: {:?}",
            out.errors
        );
    }
    assert_eq!(
        errors as u64,
        v[name]["gold_action_errors_total"].as_u64().unwrap()
    );
    assert_eq!(
        matched, expect_tasks,
        "{name}: {matched}/{expect_tasks} matched; failing: {failures:?}"
    );
}

#[test]
fn airline_all_50_gold_hashes() {
    if common::data().is_none() {
        return;
    }
    check_domain(DomainKind::parse("airline").unwrap(), 50);
}

#[test]
fn retail_all_114_gold_hashes() {
    if common::data().is_none() {
        return;
    }
    check_domain(DomainKind::parse("retail").unwrap(), 114);
}

#[test]
fn mock_all_10_gold_hashes() {
    if common::data().is_none() {
        return;
    }
    check_domain(DomainKind::parse("mock").unwrap(), 10);
}

#[test]
fn telecom_all_114_gold_hashes() {
    if common::data().is_none() {
        return;
    }
    check_domain(DomainKind::parse("telecom").unwrap(), 114);
}

/// The state right after initialization (the broken phone) matches upstream's too.
#[test]
fn telecom_all_114_start_hashes() {
    if common::data().is_none() {
        return;
    }
    let v = vectors();
    let d = Domain::load(&data_dir(), DomainKind::parse("telecom").unwrap()).expect("load");
    let mut bad = Vec::new();
    for row in v["telecom"]["tasks"].as_array().unwrap() {
        let id = row["id"].as_str().unwrap();
        let t = d.task(id).unwrap();
        let mut env = d.env();
        env.set_state(t.initial_state.as_ref(), &[])
            .expect("initialization");
        if env.db_hash() != row["start_db_hash"].as_str().unwrap()
            || env.user_db_hash().as_deref() != row["start_user_db_hash"].as_str()
        {
            bad.push(id.to_string());
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatching start states: {bad:?}",
        bad.len()
    );
}

#[test]
fn mock_canonical_text_matches_vector() {
    if common::data().is_none() {
        return;
    }
    let v = vectors();
    let d = Domain::load(&data_dir(), DomainKind::parse("mock").unwrap()).expect("load");
    let env = d.env();
    assert_eq!(
        env.db_canonical(),
        v["serialization_examples"]["mock_initial_agent_db_canonical"]
            .as_str()
            .unwrap()
    );
    assert_eq!(
        env.user_db_canonical().unwrap(),
        v["serialization_examples"]["mock_initial_user_db_canonical"]
            .as_str()
            .unwrap()
    );
}
