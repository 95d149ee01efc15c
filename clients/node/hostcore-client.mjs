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
   * @param {object} [opts] {env, onPermission(params) => decision|Promise,
   *   onAsk(params) => answers, onPlugin(params) => {content, isError?, details?},
   *   logLimit (messages kept in .log, default 10000)}
   */
  constructor(bin, args = [], opts = {}) {
    /** The last logLimit messages hostcore wrote, in order: {kind, method?, id?, params?, result?, error?}.
     * A tool.output's data is kept as its length (dataBytes): a flood of output must not fill memory. */
    this.log = [];
    this.logLimit = opts.logLimit ?? 10000;
    /** The last 64 KiB of hostcore's stderr. */
    this.stderr = "";
    /** Set once hostcore has exited (or could not start): requests are refused from then on. */
    this.gone = null;
    this.child = spawn(bin, args, {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...(opts.env ?? {}) },
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (d) => {
      this.stderr = (this.stderr + d).slice(-65536);
    });
    // Writing to a hostcore that has gone is an EPIPE on stdin: the
    // pending requests are rejected below; the write error itself must
    // not crash the sidecar.
    this.child.stdin.on("error", () => {});
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => {
        // Answers written just before the exit may still be in the pipe
        // (shutdown's may precede the calls'): new requests are refused
        // now, pending ones are rejected once stdout closes.
        this.gone ??= `hostcore exited (code ${code}, signal ${signal})`;
        resolve({ code, signal });
      });
      // A binary that cannot be spawned (ENOENT, EACCES) is an 'error'
      // event, not an exit: unhandled, it killed the sidecar.
      this.child.on("error", (err) => {
        this.goneWith(`hostcore could not be started: ${err.message}`);
        resolve({ code: null, signal: null, error: err });
      });
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
    this.rpc.addMethod("plugin.invoke", async (params) => {
      if (!opts.onPlugin) throw new Error(`no plugin host for ${params.pluginId}`);
      return await opts.onPlugin(params);
    });
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
      let params = msg.params;
      if (msg.method === "tool.output" && params && typeof params.data === "string") {
        const { data, ...rest } = params;
        params = { ...rest, dataBytes: Buffer.byteLength(data) };
      }
      this.log.push({ kind, method: msg.method, id: msg.id, params, result: msg.result, error: msg.error });
      if (this.log.length > this.logLimit) this.log.splice(0, this.log.length - this.logLimit);
      this.rpc.receiveAndSend(msg);
    });
    lines.on("close", () => this.goneWith("hostcore closed its stdout"));
  }

  goneWith(why) {
    if (!this.gone) this.gone = why;
    this.rpc.rejectAllPendingRequests(this.gone);
  }

  /**
   * Sends a request and resolves with its result (rejects on an error
   * answer). Rejects at once once hostcore has gone, and for a message over
   * hostcore's 16 MiB line cap (whose answer could not name the request).
   * opts.timeoutMs rejects a request not answered in time.
   */
  request(method, params = {}, opts = {}) {
    if (this.gone) return Promise.reject(new Error(this.gone));
    const size = Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 0, method, params }));
    if (size > 16 << 20) return Promise.reject(new Error(`${method}: the message is ${size} bytes; hostcore reads lines of at most 16 MiB`));
    return opts.timeoutMs ? this.rpc.timeout(opts.timeoutMs).request(method, params) : this.rpc.request(method, params);
  }

  /** Calls fn for every notification of this method. */
  on(method, fn) {
    if (!this.listeners.has(method)) this.listeners.set(method, []);
    this.listeners.get(method).push(fn);
  }

  /** tools.execute with the envelope filled in; extra adds promptId, messageId, batchSize, delegate, shell. */
  execute(sessionId, toolCallId, toolName, args, turnId = "turn-1", extra = {}) {
    return this.request("tools.execute", { ...extra, sessionId, turnId, toolCallId, toolName, args });
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
