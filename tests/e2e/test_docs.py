"""test_docs.py - the user's manual names every setting, option and error the binary has,
with the names and defaults the binary uses, and nothing the binary does not have.

Sources of truth, each read from the binary or the code itself:
- the server's settings: `mnemod --help` (printed from config/config.c's option table):
  flag, environment variable, default;
- the client commands' options: the command table and the global options of cli/cli.c;
- the maintenance commands' flags: `mnemod backup --help`;
- the error codes: the MEM_ERR_MAP X-macro of core/err.h (status, wire code).
Checked against them:
- docs/mnemod.1: an OPTIONS entry per server setting with its environment variable and its
  default; every client option under its command; every flag the page names exists;
- docs/operations.md and docs/cluster.md: a settings-table row per setting, with the same
  flag, variable and default; every `--flag` and MNEMOD_* variable they name exists;
- `mnemod help`: every option of every command on that command's lines, and no other;
- docs/api.md's error table: every (status, code) the server can send, and no other;
- docs/performance.md: its figures are bench/results/*.json (scripts/bench-figures.py);
- docs/api.md's curl examples: each runs against a real server and answers what it shows.
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The client commands' variables: what cli/cli.c reads.
CLIENT_ENV = set(re.findall(r'getenv\("((?:MNEMOD|MEMU)_[A-Z0-9_]+)"\)',
                            open(os.path.join(ROOT, "cli", "cli.c"), encoding="utf-8").read()))
# Names in the docs that are not mnemod's settings: the cluster's JetStream streams, and a
# flag of vLLM's command line.
OTHER_NAMES = {"MNEMOD_0", "MNEMOD_SNAP", "task"}
# The cluster's JetStream key-value buckets, named like metrics.
BUCKETS = {"mnemod_placement", "mnemod_nodes"}


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def run(*args):
    p = subprocess.run([h.BINARY] + list(args), capture_output=True, timeout=30,
                       env=h.clean_env({}), stdin=subprocess.DEVNULL)
    h.eq(p.returncode, 0, "mnemod %s exit status" % " ".join(args))
    return p.stdout.decode("utf-8")


def none_missing(missing, what):
    h.check(not missing, "%s:\n  %s" % (what, "\n  ".join(missing)))


# ---------------------------------------------------------------- the sources of truth

def server_settings():
    """[{flag (or None), env, default}] from `mnemod --help`, in its order."""
    out = []
    line = re.compile(r"^  (?:--([a-z0-9-]+) \S+|\(env only\))\s+([A-Z0-9_]*)\s+default (.+)$")
    for ln in run("--help").splitlines():
        m = line.match(ln)
        if m:
            out.append({"flag": m.group(1), "env": m.group(2) or None,
                        "default": m.group(3).strip()})
    h.check(len(out) >= 60, "read the settings of mnemod --help (%d)" % len(out))
    return out


def client_commands():
    """({command: [option names]}, [global option names]) from cli/cli.c's tables."""
    src = read("cli/cli.c")
    glob = re.search(r"global_opts\[\] = \{(.*?)\};", src, re.S).group(1)
    table = re.search(r"\} commands\[\] = \{(.*?)\n\};", src, re.S).group(1)
    cmds = {}
    for name, opts in re.findall(r'\{"([a-z]+)",\s*\{(.*?)\}\}', table, re.S):
        cmds[name] = [o.rstrip("!") for o in re.findall(r'"([a-z0-9-]+!?)"', opts)]
    h.check(len(cmds) >= 9 and "search" in cmds, "read cli/cli.c's commands (%s)" % cmds)
    return cmds, [o.rstrip("!") for o in re.findall(r'"([a-z0-9-]+!?)"', glob)]


def error_codes():
    """{(status, wire code)} of core/err.h."""
    pairs = set(re.findall(r'X\(E[A-Z]+, -\d+, (\d+), "([a-z_]+)"\)', read("core/err.h")))
    h.check(len(pairs) >= 20, "read core/err.h's error map (%d)" % len(pairs))
    return pairs


# ---------------------------------------------------------------- the manual

def groff_text(s):
    """Roughly what a man page line reads as: escapes and macro names dropped."""
    s = re.sub(r"^\.(?:B|I|BI|BR|IR|RB|RI|IB)\s+", "", s, flags=re.M)
    s = re.sub(r"\\f[BIRP]", "", s)
    s = s.replace("\\-", "-").replace("\\ ", " ").replace('"', "")
    return re.sub(r"\s+", " ", s)


