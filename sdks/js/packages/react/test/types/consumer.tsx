// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution, with React's own types.
import { createSvcClient } from "@svc/client";
import { type Auth, RequireAuth, SvcProvider, useAuth, useSvc } from "@svc/react";

const client = createSvcClient({ baseURL: "https://acme.id.example", oauth: { clientId: "app_1", redirectUri: "https://app.example/callback" } });

function Profile() {
  const { isLoading, isAuthenticated, user, error, login, logout, getAccessToken }: Auth = useAuth();
  const svc = useSvc();
  if (isLoading) return <p>…</p>;
  if (error) return <p role="alert">{error.message}</p>;
  if (!isAuthenticated) return <button onClick={() => void login({ returnTo: "/inbox" })}>Sign in</button>;
  const call = async (): Promise<unknown> => fetch("/api", { headers: { authorization: `Bearer ${await getAccessToken({ forceRefresh: false })}` } }).then(() => svc.fetchUserInfo());
  return (
    <>
      <p>{user?.email ?? user?.sub}</p>
      <button onClick={() => void call()}>Call</button>
      <button onClick={() => void logout({ postLogoutRedirectUri: "https://app.example/" })}>Sign out</button>
    </>
  );
}

export const app = (
  <SvcProvider client={client} onSignIn={(result) => history.replaceState(null, "", result.returnTo ?? "/")}>
    <RequireAuth fallback={<p>Signing in…</p>} loginOptions={{ extraParams: { prompt: "login" } }}>
      <Profile />
    </RequireAuth>
  </SvcProvider>
);
