//! Runtime planes (spec "Runtime planes", ARCHITECTURE.md "Planes"): which routes a process
//! serves, which database pool it opens and which background workers it runs.

use svc_config::RuntimePlane;

/// The part of the service this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Plane {
    /// Authentication, OAuth, sessions and hosted login.
    Auth,
    /// Management APIs, control plane, SCIM and OpenAPI.
    Control,
    /// Background workers and event processing.
    Async,
    /// The three in one process; allowed only when `deployment.allow_all_in_one_runtime_plane`.
    All,
}

impl Plane {
    /// The single planes this process runs (`All` expands to the three).
    pub fn members(self) -> &'static [Plane] {
        match self {
            Self::Auth => &[Self::Auth],
            Self::Control => &[Self::Control],
            Self::Async => &[Self::Async],
            Self::All => &[Self::Auth, Self::Control, Self::Async],
        }
    }

    /// Whether this process runs `part` (always false for `part == All`).
    pub fn runs(self, part: Plane) -> bool {
        self.members().contains(&part)
    }

    /// Lowercase name, as in `SVC_RUNTIME_PLANE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::Control => "control",
            Self::Async => "async",
            Self::All => "all",
        }
    }

    /// The configuration's plane enum, for config helpers keyed by plane.
    pub(crate) fn to_config(self) -> RuntimePlane {
        match self {
            Self::Auth => RuntimePlane::Auth,
            Self::Control => RuntimePlane::Control,
            Self::Async => RuntimePlane::Async,
            Self::All => RuntimePlane::All,
        }
    }
}

impl From<RuntimePlane> for Plane {
    fn from(plane: RuntimePlane) -> Self {
        match plane {
            RuntimePlane::Auth => Self::Auth,
            RuntimePlane::Control => Self::Control,
            RuntimePlane::Async => Self::Async,
            RuntimePlane::All => Self::All,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_runs_every_plane_and_singles_run_only_themselves() {
        for part in [Plane::Auth, Plane::Control, Plane::Async] {
            assert!(Plane::All.runs(part));
            assert!(part.runs(part));
        }
        assert!(!Plane::Auth.runs(Plane::Control));
        assert!(!Plane::Control.runs(Plane::Async));
        assert!(!Plane::Async.runs(Plane::Auth));
        assert!(!Plane::All.runs(Plane::All));
    }
}
