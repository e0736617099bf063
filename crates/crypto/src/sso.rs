//! The cryptography of enterprise single sign-on: sealing an organization's upstream client
//! secret at rest (bound to tenant and organization, so a sealed secret copied to another row
//! does not open), and deriving an attempt's `state`, `nonce` and PKCE verifier from the
//! browser's cookie value, so none of them is stored and only that browser can finish it.

use crate::CryptoError;
use crate::digest::{hmac_sha256, sha256};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::fmt;
use svc_domain::{OrganizationId, ProviderSlug, TenantId};
use zeroize::Zeroizing;

/// The key sealing upstream client secrets, derived from a deployment data key under its own
/// label (the key never serves two algorithms directly).
pub struct SsoSecretKey(Zeroizing<[u8; 32]>);

impl fmt::Debug for SsoSecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SsoSecretKey(<redacted>)")
    }
}

fn aad(tenant: &TenantId, org: &OrganizationId) -> Vec<u8> {
    format!("sso|{}|{}", tenant.as_str(), org.as_str()).into_bytes()
}

/// A social provider's binding: another prefix, so an organization's sealed secret never
/// opens as a provider's (or the reverse) even where an id and a slug coincide.
fn social_aad(tenant: &TenantId, provider: &ProviderSlug) -> Vec<u8> {
    format!("social|{}|{}", tenant.as_str(), provider.as_str()).into_bytes()
}

impl SsoSecretKey {
    /// The key derived from a 32-byte deployment data key.
    ///
    /// # Errors
    /// [`CryptoError::InvalidDataKey`] unless exactly 32 bytes.
    pub fn new(master: &[u8]) -> Result<Self, CryptoError> {
        if master.len() != 32 {
            return Err(CryptoError::InvalidDataKey);
        }
        Ok(Self(Zeroizing::new(hmac_sha256(
            master,
            b"svc enterprise_sso client secret seal v1",
        ))))
    }

