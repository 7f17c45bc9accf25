"""The page in a real browser: Debian's chromium driven by Playwright (never ``playwright install``).

Starts the app with uvicorn on a free localhost port, submits the default plan (ChatGLM2-6B, LoRA, 10k samples
of 1,088 tokens, China market), and checks what a user sees: the ranked table, the Pareto chart, the memory
bar of the pick, the 中文 toggle, an API error shown next to its field, the estimate tab, and the serving tab
(the form posting ``/api/serve``, the fleet view, errors at their fields), at phone and desktop sizes. The browser
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
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright  # noqa: E402

from gpuplan.web.app import create_app  # noqa: E402

TIMEOUT_MS = 20_000
# assertions wait as long as actions: a serving fleet is answered in ~0.4 s on an idle machine, several seconds
# on a loaded 2-core one, past expect()'s own 5 s default
expect.set_options(timeout=TIMEOUT_MS)


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
    pg.on("console", lambda msg: _refused(msg, errors))
    pg.goto(base_url + "/")
    expect(pg.locator("#meta-line")).not_to_be_empty()  # /api/meta, /api/models and /api/gpus answered
    yield pg
    context.close()
    assert not errors, f"JavaScript errors: {errors}"
    assert not outside, f"the page reached beyond the local server: {outside}"


def _refused(msg: ConsoleMessage, errors: list[Any]) -> None:
    """What the page's Content-Security-Policy refused (an inline style the page meant to apply, say)."""
    if msg.type == "error" and "Content Security Policy" in msg.text:
        errors.append(msg.text)


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


def test_an_estimate_that_does_not_fit_shows_its_speed_only_as_if_it_fit(page: Page) -> None:
    # Llama-3.1-70B in 16 bits on one 24 GB card cannot run: its speed is what it would reach with the memory it lacks
    page.click("#tab-button-estimate")
    page.select_option("#estimate-form select[name=task]", "infer")
    page.fill("#estimate-form input[name=model]", "Llama-3.1-70B")
    page.fill("#est-gpu", "RTX4090")
    page.click("#estimate-submit")
    expect(page.locator("#estimate-fit")).to_contain_text("does not fit")
    expect(page.locator("#estimate-speed")).to_contain_text("Speed if it fit: TTFT")


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


def _rgb(hex_colour: str) -> str:
    """``#4e79a7`` as the browser's computed style writes it: ``rgb(78, 121, 167)``."""
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


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
    pg.on("console", lambda msg: _refused(msg, errors))
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
    fills = pg.locator("#pick-breakdown svg rect.seg").evaluate_all(
        "(rects) => rects.map((r) => r.getAttribute('fill'))")
    swatches = pg.locator("#pick-breakdown .legend .swatch").evaluate_all(
        "(spans) => spans.map((s) => getComputedStyle(s).backgroundColor)")
    assert swatches[:len(fills)] == [_rgb(f) for f in fills]  # each legend entry has its part's colour


def test_estimate_page_fits_the_screen(sized: tuple[str, Page], tmp_path: Path) -> None:
    name, pg = sized
    pg.click("#tab-button-estimate")
    pg.click("#estimate-submit")
    expect(pg.locator("#estimate-memory tbody tr").first).to_be_visible()
    _check_layout(pg, name, tmp_path / f"estimate-{name}.png")


# ---------------------------------------------------------------- the serving tab: POST /api/serve and the fleet view

# Llama-3.1-70B at 10 req/s (20 at peak), p99 targets 3 s / 80 ms, spot allowed, users in mainland China: on the
# bundled catalog a mix of several GPU types, on-demand and spot, with the China checklist (its places abroad)
FLEET_FORM = {"#srv-model": "Llama-3.1-70B", "#srv-rps": "10", "#srv-peak-rps": "20", "#srv-ttft-p99": "3",
              "#srv-tpot-p99": "80"}


def _serve(pg: Page, fill: dict[str, str] | None = None, spot: bool = True, users: str = "cn") -> dict[str, Any]:
    """Fill the serving form, submit it, and return the JSON the page received (and rendered)."""
    pg.click("#tab-button-serve")
    for selector, value in (FLEET_FORM if fill is None else fill).items():
        pg.fill(selector, value)
    if spot:
        pg.check("#srv-spot")
    pg.select_option("#srv-users", users)
    with pg.expect_response("**/api/serve") as answer:
        pg.click("#serve-submit")
    expect(pg.locator("#serve-results")).to_be_visible()
    data: dict[str, Any] = answer.value.json()
    return data


