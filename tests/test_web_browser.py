"""The page in a real browser: Debian's chromium driven by Playwright (never ``playwright install``).

Starts the app with uvicorn on a free localhost port, submits the default plan (ChatGLM2-6B, LoRA, 10k samples
of 1,088 tokens, China market), and checks what a user sees: the ranked table, the Pareto chart, the memory
bar of the pick, the 中文 toggle, an API error shown next to its field, and the estimate tab. The browser
reaches nothing but the local server. Skipped when chromium or the Python packages are missing.
"""

from __future__ import annotations

import importlib.util
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]

_missing = [name for name in ("playwright", "fastapi", "uvicorn") if importlib.util.find_spec(name) is None]
if _missing:
    pytest.skip(f"browser tests need the Python packages {', '.join(_missing)} "
                "(pip install playwright fastapi uvicorn)", allow_module_level=True)
if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
                allow_module_level=True)

import uvicorn  # noqa: E402
from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

from gpuplan.web.app import create_app  # noqa: E402

TIMEOUT_MS = 20_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser, base_url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    outside: list[str] = []
    pg.on("request", lambda r: None if r.url.startswith(base_url) else outside.append(r.url))
    errors: list[Any] = []
    pg.on("pageerror", lambda exc: errors.append(exc))
    pg.goto(base_url + "/")
    expect(pg.locator("#meta-line")).not_to_be_empty()  # /api/meta, /api/models and /api/gpus answered
    yield pg
    context.close()
    assert not errors, f"JavaScript errors: {errors}"
    assert not outside, f"the page reached beyond the local server: {outside}"


def _plan(page: Page) -> None:
    page.click("#plan-submit")
    expect(page.locator("#plan-table tbody tr").first).to_be_visible()


def test_default_plan_shows_table_pareto_and_breakdown(page: Page, tmp_path: Path) -> None:
    _plan(page)
    rows = page.locator("#plan-table tbody tr")
    assert 1 <= rows.count() <= 10
    first = rows.first.locator("td")
    assert first.nth(0).inner_text() == "1"
    assert "¥" in first.nth(5).inner_text()  # market cn: costs in CNY (after config, settings, provider, time)
    assert page.locator("#plan-explanation").inner_text().strip()
    assert page.locator("#pareto-chart svg circle").count() >= 2
    assert page.locator("#pareto-chart svg circle.front").count() >= 1
    assert page.locator("#pick-breakdown svg rect.seg").count() >= 2
    shot = tmp_path / "plan.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def test_chinese_toggle_changes_labels_and_rerenders(page: Page, tmp_path: Path) -> None:
    _plan(page)
    tab = page.locator("#tab-button-plan")
    assert tab.inner_text() == "Plan"
    page.click("#lang-zh")
    expect(tab).to_have_text("方案")
    expect(page.locator("label[for=plan-model]")).to_have_text("模型")
    expect(page.locator("#plan-table thead th").nth(1)).to_have_text("配置")  # from gpuplan.i18n via /api/meta
    page.screenshot(path=str(tmp_path / "plan-zh.png"), full_page=True)
    page.click("#lang-en")
    expect(tab).to_have_text("Plan")


def test_api_error_is_shown_next_to_its_field(page: Page) -> None:
    page.fill("#plan-samples", "-5")
    page.click("#plan-submit")
    box = page.locator("#plan-form .field[data-field=samples]")
    expect(box).to_have_class("field invalid")
    message = box.locator(".err").inner_text()
    assert message.startswith("samples: ") and "10k" in message  # the message and the fix
    page.fill("#plan-samples", "10k")
    page.fill("#plan-gpus", "h10")
    page.click("#plan-submit")
    expect(page.locator("#plan-form .field[data-field=gpus] .err")).to_contain_text("Did you mean 'H100'")
    expect(page.locator("#plan-form .field[data-field=samples] .err")).to_have_count(0)


def test_estimate_tab_shows_breakdown_band_and_assumptions(page: Page, tmp_path: Path) -> None:
    page.click("#tab-button-estimate")
    page.click("#estimate-submit")
    expect(page.locator("#estimate-memory tbody tr").first).to_be_visible()
    assert page.locator("#estimate-breakdown svg rect.seg").count() >= 2
    assert "Band" in page.locator("#estimate-memory").inner_text()
    assert page.locator("#estimate-assumptions tbody tr").count() >= 1
    page.screenshot(path=str(tmp_path / "estimate.png"), full_page=True)


def test_the_pick_opens_in_the_estimate_tab_with_the_same_memory(page: Page) -> None:
    _plan(page)
    memory = page.locator("#plan-table tbody tr").first.locator("td").nth(6).inner_text()  # "22.7 GiB / 24.0 GiB"
    page.click("#pick-estimate")
    expect(page.locator("#tab-estimate")).to_be_visible()
    expect(page.locator("#estimate-fit")).to_contain_text(memory)
    assert page.locator("#estimate-fit").inner_text().startswith("fits")


