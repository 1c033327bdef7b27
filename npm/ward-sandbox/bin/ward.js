#!/usr/bin/env node
// ward-sandbox: run the prebuilt ward for this machine.
//
// The binaries come in a package per platform (ward-sandbox-linux-x64,
// ward-sandbox-linux-arm64), each an optional dependency of this one, so
// npm installs only the one that fits and nothing is compiled. ward is
// started with this process's arguments and standard streams (so `ward
// mcp` speaks MCP on them directly); its exit status, or the signal that
// ended it, becomes this process's. ward finds landlock-run and
// ward-bridge beside its own executable.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

// Exit status for "ward itself failed", as ward's own (125).
const EXIT_WARD = 125;
const PLATFORMS = {
  "linux x64": "ward-sandbox-linux-x64",
  "linux arm64": "ward-sandbox-linux-arm64",
};

function fail(message) {
  process.stderr.write(`ward-sandbox: ${message}\n`);
  process.exit(EXIT_WARD);
}

const pkg = PLATFORMS[`${process.platform} ${process.arch}`];
if (!pkg) {
  fail(
    `no prebuilt ward for ${process.platform}-${process.arch} ` +
      "(there are Linux x64 and arm64 ones); build it from source: " +
      "make && make install",
  );
}
let ward;
try {
  ward = path.join(
    path.dirname(require.resolve(`${pkg}/package.json`)),
    "bin",
    "ward",
  );
} catch {
  fail(
    `the package ${pkg} is not installed; npm skips it when optional ` +
      "dependencies are omitted (--omit=optional, --no-optional): " +
      "install ward-sandbox again without that",
  );
}

const child = spawn(ward, process.argv.slice(2), { stdio: "inherit" });
// A signal sent to this process (not to the terminal's whole group) must
// reach ward too.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (err) => fail(`cannot run ${ward}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, with its default action.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
