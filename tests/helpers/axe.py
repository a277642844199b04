"""Accessibility checks in the browser: axe-core (vendored under tests/vendor/axe-core) run on the
page a selenium driver shows."""

from pathlib import Path

AXE = Path(__file__).resolve().parents[1] / "vendor" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}}).then(
  r => done(r.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))),
  e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));
"""


def axe_violations(driver, impacts: tuple[str, ...] = BLOCKING) -> list[dict]:
    """axe-core's WCAG 2 A/AA and best-practice violations of the current page with these impacts."""
    driver.execute_script(AXE.read_text(encoding="utf-8"))  # WebDriver's own call: not subject to CSP
    found = driver.execute_async_script(RUN, TAGS)
    return [v for v in found if v["impact"] in impacts]
