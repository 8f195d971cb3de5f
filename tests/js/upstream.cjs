// An upstream A2A 1.0 agent on @a2a-js/sdk that knows nothing of skillbundle: it serves
// the example skills' domain (example-skills/) as plain A2A skills, over JSON-RPC and
// HTTP+JSON, and is what the gateway's real-parts tests (tests/gateway/) put behind
// `skillbundle serve`. Its twin on a2a-sdk (Python) is tests/gateway/upstream.py; both
// answer alike.
//
//   NODE_PATH=target/test-parts/js/node_modules node tests/js/upstream.cjs
//
// It listens on 127.0.0.1 on a free port and prints one line, {"port": N}, when ready.
//
// A request whose single Data Part is a skill request object ({"skill", "arguments", ...})
// runs that skill; anything else (a base A2A request) is answered with one text Message,
// "echo: " and the texts it was sent. What it does wrong is chosen per request by the
// test: a string "misbehave:MODE" anywhere in `arguments` (else $UPSTREAM_MODE, else
// none). MODE is one of
//   invalid-result     the result breaks its output schema
//   undeclared-record  an extra Artifact of a kind the skill does not declare
//   invalid-record     a supporting record breaks its schema
//   two-results        two primary result Artifacts
//   raise              the executor throws (with a secret in the message)
//   slow               sleeps $UPSTREAM_SLOW_SECONDS (default 30) before answering well
//   chunked            answers well, the result in two Artifact chunks: empty, then its
//                      Data Part appended
//
// GET /calls answers {"requests": N, "executions": N, "skills": {skill: N}}: the A2A
// requests that reached it (any method, either binding) and the executions it ran, so
// that a test can assert that a refused request never reached it.
"use strict";

const express = require("express");
const { randomUUID } = require("node:crypto");
const { TaskState, Role } = require("@a2a-js/sdk");
const {
  DefaultRequestHandler,
  InMemoryTaskStore,
  AgentEvent,
} = require("@a2a-js/sdk/server");
const {
  jsonRpcHandler,
  restHandler,
  agentCardHandler,
  UserBuilder,
} = require("@a2a-js/sdk/server/express");

const SECRET = "upstream-secret-7f3a";
const SLOW_SECONDS = Number(process.env.UPSTREAM_SLOW_SECONDS || "30");

const calls = { requests: 0, executions: 0, skills: {} };

/** The misbehaviour a request asks for: "misbehave:MODE" anywhere in its arguments. */
function modeOf(value) {
  if (typeof value === "string") {
    return value.startsWith("misbehave:") ? value.slice("misbehave:".length) : null;
  }
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) {
      const m = modeOf(v);
      if (m) return m;
    }
  }
  return null;
}

/** Each skill's domain logic: the supporting records ([kind, artifactId, record]) and
 * the result object, computed from the arguments. */
const SKILLS = {
  evaluate_resource_condition(args) {
    const observed = 42;
    const c = args.condition || {};
    const met = { gt: observed > c.threshold, gte: observed >= c.threshold, lt: observed < c.threshold, lte: observed <= c.threshold }[c.operator];
    const record = {
      record_id: "observation-7",
      resource_id: String(args.resource_id),
      metric: c.metric,
      value: observed,
      unit: c.unit,
      observed_at: "2026-08-11T12:00:01Z",
    };
    const result = {
      result: met ? "condition_met" : "condition_not_met",
      observed_value: observed,
      unit: c.unit,
      supporting_record_refs: ["observation-7"],
    };
    return {
      records: [["resource-observation", "observation-7", record]],
      result,
      breakResult: (r) => { r.result = "maybe"; },
      breakRecord: (r) => { delete r.observed_at; },
    };
  },
  manage_interface_config(args) {
    const config = { admin_state: "up", oper_state: "up", description: "uplink to agg-1" };
    if (args.operation === "read") {
      return {
        records: [],
        result: { operation: "read", applied: false, config },
        breakResult: (r) => { r.config.oper_state = "sideways"; },
        breakRecord: () => {},
      };
    }
    const after = args.operation === "set_admin_state" ? { admin_state: args.admin_state } : { description: args.description };
    const before = args.operation === "set_admin_state" ? { admin_state: "up" } : { description: config.description };
    const record = {
      record_id: "change-1",
      change_ticket: args.change_ticket,
      approved_by: "noc-lead@example.net",
      committed_at: "2026-08-11T12:10:00Z",
      device: args.device,
      interface: args.interface,
      before,
      after,
    };
    return {
      records: [["config-change", "change-1", record]],
      result: { operation: args.operation, applied: true, config: { ...config, ...after, oper_state: after.admin_state === "down" ? "down" : "up" }, supporting_record_refs: ["change-1"] },
      breakResult: (r) => { r.config.oper_state = "sideways"; },
      breakRecord: (r) => { r.change_ticket = "not-a-ticket"; },
    };
  },
  trace_network_path(args) {
    const protocol = args.protocol || "icmp";
    const probe = (n, responder, rtt) => ({
      record_id: `probe-${n}`,
      sent_at: `2026-08-11T12:00:0${n}Z`,
      ttl: n,
      protocol,
      responder,
      rtt_ms: rtt,
      producer: "https://agents.example.net/path-tracer",
    });
    return {
      records: [
        ["path-probe", "probe-1", probe(1, "192.0.2.1", 0.4)],
        ["path-probe", "probe-2", probe(2, "198.51.100.7", 3.1)],
      ],
      result: {
        reached: true,
        hops: [{ ttl: 1, responder: "192.0.2.1", rtt_ms: 0.4 }, { ttl: 2, responder: "198.51.100.7", rtt_ms: 3.1 }],
        supporting_record_refs: ["probe-1", "probe-2"],
      },
      breakResult: (r) => { r.hops[0].ttl = 0; },
      breakRecord: (r) => { r.sent_at = "yesterday"; },
    };
  },
};

