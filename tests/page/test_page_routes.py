"""The page routes with Flask's test client: each page in each language, the
language choice, the assets, and the content security policy they must obey."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.app.web import close_app, create_app, i18n
from companion.app.web.pages import RULE_SECTIONS

PAGES = ["/", "/bluffs", "/bluffs/c-abc-1", "/rules"]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Any]:
    app = create_app(tmp_path, simulate=True, test_config={"TESTING": True})
    try:
        with app.test_client() as c:
            yield c
    finally:
        close_app(app)


def _strings_block(html: str) -> str:
    match = re.search(r'<script type="application/json" id="eb-strings">(.*?)</script>', html, re.S)
    assert match, "the page carries its texts for the scripts"
    return match.group(1)


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
@pytest.mark.parametrize("path", PAGES)
def test_each_page_renders_in_each_language(client: Any, path: str, lang: str) -> None:
    response = client.get(path, query_string={"lang": lang})
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert f'<html lang="{lang}">' in html
    texts = i18n.strings(lang)
    assert texts["nav_rules"] in html and texts["nav_bluffs"] in html
    # No text fell back to a bare key: every t("...") in the templates resolved.
    for key in i18n.strings("en"):
        assert f">{key}<" not in html, f"{path} in {lang} shows the key {key}"
    # The scripts get exactly this language's texts.
    import json

    assert json.loads(_strings_block(html)) == texts


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
def test_the_rules_page_has_every_rule_in_the_language(client: Any, lang: str) -> None:
    html = client.get("/rules", query_string={"lang": lang}).get_data(as_text=True)
    texts = i18n.strings(lang)
    from markupsafe import escape

    for heading, keys in RULE_SECTIONS:
        assert str(escape(texts[heading])) in html
        for key in keys:
            assert str(escape(texts[key])) in html, f"{lang}: {key} missing from the rules page"
    for number in range(1, 16):
        assert f">R{number}</span>" in html


def test_the_language_follows_accept_language_then_the_cookie_then_the_query(client: Any) -> None:
    def lang_of(**kwargs: Any) -> str:
        html = client.get("/", **kwargs).get_data(as_text=True)
        return re.search(r'<html lang="([a-z]+)">', html).group(1)

    assert lang_of() == "en"
    assert lang_of(headers={"Accept-Language": "nl-BE,nl;q=0.9,en;q=0.5"}) == "nl"
    assert lang_of(headers={"Accept-Language": "ro_RO"}) == "ro"
    assert lang_of(headers={"Accept-Language": "ja,zh;q=0.8"}) == "en"
    client.set_cookie("eb_lang", "da")
    assert lang_of(headers={"Accept-Language": "nl"}) == "da"
    assert lang_of(query_string={"lang": "it"}) == "it"
    client.set_cookie("eb_lang", "xx")  # an unknown remembered language is ignored
    assert lang_of(headers={"Accept-Language": "pl"}) == "pl"


def test_an_unknown_bluff_address_is_not_a_page(client: Any) -> None:
    assert client.get("/bluffs/not-a-challenge").status_code == 404
    assert client.get("/bluffs/c-" + "x" * 100).status_code == 404


def test_pages_obey_the_csp_no_inline_script_or_style(client: Any) -> None:
    for path in PAGES:
        response = client.get(path)
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        html = response.get_data(as_text=True)
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert 'src="/static/' in tag or 'type="application/json"' in tag, tag
        assert not re.search(r"\sstyle=", html), f"{path} has an inline style attribute"
        assert not re.search(r"\son[a-z]+=", html), f"{path} has an inline event handler"
        assert "http://" not in html and "https://" not in html, f"{path} loads something from outside"


def test_every_asset_a_page_names_is_served_locally(client: Any) -> None:
    seen = set()
    for path in PAGES:
        html = client.get(path).get_data(as_text=True)
        seen |= set(re.findall(r'(?:src|href)="(/static/[^"]+)"', html))
    assert {"/static/js/common.js", "/static/js/table.js", "/static/css/page.css", "/static/img/elephant.svg"} <= seen
    for asset in sorted(seen):
        response = client.get(asset)
        assert response.status_code == 200, asset
        response.close()
    # The stylesheet's own url(...) references resolve too.
    css = resources.files("companion.app.web").joinpath("static", "css", "page.css").read_text(encoding="utf-8")
    for ref in re.findall(r'url\("([^"]+)"\)', css):
        target = resources.files("companion.app.web").joinpath("static", "css", ref)
        assert Path(str(target)).resolve().is_file(), ref


def test_every_text_the_scripts_ask_for_exists_in_english() -> None:
    static = resources.files("companion.app.web").joinpath("static", "js")
    english = i18n.strings("en")
    wanted: set[str] = set()
    for name in ("common.js", "dice.js", "table.js", "bluffs.js", "bluff.js"):
        source = static.joinpath(name).read_text(encoding="utf-8")
        wanted |= set(re.findall(r'\bt\("([a-z0-9_]+)"', source))
        # ... and t(cond ? "key_a" : "key_b", ...)
        for pair in re.findall(r'\bt\([^()]*?\?\s*"([a-z0-9_]+)"\s*:\s*"([a-z0-9_]+)"', source):
            wanted |= set(pair)
    assert wanted, "the scripts ask for texts"
    missing = sorted(wanted - set(english))
    assert not missing, f"the scripts ask for texts English lacks: {missing}"


def test_every_english_text_is_used_by_a_page_or_a_script() -> None:
    """No dead texts: each key is named, quoted, in a template, a script or pages.py."""
    web = resources.files("companion.app.web")
    sources = [web.joinpath(name).read_text(encoding="utf-8") for name in ("pages.py", "i18n.py")]
    sources += [p.read_text(encoding="utf-8") for p in web.joinpath("templates").iterdir() if p.name.endswith(".html")]
    sources += [p.read_text(encoding="utf-8") for p in web.joinpath("static", "js").iterdir() if p.name.endswith(".js")]
    text = "\n".join(sources)
    unused = [k for k in i18n.strings("en") if not k.startswith("__") and f'"{k}"' not in text and f"'{k}'" not in text]
    assert not unused, f"texts no page uses: {unused}"


@pytest.mark.parametrize("path", PAGES)
def test_each_page_is_well_formed_with_unique_ids(client: Any, path: str) -> None:
    """Balanced tags and no id twice: the scripts find their elements by id."""
    from html.parser import HTMLParser

    void = {"meta", "link", "input", "br", "img", "hr", "source"}

    class Check(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []
            self.ids: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.ids += [v for k, v in attrs if k == "id" and v]
            if tag not in void:
                self.stack.append(tag)

        def handle_endtag(self, tag: str) -> None:
            assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
            self.stack.pop()

    check = Check()
    check.feed(client.get(path).get_data(as_text=True))
    assert check.stack == [], f"unclosed tags: {check.stack}"
    assert len(check.ids) == len(set(check.ids)), sorted({i for i in check.ids if check.ids.count(i) > 1})
