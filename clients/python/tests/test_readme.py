"""test_readme.py - the Python examples of README.md and of this client's README run as
printed against a fresh server each and print the lines their closing comments promise."""

import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)

from server import Server  # noqa: E402

# (file, the section holding the example, the address the example uses)
EXAMPLES = [("README.md", "## Five minutes with Python or TypeScript", "http://localhost:6636"),
            ("clients/python/README.md", "# mnemod for Python", "http://127.0.0.1:6636")]


def example(path, heading):
    """(code, promised lines) of the first ```python block after `heading` in path. The
    promise is the run of `# ` lines closing the block; in each, a run of two or more
    spaces starts a remark about the line, not part of it."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    start = text.index(heading + "\n")
    code = re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)
    promised = []
    for line in reversed(code.rstrip().splitlines()):
        if not line.startswith("# "):
            break
        promised.insert(0, re.split(r"\s{2,}", line[2:].strip())[0])
    assert promised, "%s: the example promises no output" % path
    return code, promised


class ReadmeTest(unittest.TestCase):
    def test_python_examples(self):
        for path, heading, address in EXAMPLES:
            with self.subTest(path):
                code, promised = example(path, heading)
                self.assertIn('Client("%s")' % address, code)
                srv = Server().start()
                try:
                    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
                    env.pop("MNEMOD_API_KEY", None)
                    p = subprocess.run([sys.executable, "-c", code.replace(address, srv.url)],
                                       capture_output=True, env=env, timeout=60)
                    self.assertEqual(p.returncode, 0, p.stderr.decode())
                    self.assertEqual(p.stdout.decode().splitlines(), promised)
                finally:
                    self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
