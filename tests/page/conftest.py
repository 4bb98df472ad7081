"""Fixtures for the page's tests: a real ``elephants-bluff serve --simulate``
process on a free port, Debian's Chromium driven by Playwright, and a page that
collects console errors so each test can assert there were none."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from pagehelpers import CHROMIUM, CHROMIUM_ARGS, PIN, ROOT, VIEWPORT, Server, free_port


class ServeProcess:
    """One ``elephants-bluff serve --simulate`` on ``port`` over ``instance``; start() waits until it answers."""

    def __init__(self, instance: Path, port: int, log_dir: Path | None = None) -> None:
        self.instance, self.port = instance, port
        self.log_path = (log_dir or instance) / "serve.log"  # elsewhere for an instance on a card the test fills
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen | None = None
        self.log: Any = None

    def start(self) -> Server:
        env = {**os.environ, "ELEPHANTS_BLUFF_PIN": PIN, "ELEPHANTS_BLUFF_THREADS": "32"}
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "companion.app.cli", "serve", "--simulate", "--instance", str(self.instance), "--port", str(self.port), "--init"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
        )
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                self.stop()
                pytest.fail("serve exited: " + self.log_path.read_text(errors="replace"))
            try:
                with requests.Session() as s:
                    if s.get(self.url + "/api/health", timeout=2).status_code == 200:
                        return Server(self.url, self.instance)
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail("serve did not answer within 60 s: " + self.log_path.read_text(errors="replace"))
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None:
            # SIGTERM, not SIGINT: a test run started in the background ignores SIGINT, and so would the server.
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None


@pytest.fixture
def card_server(tmp_path: Path, small_card: Any) -> Iterator[tuple[Server, Any]]:
    """A server whose game log lies on a small card of its own (``small_card``, a real tmpfs), with the card. The rest
    of the instance folder (the server's own log among it) stays on this machine's disk."""
    from companion.app.settings import all_settings, render_config

    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "config.toml").write_text(render_config(all_settings(), {"table.pin": PIN, "storage.database": str(small_card.path / "game-log.sqlite3")}))
    process = ServeProcess(instance, free_port())
    try:
        yield process.start(), small_card
    finally:
        process.stop()


@pytest.fixture
def whole_card_server(tmp_path: Path, small_card: Any) -> Iterator[tuple[Server, Any]]:
    """A server whose whole instance folder lies on a small card of its own, as on a Pi (the game log, the devices'
    sessions and the photos share one card), with the card; the server's own log stays on this machine's disk."""
    instance = small_card.path / "instance"
    instance.mkdir()
    process = ServeProcess(instance, free_port(), log_dir=tmp_path)
    try:
        yield process.start(), small_card
    finally:
        process.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The companion as players run it, on the simulated table, stopped after the session."""
    process = ServeProcess(tmp_path_factory.mktemp("instance"), free_port())
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[ServeProcess]:
    """A server of this test's own, that the test may stop and start again."""
    process = ServeProcess(tmp_path, free_port())
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (make system-deps installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Console:
    """Console errors and uncaught page errors of every page of a context."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.allowed: list[str] = []

    def allow(self, text: str) -> None:
        """A test that breaks something on purpose names the console line it expects."""
        self.allowed.append(text)

    def watch(self, page: Any) -> Any:
        page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        return page


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[Any]:
    """Keep each phase's report on the test, so a fixture's teardown knows whether the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def new_context(request: Any, browser: Any, console: Console) -> Iterator[Any]:
    """``new_context(locale=..., viewport=...)`` -> a page on its own context (own cookies);
    after the test, no console error or page error may have occurred but those ``console.allow``-ed.
    A test that already failed is not charged with the errors its failure caused (a live stream
    cut when its server stopped under a page left open)."""
    contexts = []

    def make(locale: str = "en-GB", viewport: dict[str, int] | None = None) -> Any:
        context = browser.new_context(locale=locale, viewport=viewport or VIEWPORT, extra_http_headers={"Accept-Language": locale})
        contexts.append(context)
        context.set_default_timeout(15_000)
        return console.watch(context.new_page())

    yield make
    for context in contexts:
        context.close()
    unexpected = [e for e in console.errors if not any(x in e for x in console.allowed)]
    if getattr(request.node, "report_call", None) is not None and request.node.report_call.failed:
        return
    assert not unexpected, "errors in the browser console:\n" + "\n".join(unexpected)