def test_the_serving_form_posts_its_fields_to_the_fleet_planner(page: Page) -> None:
    page.click("#tab-button-serve")
    page.fill("#srv-ttft", "1")
    page.fill("#srv-tpot", "30")
    page.fill("#srv-availability", "99.5")
    page.select_option("#srv-tolerate", "region")
    page.check("#srv-marketplace")
    page.select_option("#srv-market", "global")
    page.fill("#srv-gpus", "H100, L40S")
    page.fill("#srv-providers", "RunPod")
    page.fill("#srv-prefix-hit", "0.3")
    page.select_option("#srv-engine", "sglang")
    page.fill("#srv-quant", "fp8")
    page.fill("#srv-budget", "50")
    page.fill("#srv-max-per-offer", "4")
    page.fill("#srv-adapters", "8")
    page.fill("#srv-adapter-rank", "32")
    with page.expect_request("**/api/serve") as sent:
        page.click("#serve-submit")
    body = sent.value.post_data_json
    assert body == {"model": "Qwen2.5-7B", "rps": 5, "peak_rps": 12, "ttft_s": 1, "ttft_p99_s": 2, "tpot_s": 0.03,
                    "tpot_p99_s": 0.05, "prompt": 1000, "output": 300, "availability": 99.5, "tolerate": "region",
                    "spot": False, "allow_marketplace": True, "market": "global", "users": "global",
                    "gpus": ["H100", "L40S"], "providers": ["RunPod"], "prefix_hit": 0.3, "engine": "sglang",
                    "quant": "fp8", "budget": 50, "max_per_offer": 4, "adapters": 8, "adapter_rank": 32,
                    "guard": "none", "guard_mode": "serial"}
    expect(page.locator("#serve-results")).to_be_visible()
    # the plan tab no longer plans one serving replica: fleets are planned here
    assert "serve" not in page.locator("#plan-form select[name=task] option").evaluate_all(
        "(options) => options.map((o) => o.value)")


def test_a_daily_profile_replaces_the_mean_rate(page: Page) -> None:
    hours = [2, 2, 1, 1, 1, 1, 2, 4, 8, 10, 12, 12, 11, 10, 10, 11, 12, 12, 10, 8, 6, 4, 3, 2]
    page.click("#tab-button-serve")
    page.fill("#srv-peak-rps", "")
    page.fill("#srv-profile", ", ".join(map(str, hours)))
    with page.expect_response("**/api/serve") as answer:
        page.click("#serve-submit")
    body = answer.value.request.post_data_json
    assert isinstance(body, dict) and body["profile"] == hours and "rps" not in body  # the API refuses both
    day = answer.value.json()["daily_profile"]
    expect(page.locator("#serve-figures")).to_contain_text(
        f"${day['autoscaled_per_day']:.2f} (peak fleet all day ${day['fixed_per_day']:.2f})")


def _fill_sizes(rows: Any, values: tuple[tuple[str, str, str], ...]) -> None:
    """Type (prompt, output, share or percentile) into the request-size rows, one tuple per row."""
    for i, row_values in enumerate(values):
        for name, value in zip(("prompt", "output", "share"), row_values, strict=True):
            rows.nth(i).locator(f"input[name=bucket_{name}]").fill(value)


def test_request_sizes_are_rows_sent_as_buckets(page: Page) -> None:
    page.click("#tab-button-serve")
    rows = page.locator("#srv-buckets .bucket-row")
    expect(rows.first.locator("input[name=bucket_share]")).to_be_hidden()  # one size: its share is 1
    page.click("#srv-add-bucket")
    page.click("#srv-add-bucket")
    expect(rows).to_have_count(3)
    rows.nth(2).locator("button.remove").click()
    expect(rows).to_have_count(2)
    _fill_sizes(rows, (("300", "100", "0.7"), ("4000", "500", "0.3")))
    with page.expect_request("**/api/serve") as sent:
        page.click("#serve-submit")
    body = sent.value.post_data_json
    assert isinstance(body, dict)
    assert body["buckets"] == [{"prompt": 300, "output": 100, "share": 0.7},
                               {"prompt": 4000, "output": 500, "share": 0.3}]
    assert "prompt" not in body and "output" not in body
    expect(page.locator("#serve-routing tbody tr").first).to_be_visible()
    routed = page.locator("#serve-routing tbody").inner_text()
    assert "300 + 100 tokens (70 %)" in routed and "4000 + 500 tokens (30 %)" in routed


