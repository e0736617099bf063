//! Installs jsonwebtoken's aws-lc-rs crypto provider, once per process.
//!
//! jsonwebtoken 11 panics at verification time unless exactly one of its `aws_lc_rs` and
//! `rust_crypto` features is enabled; feature unification in an application's dependency graph
//! can enable both. Installing the provider explicitly removes that failure mode (research note
//! §5.3). If the application installed a provider first, that one stays: installation is
//! first-wins and the failure to replace it is ignored on purpose.

use std::sync::Once;

static INSTALL: Once = Once::new();

/// Makes sure a jsonwebtoken crypto provider is installed before any signature is verified.
pub(crate) fn ensure_installed() {
    INSTALL.call_once(|| {
        // `Err` only means another provider is already installed; that one is used.
        let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
    });
}
