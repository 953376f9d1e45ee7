"""test_readme.py - the README's "Five minutes with curl" runs as printed, and prints what
the README says it prints; so does the command-line example of docs/operations.md.

Each ```sh block of that section is run against a fresh server, one command at a time, with
the README's own shell lines (only the address changed). A `# ...` comment right under a
command is the output the README promises: its "key":value pairs must appear in the real
answer in the same order, each number equal to the real one rounded to the digits shown
(`...` stands for pairs left out). Commands without a promised output must succeed.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIR = re.compile(r'"(\w+)":("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)')


def section(title, path="README.md", level="##"):
    """The text of path's `## title` section (`level` the heading's hashes)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    start = text.index("\n%s %s\n" % (level, title))
    end = text.find("\n%s " % level, start + 1)
    return text[start:end if end >= 0 else len(text)]


def sh_blocks(text):
    return re.findall(r"```sh\n(.*?)```", text, re.S)


def commands(block):
    """[(command line, promised output or None)] in the block's order; the promised output is
    the run of `# ` lines right under a command."""
    out = []
    for line in block.splitlines():
        if line.startswith("# ") and out:
            cmd, promised = out[-1]
            out[-1] = (cmd, (promised + " " if promised else "") + line[2:].strip())
        elif line.strip():
            out.append((line, None))
    return out


def pairs(text):
    """The "key":value pairs of a JSON text (or of a README excerpt of one), in order."""
    return PAIR.findall(text)


def same_value(promised, real):
    if promised == real:
        return True
    try:
        p, r = float(promised), float(real)
    except ValueError:
        return False
    digits = len(promised.split(".")[1]) if "." in promised else 0
    return round(r, digits) == p


def check_promise(cmd, promised, output):
    """The promised pairs appear, in order, among the real answer's pairs."""
    real = pairs(output)
    want = pairs(promised)
    h.check(want, "%s: the README's output shows no JSON pairs: %s" % (cmd, promised))
    i = 0
    for key, value in want:
        while i < len(real) and not (real[i][0] == key and same_value(value, real[i][1])):
            i += 1
        h.check(i < len(real), "%s\n  README promises %s:%s (in order: %s)\n  server said %s"
                % (cmd, key, value, promised, output.strip()[:1200]))
        i += 1


@h.test
def test_five_minutes_with_curl():
    srv = h.Server()
    srv.start()
    try:
        base = "localhost:6636"
        here = "127.0.0.1:%d" % srv.port
        blocks = sh_blocks(section("Five minutes with curl"))
        h.check(len(blocks) >= 4, "the curl section has its blocks (%d)" % len(blocks))
        setup = []  # shell assignments (H=..., U=...) carried to the later commands
        promises = 0
        with tempfile.TemporaryDirectory() as cwd:
            for block in blocks:
                for cmd, promised in commands(block):
                    line = cmd.replace(base, here)
                    h.check(base not in line, line)
                    if not line.startswith("curl"):
                        setup.append(line)
                        continue
                    p = subprocess.run(["sh", "-c", "\n".join(setup + [line])], cwd=cwd,
                                       capture_output=True, timeout=60)
                    out = p.stdout.decode("utf-8")
                    h.check(p.returncode == 0, "%s: exit %d %s" % (cmd, p.returncode, p.stderr))
                    h.check('"error"' not in out, "%s: %s" % (cmd, out[:400]))
                    if promised is not None:
                        check_promise(cmd, promised, out)
                        promises += 1
            with open(os.path.join(cwd, "agent.ndjson"), encoding="utf-8") as f:
                exported = f.read()
        h.check(promises >= 4, "the README promises outputs (%d checked)" % promises)
        # the export the last block wrote is the namespace as it is then: lunch forgotten
        ids = sorted(json.loads(x)["id"] for x in exported.splitlines() if x.strip())
        h.eq(ids, ["pw-new", "pw-old"], "agent.ndjson")
    finally:
        srv.stop()


@h.test
def test_command_line_example():
    """docs/operations.md's command-line session: every command succeeds, and the table
    under the search is exactly what the command prints."""
    srv = h.Server()
    srv.start()
    try:
        block = sh_blocks(section("The command line", "docs/operations.md", "###"))[0]
        env = h.clean_env({"MNEMOD_URL": "http://127.0.0.1:%d" % srv.port})
        env.pop("COLUMNS", None)
        shell = 'mnemod() { "%s" "$@"; }' % h.BINARY
        promises = 0
        with tempfile.TemporaryDirectory() as cwd:
            for cmd, _ in commands(block):
                h.check(cmd.startswith("mnemod "), cmd)
            lines = block.splitlines()
            for i, cmd in enumerate(lines):
                if not cmd.startswith("mnemod "):
                    continue
                promised = []
                for nxt in lines[i + 1:]:
                    if not nxt.startswith("# "):
                        break
                    promised.append(nxt[2:].rstrip())
                p = subprocess.run(["sh", "-c", shell + "\n" + cmd], cwd=cwd, env=env,
                                   capture_output=True, timeout=60)
                out = p.stdout.decode("utf-8")
                h.check(p.returncode == 0, "%s: exit %d %s" % (cmd, p.returncode, p.stderr))
                if promised:
                    h.eq([x.rstrip() for x in out.splitlines()], promised, cmd)
                    promises += 1
        h.check(promises >= 1, "the example promises an output")
        st, _, body = srv.call("GET", "/v1/namespaces")
        h.eq(sorted(n["name"] for n in body["namespaces"]), ["agent"], "agent-copy dropped")
    finally:
        srv.stop()


if __name__ == "__main__":
    h.main()
