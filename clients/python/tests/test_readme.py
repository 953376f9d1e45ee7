"""test_readme.py - the README's Python example runs as printed against a fresh server and
prints the line its comment promises."""

import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)

from server import Server  # noqa: E402


def readme_example():
    """(code, promised output) of the ```python block of README.md's clients section."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("\n## Five minutes with Python or TypeScript\n")
    code = re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)
    last = code.rstrip().splitlines()[-1]
    assert last.startswith("# "), last
    # the comment is the printed line, then (after a run of spaces) a remark about it
    return code, re.split(r"\s{2,}", last[2:].strip())[0]


class ReadmeTest(unittest.TestCase):
    def test_python_example(self):
        code, promised = readme_example()
        self.assertIn('Client("http://localhost:6636")', code)
        srv = Server().start()
        try:
            code = code.replace("http://localhost:6636", srv.url)
            env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
            env.pop("MNEMOD_API_KEY", None)
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                               timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            self.assertEqual(p.stdout.decode().strip(), promised)
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
