"""``gpuplan refresh``: each adapter against a recorded response in its provider's documented format
(tests/fixtures/refresh/README.md says what each is based on), provider isolation, retries, bad answers, the
store, the overlay on the catalog, ``history`` and EUR. No test touches the network."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from clirun import run_cli

from gpuplan.catalog import load_catalog
from gpuplan.errors import UnknownNameError
from gpuplan.market import store
from gpuplan.market.china import rpc_signed
from gpuplan.market.refresh import PROVIDERS, Outcome, refresh

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "refresh"
sys.path.insert(0, str(FIXTURES))
import serve  # noqa: E402  (the recorded responses, served through httpx.MockTransport)

BASE = load_catalog(refreshed=False)


def run(path: Path, *keys: str, handler: Callable[[httpx.Request], httpx.Response] = serve.answer,
        regions: tuple[str, ...] = (), env: dict[str, str] | None = None,
        sleeps: list[float] | None = None) -> dict[str, Outcome]:
    waits = sleeps if sleeps is not None else []
    out = refresh(BASE, keys, regions, client=serve.client(handler), env=serve.ENV if env is None else env,
                  path=path, sleep=waits.append)
    return {o.key: o for o in out}


def rows_of(path: Path, provider: str) -> dict[tuple[str, str, str], float]:
    return {(r.instance_type, r.region, r.tier): r.price_per_hour for r in store.latest(path).rows
            if r.provider == provider}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "prices.sqlite"


# ---------------------------------------------------------------- each adapter reads its documented format


def test_aws_keeps_linux_shared_on_demand_rows_and_reports_unknown_instance_types(db: Path) -> None:
    got = run(db, "aws")["aws"]
    # Windows, the 1-year reservation, the unused-reservation row and the CPU-only m5 are left out
    assert rows_of(db, "AWS") == {("p4d.24xlarge", "us-east-1", "on-demand"): 21.9576,
                                  ("p4de.24xlarge", "us-east-1", "on-demand"): 27.44705}
    assert got.status == "stored" and list(got.unmapped) == ["zz9.48xlarge"]  # not in the catalog: not guessed


def test_azure_follows_next_page_link_and_splits_spot_from_on_demand(db: Path) -> None:
    got = run(db, "azure")["azure"]
    assert rows_of(db, "Azure") == {("Standard_NC24ads_A100_v4", "eastus", "on-demand"): 3.673,
                                    ("Standard_NC24ads_A100_v4", "eastus", "spot"): 0.444433}
    assert list(got.unmapped) == ["Standard_ND96zz_v9"]  # on page 2: the second page was read


def test_gcp_gpu_prices_are_units_plus_nanos_per_region_and_gpu_only(db: Path) -> None:
    run(db, "gcp")
    rows = [r for r in store.latest(db).rows if r.provider == "GCP"]
    # units "2" + nanos 933908000 = 2.933908; the commitment SKU and the N1 core SKU are not GPU prices
    assert sorted((r.region, r.tier, r.price_per_hour) for r in rows) == [
        ("us-central1", "on-demand", 2.933908), ("us-central1", "spot", 1.17), ("us-east4", "on-demand", 2.933908)]
    assert {r.unit for r in rows} == {"gpu-only"} and {r.gpu for r in rows} == {"A100"}


def test_gpu_clouds_map_their_own_gpu_names_through_the_alias_table(db: Path) -> None:
    got = run(db, "runpod", "vastai", "lambda")
    assert rows_of(db, "RunPod")[("1x NVIDIA H100 80GB HBM3 SECURE", "(any)", "spot")] == 1.75
    assert {r.gpu for r in store.latest(db).rows if r.provider == "RunPod"} == {"H100", "A100-80GB-PCIe"}
    # Vast.ai: the cheaper of the two 1x RTX 4090 listings
    assert rows_of(db, "Vast.ai") == {("vast-rtx4090-1x", "Texas, US", "marketplace"): 0.351,
                                      ("vast-h100-8x", "Quebec, CA", "marketplace"): 17.92}
    # Lambda: 329 cents, one row per region with capacity; the CPU type is no GPU offer
    assert rows_of(db, "Lambda") == {("gpu_1x_h100_sxm5", "us-east-1", "on-demand"): 3.29,
                                     ("gpu_1x_h100_sxm5", "us-west-1", "on-demand"): 3.29}
    assert [list(got[k].unmapped) for k in ("runpod", "vastai", "lambda")] == [
        ["NVIDIA Quantum Z9"], ["Quantum Z9"], ["gpu_8x_z9"]]


def test_chinese_clouds_sell_in_cny_and_skip_what_is_sold_out(db: Path) -> None:
    got = run(db, "tencent", "aliyun", regions=("ap-beijing", "cn-shanghai"))
    # GT4.8XLARGE192 is SOLD_OUT, S5.MEDIUM4 has no GPU
    assert rows_of(db, "Tencent Cloud") == {("GT4.4XLARGE96", "ap-beijing", "on-demand"): 28.64}
    assert rows_of(db, "Alibaba Cloud") == {("ecs.gn7e-c16g1.4xlarge", "cn-shanghai", "on-demand"): 34.74}
    rows = store.latest(db).rows
    assert {r.currency for r in rows} == {"CNY"} and {r.market for r in rows} == {"cn"}
    assert "ZZ9.48XLARGE" in got["tencent"].unmapped
    # a type the catalog lists that the region does not sell is 'not offered', not an unmapped SKU
    assert got["aliyun"].not_offered["ecs.gn7-c12g1.3xlarge in cn-shanghai"] == "InvalidInstanceType.NotFound"
    assert "ecs.gn7-c12g1.3xlarge" not in got["aliyun"].unmapped


def test_ecb_rates_become_dated_fx_rows(db: Path) -> None:
    assert run(db, "ecb")["ecb"].n_fx == 2
    assert sorted((f.date, f.base, f.quote, f.rate) for f in store.latest(db).fx) == [
        (dt.date(2026, 11, 30), "EUR", "CNY", 8.2056), (dt.date(2026, 11, 30), "EUR", "USD", 1.1593)]


def test_alibaba_signature_matches_the_worked_example_of_its_documentation() -> None:
    # Alibaba Cloud's RPC signature page works DescribeRegions through with AccessKeyId 'testid', secret
    # 'testsecret', this nonce and timestamp, and gets OLeaidS1JvxuMvnyHOwuJ+uX5qY=
    params = {"Action": "DescribeRegions", "Format": "XML", "Version": "2014-05-26"}
    signed = rpc_signed(params, "testid", "testsecret", nonce="3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
                        timestamp="2016-02-23T12:46:24Z")
    assert signed["Signature"] == "OLeaidS1JvxuMvnyHOwuJ+uX5qY="


def test_tencent_signature_matches_the_worked_example_of_its_documentation() -> None:
    # Tencent Cloud's "Signature v3" page (https://www.tencentcloud.com/document/product/267/37447, the
    # TC3-HMAC-SHA256 section) works a CVM DescribeInstances call in ap-guangzhou through with SecretId
    # AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE, SecretKey Gu5t9xGARNpq86cd98joQYCN3EXAMPLE, timestamp 1551113065
    # (2019-02-25 UTC) and this body; it gives the body hash 35e9c5b0..., the hashed canonical request
    # 5ffe6a04... and the signature below, with SignedHeaders content-type;host
    import hashlib

    from gpuplan.market.china import tc3_headers

    body = '{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}'
    assert hashlib.sha256(body.encode()).hexdigest() == (
        "35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064")  # the example's inputs, as printed
    headers = tc3_headers("AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE", "Gu5t9xGARNpq86cd98joQYCN3EXAMPLE",
                          "DescribeInstances", "ap-guangzhou", body, 1551113065)
    assert headers["Authorization"] == (
        "TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE/2019-02-25/cvm/tc3_request, "
        "SignedHeaders=content-type;host, Signature=72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168")
    assert {k: headers[k] for k in ("Content-Type", "Host", "X-TC-Action", "X-TC-Version", "X-TC-Region",
                                    "X-TC-Timestamp")} == {
        "Content-Type": "application/json; charset=utf-8", "Host": "cvm.tencentcloudapi.com",
        "X-TC-Action": "DescribeInstances", "X-TC-Version": "2017-03-12", "X-TC-Region": "ap-guangzhou",
        "X-TC-Timestamp": "1551113065"}

# ---------------------------------------------------------------- isolation, retries and bad answers


def failing(host: str, response: Callable[[httpx.Request], httpx.Response]) -> Callable[..., httpx.Response]:
    return lambda request: response(request) if request.url.host == host else serve.answer(request)


def test_a_failing_provider_keeps_its_earlier_rows_and_the_others_are_stored(db: Path) -> None:
    run(db, "aws", "azure")
    before = rows_of(db, "AWS")
    sleeps: list[float] = []
    got = run(db, "aws", "azure", sleeps=sleeps,
              handler=failing("pricing.us-east-1.amazonaws.com", lambda r: httpx.Response(503, text="busy")))
    assert got["aws"].status == "failed" and "HTTP 503" in got["aws"].message
    assert sleeps == [1.0, 2.0, 4.0]  # three retries with exponential backoff, then the failure
    assert got["azure"].status == "stored" and rows_of(db, "AWS") == before
    assert [b.provider for b in store.latest(db).batches] == ["AWS", "Azure"] and not store.check(db)


def test_rate_limit_waits_as_told_then_succeeds(db: Path) -> None:
    answers = iter([httpx.Response(429, headers={"Retry-After": "7"}), None])

    def limited(request: httpx.Request) -> httpx.Response:
        return next(answers) or serve.answer(request)

    sleeps: list[float] = []
    assert run(db, "lambda", handler=failing("cloud.lambda.ai", limited), sleeps=sleeps)["lambda"].status == "stored"
    assert sleeps == [7.0]


def test_rate_limit_that_persists_names_the_provider_and_what_to_do(db: Path) -> None:
    got = run(db, "lambda", handler=failing("cloud.lambda.ai", lambda r: httpx.Response(429)))["lambda"]
    assert got.message.startswith("Lambda: rate limited") and "wait" in got.fix


def test_timeout_is_a_per_provider_message(db: Path) -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    got = run(db, "vastai", "ecb", handler=failing("console.vast.ai", slow))
    assert got["vastai"].status == "failed" and "did not answer in time (4 tries)" in got["vastai"].message
    assert got["ecb"].status == "stored"


@pytest.mark.parametrize(("key", "host", "body", "says"), [
    ("azure", "prices.azure.com", b'{"value": []}', "'Items' is NoneType"),
    ("aws", "pricing.us-east-1.amazonaws.com", b"a,b\n" * 6, "no column TermType"),
    ("runpod", "api.runpod.io", b'{"errors": [{"message": "Cannot query field"}]}', "GraphQL errors"),
    ("lambda", "cloud.lambda.ai", b"<html>maintenance</html>", "not JSON"),
    ("ecb", "www.ecb.europa.eu", b"<Envelope/>", "no <Cube time"),
    ("vastai", "console.vast.ai", b'{"offers": [{"gpu_name": "RTX 4090", "num_gpus": "one"}]}', "'num_gpus' is str"),
])
def test_an_answer_that_is_not_what_the_provider_documents_is_refused(db: Path, key: str, host: str, body: bytes,
                                                                       says: str) -> None:
    got = run(db, key, handler=failing(host, lambda r: httpx.Response(200, content=body)))[key]
    assert got.status == "failed" and "not what the provider documents" in got.message and says in got.message
    assert not store.latest(db).batches  # nothing half-parsed was stored


def test_missing_keys_are_named_and_skip_only_when_not_asked_for(db: Path) -> None:
    everything = run(db, env={})
    assert {k for k, o in everything.items() if o.status == "skipped"} == {"gcp", "runpod", "lambda", "tencent",
                                                                          "aliyun"}
    assert {k for k, o in everything.items() if o.status == "stored"} == {"aws", "azure", "vastai", "ecb"}
    named = run(db, "gcp", env={})["gcp"]
    assert named.status == "failed" and "GPUPLAN_GCP_API_KEY is not set" in named.message


def test_unknown_provider_is_an_input_error_with_a_suggestion(db: Path) -> None:
    with pytest.raises(UnknownNameError) as err:
        run(db, "azur")
    assert "'azure'" in str(err.value)


def test_every_source_and_its_key_is_named_in_the_help() -> None:
    from gpuplan.cli import _REFRESH_HELP

    for p in PROVIDERS:
        assert p.key in _REFRESH_HELP
        for variable in p.key_env.split(" + "):
            assert variable in _REFRESH_HELP


# ---------------------------------------------------------------- the store and the overlay


def test_corrupt_store_is_named_with_the_fix_and_bundled_prices_stay_in_use(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    (tmp_path / "prices.sqlite").write_bytes(b"this is not a database" * 100)
    cat = load_catalog()
    assert str(tmp_path / "prices.sqlite") in cat.store_problem and "move the file aside" in cat.store_problem
    assert cat.offers == BASE.offers
    with pytest.raises(store.StoreError, match="move the file aside"):
        store.history("H100", path=tmp_path / "prices.sqlite")


@pytest.mark.parametrize("made", ["empty file", "journal mode only"])
def test_a_store_whose_first_refresh_was_killed_reads_as_no_store(tmp_path: Path, monkeypatch, made: str) -> None:
    # a first refresh killed after the file was made but before its schema committed leaves a file with no
    # tables: nothing was stored, so there are no refreshed prices, and nothing is "corrupt"
    import sqlite3

    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    path = tmp_path / "prices.sqlite"
    path.touch()
    if made == "journal mode only":
        with sqlite3.connect(path) as con:
            con.execute("PRAGMA journal_mode=WAL")
    cat = load_catalog()
    assert cat.store_problem == "" and cat.offers == BASE.offers
    assert store.latest(path).rows == () and store.history("H100", path=path) == [] and store.check(path) == []
    run(path, "aws")  # the next refresh makes the schema and stores its batch
    assert store.latest(path).rows


def test_an_sqlite_file_of_something_else_is_not_read_as_a_store(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "prices.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(store.StoreError, match="no price tables"):
        store.latest(path)


def test_refreshed_rows_replace_bundled_ones_and_are_said_to(tmp_path: Path, monkeypatch) -> None:
    from gpuplan.market.overlay import prices_note

    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    run(tmp_path / "prices.sqlite", "aws", "gcp", "ecb")
    cat = load_catalog()
    by_key = {o.key: o for o in cat.offers}
    p4d = by_key[("AWS", "p4d.24xlarge", "us-east-1", "on-demand")]
    assert p4d.price_per_hour == 21.9576 and "gpuplan refresh" in p4d.source and p4d.as_of == dt.date.today()
    assert p4d.billing_granularity_s == 1  # the bundled row's terms are kept
    assert len(cat.offers) == len(BASE.offers)  # both AWS rows replace bundled rows; GPU-only GCP prices add none
    assert not [o for o in cat.offers if "(GPU only)" in o.instance_type]
    assert cat.fx_rate("EUR", "USD").rate == 1.1593 and cat.fx_rate("EUR", "USD").date == dt.date(2026, 11, 30)
    note = prices_note(cat)
    assert note.startswith("prices: bundled offers as read up to 20")
    assert f"refreshed AWS {dt.date.today().isoformat()}" in note and note.endswith("; FX rates of 2026-11-30")
    assert "ECB" not in note  # FX rates are no refreshed prices


def test_history_shows_the_trend_of_each_offer(tmp_path: Path, monkeypatch, capsys) -> None:
    from gpuplan.cli import main

    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    db = tmp_path / "prices.sqlite"
    run(db, "aws")
    cheaper = (FIXTURES / "aws_index_us-east-1.csv").read_text().replace('"21.9576000000"', '"19.7618400000"')
    run(db, "aws", handler=failing("pricing.us-east-1.amazonaws.com", lambda r: httpx.Response(200, text=cheaper)))
    main(["history", "--gpu", "a100-40gb", "--json"])
    (series,) = json.loads(capsys.readouterr().out)
    # 21.9576 -> 19.76184 is -10.0 %
    assert (series["instance_type"], series["n_points"], series["first_price_per_hour"],
            series["last_price_per_hour"]) == ("p4d.24xlarge", 2, 21.9576, 19.76184)
    assert series["change_fraction"] == pytest.approx(-0.10)


def test_history_refuses_an_unknown_tier(capsys) -> None:
    from gpuplan.cli import main

    with pytest.raises(SystemExit) as end:
        main(["history", "--gpu", "H100", "--tier", "weekly"])
    assert end.value.code == 2 and "--tier" in capsys.readouterr().err


def test_refresh_command_exits_4_when_a_source_fails(tmp_path: Path, monkeypatch, capsys) -> None:
    from gpuplan import cli
    from gpuplan.market import refresh as refresh_module

    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LAMBDA_API_KEY", raising=False)
    monkeypatch.delenv("GPUPLAN_OFFLINE")  # the client below is the recorded responses, not the network
    real = httpx.Client
    monkeypatch.setattr(refresh_module.httpx, "Client", lambda **kw: real(transport=httpx.MockTransport(serve.answer)))
    with pytest.raises(SystemExit) as end:
        cli.main(["refresh", "ecb", "lambda"])
    out = capsys.readouterr()
    assert end.value.code == 4 and "LAMBDA_API_KEY is not set" in out.err and "2 FX rates" in out.out


# ---------------------------------------------------------------- EUR end to end


def test_eur_prices_are_usd_prices_at_the_dated_rate(cli) -> None:
    rows = json.loads(cli("offers", "--provider", "Lambda", "--gpu", "H100", "--exact", "--currency", "EUR",
                          "--json", "--limit", "0").stdout)
    one = next(r for r in rows if r["instance_type"] == "gpu_1x_h100_sxm5" and r["region"] == "us-east-1")
    # bundled: $4.29/h; 2025-11-27 CFETS cross EUR/USD 1.15932 -> €3.7004/h
    assert one["currency"] == "EUR" and one["price_per_hour"] == pytest.approx(4.29 / 1.15932, abs=1e-4)


def test_plan_and_buy_accept_eur(cli) -> None:
    plan = cli("plan", "infer", "Qwen2.5-7B", "--currency", "EUR", "--top", "2")
    assert plan.returncode == 0 and "€" in plan.stdout
    buy = cli("buy", "--gpu", "H100", "--currency", "EUR")
    assert buy.returncode == 0 and "€" in buy.stdout


def test_a_region_prefixed_with_a_provider_is_for_that_provider_only() -> None:
    from gpuplan.market.refresh import BY_KEY, regions_for

    assert regions_for(BY_KEY["aws"], ["aws:us-west-2", "azure:westus"]) == ("us-west-2",)
    assert regions_for(BY_KEY["azure"], ["aws:us-west-2"]) == ("eastus",)  # none for Azure: its default


def test_http_api_history_answers_the_same_series(tmp_path: Path, monkeypatch) -> None:
    from fastapi.testclient import TestClient

    from gpuplan.web.app import create_app

    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    run(tmp_path / "prices.sqlite", "lambda")
    answer = TestClient(create_app()).get("/api/history", params={"gpu": "H100", "provider": "Lambda"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["gpu"] == "H100" and body["prices"].startswith("prices: bundled")
    assert [(s["region"], s["last_price_per_hour"]) for s in body["series"]] == [("us-east-1", 3.29),
                                                                                 ("us-west-1", 3.29)]
    # the same rows as the command line's --json, per-GPU price included (one serializer)
    status, out, _ = run_cli(["history", "--gpu", "H100", "--provider", "Lambda", "--json"])
    assert status == 0 and json.loads(out) == body["series"]
    assert body["series"][0]["last_price_per_gpu_hour"] == pytest.approx(3.29)  # a one-GPU instance
    assert TestClient(create_app()).get("/api/history", params={"gpu": "H100", "tier": "weekly"}).status_code == 400


def test_an_unreachable_host_and_a_broken_off_download_are_per_provider_messages(db: Path) -> None:
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Name or service not known", request=request)

    def broken(request: httpx.Request) -> httpx.Response:
        class Stream(httpx.SyncByteStream):
            def __iter__(self):  # type: ignore[no-untyped-def]
                yield (FIXTURES / "aws_index_us-east-1.csv").read_bytes()[:900]
                raise httpx.ReadError("connection reset", request=request)
        return httpx.Response(200, stream=Stream())

    got = run(db, "azure", handler=failing("prices.azure.com", unreachable))["azure"]
    assert got.status == "failed" and got.message.startswith("Azure: cannot reach https://prices.azure.com")
    got = run(db, "aws", handler=failing("pricing.us-east-1.amazonaws.com", broken))["aws"]
    assert got.status == "failed" and "broke off (ReadError" in got.message and not store.latest(db).batches


def test_refresh_refuses_the_network_when_gpuplan_is_offline(capsys) -> None:
    from gpuplan.cli import main

    with pytest.raises(SystemExit) as end:  # conftest sets GPUPLAN_OFFLINE for every test
        main(["refresh", "ecb"])
    assert end.value.code == 2 and "needs the network, and GPUPLAN_OFFLINE is set" in capsys.readouterr().err


def test_a_refreshed_price_supersedes_the_bundled_price_of_the_same_product(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    run(tmp_path / "prices.sqlite", "runpod", "vastai", "tencent", regions=("ap-beijing",))
    cat = load_catalog()

    def offers(provider: str, gpu: str, n: float, tier: str) -> list[tuple[str, str, float]]:
        return sorted((o.instance_type, o.region, o.price_per_hour) for o in cat.offers
                      if (o.provider, o.gpu, o.gpu_count, o.pricing) == (provider, gpu, n, tier))

    bundled = [o for o in BASE.offers if (o.provider, o.gpu, o.gpu_count, o.pricing) == ("RunPod", "H100", 1,
                                                                                          "on-demand")]
    assert bundled  # the bundled 1x H100 SXM Secure Cloud rows (4.69 in 2024, ...) are no longer offered
    assert offers("RunPod", "H100", 1, "on-demand") == [("1x NVIDIA H100 80GB HBM3 SECURE", "(any)", 2.69)]
    # Vast.ai: the refreshed 8x H100 listing (Quebec) supersedes the bundled '(marketplace)' row
    assert offers("Vast.ai", "H100", 8, "marketplace") == [("vast-h100-8x", "Quebec, CA", 17.92)]
    # Tencent Cloud: the zone's price in region ap-beijing supersedes 'cn-mainland (zone unspecified)'
    assert offers("Tencent Cloud", "A100", 1, "on-demand") == [("GT4.4XLARGE96", "ap-beijing", 28.64)]
    # rows of other GPUs or counts of a refreshed provider stay
    assert offers("Tencent Cloud", "A100", 8, "on-demand") == [
        (o.instance_type, o.region, o.price_per_hour) for o in BASE.offers
        if (o.provider, o.gpu, o.gpu_count, o.pricing) == ("Tencent Cloud", "A100", 8, "on-demand")]


def test_tencent_rows_keep_region_and_zone_apart_and_history_finds_them_by_region(db: Path) -> None:
    run(db, "tencent", regions=("ap-beijing",))
    (row,) = store.history("A100", regions=("ap-beijing",), path=db)
    assert (row.instance_type, row.region, row.zone) == ("GT4.4XLARGE96", "ap-beijing", "ap-beijing-5")


def test_a_schema_1_store_is_read_and_then_migrated_on_the_next_write(db: Path) -> None:
    import sqlite3

    con = sqlite3.connect(db)
    con.executescript(store._SCHEMA.replace(", zone TEXT NOT NULL DEFAULT ''", "") + "PRAGMA user_version=1;")
    con.execute("INSERT INTO batch VALUES (1, 'AWS', '2026-11-01T00:00:00Z', 1, 0, 'u')")
    con.execute("INSERT INTO price VALUES (1, 'AWS', 'p4d.24xlarge', 'A100-40GB', 8, 96, 1152, 'us-east-1', "
                "'global', 'on-demand', 'instance', 21.9576, 'USD', 'u', '2026-11-01T00:00:00Z')")
    con.commit()
    con.close()
    assert [r.zone for r in store.latest(db).rows] == [""]
    run(db, "tencent", regions=("ap-beijing",))
    assert sorted(r.zone for r in store.history("A100-40GB", path=db) + store.history("A100", path=db)) == [
        "", "ap-beijing-5"]
    assert store.check(db) == []


def test_lambda_types_without_capacity_are_stored_but_cannot_be_picked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    db = tmp_path / "prices.sqlite"
    answer = json.loads((FIXTURES / "lambda_instance_types.json").read_text())
    for entry in answer["data"].values():
        entry["regions_with_capacity_available"] = []
    run(db, "lambda", handler=failing("cloud.lambda.ai", lambda r: httpx.Response(200, json=answer)))
    assert {r.region for r in store.latest(db).rows} == {store.NO_CAPACITY}
    assert not [o for o in load_catalog().offers if o.region == store.NO_CAPACITY]


def test_refreshing_one_region_keeps_the_refreshed_prices_of_the_others(db: Path) -> None:
    recorded = (FIXTURES / "tencent_zone_configs.json").read_text()

    def tencent(zone: str, price: str) -> Callable[[httpx.Request], httpx.Response]:
        text = recorded.replace("ap-beijing-5", zone).replace("28.64", price)
        return failing("cvm.tencentcloudapi.com", lambda r: httpx.Response(200, text=text))

    run(db, "tencent", regions=("ap-beijing",))
    run(db, "tencent", regions=("ap-shanghai",), handler=tencent("ap-shanghai-2", "27.5"))
    assert rows_of(db, "Tencent Cloud") == {("GT4.4XLARGE96", "ap-beijing", "on-demand"): 28.64,
                                            ("GT4.4XLARGE96", "ap-shanghai", "on-demand"): 27.5}
    # a newer fetch of Beijing replaces Beijing's price and leaves Shanghai's
    run(db, "tencent", regions=("ap-beijing",), handler=tencent("ap-beijing-5", "26.0"))
    assert rows_of(db, "Tencent Cloud") == {("GT4.4XLARGE96", "ap-beijing", "on-demand"): 26.0,
                                            ("GT4.4XLARGE96", "ap-shanghai", "on-demand"): 27.5}


def test_a_ranking_is_the_same_in_every_display_currency_when_fx_rates_have_different_dates() -> None:
    import dataclasses

    import gpuplan
    from gpuplan.types import FxRate

    # USD->CNY from one day, the EUR pairs from another: their cross (8.2 CNY per EUR / 1.0 USD per EUR = 8.2
    # CNY per USD) disagrees with the direct 6.7351 by 22 %, so converting CNY prices straight to EUR would
    # reorder USD and CNY offers
    rates = (FxRate(dt.date(2026, 9, 30), "USD", "CNY", 6.7351, "test"),
             FxRate(dt.date(2025, 11, 27), "EUR", "CNY", 8.2, "test"),
             FxRate(dt.date(2025, 11, 27), "EUR", "USD", 1.0, "test"))
    cat = dataclasses.replace(BASE, fx_rates=rates)

    def order(currency: str) -> list[tuple[str, str, int]]:
        p = gpuplan.plan("Llama-3.1-8B", "serve", rps=5, top=40, currency=currency, catalog=cat)
        assert {x.cost.currency for x in p.ranked} == {currency}
        return [(x.where, x.estimate.describe(), i) for i, x in enumerate(p.ranked)]

    usd = order("USD")
    assert len(usd) == 40 and {"CNY", "USD"} <= {o.currency for x in gpuplan.plan(
        "Llama-3.1-8B", "serve", rps=5, top=40, catalog=cat).ranked for o in [x.offer]}
    assert order("CNY") == usd and order("EUR") == usd


# ---------------------------------------------------------------- a store that is locked, read-only or corrupt


def counting(calls: list[str]) -> Callable[[httpx.Request], httpx.Response]:
    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.host)
        return serve.answer(request)
    return answer


def test_a_locked_store_is_named_as_locked_quickly_and_nothing_is_fetched(db: Path, monkeypatch) -> None:
    import sqlite3
    import time

    monkeypatch.setattr(store, "LOCK_WAIT_S", 0.2)
    run(db, "runpod")
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another refresh is writing
    calls: list[str] = []
    start = time.monotonic()
    with pytest.raises(store.StoreError, match="is locked by another process") as err:
        run(db, "runpod", "vastai", handler=counting(calls))
    assert time.monotonic() - start < 5 and calls == []
    assert "move the file aside" not in str(err.value) and "wait for the other gpuplan refresh" in err.value.fix
    assert [r.provider for r in store.latest(db).rows][:1] == ["RunPod"]  # a locked store is still read
    other.execute("ROLLBACK")


def test_a_store_locked_during_the_refresh_fails_that_provider_only(db: Path, monkeypatch) -> None:
    import sqlite3

    monkeypatch.setattr(store, "LOCK_WAIT_S", 0.2)
    other = sqlite3.connect(db, isolation_level=None)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.runpod.io":
            other.execute("BEGIN IMMEDIATE")  # another writer starts while RunPod is being fetched ...
        elif other.in_transaction:
            other.execute("ROLLBACK")  # ... and is done before Vast.ai is
        return serve.answer(request)

    got = run(db, "runpod", "vastai", handler=answer)
    assert (got["runpod"].status, got["vastai"].status) == ("failed", "stored")
    assert "locked" in got["runpod"].message and "wait for the other" in got["runpod"].fix


def test_a_read_only_store_is_named_as_read_only_and_still_read(db: Path, monkeypatch) -> None:
    import sqlite3

    run(db, "runpod")
    connect = sqlite3.connect

    def read_only_media(target, *args, **kwargs):  # type: ignore[no-untyped-def]
        uri = str(target) if kwargs.get("uri") else f"{Path(target).resolve().as_uri()}?mode=ro"
        return connect(uri, *args, **{**kwargs, "uri": True})

    monkeypatch.setattr(sqlite3, "connect", read_only_media)  # every open as on read-only media
    assert {r.provider for r in store.latest(db).rows} == {"RunPod"}
    calls: list[str] = []
    with pytest.raises(store.StoreError, match="cannot be written") as err:
        run(db, "vastai", handler=counting(calls))
    assert calls == [] and "GPUPLAN_DATA_DIR" in err.value.fix and "move the file aside" not in err.value.fix


def test_a_corrupt_store_stops_refresh_before_anything_is_fetched(db: Path) -> None:
    db.write_bytes(b"this is not a database" * 100)
    calls: list[str] = []
    with pytest.raises(store.StoreError, match="cannot be read") as err:
        run(db, "runpod", handler=counting(calls))
    assert calls == [] and "move the file aside" in err.value.fix


@pytest.mark.parametrize(("code", "names_the_keys"), [
    ("InvalidAccessKeyId.NotFound", True), ("SignatureDoesNotMatch", True), ("Forbidden.RAM", True),
    ("Throttling.User", False)])
def test_an_alibaba_error_answer_is_named_by_its_code(db: Path, code: str, names_the_keys: bool) -> None:
    recorded = json.loads((FIXTURES / "aliyun_not_found.json").read_text())
    body = {**recorded, "Code": code, "Message": "as the API says it"}
    got = run(db, "aliyun", regions=("cn-shanghai",),
              handler=failing("ecs.aliyuncs.com", lambda r: httpx.Response(400, json=body)))["aliyun"]
    assert got.status == "failed" and code in got.message and "changed" not in got.message
    assert ("ALIBABA_CLOUD_ACCESS_KEY_ID" in got.fix and "ALIBABA_CLOUD_ACCESS_KEY_SECRET" in got.fix) is names_the_keys



def test_offline_is_off_for_0_false_no_and_off(tmp_path: Path, monkeypatch) -> None:
    from gpuplan.errors import OfflineError

    broken = tmp_path / "prices.sqlite"
    broken.write_bytes(b"not a database" * 100)  # so a run that gets past the offline check stops at the store
    for value in ("0", "false", "No", " off ", ""):
        monkeypatch.setenv("GPUPLAN_OFFLINE", value)
        with pytest.raises(store.StoreError):
            refresh(BASE, ("ecb",), path=broken)
    for value in ("1", "true", "yes"):
        monkeypatch.setenv("GPUPLAN_OFFLINE", value)
        with pytest.raises(OfflineError):
            refresh(BASE, ("ecb",), path=broken)


def test_different_prices_for_one_offer_in_one_answer_are_reported_and_the_lowest_kept(db: Path) -> None:
    answer = json.loads((FIXTURES / "tencent_zone_configs.json").read_text())
    items = answer["Response"]["InstanceTypeQuotaSet"]
    twin = json.loads(json.dumps(next(i for i in items if i["InstanceType"] == "GT4.4XLARGE96")))
    twin["Price"]["UnitPrice"] = twin["Price"]["UnitPriceDiscount"] = 30.0  # the same zone listed again, dearer
    items.append(twin)
    handler = failing("cvm.tencentcloudapi.com", lambda r: httpx.Response(200, json=answer))
    got = run(db, "tencent", regions=("ap-beijing",), handler=handler)["tencent"]
    assert got.clashes == {"GT4.4XLARGE96 ap-beijing ap-beijing-5 on-demand": "28.64, 30 CNY"}
    assert rows_of(db, "Tencent Cloud") == {("GT4.4XLARGE96", "ap-beijing", "on-demand"): 28.64}


@pytest.mark.parametrize(("price", "named", "stored"), [
    ({"UnitPrice": 28.64, "UnitPriceDiscount": "cheap"}, "'Price.UnitPriceDiscount' is str", None),
    ({"UnitPrice": "cheap"}, "'Price.UnitPrice' is str", None),  # no discount field: the list price is read
    ({"UnitPrice": 31.0, "UnitPriceDiscount": 0}, "", 31.0),  # a zero discount price is no price: the list one
])
def test_tencent_names_the_price_field_it_could_not_read(db: Path, price: dict[str, object], named: str,
                                                         stored: float | None) -> None:
    answer = json.loads((FIXTURES / "tencent_zone_configs.json").read_text())
    item = next(i for i in answer["Response"]["InstanceTypeQuotaSet"] if i["InstanceType"] == "GT4.4XLARGE96")
    item["Price"] = {"ChargeUnit": "HOUR", **price}
    handler = failing("cvm.tencentcloudapi.com", lambda r: httpx.Response(200, json=answer))
    got = run(db, "tencent", regions=("ap-beijing",), handler=handler)["tencent"]
    if stored is None:
        assert got.status == "failed" and named in got.message and "previous prices stay in use" in got.fix
        assert rows_of(db, "Tencent Cloud") == {}
    else:
        assert got.status == "stored"
        assert rows_of(db, "Tencent Cloud")[("GT4.4XLARGE96", "ap-beijing", "on-demand")] == stored
