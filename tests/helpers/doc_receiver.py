"""The receiver code printed in docs/webhooks.md, taken out of the page as it is printed (so a test
that verifies with it checks the documentation and the service's signatures together)."""

import re
import types
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def code_block(language: str) -> str:
    """The one fenced block of `language` in docs/webhooks.md."""
    text = (DOCS / "webhooks.md").read_text(encoding="utf-8")
    blocks = re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.S | re.M)
    assert len(blocks) == 1, f"docs/webhooks.md should hold exactly one {language} block"
    return blocks[0]


def doc_python_module() -> types.ModuleType:
    """docs/webhooks.md's Python receiver, loaded as a module (its __main__ part does not run)."""
    module = types.ModuleType("doc_receiver")
    exec(compile(code_block("python"), "docs/webhooks.md#python", "exec"), module.__dict__)
    return module
