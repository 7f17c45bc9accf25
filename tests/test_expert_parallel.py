"""Expert parallelism for serving a mixture-of-experts model across nodes (gpuplan.estimate.ep): what one rank
holds, the all-to-all traffic per token, why the layout serves more than TP × PP, that the planner enumerates it
where no node holds the model, and that its server commands are the engines' own flags for every node."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import shlex

import pytest
from conftest import MARKET_SNAPSHOT
from test_export import _check_argv

from gpuplan.catalog import load_catalog
from gpuplan.estimate import ep
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.infer_speed import max_batch
from gpuplan.estimate.job import inference_setup
from gpuplan.estimate.params import count_params
from gpuplan.estimate.train_time import links
from gpuplan.export import fleet
from gpuplan.export.serve import ServeGroup, node_commands
from gpuplan.plan import serving as sv
from gpuplan.types import Job, Offer, Task

# DeepSeek-V3 config.json (gpuplan/data/models/DeepSeek-V3.json): 61 layers, the first 3 dense, 256 routed experts
# of moe_intermediate_size 2048 on hidden 7168, 8 per token
MOE_LAYERS, EXPERTS, TOP_K, HIDDEN, EXPERT_FFN = 58, 256, 8, 7168, 2048
ROUTED = MOE_LAYERS * EXPERTS * 3 * HIDDEN * EXPERT_FFN  # gate, up and down of every routed expert


@pytest.fixture(scope="module")
def cat():  # type: ignore[no-untyped-def]
    return load_catalog(market=MARKET_SNAPSHOT)  # plans whose pick depends on prices: the frozen snapshot's


def _setup(prompt: int = 1000, output: int = 300):  # type: ignore[no-untyped-def]
    job = Job(task=Task.SERVE, prompt_len=prompt, output_len=output, weight_format="fp8")
    return ep.rank_setup(inference_setup(job, 1, "vllm", "fp8"))


def test_a_rank_holds_its_sixteenth_of_the_routed_experts_and_everything_else(cat) -> None:  # type: ignore[no-untyped-def]
    m = cat.model("DeepSeek-V3")
    whole, rank = count_params(m), count_params(ep.rank_model(m, 16))
    assert whole.experts == ROUTED == 653_908_770_816
    assert rank.experts == ROUTED // 16
    assert whole.total - rank.total == ROUTED - ROUTED // 16  # attention, shared experts, router, head: all kept
    with pytest.raises(Exception, match="do not split"):
        ep.rank_model(m, 24)  # 256 experts do not split over 24 ranks


def test_all_to_all_sends_every_token_to_its_top_k_experts_and_back(cat) -> None:  # type: ignore[no-untyped-def]
    m, gpu, cal = cat.model("DeepSeek-V3"), cat.gpus["H100"], fitted()
    size = 64 * TOP_K * HIDDEN * 2  # 64 tokens × top-8 × hidden × 2 bytes = 7,340,032 bytes each way
    assert size == 7_340_032
    link = links(gpu, cal, 8)
    # 16 ranks on 2 nodes: half of a token's experts are on the other node, 7 of 16 on its node's other GPUs
    one_way = cal.get("allreduce_latency_s") + size * 0.5 / link.inter_node + size * 7 / 16 / link.intra_node
    assert ep.all_to_all_seconds(m, gpu, ep.Layout(16), 64, cal) == pytest.approx(2 * MOE_LAYERS * one_way)
    # within one node nothing crosses the network; across four, three quarters does
    assert ep.Layout(8).off_node_share == 0 and ep.Layout(32).off_node_share == 0.75
    assert ep.all_to_all_seconds(m, gpu, ep.Layout(8), 64, cal) < ep.all_to_all_seconds(m, gpu, ep.Layout(16), 64,
                                                                                       cal)


def test_data_parallel_attention_holds_more_sequences_than_tp8_pp2(cat) -> None:  # type: ignore[no-untyped-def]
    # MLA's latent KV is replicated on every tensor-parallel GPU; a data-parallel rank stores it once for its own
    # sequences, and holds a sixteenth of the experts: the 16 ranks together run many more sequences
    m, gpu, cal = cat.model("DeepSeek-V3"), cat.gpus["H100"], fitted()
    s = _setup()
    per_rank = ep.max_batch(m, gpu, s, 16, cal)
    tp_pp = max_batch(m, gpu, dataclasses.replace(s, tp=8, pp=2, max_num_seqs=100_000), cal)
    assert per_rank >= 1 and 16 * per_rank > 2 * tp_pp
    assert ep.capacity(m, gpu, s, 16, cal) > 0


def test_the_decode_step_grows_with_the_batch_and_the_load_with_the_rate(cat) -> None:  # type: ignore[no-untyped-def]
    m, gpu, cal = cat.model("DeepSeek-V3"), cat.gpus["H100"], fitted()
    s = _setup()
    steps = [ep.decode_step_seconds(m, gpu, s, 16, b, 1150, cal) for b in (1, 8, 64)]
    assert steps == sorted(steps) and steps[0] > 0
    low, high = ep.at_rate(m, gpu, s, 16, 1.0, cal), ep.at_rate(m, gpu, s, 16, 20.0, cal)
    assert not low.saturated and low.ttft_p99_s <= high.ttft_p99_s and low.tpot_mean_s <= high.tpot_mean_s
    top = ep.capacity(m, gpu, s, 16, cal)
    assert ep.at_rate(m, gpu, s, 16, 1.5 * top, cal).saturated


def test_the_planner_offers_ep_only_where_no_node_holds_a_moe_model(cat) -> None:  # type: ignore[no-untyped-def]
    deepseek = sv.plan_serving(cat, cat.model("DeepSeek-V3"), sv.ServeRequest(2.0, gpus=("H100",)))
    assert any(c.ep == 16 and c.n_gpus == 16 and c.nodes == 2 for c in deepseek.configs)
    group = next(g for g in deepseek.as_dict()["configurations"] if g["ep"] == 16)
    assert "DP16 attention × EP16 over 2 nodes" in group["config"]
    dense = sv.plan_serving(cat, cat.model("Llama-3.1-405B"), sv.ServeRequest(1.0, gpus=("H100",), quant="fp8"))
    assert all(c.ep == 1 for c in dense.configs)  # a dense model has no experts to split
    small = sv.plan_serving(cat, cat.model("Mixtral-8x7B"), sv.ServeRequest(1.0, gpus=("H100",)))
    assert all(c.ep == 1 for c in small.configs)  # one node holds it: no cross-node layout


# ---------------------------------------------------------------- the export


def _ep_group(engine: str) -> ServeGroup:
    return ServeGroup(model="deepseek-ai/DeepSeek-V3", gpu="H100", engine=engine, weight_format="fp8", ep=16,
                      context_len=1300, max_num_seqs=125)


def test_vllm_runs_16_dp_ranks_with_expert_parallelism_on_two_nodes() -> None:
    head, worker = node_commands(_ep_group("vllm"))
    for argv in (head, worker):
        _check_argv("vllm", argv[3:])
        opts = dict(itertools.pairwise(argv))
        assert opts["--data-parallel-size"] == "16" and opts["--data-parallel-size-local"] == "8"
        assert "--enable-expert-parallel" in argv and opts["--tensor-parallel-size"] == "1"
        assert opts["--data-parallel-address"] == "HEAD_NODE_IP"
    assert "--headless" not in head and "--headless" in worker
    assert worker[worker.index("--data-parallel-start-rank") + 1] == "8"  # ranks 8-15 on the second node


def test_sglang_runs_dp_attention_and_ep_over_every_gpu_of_both_nodes() -> None:
    nodes = node_commands(_ep_group("sglang"))
    assert len(nodes) == 2
    for rank, argv in enumerate(nodes):
        _check_argv("sglang", argv[3:])
        flag = {f: argv[argv.index(f) + 1] for f in ("--tp-size", "--dp-size", "--ep-size", "--nnodes", "--node-rank",
                                                     "--max-running-requests")}
        assert flag == {"--tp-size": "16", "--dp-size": "16", "--ep-size": "16", "--nnodes": "2",
                        "--node-rank": str(rank), "--max-running-requests": str(16 * 125)}  # split over the ranks
        assert "--enable-dp-attention" in argv


def test_a_fleet_export_writes_a_command_per_node_a_leader_worker_set_and_two_node_service() -> None:
    from gpuplan.plan.availability import Recovery

    m = load_catalog().model("DeepSeek-V3")
    c = sv.ReplicaConfig("H100", 1, 1, "fp8", "vllm", (30.0,), (0.3,), 125, "400 Gb/s per GPU between nodes", ep=16)
    offer = Offer(provider="AWS", instance_type="p5.48xlarge", gpu="H100", gpu_count=8, vcpus=None, ram_bytes=None,
                  region="us-east-1", market="global", price_per_hour=50.0, currency="USD", pricing="on-demand",
                  billing_granularity_s=1, included_disk_bytes=None, storage_price_per_gb_month=None,
                  gpu_mapping="stated", source="test fixture", as_of=dt.date(2026, 1, 1))
    g = sv.FleetGroup(c, "AWS", "p5.48xlarge", "us-east-1", "us-east-1", "on-demand", 2, 1, 100.0, "test fixture",
                      "2026-01-01", "global", offer)
    f = sv.Fleet((g,), 100.0, ((c.describe(), 0, 2.0),), 0.0, 0.999, 0.01)
    p = sv.ServePlan("DeepSeek-V3", sv.ServeRequest(2.0, buckets=(sv.Bucket(1000, 300),)), f, f, None, (c,),
                     Recovery(300, 30, 205), None, None, ())
    (text,) = [x["text"] for x in fleet.export(p, m, "deepseek-ai/DeepSeek-V3", "vllm")["files"]]
    commands = [shlex.split(line) for line in text.splitlines() if not line.startswith("#")]
    assert len(commands) == 2 and "--headless" in commands[1] and "2 nodes of 8 GPUs" in text.replace("\n# ", " ")
    k8s = fleet.export(p, m, "deepseek-ai/DeepSeek-V3", "k8s")["document"]
    (lws,) = [d for d in k8s if d["kind"] == "LeaderWorkerSet"]
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2 and lws["spec"]["replicas"] == 1  # 2 instances, 1 replica
    (task,) = fleet.export(p, m, "deepseek-ai/DeepSeek-V3", "skypilot")["document"]
    assert task["num_nodes"] == 2 and task["resources"]["accelerators"] == "H100:8"
