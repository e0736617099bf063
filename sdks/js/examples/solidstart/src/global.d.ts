/// <reference types="@solidjs/start/env" />
// event.locals.svc, typed for API routes and getRequestEvent().
declare namespace App {
  interface RequestEventLocals {
    svc: import("@svc/solidstart").SvcLocals;
  }
}
