// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution, with Solid's own types.
import { createSvcClient } from "@svc/client";
import { type SvcAuth, SvcProvider, createSvc, useAuth } from "@svc/solid";
import { type Accessor, type JSX, createComponent, createMemo } from "solid-js";

const client = createSvcClient({ baseURL: "https://acme.id.example", oauth: { clientId: "app_1", redirectUri: "https://app.example/callback" } });

function Profile(): JSX.Element {
  const auth: SvcAuth = useAuth();
  const name: Accessor<string> = createMemo(() => (auth.isLoading ? "…" : auth.error?.message ?? auth.user?.email ?? auth.user?.sub ?? ""));
  void auth.login({ returnTo: "/" }).then(() => auth.getAccessToken({ forceRefresh: auth.isAuthenticated })).then(() => auth.logout());
  return name();
}

export const app = (): JSX.Element =>
  createComponent(SvcProvider, {
    client,
    onSignIn: (result) => history.replaceState(null, "", result.returnTo ?? "/"),
    get children() {
      return createComponent(Profile, {});
    },
  });
export const standalone: SvcAuth = createSvc(client);
