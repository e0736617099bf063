//! The pure domain model of svc: typed identifiers, values that parse instead of validate,
//! entities, and the `Clock`/`Rng` seams through which time and randomness enter.
//!
//! This crate performs no IO and knows no async runtime, database or HTTP framework; every other
//! crate depends on it, never the other way round.

mod application;
mod audit;
mod clock;
mod id;
mod keys;
mod redirect_uri;
mod rng;
mod scope;
mod secret;
mod session;
mod tenant;
mod user;

pub use application::{Application, GrantType, OperatorToken, TokenEndpointAuthMethod};
pub use audit::{AuditEntry, AuditOutcome};
pub use clock::{Clock, ManualClock, SystemClock};
pub use id::{
    AuditEntryId, ClientId, IdError, InteractionId, OperatorTokenId, RefreshFamilyId, SessionId,
    TenantId, UserId,
};
pub use keys::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord};
pub use redirect_uri::{RedirectUri, RedirectUriError};
pub use rng::{OsRandom, Rng, SeededRandom};
pub use scope::{Scope, ScopeError, ScopeSet};
pub use secret::{GeneratedSecret, SecretHash};
pub use session::{
    ACR_PASSWORD, AuthorizationCode, Consent, Interaction, RefreshFamily, RefreshToken, Session,
    UserToken, UserTokenPurpose,
};
pub use tenant::{PairwiseSecret, Tenant, TenantSlug, TenantSlugError, TenantStatus};
pub use user::{Email, EmailError, PasswordHash, User, UserStatus};
