// The home page's data, on the server: who is signed in and what UserInfo says with the
// session's access token (no token reaches the browser). A failed sign-in lands with ?svc_error=.
import { userinfo } from "$lib/userinfo";
import type { PageServerLoad } from "./$types";

export const load: PageServerLoad = async ({ locals, url }) => {
  const user = locals.svc.user;
  const error = url.searchParams.get("svc_error") ?? "";
  if (!user) return { sub: "", email: "", token: "", error };
  const token = await locals.svc.requireAccessToken();
  const info = await userinfo(token);
  return { sub: user.sub, email: typeof info.email === "string" ? info.email : "", token: token.accessToken.slice(-12), error };
};
