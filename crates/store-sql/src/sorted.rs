//! Keyset pagination in either direction ([`Order`]): a listing statement written once per
//! direction side by side, and the bound that stands for "no cursor". Ids are `COLLATE "C"` text
//! on PostgreSQL and compared bytewise on SQLite, so one comparison with a bound keeps each
//! statement a plain index range scan (no `$n IS NULL OR …`).

use svc_store::Order;

/// A listing statement in both directions: `id > $n ORDER BY id` and `id < $n ORDER BY id DESC`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sorted {
    /// Oldest first.
    pub(crate) asc: &'static str,
    /// Newest first.
    pub(crate) desc: &'static str,
}

impl Sorted {
    /// The statement of `order`.
    pub(crate) fn pick(self, order: Order) -> &'static str {
        match order {
            Order::Ascending => self.asc,
            Order::Descending => self.desc,
        }
    }
}

/// The cursor to bind: `after` itself, or a bound every id passes (`""` sorts before every id,
/// `~` after every id character), so a first page is the same statement as any other.
pub(crate) fn cursor(after: Option<&str>, order: Order) -> &str {
    after.unwrap_or(match order {
        Order::Ascending => "",
        Order::Descending => "~",
    })
}

/// The tail of a dynamically built listing over column `id`: the cursor's comparison, to be
/// followed by its bound value.
pub(crate) fn past(order: Order) -> &'static str {
    match order {
        Order::Ascending => " AND id > ",
        Order::Descending => " AND id < ",
    }
}

/// `ORDER BY` of a dynamically built listing over column `id`, to be followed by its limit.
pub(crate) fn order_by(order: Order) -> &'static str {
    match order {
        Order::Ascending => " ORDER BY id LIMIT ",
        Order::Descending => " ORDER BY id DESC LIMIT ",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_pass_every_id_character_in_their_direction() {
        let id = "whk_01m8434n377v0vg077cb7srmhw_~";
        assert!(cursor(None, Order::Ascending) < "a");
        assert!(cursor(None, Order::Descending) > "z");
        assert!(cursor(None, Order::Descending) >= &id[id.len() - 1..]);
        assert_eq!(cursor(Some("app_1"), Order::Descending), "app_1");
        assert!(order_by(Order::Descending).contains("DESC"));
        assert!(!order_by(Order::Ascending).contains("DESC"));
        assert_eq!(past(Order::Ascending), " AND id > ");
        assert_eq!(past(Order::Descending), " AND id < ");
    }
}
