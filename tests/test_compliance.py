"""The China compliance checklist of serving plans: when it appears, what each item carries, when it changes
the plan (data export when the fleet is abroad and the users are in mainland China), and that the data file
is validated."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import MARKET_SNAPSHOT
from fastapi.testclient import TestClient

from gpuplan.catalog import load_catalog
from gpuplan.errors import CatalogError, InputError
from gpuplan.plan import compliance
from gpuplan.plan.serving import ServeRequest, plan_serving
from gpuplan.web.app import create_app

OFFICIAL = ("www.gov.cn", "www.cac.gov.cn", "www.tc260.org.cn", "www.npc.gov.cn", "www.miit.gov.cn")


@pytest.fixture(scope="module")
def catalog():  # type: ignore[no-untyped-def]
    return load_catalog(market=MARKET_SNAPSHOT)  # plans whose pick depends on prices: the frozen snapshot's


def _plan(catalog, **options):  # type: ignore[no-untyped-def]
    return plan_serving(catalog, catalog.model("Qwen2.5-0.5B"), ServeRequest(2.0, **options))


def test_a_mainland_plan_carries_the_checklist_and_stays_in_mainland(catalog) -> None:  # type: ignore[no-untyped-def]
    p = _plan(catalog, market="cn", currency="CNY")
    assert p.fleet is not None and p.checklist is not None
    assert {g.market for g in p.fleet.groups} == {"cn"}
    assert p.checklist.abroad == ()  # nothing leaves the country: no item changes the plan
    assert not any(p.checklist.changes_plan(i) for i in p.checklist.items)
    d = p.as_dict()["compliance"]
    assert d["data_export_applies"] is False and "not legal advice" in d["disclaimer"]


def test_users_in_china_served_from_abroad_get_the_data_export_rules(catalog) -> None:  # type: ignore[no-untyped-def]
    p = _plan(catalog, market="global", users="cn")
    assert p.fleet is not None and p.checklist is not None
    abroad = {f"{g.provider} {g.region}" for g in p.fleet.groups}
    assert set(p.checklist.abroad) == abroad
    changed = {i.id for i in p.checklist.items if p.checklist.changes_plan(i)}
    assert changed == {"pipl", "data-export"}
    d = p.as_dict()
    assert d["request"]["users"] == "cn" and d["compliance"]["data_export_applies"] is True
    assert "--market cn" in d["compliance"]["data_export_note"]


def test_global_users_on_a_global_plan_get_no_checklist(catalog) -> None:  # type: ignore[no-untyped-def]
    p = _plan(catalog, market="global")
    assert p.checklist is None and p.as_dict()["compliance"] is None


def test_unknown_users_are_refused_with_the_field() -> None:
    with pytest.raises(InputError, match="--users"):
        ServeRequest(2.0, users="eu")


def test_the_issue_list_is_covered_with_sources_and_dates() -> None:
    items = compliance.items()
    assert {"genai-measures", "genai-filing", "algorithm-filing", "deep-synthesis", "tc260-003", "labelling",
            "icp-filing", "mlps", "pipl", "data-export"} <= {i.id for i in items}
    for i in items:
        url = urlparse(i.source)
        assert url.scheme in ("http", "https") and url.hostname in OFFICIAL, i.id
        issued, in_force, checked = (dt.date.fromisoformat(x) for x in (i.issued, i.in_force, i.date_checked))
        assert issued <= in_force <= checked, i.id
        assert i.name_zh and i.name_en and i.asks_zh and i.asks_en and i.authority_zh and i.authority_en, i.id


def _copy_with(tmp_path: Path, old: str, new: str) -> Path:
    path = tmp_path / "compliance_cn.csv"
    shutil.copyfile(compliance.DATA_FILE, path)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_a_date_in_force_before_its_issue_is_refused(tmp_path: Path) -> None:
    path = _copy_with(tmp_path, "2023-07-10,2023-08-15", "2023-07-10,2023-06-15")
    with pytest.raises(CatalogError, match="in_force"):
        compliance.items(path)


def test_an_item_without_a_source_is_refused(tmp_path: Path) -> None:
    path = _copy_with(tmp_path, "https://www.gov.cn/zhengce/zhengceku/202307/content_6891752.htm", "")
    with pytest.raises(CatalogError, match="source"):
        compliance.items(path)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], capture_output=True, text=True, timeout=300)


def test_cli_shows_the_checklist_in_both_languages_and_the_same_json() -> None:
    args = ("plan", "serve", "Qwen2.5-0.5B", "--rps", "2", "--market", "global", "--users", "cn")
    en, zh = _cli(*args), _cli("--lang", "zh", *args)
    assert en.returncode == zh.returncode == 0, en.stderr + zh.stderr
    text_en = " ".join(en.stdout.split())  # paragraphs wrap to the terminal's width
    text_zh = "".join(zh.stdout.split())
    assert "China compliance checklist" in text_en and "not legal advice" in text_en
    assert "data-export rules apply" in text_en and "www.cac.gov.cn/2022-07/07" in text_en
    assert "中国合规清单" in text_zh and "不构成法律意见" in text_zh
    assert "生成式人工智能服务管理暂行办法" in text_zh
    j_en, j_zh = _cli(*args, "--json"), _cli("--lang", "zh", *args, "--json")
    a, b = json.loads(j_en.stdout), json.loads(j_zh.stdout)
    for d in (a, b):
        d.pop("seconds")
        d["fleet"].pop("solve_seconds")
        for f in ("average_load_fleet", "single_type_fleet"):
            if d[f]:
                d[f].pop("solve_seconds")
    assert a == b and a["compliance"]["items"]


def test_api_answers_with_the_checklist_and_refuses_unknown_users() -> None:
    client = TestClient(create_app())
    r = client.post("/api/serve", json={"model": "Qwen2.5-0.5B", "rps": 2, "market": "cn"})
    assert r.status_code == 200, r.text
    assert r.json()["compliance"]["items"] and r.json()["compliance"]["data_export_applies"] is False
    assert client.post("/api/serve", json={"model": "Qwen2.5-0.5B", "rps": 2}).json()["compliance"] is None
    bad = client.post("/api/serve", json={"model": "Qwen2.5-0.5B", "rps": 2, "users": "eu"})
    assert bad.status_code in (400, 422) and "users" in bad.text
