//! Renders a [`ScimFilter`] (RFC 7644 §3.4.2.2, already mapped onto [`ScimAttr`]s or
//! [`ScimGroupAttr`]s by the SCIM use cases) as a SQL condition over `users u LEFT JOIN
//! scim_users s` or `scim_groups g`, every value a bound parameter: nothing a client sends is
//! ever spliced into the statement's text; and a [`ScimSort`] (RFC 7644 §3.4.2.3) as an
//! `ORDER BY` that gives the same order on both backends.
//!
//! - `members.value` (a group's) holds when it holds for one member that is not removed.
//! - Sorting: strings by their lowercased text (unless `caseExact`) in byte order (`COLLATE
//!   "C"` on PostgreSQL, SQLite's `BINARY`), times by millisecond, resources without a value
//!   last when ascending and first when descending, ties in id order.
//!
//! - Strings compare case-insensitively: `lower(column)` against the value lowercased here
//!   (ASCII only on both sides, as SQLite's `lower` and PostgreSQL's under `COLLATE "C"` do),
//!   except `id` and `externalId`, which RFC 7643 §3.1 makes `caseExact`.
//! - `co`, `sw`, `ew` are `LIKE` with `\` escaping `%`, `_` and `\` in the value, so
//!   `co "%"` matches a literal percent sign, not everything.
//! - Every comparison is `column IS NOT NULL AND …`, never SQL NULL, so `not (…)` of a
//!   comparison on an absent attribute holds, as RFC 7644 §3.4.2.2 reads.
//! - `meta.created` / `meta.lastModified` compare whole milliseconds since the epoch (rounded), the
//!   precision SQLite's `unixepoch(…, 'subsec')` reads its RFC 3339 text with; PostgreSQL reads
//!   its `timestamptz` the same way, so both backends give the same answer.
//! - A combination the use cases never produce (a string operator on `active`) is false.

use crate::Stmt;
use crate::dialect::Kind;
use svc_store::{ScimAttr, ScimFilter, ScimGroupAttr, ScimOp, ScimSort, ScimValue};
use time::OffsetDateTime;

/// How an attribute of a filtered resource reads in SQL: people ([`ScimAttr`], over
/// `users u LEFT JOIN scim_users s`) or groups ([`ScimGroupAttr`], over `scim_groups g`).
pub(crate) trait Attribute: Copy + PartialEq {
    /// The column (or expression) of a string attribute; `None` for a boolean or a time.
    fn column(self) -> Option<&'static str>;
    /// The SQL of a time attribute as whole milliseconds since the epoch.
    fn time_expr(self, kind: Kind) -> Option<String>;
    /// Whether the attribute compares case-sensitively (RFC 7643 §3.1: `id`, `externalId`).
    fn case_exact(self) -> bool;
    /// The conditions `attr = true` and `attr = false` of a boolean attribute.
    fn boolean(self) -> Option<(&'static str, &'static str)>;
    /// For a multi-valued attribute: the text around a condition on one of its values, which
    /// holds when the condition holds for at least one.
    fn within(self) -> Option<(&'static str, &'static str)> {
        None
    }
}

impl Attribute for ScimAttr {
    fn column(self) -> Option<&'static str> {
        Some(match self {
            ScimAttr::Id => "u.id",
            ScimAttr::UserName => "COALESCE(s.user_name, u.email)",
            ScimAttr::ExternalId => "s.external_id",
            ScimAttr::Email => "u.email",
            ScimAttr::DisplayName => "u.name",
            ScimAttr::GivenName => "u.given_name",
            ScimAttr::FamilyName => "u.family_name",
            ScimAttr::Active | ScimAttr::Created | ScimAttr::LastModified => return None,
        })
    }

    fn time_expr(self, kind: Kind) -> Option<String> {
        match self {
            ScimAttr::Created => Some(millis(kind, "u.created_at")),
            ScimAttr::LastModified => {
                let (user, scim) = (millis(kind, "u.updated_at"), millis(kind, "s.updated_at"));
                Some(format!(
                    "(CASE WHEN s.updated_at IS NOT NULL AND {scim} > {user} THEN {scim} ELSE {user} END)"
                ))
            }
            _ => None,
        }
    }

    fn case_exact(self) -> bool {
        matches!(self, ScimAttr::Id | ScimAttr::ExternalId)
    }

    fn boolean(self) -> Option<(&'static str, &'static str)> {
        (self == ScimAttr::Active).then_some((ACTIVE, INACTIVE))
    }
}

