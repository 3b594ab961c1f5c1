"""Write ctxtool/examples/session.jsonl: a realistic Claude Code session (generated, seeded).

The session the README's first command compacts: a bug report, the assistant getting to know the
project (git history, three large modules, a verbose test run, a grep with many hits: the bulk of
the context, as in real sessions), reproducing the crash (an error result), fixing it with an
Edit, writing a test, a todo list kept with TodoWrite, a Japanese follow-up, and a full test run
that fails on an unrelated rounding bug, where the session stops mid-task. Responses are streamed
one block per line with a shared message.id and usage, as Claude Code writes them. The project's
files are generated (seeded, so the output is the same on every run), not copied from anywhere.

    python scripts/make_example_session.py [OUT]
"""
import json
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone

SESSION = "9b2f6c1e-4d7a-4e0b-8f3c-2a61d5e0c7b4"
CWD = "/home/dev/invoice-tool"
BASE = dict(isSidechain=False, userType="external", cwd=CWD, sessionId=SESSION, version="2.1.14",
            gitBranch="fix/unicode-export", slug="steady-humming-ledger")
NS = uuid.UUID("0d6c1c4e-9a43-4f6e-bb0a-1d2f3e4a5b6c")
t0 = datetime(2026, 2, 3, 9, 14, 5, 120000, tzinfo=timezone.utc)
lines = []
state = {"parent": None, "n": 0, "t": t0, "msg": 0, "req": 0, "cache": 0}

def uid():
    state["n"] += 1
    return str(uuid.uuid5(NS, str(state["n"])))

def ts(seconds=2.0):
    state["t"] += timedelta(seconds=seconds)
    t = state["t"]
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"

def add(entry):
    lines.append(entry)
    if "uuid" in entry:
        state["parent"] = entry["uuid"]
    return entry

def user(text, **extra):
    return add({"parentUuid": state["parent"], **BASE, "type": "user",
                "message": {"role": "user", "content": text}, "uuid": uid(), "timestamp": ts(20),
                **extra})

def response(blocks, *, new_input, output):
    """One API response written as one line per block, sharing message.id and usage."""
    state["msg"] += 1; state["req"] += 1
    mid = f"msg_01InvoiceToolDemo{state['msg']:04d}"
    rid = f"req_011InvoiceToolDemo{state['req']:04d}"
    usage = {"input_tokens": 6, "cache_creation_input_tokens": new_input,
             "cache_read_input_tokens": state["cache"], "output_tokens": output,
             "service_tier": "standard"}
    state["cache"] += new_input
    uuids = []
    for block in blocks:
        e = add({"parentUuid": state["parent"], **BASE,
                 "message": {"model": "claude-sonnet-4-5-20250929", "id": mid, "type": "message",
                             "role": "assistant", "content": [block], "stop_reason": None,
                             "stop_sequence": None, "usage": usage},
                 "requestId": rid, "type": "assistant", "uuid": uid(), "timestamp": ts(3)})
        uuids.append(e["uuid"])
    return uuids

def thinking(text):
    return {"type": "thinking", "thinking": text, "signature": "EuYBCkYIBxgCKkB" + "x" * 40 + "=="}

def text(t):
    return {"type": "text", "text": t}

def tool(tid, name, inp):
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}

def result(tid, content, structured, *, error=False, source=None):
    block = {"tool_use_id": tid, "type": "tool_result", "content": content}
    if error:
        block["is_error"] = True
    e = {"parentUuid": state["parent"], **BASE, "type": "user",
         "message": {"role": "user", "content": [block]}, "uuid": uid(), "timestamp": ts(1),
         "toolUseResult": structured}
    if source:
        e["sourceToolAssistantUUID"] = source
    return add(e)

def numbered(src):
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(src.split("\n"), 1))

EXPORT = '''"""CSV export of invoices."""
import csv

from invoices.model import Invoice

HEADER = ["number", "customer", "total"]


def export_csv(invoices: list[Invoice], path: str) -> int:
    """Write invoices to ``path``; returns the number of rows written."""
    with open(path, "w", encoding="ascii") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for invoice in invoices:
            writer.writerow([invoice.number, invoice.customer, f"{invoice.total:.2f}"])
    return len(invoices)'''
