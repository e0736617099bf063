import { createAsync, useSearchParams } from "@solidjs/router";
import { Show } from "solid-js";
import { home } from "~/lib/svc";

export const route = { preload: () => home() };

export default function Home() {
  const data = createAsync(() => home());
  const [params] = useSearchParams();
  return (
    <main>
      <h1>svc + SolidStart</h1>
      <Show when={data()}>
        {(d) => (
          <>
            <p>Status: <span id="status">{d().sub ? "signed-in" : "signed-out"}</span></p>
            <p>Subject: <span id="sub">{d().sub}</span></p>
            <p>UserInfo email: <span id="userinfo-email">{d().email}</span>, token <span id="token">{d().token}</span></p>
            <p>Error: <span id="error">{typeof params.svc_error === "string" ? params.svc_error : ""}</span></p>
            {/* rel="external": full page loads to the server routes, not the client router */}
            <Show when={d().sub} fallback={<a id="login" href="/api/auth/login?returnTo=/" rel="external">Sign in</a>}>
              <form method="post" action="/api/auth/logout">
                <button id="logout" type="submit">Sign out</button>
              </form>
            </Show>
          </>
        )}
      </Show>
      <p><a href="/protected" rel="external">A protected page</a></p>
    </main>
  );
}