def test_request_sizes_given_as_length_percentiles_are_sent_as_percentiles(page: Page) -> None:
    page.click("#tab-button-serve")
    page.select_option("#srv-size-mode", "percentile")
    rows = page.locator("#srv-buckets .bucket-row")
    expect(rows.first.locator("input[name=bucket_share]")).to_be_visible()  # a percentile even for one row
    expect(rows.first.locator(".bucket-share span")).to_have_text("Percentile (%)")
    page.click("#srv-add-bucket")
    _fill_sizes(rows, (("300", "100", "50"), ("4000", "500", "99")))  # the third box holds the percentile
    with page.expect_response("**/api/serve") as answer:
        page.click("#serve-submit")
    body = answer.value.request.post_data_json
    assert isinstance(body, dict)
    assert body["percentiles"] == [{"percentile": 50, "prompt": 300, "output": 100},
                                   {"percentile": 99, "prompt": 4000, "output": 500}]
    assert "buckets" not in body and "prompt" not in body
    sizes = [(b["prompt_len"], b["output_len"]) for b in answer.value.json()["request"]["buckets"]]
    assert sizes == [(300, 100), (4000, 500)]  # each interval between two percentiles is a bucket at its upper end
    expect(page.locator("#serve-routing tbody tr").first).to_be_visible()


# (what the form gets wrong, the field the error must land on, words of the API's message)
FIELD_ERRORS = [
    ({"#srv-availability": "100"}, "availability", "availability: 100 %"),
    ({"#srv-ttft": "3", "#srv-ttft-p99": "1"}, "ttft_p99_s", "below the p50 one"),
    ({"#srv-rps": "8", "#srv-peak-rps": "4"}, "peak_rps", "below the mean"),
    ({"#srv-regions": "mars"}, "regions", "no offer is in region 'mars'"),
    ({"#srv-rps": "0"}, "rps", "greater than 0"),
]


@pytest.mark.parametrize(("fill", "field", "words"), FIELD_ERRORS)
def test_an_api_error_lands_on_the_serving_field_it_names(page: Page, fill: dict[str, str], field: str,
                                                         words: str) -> None:
    page.click("#tab-button-serve")
    for selector, value in fill.items():
        page.fill(selector, value)
    page.click("#serve-submit")
    box = page.locator(f"#serve-form .field[data-field~={field}]")
    expect(box.locator(".err")).to_contain_text(words)
    assert "To fix" in box.locator(".err").inner_text()  # the API's fix is shown with the message
    expect(page.locator("#serve-form .field.invalid")).to_have_count(1)  # on that field and no other
    expect(page.locator("#serve-results")).to_be_hidden()


def test_bucket_shares_that_do_not_add_up_are_shown_at_the_request_sizes(page: Page) -> None:
    page.click("#tab-button-serve")
    page.click("#srv-add-bucket")
    second = page.locator("#srv-buckets .bucket-row").nth(1)
    page.locator("#srv-buckets .bucket-row").first.locator("input[name=bucket_share]").fill("0.5")
    second.locator("input[name=bucket_prompt]").fill("4000")
    second.locator("input[name=bucket_output]").fill("500")
    second.locator("input[name=bucket_share]").fill("0.3")
    page.click("#serve-submit")
    expect(page.locator("#serve-form .field.buckets .err")).to_contain_text("add up to 0.8")
    expect(page.locator("#serve-form .field.invalid")).to_have_count(1)


