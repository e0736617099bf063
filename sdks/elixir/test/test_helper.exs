# The live test needs a running svc; without SVC_E2E_* it is excluded (reported as skipped),
# never faked. crates/runtime/tests/it/elixir_sdk.rs runs it against the service.
live? = System.get_env("SVC_E2E_ISSUER") not in [nil, ""]
ExUnit.start(exclude: if(live?, do: [], else: [:live]))
