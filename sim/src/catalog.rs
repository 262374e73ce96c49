//! The simulated model catalogue: what `/api/tags`, `/api/show` and `/api/ps` report, and the
//! profile behind each name.

use crate::profile::Profile;

/// One simulated model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// Base name without tag, e.g. `sim-2b`.
    pub name: String,
    pub parameter_size: String,
    pub size_bytes: u64,
    pub context_length: u64,
    pub capabilities: Vec<String>,
    pub profile: Profile,
}

impl ModelSpec {
    pub fn from_profile(p: Profile) -> Self {
        let mut capabilities = vec!["completion".to_string(), "tools".to_string()];
        if p.thinking {
            capabilities.push("thinking".to_string());
        }
        ModelSpec {
            name: p.name.clone(),
            parameter_size: format!("{:.1}B", p.params_b),
            size_bytes: (p.params_b * 0.6e9) as u64,
            context_length: 131_072,
            capabilities,
            profile: p,
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

    /// The digest every client can recognise: SHA-256 of `lrab-sim/<name>`.
    pub fn digest(&self) -> String {
        crate::client::sim_digest(&self.name)
    }
}

/// The name of the safety suite's scripted adversary (`lrab_sim::adversary::MODEL`).
pub(crate) const ADVERSARY: &str = "sim-adversary";

/// The built-in models: the oracle, the committed profiles, and the safety suite's adversary.
pub fn builtin(profiles: Vec<Profile>) -> Vec<ModelSpec> {
    let mut v = vec![ModelSpec::from_profile(Profile::oracle())];
    v.extend(profiles.into_iter().map(ModelSpec::from_profile));
    let mut adv = Profile::oracle();
    adv.name = ADVERSARY.into();
    adv.params_b = 4.0;
    adv.thinking = false;
    v.push(ModelSpec::from_profile(adv));
    v
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
        let m = builtin(crate::profile::builtin());
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