/// The members of group `g` that are people not removed, as `gm`: `members.value` tests hold
/// when they hold for one of them.
const SOME_MEMBER: &str = "EXISTS (SELECT 1 FROM scim_group_members gm JOIN users mu \
     ON mu.id = gm.user_id AND mu.status <> 'removed' WHERE gm.group_id = g.id AND ";

impl Attribute for ScimGroupAttr {
    fn column(self) -> Option<&'static str> {
        Some(match self {
            ScimGroupAttr::Id => "g.id",
            ScimGroupAttr::DisplayName => "g.display_name",
            ScimGroupAttr::ExternalId => "g.external_id",
            ScimGroupAttr::Member => "gm.user_id",
            ScimGroupAttr::Created | ScimGroupAttr::LastModified => return None,
        })
    }

    fn time_expr(self, kind: Kind) -> Option<String> {
        match self {
            ScimGroupAttr::Created => Some(millis(kind, "g.created_at")),
            ScimGroupAttr::LastModified => Some(millis(kind, "g.updated_at")),
            _ => None,
        }
    }

    fn case_exact(self) -> bool {
        matches!(
            self,
            ScimGroupAttr::Id | ScimGroupAttr::ExternalId | ScimGroupAttr::Member
        )
    }

    fn boolean(self) -> Option<(&'static str, &'static str)> {
        None
    }

    fn within(self) -> Option<(&'static str, &'static str)> {
        (self == ScimGroupAttr::Member).then_some((SOME_MEMBER, ")"))
    }
}

/// A stored timestamp `col` as whole milliseconds since the epoch, in `kind`'s SQL.
pub(crate) fn millis(kind: Kind, col: &str) -> String {
    match kind {
        Kind::Sqlite => format!("CAST(round(unixepoch({col}, 'subsec') * 1000) AS INTEGER)"),
        Kind::Postgres => format!("round(extract(epoch FROM {col}) * 1000)::bigint"),
    }
}

/// `at` in whole milliseconds since the epoch, rounded like [`millis`].
fn at_millis(at: OffsetDateTime) -> i64 {
    let nanos = at.unix_timestamp_nanos();
    i64::try_from((nanos + 500_000).div_euclid(1_000_000)).unwrap_or(if nanos < 0 {
        i64::MIN
    } else {
        i64::MAX
    })
}

const TRUE: &str = "1 = 1";
const FALSE: &str = "1 = 0";
const ACTIVE: &str = "u.status <> 'suspended'";
const INACTIVE: &str = "u.status = 'suspended'";

