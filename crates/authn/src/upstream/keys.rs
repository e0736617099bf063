//! The providers' key sets, kept for a few minutes so a sign-in does not fetch the provider's
//! `jwks_uri` every time. A token the kept set cannot verify (a key the provider rotated in
//! since, or any other failure) is tried once more against a freshly fetched set, so a rotation
//! costs one fetch and never a refused sign-in.

use std::collections::HashMap;
use std::sync::Mutex;
use time::{Duration, OffsetDateTime};

/// How long a fetched key set is used without asking again.
const FRESH_FOR: Duration = Duration::minutes(5);
/// Most key sets kept (one per provider in use); past it the cache starts over.
const MAX_ENTRIES: usize = 1024;

/// Key sets by `jwks_uri`, with when each was fetched.
#[derive(Debug, Default)]
pub(crate) struct KeySets {
    entries: Mutex<HashMap<String, (OffsetDateTime, String)>>,
}

impl KeySets {
    /// The set of `uri` fetched less than [`FRESH_FOR`] before `now`.
    pub(crate) fn fresh(&self, uri: &str, now: OffsetDateTime) -> Option<String> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(uri)
            .filter(|(at, _)| now - *at < FRESH_FOR)
            .map(|(_, doc)| doc.clone())
    }

    /// Keeps `doc` as the set of `uri` fetched at `now`.
    pub(crate) fn store(&self, uri: &str, now: OffsetDateTime, doc: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(uri) {
            entries.clear();
        }
        entries.insert(uri.to_owned(), (now, doc.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_fresh_for_five_minutes_per_uri() {
        let keys = KeySets::default();
        let t0 = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        assert_eq!(keys.fresh("https://a/jwks", t0), None);
        keys.store("https://a/jwks", t0, "{\"keys\":[]}");
        assert!(
            keys.fresh("https://a/jwks", t0 + Duration::seconds(299))
                .is_some()
        );
        assert!(keys.fresh("https://b/jwks", t0).is_none());
        assert!(keys.fresh("https://a/jwks", t0 + FRESH_FOR).is_none());
    }
}
