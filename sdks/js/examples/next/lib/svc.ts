// The one @svc/next configuration of this application, shared by the route handlers, the
// pages and proxy.ts. Everything comes from the environment at request time (SVC_ISSUER,
// SVC_CLIENT_ID, SVC_CLIENT_SECRET, SVC_SESSION_SECRET): `next build` runs without it.
import { type ServerMetadata, discover } from "@svc/client";
import type { SvcNextOptions } from "@svc/next";

export const svc: SvcNextOptions = { basePath: "/api/auth", postLogoutPath: "/", errorPath: "/" };

let metadata: Promise<ServerMetadata> | undefined;
/** svc's discovery document, for calling UserInfo from the server. */
export function svcMetadata(): Promise<ServerMetadata> {
  metadata ??= discover(process.env.SVC_ISSUER ?? "");
  return metadata;
}
