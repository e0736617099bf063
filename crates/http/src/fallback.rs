//! Fallbacks: 404 for paths no route matches, 405 for known paths with another method.
//!
//! Both answer with problems; the 405 keeps the `Allow` header that axum adds after the
//! fallback returns. Neither echoes the path, which may carry anything.

use crate::Problem;

/// No route matches the path.
pub(crate) async fn not_found() -> Problem {
    Problem::not_found("no resource matches the request path")
}

/// The path exists but not with this method.
pub(crate) async fn method_not_allowed() -> Problem {
    Problem::method_not_allowed()
}
