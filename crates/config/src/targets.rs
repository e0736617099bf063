//! Which database each plane and the migrations use, and how big each pool is.
//!
//! The fallback rules live here once (spec: "Missing plane database URLs fall back to
//! `[database].url`") so the runtime and the validator cannot disagree.

use std::path::PathBuf;

use crate::model::{Config, DatabaseTopology, RuntimePlane};
use crate::secret::DatabaseUrl;

/// Where the embedded database lives, relative to the working directory.
pub const EMBEDDED_SQLITE_PATH: &str = "data/svc.db";

/// A database to connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatabaseTarget {
    /// A configured URL.
    Url(DatabaseUrl),
    /// The embedded SQLite file used when no URL is configured (non-production only; validation
    /// refuses production without a URL).
    EmbeddedSqlite(PathBuf),
}

impl DatabaseTarget {
    /// The URL, if this target is one.
    #[must_use]
    pub fn url(&self) -> Option<&DatabaseUrl> {
        match self {
            Self::Url(url) => Some(url),
            Self::EmbeddedSqlite(_) => None,
        }
    }

    /// A printable name with any password redacted.
    #[must_use]
    pub fn redacted(&self) -> String {
        match self {
            Self::Url(url) => url.redacted(),
            Self::EmbeddedSqlite(path) => format!("embedded SQLite at {}", path.display()),
        }
    }
}

impl Config {
    /// The base runtime URL: `database.url`, falling back to `database.identity_url`.
    #[must_use]
    pub fn base_database_url(&self) -> Option<&DatabaseUrl> {
        self.database
            .url
            .as_ref()
            .or(self.database.identity_url.as_ref())
    }

    /// The plane's own URL key and value (`auth_url`, …); `None` for [`RuntimePlane::All`].
    fn plane_url(&self, plane: RuntimePlane) -> Option<&DatabaseUrl> {
        match plane {
            RuntimePlane::Auth => self.database.auth_url.as_ref(),
            RuntimePlane::Control => self.database.control_url.as_ref(),
            RuntimePlane::Async => self.database.async_url.as_ref(),
            RuntimePlane::All => None,
        }
    }

    /// The database `plane` connects to. With `split_by_plane` a single plane uses its own URL,
    /// falling back to the base URL; `all` and `shared` use the base URL. Without any URL, the
    /// embedded SQLite file `<working dir>/data/svc.db`.
    #[must_use]
    pub fn database_url_for(&self, plane: RuntimePlane) -> DatabaseTarget {
        let own = match self.deployment.database_topology {
            DatabaseTopology::SplitByPlane => self.plane_url(plane),
            DatabaseTopology::Shared => None,
        };
        match own.or(self.base_database_url()) {
            Some(url) => DatabaseTarget::Url(url.clone()),
            None => DatabaseTarget::EmbeddedSqlite(self.working_dir().join(EMBEDDED_SQLITE_PATH)),
        }
    }

    /// The databases `svc-runtime --migrate-only` migrates: `migration_url` if set, else every
    /// distinct runtime target.
    #[must_use]
    pub fn migration_targets(&self) -> Vec<DatabaseTarget> {
        if let Some(url) = &self.database.migration_url {
            return vec![DatabaseTarget::Url(url.clone())];
        }
        let mut targets: Vec<DatabaseTarget> = Vec::new();
        for plane in RuntimePlane::All.served() {
            let target = self.database_url_for(*plane);
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
        targets
    }

    /// `(max_connections, min_connections)` for `plane`'s pool: the `[database.<plane>_pool]`
    /// override where set, else the `[database]` values.
    #[must_use]
    pub fn pool_sizing_for(&self, plane: RuntimePlane) -> (u32, u32) {
        let db = &self.database;
        let pool = match plane {
            RuntimePlane::Auth => &db.auth_pool,
            RuntimePlane::Control => &db.control_pool,
            RuntimePlane::Async => &db.async_pool,
            RuntimePlane::All => return (db.max_connections, db.min_connections),
        };
        (
            pool.max_connections.unwrap_or(db.max_connections),
            pool.min_connections.unwrap_or(db.min_connections),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> DatabaseUrl {
        DatabaseUrl::parse(s).unwrap()
    }

    #[test]
    fn no_url_means_embedded_sqlite_in_the_working_dir() {
        let config = Config::default().with_working_dir("/srv/svc");
        assert_eq!(
            config.database_url_for(RuntimePlane::All),
            DatabaseTarget::EmbeddedSqlite(PathBuf::from("/srv/svc/data/svc.db"))
        );
        assert_eq!(config.migration_targets().len(), 1);
    }

    #[test]
    fn identity_url_is_the_base_when_url_is_unset() {
        let mut config = Config::default();
        config.database.identity_url = Some(url("postgres://id/db"));
        assert_eq!(
            config.database_url_for(RuntimePlane::Auth),
            DatabaseTarget::Url(url("postgres://id/db"))
        );
    }

    #[test]
    fn split_topology_uses_plane_urls_with_fallback() {
        let mut config = Config::default();
        config.deployment.database_topology = DatabaseTopology::SplitByPlane;
        config.database.url = Some(url("postgres://base/db"));
        config.database.auth_url = Some(url("postgres://auth/db"));
        assert_eq!(
            config.database_url_for(RuntimePlane::Auth).url(),
            Some(&url("postgres://auth/db"))
        );
        assert_eq!(
            config.database_url_for(RuntimePlane::Control).url(),
            Some(&url("postgres://base/db"))
        );
        assert_eq!(
            config.database_url_for(RuntimePlane::All).url(),
            Some(&url("postgres://base/db"))
        );
        // auth + base (control and async share the base).
        assert_eq!(config.migration_targets().len(), 2);
    }

    #[test]
    fn shared_topology_ignores_plane_urls() {
        let mut config = Config::default();
        config.database.url = Some(url("postgres://base/db"));
        config.database.auth_url = Some(url("postgres://auth/db"));
        assert_eq!(
            config.database_url_for(RuntimePlane::Auth).url(),
            Some(&url("postgres://base/db"))
        );
    }

    #[test]
    fn migration_url_replaces_the_runtime_targets() {
        let mut config = Config::default();
        config.database.url = Some(url("postgres://base/db"));
        assert_eq!(
            config.migration_targets(),
            vec![DatabaseTarget::Url(url("postgres://base/db"))]
        );
        config.database.migration_url = Some(url("postgres://owner/db"));
        assert_eq!(
            config.migration_targets(),
            vec![DatabaseTarget::Url(url("postgres://owner/db"))]
        );
    }

    #[test]
    fn pool_overrides_apply_per_plane() {
        let mut config = Config::default();
        config.database.auth_pool.max_connections = Some(50);
        assert_eq!(config.pool_sizing_for(RuntimePlane::Auth), (50, 0));
        assert_eq!(config.pool_sizing_for(RuntimePlane::Control), (10, 0));
        assert_eq!(config.pool_sizing_for(RuntimePlane::All), (10, 0));
    }
}
