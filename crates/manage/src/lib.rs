//! Tenant and control-plane use cases of svc: what the management APIs (`/api/v1/*`) and the
//! control plane (`/api/v1/control-plane/*`) do, in domain terms.
//!
//! One module per resource, one file per use case (the Lemmy `api_crud` shape):
//!
//! - [`control_plane`]: tenants (each created together with its management application) and
//!   operator tokens;
//! - [`applications`]: a tenant's OAuth clients and their registration rules;
//! - [`agents`]: a tenant's registered agents (register, change, suspend, revoke);
//! - [`api_keys`]: a tenant's API keys (`svck_…`) and authentication with them;
//! - [`api_resources`]: the APIs a tenant protects and the permissions they define;
//! - [`users`]: a tenant's users (people who sign in), their lifecycle and sessions;
//! - [`organizations`]: a tenant's organizations (its customer companies), their lifecycle and
//!   their members' roles;
//! - [`domains`]: the domains an organization claims and proves it controls (DNS TXT or an
//!   HTTPS well-known file), through a probe port the runtime wires;
//! - [`invitations`]: invitations to join the tenant or one of its organizations (mailed
//!   links the hosted pages accept);
//! - [`roles`]: a tenant's roles (built-in and custom), the permissions they hold, and the
//!   roles of its applications;
//! - [`webhooks`]: a tenant's webhook subscriptions, test deliveries and delivery history;
//! - [`registration`]: dynamic client registration (RFC 7591, RFC 7592) over the applications'
//!   rules, and each tenant's registration policy;
//! - [`scim`]: SCIM 2.0 provisioning of a tenant's (or an organization's) people, over the
//!   users use cases;
//! - [`caller`]: what the management API checks about its caller in the database (revocation,
//!   and a human administrator's standing and roles);
//! - [`audit`]: the audit log, written in the same transaction as the change it records (as
//!   are the outbox events of every change);
//! - [`idempotency`]: `idempotency-key` handling for retryable writes.
//!
//! Every use case takes a [`ManageContext`] (store, clock, randomness) and returns
//! [`ManageError`], which `svc-http` maps to problem+json in its one error mapping. This crate
//! must not depend on axum, sqlx, the store backends, `svc-config` or any other engine: the
//! password policy, hashing and invitation mail it shares with the sign-in engine reach it as
//! ports ([`SignInServices`]) that the runtime wires.

pub mod agents;
pub mod api_keys;
pub mod api_resources;
pub mod applications;
pub mod audit;
pub mod caller;
mod context;
pub mod control_plane;
pub mod delegations;
pub mod directory_groups;
pub mod domains;
mod error;
mod events;
pub mod idempotency;
pub mod invitations;
pub mod organizations;
mod page;
pub mod policies;
mod reach;
pub mod registration;
mod revision;
pub mod roles;
pub mod scim;
mod sign_in;
pub mod social;
pub mod sso;
pub mod users;
pub mod webhooks;

pub use applications::{ApplicationView, CreatedApplicationView};
pub use context::{Actor, ChangeHook, LogoutOffer, ManageContext, RequestMeta};
pub use control_plane::{CreatedTenantView, MfaPolicyView, TenantView};
pub use error::ManageError;
pub use page::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, clamp_limit};
pub use reach::Reach;
pub use revision::{Precondition, Revision};
pub use sign_in::{AccountNotices, InvitationMail, Invitations, PendingMail, SignInServices};
