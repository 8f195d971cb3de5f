// An A2A 1.0 client on @a2a-js/sdk, driven by the gateway's real-parts tests
// (tests/gateway/): it discovers an agent from its Agent Card only, picks the binding it
// is told to (JSON-RPC or HTTP+JSON) among the card's interfaces, and runs a list of steps.
//
//   NODE_PATH=target/test-parts/js/node_modules node tests/js/client.cjs < scripts.jsonl
//
// It reads scripts, one JSON object a line on stdin, and answers each with one line on
// stdout, in order, until stdin closes (one node process serves a whole test session).
// A script:
//   {"agent": BASE_URL, "binding": "JSONRPC" | "HTTP+JSON", "stream": false,
//    "extensions": [URI, ...],            sent in A2A-Extensions and Message.extensions
//    "steps": [{"send": {"data": VALUE}} | {"send": {"text": "..."}},
//              {"get": TASK_ID} | {"get": "$last"}, {"list": {}}, {"cancel": TASK_ID}]}
// Its answer: {"card": the card as the SDK read it, "results": [...]}, one
// result per step, in the protocol's JSON form: {"task": ...} or {"message": ...} (send;
// when streaming also "events": [...], every StreamResponse in order), {"task": ...}
// (get, cancel), {"tasks": [...]} (list), or {"error": {"name", "code", "message"}}.
"use strict";

const { randomUUID } = require("node:crypto");
const { Role, Task, Message, StreamResponse, ListTasksResponse, AgentCard } = require("@a2a-js/sdk");
const { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } = require("@a2a-js/sdk/client");

const readline = require("node:readline");

function part(spec) {
  if ("data" in spec) return { content: { $case: "data", value: spec.data }, metadata: undefined, filename: "", mediaType: "application/json" };
  return { content: { $case: "text", value: spec.text }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

function failure(e) {
  return { error: { name: e && e.constructor ? e.constructor.name : "Error", code: e && e.code !== undefined ? e.code : null, message: String(e && e.message) } };
}

function resultOf(answer) {
  if (answer && typeof answer === "object" && "messageId" in answer) return { message: Message.toJSON(answer) };
  return { task: Task.toJSON(answer) };
}

async function run(script) {
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
    preferredTransports: [script.binding],
  });
  const client = await factory.createFromUrl(script.agent);
  const card = await client.getAgentCard();
  const extensions = script.extensions || [];
  const options = extensions.length ? { serviceParameters: { "A2A-Extensions": extensions.join(", ") } } : {};
  const results = [];
  let last = null;
  for (const step of script.steps) {
    try {
      if (step.send) {
        const message = {
          messageId: randomUUID(), contextId: "", taskId: "", role: Role.ROLE_USER, parts: [part(step.send)],
          metadata: undefined, extensions, referenceTaskIds: [],
        };
        const request = { tenant: "", message, configuration: undefined, metadata: undefined };
        if (script.stream) {
          const events = [];
          for await (const event of client.sendMessageStream(request, options)) events.push(StreamResponse.toJSON(event));
          const ids = events.map((e) => (e.task && e.task.id) || (e.statusUpdate && e.statusUpdate.taskId) || (e.artifactUpdate && e.artifactUpdate.taskId)).filter(Boolean);
          last = ids[0] || null;
          results.push({ events });
        } else {
          const answer = await client.sendMessage(request, options);
          const r = resultOf(answer);
          last = r.task ? r.task.id : null;
          results.push(r);
        }
      } else if ("get" in step) {
        const id = step.get === "$last" ? last : step.get;
        results.push({ task: Task.toJSON(await client.getTask({ tenant: "", id, historyLength: undefined }, options)) });
      } else if ("cancel" in step) {
        const id = step.cancel === "$last" ? last : step.cancel;
        results.push({ task: Task.toJSON(await client.cancelTask({ tenant: "", id, metadata: undefined }, options)) });
      } else if ("list" in step) {
        const answer = await client.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 100, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: true, ...step.list }, options);
        results.push(ListTasksResponse.toJSON(answer));
      } else {
        results.push({ error: { name: "Script", code: null, message: "unknown step" } });
      }
    } catch (e) {
      results.push(failure(e));
    }
  }
  return { card: AgentCard.toJSON(card), results };
}

async function main() {
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    let answer;
    try {
      answer = await run(JSON.parse(line));
    } catch (e) {
      answer = { fatal: String(e && e.stack ? e.stack : e) };
    }
    process.stdout.write(JSON.stringify(answer) + "\n");
  }
}

main();
