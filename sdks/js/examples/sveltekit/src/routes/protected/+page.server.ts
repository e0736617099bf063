// Reached only with a session: the hook sends everyone else to the login route with this path as returnTo.
import type { PageServerLoad } from "./$types";

export const load: PageServerLoad = async ({ locals, url }) => {
  const { user } = await locals.svc.requireAccessToken();
  return { sub: user.sub, tab: url.searchParams.get("tab") ?? "" };
};