function dataPart(value) {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" };
}

function textPart(value) {
  return { content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

function artifact(artifactId, name, parts) {
  return { artifactId, name, description: "", parts, metadata: undefined, extensions: [] };
}

/** The skill request object of a message: its one Data Part, when that is an object
 * with `skill` and `arguments`. */
function skillRequest(message) {
  const parts = (message && message.parts) || [];
  if (parts.length !== 1 || !parts[0].content || parts[0].content.$case !== "data") return null;
  const data = parts[0].content.value;
  if (!data || typeof data !== "object" || typeof data.skill !== "string" || !("arguments" in data)) return null;
  return data;
}

class DomainExecutor {
  async execute(context, bus) {
    calls.executions += 1;
    const message = context.userMessage;
    const request = skillRequest(message);
    const { taskId, contextId } = context;
    if (!request) {
      const texts = (message.parts || []).filter((p) => p.content && p.content.$case === "text").map((p) => p.content.value);
      bus.publish(AgentEvent.message({
        messageId: randomUUID(), contextId, taskId: "", role: Role.ROLE_AGENT,
        parts: [textPart("echo: " + texts.join(" "))], metadata: undefined, extensions: [], referenceTaskIds: [],
      }));
      bus.finished();
      return;
    }
    calls.skills[request.skill] = (calls.skills[request.skill] || 0) + 1;
    const mode = modeOf(request.arguments) || process.env.UPSTREAM_MODE || null;
    const status = (state) => ({ state, message: undefined, timestamp: new Date().toISOString() });
    bus.publish(AgentEvent.task({
      id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED),
      artifacts: [], history: [message], metadata: undefined,
    }));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }));
    if (mode === "raise") {
      throw new Error(`the upstream broke (${SECRET})`);
    }
    if (mode === "slow") {
      await new Promise((resolve) => setTimeout(resolve, SLOW_SECONDS * 1000));
    }
    const skill = SKILLS[request.skill];
    if (!skill) {
      const reply = {
        messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT,
        parts: [textPart("no such skill")], metadata: undefined, extensions: [], referenceTaskIds: [],
      };
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { ...status(TaskState.TASK_STATE_REJECTED), message: reply }, metadata: undefined }));
      bus.finished();
      return;
    }
    const out = skill(request.arguments || {});
    if (mode === "invalid-result") out.breakResult(out.result);
    if (mode === "invalid-record" && out.records.length > 0) out.breakRecord(out.records[0][2]);
    const send = (a, append = false, lastChunk = true) =>
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: a, append, lastChunk, metadata: undefined }));
    for (const [kind, id, record] of out.records) send(artifact(id, kind, [dataPart(record)]));
    if (mode === "undeclared-record") send(artifact("debug-1", "debug-dump", [dataPart({ secret: SECRET })]));
    const result = { skill: request.skill, result: out.result };
    if (mode === "chunked") {
      send(artifact("result-1", request.skill, []), false, false);
      send(artifact("result-1", request.skill, [dataPart(result)]), true, true);
    } else {
      send(artifact("result-1", request.skill, [dataPart(result)]));
    }
    if (mode === "two-results") send(artifact("result-2", request.skill, [dataPart(result)]));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    bus.publish(AgentEvent.statusUpdate({
      taskId, contextId: "", status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined,
    }));
    bus.finished();
  }
}

function card(base) {
  const skill = (id, name, description, tags) => ({
    id, name, description, tags, examples: [], inputModes: ["application/json"], outputModes: ["application/json"], securityRequirements: [],
  });
  return {
    name: "Network agent (@a2a-js/sdk)",
    description: "Answers network assurance questions; knows nothing of schema interfaces.",
    supportedInterfaces: [
      { url: `${base}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url: `${base}/a2a/rest`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
    ],
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["application/json", "text/plain"],
    defaultOutputModes: ["application/json", "text/plain"],
    skills: [
      skill("evaluate_resource_condition", "Evaluate resource condition", "Checks whether an observed resource metric satisfies a threshold.", ["network", "assurance"]),
      skill("manage_interface_config", "Manage interface configuration", "Reads or changes an interface's configuration.", ["network", "configuration"]),
      skill("trace_network_path", "Trace network path", "Traces the forwarding path between two endpoints.", ["network", "troubleshooting"]),
    ],
    signatures: [],
  };
}

function main() {
  const app = express();
  const server = app.listen(0, "127.0.0.1", () => {
    const port = server.address().port;
    const agentCard = card(`http://127.0.0.1:${port}`);
    const handler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), new DomainExecutor());
    const count = (req, _res, next) => {
      calls.requests += 1;
      next();
    };
    app.get("/calls", (_req, res) => res.json(calls));
    app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
    app.use("/a2a/jsonrpc", count, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
    app.use("/a2a/rest", count, restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
    process.stdout.write(JSON.stringify({ port }) + "\n");
  });
  server.keepAliveTimeout = 65000;
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main();