def man_sections():
    """{section title: text} of docs/mnemod.1."""
    parts = re.split(r"^\.SH ", read("docs/mnemod.1"), flags=re.M)
    return {p.split("\n", 1)[0].strip().strip('"'): p for p in parts[1:]}


def man_entries(section):
    """[(tag line as text, body as text)] of a section's .TP entries."""
    out = []
    for chunk in re.split(r"^\.TP\n", section, flags=re.M)[1:]:
        tag, _, body = chunk.partition("\n")
        body = re.split(r"^\.(?:SS|PP)", body, flags=re.M)[0]
        out.append((groff_text(tag), groff_text(body)))
    return out


def norm_default(s):
    s = s.replace("`", "").replace("\u2212", "-").strip().rstrip(".")
    return re.sub(r"^the ", "", s)


def settings_rows(paths=("docs/operations.md", "docs/cluster.md", "docs/retrieval.md")):
    """[(path, flag or None, env, default)] of the settings tables of paths (the tables
    whose header names env, flag and default)."""
    rows = []
    for path in paths:
        cols = None
        for ln in read(path).splitlines():
            if not ln.startswith("|"):
                cols = None
                continue
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            if cols is None:
                names = [c.lower() for c in cells]
                if {"env", "flag", "default"} <= set(names):
                    cols = {n: names.index(n) for n in ("env", "flag", "default")}
                else:
                    cols = {}
                continue
            if not cols or set(cells[0]) <= set("-: "):
                continue
            flag = cells[cols["flag"]].strip("`")
            flag = flag[2:] if flag.startswith("--") else None
            env = cells[cols["env"]].strip("`")
            rows.append((path, flag, env, cells[cols["default"]]))
    return rows


# ---------------------------------------------------------------- the tests

@h.test
def test_man_page_has_every_setting():
    opts = dict((t, b) for t, b in man_entries(man_sections()["OPTIONS"]))
    env_only_text = groff_text(man_sections()["OPTIONS"])
    missing = []
    for s in server_settings():
        if not s["flag"]:  # an environment variable only: named in some entry
            if not re.search(r"\b%s\b" % s["env"], env_only_text):
                missing.append("%s (environment only) is not named" % s["env"])
            continue
        entry = [b for t, b in opts.items() if re.match(r"--%s\b(?!-)" % s["flag"], t)]
        if not entry:
            missing.append("--%s has no entry" % s["flag"])
            continue
        body = entry[0]
        if s["env"] and not re.search(r"Environment: %s\b" % s["env"], body):
            missing.append("--%s: no 'Environment: %s'" % (s["flag"], s["env"]))
        m = re.search(r"Default: (.*?)(?:\.\s|\.$|$)", body)
        if not m:
            missing.append("--%s: no 'Default:' (--help says %s)" % (s["flag"], s["default"]))
        elif not norm_default(m.group(1)).startswith(norm_default(s["default"])):
            missing.append("--%s: 'Default: %s', --help says %s"
                           % (s["flag"], m.group(1), s["default"]))
    none_missing(missing, "docs/mnemod.1 OPTIONS against mnemod --help")


@h.test
def test_settings_tables_have_every_setting():
    """Every setting has a row in operations.md or cluster.md; every row of those and of
    retrieval.md names a real setting with --help's variable and default."""
    settings = {s["flag"] or s["env"]: s for s in server_settings()}
    rows = settings_rows()
    missing = []
    home = {r[1] or r[2] for r in rows if r[0] != "docs/retrieval.md"}
    missing += ["%s has no row" % k for k in settings if k not in home]
    for path, flag, env, default in rows:
        key = flag or env
        s = settings.get(key)
        if not s:
            missing.append("%s: a row for %s, which mnemod --help does not have" % (path, key))
            continue
        if env != (s["env"] or ""):
            missing.append("%s: %s: env %s, --help says %s" % (path, key, env, s["env"]))
        if not norm_default(default).startswith(norm_default(s["default"])):
            missing.append("%s: %s: default %s, --help says %s" % (path, key, default,
                                                                  s["default"]))
    none_missing(missing, "settings tables of docs/operations.md, cluster.md, retrieval.md")


