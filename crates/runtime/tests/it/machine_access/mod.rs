//! Machine access end to end, as a new user tries it: an operator creates a tenant, the tenant's
//! management application obtains a client_credentials token on the tenant's host, registers and
//! lists applications, and every refusal the spec names comes back precisely.

mod control_plane;
mod introspection;
mod metrics;
mod onboarding;
mod support;
mod token_endpoint;
