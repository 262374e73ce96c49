//! Optional web tools (`web_search`, `web_fetch`), off unless the operator configures a
//! SearxNG-compatible search endpoint (`--web-search URL` or `LRAB_WEB_SEARCH`). The URLs are
//! model-chosen, so only http/https is allowed and private/loopback targets are refused — the
//! one exception is the configured endpoint's own host and port, which the operator chose.

use super::ToolOutcome;
use super::{arg, arg_u64, Effect};
use serde_json::Value;
use std::io::Read;
use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

/// Bytes read from any response at most (the rest is dropped, and the cut is stated).
pub const BYTE_CAP: u64 = 2_000_000;
/// Characters of extracted page text shown to the model.
pub const TEXT_BUDGET: usize = 4000;
/// Redirects followed by `web_fetch`, each target checked again.
const MAX_REDIRECTS: usize = 5;

/// A parsed http(s) URL: just what the address checks need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

/// Why a string is not an http(s) URL the web tools can use (told to the model as is).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("'{url}' is not an absolute http(s) URL")]
    NotAbsolute { url: String },
    #[error("scheme '{scheme}://' is not allowed; only http:// and https:// URLs can be fetched (read local files with read_file)")]
    Scheme { scheme: String },
    #[error("'{url}' has a malformed IPv6 host")]
    Ipv6 { url: String },
    #[error("'{url}' has no host")]
    NoHost { url: String },
    #[error("'{url}' has an invalid port '{port}'")]
    Port { url: String, port: String },
}

/// Split an http(s) URL into scheme, host and port.
pub fn parse_target(url: &str) -> Result<Target, TargetError> {
    let url = url.trim();
    let u = || url.to_string();
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(TargetError::NotAbsolute { url: u() });
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(TargetError::Scheme { scheme });
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let hostport = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = if let Some(stripped) = hostport.strip_prefix('[') {
        let (h, after) = stripped
            .split_once(']')
            .ok_or_else(|| TargetError::Ipv6 { url: u() })?;
        (h.to_string(), after.strip_prefix(':').map(str::to_string))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p.to_string())),
            None => (hostport.to_string(), None),
        }
    };
    if host.is_empty() {
        return Err(TargetError::NoHost { url: u() });
    }
    let default = if scheme == "https" { 443 } else { 80 };
    let port = match port.filter(|p| !p.is_empty()) {
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| TargetError::Port { url: u(), port: p })?,
        None => default,
    };
    Ok(Target {
        scheme,
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// Addresses a model must not reach through `web_fetch` (local services, the LAN, metadata).
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v) => {
            v.is_loopback()
                || v.is_private()
                || v.is_link_local()
                || v.is_unspecified()
                || v.is_broadcast()
                || v.octets()[0] == 0
                || (v.octets()[0] == 100 && (v.octets()[1] & 0xc0) == 64) // CGNAT
        }
        IpAddr::V6(v) => {
            if let Some(m) = v.to_ipv4_mapped() {
                return is_private(IpAddr::V4(m));
            }
            v.is_loopback()
                || v.is_unspecified()
                || (v.segments()[0] & 0xfe00) == 0xfc00 // unique local
                || (v.segments()[0] & 0xffc0) == 0xfe80 // link local
        }
    }
}

