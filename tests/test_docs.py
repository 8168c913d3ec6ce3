"""The documents a newcomer reads hold up: the API reference builds from the docstrings
with no pdoc warning and no reST markup left raw, the README links only to files in the
repository, and the files a packager looks for exist and agree with pyproject.toml."""

import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

import cryptoapi

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def pdoc_flags() -> list[str]:
    """The flags ``make docs`` passes, read from the Makefile so the two cannot drift."""
    found = re.search(r"^PDOC_FLAGS := (.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert found, "the Makefile defines PDOC_FLAGS"
    return found.group(1).split()


def pdoc_modules() -> list[str]:
    """The public modules ``make docs`` documents, read from the Makefile's PDOC_MODULES
    (continued over backslashed lines)."""
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    found = re.search(r"^PDOC_MODULES := (.*)$", makefile, re.M)
    assert found, "the Makefile defines PDOC_MODULES"
    return found.group(1).split()


@pytest.fixture(scope="module")
def api_docs(tmp_path_factory):
    out = tmp_path_factory.mktemp("api")
    command = [sys.executable, "-m", "pdoc", *pdoc_flags(), "-o", str(out), *pdoc_modules()]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    return out, result


def test_the_api_reference_builds_without_warnings(api_docs):
    out, result = api_docs
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"pdoc warned:\n{result.stderr}"
    pages = {path.relative_to(out).as_posix() for path in out.rglob("*.html")}
    for page in ("cryptoapi.html", "cryptoapi/transforms/shash.html", "cryptoapi/pfkey.html"):
        assert page in pages


def test_the_api_reference_is_the_public_api_and_small(api_docs):
    """Only the public modules, no search index: a few MB, not the 23 MB of every module."""
    out = api_docs[0]
    assert not (out / "search.js").exists()
    assert not (out / "cryptoapi" / "providers").exists()
    size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    assert size < 3_000_000, f"{size:,} bytes"
    public = {f"cryptoapi.{name}" for name in ("errors", "alg", "transforms", "pfkey")}
    assert public <= set(pdoc_modules())


def test_the_reference_opens_with_a_quick_start_that_runs(api_docs, capsys):
    """The package page starts with how to use it, not with the PRIORITY_* constants; and
    the quick start's code works as written."""
    page = (api_docs[0] / "cryptoapi.html").read_text()
    start = page.index("Quick start")
    assert page.index("alloc_shash", start) < page.index('id="PRIORITY_GENERIC"')
    block = cryptoapi.__doc__.split("Quick start::\n\n")[1]
    code = textwrap.dedent(re.split(r"\n\n(?=\S)", block)[0])  # up to the prose after it
    exec(compile(code, "cryptoapi.__doc__", "exec"), {})
    assert capsys.readouterr().out == f"{cryptoapi.alloc_aead('gcm(aes)').driver_name}\n"


def rendered_docstrings(out: Path) -> str:
    """The docstrings of every page, without the source listings pdoc adds."""
    texts = []
    for page in out.rglob("*.html"):
        html = re.sub(
            r'<div class="pdoc-code codehilite">.*?</div>', "", page.read_text(), flags=re.S
        )
        texts += re.findall(r'<div class="docstring">(.*?)</div>', html, re.S)
    return "\n".join(texts)


def test_reST_roles_are_rendered_not_printed(api_docs):
    docstrings = rendered_docstrings(api_docs[0])
    assert "verify" in docstrings  # the pages carry the docstrings this test reads
    leftovers = re.findall(r":(?:class|func|meth|mod|data|attr|exc|obj):(?:`|<code>)", docstrings)
    assert leftovers == []  # markdown mode would leave ":class:<code>x</code>"
    assert '<a href="' in docstrings  # references became links


def test_the_shash_page_shows_digest_and_verify_with_their_docs(api_docs):
    page = (api_docs[0] / "cryptoapi" / "transforms" / "shash.html").read_text()
    for anchor in ("Shash.digest", "Shash.verify", "HashDesc.verify", "Shash.digest_size"):
        assert f'id="{anchor}"' in page


def readme_targets() -> list[str]:
    """Every link and image target in the README (inline and reference style)."""
    inline = re.findall(r"\]\(([^)\s]+)", README)
    reference = re.findall(r"^\[[^\]]+\]:\s*(\S+)", README, re.M)
    return inline + reference


def test_the_readme_links_only_inside_the_repository():
    targets = readme_targets()
    assert "docs/design.md" in targets and "SECURITY.md" in targets
    for target in targets:
        assert not re.match(r"[a-z][a-z0-9+.-]*:", target), f"{target}: leaves the repository"
        path = (ROOT / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT.resolve()), f"{target}: outside the repository"
        assert path.exists(), f"{target}: no such file"


def test_the_readme_names_no_path_outside_the_repository():
    assert re.findall(r"\.\./\S*", README) == []


def test_the_project_files_exist_and_agree_with_pyproject():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"
    for name in project["license-files"]:
        text = (ROOT / name).read_text()
        assert text.startswith("MIT License") and "the cryptoapi authors" in text
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(r"^## Unreleased$", changelog, re.M)
    assert re.search(rf"^## {re.escape(project['version'])} - \d{{4}}-\d\d-\d\d$", changelog, re.M)
    assert "Report a vulnerability" in (ROOT / "SECURITY.md").read_text()
    assert any(extra.startswith("pdoc") for extra in project["optional-dependencies"]["test"])
