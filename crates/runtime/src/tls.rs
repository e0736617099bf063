//! TLS for `server.transport = tls_h2_only`: rustls with the aws-lc-rs provider, certificate and
//! key from `[server.tls]`, ALPN offering `h2` only (spec "Production mode requirements":
//! `tls_h2_only` terminates TLS in-process and requires HTTP/2 ALPN). A client that offers only
//! `http/1.1` fails the handshake (RFC 7301 §3.2 `no_application_protocol`).

use crate::RuntimeError;
use rustls::RootCertStore;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use svc_config::{Config, Transport};

/// File locations from `[server.tls]`.
struct TlsFiles<'a> {
    cert: &'a Path,
    key: &'a Path,
    ca: Option<&'a Path>,
}

/// The TLS configuration `server.transport` asks for: none for `plain_http`, the files of
/// `[server.tls]` for `tls_h2_only` (each required key named when missing).
pub(crate) fn from_config(
    config: &Config,
) -> Result<Option<Arc<rustls::ServerConfig>>, RuntimeError> {
    match config.server.transport {
        Transport::PlainHttp => Ok(None),
        Transport::TlsH2Only => {
            let tls = &config.server.tls;
            let missing = |key: &'static str| RuntimeError::Tls {
                key,
                path: String::new(),
                detail: "required with server.transport = tls_h2_only".into(),
            };
            let cert = tls
                .cert_pem_path
                .as_deref()
                .ok_or_else(|| missing("server.tls.cert_pem_path"))?;
            let key = tls
                .key_pem_path
                .as_deref()
                .ok_or_else(|| missing("server.tls.key_pem_path"))?;
            server_config(&TlsFiles {
                cert,
                key,
                ca: tls.ca_pem_path.as_deref(),
            })
            .map(Some)
        }
    }
}

fn tls_error(key: &'static str, path: &Path, detail: impl ToString) -> RuntimeError {
    RuntimeError::Tls {
        key,
        path: path.display().to_string(),
        detail: detail.to_string(),
    }
}

fn read_certs(
    key: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, RuntimeError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| tls_error(key, path, format!("cannot read PEM certificates: {e}")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_error(key, path, format!("malformed PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(tls_error(
            key,
            path,
            "no CERTIFICATE block found; expected a PEM certificate chain",
        ));
    }
    Ok(certs)
}

/// Builds the server's TLS configuration, naming the key and file of anything unusable.
fn server_config(files: &TlsFiles<'_>) -> Result<Arc<rustls::ServerConfig>, RuntimeError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let certs = read_certs("server.tls.cert_pem_path", files.cert)?;
    let key = PrivateKeyDer::from_pem_file(files.key).map_err(|e| {
        tls_error(
            "server.tls.key_pem_path",
            files.key,
            format!("cannot read a PEM private key: {e}"),
        )
    })?;
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error("server.tls.cert_pem_path", files.cert, e))?;
    let builder = match files.ca {
        // An optional client-certificate trust bundle: presented client certificates must chain
        // to it; clients without one are still served (authentication happens at the OAuth layer).
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in read_certs("server.tls.ca_pem_path", ca)? {
                roots
                    .add(cert)
                    .map_err(|e| tls_error("server.tls.ca_pem_path", ca, e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|e| tls_error("server.tls.ca_pem_path", ca, e))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| {
        tls_error(
            "server.tls.key_pem_path",
            files.key,
            format!("key does not match the certificate or is unsupported: {e}"),
        )
    })?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}
