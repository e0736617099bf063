// Reached only with a session: proxy.ts sends everyone else to the login route with this path
// as returnTo. requireAccessToken() would redirect too; the proxy does it before rendering.
import { requireAccessToken } from "@svc/next";
import { svc } from "../../lib/svc";

export const dynamic = "force-dynamic";

export default async function Protected({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { tab } = await searchParams;
  const { user } = await requireAccessToken(svc, { returnTo: "/protected" });
  return (
    <main>
      <p id="private">Only for {user.sub}</p>
      <p id="tab">{typeof tab === "string" ? tab : ""}</p>
    </main>
  );
}
