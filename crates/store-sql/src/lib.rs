//! The SQL of svc's storage ports, written once for every SQL backend.
//!
//! Each aggregate module holds its statements, its row form (what a row stores, and the one
//! `decode` into domain types) and the implementation of its `svc-store` ports for [`SqlTx`],
//! all generic over a [`Dialect`]. A backend crate (`svc-store-sqlite`, `svc-store-postgres`)
//! implements [`Dialect`] on a marker type (binding, reading, error classification), opens its
//! pool and transactions, and hands out `SqlTx<ItsDialect>`; it writes no repository code.
//!
//! Where SQL must differ (timestamp comparison columns, `jsonb`, row locks, `SKIP LOCKED`, data-
//! modifying CTEs), the statement is a [`PerDialect`] with both texts side by side. Business
//! rules live in the engines; this crate only maps the ports onto SQL. It must not depend on a
//! particular sqlx driver, nor on any HTTP framework. See `docs/adr/0004-store-written-once.md`.

mod columns;
mod dialect;
mod migrations;
pub mod naming;
mod record;
mod sorted;
mod stmt;
mod tx;

mod tenants;

mod backchannel;
mod codes;
mod device;
mod factors;
mod grants;
mod login_history;
mod logout;
mod passkeys;
mod polled;
mod recovery;
mod refresh;
mod sessions;
mod user_roles;
mod users;

mod access;
mod agents;
mod api_keys;
mod applications;
mod audit;
mod coordination;
mod counters;
mod delegations;
mod domains;
mod invitations;
mod organizations;
mod policies;
mod pushed;
mod registration;
mod scim;
mod scim_filter;
mod scim_groups;
mod signing_keys;
mod social;
mod sso;
mod webhooks;

pub use columns::{Columns, Value};
pub use dialect::{Conn, Dialect, Kind, Lease, PerDialect, Row};
pub use grants::CHANGE_CHANNEL;
pub use migrations::migration_status;
pub use record::{decode_strings, encode_scopes, encode_strings};
pub use stmt::{Arg, Stmt};
pub use tx::SqlTx;