def usage_lines(usage, cmd, all_cmds):
    """The lines of `mnemod help` that describe cmd: its own line and the indented lines
    under it, up to the next command or section."""
    lines, on = [], False
    for ln in usage.splitlines():
        m = re.match(r"^  ([a-z]+)\b", ln)
        if m and m.group(1) in all_cmds:
            on = m.group(1) == cmd
        elif not ln.startswith("      "):
            on = False
        if on:
            lines.append(ln)
    return "\n".join(lines)


def option_names(text):
    return set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", text)) | \
        {"k" for _ in re.findall(r"(?<![\w-])-k\b", text)}


@h.test
def test_help_shows_every_client_option():
    cmds, glob = client_commands()
    usage = run("help")
    missing = []
    for cmd, opts in cmds.items():
        if cmd == "help":
            continue
        text = usage_lines(usage, cmd, cmds)
        if not text:
            missing.append("%s: no line" % cmd)
            continue
        shown = option_names(text)
        missing += ["%s: --%s not shown" % (cmd, o) for o in opts if o not in shown]
        missing += ["%s: --%s shown but not accepted" % (cmd, o) for o in shown
                    if o not in opts and o not in glob]
    common = usage.split("Options of every command:", 1)
    h.check(len(common) == 2, "mnemod help has its common options")
    shown = option_names(common[1])
    missing += ["--%s (every command) not shown" % o for o in glob if o not in shown]
    none_missing(missing, "mnemod help against cli/cli.c")
    h.eq(run("search", "--help"), usage, "a command's --help is mnemod help")


@h.test
def test_man_page_has_every_client_option():
    cmds, glob = client_commands()
    entries = man_entries(man_sections()["CLIENT COMMANDS"])
    text = groff_text(man_sections()["CLIENT COMMANDS"])
    missing = []
    for cmd, opts in cmds.items():
        if cmd == "help":
            continue
        mine = " ".join(t + " " + b for t, b in entries if re.match(r"%s\b" % cmd, t))
        if not mine:
            missing.append("%s: no entry" % cmd)
            continue
        shown = option_names(mine)
        missing += ["%s: --%s not described" % (cmd, o) for o in opts if o not in shown]
    missing += ["--%s (every command) not described" % o for o in glob
                if o not in option_names(text)]
    none_missing(missing, "docs/mnemod.1 CLIENT COMMANDS against cli/cli.c")


