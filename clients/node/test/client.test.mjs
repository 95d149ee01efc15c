// The typed client against the built binary (binary.mjs), and the checks
// that keep its types honest: the committed declarations are what schema/
// and the client's JSDoc generate, and tsc accepts this file, whose
// expected-error lines must stay errors.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HostcoreClient } from "../hostcore-client.mjs";
import { hostcoreBinary, removeTempDirs, tempDir } from "./binary.mjs";
import { protocol, client, protocolFile, clientFile } from "../scripts/gen.mjs";

let bin = "";
before(() => {
  bin = hostcoreBinary();
});
after(removeTempDirs);

/**
 * start spawns hostcore on a fresh data dir, workspace and HOME.
 * @param {import("../hostcore-client.mjs").ClientOptions} [opts]
 * @param {string[]} [flags]
 */
function start(opts = {}, flags = []) {
  const ws = tempDir("hostcore-ws-");
  const host = new HostcoreClient(bin, ["--data-dir", tempDir("hostcore-data-"), ...flags], {
    ...opts,
    env: { HOME: tempDir("hostcore-home-") },
  });
  return { host, ws };
}

test("src/protocol.d.ts is what schema/ generates (npm run gen)", async () => {
  assert.ok(readFileSync(protocolFile, "utf8") === (await protocol()), "src/protocol.d.ts is out of date: run npm run gen in clients/node and commit it");
});

test("tsc accepts the client and this file, and hostcore-client.d.mts is what it declares", () => {
  assert.ok(readFileSync(clientFile, "utf8") === client(), "hostcore-client.d.mts is out of date: run npm run gen in clients/node and commit it");
});

// Never run: tsc must find each line below an error, or the types have
// stopped saying what the contract says.
/** @param {HostcoreClient} host */
function typeErrors(host) {
  // @ts-expect-error an unknown method
  host.request("session.nope", {});
  // @ts-expect-error session.get needs its sessionId
  host.request("session.get", {});
  // @ts-expect-error Read's path is a string
  host.execute("s", "c", "Read", { path: 7 });
  // @ts-expect-error no such notification
  host.on("tool.outptu", () => {});
  host.on("tool.output", (p) => {
    // @ts-expect-error a chunk's seq is a number
    p.seq.toUpperCase();
  });
  // @ts-expect-error Write needs its content
  host.execute("s", "c", "Write", { path: "a.txt" });
  host.request("settings.get").then((s) => {
    // @ts-expect-error the mode is one of three strings
    s.defaultPermissionMode = "sometimes";
  });
}
void typeErrors;

test("execute answers cards through the callback and streams output to onOutput and as events", async () => {
  /** @type {import("../hostcore-client.mjs").PermissionRequestParams[]} */
  const cards = [];
  const { host, ws } = start({
    onPermission: (card) => {
      cards.push(card);
      return card.toolName === "Bash" ? "allow-once" : "deny";
    },
  });
  try {
    await host.request("initialize", { clientInfo: { name: "typed-client-test" }, protocolVersion: "1" });
    const s = await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "ask" });
    assert.equal(s.effectivePermissionMode, "ask");

    /** @type {import("../hostcore-client.mjs").ToolOutputParams[]} */
    const events = [];
    host.on("tool.output", (p) => events.push(p));
    /** @type {string[]} */
    const mine = [];
    const r = await host.execute("s", "b1", "Bash", { command: "echo one; sleep 0.2; echo two >&2" }, "t1", {
      onOutput: (chunk) => mine.push(`${chunk.stream}:${chunk.data}`),
    });
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.equal(r.decision, "allow-once");
    assert.equal(r.timing.prompted, true);
    assert.deepEqual(mine, ["stdout:one\n", "stderr:two\n"]);
    assert.deepEqual(events.map((e) => e.toolCallId), ["b1", "b1"]);

    const denied = await host.execute("s", "w1", "Write", { path: "x.txt", content: "x" }, "t1");
    assert.equal(denied.errorCode, "TOOL_DENIED");
    assert.equal(existsSync(join(ws, "x.txt")), false);
    assert.deepEqual(cards.map((c) => [c.toolName, c.reason]), [["Bash", "tool"], ["Write", "tool"]]);
    assert.equal(host.outputs.size, 0, "no onOutput callback outlives its call");
    await host.shutdown();
  } finally {
    host.kill();
  }
});