/// Strip tags, scripts, styles and comments from HTML, decode common entities, collapse
/// whitespace (paragraph-ish breaks kept as single newlines).
pub fn extract_text(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    let bytes = html.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'<' {
            let rest = &lower[i..];
            let skip_to = |close: &str| rest.find(close).map(|p| i + p + close.len());
            let end = if rest.starts_with("<!--") {
                skip_to("-->")
            } else if rest.starts_with("<script") {
                skip_to("</script>")
            } else if rest.starts_with("<style") {
                skip_to("</style>")
            } else if rest.starts_with("<noscript") {
                skip_to("</noscript>")
            } else {
                rest.find('>').map(|p| i + p + 1)
            };
            let end = end.unwrap_or(bytes.len());
            let tag = &lower[i..end];
            let block = [
                "<p", "</p", "<br", "<div", "</div", "<li", "<h", "</h", "<tr", "<ti",
            ];
            out.push(if block.iter().any(|b| tag.starts_with(b)) {
                '\n'
            } else {
                ' '
            });
            i = end;
        } else {
            let next = lower[i..].find('<').map(|p| i + p).unwrap_or(bytes.len());
            out.push_str(&decode_entities(&html[i..next]));
            i = next;
        }
    }
    let mut lines: Vec<String> = Vec::new();
    for l in out.lines() {
        let l = l.split_whitespace().collect::<Vec<_>>().join(" ");
        if !l.is_empty() {
            lines.push(l);
        }
    }
    lines.join("\n")
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    s.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Percent-encode a query-string value.
pub fn encode_query(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Head-first clamp: the start of a page carries its title and lead, so keep that.
pub fn clamp_head_first(text: &str, budget: usize) -> String {
    let total = text.chars().count();
    if total <= budget {
        return format!("{text}\n[{total} characters of text]");
    }
    let head: String = text.chars().take(budget).collect();
    format!("{head}\n[… showing the first {budget} of {total} characters of text]")
}

/// The resolver ureq connects through: it drops private/loopback addresses (except for the
/// configured endpoint), so a host that re-resolves to a local address between the check in
/// `admit` and the connection (DNS rebinding) still cannot reach a local service.
struct PublicOnly {
    host: String,
    port: u16,
}

impl ureq::Resolver for PublicOnly {
    fn resolve(&self, netloc: &str) -> std::io::Result<Vec<std::net::SocketAddr>> {
        let addrs: Vec<std::net::SocketAddr> = netloc.to_socket_addrs()?.collect();
        let (h, p) = netloc.rsplit_once(':').unwrap_or((netloc, ""));
        let h = h
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if h == self.host && p.parse::<u16>().ok() == Some(self.port) {
            return Ok(addrs);
        }
        let public: Vec<_> = addrs.into_iter().filter(|a| !is_private(a.ip())).collect();
        if public.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("refused: '{h}' resolves to a private or loopback address"),
            ));
        }
        Ok(public)
    }
}

/// The web search endpoint the web tools were given is not an http(s) URL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("web search endpoint: {0}")]
pub struct EndpointUrlError(pub TargetError);

pub struct WebTools {
    endpoint: String,
    endpoint_host: String,
    endpoint_port: u16,
    agent: ureq::Agent,
}

impl WebTools {
    /// `endpoint` must be an http(s) URL (checked here, so a bad flag fails at start-up).
    pub fn new(endpoint: &str, timeout: Duration) -> Result<Self, EndpointUrlError> {
        let t = parse_target(endpoint).map_err(EndpointUrlError)?;
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(timeout.min(Duration::from_secs(10)))
            .timeout(timeout)
            .redirects(0)
            .user_agent("lrab-harness")
            .resolver(PublicOnly {
                host: t.host.clone(),
                port: t.port,
            })
            .build();
        Ok(WebTools {
            endpoint: endpoint.trim().to_string(),
            endpoint_host: t.host,
            endpoint_port: t.port,
            agent,
        })
    }

    /// Refuse a target the model must not reach; `Ok` when allowed.
    fn admit(&self, url: &str) -> Result<(), String> {
        let t = parse_target(url).map_err(|e| e.to_string())?;
        // the operator's endpoint (host and port) is trusted even on a private address
        if t.host == self.endpoint_host && t.port == self.endpoint_port {
            return Ok(());
        }
        let addrs: Vec<IpAddr> = (t.host.as_str(), t.port)
            .to_socket_addrs()
            .map_err(|e| {
                format!(
                    "cannot resolve '{}': {e}. Check the URL or search again",
                    t.host
                )
            })?
            .map(|a| a.ip())
            .collect();
        if addrs.is_empty() || addrs.iter().any(|ip| is_private(*ip)) {
            return Err(format!(
                "refused: '{}' is a private or loopback address, which web_fetch may not reach. Fetch a public URL from the web_search results instead",
                t.host
            ));
        }
        Ok(())
    }