def test_the_fleet_view_renders_what_the_api_answered(sized: tuple[str, Page], tmp_path: Path) -> None:
    name, pg = sized
    data = _serve(pg)
    fleet = data["fleet"]
    assert len(fleet["gpu_types"]) >= 2, "the scenario should plan a mix of GPU types; pick another if it does not"
    # the groups table: one row per group of the answer, in its order, with its replicas and $/h
    rows = pg.locator("#serve-groups tbody tr")
    expect(rows).to_have_count(len(fleet["groups"]))
    headers = pg.locator("#serve-groups thead th").all_inner_texts()
    for i, group in enumerate(fleet["groups"]):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[0] == group["config"] and group["provider"] in cells[1]
        assert cells[headers.index("Replicas")] == str(group["replicas"])
        assert cells[headers.index("Pricing")] == group["pricing"]
        assert cells[headers.index("Cost per hour")] == f"${group['cost_per_hour']:.2f}/h"
        assert " / " in cells[headers.index("TTFT / TPOT p99")] and "ms" in cells[headers.index("TTFT / TPOT p99")]
    # the chart: a bar per GPU type × zone × pricing, labelled with its replicas; spot bars hatched
    places = {(g["gpu"], g["provider"], g["zone"], g["spot"]) for g in fleet["groups"]}
    bars = pg.locator("#serve-chart svg rect.bar")
    expect(bars).to_have_count(len(places))
    values = [int(v) for v in pg.locator("#serve-chart svg text.bar-value").all_text_contents()]
    assert sum(values) == sum(g["replicas"] for g in fleet["groups"])
    assert pg.locator("#serve-chart svg rect.bar.spot").count() == len({p for p in places if p[3]})
    colours = {bars.nth(i).get_attribute("data-gpu"): bars.nth(i).get_attribute("data-colour")
               for i in range(bars.count())}
    assert len(set(colours.values())) == len(fleet["gpu_types"])  # one colour per GPU type, all different
    legend = pg.locator("#serve-chart .legend").inner_text()
    assert all(gpu in legend for gpu in fleet["gpu_types"]) and "spot: hatched" in legend and "on-demand" in legend
    # the headline figures
    figures = pg.locator("#serve-figures").inner_text()
    assert f"${data['cost_per_hour_peak']:.2f}/h" in figures and f"${data['cost_per_hour_average']:.2f}/h" in figures
    assert f"{data['expected_availability'] * 100:.4f} % (target 99.9 %)" in figures
    assert f"{data['violation_minutes_per_month']:.1f} min" in figures and "Recovery" in figures
    assert "Per 1M input tokens" in figures and "Per 1M output tokens" in figures
    why = pg.locator("#serve-why").inner_text()
    assert ", ".join(data["single_type_fleet"]["gpu_types"]) in why and "the mix saves" in why
    assert pg.locator("#serve-notes li").count() == len(data["notes"])
    assert pg.locator("#serve-assumptions tbody tr").count() == len(data["assumptions"])
    # the China checklist (users in mainland China), with the line that it is not legal advice
    checklist = data["compliance"]
    expect(pg.locator("#serve-checklist tbody tr")).to_have_count(len(checklist["items"]))
    assert "not legal advice" in pg.locator("#serve-disclaimer").inner_text()
    expect(pg.locator("#serve-guard")).to_be_hidden()  # the answer has no guard model
    _check_layout(pg, name, tmp_path / f"fleet-{name}.png")


def test_the_fleet_view_in_chinese(page: Page, tmp_path: Path) -> None:
    data = _serve(page)
    page.click("#lang-zh")
    expect(page.locator("#tab-button-serve")).to_have_text("在线服务")
    expect(page.locator("#serve-groups thead th").first).to_have_text("配置")  # from gpuplan.i18n via /api/meta
    first = data["compliance"]["items"][0]
    expect(page.locator("#serve-checklist tbody tr").first).to_contain_text(first["name_zh"])
    expect(page.locator("#serve-disclaimer")).to_have_text(data["compliance"]["disclaimer_zh"])
    assert "竞价" in page.locator("#serve-chart .legend").inner_text()
    page.screenshot(path=str(tmp_path / "fleet-zh.png"), full_page=True)
    page.click("#lang-en")
    expect(page.locator("#serve-disclaimer")).to_have_text(data["compliance"]["disclaimer"])


def test_no_fleet_says_why_and_hides_the_fleet(page: Page) -> None:
    data = _serve(page, {"#srv-budget": "0.01"}, spot=False, users="global")
    assert data["fleet"] is None
    expect(page.locator("#serve-nothing")).to_contain_text(data["nothing_fits"])
    expect(page.locator("#serve-fleet")).to_be_hidden()
    expect(page.locator("#serve-compliance")).to_be_hidden()


def test_a_guard_asked_for_in_the_form_is_sent_and_shown(page: Page) -> None:
    page.click("#tab-button-serve")
    page.select_option("#srv-guard", "Llama-Guard-3-1B")
    page.select_option("#srv-guard-mode", "parallel")
    with page.expect_response("**/api/serve") as answered:
        page.click("#serve-submit")
    response = answered.value
    body = response.request.post_data_json
    assert isinstance(body, dict) and body["guard"] == "Llama-Guard-3-1B" and body["guard_mode"] == "parallel"
    guard = response.json()["guard"]
    box = page.locator("#serve-guard")
    expect(box).to_be_visible()
    text = box.inner_text()
    places = {"separate": "on its own GPUs", "colocated": "beside the main model", "mig": "on MIG slices"}
    assert "Llama-Guard-3-1B" in text and places[guard["placement"]] in text and "parallel" in text
    if guard["placement"] == "colocated":  # it runs on the main fleet's GPUs, which the fleet's cost already has
        assert "in the main fleet's cost" in text
    else:
        assert f"${guard['cost_per_hour_peak']:.2f}/h" in text
    assert guard["reason"].split(" ")[0] in text  # why this placement, from the plan