@h.test
def test_man_page_names_only_real_flags():
    cmds, glob = client_commands()
    real = {s["flag"] for s in server_settings() if s["flag"]} | set(glob) | \
        {o for opts in cmds.values() for o in opts} | {"help", "version", "check"}
    page = read("docs/mnemod.1").replace("\\-", "-")
    unknown = sorted(set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", page)) - real)
    none_missing(unknown, "docs/mnemod.1 names flags mnemod does not have")
    env = {s["env"] for s in server_settings() if s["env"]} | CLIENT_ENV
    unknown = sorted(set(re.findall(r"\b((?:MNEMOD|MEMU)_[A-Z0-9_]*[A-Z0-9])\b", page)) - env)
    none_missing(unknown, "docs/mnemod.1 names variables mnemod does not read")


def prose(path):
    """path without its fenced code blocks (commands of other tools live there)."""
    return re.sub(r"```.*?```", "", read(path), flags=re.S)


@h.test
def test_docs_name_only_real_settings():
    cmds, glob = client_commands()
    real = {s["flag"] for s in server_settings() if s["flag"]} | set(glob) | \
        {o for opts in cmds.values() for o in opts} | {"help", "version", "check"}
    env = {s["env"] for s in server_settings() if s["env"]} | CLIENT_ENV
    unknown = []
    for path in ("README.md", "docs/operations.md", "docs/cluster.md", "docs/retrieval.md",
                 "docs/api.md", "docs/architecture.md"):
        text = prose(path)
        for f in sorted(set(re.findall(r"`(?:mnemod [^`]*)?--([a-z][a-z0-9-]*)", text)) - real):
            if f not in OTHER_NAMES:
                unknown.append("%s: --%s" % (path, f))
        for v in sorted(set(re.findall(r"\b((?:MNEMOD|MEMU)_[A-Z0-9_]*[A-Z0-9])\b", text)) - env):
            if v not in OTHER_NAMES:
                unknown.append("%s: %s" % (path, v))
    none_missing(unknown, "the docs name settings mnemod does not have")


@h.test
def test_maintenance_commands_are_described():
    usage = run("backup", "--help")
    for word in ("backup", "restore", "--check", "--data", "--config"):
        h.check(word in usage, "mnemod backup --help names %s" % word)
    text = groff_text(read("docs/mnemod.1"))
    for word in ("mnemod backup", "mnemod restore", "mnemod --check"):
        h.check(word in text, "docs/mnemod.1 shows %s" % word)
    ops = read("docs/operations.md")
    for word in ("mnemod backup", "mnemod restore", "mnemod --check"):
        h.check(word in ops, "docs/operations.md shows %s" % word)


@h.test
def test_error_table_lists_every_code():
    text = read("docs/api.md")
    m = re.search(r"\n\*\*Errors\*\*(.*?)\n\n(\|.*?)\n\n", text, re.S)
    h.check(m, "docs/api.md has an **Errors** paragraph with a table")
    rows = set()
    for ln in m.group(2).splitlines()[2:]:
        cells = [c.strip().strip("`") for c in ln.strip().strip("|").split("|")]
        for code in re.split(r"`?\s*,\s*`?", cells[1]):
            rows.add((cells[0], code.strip("`")))
    want = error_codes()
    none_missing(["%s %s" % p for p in sorted(want - rows)],
                 "docs/api.md's error table lacks codes core/err.h sends")
    none_missing(["%s %s" % p for p in sorted(rows - want)],
                 "docs/api.md's error table lists codes core/err.h does not have")


def metric_names(text):
    """mnemod_* names of a text, `mnemod_x_{a,b}_y` expanded (`mnemod_x{label}` is a label)."""
    names = set()
    brace = re.compile(r"mnemod_([a-z0-9_]*)\{([a-z_,]+)\}([a-z0-9_]+)")
    for m in brace.finditer(text):
        names |= {"mnemod_" + m.group(1) + x + m.group(3) for x in m.group(2).split(",")}
    names |= set(re.findall(r"mnemod_[a-z0-9_]*[a-z0-9]", brace.sub("", text)))
    return names - BUCKETS


@h.test
def test_docs_name_every_metric_and_only_real_ones():
    src = ""
    for d in ("server", "cluster", "api", "storage", "embedder"):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".c"):
                src += read(os.path.join(d, f))
    emitted = set(re.findall(r"# TYPE (mnemod_[a-z0-9_]+)", src))
    # the cluster's counters: "mnemod_cluster_%s_total" over cluster/status.c's table
    emitted |= {"mnemod_cluster_%s_total" % c for c in
                re.findall(r'\{"([a-z_]+)", cl->n_', read("cluster/status.c"))}
    emitted.discard("mnemod_cluster_")
    h.check(len(emitted) >= 30, "read the metrics of the sources (%d)" % len(emitted))
    docs = read("docs/operations.md") + read("docs/cluster.md")
    named = metric_names(docs)
    none_missing(sorted(emitted - named), "metrics the server exports that the docs do not name")
    written = set(re.findall(r"mnemod_[a-z0-9_]*[a-z0-9]", src)) | emitted
    unknown = sorted(n for n in named if n not in written and not
                     any(n.startswith(w) for w in written if w.endswith("_")))
    none_missing(unknown, "metrics the docs name that the server does not export")


@h.test
def test_performance_figures_are_the_results():
    """docs/performance.md's tables are bench/results/*.json as scripts/bench-figures.py
    prints them, and every result file has its table."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench-figures.py"),
                        "--check", os.path.join(ROOT, "docs", "performance.md")],
                       capture_output=True, timeout=60)
    h.check(p.returncode == 0, p.stderr.decode("utf-8", "replace"))


# ---------------------------------------------------------------- the API's examples

API_SEED = [  # the README's first block: what docs/api.md's examples start from
    {"id": "pw-old", "text": "the staging database password is hunter2",
     "timestamp": "2026-11-02T09:00:00Z", "source": "ops"},
    {"id": "lunch", "text": "team lunch moved to thursday", "timestamp": "2026-11-20T12:00:00Z"},
    {"id": "pw-new", "text": "rotated: staging database password is now swordfish",
     "timestamp": "2026-11-28T09:00:00Z", "source": "ops"},
]
PAIR = re.compile(r'"(\w+)":("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)')


def api_examples():
    """[(command, promised output or None)] of docs/api.md's ```sh blocks, in order: a line
    ending in a backslash goes on on the next; `# ` lines right under a command are the
    output it promises."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", read("docs/api.md"), re.S):
        pending = ""
        for line in block.splitlines():
            if pending:
                pending += " " + line.strip()
            elif line.startswith("# ") and out:
                cmd, promised = out[-1]
                out[-1] = (cmd, (promised + " " if promised else "") + line[2:].strip())
                continue
            elif line.strip():
                pending = line
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip()
                continue
            if pending:
                out.append((pending, None))
                pending = ""
    return out