    /// GET with the byte cap; follows redirects itself so every hop is admitted.
    fn get(&self, url: &str) -> Result<(String, String, bool), String> {
        let mut url = url.trim().to_string();
        for _ in 0..=MAX_REDIRECTS {
            self.admit(&url)?;
            let resp = match self.agent.get(&url).call() {
                Ok(r) => r,
                Err(ureq::Error::Status(code, r)) if (300..400).contains(&code) => r,
                Err(ureq::Error::Status(code, _)) => {
                    return Err(format!("HTTP {code} from {url}. Try another result"))
                }
                Err(e) => return Err(format!("cannot fetch {url}: {e}. Try another result")),
            };
            if (300..400).contains(&resp.status()) {
                let Some(loc) = resp.header("location") else {
                    return Err(format!(
                        "HTTP {} from {url} without a location",
                        resp.status()
                    ));
                };
                url = if loc.contains("://") {
                    loc.to_string()
                } else {
                    let t = parse_target(&url).map_err(|e| e.to_string())?;
                    let path = if loc.starts_with('/') {
                        loc.to_string()
                    } else {
                        format!("/{loc}")
                    };
                    format!("{}://{}:{}{}", t.scheme, t.host, t.port, path)
                };
                continue;
            }
            let ctype = resp.content_type().to_string();
            let mut buf = Vec::new();
            resp.into_reader()
                .take(BYTE_CAP + 1)
                .read_to_end(&mut buf)
                .map_err(|e| format!("reading {url} failed: {e}. Try again or another result"))?;
            let cut = buf.len() as u64 > BYTE_CAP;
            buf.truncate(BYTE_CAP as usize);
            return Ok((String::from_utf8_lossy(&buf).into_owned(), ctype, cut));
        }
        Err(format!("more than {MAX_REDIRECTS} redirects from {url}"))
    }

    pub fn search(&self, args: &Value) -> ToolOutcome {
        let Some(query) = arg(args, "query").filter(|q| !q.trim().is_empty()) else {
            return ToolOutcome::err("missing required argument 'query'");
        };
        let max = arg_u64(args, "max_results").unwrap_or(5).clamp(1, 20) as usize;
        let sep = if self.endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        let url = format!(
            "{}{sep}q={}&format=json",
            self.endpoint,
            encode_query(query)
        );
        let (body, _, _) = match self.get(&url) {
            Ok(x) => x,
            Err(e) => return ToolOutcome::err(format!("web search failed: {e}")),
        };
        let v: Value = match serde_json::from_str(&body) {
            Ok(v) => v,
            Err(e) => {
                return ToolOutcome::err(format!(
                    "the search endpoint did not return JSON ({e}); continue without web search"
                ))
            }
        };
        let results = v["results"].as_array().cloned().unwrap_or_default();
        if results.is_empty() {
            return ToolOutcome::ok(
                format!("no results for '{query}'; try other words"),
                Effect::Read,
                None,
            );
        }
        let mut text = format!(
            "{} result(s) for '{query}' (showing {}):\n",
            results.len(),
            results.len().min(max)
        );
        for (i, r) in results.iter().take(max).enumerate() {
            let s = |k: &str| r[k].as_str().unwrap_or("").trim().to_string();
            let snippet: String = s("content").chars().take(300).collect();
            text.push_str(&format!(
                "{}. {}\n   {}\n   {}\n",
                i + 1,
                s("title"),
                s("url"),
                snippet
            ));
        }
        text.push_str("Read a page with web_fetch(url).");
        ToolOutcome::ok(text, Effect::Read, None)
    }

