// A real MCP client from npm (the official TypeScript SDK) driving
// `hostcore mcp`: it lists the tools, reads a file, and writes two files
// through permission prompts answered over elicitation (allow once, then
// deny). It prints one JSON summary on stdout for mcp_test.go.
//
// usage: node client.mjs HOSTCORE_BINARY WORKSPACE DATA_DIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [bin, workspace, dataDir] = process.argv.slice(2);
if (!bin || !workspace || !dataDir) {
  console.error("usage: node client.mjs HOSTCORE_BINARY WORKSPACE DATA_DIR");
  process.exit(2);
}

const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp", "--workspace", workspace, "--data-dir", dataDir, "--permission-mode", "ask"],
  stderr: "inherit",
});
const client = new Client(
  { name: "hostcore-node-test", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);

// Answers the permission forms in order: allow once, then deny.
const answers = ["allow-once", "deny"];
const elicited = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicited.push(req.params.message);
  const props = req.params.requestedSchema?.properties ?? {};
  if (!props.decision) {
    return { action: "decline" };
  }
  return { action: "accept", content: { decision: answers.shift() ?? "deny" } };
});

await client.connect(transport);
const { tools } = await client.listTools();
const textOf = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const read = await client.callTool({ name: "Read", arguments: { path: "a.txt" } });
const write = await client.callTool({ name: "Write", arguments: { path: "node.txt", content: "written by node\n" } });
const denied = await client.callTool({ name: "Write", arguments: { path: "denied.txt", content: "no\n" } });
await client.close();

process.stdout.write(JSON.stringify({
  tools: tools.map((t) => t.name),
  readText: textOf(read),
  writeError: Boolean(write.isError),
  writeText: textOf(write),
  elicited,
  deniedError: Boolean(denied.isError),
  deniedCode: denied.structuredContent?.errorCode ?? "",
}) + "\n");
