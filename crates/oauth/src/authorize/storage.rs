//! What the authorization endpoint reads and writes: the application a request names, the
//! pending interactions that wait on a hosted page, remembered consents, and the single-use
//! authorization code (256 random bits, stored hashed).

use super::request::AuthorizationRequest;
use super::{
    AuthorizeEndpoint, AuthorizeOutcome, CODE_PREFIX, grant, truncate_micros, unavailable,
};
use crate::claims::ClaimsRequest;
use crate::client_documents::{DocumentError, Reading, is_document_id};
use crate::error::ErrorPageKind;
use crate::subject::subject_for;
use std::sync::Arc;
use svc_domain::{
    Application, AuthorizationCode, ClientId, CodeBinding, Consent, GeneratedSecret, Interaction,
    InteractionId, SecretHash, Session, SessionClient, Tenant,
};
use svc_store::StoreError;
use time::OffsetDateTime;

impl AuthorizeEndpoint {
    /// The application a request's `client_id` names: a registered application's id, or the
    /// URL of a client ID metadata document, read as published now (within its cache lifetime:
    /// this request begins something new on the client's behalf).
    pub(super) async fn named_application(
        &self,
        tenant: &Tenant,
        raw: &str,
    ) -> Result<Option<Application>, DocumentError> {
        if !is_document_id(raw) {
            return Ok(self.application(tenant, raw).await?);
        }
        match &self.documents {
            Some(documents) => {
                let app = documents
                    .application(&tenant.id, raw, Reading::WhenStale)
                    .await?;
                Ok(app.filter(|a| a.tenant_id == tenant.id))
            }
            None => Ok(None),
        }
    }

    pub(super) async fn application(
        &self,
        tenant: &Tenant,
        raw: &str,
    ) -> Result<Option<Application>, StoreError> {
        let Ok(id) = ClientId::parse(raw) else {
            return Ok(None);
        };
        if let Some(app) = self.clients.as_ref().and_then(|c| c.get(&tenant.id, &id)) {
            return Ok(Some(app.as_ref().clone()));
        }
        let mut tx = self.store.read_once().await?;
        let app = tx.application(&tenant.id, &id).await?;
        tx.finish().await?;
        if let (Some(cache), Some(app)) = (&self.clients, &app) {
            cache.put(Arc::new(app.clone()));
        }
        Ok(app)
    }

    pub(super) async fn pending(
        &self,
        tenant: &Tenant,
        id: &InteractionId,
    ) -> Result<(Interaction, AuthorizationRequest, Application), AuthorizeOutcome> {
        let expired = || AuthorizeOutcome::ErrorPage {
            kind: ErrorPageKind::Refused,
            error: "invalid_request".into(),
            description: "This sign-in request has expired or is unknown. Return to the \
                          application and start again."
                .into(),
        };
        let now = self.clock.now();
        let load = async {
            let mut tx = self.store.read().await?;
            let pending = tx.interaction(&tenant.id, id, now).await?;
            let app = match &pending {
                Some(p) => tx.application(&tenant.id, &p.client_id).await?,
                None => None,
            };
            tx.finish().await?;
            Ok::<_, StoreError>((pending, app))
        };
        let (pending, app) = load.await.map_err(unavailable)?;
        let (Some(pending), Some(app)) = (pending, app) else {
            return Err(expired());
        };
        let req: AuthorizationRequest =
            serde_json::from_str(&pending.request).map_err(|_| expired())?;
        Ok((pending, req, app))
    }

    pub(super) async fn store_interaction(
        &self,
        tenant: &Tenant,
        app: &Application,
        req: &AuthorizationRequest,
    ) -> Result<InteractionId, StoreError> {
        let now = self.clock.now();
        let interaction = Interaction {
            id: InteractionId::generate(self.clock.as_ref(), self.rng.as_ref()),
            tenant_id: tenant.id.clone(),
            client_id: app.id.clone(),
            request: serde_json::to_string(req)
                .map_err(|e| StoreError::Corrupt(format!("cannot encode a request: {e}")))?,
            created_at: truncate_micros(now),
            expires_at: truncate_micros(now + self.settings.interaction_lifetime),
        };
        let mut tx = self.store.write().await?;
        tx.insert_interaction(&interaction).await?;
        tx.commit().await?;
        Ok(interaction.id)
    }

    pub(super) async fn forget(
        &self,
        tenant: &Tenant,
        id: &InteractionId,
    ) -> Result<(), StoreError> {
        let mut tx = self.store.write().await?;
        tx.delete_interaction(&tenant.id, id).await?;
        tx.commit().await
    }

    pub(super) async fn consent(
        &self,
        tenant: &Tenant,
        session: &Session,
        app: &Application,
    ) -> Result<Option<Consent>, StoreError> {
        let mut tx = self.store.read_once().await?;
        let consent = tx.consent(&tenant.id, &session.user_id, &app.id).await?;
        tx.finish().await?;
        Ok(consent)
    }

