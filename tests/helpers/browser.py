"""The console in a real browser: the service under gunicorn on loopback, headless Chromium driven by
selenium (Debian's chromium and chromium-driver; nothing is downloaded), a signed-in session, screenshots."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import free_port

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
LAUNCH_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking")


class ConsoleServer:
    """The service under gunicorn on 127.0.0.1, on the test run's database."""

    def __init__(self, log_path: Path, **env):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = open(log_path, "w")
        command = [sys.executable, "-m", "gunicorn", "-c", "python:shop.gunicorn_conf"]
        command += ["--bind", f"127.0.0.1:{self.port}", "--workers", "1", "app:app"]
        self.proc = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, **env}, stdout=self._log, stderr=subprocess.STDOUT
        )
        wait_until(lambda: http_ok(f"{self.url}/api/v1/health"), timeout=60)

    def close(self) -> None:
        stop(self.proc)
        self._log.close()


def artifacts_dir(request, tmp_path: Path) -> Path:
    """Where a test's screenshots go: $SHOP_TEST_ARTIFACTS/<test name>, else the test's tmp_path."""
    root = os.environ.get("SHOP_TEST_ARTIFACTS")
    if not root:
        return tmp_path
    folder = Path(root) / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def new_browser(tmp_path: Path, width: int = 1280, height: int = 900):
    """Headless Chromium through the system's chromedriver (selenium-manager never runs)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in LAUNCH_FLAGS:
        options.add_argument(flag)
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    return driver


class Console:
    """A browser on the console: open pages, sign in, wait for text, save screenshots."""

    def __init__(self, driver, server: ConsoleServer, shots: Path):
        self.driver, self.server, self.shots = driver, server, shots

    def open(self, path: str) -> None:
        self.driver.get(self.server.url + path)

    def sign_in(self, token: str) -> None:
        from selenium.webdriver.common.by import By

        self.open("/console/sign-in")
        self.driver.find_element(By.ID, "api_key").send_keys(token)
        self.driver.find_element(By.CSS_SELECTOR, "#api-key-form button[type=submit]").click()
        self.wait_for_heading("Overview")

    def sign_in_as(self, email: str, password: str) -> None:
        """A teammate's sign-in with email and password (issue 27)."""
        from selenium.webdriver.common.by import By

        self.open("/console/sign-in")
        self.driver.find_element(By.ID, "email").send_keys(email)
        self.driver.find_element(By.ID, "password").send_keys(password)
        self.driver.find_element(By.CSS_SELECTOR, "#teammate-form button[type=submit]").click()
        self.wait_for_heading("Overview")

    def heading(self) -> str:
        """The page's h1, or "" mid-navigation (no document yet, or the old one's h1 gone stale)."""
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.by import By

        try:
            return self.driver.find_element(By.TAG_NAME, "h1").text
        except WebDriverException:  # gone stale, or its node left the document
            return ""

    def wait_for_heading(self, text: str, timeout: float = 20) -> None:
        wait_until(lambda: self.heading() == text, timeout=timeout)

    def text(self, selector: str) -> str:
        """The element's text; found again if the page replaced it between the find and the read
        (a redirect landing, a refresh): a stale element is the page moving on, not a failure."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By

        for _ in range(20):
            try:
                return self.driver.find_element(By.CSS_SELECTOR, selector).text
            except StaleElementReferenceException:
                time.sleep(0.1)
        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def shows(self, fragment: str, selector: str = "main") -> bool:
        """Whether the element shows this text now (False mid-navigation, as `heading`)."""
        from selenium.common.exceptions import WebDriverException

        try:
            return fragment in self.text(selector)
        except WebDriverException:  # no such element yet, or its node left the document
            return False

    def wait_for_text(self, fragment: str, selector: str = "main", timeout: float = 20) -> None:
        wait_until(lambda: self.shows(fragment, selector), timeout=timeout)

    def click(self, selector: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.CSS_SELECTOR, selector).click()

    def screenshot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path


@pytest.fixture
def console_server(app, tmp_path):
    """The service under gunicorn on loopback (the console and the API), on this run's database."""
    server = ConsoleServer(tmp_path / "gunicorn.log")
    yield server
    server.close()


@pytest.fixture
def console(console_server, request, tmp_path):
    """A headless Chromium on the console (not yet signed in); skipped where Chromium is missing."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip(f"{CHROMIUM} and {CHROMEDRIVER} are needed (apt-get install chromium chromium-driver)")
    driver = new_browser(tmp_path)
    yield Console(driver, console_server, artifacts_dir(request, tmp_path))
    driver.quit()


@pytest.fixture
def signed_in(console):
    """A browser signed in to the console with a key token: `signed_in(token)` returns the Console."""

    def sign_in(token: str) -> Console:
        console.sign_in(token)
        return console

    return sign_in


def session_post(server_url: str, path: str, data: dict, cookies: dict) -> requests.Response:
    """A raw form post to the running console (what a forged cross-site form would send)."""
    return requests.post(server_url + path, data=data, cookies=cookies, allow_redirects=False, timeout=10)