    pub fn fetch(&self, args: &Value) -> ToolOutcome {
        let Some(url) = arg(args, "url").filter(|u| !u.trim().is_empty()) else {
            return ToolOutcome::err("missing required argument 'url'");
        };
        let (body, ctype, cut) = match self.get(url) {
            Ok(x) => x,
            Err(e) => return ToolOutcome::err(format!("web_fetch: {e}")),
        };
        let looks_html = ctype.contains("html") || body.trim_start().starts_with('<');
        let text = if looks_html {
            extract_text(&body)
        } else {
            body.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        let mut out = clamp_head_first(&text, TEXT_BUDGET);
        if cut {
            out.push_str(&format!(
                "\n[the page was larger than {BYTE_CAP} bytes and was cut]"
            ));
        }
        ToolOutcome::ok(out, Effect::Read, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_parsed_and_schemes_refused() {
        let t = parse_target("http://127.0.0.1:8080/x?y").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 8080));
        assert_eq!(parse_target("https://Example.org").unwrap().port, 443);
        let e = parse_target("file:///etc/passwd").unwrap_err();
        assert_eq!(
            e,
            TargetError::Scheme {
                scheme: "file".into()
            }
        );
        assert_eq!(e.to_string(), "scheme 'file://' is not allowed; only http:// and https:// URLs can be fetched (read local files with read_file)");
        assert!(matches!(
            parse_target("ftp://x"),
            Err(TargetError::Scheme { .. })
        ));
        let e = parse_target(" example.org ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "'example.org' is not an absolute http(s) URL"
        );
        assert!(matches!(e, TargetError::NotAbsolute { .. }));
        let e = parse_target("http://[::1/").unwrap_err();
        assert_eq!(e.to_string(), "'http://[::1/' has a malformed IPv6 host");
        let e = parse_target("http:///x").unwrap_err();
        assert_eq!(
            e,
            TargetError::NoHost {
                url: "http:///x".into()
            }
        );
        assert_eq!(e.to_string(), "'http:///x' has no host");
        let e = parse_target("http://h:99999/").unwrap_err();
        assert_eq!(
            e.to_string(),
            "'http://h:99999/' has an invalid port '99999'"
        );
        assert!(matches!(e, TargetError::Port { .. }));
        let e = WebTools::new("gopher://x", Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(matches!(e.0, TargetError::Scheme { .. }));
        assert!(
            e.to_string()
                .starts_with("web search endpoint: scheme 'gopher://' is not allowed"),
            "{e}"
        );
        assert_eq!(parse_target("http://[::1]:9/").unwrap().host, "::1");
    }

    #[test]
    fn private_addresses_are_recognised() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "169.254.169.254",
            "::1",
            "0.0.0.0",
        ] {
            assert!(is_private(a.parse().unwrap()), "{a}");
        }
        assert!(!is_private("93.184.216.34".parse().unwrap()));
    }

    #[test]
    fn resolver_drops_local_addresses_except_for_the_endpoint() {
        use ureq::Resolver;
        let r = PublicOnly {
            host: "127.0.0.1".into(),
            port: 8888,
        };
        assert!(r.resolve("127.0.0.1:8888").is_ok());
        let e = r.resolve("127.0.0.1:8889").unwrap_err();
        assert!(e.to_string().contains("refused"), "{e}");
        assert!(r.resolve("localhost:8888").is_err());
        assert!(r.resolve("[::1]:8888").is_err());
    }

    #[test]
    fn html_is_reduced_to_text() {
        let t = extract_text(
            "<html><head><style>p{color:red}</style><script>var x='<p>';</script></head>\
             <body><h1>Title</h1><!-- hidden --><p>One &amp; two</p>\n\n  <p>three   four</p></body></html>",
        );
        assert_eq!(t, "Title\nOne & two\nthree four");
        assert_eq!(encode_query("a b&c"), "a+b%26c");
        assert!(clamp_head_first("abcdef", 3).contains("first 3 of 6"));
    }
}
