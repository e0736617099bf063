//! The storage conformance suite against SQLite: every check on a fresh database file.

svc_store::conformance_suite!(async {
    let store = svc_store_sqlite::testing::temp_store()
        .await
        .expect("migrated SQLite store on a temp file");
    std::sync::Arc::new(store) as std::sync::Arc<dyn svc_store::Store>
});
