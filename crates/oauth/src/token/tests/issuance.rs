//! The issued access token (RFC 9068): its header and claims, verified against the published
//! JWKS.

use super::support::*;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use svc_crypto::SigningAlg;
use svc_domain::TokenEndpointAuthMethod;

#[tokio::test]
async fn the_issued_token_verifies_against_the_published_jwks_with_the_expected_claims() {
    for alg in [SigningAlg::Es256, SigningAlg::EdDsa] {
        let fx = Fixture::with_alg(alg).await;
        let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
        let response = fx
            .token(&[CC, ("scope", "audit:read")], Some(&client.basic()))
            .await
            .unwrap();
        let audience = format!("{}/api/v1", fx.issuer);
        let (header, claims) = fx.verify(&response.access_token, &audience).await;
        assert_eq!(header.typ.as_deref(), Some("at+jwt"), "{alg}");
        assert_eq!(
            header.alg,
            if alg == SigningAlg::Es256 {
                Algorithm::ES256
            } else {
                Algorithm::EdDSA
            }
        );
        let now = start().unix_timestamp();
        assert_eq!(claims["iss"], fx.issuer);
        assert_eq!(claims["sub"], client.id());
        assert_eq!(claims["aud"], audience);
        assert_eq!(claims["iat"], now);
        assert_eq!(claims["nbf"], now);
        assert_eq!(claims["exp"], now + 300);
        assert_eq!(claims["tenant_id"], fx.tenant.id.as_str());
        assert_eq!(claims["client_id"], client.id());
        assert_eq!(claims["scope"], "audit:read");
        assert_eq!(claims["subject_type"], "system");
        let jti = claims["jti"].as_str().unwrap();
        assert!(
            URL_SAFE_NO_PAD.decode(jti).unwrap().len() >= 16,
            "≥128 bits"
        );
        assert_eq!(response.expires_in, 300);

        // Two tokens never share a jti.
        let second = fx.token(&[CC], Some(&client.basic())).await.unwrap();
        let (_, second) = fx.verify(&second.access_token, &audience).await;
        assert_ne!(second["jti"], claims["jti"]);
    }
}