EXPORT_FIXED = EXPORT.replace('open(path, "w", encoding="ascii")', 'open(path, "w", encoding="utf-8", newline="")')
TEST = '''from invoices.export import export_csv
from invoices.model import Invoice


def test_export_keeps_unicode_names(tmp_path):
    target = tmp_path / "out.csv"
    rows = export_csv([Invoice("2026-001", "Zoë Müller", 120.5),
                       Invoice("2026-002", "山田太郎", 99.0)], str(target))
    assert rows == 2
    text = target.read_text(encoding="utf-8")
    assert "Zoë Müller" in text and "山田太郎" in text
'''
README = '''# invoice-tool

Small helpers to keep track of invoices.

## Export

`python -m invoices export out.csv` writes every invoice to a CSV file.'''
README_FIXED = README + "\n\nThe CSV file is UTF-8 encoded, so customer names in any script are kept as they are."
TOTALS = '''from invoices.totals import round_total


def test_round_half_up():
    assert round_total(2.675) == 2.68'''


# --- a project to explore: generated modules, history and test output (seeded) -------------------
rng = random.Random(18)
NOUNS = ["invoice", "customer", "payment", "line", "tax", "discount", "currency", "account",
         "reminder", "credit_note", "ledger", "period", "report", "address", "vat_rate"]
VERBS = ["load", "save", "find", "list", "validate", "compute", "format", "parse", "merge",
         "archive", "apply", "refresh", "export", "import", "render"]


def _function(name: str) -> str:
    noun = rng.choice(NOUNS)
    args = ", ".join(rng.sample(["conn", "invoice", "customer_id", "since", "limit", "currency",
                                 "rate", "period", "strict"], rng.randint(1, 3)))
    body = [f'def {name}({args}):',
            f'    """{name.replace("_", " ").capitalize()} for the given {noun.replace("_", " ")}."""']
    for _ in range(rng.randint(6, 16)):
        kind = rng.random()
        var = rng.choice(NOUNS)
        if kind < 0.3:
            body.append(f'    {var} = conn.execute("SELECT * FROM {var}s WHERE id = ?", '
                        f'({rng.choice(NOUNS)}_id,)).fetchone()')
        elif kind < 0.5:
            body.append(f'    if {var} is None:\n        raise LookupError(f"no {var} {{{var}_id}}")')
        elif kind < 0.7:
            body.append(f'    total += Decimal(str({var}.amount)) * {rng.choice(["rate", "1", "factor"])}')
        elif kind < 0.85:
            body.append(f'    log.debug("{name}: %s %s", {var}, {rng.choice(NOUNS)})')
        else:
            body.append(f'    for item in {var}.items:\n        item.total = round_total(item.price * item.quantity)')
    body.append(f"    return {rng.choice(NOUNS)}")
    return "\n".join(body)


