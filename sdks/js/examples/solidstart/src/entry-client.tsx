// @refresh reload
import { StartClient, mount } from "@solidjs/start/client";

mount(() => <StartClient />, document.getElementById("app")!);
