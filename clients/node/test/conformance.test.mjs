// Conformance of hostcore as the Node sidecar sees it, against the built
// binary (binary.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { HostcoreClient } from "../hostcore-client.mjs";
import { hostcoreBinary, removeTempDirs, tempDir } from "./binary.mjs";

let bin = "";
before(() => {
  bin = hostcoreBinary();
});
after(removeTempDirs);

// start spawns hostcore on a fresh data dir and workspace.
function start(flags = [], opts = {}) {
  const ws = tempDir("hostcore-ws-");
  const data = tempDir("hostcore-data-");
  // A temporary HOME keeps Bash's login-shell probe away from the developer's rc files.
  const host = new HostcoreClient(bin, ["--data-dir", data, ...flags], { ...opts, env: { HOME: tempDir("hostcore-home-") } });
  return { host, ws, data };
}

async function finish(host) {
  const { code } = await host.close();
  assert.equal(code, 0, "hostcore exits 0 when stdin closes\n" + host.stderr.slice(-2000));
  assert.equal(host.protocolErrors ?? 0, 0, "every stdout line is JSON");
}

test("session creation", async () => {
  const { host, ws } = start();
  try {
    const init = await host.request("initialize", { clientInfo: { name: "node-conformance" }, protocolVersion: "1" });
    assert.equal(init.protocolVersion, "1");
    const s = await host.request("session.create", { sessionId: "s1", workspaceRoot: ws });
    assert.equal(s.sessionId, "s1");
    assert.equal(s.workspaceRoot, ws);
    assert.equal(s.mode, "agent");
    const got = await host.request("session.get", { sessionId: "s1" });
    assert.equal(got.sessionId, "s1");
    await assert.rejects(host.request("session.create", { sessionId: "s1", workspaceRoot: ws }), "an existing id is an error");
    await assert.rejects(host.request("session.get", { sessionId: "nope" }), (e) => e.data?.errorCode === "SESSION_NOT_FOUND");
  } finally {
    host.kill();
  }
});

test("a permission round trip answered from Node", async () => {
  const cards = [];
  const { host, ws } = start([], {
    onPermission: (card) => {
      cards.push(card);
      return card.toolCallId === "w-allowed" ? "allow-once" : "deny";
    },
  });
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "ask" });
    const ok = await host.execute("s", "w-allowed", "Write", { path: "hello.txt", content: "hi from node\n" });
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.equal(ok.decision, "allow-once");
    assert.equal(ok.timing.prompted, true);
    assert.equal(readFileSync(join(ws, "hello.txt"), "utf8"), "hi from node\n");

    const denied = await host.execute("s", "w-denied", "Write", { path: "nope.txt", content: "x" });
    assert.equal(denied.ok, false);
    assert.equal(denied.errorCode, "TOOL_DENIED");
    assert.equal(denied.decision, "deny");
    assert.equal(existsSync(join(ws, "nope.txt")), false, "a denied Write never runs");

    assert.equal(cards.length, 2);
    assert.equal(cards[0].sessionId, "s");
    assert.equal(cards[0].toolName, "Write");
    assert.equal(cards[0].risk, "high");
    assert.deepEqual(cards[0].options, ["allow-once", "allow-session", "allow-always", "deny"]);

    const audit = await host.request("audit.query", { sessionId: "s" });
    assert.deepEqual(audit.rows.map((r) => [r.toolCallId, r.decision]), [["w-denied", "deny"], ["w-allowed", "allow-once"]]);
    await finish(host);
  } finally {
    host.kill();
  }
});

test("an unanswered card times out as a deny", async () => {
  const cancelled = [];
  // The card is never answered.
  const { host, ws } = start(["--permission-timeout", "300ms"], { onPermission: () => new Promise(() => {}) });
  host.on("permission.cancelled", (p) => cancelled.push(p));
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "ask" });
    const t0 = Date.now();
    const r = await host.execute("s", "late", "Write", { path: "late.txt", content: "x" });
    const waited = Date.now() - t0;
    assert.equal(r.ok, false);
    assert.equal(r.errorCode, "TOOL_DENIED");
    assert.equal(r.decision, "timeout");
    assert.ok(waited >= 250 && waited < 5000, `answered after ${waited} ms`);
    assert.equal(existsSync(join(ws, "late.txt")), false);
    assert.deepEqual(cancelled, [{ sessionId: "s", toolCallId: "late", reason: "timeout" }]);
    await finish(host);
  } finally {
    host.kill();
  }
});