def module(doc: str, count: int) -> str:
    names = sorted({f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}" for _ in range(count)})
    head = (f'"""{doc}"""\nimport logging\nfrom decimal import Decimal\n\n'
            "from invoices.totals import round_total\n\nlog = logging.getLogger(__name__)\n")
    return head + "\n\n" + "\n\n\n".join(_function(name) for name in names) + "\n"


MODEL = module("Invoices, customers and payments, and how they are stored.", 40)
DB = module("The SQLite layer: queries, migrations and the connection pool.", 70)
CLI = module("The command line: `python -m invoices COMMAND`.", 55)
AUTHORS = ["Dana Reyes", "Kenji Sato", "Zoë Müller", "Priya Natarajan", "Tom Becker"]
GITLOG = "\n\n".join(
    f"commit {rng.getrandbits(160):040x}\nAuthor: {(a := rng.choice(AUTHORS))} "
    f"<{a.split()[0].lower()}@example.com>\nDate:   Mon Jan {rng.randint(1, 28)} "
    f"{rng.randint(8, 19)}:{rng.randint(0, 59):02d}:00 2026 +0100\n\n    "
    f"{rng.choice(VERBS).capitalize()} {rng.choice(NOUNS).replace('_', ' ')}s "
    f"{rng.choice(['in the export', 'for the yearly report', 'before sending reminders', 'per currency'])}\n\n"
    + "\n".join(f" invoices/{rng.choice(['model', 'db', 'cli', 'export', 'totals'])}.py | "
                f"{rng.randint(2, 80)} {'+' * rng.randint(1, 20)}{'-' * rng.randint(0, 9)}"
                for _ in range(rng.randint(1, 4)))
    for _ in range(60))
TESTS = sorted({f"tests/test_{rng.choice(['model', 'db', 'cli', 'totals', 'reminders'])}.py::"
                f"test_{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{rng.choice(['works', 'rejects_bad_input', 'keeps_order', 'is_idempotent', 'rounds'])}"
                for _ in range(700)})
VERBOSE = ("============================= test session starts ==============================\n"
           "platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0 -- /home/dev/invoice-tool/.venv/bin/python\n"
           f"collected {len(TESTS)} items\n\n"
           + "\n".join(f"{name} PASSED{'':>{max(1, 70 - len(name))}}[{100 * (n + 1) // len(TESTS):3d}%]"
                       for n, name in enumerate(TESTS))
           + f"\n\n============================= {len(TESTS)} passed in 4.12s ==============================")
HITS = "\n".join(f"/home/dev/invoice-tool/invoices/{rng.choice(['model', 'db', 'cli', 'export', 'totals'])}.py:"
                 f"{rng.randint(1, 900)}:    {rng.choice(['with open(path', 'handle = open(', 'data.encode(', 'text.decode('])}"
                 + rng.choice(['encoding="utf-8"', 'encoding="ascii"', '"latin-1"', 'errors="replace"']) + ")"
                 for _ in range(260))


def tokens_of(text: str) -> int:
    return len(text) // 3


def explore() -> None:
    """Getting to know the project: the bulk of the session's context."""
    u = response([text("Before changing anything, let me get an overview of the project: its "
                       "history, the modules around the export, and the test suite."),
                  tool("toolu_01GitLog", "Bash", {"command": "git log --stat -n 60",
                                                  "description": "Recent history"})],
                 new_input=300, output=95)
    result("toolu_01GitLog", GITLOG, {"stdout": GITLOG, "stderr": "", "interrupted": False,
                                      "isImage": False}, source=u[-1])
    for n, (name, src) in enumerate((("model", MODEL), ("db", DB), ("cli", CLI))):
        path = f"{CWD}/invoices/{name}.py"
        u = response([tool(f"toolu_01Read{name.capitalize()}", "Read", {"file_path": path})],
                     new_input=tokens_of(GITLOG) if n == 0 else tokens_of((MODEL, DB)[n - 1]),
                     output=60)
        result(f"toolu_01Read{name.capitalize()}", numbered(src),
               {"type": "text", "file": {"filePath": path, "content": src,
                                         "numLines": src.count("\n") + 1, "startLine": 1,
                                         "totalLines": src.count("\n") + 1}}, source=u[-1])
    u = response([tool("toolu_01PytestVV", "Bash", {"command": "python -m pytest -vv",
                                                    "description": "Run the test suite verbosely"})],
                 new_input=tokens_of(CLI), output=70)
    result("toolu_01PytestVV", VERBOSE, {"stdout": VERBOSE, "stderr": "", "interrupted": False,
                                         "isImage": False}, source=u[-1])
    u = response([tool("toolu_01GrepEnc", "Grep", {"pattern": "open\\(|encode|decode", "path": CWD,
                                                   "output_mode": "content", "-n": True})],
                 new_input=tokens_of(VERBOSE), output=80)
    result("toolu_01GrepEnc", HITS, {"mode": "content", "numFiles": 5, "filenames": [],
                                     "content": HITS, "numLines": 260}, source=u[-1])
    state["explored"] = tokens_of(HITS)

# --- the session ---------------------------------------------------------------------------------
add({"type": "file-history-snapshot", "messageId": str(uuid.uuid5(NS, "snap")),
     "snapshot": {"messageId": str(uuid.uuid5(NS, "snap")), "trackedFileBackups": {},
                  "timestamp": "2026-02-03T09:14:05.120Z"}, "isSnapshotUpdate": False})
user("The CSV export in invoices/export.py crashes when a customer name has non-ASCII characters "
     "(we have customers like \"Zoë Müller\"). Please fix it and add a regression test.",
     thinkingMetadata={"maxThinkingTokens": 31999}, todos=[], permissionMode="default")
u = response([thinking("The user reports a crash on non-ASCII names in the CSV export. Likely an "
                       "encoding problem when opening the file. Plan: read export.py, reproduce "
                       "with a test, fix, run tests."),
              text("I'll look at the exporter and reproduce the crash first."),
              tool("toolu_01TodoA", "TodoWrite", {"todos": [
                  {"content": "Reproduce the crash on non-ASCII customer names", "status": "in_progress", "activeForm": "Reproducing the crash"},
                  {"content": "Fix the encoding in invoices/export.py", "status": "pending", "activeForm": "Fixing the encoding"},
                  {"content": "Add a regression test for unicode names", "status": "pending", "activeForm": "Adding a regression test"}]})],
             new_input=24310, output=412)
result("toolu_01TodoA", "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable",
       {"oldTodos": [], "newTodos": []}, source=u[-1])
u = response([tool("toolu_01ReadExport", "Read", {"file_path": f"{CWD}/invoices/export.py"})], new_input=180, output=72)
result("toolu_01ReadExport", numbered(EXPORT),
       {"type": "text", "file": {"filePath": f"{CWD}/invoices/export.py", "content": EXPORT,
                                 "numLines": EXPORT.count("\n") + 1, "startLine": 1, "totalLines": EXPORT.count("\n") + 1}}, source=u[-1])
u = response([tool("toolu_01Grep", "Grep", {"pattern": "export_csv", "path": CWD, "output_mode": "files_with_matches"})], new_input=420, output=88)
result("toolu_01Grep", "Found 2 files\n/home/dev/invoice-tool/invoices/export.py\n/home/dev/invoice-tool/invoices/cli.py",
       {"mode": "files_with_matches", "filenames": ["invoices/export.py", "invoices/cli.py"], "numFiles": 2}, source=u[-1])
explore()
u = response([text("The file is opened with `encoding=\"ascii\"` (the grep shows it is the only "
                   "writer that does). Let me confirm with a quick run."),
              tool("toolu_01BashRepro", "Bash", {"command": "python -c \"from invoices.export import export_csv; from invoices.model import Invoice; export_csv([Invoice('1', 'Zoë Müller', 1.0)], '/tmp/x.csv')\"",
                                                 "description": "Reproduce the export crash"})],
             new_input=260 + state["explored"], output=160)
TRACE = ("Exit code 1\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
         "  File \"/home/dev/invoice-tool/invoices/export.py\", line 15, in export_csv\n"
         "    writer.writerow([invoice.number, invoice.customer, f\"{invoice.total:.2f}\"])\n"
         "UnicodeEncodeError: 'ascii' codec can't encode character '\\xeb' in position 4: ordinal not in range(128)")
result("toolu_01BashRepro", TRACE, {"stdout": "", "stderr": TRACE, "interrupted": False, "isImage": False}, error=True, source=u[-1])
u = response([thinking("Confirmed: UnicodeEncodeError because of encoding=\"ascii\". Use utf-8 and newline=\"\" as the csv module recommends."),
              text("Reproduced: `UnicodeEncodeError: 'ascii' codec can't encode character`. The fix is to open the file as UTF-8 (and with `newline=\"\"`, as the csv module expects)."),
              tool("toolu_01EditExport", "Edit", {"file_path": f"{CWD}/invoices/export.py",
                                                  "old_string": 'with open(path, "w", encoding="ascii") as handle:',
                                                  "new_string": 'with open(path, "w", encoding="utf-8", newline="") as handle:'})],
             new_input=540, output=301)
result("toolu_01EditExport", "The file /home/dev/invoice-tool/invoices/export.py has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n    11\t    with open(path, \"w\", encoding=\"utf-8\", newline=\"\") as handle:\n    12\t        writer = csv.writer(handle)",
       {"filePath": f"{CWD}/invoices/export.py", "oldString": 'with open(path, "w", encoding="ascii") as handle:',
        "newString": 'with open(path, "w", encoding="utf-8", newline="") as handle:', "originalFile": EXPORT,
        "structuredPatch": [], "userModified": False, "replaceAll": False}, source=u[-1])
u = response([tool("toolu_01WriteTest", "Write", {"file_path": f"{CWD}/tests/test_export.py", "content": TEST})], new_input=350, output=240)
result("toolu_01WriteTest", "File created successfully at: /home/dev/invoice-tool/tests/test_export.py",
       {"type": "create", "filePath": f"{CWD}/tests/test_export.py", "content": TEST, "structuredPatch": []}, source=u[-1])
u = response([tool("toolu_01BashTest", "Bash", {"command": "python -m pytest tests/test_export.py -q", "description": "Run the new export test"})], new_input=120, output=70)
result("toolu_01BashTest", "1 passed in 0.04s", {"stdout": "1 passed in 0.04s", "stderr": "", "interrupted": False, "isImage": False}, source=u[-1])
u = response([tool("toolu_01TodoB", "TodoWrite", {"todos": [
                  {"content": "Reproduce the crash on non-ASCII customer names", "status": "completed", "activeForm": "Reproducing the crash"},
                  {"content": "Fix the encoding in invoices/export.py", "status": "completed", "activeForm": "Fixing the encoding"},
                  {"content": "Add a regression test for unicode names", "status": "completed", "activeForm": "Adding a regression test"}]}),
              text("Fixed. `export_csv` now writes UTF-8 (with `newline=\"\"`), and `tests/test_export.py` checks that \"Zoë Müller\" and \"山田太郎\" survive the round trip. The test passes.")],
             new_input=210, output=190)
result("toolu_01TodoB", "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable",
       {"oldTodos": [], "newTodos": []}, source=u[0])
user("ありがとう！READMEにも、CSVがUTF-8で出力されることを一行書いておいてください。")
u = response([text("READMEに追記します。"), tool("toolu_01ReadReadme", "Read", {"file_path": f"{CWD}/README.md"})], new_input=260, output=90)
result("toolu_01ReadReadme", numbered(README),
       {"type": "text", "file": {"filePath": f"{CWD}/README.md", "content": README,
                                 "numLines": README.count("\n") + 1, "startLine": 1, "totalLines": README.count("\n") + 1}}, source=u[-1])
u = response([tool("toolu_01EditReadme", "Edit", {"file_path": f"{CWD}/README.md",
                                                 "old_string": "`python -m invoices export out.csv` writes every invoice to a CSV file.",
                                                 "new_string": "`python -m invoices export out.csv` writes every invoice to a CSV file.\n\nThe CSV file is UTF-8 encoded, so customer names in any script are kept as they are."})],
             new_input=190, output=150)
result("toolu_01EditReadme", "The file /home/dev/invoice-tool/README.md has been updated.",
       {"filePath": f"{CWD}/README.md", "oldString": "x", "newString": "y", "originalFile": README,
        "structuredPatch": [], "userModified": False, "replaceAll": False}, source=u[-1])
u = response([text("READMEの「Export」節に、CSVはUTF-8で書き出されるという一文を追加しました。")], new_input=120, output=60)
user("Great. Now run the whole test suite before I commit.")
u = response([tool("toolu_01BashAll", "Bash", {"command": "python -m pytest -q", "description": "Run the full test suite"})], new_input=140, output=66)
FAIL = ("Exit code 1\n.......F.\n=================================== FAILURES ===================================\n"
        "_______________________________ test_round_half_up _______________________________\n\n"
        "    def test_round_half_up():\n>       assert round_total(2.675) == 2.68\nE       assert 2.67 == 2.68\n"
        "E        +  where 2.67 = round_total(2.675)\n\ntests/test_totals.py:5: AssertionError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_totals.py::test_round_half_up - assert 2.67 == 2.68\n1 failed, 8 passed in 0.31s")
result("toolu_01BashAll", FAIL, {"stdout": FAIL, "stderr": "", "interrupted": False, "isImage": False}, error=True, source=u[-1])
u = response([thinking("One unrelated failure: round_total uses round(), which rounds 2.675 to 2.67 because of binary floating point. It was failing before my change? Check the test and the function."),
              text("The suite has one failure, in `tests/test_totals.py::test_round_half_up` (`round_total(2.675)` gives 2.67, expected 2.68). It is not related to the export fix; let me look at it."),
              tool("toolu_01TodoC", "TodoWrite", {"todos": [
                  {"content": "Investigate the rounding failure in tests/test_totals.py", "status": "in_progress", "activeForm": "Investigating the rounding failure"},
                  {"content": "Run the full test suite again before the commit", "status": "pending", "activeForm": "Running the full test suite"}]}),
              tool("toolu_01ReadTotals", "Read", {"file_path": f"{CWD}/tests/test_totals.py"})],
             new_input=620, output=280)
result("toolu_01TodoC", "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable",
       {"oldTodos": [], "newTodos": []}, source=u[-2])
result("toolu_01ReadTotals", numbered(TOTALS),
       {"type": "text", "file": {"filePath": f"{CWD}/tests/test_totals.py", "content": TOTALS,
                                 "numLines": 5, "startLine": 1, "totalLines": 5}}, source=u[-1])
u = response([text("`round_total` relies on the built-in `round()`, which rounds 2.675 down because 2.675 is stored as 2.67499999… in binary floating point. The fix is to round with `decimal.Decimal(str(value)).quantize(Decimal(\"0.01\"), rounding=ROUND_HALF_UP)` in `invoices/totals.py`. Shall I change it that way?")],
             new_input=330, output=140)

out = sys.argv[1] if len(sys.argv) > 1 else "ctxtool/examples/session.jsonl"
with open(out, "w", encoding="utf-8") as f:
    for e in lines:
        f.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")
print(len(lines), "lines")
