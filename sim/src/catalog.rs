//! The simulated model catalogue: what `/api/tags`, `/api/show` and `/api/ps` report, and the
//! failure profile behind each name.

use crate::profile::Profile;

/// One simulated model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// Base name without tag, e.g. `sim-2b`.
    pub name: String,
    pub family: String,
    pub parameter_size: String,
    pub size_bytes: u64,
    pub context_length: u64,
    pub capabilities: Vec<String>,
    pub profile: Profile,
    /// Simulated speed, used only for the reported durations.
    pub prompt_ns_per_token: u64,
    pub eval_ns_per_token: u64,
}

impl ModelSpec {
    pub fn new(name: &str, params_b: f64, thinking: bool, profile: Profile) -> Self {
        let mut capabilities = vec!["completion".to_string(), "tools".to_string()];
        if thinking {
            capabilities.push("thinking".to_string());
        }
        ModelSpec {
            name: name.to_string(),
            family: "sim".to_string(),
            parameter_size: format!("{params_b:.1}B"),
            size_bytes: (params_b * 0.6e9) as u64,
            context_length: 131_072,
            capabilities,
            profile,
            prompt_ns_per_token: (params_b * 40_000.0) as u64 + 50_000,
            eval_ns_per_token: (params_b * 1_500_000.0) as u64 + 5_000_000,
        }
    }

    /// Removes the `tools` capability (to exercise the "does not support tools" error).
    pub fn without_tools(mut self) -> Self {
        self.capabilities.retain(|c| c != "tools");
        self
    }

    pub fn has(&self, cap: &str) -> bool {
        self.capabilities.iter().any(|c| c == cap)
    }

    /// `sim-2b:latest`.
    pub fn full_name(&self) -> String {
        format!("{}:latest", self.name)
    }

    /// A stable fake digest derived from the name.
    pub fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(format!("lrab-sim/{}", self.name).as_bytes()))
    }
}

/// The built-in models.
pub fn builtin() -> Vec<ModelSpec> {
    vec![
        ModelSpec::new("sim-oracle", 35.0, true, Profile::oracle()),
        ModelSpec::new("sim-2b", 2.0, false, Profile::p2b()),
        ModelSpec::new("sim-4b", 4.0, true, Profile::p4b()),
        ModelSpec::new("sim-12b", 12.0, false, Profile::p12b()),
        ModelSpec::new("sim-35b", 35.0, true, Profile::p35b()),
        // not a task model: replays the safety suite's scripted attacks (policy::adversary)
        ModelSpec::new(
            crate::policy::adversary::MODEL,
            4.0,
            false,
            Profile::oracle(),
        ),
    ]
}

/// Splits `[namespace/]model[:tag]` and returns the base model when the tag is `latest` or
/// absent and the namespace is empty or `library`.
pub fn base_name(requested: &str) -> Option<&str> {
    let s = requested.trim();
    let s = s
        .strip_prefix("registry.ollama.ai/library/")
        .or_else(|| s.strip_prefix("library/"))
        .unwrap_or(s);
    let (base, tag) = match s.rsplit_once(':') {
        Some((b, t)) => (b, t),
        None => (s, "latest"),
    };
    if tag != "latest" || base.is_empty() || base.contains('/') {
        return None;
    }
    Some(base)
}

/// Finds a model by requested name.
pub fn lookup<'a>(models: &'a [ModelSpec], requested: &str) -> Option<&'a ModelSpec> {
    let base = base_name(requested)?;
    models.iter().find(|m| m.name == base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve() {
        let m = builtin();
        assert_eq!(lookup(&m, "sim-2b").unwrap().name, "sim-2b");
        assert_eq!(lookup(&m, "sim-2b:latest").unwrap().name, "sim-2b");
        assert_eq!(lookup(&m, "library/sim-4b:latest").unwrap().name, "sim-4b");
        assert!(lookup(&m, "sim-2b:q8").is_none());
        assert!(lookup(&m, "llama3").is_none());
        assert!(lookup(&m, "").is_none());
        assert!(lookup(&m, "sim-4b").unwrap().has("thinking"));
        assert!(!lookup(&m, "sim-2b").unwrap().has("thinking"));
    }
}
