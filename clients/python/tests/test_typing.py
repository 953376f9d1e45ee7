"""test_typing.py - the package's annotations hold: mypy --strict (Debian's python3-mypy,
installed by scripts/deps.sh) finds nothing in it, for the oldest supported Python too, and
a user's code is checked against them: right uses pass, wrong ones are named."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(PKG))
CACHE = os.path.join(ROOT, "build", "mypy-cache")

USER_CODE = '''\
import asyncio
from typing import List
import mnemod

c = mnemod.Client("http://127.0.0.1:6636")
hits = c.retrieve("agent", "staging password", k=2, half_life="7d")
best: float = hits.results[0].score
ids: List[str] = [s.id for s in c.iter_segments("agent", page_size=10)]
stats: mnemod.NamespaceStats = c.get_namespace("agent")
n: int = stats.count
seg: mnemod.SegmentInput = {"text": "a memory", "source": "notes"}
res: mnemod.ImportResult = c.import_segments("agent", [seg], progress=lambda p: None)
try:
    c.delete_segment("agent", "x")
except mnemod.NotFoundError as e:
    code: str = e.code
async def main() -> float:
    async with mnemod.AsyncClient() as ac:
        r = await ac.retrieve("agent", "q")
        return r.results[0].score
'''
WRONG = {  # line -> what is wrong there
    'c.retrieve("agent", "q", k="ten")': "k is an int",
    'x: str = c.get_namespace("agent").count': "count is an int",
    'c.retrieve("agent", "q").results[0].scor': "no such attribute",
    'bad: mnemod.SegmentInput = {"txt": "typo"}': "no such key",
    'mnemod.AsyncClient().retrieve("agent", "q", k="ten")': "the async one too",
}


def mypy():
    """The command that runs mypy, from this interpreter or the system's."""
    for py in (sys.executable, "/usr/bin/python3"):
        try:
            p = subprocess.run([py, "-m", "mypy", "--version"], capture_output=True, timeout=60)
        except OSError:
            continue
        if p.returncode == 0:
            return [py, "-m", "mypy", "--cache-dir", CACHE, "--no-error-summary"]
    raise AssertionError("mypy not found (scripts/deps.sh installs Debian's python3-mypy)")


class TypingTest(unittest.TestCase):
    def run_mypy(self, *args, **kw):
        env = dict(os.environ, MYPYPATH=PKG)
        return subprocess.run(mypy() + list(args), capture_output=True, text=True, env=env,
                              timeout=300, **kw)

    def test_package_is_strictly_typed(self):
        for version in ("3.9", "%d.%d" % sys.version_info[:2]):
            p = self.run_mypy("--strict", "--python-version", version,
                              os.path.join(PKG, "mnemod"))
            self.assertEqual((p.returncode, p.stdout.strip()), (0, ""), "python %s" % version)

    def test_user_code_is_checked_against_the_annotations(self):
        with tempfile.TemporaryDirectory() as d:
            good = os.path.join(d, "good.py")
            with open(good, "w") as f:
                f.write(USER_CODE)
            p = self.run_mypy("--strict", good)
            self.assertEqual((p.returncode, p.stdout.strip()), (0, ""))
            bad = os.path.join(d, "bad.py")
            with open(bad, "w") as f:
                f.write("import mnemod\nc = mnemod.Client()\n" + "\n".join(WRONG) + "\n")
            p = self.run_mypy("--strict", bad)
            flagged = {int(m.group(1)) for m in re.finditer(r"^.*bad\.py:(\d+): error",
                                                            p.stdout, re.M)}
            self.assertEqual(flagged, set(range(3, 3 + len(WRONG))), p.stdout)


if __name__ == "__main__":
    unittest.main()
