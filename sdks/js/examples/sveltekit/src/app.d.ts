import type { SvcLocals } from "@svc/sveltekit";

declare global {
  namespace App {
    interface Locals {
      svc: SvcLocals;
    }
  }
}

export {};
