"""Every money formula of gpuplan.plan.costing against figures worked out by hand (the comments show the sums)."""

from __future__ import annotations

import math

import pytest

from gpuplan.catalog import Catalog
from gpuplan.plan.costing import (
    Tariff,
    all_day_cost,
    bill,
    break_even_hours_per_month,
    capital_per_month,
    cost_of_seconds,
    day_cost,
    fleet_cost_per_hour,
    hourly_cost,
    metered_cost,
    own_per_month,
    per_million_tokens,
    per_month,
    per_request_per_hour,
    power_cost_per_hour,
    purchase_cost,
    token_costs,
)


def test_two_gpus_for_three_hours_to_the_second() -> None:
    # 2 GPUs × $2.10 × 3 h = $12.60; 90 s at $2.40/h = $0.06
    assert cost_of_seconds(2.10, 3 * 3600) * 2 == pytest.approx(12.60)
    assert cost_of_seconds(2.40, 90) == pytest.approx(0.06)


def test_bill_rounds_up_to_the_billing_unit_and_adds_the_spot_overhead() -> None:
    hourly = Tariff(2.0, 3600.0, False, 0.0, 0.0)
    # 1.5 h billed by the hour is 2 h: $2 × 2 h × 3 instances = $12
    cost = bill(hourly, 5400.0, "USD", instances=3)
    assert (cost.compute, cost.billed_seconds, cost.total) == pytest.approx((12.0, 7200.0, 12.0))
    spot = Tariff(1.0, 1.0, True, 0.0, 0.0)
    # 10 h of work on spot runs 11 h (10 % expected overhead): $11
    cost = bill(spot, 36000.0, "USD")
    assert (cost.compute, cost.spot_overhead_seconds) == pytest.approx((11.0, 3600.0))


def test_bill_charges_disk_beyond_the_included_by_the_gb_month() -> None:
    month = 30.4375 * 86400
    t = Tariff(1.0, 1.0, False, 50e9, 0.10)
    # 150 GB asked, 50 GB included: 100 GB × $0.10 per GB-month × 1 month = $10; compute 730.5 h × $1
    cost = bill(t, month, "USD", disk_bytes=150e9)
    assert (cost.storage, cost.compute) == pytest.approx((10.0, 730.5))


def test_eight_h100s_owned_by_hand() -> None:
    # 8 × $25,000 = $200,000, plus 35 % for the host = $270,000; over 3 years (36 months) = $7,500 a month
    purchase = purchase_cost(25_000.0, 8, 0.35)
    assert purchase == pytest.approx(270_000.0)
    assert capital_per_month(purchase, 3) == pytest.approx(7_500.0)
    # 8 × 700 W = 5.6 kW, × PUE 1.5 = 8.4 kW, at $0.10/kWh = $0.84 an hour
    assert power_cost_per_hour(700.0, 8, 1.5, 0.10) == pytest.approx(0.84)
    # 500 h of use: $7,500 + 500 × $0.84 = $7,920 owning; renting at $20.84/h: 500 × 20.84 = $10,420
    assert own_per_month(7_500.0, 0.84, 500.0) == pytest.approx(7_920.0)
    assert per_month(20.84, 500.0) == pytest.approx(10_420.0)
    # each hour owned saves $20.84 − $0.84 = $20: the $7,500 is paid back after 375 h a month
    assert break_even_hours_per_month(7_500.0, 20.84, 0.84) == pytest.approx(375.0)


def test_owning_never_pays_when_the_power_costs_the_rent() -> None:
    assert break_even_hours_per_month(100.0, 0.50, 0.50) == math.inf
    assert break_even_hours_per_month(100.0, 0.40, 0.50) == math.inf


def test_a_day_of_traffic_by_hand() -> None:
    # 12 busy hours at $3/h and 12 quiet ones at $1/h: $48 a day; the peak fleet all day: 24 × $3 = $72
    assert day_cost((3.0,) * 12 + (1.0,) * 12) == pytest.approx(48.0)
    assert all_day_cost(3.0) == pytest.approx(72.0)
    # $72 over 4.8 million tokens = $15 per million
    assert per_million_tokens(72.0, 4_800_000) == pytest.approx(15.0)


def test_token_costs_split_the_hour_by_gpu_time() -> None:
    # $10/h, a fifth of it prefill: $2 over 2M input tokens = $1/M; $8 over 0.5M output tokens = $16/M
    assert token_costs(10.0, 2e6, 0.5e6, 0.2) == pytest.approx((1.0, 16.0))
    assert token_costs(10.0, 0.0, 0.5e6, 0.2) == pytest.approx((0.0, 16.0))  # no input: no input price


def test_a_metered_moderation_service_per_hour() -> None:
    # 2 calls a request at $0.0015 = $0.003; at 5 requests/s that is 18,000 requests an hour = $54
    per_request = metered_cost(2, 0.0015)
    assert per_request == pytest.approx(0.003)
    assert per_request_per_hour(per_request, 5.0) == pytest.approx(54.0)


def test_a_serving_fleet_per_hour() -> None:
    # a replica of 16 GPUs on two 8-GPU instances at $20/h each: $40/h; a fleet of 3 such units and 2 units of
    # $4.50: 3 × 40 + 2 × 4.50 = $129/h
    assert hourly_cost(20.0, 2) == pytest.approx(40.0)
    assert fleet_cost_per_hour([(3, 40.0), (2, 4.50)]) == pytest.approx(129.0)
    assert fleet_cost_per_hour([]) == 0


@pytest.mark.parametrize(("method", "checkpoint"), [("full", True), ("galore", True), ("lisa", True),
                                                    ("freeze", True), ("lora", False), ("adapter", False)])
def test_a_run_that_changes_the_base_weights_keeps_a_whole_model_checkpoint_on_disk(method: str,
                                                                                    checkpoint: bool,
                                                                                    catalog: Catalog) -> None:
    from gpuplan.catalog.models import resolve_model
    from gpuplan.estimate.params import count_params
    from gpuplan.plan.pricing import checkpoint_bytes, disk_bytes
    from gpuplan.requests import make_job

    m = resolve_model(catalog, "Qwen2.5-0.5B")
    job = make_job("finetune", command="plan finetune", method=method, samples=1000, tokens_per_sample=100)
    # the download, 100k token ids of 4 bytes, and 16 bytes a parameter where the base's weights change
    expected = checkpoint_bytes(m) + 400_000 + (16 * count_params(m).total if checkpoint else 0)
    assert disk_bytes(m, job) == pytest.approx(expected)
