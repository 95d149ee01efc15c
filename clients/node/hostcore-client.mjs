// A typed Node client for hostcore, driven as the sidecar drives it: the
// binary is spawned as a child and spoken to over stdin/stdout with one
// JSON-RPC 2.0 message per line.
//
// JSON-RPC itself (ids, pending requests, errors, dispatch of host→client
// requests and notifications) is the json-rpc-2.0 package's
// JSONRPCServerAndClient, which is transport-agnostic and bidirectional:
// hostcore sends requests (permission.request, ask.request, plugin.invoke)
// as well as answering ours. This file adds the newline framing and the
// types: every method's params and result come from src/protocol.d.ts,
// generated from the repository's schema/ (npm run gen), and tsc checks
// this file against them (npm run typecheck). vscode-jsonrpc's stream
// reader would not do: it speaks Content-Length framing.
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { createInterface } from "node:readline";
import { JSONRPCClient, JSONRPCServer, JSONRPCServerAndClient } from "json-rpc-2.0";

/**
 * @typedef {import("./src/protocol.js").ClientRequests} ClientRequests
 * @typedef {import("./src/protocol.js").HostRequests} HostRequests
 * @typedef {import("./src/protocol.js").HostNotifications} HostNotifications
 * @typedef {import("./src/protocol.js").ExecuteParams} ExecuteParams
 * @typedef {import("./src/protocol.js").ToolResult} ToolResult
 * @typedef {import("./src/protocol.js").ToolArgs} ToolArgs
 * @typedef {import("./src/protocol.js").ToolOutputParams} ToolOutputParams
 * @typedef {import("./src/protocol.js").PermissionRequestParams} PermissionRequestParams
 * @typedef {import("./src/protocol.js").PermissionDecision} PermissionDecision
 * @typedef {import("./src/protocol.js").PermissionReply} PermissionReply
 * @typedef {import("./src/protocol.js").AskRequestParams} AskRequestParams
 * @typedef {import("./src/protocol.js").Answers} Answers
 * @typedef {import("./src/protocol.js").PluginInvokeParams} PluginInvokeParams
 * @typedef {import("./src/protocol.js").PluginReply} PluginReply
 * @typedef {import("./src/protocol.js").ToolsCancelResult} ToolsCancelResult
 * @typedef {import("./src/protocol.js").TurnCancelResult} TurnCancelResult
 */

/**
 * @template T
 * @typedef {T | Promise<T>} MaybePromise
 */

/**
 * The events a client emits: one per host→client notification, with its params.
 * @typedef {{ [M in keyof HostNotifications]: [HostNotifications[M]["params"]] }} HostEvents
 */

/**
 * @typedef {object} ClientOptions
 * @property {Record<string, string>} [env] added to the environment hostcore runs with
 * @property {(card: PermissionRequestParams) => MaybePromise<PermissionDecision | PermissionReply>} [onPermission]
 *   answers a permission card with one of its options, or with a whole
 *   reply ({decision: "allow-always-command", prefix}); without it every
 *   card is denied (hostcore would otherwise wait its permission timeout,
 *   120 s by default)
 * @property {(req: AskRequestParams) => MaybePromise<Answers>} [onAsk]
 *   answers asktool's questions; without it they come back unanswered
 * @property {(req: PluginInvokeParams) => MaybePromise<PluginReply>} [onPlugin]
 *   runs a registered plugin tool
 * @property {number} [logLimit] messages kept in .log (default 10000)
 */

/**
 * @typedef {object} LoggedMessage one line hostcore wrote
 * @property {"request" | "notification" | "response"} kind
 * @property {string} [method]
 * @property {unknown} [id]
 * @property {any} [params] a tool.output's data is kept as its length, dataBytes
 * @property {any} [result]
 * @property {any} [error]
 */

/**
 * @typedef {object} ExecuteExtra the optional members of tools.execute, and a per-call output callback
 * @property {string} [promptId]
 * @property {string} [messageId]
 * @property {number} [batchSize]
 * @property {string} [delegate]
 * @property {string} [shell]
 * @property {(chunk: ToolOutputParams) => void} [onOutput] called with each tool.output chunk of this call, in order
 */

/** The host→client notifications, emitted as events of the same name. */
const notifications = /** @type {const} */ (["tool.output", "permission.cancelled", "ask.cancelled", "browser.preview", "approval.requested"]);

/** hostcore reads lines of at most 16 MiB. */
const lineCap = 16 << 20;

/**
 * A running hostcore. Host→client notifications are emitted as events
 * named by their method (`client.on("tool.output", (params) => ...)`);
 * cards, questions and plugin calls are answered by the callbacks of
 * ClientOptions.
 *
 * @extends {EventEmitter<HostEvents>}
 */
