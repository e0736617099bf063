//! Routers per surface. Each exposes `router(state) -> Router` with its state applied; the
//! runtime merges the ones its plane serves.

pub mod well_known;
