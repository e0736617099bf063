import { createAsync, useSearchParams } from "@solidjs/router";
import { privateData } from "~/lib/svc";

export const route = { preload: () => privateData() };

export default function Protected() {
  const data = createAsync(() => privateData());
  const [params] = useSearchParams();
  return (
    <main>
      <p id="private">Only for {data()?.sub}</p>
      <p id="tab">{typeof params.tab === "string" ? params.tab : ""}</p>
    </main>
  );
}