def test_a_pretraining_pick_opens_with_its_framework(page: Page) -> None:
    # pretraining plans run on Megatron-LM-class stacks: the estimate tab must estimate the same stack
    page.select_option("#plan-form select[name=task]", "pretrain")
    page.fill("#plan-form input[name=model]", "Llama-3.2-1B")
    page.fill("#plan-form input[name=tokens]", "10B")
    page.click("#plan-submit")
    expect(page.locator("#plan-table tbody tr").first).to_be_visible(timeout=30_000)
    memory = page.locator("#plan-table tbody tr").first.locator("td").nth(6).inner_text()
    page.click("#pick-estimate")
    expect(page.locator("#estimate-fit")).to_contain_text(memory)
    assert page.locator("#estimate-form select[name=framework]").input_value() == "megatron"


# ---------------------------------------------------------------- phone and desktop layouts (issue 14, item 7)

SIZES = {"phone": (390, 844), "desktop": (1280, 1000)}

# every element's right edge, and the rendered size of each chart's tick and point labels
LAYOUT_JS = """() => {
  const width = window.innerWidth;
  const wide = [];
  for (const node of document.querySelectorAll("body *")) {
    const r = node.getBoundingClientRect();
    const name = `${node.tagName}#${node.id}.${node.className?.baseVal ?? node.className}`;
    if (r.width > 0 && r.right > width + 1) wide.push(name);
  }
  const sizes = [...document.querySelectorAll("svg text.tick, svg text.pt-label, svg text.label")].map((t) =>
    parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a);
  return { width, scroll: document.documentElement.scrollWidth, wide: wide.slice(0, 5), sizes };
}"""


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]  # PNG: signature, IHDR length and type, then width and height
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


@pytest.fixture(params=list(SIZES))
def sized(request: pytest.FixtureRequest, browser: Browser, base_url: str) -> Iterator[tuple[str, Page]]:
    width, height = SIZES[request.param]
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    errors: list[Any] = []
    pg.on("pageerror", lambda exc: errors.append(exc))
    pg.goto(base_url + "/")
    expect(pg.locator("#meta-line")).not_to_be_empty()
    yield request.param, pg
    context.close()
    assert not errors, f"JavaScript errors: {errors}"


def _check_layout(pg: Page, name: str, shot: Path) -> None:
    layout = pg.evaluate(LAYOUT_JS)
    assert layout["scroll"] <= layout["width"], layout  # no sideways scrolling
    assert not layout["wide"], layout  # no element sticks out of the screen
    assert layout["sizes"] and min(layout["sizes"]) >= 10, layout  # chart text readable, at phone width too
    pg.screenshot(path=str(shot), full_page=True)
    assert _png_size(shot)[0] == SIZES[name][0]  # the whole page fits the screen's width


def test_plan_page_fits_the_screen(sized: tuple[str, Page], tmp_path: Path) -> None:
    name, pg = sized
    _plan(pg)
    _check_layout(pg, name, tmp_path / f"plan-{name}.png")
    labels = pg.locator("#pareto-chart svg text.pt-label")
    assert labels.count() >= 1 and "×" in (labels.first.text_content() or "")  # front points named by their config
    legend = pg.locator("#pick-breakdown .legend").inner_text()
    assert "_" not in legend and "weights" in legend  # parts in words, not JSON keys


def test_estimate_page_fits_the_screen(sized: tuple[str, Page], tmp_path: Path) -> None:
    name, pg = sized
    pg.click("#tab-button-estimate")
    pg.click("#estimate-submit")
    expect(pg.locator("#estimate-memory tbody tr").first).to_be_visible()
    _check_layout(pg, name, tmp_path / f"estimate-{name}.png")


def test_serving_form_and_results(sized: tuple[str, Page], tmp_path: Path) -> None:
    name, pg = sized
    pg.select_option("#plan-form select[name=task]", "serve")
    pg.fill("#plan-form input[name=model]", "Qwen2.5-7B")
    for field in ("ttft_s", "tpot_s", "quant", "engine", "providers", "max_gpus", "budget"):
        expect(pg.locator(f"#plan-form .field[data-field={field}]")).to_be_visible()
    expect(pg.locator("#plan-form .field[data-field=deadline_s]")).to_be_hidden()  # serving runs continuously
    pg.fill("#plan-ttft", "2")
    pg.fill("#plan-tpot", "60")
    pg.select_option("#plan-market", "global")
    _plan(pg)
    headers = pg.locator("#plan-table thead th").all_inner_texts()
    assert "Per 1M output tokens" in headers and "TTFT / TPOT" in headers and "Time" not in headers
    first = pg.locator("#plan-table tbody tr").first.locator("td")
    cells = first.all_inner_texts()
    assert not any("per hour" in c for c in cells)
    assert "$" in cells[headers.index("Per 1M output tokens")] and "ms" in cells[headers.index("TTFT / TPOT")]
    _check_layout(pg, name, tmp_path / f"serve-{name}.png")
