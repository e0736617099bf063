//! [`Stmt`]: one SQL statement and its arguments, built once by the shared repositories and run
//! by the backend's [`crate::Dialect`] (see `crate::dialect` for how a statement runs); [`Arg`]: an argument, tagged with what it means so each dialect
//! can store it its own way (a timestamp is text on SQLite and `timestamptz` on PostgreSQL).

use std::borrow::Cow;
use time::OffsetDateTime;

/// One argument of a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg<'a> {
    /// Text (or `NULL`).
    Text(Option<Cow<'a, str>>),
    /// A JSON document given as its text: SQLite stores the text, PostgreSQL binds it as `jsonb`
    /// (so no statement needs a cast).
    Json(String),
    /// An integer (or `NULL`).
    Int(Option<i64>),
    /// A boolean.
    Bool(bool),
    /// Bytes (or `NULL`).
    Bytes(Option<&'a [u8]>),
    /// A timestamp to store in a timestamp column (or `NULL`).
    Time(Option<OffsetDateTime>),
    /// An instant to compare with in SQL: nanoseconds since the epoch on SQLite (compared with
    /// the `_ns` twin columns, since its stored text does not order below one second),
    /// `timestamptz` on PostgreSQL (compared with the column itself).
    Instant(Option<OffsetDateTime>),
    /// The `_ns` twin of the timestamp written just before it: bound on SQLite, skipped on
    /// PostgreSQL, which has no twin columns. Only in [`crate::PerDialect`] statements, whose
    /// SQLite text has the extra placeholder.
    Twin(Option<OffsetDateTime>),
    /// A list of text values to match with `IN`: a JSON array for SQLite's `json_each`, a
    /// `text[]` for PostgreSQL's `= ANY`.
    TextList(Vec<&'a str>),
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(value: &'a str) -> Self {
        Self::Text(Some(Cow::Borrowed(value)))
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(value: Option<&'a str>) -> Self {
        Self::Text(value.map(Cow::Borrowed))
    }
}

impl From<String> for Arg<'_> {
    fn from(value: String) -> Self {
        Self::Text(Some(Cow::Owned(value)))
    }
}

impl From<Option<String>> for Arg<'_> {
    fn from(value: Option<String>) -> Self {
        Self::Text(value.map(Cow::Owned))
    }
}

impl From<i64> for Arg<'_> {
    fn from(value: i64) -> Self {
        Self::Int(Some(value))
    }
}

impl From<Option<i64>> for Arg<'_> {
    fn from(value: Option<i64>) -> Self {
        Self::Int(value)
    }
}

impl From<bool> for Arg<'_> {
    fn from(value: bool) -> Self {
        Self::Bool(value)
    }
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(value: &'a [u8]) -> Self {
        Self::Bytes(Some(value))
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Arg<'a> {
    fn from(value: &'a [u8; N]) -> Self {
        Self::Bytes(Some(value.as_slice()))
    }
}

impl<'a> From<Option<&'a [u8]>> for Arg<'a> {
    fn from(value: Option<&'a [u8]>) -> Self {
        Self::Bytes(value)
    }
}

impl From<OffsetDateTime> for Arg<'_> {
    fn from(value: OffsetDateTime) -> Self {
        Self::Time(Some(value))
    }
}

impl From<Option<OffsetDateTime>> for Arg<'_> {
    fn from(value: Option<OffsetDateTime>) -> Self {
        Self::Time(value)
    }
}

/// A statement: its text (`$1`, `$2`, … placeholders in both dialects) and its arguments in
/// order.
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt<'a> {
    sql: Cow<'static, str>,
    args: Vec<Arg<'a>>,
}

impl<'a> Stmt<'a> {
    /// A statement with fixed text.
    pub fn new(sql: &'static str) -> Self {
        Self {
            sql: Cow::Borrowed(sql),
            args: Vec::new(),
        }
    }

    /// A statement whose text is built at run time with [`Stmt::push`] and [`Stmt::push_bind`]
    /// (optional filters), starting from `sql`.
    pub fn dynamic(sql: &str) -> Self {
        Self {
            sql: Cow::Owned(sql.to_owned()),
            args: Vec::new(),
        }
    }

    /// Binds the next argument.
    pub fn bind(mut self, value: impl Into<Arg<'a>>) -> Self {
        self.args.push(value.into());
        self
    }

    /// Binds a JSON document given as its text (see [`Arg::Json`]).
    pub fn bind_json(mut self, text: String) -> Self {
        self.args.push(Arg::Json(text));
        self
    }

    /// Binds an instant compared in SQL (see [`Arg::Instant`]).
    pub fn bind_instant(mut self, at: impl Into<Option<OffsetDateTime>>) -> Self {
        self.args.push(Arg::Instant(at.into()));
        self
    }

    /// Binds the `_ns` twin of the timestamp bound just before (see [`Arg::Twin`]).
    pub fn bind_twin(mut self, at: impl Into<Option<OffsetDateTime>>) -> Self {
        self.args.push(Arg::Twin(at.into()));
        self
    }

    /// Binds a list matched with `IN` (see [`Arg::TextList`]).
    pub fn bind_list(mut self, items: Vec<&'a str>) -> Self {
        self.args.push(Arg::TextList(items));
        self
    }

    /// Appends SQL text to a [`Stmt::dynamic`] statement.
    pub fn push(&mut self, sql: &str) -> &mut Self {
        self.sql.to_mut().push_str(sql);
        self
    }

    /// Appends the placeholder of the next argument and binds it. Not for [`Arg::Twin`], whose
    /// position differs by dialect.
    pub fn push_bind(&mut self, value: impl Into<Arg<'a>>) -> &mut Self {
        self.args.push(value.into());
        let placeholder = format!("${}", self.args.len());
        self.sql.to_mut().push_str(&placeholder);
        self
    }

    /// [`Stmt::push_bind`] for an instant compared in SQL.
    pub fn push_bind_instant(&mut self, at: OffsetDateTime) -> &mut Self {
        self.push_bind(Arg::Instant(Some(at)))
    }

    /// The text.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The text and the arguments, for the dialect that runs it.
    pub fn into_parts(self) -> (Cow<'static, str>, Vec<Arg<'a>>) {
        (self.sql, self.args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_bind_numbers_placeholders_after_the_fixed_arguments() {
        let mut stmt = Stmt::dynamic("SELECT * FROM t WHERE tenant_id = $1").bind("ten_1");
        stmt.push(" AND status = ").push_bind("active");
        stmt.push(" LIMIT ").push_bind(10_i64);
        assert_eq!(
            stmt.sql(),
            "SELECT * FROM t WHERE tenant_id = $1 AND status = $2 LIMIT $3"
        );
        let (_, args) = stmt.into_parts();
        assert_eq!(
            args,
            vec![Arg::from("ten_1"), Arg::from("active"), Arg::Int(Some(10))]
        );
    }

    #[test]
    fn arguments_keep_their_meaning() {
        let at = OffsetDateTime::UNIX_EPOCH;
        let (_, args) = Stmt::new("x")
            .bind(at)
            .bind_twin(at)
            .bind_instant(at)
            .bind(None::<OffsetDateTime>)
            .bind_json("[]".to_owned())
            .into_parts();
        assert_eq!(
            args,
            vec![
                Arg::Time(Some(at)),
                Arg::Twin(Some(at)),
                Arg::Instant(Some(at)),
                Arg::Time(None),
                Arg::Json("[]".to_owned())
            ]
        );
    }
}
