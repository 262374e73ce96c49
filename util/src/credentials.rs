//! Where a home folder keeps credentials and keys.

/// Home-relative locations holding credentials, keys or our own configuration: never read or
/// written by model-chosen commands, and hidden from them by the kernel sandbox. Folders cover
/// everything below them. Docker keeps its registry logins in `config.json` and its TLS client
/// key in `key.pem`; the rest of `~/.docker` (contexts, CA and public certificates) is not secret.
/// lrab-safety's sensitive-path table is this list plus the shell history files.
pub const HOME_CREDENTIALS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".docker/key.pem",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".local/share/keyrings",
    ".password-store",
    ".azure",
    ".config/lrab",
];