    /// Seals the client secret of `org`'s connection.
    ///
    /// # Errors
    /// [`CryptoError::Seal`] if the cipher cannot be set up.
    pub fn seal(
        &self,
        secret: &str,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<Vec<u8>, CryptoError> {
        crate::sealing::seal(&self.0, &aad(tenant, org), secret.as_bytes())
    }

    /// Opens what [`SsoSecretKey::seal`] sealed for the same tenant and organization.
    ///
    /// # Errors
    /// [`CryptoError::Open`] for another key, another row's secret or any alteration;
    /// [`CryptoError::MalformedSealedKey`] for bytes of another shape.
    pub fn open(
        &self,
        sealed: &[u8],
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<Zeroizing<String>, CryptoError> {
        let plain = crate::sealing::open(&self.0, &aad(tenant, org), sealed)?;
        String::from_utf8(plain.to_vec())
            .map(Zeroizing::new)
            .map_err(|_| CryptoError::MalformedSealedKey)
    }
}

impl SsoSecretKey {
    /// Seals a social provider's client secret or Apple signing key.
    ///
    /// # Errors
    /// [`CryptoError::Seal`] if the cipher cannot be set up.
    pub fn seal_social(
        &self,
        secret: &str,
        tenant: &TenantId,
        provider: &ProviderSlug,
    ) -> Result<Vec<u8>, CryptoError> {
        crate::sealing::seal(&self.0, &social_aad(tenant, provider), secret.as_bytes())
    }

    /// Opens what [`SsoSecretKey::seal_social`] sealed for the same tenant and provider.
    ///
    /// # Errors
    /// As [`SsoSecretKey::open`].
    pub fn open_social(
        &self,
        sealed: &[u8],
        tenant: &TenantId,
        provider: &ProviderSlug,
    ) -> Result<Zeroizing<String>, CryptoError> {
        let plain = crate::sealing::open(&self.0, &social_aad(tenant, provider), sealed)?;
        String::from_utf8(plain.to_vec())
            .map(Zeroizing::new)
            .map_err(|_| CryptoError::MalformedSealedKey)
    }
}

/// What an attempt sends upstream, derived from the cookie value only its browser holds.
pub struct AttemptValues {
    /// The `state` parameter (RFC 6749 §10.12).
    pub state: String,
    /// The `nonce` the ID token must carry (OpenID Connect Core §3.1.2.1).
    pub nonce: String,
    /// The PKCE verifier (RFC 7636 §4.1: 43 characters of base64url).
    pub verifier: Zeroizing<String>,
    /// Its S256 challenge (RFC 7636 §4.2).
    pub challenge: String,
}

impl AttemptValues {
    /// The values of the attempt whose cookie is `cookie`.
    #[must_use]
    pub fn derive(cookie: &str) -> Self {
        let part = |label: &[u8]| URL_SAFE_NO_PAD.encode(hmac_sha256(cookie.as_bytes(), label));
        let verifier = Zeroizing::new(part(b"svc sso pkce verifier v1"));
        let challenge = URL_SAFE_NO_PAD.encode(sha256(verifier.as_bytes()));
        Self {
            state: part(b"svc sso state v1"),
            nonce: part(b"svc sso nonce v1"),
            verifier,
            challenge,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_only_for_their_row_and_key() {
        let key = SsoSecretKey::new(&[3u8; 32]).unwrap();
        let tenant = TenantId::parse("ten_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap();
        let org = OrganizationId::parse("org_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap();
        let other = OrganizationId::parse("org_01jd2n4k6m8p0r2t4v6x8z0b2e").unwrap();
        let sealed = key.seal("s3cret", &tenant, &org).unwrap();
        assert!(!sealed.windows(6).any(|w| w == b"s3cret"));
        assert_eq!(key.open(&sealed, &tenant, &org).unwrap().as_str(), "s3cret");
        assert!(key.open(&sealed, &tenant, &other).is_err());
        assert!(
            SsoSecretKey::new(&[4u8; 32])
                .unwrap()
                .open(&sealed, &tenant, &org)
                .is_err()
        );
        let mut flipped = sealed.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(key.open(&flipped, &tenant, &org).is_err());
        assert!(key.open(&[], &tenant, &org).is_err());
        assert!(SsoSecretKey::new(&[1u8; 31]).is_err());
    }

    #[test]
    fn social_seals_are_bound_to_their_provider_and_never_open_as_an_organizations() {
        let key = SsoSecretKey::new(&[3u8; 32]).unwrap();
        let tenant = TenantId::parse("ten_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap();
        let github = ProviderSlug::parse("github").unwrap();
        let google = ProviderSlug::parse("google").unwrap();
        let sealed = key.seal_social("gh-secret", &tenant, &github).unwrap();
        assert_eq!(
            key.open_social(&sealed, &tenant, &github).unwrap().as_str(),
            "gh-secret"
        );
        assert!(key.open_social(&sealed, &tenant, &google).is_err());
        let org = OrganizationId::parse("org_01jd2n4k6m8p0r2t4v6x8z0b2d").unwrap();
        let org_sealed = key.seal("s", &tenant, &org).unwrap();
        assert!(key.open(&sealed, &tenant, &org).is_err());
        assert!(key.open_social(&org_sealed, &tenant, &github).is_err());
    }

    #[test]
    fn attempt_values_are_distinct_stable_and_pkce_shaped() {
        let a = AttemptValues::derive("cookie-a");
        let again = AttemptValues::derive("cookie-a");
        let b = AttemptValues::derive("cookie-b");
        assert_eq!(a.state, again.state);
        assert_ne!(a.state, b.state);
        assert_ne!(a.state, a.nonce);
        assert_eq!(a.verifier.len(), 43);
        assert_eq!(
            a.challenge,
            URL_SAFE_NO_PAD.encode(sha256(a.verifier.as_bytes()))
        );
    }
}