def promise_kept(promised, real):
    """promised's "key":value pairs appear in real's, in order; a string promised as
    "abc..." is a prefix (a cursor or id shown cut)."""
    have = PAIR.findall(real)
    i = 0
    for key, value in PAIR.findall(promised):
        def same(v):
            if v == value:
                return True
            if value.endswith('..."'):
                return v.startswith(value[:-4])
            try:
                return round(float(v), len(value.split(".")[1]) if "." in value else 0) \
                    == float(value)
            except ValueError:
                return False
        while i < len(have) and not (have[i][0] == key and same(have[i][1])):
            i += 1
        if i == len(have):
            return False
        i += 1
    return True


@h.test
def test_api_examples_run_as_printed():
    """Every curl example of docs/api.md runs against a real server holding the README's
    three memories, in the document's order, and answers without an error; an output shown
    under a command (`# {...}`) is what the server says. A cursor shown cut
    (`0000000000000002...`) is replaced by the one the listing before it answered."""
    import json
    import tempfile
    srv = h.Server().start()
    try:
        for seg in API_SEED:
            h.expect_ok(srv.insert("agent", seg), 201)
        examples = api_examples()
        h.check(len(examples) >= 8, "docs/api.md has its curl examples (%d)" % len(examples))
        here = "127.0.0.1:%d" % srv.port
        cursor = None
        promises = substituted = 0
        with tempfile.TemporaryDirectory() as cwd:
            for cmd, promised in examples:
                h.check(cmd.startswith("curl "), "an example that is not curl: %s" % cmd)
                line = cmd.replace("localhost:6636", here)
                h.check("localhost" not in line, "an example on another address: %s" % cmd)
                if "..." in line:
                    h.check(cursor and re.search(r"after=[0-9a-f]+\.\.\.", line),
                            "a placeholder in a command: %s" % cmd)
                    line = re.sub(r"after=[0-9a-f]+\.\.\.", "after=" + cursor, line)
                    substituted += 1
                # the status goes to standard error (an export's body goes to a file)
                line = line.replace("curl -s ", "curl -s -w '%{stderr}%{http_code}' ", 1)
                p = subprocess.run(["sh", "-c", line], cwd=cwd, capture_output=True, timeout=60)
                h.check(p.returncode == 0, "%s: exit %d %s" % (cmd, p.returncode, p.stderr))
                body = p.stdout.decode("utf-8")
                status = p.stderr.decode("utf-8").strip()
                h.check(status in ("200", "201"), "%s: HTTP %s %s" % (cmd, status, body[:400]))
                h.check('"error"' not in body and '"isError":true' not in body,
                        "%s: %s" % (cmd, body[:400]))
                if "/segments?" in line and body.strip():
                    cursor = json.loads(body).get("next") or cursor
                if promised is not None:
                    h.check(promise_kept(promised, body),
                            "%s\n  docs/api.md promises %s\n  server said %s"
                            % (cmd, promised, body.strip()[:800]))
                    promises += 1
            h.check(promises >= 2 and substituted == 1,
                    "outputs checked: %d, cursors put in: %d" % (promises, substituted))
            for name in ("agent.ndjson", "agent-b64.ndjson"):
                with open(os.path.join(cwd, name), encoding="utf-8") as f:
                    ids = [json.loads(x)["id"] for x in f if x.strip()]
                h.eq(ids, ["pw-old", "lunch", "pw-new"], name)
        st, _, seg = srv.get("/v1/namespaces/agent/segments/pw-new")
        h.eq(seg["metadata"], {"user": "ana", "label": "credentials"}, "the patch example")
        h.eq(srv.get("/v1/namespaces/copy")[2]["count"], 3, "the import example")
    finally:
        srv.stop()


if __name__ == "__main__":
    h.main()
