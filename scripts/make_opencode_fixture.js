// Writes tests/fixtures/opencode/ the way OpenCode itself writes them, with node's own JSON.stringify:
// storage files = JSON.stringify(x, null, 2) (no final newline), export = that + "\n".
// Usage: node scripts/make_opencode_fixture.js tests/fixtures/opencode
const fs = require("fs"), path = require("path")
const out = process.argv[2]
const T = 1767000000000
const SES = "ses_4a1b2c3d4ffeAbCdEfGhIjKlMn"
const PROJ = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
const cwd = "/home/dev/app", root = "/home/dev/app"
const model = { providerID: "anthropic", modelID: "claude-sonnet-4-5" }
const session = {
  id: SES, slug: "brave-otter", version: "1.1.48", projectID: PROJ, directory: cwd,
  title: "Fix the failing test", time: { created: T, updated: T + 900000 },
  summary: { additions: 12, deletions: 3, files: 2 },
}
const msgs = []
let n = 0
function mid(i) { return "msg_b5e0a1c2d" + String(i).padStart(3, "0") + "QrStUvWxYz0123" }
function user(i, created, parts, extra = {}) {
  const id = mid(i)
  msgs.push({ info: { id, sessionID: SES, role: "user", time: { created }, agent: "build", model, ...extra },
              parts: parts.map((p, k) => ({ id: "prt_b5e0a1c2d" + String(i).padStart(3, "0") + String(k).padStart(2, "0") + "AaBbCcDdEeFf", sessionID: SES, messageID: id, ...p })) })
  return id
}
function assistant(i, parent, created, parts, extra = {}) {
  const id = mid(i)
  const info = { id, sessionID: SES, role: "assistant", time: { created, completed: created + 4000 }, parentID: parent,
    modelID: model.modelID, providerID: model.providerID, mode: "build", agent: "build", path: { cwd, root },
    cost: 0.00001234, tokens: { input: 1200, output: 340, reasoning: 25, cache: { read: 15000, write: 2048 } }, ...extra }
  if (extra.time === null) delete info.time
  msgs.push({ info, parts: parts.map((p, k) => ({ id: "prt_b5e0a1c2d" + String(i).padStart(3, "0") + String(k).padStart(2, "0") + "AaBbCcDdEeFf", sessionID: SES, messageID: id, ...p })) })
  return id
}
const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
const big = (label, k) => Array.from({ length: k }, (_, j) => `${label} line ${j}: ` + "x".repeat(60)).join("\n")
// 1. user turn with text, files and an agent mention
const u1 = user(1, T, [
  { type: "text", text: "Fix the failing test in src/app.py — café ☕ 中文 \"quoted\"\ttab" },
  { type: "text", text: "Called the Read tool with the following input: {\"filePath\":\"/home/dev/app/README.md\"}", synthetic: true },
  { type: "text", text: "<file>\n00001| # App\n</file>", synthetic: true },
  { type: "file", mime: "text/plain", filename: "README.md", url: "file:///home/dev/app/README.md",
    source: { type: "file", path: "README.md", text: { value: "@README.md", start: 0, end: 10 } } },
  { type: "file", mime: "image/png", filename: "screenshot.png", url: png },
  { type: "file", mime: "application/pdf", filename: "spec.pdf", url: "file:///home/dev/app/spec.pdf" },
  { type: "agent", name: "build", source: { value: "@build", start: 11, end: 17 } },
  { type: "text", text: "ignored draft", ignored: true },
])
// 2. assistant with reasoning, tools (one pruned, one skill), step parts, patch, snapshot
assistant(2, u1, T + 1000, [
  { type: "step-start", snapshot: "4b825dc642cb6eb9a060e54bf8d69288fbee4904" },
  { type: "reasoning", text: "The test imports a missing helper.", time: { start: T + 1100, end: T + 1200 },
    metadata: { anthropic: { signature: "EqQBCkYIBxgCKkA=" } } },
  { type: "text", text: "Let me read the test.", time: { start: T + 1200, end: T + 1300 } },
  { type: "tool", callID: "toolu_01ReadAAA", tool: "read", state: { status: "completed",
    input: { filePath: "/home/dev/app/tests/test_app.py" }, output: "<file>\n00001| import app\n00002| def test_x(): assert app.x() == 1\n</file>",
    title: "tests/test_app.py", metadata: { preview: "import app" }, time: { start: T + 1300, end: T + 1350 } } },
  { type: "tool", callID: "toolu_01BashBBB", tool: "bash", state: { status: "completed",
    input: { command: "pytest -q", description: "Run tests" }, output: big("pytest", 40),
    title: "pytest -q", metadata: { exit: 1, description: "Run tests" }, time: { start: T + 1400, end: T + 2400, compacted: T + 600000 } } },
  { type: "tool", callID: "toolu_01SkillCCC", tool: "skill", state: { status: "completed",
    input: { name: "python-testing" }, output: "# Skill: python-testing\nUse pytest fixtures.",
    title: "python-testing", metadata: {}, time: { start: T + 2500, end: T + 2510 } } },
  { type: "step-finish", reason: "tool-calls", snapshot: "4b825dc642cb6eb9a060e54bf8d69288fbee4905", cost: 0.00001234,
    tokens: { input: 1200, output: 340, reasoning: 25, cache: { read: 15000, write: 2048 } } },
  { type: "patch", hash: "4b825dc642cb6eb9a060e54bf8d69288fbee4905", files: ["/home/dev/app/src/app.py"] },
  { type: "snapshot", snapshot: "4b825dc642cb6eb9a060e54bf8d69288fbee4905" },
], { finish: "tool-calls" })
// 3. assistant with a failed tool, an interrupted tool that kept output, a retry
assistant(3, u1, T + 5000, [
  { type: "step-start" },
  { type: "tool", callID: "toolu_01GrepDDD", tool: "grep", state: { status: "error",
    input: { pattern: "def x" }, error: "Error: ripgrep exited with code 2", time: { start: T + 5100, end: T + 5200 } } },
  { type: "tool", callID: "toolu_01BashEEE", tool: "bash", state: { status: "error",
    input: { command: "sleep 100" }, error: "Tool execution aborted", metadata: { interrupted: true, output: "partial output before abort" },
    time: { start: T + 5300, end: T + 5400 } } },
  { type: "retry", attempt: 1, error: { name: "APIError", data: { message: "Overloaded", statusCode: 529, isRetryable: true } },
    time: { created: T + 5450 } },
  { type: "text", text: "Fixed: added the helper `x()`." },
  { type: "step-finish", reason: "stop", cost: 0.5, tokens: { input: 800, output: 120, reasoning: 0, cache: { read: 16000, write: 0 } } },
], { finish: "stop", cost: 0.5, tokens: { input: 800, output: 120, reasoning: 0, cache: { read: 16000, write: 0 } } })
// 4-5. first compaction: manual
const c1 = user(4, T + 60000, [{ type: "compaction", auto: false }])
assistant(5, c1, T + 61000, [
  { type: "text", text: "## Goal\nFix the failing test.\n\n## Accomplished\nAdded x() to src/app.py." },
], { mode: "compaction", agent: "compaction", summary: true, finish: "stop",
     tokens: { input: 9000, output: 300, reasoning: 0, cache: { read: 0, write: 0 } } })