test("a card answered with a whole reply remembers a command rule, listed and removed", async () => {
  const { host, ws } = start({
    onPermission: (card) => (card.suggestedPrefix ? { decision: "allow-always-command", prefix: "echo" } : "deny"),
  });
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "ask" });
    const first = await host.execute("s", "b1", "Bash", { command: "echo one two" }, "t1");
    assert.equal(first.decision, "allow-always-command", JSON.stringify(first));
    const again = await host.execute("s", "b2", "Bash", { command: "echo three" }, "t1");
    assert.equal(again.decision, "allow-always-command");
    assert.equal(again.timing.prompted, false);
    const { rules } = await host.request("permissions.list", { sessionId: "s" });
    assert.deepEqual(rules.map((r) => [r.kind, r.prefix]), [["command", "echo"]]);
    const { removed } = await host.request("permissions.remove", { ruleId: rules[0].ruleId });
    assert.equal(removed.ruleId, rules[0].ruleId);
    await host.shutdown();
  } finally {
    host.kill();
  }
});

test("cancel stops a running command: TOOL_ABORTED, its tree killed", async () => {
  const { host, ws } = start();
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "auto" });
    /** @type {Promise<void>} */
    const started = new Promise((res) => host.once("tool.output", () => res()));
    const running = host.execute("s", "long", "Bash", { command: "echo started; sleep 30", timeout: 60 });
    await started;
    const c = await host.cancel("s", "long");
    assert.deepEqual(c, { cancelled: true, ended: true });
    const r = await running;
    assert.equal(r.ok, false);
    assert.equal(r.errorCode, "TOOL_ABORTED");

    const none = await host.cancelTurn("s", "no-such-turn");
    assert.deepEqual(none, { cancelled: 0, ended: true });
    await assert.rejects(host.cancel("nope", "x"), (/** @type {any} */ e) => e.data?.errorCode === "SESSION_NOT_FOUND");
    await host.shutdown();
  } finally {
    host.kill();
  }
});

test("asktool's questions reach onAsk", async () => {
  const { host, ws } = start({
    onAsk: (req) => Object.fromEntries(req.questions.map((q) => [q.id, q.multiSelect ? ["a", "b"] : "yes"])),
  });
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "auto" });
    const r = await host.execute("s", "q1", "asktool", {
      questions: [
        { id: "go", question: "Go on?" },
        { id: "pick", question: "Which?", multiSelect: true, options: [{ label: "a" }, { label: "b" }] },
      ],
    });
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.deepEqual(r.details, { answers: { go: "yes", pick: ["a", "b"] }, skipped: false });
    await host.shutdown();
  } finally {
    host.kill();
  }
});

test("shutdown ends a running call as TOOL_ABORTED and exits 0", async () => {
  const { host, ws } = start();
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "auto" });
    writeFileSync(join(ws, "f.txt"), "x\n");
    /** @type {Promise<void>} */
    const started = new Promise((res) => host.once("tool.output", () => res()));
    const running = host.execute("s", "long", "Bash", { command: "echo started; sleep 30" });
    await started;
    const t0 = Date.now();
    const { code, signal } = await host.shutdown();
    assert.equal(signal, null);
    assert.equal(code, 0, host.stderr.slice(-2000));
    assert.ok(Date.now() - t0 < 3000, "exits within 3 s");
    const r = await running;
    assert.equal(r.errorCode, "TOOL_ABORTED");
    await assert.rejects(host.request("session.list"), /exited|closed/);
  } finally {
    host.kill();
  }
});