/// `value` as a `LIKE` pattern matching it literally.
fn escape_like(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Appends `filter` to `stmt` as one parenthesised condition, in `kind`'s SQL.
pub(crate) fn push<A: Attribute>(stmt: &mut Stmt<'_>, filter: &ScimFilter<A>, kind: Kind) {
    match filter {
        ScimFilter::Const(true) => {
            stmt.push(TRUE);
        }
        ScimFilter::Const(false) => {
            stmt.push(FALSE);
        }
        ScimFilter::Present(attr) => match (attr.column(), attr.within()) {
            (Some(col), within) => {
                let (open, close) = within.unwrap_or(("", ""));
                stmt.push(open)
                    .push("(")
                    .push(col)
                    .push(" IS NOT NULL)")
                    .push(close);
            }
            // Every resource has its booleans, `meta.created` and `meta.lastModified`.
            (None, _) => {
                stmt.push(TRUE);
            }
        },
        ScimFilter::Compare(attr, op, value) => {
            let (open, close) = attr.within().unwrap_or(("", ""));
            stmt.push(open);
            compare(stmt, *attr, *op, value, kind);
            stmt.push(close);
        }
        ScimFilter::Not(inner) => {
            stmt.push("(NOT ");
            push(stmt, inner, kind);
            stmt.push(")");
        }
        ScimFilter::And(items) => junction(stmt, items, " AND ", TRUE, kind),
        ScimFilter::Or(items) => junction(stmt, items, " OR ", FALSE, kind),
    }
}

/// Appends ` ORDER BY …` for `sort` (then `id`, ascending), or by `id` alone.
pub(crate) fn push_order<A: Attribute>(
    stmt: &mut Stmt<'_>,
    sort: Option<&ScimSort<A>>,
    id: &str,
    kind: Kind,
) {
    stmt.push(" ORDER BY ");
    if let Some(sort) = sort
        && let Some(key) = sort_key(sort.attr, kind)
    {
        let dir = if sort.descending { " DESC" } else { " ASC" };
        // RFC 7644 §3.4.2.3: no value sorts last when ascending, first when descending.
        stmt.push("(")
            .push(&key)
            .push(" IS NULL)")
            .push(dir)
            .push(", ");
        stmt.push(&key).push(dir).push(", ");
    }
    stmt.push(id).push(" ASC");
}

/// The expression a listing sorts `attr` by; `None` for a multi-valued attribute.
fn sort_key<A: Attribute>(attr: A, kind: Kind) -> Option<String> {
    if attr.within().is_some() {
        return None;
    }
    if let Some(expr) = attr.time_expr(kind) {
        return Some(expr);
    }
    if let Some((yes, _)) = attr.boolean() {
        return Some(format!("(CASE WHEN {yes} THEN 1 ELSE 0 END)"));
    }
    let col = attr.column()?;
    let col = match kind {
        Kind::Sqlite => col.to_owned(),
        // Byte order and ASCII-only `lower`, whatever the database's default collation: as
        // SQLite's `BINARY` and `lower`.
        Kind::Postgres => format!("({col} COLLATE \"C\")"),
    };
    Some(if attr.case_exact() {
        col
    } else {
        format!("lower({col})")
    })
}

fn junction<A: Attribute>(
    stmt: &mut Stmt<'_>,
    items: &[ScimFilter<A>],
    joiner: &str,
    empty: &str,
    kind: Kind,
) {
    if items.is_empty() {
        stmt.push(empty);
        return;
    }
    stmt.push("(");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            stmt.push(joiner);
        }
        push(stmt, item, kind);
    }
    stmt.push(")");
}

