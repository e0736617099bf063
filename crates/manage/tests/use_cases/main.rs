//! Store-backed tests of the management use cases: each test runs on its own fresh SQLite
//! database with a manual clock and seeded randomness, through the public API only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod api_resources;
mod applications;
mod audit;
mod changes;
mod domains;
mod faulty_access;
mod faulty_domains;
mod faulty_factors;
mod faulty_identity;
mod faulty_invitations;
mod faulty_logout;
mod faulty_organizations;
mod faulty_passkeys;
mod faulty_policies;
mod faulty_recovery;
mod faulty_social;
mod faulty_sso;
mod faulty_user_roles;
mod faulty_webhooks;
mod idempotency;
mod invitations;
mod metadata_documents;
mod operator_tokens;
mod organizations;
mod role_assignments;
mod roles;
mod support;
mod tenants;
mod user_roles;
mod users;
mod webhooks;
