//! Tests of `backend.rs`, kept apart so that file stays under the 700-line limit.

use super::*;

#[test]
fn sim_backend_serves_its_models() {
    let b = Backend::start_with(&BackendSpec::Sim, Duration::from_secs(1), 0, false).unwrap();
    assert!(b.simulated && b.banner().unwrap().contains("SIMULATED"));
    let info = check_models_at(&b.url, &b.url, &["sim-2b".into(), "sim-4b:latest".into()]).unwrap();
    assert_eq!(info.len(), 2);
    let e = check_models_at(&b.url, &b.url, &["gpt-9".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("gpt-9") && e.contains("sim-2b"), "{e}");
}

#[test]
fn unreachable_backend_is_a_clear_error() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let spec: BackendSpec = url.parse().unwrap();
    let e = Backend::start_with(&spec, Duration::from_millis(0), 0, false)
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("unreachable"));
    assert!("ftp://x".parse::<BackendSpec>().is_err());
}

#[test]
fn backend_lists_are_checked_element_by_element() {
    let s: BackendSpec = "http://10.0.0.1:11434, http://gpu2:11435/".parse().unwrap();
    assert_eq!(
        s,
        BackendSpec::Urls(vec![
            "http://10.0.0.1:11434".into(),
            "http://gpu2:11435".into()
        ])
    );
    let s: BackendSpec = "https://[::1]:8080/ollama".parse().unwrap();
    assert_eq!(s, BackendSpec::Url("https://[::1]:8080/ollama".into()));
    for (bad, says) in [
        ("http://a:1,,http://b:2", "element 2 of 3 is empty"),
        ("http://a:1,", "element 2 of 2 is empty"),
        ("http://a:1,htp:/b", "'htp:/b' is not an http"),
        ("http://a:1,sim", "'sim' is not an http"),
        ("http://a:1,http://b:99999", "port '99999'"),
        ("http://a:1,http://:80", "no valid host"),
        ("http://a:1,http://b c:80", "space"),
        ("http://a:1,http://a:1/", "listed twice"),
        ("http://a:x", "port 'x'"),
    ] {
        let e = bad.parse::<BackendSpec>().unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn url_errors_have_a_kind_each() {
    assert_eq!(
        parse_url("ftp://x"),
        Err(UrlError::Scheme("ftp://x".into()))
    );
    assert_eq!(
        parse_url("http://a b"),
        Err(UrlError::Extra("http://a b".into()))
    );
    assert_eq!(
        parse_url("http://[::1"),
        Err(UrlError::Bracket("http://[::1".into()))
    );
    assert_eq!(
        parse_url("http://:1"),
        Err(UrlError::Host("http://:1".into()))
    );
    let e = parse_url("http://h:0").unwrap_err();
    assert_eq!(
        e,
        UrlError::Port {
            url: "http://h:0".into(),
            port: "0".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "'http://h:0': port '0' is not a number from 1 to 65535"
    );
}
