//! Throw-away TLS material: a CA and a server certificate for `localhost` and `127.0.0.1`,
//! written as PEM files for `[server.tls]`.

use std::path::{Path, PathBuf};

/// PEM files of a test CA and a server certificate it signed.
pub struct TlsFixture {
    /// The CA certificate clients must trust.
    pub ca_pem: String,
    /// Path of the server certificate (PEM).
    pub cert_path: PathBuf,
    /// Path of the server private key (PEM).
    pub key_path: PathBuf,
    /// Path of the CA certificate (PEM).
    pub ca_path: PathBuf,
}

/// Generates a CA and a server certificate under `dir`.
pub fn generate(dir: &Path) -> TlsFixture {
    let ca_key = rcgen::KeyPair::generate().expect("ca key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "svc test CA");
    let ca_cert = ca_params.self_signed(&ca_key).expect("ca cert");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);

    let server_key = rcgen::KeyPair::generate().expect("server key");
    let server_params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("server params");
    let server_cert = server_params
        .signed_by(&server_key, &issuer)
        .expect("server cert");

    let cert_path = dir.join("server.pem");
    let key_path = dir.join("server.key");
    let ca_path = dir.join("ca.pem");
    std::fs::write(&cert_path, server_cert.pem()).expect("write cert");
    std::fs::write(&key_path, server_key.serialize_pem()).expect("write key");
    std::fs::write(&ca_path, ca_cert.pem()).expect("write ca");
    TlsFixture {
        ca_pem: ca_cert.pem(),
        cert_path,
        key_path,
        ca_path,
    }
}
