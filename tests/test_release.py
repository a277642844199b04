"""The release's number, its changelog entry and its schema version stay in step, so an upgrade as
docs/operations.md describes it ("Upgrading": install the new wheel, then migrate) replaces the code."""

import configparser
import re

from shop import migrations
from tests.helpers.processes import ROOT

RELEASE = re.compile(r"^## (\d+)\.(\d+)\.(\d+) \((.*)\)$", re.MULTILINE)


def package_version() -> str:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config["metadata"]["version"]


def releases() -> list[tuple[tuple[int, int, int], str]]:
    """The changelog's releases, newest first: (number, what the heading says of it)."""
    text = (ROOT / "CHANGELOG.md").read_text()
    return [((int(a), int(b), int(c)), note) for a, b, c, note in RELEASE.findall(text)]


def test_the_package_is_the_changelogs_newest_release():
    newest, _ = releases()[0]
    assert package_version() == ".".join(map(str, newest))


def test_each_release_has_a_higher_number_than_the_one_before():
    numbers = [number for number, _ in releases()]
    assert len(numbers) >= 2
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers)


def test_the_newest_release_names_the_schema_version_it_brings():
    """A migration added without a changelog entry for it fails here."""
    _, note = releases()[0]
    assert note == f"schema version {migrations.head()}"


def test_the_operations_guide_installs_this_release():
    guide = (ROOT / "docs" / "operations.md").read_text()
    named = set(re.findall(r"repair_shop_service-([\d.]+)-py3-none-any\.whl", guide))
    assert named == {package_version()}
