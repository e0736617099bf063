//! Store-backed tests of the token endpoint: a migrated SQLite store on a temp file, ephemeral
//! signing keys and a manual clock. Named after the rule (and RFC section) they cover.

mod audience;
mod claims;
mod client_auth;
mod client_cache;
mod client_credentials;
mod code_flow;
mod events;
mod flow;
mod issuance;
mod organizations;
mod picker;
mod policies;
mod private_key_jwt;
mod prompts;
mod pushed;
mod refresh;
mod request;
mod resources;
mod subjects;
mod support;
mod verified;
