//! The direction of a listing. Every list is keyset-paginated over its ids, which sort in
//! creation order (ULIDs), so "sorting" a list means choosing which end it starts from; the
//! cursor (`after`) is the last id of the previous page in that same direction.

/// Which end of the creation order a listing starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Oldest first: ids increasing, the page after a cursor holds larger ids.
    Ascending,
    /// Newest first: ids decreasing, the page after a cursor holds smaller ids.
    Descending,
}

impl Order {
    /// The wire spelling (`asc`, `desc`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ascending => "asc",
            Self::Descending => "desc",
        }
    }

    /// Parses the wire spelling; `None` for anything else (exact match only).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "asc" => Some(Self::Ascending),
            "desc" => Some(Self::Descending),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Order;

    #[test]
    fn the_wire_spelling_round_trips_and_nothing_else_parses() {
        for order in [Order::Ascending, Order::Descending] {
            assert_eq!(Order::parse(order.as_str()), Some(order));
        }
        for bad in ["", "ASC", "ascending", "desc ", "1"] {
            assert_eq!(Order::parse(bad), None, "{bad:?}");
        }
    }
}
