//! Where a home folder keeps credentials and keys.

/// Home-relative locations holding credentials, keys or our own configuration: never read or
/// written by model-chosen commands, and hidden from them by the kernel sandbox. Folders cover
/// everything below them.
pub const HOME_CREDENTIALS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".kube",
    ".docker",
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