    pub(super) async fn remember_consent(
        &self,
        tenant: &Tenant,
        app: &Application,
        session: &Session,
        req: &AuthorizationRequest,
    ) -> Result<(), StoreError> {
        let mut tx = self.store.write().await?;
        let previous = tx.consent(&tenant.id, &session.user_id, &app.id).await?;
        let mut scopes: Vec<_> = req.scopes().iter().cloned().collect();
        if let Some(previous) = previous {
            scopes.extend(previous.scope.iter().cloned());
        }
        let consent = Consent {
            tenant_id: tenant.id.clone(),
            user_id: session.user_id.clone(),
            client_id: app.id.clone(),
            scope: svc_domain::ScopeSet::from_scopes(scopes),
            subject: subject_for(tenant, app, &session.user_id),
            granted_at: truncate_micros(self.clock.now()),
        };
        tx.upsert_consent(&consent).await?;
        let event = svc_domain::Event::new(
            self.clock.as_ref(),
            self.rng.as_ref(),
            &tenant.id,
            svc_domain::EventType::ConsentGranted,
            svc_domain::EventData::ConsentGranted {
                user_id: consent.user_id.clone(),
                client_id: consent.client_id.clone(),
                scope: consent.scope.to_string(),
            },
        );
        tx.insert_event(&event).await?;
        tx.commit().await
    }

    pub(super) async fn issue_code(
        &self,
        (tenant, issuer): (&Tenant, &str),
        app: &Application,
        req: &AuthorizationRequest,
        session: &Session,
        pending: Option<&Interaction>,
        context: grant::CodeContext,
    ) -> Result<String, StoreError> {
        let now = truncate_micros(self.clock.now());
        let redirect_uri = req
            .redirect()
            .ok_or_else(|| StoreError::Corrupt("stored redirect_uri no longer parses".into()))?;
        let secret = GeneratedSecret::generate(CODE_PREFIX, self.rng.as_ref());
        let code = self.new_code(
            tenant,
            app,
            req,
            session,
            context,
            (secret.hash.clone(), CodeBinding::Redirect(redirect_uri)),
            (now, now + self.settings.code_lifetime),
        );
        let mut tx = self.store.write().await?;
        tx.insert_code(&code).await?;
        self.join_session(tx.as_mut(), &code, issuer).await?;
        if let Some(p) = pending {
            tx.delete_interaction(&tenant.id, &p.id).await?;
        }
        tx.commit().await?;
        tracing::info!(tenant = %tenant.id, client_id = %app.id, session = %session.id,
            "authorization code issued");
        Ok(secret.plaintext)
    }

    /// Records that the session of `code` signed into its application, with the subject and
    /// issuer its tokens carry, when logout propagation needs it (OpenID Connect Back-Channel
    /// Logout 1.0 §2.1: the OP keeps track of the RPs a session logged in to).
    pub(super) async fn join_session(
        &self,
        tx: &mut dyn svc_store::WriteTx,
        code: &AuthorizationCode,
        issuer: &str,
    ) -> Result<(), StoreError> {
        if !self.settings.remember_session_clients {
            return Ok(());
        }
        tx.join_session(&SessionClient {
            tenant_id: code.tenant_id.clone(),
            session_id: code.session_id.clone(),
            client_id: code.client_id.clone(),
            subject: code.subject.clone(),
            issuer: issuer.to_owned(),
            joined_at: code.created_at,
        })
        .await
    }

    /// The code of `req` for the person of `session`, stored under `hash` with `binding`, valid
    /// over `(created_at, expires_at)`: everything the token endpoint checks and carries.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new_code(
        &self,
        tenant: &Tenant,
        app: &Application,
        req: &AuthorizationRequest,
        session: &Session,
        context: grant::CodeContext,
        (hash, binding): (SecretHash, CodeBinding),
        (created_at, expires_at): (OffsetDateTime, OffsetDateTime),
    ) -> AuthorizationCode {
        let grant::CodeContext {
            organization,
            resource,
            scope,
        } = context;
        AuthorizationCode {
            hash,
            tenant_id: tenant.id.clone(),
            client_id: app.id.clone(),
            user_id: session.user_id.clone(),
            session_id: session.id.clone(),
            binding,
            scope,
            code_challenge: req.code_challenge.clone(),
            nonce: req.nonce.clone(),
            auth_time: session.auth_time,
            acr: session.acr.clone(),
            amr: session.amr.clone(),
            claims: ClaimsRequest::parse(req.claims.as_deref())
                .with_acr_values(req.acr_values.as_deref())
                .to_json(),
            subject: subject_for(tenant, app, &session.user_id),
            organization_id: organization,
            resource_id: resource,
            created_at,
            expires_at,
            redeemed_at: None,
            issued_family: None,
            issued_access_jti: None,
            issued_access_expires_at: None,
            dpop_jkt: req.dpop_jkt.clone(),
            authorization_details: req.authorization_details.clone(),
        }
    }
}
