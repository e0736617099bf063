//! Constraint names in [`StoreError::Conflict`]: both backends report the name PostgreSQL
//! gives a violated rule, so engines and tests match one name.
//!
//! PostgreSQL names every constraint in its error; SQLite names the columns of a violated unique
//! index (which the SQLite backend turns into `table_col_key`) and no foreign key at all
//! (`foreign_key`). The repositories apply these renames to every write on every backend: on
//! PostgreSQL the SQLite-style names never occur, so they change nothing there.

use svc_store::StoreError;

/// What the SQLite backend reports for a failed foreign key, which SQLite does not name.
pub const UNNAMED_FOREIGN_KEY: &str = "foreign_key";

/// Renames a conflict on `from` to `to`; any other error is returned unchanged.
pub(crate) fn rename(err: StoreError, from: &str, to: &str) -> StoreError {
    match err {
        StoreError::Conflict { constraint } if constraint == from => StoreError::Conflict {
            constraint: to.to_owned(),
        },
        other => other,
    }
}

/// Gives an unnamed failed foreign key the name `name`: the only foreign key of the table
/// written, or the one every failure of that write violates.
pub(crate) fn foreign_key(err: StoreError, name: &str) -> StoreError {
    rename(err, UNNAMED_FOREIGN_KEY, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(err: StoreError) -> Option<String> {
        match err {
            StoreError::Conflict { constraint } => Some(constraint),
            _ => None,
        }
    }

    fn conflict(constraint: &str) -> StoreError {
        StoreError::Conflict {
            constraint: constraint.to_owned(),
        }
    }

    #[test]
    fn only_the_named_conflict_is_renamed() {
        assert_eq!(
            name_of(foreign_key(
                conflict(UNNAMED_FOREIGN_KEY),
                "t_tenant_id_fkey"
            ))
            .as_deref(),
            Some("t_tenant_id_fkey")
        );
        assert_eq!(
            name_of(foreign_key(conflict("t_pkey"), "t_tenant_id_fkey")).as_deref(),
            Some("t_pkey")
        );
        assert_eq!(
            name_of(rename(conflict("t_a_b_key"), "t_a_b_key", "t_one_a")).as_deref(),
            Some("t_one_a")
        );
        assert!(matches!(
            foreign_key(StoreError::NotFound, "x"),
            StoreError::NotFound
        ));
    }
}
