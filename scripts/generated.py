"""What the catalog generators share: C++ literals, and writing a generated
file or, with --check, failing when the committed one is stale."""
import pathlib
import sys


def cxx(s):
    """A C++ string literal of s."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_or_check(out: pathlib.Path, text: str, script: str, what: str, written: str) -> None:
    """With --check: exit 1 when `out` differs from `text`; else write it."""
    if "--check" in sys.argv:
        if out.read_text(encoding="utf-8") != text:
            sys.exit(f"{out} is stale: run scripts/{script}")
        print(f"{what} up to date")
        return
    out.write_text(text, encoding="utf-8")
    print(written)