fn compare<A: Attribute>(stmt: &mut Stmt<'_>, attr: A, op: ScimOp, value: &ScimValue, kind: Kind) {
    if let (Some(expr), ScimValue::Time(at)) = (attr.time_expr(kind), value) {
        let sql_op = match op {
            ScimOp::Eq => "=",
            ScimOp::Ne => "<>",
            ScimOp::Gt => ">",
            ScimOp::Ge => ">=",
            ScimOp::Lt => "<",
            ScimOp::Le => "<=",
            ScimOp::Co | ScimOp::Sw | ScimOp::Ew => {
                stmt.push(FALSE);
                return;
            }
        };
        stmt.push("(").push(&expr).push(" ").push(sql_op).push(" ");
        stmt.push_bind(at_millis(*at)).push(")");
        return;
    }
    match (attr.column(), attr.boolean(), value) {
        (None, Some((yes, no)), ScimValue::Bool(b)) => {
            let wanted = match op {
                ScimOp::Eq => *b,
                ScimOp::Ne => !*b,
                _ => {
                    stmt.push(FALSE);
                    return;
                }
            };
            stmt.push(if wanted { yes } else { no });
        }
        (Some(col), _, ScimValue::Str(text)) => {
            let exact = attr.case_exact();
            let (lowered, open, close) = if exact {
                (text.clone(), "", "")
            } else {
                (text.to_ascii_lowercase(), "lower(", ")")
            };
            let (sql_op, arg) = match op {
                ScimOp::Eq => ("=", lowered),
                ScimOp::Ne => {
                    // Absent differs from every value.
                    stmt.push("(")
                        .push(col)
                        .push(" IS NULL OR ")
                        .push(open)
                        .push(col);
                    stmt.push(close).push(" <> ").push_bind(lowered).push(")");
                    return;
                }
                ScimOp::Co => ("LIKE", format!("%{}%", escape_like(&lowered))),
                ScimOp::Sw => ("LIKE", format!("{}%", escape_like(&lowered))),
                ScimOp::Ew => ("LIKE", format!("%{}", escape_like(&lowered))),
                ScimOp::Gt => (">", lowered),
                ScimOp::Ge => (">=", lowered),
                ScimOp::Lt => ("<", lowered),
                ScimOp::Le => ("<=", lowered),
            };
            stmt.push("(")
                .push(col)
                .push(" IS NOT NULL AND ")
                .push(open)
                .push(col);
            stmt.push(close)
                .push(" ")
                .push(sql_op)
                .push(" ")
                .push_bind(arg);
            if sql_op == "LIKE" {
                stmt.push(" ESCAPE '\\'");
            }
            stmt.push(")");
        }
        _ => {
            stmt.push(FALSE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Arg;
    use std::borrow::Cow;

    fn render(filter: &ScimFilter) -> (String, Vec<Arg<'static>>) {
        let mut stmt = Stmt::dynamic("");
        push(&mut stmt, filter, Kind::Postgres);
        let (sql, args) = stmt.into_parts();
        (sql.into_owned(), args)
    }

    fn text(s: &str) -> Arg<'static> {
        Arg::Text(Some(Cow::Owned(s.to_owned())))
    }

    #[test]
    fn values_are_bound_never_spliced() {
        let hostile = "x\" or 1=1 --'; DROP TABLE users";
        let (sql, args) = render(&ScimFilter::Compare(
            ScimAttr::UserName,
            ScimOp::Eq,
            ScimValue::Str(hostile.into()),
        ));
        assert_eq!(
            sql,
            "(COALESCE(s.user_name, u.email) IS NOT NULL AND lower(COALESCE(s.user_name, u.email)) = $1)"
        );
        assert_eq!(args, vec![text(&hostile.to_ascii_lowercase())]);
    }

    #[test]
    fn like_operators_escape_wildcards() {
        let (sql, args) = render(&ScimFilter::Compare(
            ScimAttr::Email,
            ScimOp::Co,
            ScimValue::Str("50%_a\\B".into()),
        ));
        assert!(sql.ends_with("LIKE $1 ESCAPE '\\')"), "{sql}");
        assert_eq!(args, vec![text("%50\\%\\_a\\\\b%")]);
        let (_, args) = render(&ScimFilter::Compare(
            ScimAttr::Email,
            ScimOp::Sw,
            ScimValue::Str("_".into()),
        ));
        assert_eq!(args, vec![text("\\_%")]);
    }

    #[test]
    fn logic_nests_with_placeholders_in_order() {
        let f = ScimFilter::Or(vec![
            ScimFilter::And(vec![
                ScimFilter::Compare(ScimAttr::GivenName, ScimOp::Eq, ScimValue::Str("A".into())),
                ScimFilter::Not(Box::new(ScimFilter::Present(ScimAttr::ExternalId))),
            ]),
            ScimFilter::Compare(
                ScimAttr::ExternalId,
                ScimOp::Eq,
                ScimValue::Str("E-1".into()),
            ),
            ScimFilter::Compare(ScimAttr::Active, ScimOp::Eq, ScimValue::Bool(false)),
            ScimFilter::Compare(ScimAttr::FamilyName, ScimOp::Ne, ScimValue::Str("B".into())),
        ]);
        let (sql, args) = render(&f);
        assert_eq!(
            sql,
            "(((u.given_name IS NOT NULL AND lower(u.given_name) = $1) AND (NOT (s.external_id IS NOT NULL))) \
             OR (s.external_id IS NOT NULL AND s.external_id = $2) \
             OR u.status = 'suspended' OR (u.family_name IS NULL OR lower(u.family_name) <> $3))"
        );
        assert_eq!(args, vec![text("a"), text("E-1"), text("b")]);
    }

    #[test]
    fn times_compare_whole_milliseconds_in_each_dialect() {
        let at = OffsetDateTime::UNIX_EPOCH + time::Duration::nanoseconds(1_234_500_000);
        let f = ScimFilter::Compare(ScimAttr::Created, ScimOp::Ge, ScimValue::Time(at));
        let (sql, args) = render(&f);
        assert_eq!(
            sql,
            "(round(extract(epoch FROM u.created_at) * 1000)::bigint >= $1)"
        );
        assert_eq!(
            args,
            vec![Arg::Int(Some(1_235))],
            "rounded to the nearest millisecond"
        );
        let mut stmt = Stmt::dynamic("");
        push(
            &mut stmt,
            &ScimFilter::Compare(ScimAttr::LastModified, ScimOp::Lt, ScimValue::Time(at)),
            Kind::Sqlite,
        );
        let sql = stmt.sql().to_owned();
        assert!(
            sql.starts_with("((CASE WHEN s.updated_at IS NOT NULL"),
            "{sql}"
        );
        assert!(sql.contains("unixepoch(u.updated_at, 'subsec')"), "{sql}");
        assert!(sql.ends_with(" < $1)"), "{sql}");
        let (sql, _) = render(&ScimFilter::Compare(
            ScimAttr::Created,
            ScimOp::Co,
            ScimValue::Time(at),
        ));
        assert_eq!(sql, FALSE);
    }

    #[test]
    fn nonsense_combinations_are_false() {
        let (sql, args) = render(&ScimFilter::Compare(
            ScimAttr::Active,
            ScimOp::Co,
            ScimValue::Bool(true),
        ));
        assert_eq!(sql, FALSE);
        assert!(args.is_empty());
        let (sql, _) = render(&ScimFilter::Compare(
            ScimAttr::Email,
            ScimOp::Eq,
            ScimValue::Bool(true),
        ));
        assert_eq!(sql, FALSE);
    }

    /// A random filter tree from `rng`, `depth` levels at most, with hostile strings.
    fn random_filter(rng: &svc_domain::SeededRandom, depth: u32) -> ScimFilter {
        use svc_domain::Rng;
        const ATTRS: [ScimAttr; 8] = [
            ScimAttr::Id,
            ScimAttr::UserName,
            ScimAttr::ExternalId,
            ScimAttr::Email,
            ScimAttr::DisplayName,
            ScimAttr::GivenName,
            ScimAttr::FamilyName,
            ScimAttr::Active,
        ];
        const OPS: [ScimOp; 9] = [
            ScimOp::Eq,
            ScimOp::Ne,
            ScimOp::Co,
            ScimOp::Sw,
            ScimOp::Ew,
            ScimOp::Gt,
            ScimOp::Ge,
            ScimOp::Lt,
            ScimOp::Le,
        ];
        const PIECES: [&str; 12] = [
            "'", "\"", "\\", "%", "_", ";", "--", " OR 1=1", "$1", ")", "é", "x",
        ];
        let pick = |n: usize| (rng.next_u128() % n as u128) as usize;
        let leaf = depth == 0 || pick(3) == 0;
        if leaf {
            let attr = ATTRS[pick(ATTRS.len())];
            return match pick(4) {
                0 => ScimFilter::Present(attr),
                1 => ScimFilter::Const(pick(2) == 0),
                2 => ScimFilter::Compare(attr, OPS[pick(OPS.len())], ScimValue::Bool(pick(2) == 0)),
                _ => {
                    let text: String = (0..pick(6)).map(|_| PIECES[pick(PIECES.len())]).collect();
                    ScimFilter::Compare(attr, OPS[pick(OPS.len())], ScimValue::Str(text))
                }
            };
        }
        let children = |n: usize| (0..n).map(|_| random_filter(rng, depth - 1)).collect();
        match pick(3) {
            0 => ScimFilter::Not(Box::new(random_filter(rng, depth - 1))),
            1 => ScimFilter::And(children(pick(4))),
            _ => ScimFilter::Or(children(pick(4))),
        }
    }

    /// The same tree with every string replaced by `"v"`.
    fn blank(filter: &ScimFilter) -> ScimFilter {
        match filter {
            ScimFilter::Compare(a, o, ScimValue::Str(_)) => {
                ScimFilter::Compare(*a, *o, ScimValue::Str("v".into()))
            }
            ScimFilter::Not(inner) => ScimFilter::Not(Box::new(blank(inner))),
            ScimFilter::And(items) => ScimFilter::And(items.iter().map(blank).collect()),
            ScimFilter::Or(items) => ScimFilter::Or(items.iter().map(blank).collect()),
            other => other.clone(),
        }
    }

    /// Property, over 2000 random trees: the statement's text never depends on the values (they
    /// only ever become arguments), its placeholders are numbered 1..=n for its n arguments,
    /// and its parentheses balance.
    #[test]
    fn rendered_text_is_independent_of_every_value() {
        let rng = svc_domain::SeededRandom::new(20);
        for _ in 0..2_000 {
            let filter = random_filter(&rng, 5);
            let (sql, args) = render(&filter);
            let (blank_sql, blank_args) = render(&blank(&filter));
            assert_eq!(sql, blank_sql, "{filter:?}");
            assert_eq!(args.len(), blank_args.len());
            for n in 1..=args.len() {
                assert!(sql.contains(&format!("${n}")), "{sql}");
            }
            assert!(!sql.contains(&format!("${}", args.len() + 1)), "{sql}");
            let open = sql.matches('(').count();
            assert_eq!(open, sql.matches(')').count(), "{sql}");
        }
    }
}
