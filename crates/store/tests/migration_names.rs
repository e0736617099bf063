//! Both backends' `migrations/` folders hold exactly the same file names, so a migration version
//! means the same schema change on SQLite and PostgreSQL and `migration_status` agrees on both.

use std::collections::BTreeSet;
use std::path::Path;

fn migration_files(backend: &str) -> std::io::Result<BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(backend)
        .join("migrations");
    std::fs::read_dir(dir)?
        .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
        .collect()
}

#[test]
fn sqlite_and_postgres_have_the_same_migration_files() {
    let sqlite = migration_files("store-sqlite").expect("read store-sqlite/migrations");
    let postgres = migration_files("store-postgres").expect("read store-postgres/migrations");
    assert!(!sqlite.is_empty(), "no migrations found");
    assert_eq!(
        sqlite, postgres,
        "migrations must be added to both backends under the same file name"
    );
}

#[test]
fn migration_files_are_plain_versioned_up_migrations() {
    for name in migration_files("store-sqlite").expect("read store-sqlite/migrations") {
        let (version, rest) = name
            .split_once('_')
            .unwrap_or_else(|| panic!("{name}: no `_` after the version"));
        assert_eq!(version.len(), 14, "{name}: version is YYYYMMDDhhmmss");
        assert!(
            version.bytes().all(|b| b.is_ascii_digit()),
            "{name}: version is digits"
        );
        assert!(
            rest.ends_with(".sql") && !rest.ends_with(".down.sql") && !rest.ends_with(".up.sql"),
            "{name}: one plain .sql up-migration per version"
        );
    }
}
