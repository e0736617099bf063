//! The grants of the token endpoint, one file each (RFC 6749 §4 and its extensions). A grant
//! takes an authenticated client and a parsed request and decides what the token will say
//! (subject, audience, scopes); issuing it is [`crate::token::issue`]'s job.

pub mod authorization_code;
pub mod client_credentials;
pub mod refresh_token;
pub mod token_exchange;