test("Bash streams tool.output before its response", async (t) => {
  const { host, ws } = start();
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "auto" });
    const list = await host.request("tools.list", { sessionId: "s" });
    if (!list.tools.some((x) => x.name === "Bash")) {
      t.skip("Bash is not registered in this hostcore");
      return;
    }
    const chunks = [];
    host.on("tool.output", (p) => chunks.push(p));
    const r = await host.execute("s", "b1", "Bash", {
      command: "for i in 1 2 3; do echo out$i; sleep 0.1; done; echo problem >&2; exit 3",
    });
    assert.equal(r.ok, false, "a non-zero exit is an error result");
    assert.equal(r.errorCode, "TOOL_FAILED");
    assert.equal(r.details.exitCode, 3);
    assert.equal(r.details.stdout, "out1\nout2\nout3\n");
    assert.equal(r.details.stderr, "problem\n");

    const mine = chunks.filter((c) => c.toolCallId === "b1" && c.sessionId === "s");
    assert.ok(mine.length >= 2, `streamed in ${mine.length} chunks`);
    for (const stream of ["stdout", "stderr"]) {
      const seqs = mine.filter((c) => c.stream === stream).map((c) => c.seq);
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), `${stream} chunks in seq order`);
    }
    assert.equal(mine.filter((c) => c.stream === "stdout").map((c) => c.data).join(""), "out1\nout2\nout3\n");
    // On the wire, every chunk of the call came before its response.
    const respAt = host.log.findIndex((m) => m.kind === "response" && m.result?.toolCallId === "b1");
    const lastChunkAt = host.log.findLastIndex((m) => m.method === "tool.output" && m.params.toolCallId === "b1");
    assert.ok(respAt > lastChunkAt && lastChunkAt >= 0, `response at line ${respAt}, last chunk at ${lastChunkAt}`);
    await finish(host);
  } finally {
    host.kill();
  }
});

test("review.rollback restores the previous bytes", async () => {
  const { host, ws } = start();
  try {
    mkdirSync(join(ws, "src"));
    writeFileSync(join(ws, "src", "app.txt"), "before\n");
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "auto" });
    const w = await host.execute("s", "w1", "Write", { path: "src/app.txt", content: "after\n" });
    assert.equal(w.ok, true, JSON.stringify(w));
    assert.equal(w.root, "workspace");
    assert.equal(w.path, "src/app.txt");
    assert.equal(w.review.status, "modified");
    assert.equal(w.review.reversible, true);
    assert.equal(readFileSync(join(ws, "src", "app.txt"), "utf8"), "after\n");

    const rb = await host.request("review.rollback", { sessionId: "s", snapshotId: w.review.snapshotId });
    assert.deepEqual(rb, { state: "rolledBack" });
    assert.equal(readFileSync(join(ws, "src", "app.txt"), "utf8"), "before\n");

    // A file changed after the tool is not touched: CONFLICT.
    const w2 = await host.execute("s", "w2", "Write", { path: "src/app.txt", content: "mine\n" });
    writeFileSync(join(ws, "src", "app.txt"), "edited by the user\n");
    await assert.rejects(
      host.request("review.rollback", { sessionId: "s", snapshotId: w2.review.snapshotId }),
      (e) => e.data?.errorCode === "CONFLICT",
    );
    assert.equal(readFileSync(join(ws, "src", "app.txt"), "utf8"), "edited by the user\n");
    await finish(host);
  } finally {
    host.kill();
  }
});

test("shutdown answers {} and exits 0", async () => {
  const { host, ws } = start();
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws });
    const r = await host.request("shutdown", {});
    assert.deepEqual(r, {});
    const { code, signal } = await host.exited;
    assert.equal(signal, null);
    assert.equal(code, 0, host.stderr.slice(-2000));
  } finally {
    host.kill();
  }
});

// A sidecar outlives its hostcore: a binary that cannot start, requests
// after hostcore has gone, a message over the line cap and a silent
// hostcore all settle instead of crashing the sidecar or hanging
// (a client author's review of this client).
test("the client settles every request once hostcore is gone", async () => {
  const missing = new HostcoreClient(join(tempDir("hostcore-none-"), "no-such-binary"));
  const gone = await missing.exited;
  assert.ok(gone.error, "spawn failure reported on exited");
  await assert.rejects(missing.request("session.list"), /could not be started/);

  const { host, ws } = start();
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws });
    await assert.rejects(host.execute("s", "big", "Write", { path: "big.txt", content: "x".repeat(17 << 20) }), /16 MiB/);
    await host.request("shutdown", {});
    await host.exited;
    await assert.rejects(host.request("session.list"), /exited|closed/);
  } finally {
    host.kill();
  }
});

test("plugin.invoke reaches onPlugin, and the log stays bounded", async () => {
  const { host, ws } = start([], {
    onPlugin: async (p) => ({ content: [{ type: "text", text: `${p.toolName} got ${p.args.n}` }] }),
  });
  host.logLimit = 50;
  try {
    await host.request("session.create", { sessionId: "s", workspaceRoot: ws, permissionMode: "auto" });
    await host.request("plugins.register", { pluginId: "p", grants: ["agent.tool.register"], tools: [{ name: "echo" }] });
    const r = await host.execute("s", "c1", "plugin_p_echo", { n: 7 });
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.equal(r.content[0].text, "echo got 7");
    const tools = await host.request("tools.list", { sessionId: "s" });
    if (tools.tools.some((t) => t.name === "Bash")) {
      await host.execute("s", "b1", "Bash", { command: "head -c 3000000 /dev/zero | tr '\\0' x" });
      assert.ok(host.log.length <= 50, `log holds ${host.log.length} messages`);
      assert.ok(host.log.every((m) => m.method !== "tool.output" || m.params.data === undefined), "tool.output data is not kept");
    }
    await finish(host);
  } finally {
    host.kill();
  }
});