export class HostcoreClient extends EventEmitter {
  /**
   * @param {string} bin path to the hostcore binary
   * @param {string[]} [args] command-line flags
   * @param {ClientOptions} [opts]
   */
  constructor(bin, args = [], opts = {}) {
    super();
    /** @type {LoggedMessage[]} the last logLimit messages hostcore wrote, in order; bounded, so a flood of output cannot fill memory */
    this.log = [];
    this.logLimit = opts.logLimit ?? 10000;
    /** The last 64 KiB of hostcore's stderr. */
    this.stderr = "";
    /** @type {string | null} set once hostcore has exited (or could not start): requests are refused from then on */
    this.gone = null;
    /** Lines of stdout that were not JSON (none, from a healthy hostcore). */
    this.protocolErrors = 0;
    /** @type {Map<string, (chunk: ToolOutputParams) => void>} onOutput callbacks by sessionId and toolCallId */
    this.outputs = new Map();
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
    /** @type {Promise<{code: number | null, signal: NodeJS.Signals | null, error?: Error}>} settles when hostcore has exited or could not start */
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => {
        // Answers written just before the exit may still be in the pipe
        // (shutdown's may precede the calls'): new requests are refused
        // now, pending ones are rejected once stdout closes.
        this.gone ??= `hostcore exited (code ${code}, signal ${signal})`;
        resolve({ code, signal });
      });
      // A binary that cannot be spawned (ENOENT, EACCES) is an 'error'
      // event, not an exit: unhandled, it would kill the sidecar.
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
    this.rpc.addMethod("permission.request", async (/** @type {PermissionRequestParams} */ params) => {
      const answer = await onPermission(params);
      return typeof answer === "string" ? { decision: answer } : answer;
    });
    this.rpc.addMethod("ask.request", async (/** @type {AskRequestParams} */ params) => ({ answers: opts.onAsk ? await opts.onAsk(params) : {} }));
    this.rpc.addMethod("plugin.invoke", async (/** @type {PluginInvokeParams} */ params) => {
      if (!opts.onPlugin) throw new Error(`no plugin host for ${params.pluginId}`);
      return await opts.onPlugin(params);
    });
    for (const n of notifications) {
      this.rpc.addMethod(n, (params) => {
        if (n === "tool.output") this.outputs.get(callKey(params.sessionId, params.toolCallId))?.(params);
        this.emit(n, /** @type {any} */ (params));
      });
    }

    const lines = createInterface({ input: this.child.stdout, crlfDelay: Infinity });
    lines.on("line", (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        this.protocolErrors++;
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

  /** @param {string} why */
  goneWith(why) {
    if (!this.gone) this.gone = why;
    this.rpc.rejectAllPendingRequests(this.gone);
  }

  /**
   * Sends a request and resolves with its result; rejects with the
   * JSON-RPC error (its data.errorCode says which hostcore condition) on an
   * error answer. Rejects at once once hostcore has gone, and for a
   * message over hostcore's 16 MiB line cap (whose answer could not name
   * the request). opts.timeoutMs rejects a request not answered in time.
   *
   * @template {keyof ClientRequests} M
   * @param {M} method
   * @param {ClientRequests[M]["params"]} [params]
   * @param {{timeoutMs?: number}} [opts]
   * @returns {Promise<ClientRequests[M]["result"]>}
   */
  request(method, params = /** @type {ClientRequests[M]["params"]} */ ({}), opts = {}) {
    if (this.gone) return Promise.reject(new Error(this.gone));
    const size = Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 0, method, params }));
    if (size > lineCap) return Promise.reject(new Error(`${method}: the message is ${size} bytes; hostcore reads lines of at most 16 MiB`));
    const rpc = opts.timeoutMs ? this.rpc.timeout(opts.timeoutMs) : this.rpc;
    return Promise.resolve(rpc.request(method, params));
  }

  /**
   * tools.execute with the envelope filled in. Its result says how the call
   * went (ok false for a denial, bad arguments or a failing command); the
   * promise rejects only for a broken envelope or an unknown session.
   *
   * @template {string} T
   * @param {string} sessionId
   * @param {string} toolCallId unique within the session
   * @param {T} toolName
   * @param {T extends keyof ToolArgs ? ToolArgs[T] : Record<string, unknown>} args
   * @param {string} [turnId]
   * @param {ExecuteExtra} [extra]
   * @returns {Promise<ToolResult>}
   */
  async execute(sessionId, toolCallId, toolName, args, turnId = "turn-1", extra = {}) {
    const { onOutput, ...rest } = extra;
    const key = callKey(sessionId, toolCallId);
    if (onOutput) this.outputs.set(key, onOutput);
    try {
      /** @type {ExecuteParams} */
      const params = { ...rest, sessionId, turnId, toolCallId, toolName, args };
      return await this.request("tools.execute", params);
    } finally {
      // Every chunk of a call precedes its answer: none can follow.
      if (onOutput) this.outputs.delete(key);
    }
  }

  /**
   * Cancels one call (tools.cancel): it ends as TOOL_ABORTED, its process
   * tree killed; resolves once it has ended.
   *
   * @param {string} sessionId
   * @param {string} toolCallId
   * @returns {Promise<ToolsCancelResult>}
   */
  cancel(sessionId, toolCallId) {
    return this.request("tools.cancel", { sessionId, toolCallId });
  }

  /**
   * Cancels every call of a turn (turn.cancel).
   *
   * @param {string} sessionId
   * @param {string} turnId
   * @returns {Promise<TurnCancelResult>}
   */
  cancelTurn(sessionId, turnId) {
    return this.request("turn.cancel", { sessionId, turnId });
  }

  /**
   * Stops hostcore at once (the shutdown request: running calls end as
   * TOOL_ABORTED, pending cards as deny) and waits for its exit; one that
   * has not exited within graceMs is killed.
   *
   * @param {number} [graceMs]
   */
  async shutdown(graceMs = 5000) {
    if (!this.gone) await this.request("shutdown", {}).catch(() => {});
    const timer = setTimeout(() => this.kill(), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes stdin (no more requests): running calls finish, then hostcore exits. Waits for the exit. */
  async close() {
    this.child.stdin.end();
    return this.exited;
  }

  /** Kills hostcore if it is still running. */
  kill() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

/**
 * @param {string} sessionId
 * @param {string} toolCallId
 */
function callKey(sessionId, toolCallId) {
  return JSON.stringify([sessionId, toolCallId]);
}
