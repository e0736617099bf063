//! The pure domain model of svc: typed identifiers, values that parse instead of validate,
//! entities, and the `Clock`/`Rng` seams through which time and randomness enter.
//!
//! This crate performs no IO and knows no async runtime, database or HTTP framework; every other
//! crate depends on it, never the other way round.

mod clock;
mod id;
mod keys;
mod rng;
mod tenant;

pub use clock::{Clock, ManualClock, SystemClock};
pub use id::{IdError, TenantId};
pub use keys::{KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord};
pub use rng::{OsRandom, Rng, SeededRandom};
pub use tenant::{Tenant, TenantSlug, TenantSlugError, TenantStatus};
