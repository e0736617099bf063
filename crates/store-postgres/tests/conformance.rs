//! The storage conformance suite against PostgreSQL: every check on its own fresh database
//! (see `svc_store_postgres::testing` for the server it uses).

svc_store::conformance_suite!(async {
    let store = svc_store_postgres::testing::migrated_store()
        .await
        .expect("migrated PostgreSQL store on a fresh database");
    std::sync::Arc::new(store) as std::sync::Arc<dyn svc_store::Store>
});
