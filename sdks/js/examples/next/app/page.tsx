// The home page, a server component: who is signed in (from the sealed session cookie) and
// what svc's UserInfo says with the session's access token — fetched on the server, so no token
// ever reaches the browser. A failed sign-in lands here with ?svc_error=<code>.
import { fetchUserInfo } from "@svc/client";
import { getSession, requireAccessToken } from "@svc/next";
import { svc, svcMetadata } from "../lib/svc";

export const dynamic = "force-dynamic";

export default async function Home({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { svc_error } = await searchParams;
  const session = await getSession(svc);
  let email = "";
  let token = "";
  if (session) {
    const access = await requireAccessToken(svc, { returnTo: "/" });
    const userinfo = await fetchUserInfo(await svcMetadata(), access.accessToken, { expectedSubject: access.user.sub, tokenType: access.tokenType });
    email = typeof userinfo.email === "string" ? userinfo.email : "";
    token = access.accessToken.slice(-12);
  }
  return (
    <main>
      <h1>svc + Next.js</h1>
      <p>
        Status: <span id="status">{session ? "signed-in" : "signed-out"}</span>
      </p>
      <p>
        Subject: <span id="sub">{session?.user.sub ?? ""}</span>
      </p>
      <p>
        UserInfo email: <span id="userinfo-email">{email}</span>, token <span id="token">{token}</span>
      </p>
      <p>
        Error: <span id="error">{typeof svc_error === "string" ? svc_error : ""}</span>
      </p>
      {session ? (
        <form method="post" action="/api/auth/logout">
          <button id="logout" type="submit">
            Sign out
          </button>
        </form>
      ) : (
        <a id="login" href="/api/auth/login?returnTo=/">
          Sign in
        </a>
      )}
      <p>
        <a href="/protected">A protected page</a>
      </p>
    </main>
  );
}
