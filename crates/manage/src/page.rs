//! Cursor pagination shared by every list use case: the cursor is the id of the last item
//! returned (ids are sortable), so pages stay stable while records are added. A listing returns
//! `(items, next_cursor)`; `next_cursor` is `None` on the last page.

/// Page size when the caller asks for none.
pub const DEFAULT_PAGE_SIZE: u32 = 50;
/// Largest page a caller may ask for.
pub const MAX_PAGE_SIZE: u32 = 200;

/// The page size to use for a requested `limit`: [`DEFAULT_PAGE_SIZE`] when absent, otherwise
/// clamped to `1..=MAX_PAGE_SIZE`.
pub fn clamp_limit(limit: Option<u32>) -> u32 {
    limit.unwrap_or(DEFAULT_PAGE_SIZE).clamp(1, MAX_PAGE_SIZE)
}

/// Splits up to `limit + 1` fetched rows into a page: the extra row only tells whether a next
/// page exists, and the cursor is the key of the last item kept.
pub(crate) fn split_page<T, C>(
    mut rows: Vec<T>,
    limit: u32,
    key: impl Fn(&T) -> C,
) -> (Vec<T>, Option<C>) {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = if more { rows.last().map(key) } else { None };
    (rows, next_cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_default_to_50_and_clamp_to_1_through_200() {
        assert_eq!(clamp_limit(None), 50);
        assert_eq!(clamp_limit(Some(0)), 1);
        assert_eq!(clamp_limit(Some(1)), 1);
        assert_eq!(clamp_limit(Some(200)), 200);
        assert_eq!(clamp_limit(Some(u32::MAX)), 200);
    }

    #[test]
    fn overfetch_decides_the_cursor() {
        assert_eq!(split_page(vec![1, 2, 3], 2, |n| *n), (vec![1, 2], Some(2)));
        assert_eq!(split_page(vec![1, 2], 2, |n| *n), (vec![1, 2], None));
        assert_eq!(split_page(Vec::<u8>::new(), 2, |n| *n), (vec![], None));
    }
}
