// The live tests' shared helpers live in sdks/js/test-support, used by every package of the workspace.
export * from "../../../test-support/e2e.mjs";
