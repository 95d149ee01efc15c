// A Node client for hostcore, driven exactly as the sidecar drives it: the
// binary is spawned as a child and spoken to over stdin/stdout with one
// JSON-RPC 2.0 message per line (PROTOCOL.md section 1).
//
// JSON-RPC itself (ids, pending requests, errors, dispatch of host→client
// requests and notifications) is the json-rpc-2.0 package's
// JSONRPCServerAndClient, which is transport-agnostic and bidirectional:
// hostcore sends requests (permission.request, ask.request) as well as
// answering ours. This file adds only the newline framing. (vscode-jsonrpc's
// stream reader would not do: it speaks Content-Length framing.)
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { JSONRPCClient, JSONRPCServer, JSONRPCServerAndClient } from "json-rpc-2.0";

export class HostcoreClient {
  /**
   * @param {string} bin path to the hostcore binary
   * @param {string[]} args command-line flags
   * @param {object} [opts] {env, onPermission(params) => decision|Promise, onAsk(params) => answers}
   */
  constructor(bin, args = [], opts = {}) {
    this.child = spawn(bin, args, {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...(opts.env ?? {}) },
    });
    /** Every message hostcore wrote, in order: {kind, method?, id?, params?, result?}. */
    this.log = [];
    this.stderr = "";
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (d) => {
      this.stderr += d;
    });
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => resolve({ code, signal }));
    });

    const server = new JSONRPCServer();
    const client = new JSONRPCClient((payload) => {
      // One message, one line.
      this.child.stdin.write(JSON.stringify(payload) + "\n");
    });
    this.rpc = new JSONRPCServerAndClient(server, client);

    const onPermission = opts.onPermission ?? (() => "deny");
    this.rpc.addMethod("permission.request", async (params) => ({ decision: await onPermission(params) }));
    this.rpc.addMethod("ask.request", async (params) => ({ answers: opts.onAsk ? await opts.onAsk(params) : {} }));
    this.listeners = new Map();
    for (const n of ["tool.output", "permission.cancelled", "ask.cancelled", "browser.preview", "approval.requested"]) {
      this.rpc.addMethod(n, (params) => {
        for (const l of this.listeners.get(n) ?? []) l(params);
      });
    }

    const lines = createInterface({ input: this.child.stdout, crlfDelay: Infinity });
    lines.on("line", (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch (e) {
        this.protocolErrors = (this.protocolErrors ?? 0) + 1;
        return;
      }
      const kind = msg.method ? (msg.id !== undefined ? "request" : "notification") : "response";
      this.log.push({ kind, method: msg.method, id: msg.id, params: msg.params, result: msg.result });
      this.rpc.receiveAndSend(msg);
    });
    lines.on("close", () => this.rpc.rejectAllPendingRequests("hostcore closed its stdout"));
  }

  /** Sends a request and resolves with its result (rejects on an error answer). */
  request(method, params = {}) {
    return this.rpc.request(method, params);
  }

  /** Calls fn for every notification of this method. */
  on(method, fn) {
    if (!this.listeners.has(method)) this.listeners.set(method, []);
    this.listeners.get(method).push(fn);
  }

  /** tools.execute with the envelope filled in. */
  execute(sessionId, toolCallId, toolName, args, turnId = "turn-1") {
    return this.request("tools.execute", { sessionId, turnId, toolCallId, toolName, args });
  }

  /** Closes stdin (no more requests) and waits for the exit. */
  async close() {
    this.child.stdin.end();
    return this.exited;
  }

  kill() {
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}
