"""Every Python example of docs/python.md and README.md runs, from a folder where scenes/ and
configs/ are the repository's (the examples write their files there)."""

import pathlib
import re
import subprocess
import sys

import pytest

from conftest import ROOT

DOCS = [ROOT / "docs" / "python.md", ROOT / "README.md"]


def examples():
    blocks = [b for doc in DOCS for b in re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)]
    assert len(blocks) >= 8, "docs/python.md or README.md lost their examples"
    return blocks


@pytest.mark.parametrize("index", range(len(examples())))
def test_the_example_runs(index, tmp_path):
    for folder in ("scenes", "configs"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    code = examples()[index]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"example {index}:\n{code}\n{done.stderr}"
    assert done.stdout.strip(), f"example {index} printed nothing"