// 6-7. a subtask turn and a tool with an image attachment
const u6 = user(6, T + 120000, [
  { type: "text", text: "Now add a --verbose flag" },
  { type: "subtask", prompt: "Find where flags are parsed", description: "find flags", agent: "general" },
])
assistant(7, u6, T + 121000, [
  { type: "tool", callID: "toolu_01ReadFFF", tool: "read", state: { status: "completed",
    input: { filePath: "/home/dev/app/docs/diagram.png" }, output: "Image read successfully",
    title: "docs/diagram.png", metadata: {}, time: { start: T + 121100, end: T + 121200 },
    attachments: [{ id: "prt_b5e0a1c2d00799AaBbCcDdEeFf", sessionID: SES, messageID: mid(7), type: "file", mime: "image/png", filename: "diagram.png", url: png }] } },
  { type: "text", text: "Added `--verbose`." },
], { finish: "stop" })
// 8-9. another turn; the last finished answer shows the window nearly full
const u8 = user(8, T + 180000, [{ type: "text", text: "and update the docs" }])
assistant(9, u8, T + 181000, [{ type: "text", text: "Docs updated." }],
  { finish: "stop", tokens: { input: 2000, output: 500, reasoning: 0, cache: { read: 150000, write: 4000 } } })
// 10-12. second compaction: automatic, keeps a tail from msg 8, then the synthetic continue message
const c2 = user(10, T + 240000, [{ type: "compaction", auto: true, tail_start_id: u8 }])
assistant(11, c2, T + 241000, [{ type: "text", text: "## Goal\nAdd --verbose and docs.\n\n## Accomplished\nBoth done." }],
  { mode: "compaction", agent: "compaction", summary: true, finish: "stop" })
user(12, T + 250000, [{ type: "text", text: "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.",
  synthetic: true, metadata: { compaction_continue: true }, time: { start: T + 250000, end: T + 250000 } }])
// 13. the session was killed while tools were pending / running
assistant(13, mid(12), T + 251000, [
  { type: "step-start" },
  { type: "tool", callID: "toolu_01EditGGG", tool: "edit", state: { status: "pending", input: {}, raw: "{\"filePath\":" } },
  { type: "tool", callID: "toolu_01BashHHH", tool: "bash", state: { status: "running", input: { command: "make docs" }, title: "make docs", time: { start: T + 251500 } } },
], { time: { created: T + 251000 }, tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }, cost: 0 })

const stringify = (x) => JSON.stringify(x, null, 2)
function write(file, text) { fs.mkdirSync(path.dirname(file), { recursive: true }); fs.writeFileSync(file, text) }
// export
write(path.join(out, "export.json"), stringify({ info: session, messages: msgs }) + "\n")
// storage tree (plus a second, smaller session and a project file)
const st = path.join(out, "storage")
write(path.join(st, "project", PROJ + ".json"), stringify({ id: PROJ, worktree: root, vcs: "git", time: { created: T - 86400000, initialized: T - 86400000 } }))
write(path.join(st, "session", PROJ, SES + ".json"), stringify(session))
for (const m of msgs) {
  write(path.join(st, "message", SES, m.info.id + ".json"), stringify(m.info))
  for (const p of m.parts) write(path.join(st, "part", m.info.id, p.id + ".json"), stringify(p))
}
const SES2 = "ses_4a1b2c3d5ffeOtherSession01"
const other = { id: SES2, slug: "calm-heron", version: "1.1.48", projectID: "global", directory: "/tmp", title: "hello", time: { created: T - 5000, updated: T - 4000 } }
write(path.join(st, "session", "global", SES2 + ".json"), stringify(other))
const om = { id: "msg_b5e0a1c2c001OtherMessage01", sessionID: SES2, role: "user", time: { created: T - 5000 }, agent: "build", model }
write(path.join(st, "message", SES2, om.id + ".json"), stringify(om))
write(path.join(st, "part", om.id, "prt_b5e0a1c2c00100OtherPart001.json"), stringify({ id: "prt_b5e0a1c2c00100OtherPart001", sessionID: SES2, messageID: om.id, type: "text", text: "hello" }))
