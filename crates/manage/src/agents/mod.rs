//! A tenant's registered agents (issue 19 item 1): software that acts — for itself, or for the
//! people who delegate to it — and proves who it is with a key it registered. Register, list,
//! read, change (including suspending and reactivating) and revoke, each write audited
//! (`agent.*`) and announced (`admin.agent.*`) in the transaction that makes it.
//!
//! What is checked on the way in:
//! - the owner is a person or an application of the same tenant (a person who can still sign
//!   in): an agent answers to someone the tenant knows;
//! - the key set holds public keys only (a private member is refused, naming it) and fits in
//!   [`svc_domain::MAX_AGENT_JWKS_BYTES`];
//! - the allowed scopes are scope tokens (RFC 6749 §3.3) other than the OpenID Connect sign-in
//!   scopes (an agent never signs in as a person), the allowed resources absolute URIs, the
//!   metadata a JSON object within [`svc_domain::MAX_AGENT_METADATA_BYTES`].
//!
//! Revocation is final (`svc_domain::AgentStatus::may_become`): a revoked agent cannot be
//! changed or reactivated, and stays listed so the audit log and old tokens' `sub` name
//! something. A tenant registers at most [`MAX_AGENTS_PER_TENANT`] agents, revoked ones counted.

mod input;
mod ops;
mod view;

pub use input::{AgentPatch, NewAgent};
pub use ops::{get, list, register, revoke, update};
pub use view::AgentView;

/// Most agents one tenant may register (revoked ones included: they are kept for the record).
pub const MAX_AGENTS_PER_TENANT: u64 = 1_000;
