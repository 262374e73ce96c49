//! The TLS client settings of every client that talks to a backend (`https://` URLs): rustls
//! with the bundled Mozilla roots (`webpki-roots`, so a machine without a system store, or
//! offline, still verifies hosted APIs the same way everywhere), plus the certificates of a PEM
//! file named by `LRAB_CA_FILE` or the conventional `SSL_CERT_FILE` (a private CA, a TLS proxy,
//! or a test's own CA). Built once per process; a CA file that cannot be read or holds no
//! certificate is an error naming the variable and the file.

use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

/// The variables naming extra CA files (PEM), in the order they are read.
pub const CA_FILE_VARS: [&str; 2] = ["LRAB_CA_FILE", "SSL_CERT_FILE"];

/// The shared client settings, or why they cannot be made (a bad CA file).
pub fn client_config() -> Result<Arc<ClientConfig>, String> {
    static CONFIG: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let extra = CA_FILE_VARS
                .iter()
                .filter_map(|v| std::env::var_os(v).map(|p| (*v, p)))
                .filter(|(_, p)| !p.is_empty());
            let mut files = Vec::new();
            for (var, path) in extra {
                files.push((var, std::path::PathBuf::from(path)));
            }
            build(&files).map(Arc::new)
        })
        .clone()
}

/// Settings trusting the bundled roots and the certificates in `files` (`(variable, path)`).
fn build(files: &[(&str, std::path::PathBuf)]) -> Result<ClientConfig, String> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for (var, path) in files {
        let shown = path.display();
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect())
            .map_err(|e| format!("${var}: cannot read CA certificates from {shown}: {e}"))?;
        if certs.is_empty() {
            return Err(format!("${var}: {shown} holds no PEM certificate"));
        }
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(format!("${var}: no certificate in {shown} could be used"));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS settings: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// A hint to add to a TLS failure: how to trust a private CA.
pub fn trust_hint() -> String {
    format!(
        "the server's certificate must chain to a public root or to a CA in the PEM file named by ${}",
        CA_FILE_VARS[0]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_ca_file_is_named() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("nope.pem");
        let e = build(&[("LRAB_CA_FILE", missing.clone())]).unwrap_err();
        assert!(e.contains("$LRAB_CA_FILE") && e.contains("nope.pem"), "{e}");
        let empty = d.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = build(&[("SSL_CERT_FILE", empty)]).unwrap_err();
        assert!(
            e.contains("$SSL_CERT_FILE") && e.contains("holds no PEM"),
            "{e}"
        );
        assert!(build(&[]).is_ok());
    }
}
