"""Every option a user gives, declared once: its name in the library and the HTTP API, its command-line flag,
what it takes, its default (per command where commands differ), its range, and where it applies.

The command line (:mod:`gpuplan.cli`: typer defaults, range checks, help's ``Range:``), the HTTP API's request
models (:mod:`gpuplan.web.models`: bounds, defaults), the Python API (:mod:`gpuplan.api`: names, number kinds)
and the library (:func:`gpuplan.requests.make_job`, :func:`gpuplan.requests.estimate_config`: defaults, ranges,
refusals) all read :data:`OPTIONS`. The skins pass the library only what the user gave; an option given where it
does not apply is refused naming its flag, even at its default value (``--method full --lora-rank 16``).

Commands are named as typed: ``estimate``, ``plan finetune``, ``plan pretrain``, ``plan infer``, ``plan serve``, and
the others (``offers``, ``buy`` ...), whose options come from the same rows (the endpoints' query parameters of
:data:`gpuplan.web.models.QUERIES` too).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from gpuplan.errors import InputError
from gpuplan.types import KV_DTYPES, OPTIMIZERS, PRECISIONS, Engine, Market, Method, Objective, Recompute, Task
from gpuplan.units import fmt_bytes

LORA_TARGETS = ("all-linear", "attention", "qv", "mlp")
SEGMENTS = ("datacenter", "workstation", "consumer", "tpu", "npu")  # those gpuplan gpus lists by
FOR_TRAINING = "training (--task finetune or pretrain)"
FOR_INFERENCE = "inference (--task infer or serve)"


@dataclass(frozen=True, slots=True)
class Range:
    """The numbers an option accepts: ``low`` to ``high`` inclusive, or above ``low`` when ``above``."""

    low: float
    high: float
    above: bool = False
    zero: str = ""  # what 0 means where 0 is accepted as a choice ("all", "gpuplan chooses")
    hint: str = ""  # what the number is, where the range alone does not say
    unit: str = ""  # the unit the number is in ("seconds"), or a formatter for the bounds
    fmt: Callable[[float], str] | None = None

    def contains(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return (value > self.low if self.above else value >= self.low) and value <= self.high

    def text(self) -> str:
        """``1 to 100,000``, ``more than 0 and at most 50 years``, ``0 to 1,000,000 (0: all)``."""
        show = self.fmt or shown
        unit = f" {self.unit}" if self.unit else ""
        span = (f"more than {show(self.low)} and at most {show(self.high)}{unit}" if self.above
                else f"{show(self.low)} to {show(self.high)}{unit}")
        return span + (f" (0: {self.zero})" if self.zero else "")


@dataclass(frozen=True, slots=True)
class Applies:
    """Where an option means something: ``tasks`` and fine-tuning ``methods`` (None: all of them). ``refusal``
    (of the flag) replaces "applies to ``text``" where the option's own words say more; a task of the other kind
    (training for an inference option) always gets the plain sentence."""

    tasks: frozenset[Task] | None = None
    methods: frozenset[Method] | None = None
    text: str = ""
    refusal: Callable[[str], InputError] | None = None

    def task_refusal(self, flag: str, task: Task) -> InputError | None:
        """The error for ``flag`` given to ``task`` (None: it applies)."""
        if self.tasks is None or task in self.tasks:
            return None
        kinds = {t.is_training for t in self.tasks}
        if kinds != {task.is_training} and len(kinds) == 1:  # an inference option in training, or back
            where = FOR_INFERENCE if task.is_training else FOR_TRAINING
            return InputError(flag, f"{flag} applies to {where}, not to --task {task}.", f"drop {flag}.")
        if self.refusal is not None:
            return self.refusal(flag)
        return InputError(flag, f"{flag} applies to {self.text}, not to --task {task}.", f"drop {flag}.")

    def method_refusal(self, flag: str, method: Method) -> InputError | None:
        """The error for ``flag`` given with ``method`` (None: it applies)."""
        if self.methods is None or method in self.methods:
            return None
        return InputError(flag, f"{flag} applies to {self.text}, not {method}.", f"drop {flag}.")


def _serving_only(field: str) -> InputError:
    return InputError(field, f"{field} applies to --task serve; a batch-inference job runs its requests as fast as "
                      "it can.", f"drop {field}, or use --task serve.")


def _batch_only(field: str) -> InputError:
    return InputError(field, "serving is sized by a request rate, not a request count.",
                      "use --task infer for a batch of requests.")


def _runs_to_an_end(field: str) -> InputError:
    return InputError(field, "serving runs continuously; a deadline does not apply.",
                      f"drop {field}; use --ttft and --tpot for latency targets.")


EVERYWHERE = Applies()
TRAINING = Applies(frozenset({Task.FINETUNE, Task.PRETRAIN}), text=FOR_TRAINING)
INFERENCE = Applies(frozenset({Task.INFER, Task.SERVE}), text=FOR_INFERENCE)
SERVING = Applies(frozenset({Task.SERVE}), text="--task serve", refusal=_serving_only)
BATCH_INFERENCE = Applies(frozenset({Task.INFER}), text="--task infer", refusal=_batch_only)
RUNS_TO_AN_END = Applies(frozenset({Task.FINETUNE, Task.PRETRAIN, Task.INFER}), text="jobs that end",
                         refusal=_runs_to_an_end)
_ADAPTER_RANKS = frozenset(m for m in Method if m.low_rank)
LORA = Applies(methods=_ADAPTER_RANKS, text="--method lora, qlora, dora or adalora")
# GaLore projects the gradients of the same linears at a rank: --lora-rank and --lora-targets say which and how far
LOW_RANK = Applies(methods=_ADAPTER_RANKS | {Method.GALORE}, text="--method lora, qlora, dora, adalora or galore")
PTUNING = Applies(methods=frozenset({Method.PTUNING}), text="--method ptuning")
FULL_TRAINING = Applies(frozenset({Task.FINETUNE, Task.PRETRAIN}), frozenset({Method.FULL}),
                        text="training every weight (--task pretrain, or --method full)")


@dataclass(frozen=True, slots=True)
class Option:
    """One option. ``name`` is the library's keyword and the HTTP API's field; ``flag`` the command line's
    (whose ``--`` dropped and ``-`` as ``_`` is :attr:`arg`, the Python API's keyword). ``kind`` is what the
    value is once read (int, float, str, bool or an enum); ``form`` the text form a skin parses it from (COUNT
    ``10k``, DURATION ``2s``, MONEY ``500USD``, SIZE ``48GB``, FORMAT). ``stages`` say which library call takes
    it: ``job`` (:func:`~gpuplan.requests.make_job`), ``layout`` (:func:`~gpuplan.requests.estimate_config`),
    ``plan`` (the plan's constraints); ``by_command`` holds the defaults of the commands that differ.

    ``help`` is the help text in English and Chinese, ``helps`` the ``(command, English, Chinese)`` of the commands
    whose help differs; ``typed`` the command line's spellings where they are more than ``flag`` (an alias, a
    ``--spot/--no-spot`` pair; the first is shown first); ``required_in`` the commands that need it, ``unset_in``
    those whose command line leaves it unset for the library to choose (``--rps`` with ``--profile``); ``kind_in``
    the commands where the value is of another kind (``--gpu``: one GPU in ``estimate``, several in ``offers``);
    ``env`` the environment variable that also gives it (not shown in help)."""

    name: str
    flag: str
    kind: type = float
    default: Any = None
    range: Range | None = None
    applies: Applies = EVERYWHERE
    stages: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    form: str = ""
    by_command: tuple[tuple[str, Any], ...] = ()
    help: tuple[str, str] = ("", "")
    helps: tuple[tuple[str, str, str], ...] = ()
    typed: tuple[str, ...] = ()
    required_in: tuple[str, ...] = ()
    unset_in: tuple[str, ...] = ()
    kind_in: tuple[tuple[str, type], ...] = ()
    env: str = ""

    @property
    def arg(self) -> str:
        return self.flag[2:].replace("-", "_")

    def default_for(self, command: str) -> Any:
        """The default of ``command`` (``plan serve``: first its own, then ``plan``'s, then the option's)."""
        return _per_command(self.by_command, command, self.default)

    def kind_for(self, command: str) -> type:
        """What the value is once read in ``command`` (``--tier``: a list in ``offers``, one tier in ``history``)."""
        return dict(self.kind_in).get(command, self.kind)

    def help_for(self, command: str, zh: bool = False) -> str:
        """The help of the option in ``command``, in English or in Chinese (``zh``)."""
        en_zh = _per_command(tuple((c, (en, z)) for c, en, z in self.helps), command, self.help)
        return en_zh[1] if zh else en_zh[0]


def _per_command(by_command: tuple[tuple[str, Any], ...], command: str, fallback: Any) -> Any:
    found = dict(by_command)
    words = command.split()
    for key in (" ".join(words[:n]) for n in range(len(words), 0, -1)):
        if key in found:
            return found[key]
    return fallback


def _o(flag: str, low: float, high: float, **kw: Any) -> Option:
    """A number with a range, known by its flag (its name is the flag's, with ``_``)."""
    above = kw.pop("above", False)
    r = Range(low, high, above, **{k: kw.pop(k) for k in ("zero", "hint", "unit", "fmt") if k in kw})
    return Option(kw.pop("name", flag[2:].replace("-", "_")), flag, range=r, **kw)


_JOB, _LAYOUT, _PLAN = ("job",), ("layout",), ("plan",)
_FRAMEWORKS = ("llama-factory, hf, trl, torchtune, litgpt, axolotl, unsloth, swift, deepspeed, megatron, torchtitan, "
               "llm-foundry, chatglm, glm4, qwen, xtuner, pytorch or llmc")
_GUARDS = ("Llama-Guard-3-1B, Llama-Guard-3-8B, Llama-Guard-4-12B, ShieldGemma-2B, ShieldGemma-9B, "
           "Qwen3Guard-Gen-0.6B, Qwen3Guard-Gen-4B, Qwen3Guard-Gen-8B")
_SERVE = "plan serve"

# Beyond these ranges a request is a typo, not a plan: the largest published runs are ~15T tokens on ~100k GPUs
# with 1M-token contexts. Durations are seconds, money the plan's currency. The order is the order of refusals.
OPTIONS: tuple[Option, ...] = (
    # the work (make_job)
    Option("method", "--method", Method, Method.FULL, stages=_JOB, by_command=(("plan finetune", Method.LORA),),
           help=("full, lora, qlora, dora, adalora, galore, lisa, adapter, adapter-v2, ptuning or freeze.",
                 "方法：full、lora、qlora、dora、adalora、galore、lisa、adapter、adapter-v2、ptuning 或 freeze。")),
    _o("--samples", 0, 1e12, above=True, default=0.0, applies=TRAINING, stages=_JOB, form="COUNT",
       help=("Training samples, e.g. 10k.", "训练样本数，例如 10k。")),
    _o("--tokens-per-sample", 0, 1e7, above=True, default=0.0, applies=TRAINING, stages=_JOB, form="COUNT",
       help=("Tokens per sample (prompt + answer).", "每条样本的 token 数（提示 + 回答）。")),
    _o("--epochs", 0, 1e4, above=True, default=1.0, applies=TRAINING, stages=_JOB,
       help=("Epochs over the samples.", "在样本上训练的轮数。")),
    _o("--tokens", 0, 1e15, above=True, default=0.0, applies=TRAINING, stages=_JOB, form="COUNT",
       help=("Training tokens in total, e.g. 1.4T (instead of samples).", "训练 token 总数，例如 1.4T（代替样本数）。"),
       helps=(("plan pretrain", "Training tokens, e.g. 1.4T.", "训练 token 数，例如 1.4T。"),),
       required_in=("plan pretrain",)),
    _o("--seq-len", 1, 1e7, kind=int, applies=TRAINING, stages=_JOB,
       help=("Sequence length for training (default: tokens per sample, capped at 4096).",
             "训练序列长度（默认等于每条样本 token 数，最多 4096）。"),
       helps=(("plan pretrain", "Sequence length (default: 2048, at most the model's positions).",
               "序列长度（默认 2048，不超过模型的位置数）。"),)),
    _o("--global-batch", 0, 1e8, zero="gpuplan chooses", kind=int, default=0, applies=TRAINING, stages=_JOB,
       help=("Sequences per optimizer step (0: 32 for fine-tuning, 4M tokens worth for pretraining).",
             "每个优化器步的序列数（0：微调为 32，预训练相当于 4M token）。"),
       helps=(("plan finetune", "Sequences per optimizer step (0: 32).", "每个优化器步的序列数（0：32）。"),
              ("plan pretrain", "Sequences per optimizer step (0: 4M tokens worth, as LLaMA).",
               "每个优化器步的序列数（0：相当于 4M token，同 LLaMA）。"),)),
    Option("framework", "--framework", str, applies=TRAINING, stages=("job", "layout"),
           help=("Training framework whose defaults apply where options are not given (gradient checkpointing, "
                 f"optimizer, loss, compile): {_FRAMEWORKS} (gpuplan/data/frameworks.csv); plans use only the GPUs "
                 "it runs on (gpuplan/data/runs_on.csv).",
                 "训练框架：未指定的选项（梯度检查点、优化器、损失、编译）取它的默认值：llama-factory、hf、trl、torchtune、"
                 "litgpt、axolotl、unsloth、swift、deepspeed、megatron、torchtitan、llm-foundry、chatglm、glm4、qwen、"
                 "xtuner、pytorch 或 llmc（gpuplan/data/frameworks.csv）；"
                 "方案只用它支持的显卡（gpuplan/data/runs_on.csv）。")),
    _o("--prompt", 1, 1e7, kind=int, default=1024, applies=INFERENCE, stages=_JOB,
       by_command=((_SERVE, 1000),), help=("Prompt tokens per request.", "每个请求的输入 token 数。")),
    _o("--output", 1, 1e7, kind=int, default=256, applies=INFERENCE, stages=_JOB, by_command=((_SERVE, 300),),
       help=("Generated tokens per request.", "每个请求生成的 token 数。")),
    _o("--batch", 0, 1e6, zero="as many as fit", kind=int, default=0, applies=INFERENCE, stages=_JOB,
       help=("Concurrent sequences (inference; 0: as many as the engine holds with --requests, else 1).",
             "并发序列数（推理；0：给了 --requests 时取引擎能容纳的最大值，否则 1）。")),
    _o("--requests", 0, 1e12, above=True, default=0.0, applies=BATCH_INFERENCE, stages=_JOB, form="COUNT",
       by_command=(("plan infer", 1000.0),),
       help=("Requests in a batch-inference job.", "批量推理任务的请求数。"),
       helps=(("plan infer", "Requests to process, e.g. 100k.", "要处理的请求数，例如 100k。"),)),
    _o("--rps", 0, 1e6, above=True, default=0.0, applies=SERVING, stages=_JOB, by_command=((_SERVE, 1.0),),
       help=("Mean requests per second (default 1; with --profile, the profile's mean).",
             "平均每秒请求数（默认 1；给了 --profile 时取其平均值）。"), unset_in=(_SERVE,)),
    _o("--ttft", 0, 3600, above=True, unit="seconds", name="ttft_s", applies=SERVING, stages=_JOB, form="DURATION",
       help=("Median time-to-first-token target, e.g. 500ms.", "首字延迟中位数目标，例如 500ms。")),
    _o("--tpot", 0, 60, above=True, unit="seconds", name="tpot_s", applies=SERVING, stages=_JOB, form="DURATION",
       help=("Median time-per-output-token target, e.g. 50ms.", "每字延迟中位数目标，例如 50ms。")),
    Option("quant", "--quant", str, stages=_JOB, form="FORMAT",  # where it applies depends on its value
           help=("Weight format: bf16, fp16, fp8, int8-wo, int4-wo, awq-int4, gptq-int4, bnb-nf4, gguf-q4_k_m ...",
                 "权重格式：bf16、fp16、fp8、int8-wo、int4-wo、awq-int4、gptq-int4、bnb-nf4、gguf-q4_k_m 等。"),
           helps=(("plan finetune", "Frozen-base format for P-tuning, LoRA and LLaMA-Adapter: int4 or int8 "
                   "(weight-only), or a format such as nf4.",
                   "P-tuning、LoRA 和 LLaMA-Adapter 冻结底座的格式：int4 或 int8（仅权重量化），或 nf4 等格式。"),)),
    _o("--lora-rank", 1, 1e5, kind=int, default=16, applies=LOW_RANK, stages=_JOB,
       help=("LoRA rank (AdaLoRA: its initial rank; GaLore: the gradients' projection rank).",
             "LoRA 秩（AdaLoRA：初始秩；GaLore：梯度投影的秩）。")),
    Option("lora_targets", "--lora-targets", str, "all-linear", applies=LOW_RANK, stages=_JOB, choices=LORA_TARGETS,
           help=("all-linear, attention, qv or mlp.", "LoRA 目标层：all-linear、attention、qv 或 mlp。")),
    Option("train_embeddings", "--train-embeddings", bool, False, applies=LORA, stages=_JOB,
           help=("LoRA, QLoRA, DoRA or AdaLoRA also trains the embedding and output layer (PEFT modules_to_save), as "
                 "when tokens are added.",
                 "LoRA、QLoRA、DoRA 或 AdaLoRA 同时训练词嵌入和输出层（PEFT modules_to_save），例如新增 token 时。")),
    _o("--dataset-tokens", 0, 1e15, above=True, form="COUNT",
       help=("Tokens in the dataset (instead of samples).", "数据集的 token 数（代替样本数）。")),
    _o("--context", 1, 1e8, kind=int, default=2048,
       help=("Tokens of context (inference) / sequence (training).", "上下文（推理）/ 序列（训练）的 token 数。")),
    # one configuration (estimate_config)
    _o("--n-gpus", 1, 100_000, kind=int, stages=_LAYOUT,
       help=("GPUs (default: tp × pp; training spreads more over data parallelism).",
             "卡数（默认 tp × pp；训练时多出的卡用于数据并行）。"),
       by_command=(("buy", 1),), helps=(("buy", "GPUs in the machine.", "整机的卡数。"),)),
    _o("--tp", 1, 1024, kind=int, default=1, stages=_LAYOUT, help=("Tensor parallel size.", "张量并行度。")),
    _o("--pp", 1, 1024, kind=int, default=1, stages=_LAYOUT, help=("Pipeline parallel stages.", "流水线并行段数。")),
    _o("--zero", 0, 3, kind=int, default=0, applies=TRAINING, stages=_LAYOUT, choices=("0", "1", "2", "3"),
       help=("ZeRO stage 0-3 (3 = FSDP full shard) over data parallelism.",
             "数据并行上的 ZeRO 阶段 0-3（3 = FSDP 全切分）。")),
    _o("--micro-batch", 1, 1e5, kind=int, default=1, applies=TRAINING, stages=_LAYOUT,
       help=("Sequences per GPU per micro-step.", "每张卡每个微步的序列数。")),
    _o("--grad-accum", 1, 1e6, kind=int, default=1, applies=TRAINING, stages=_LAYOUT,
       help=("Micro-steps per optimizer step.", "每个优化器步的微步数。")),
    Option("recompute", "--recompute", Recompute, applies=TRAINING, stages=_LAYOUT,  # None: the framework's
           help=("Activation recomputation: none, selective or full (default: the --framework's default, else "
                 "none).", "激活重计算：none、selective 或 full（默认取 --framework 的默认值，否则 none）。")),
    Option("precision", "--precision", str, "auto", applies=TRAINING, stages=_LAYOUT, choices=("auto", *PRECISIONS),
           help=("auto (bf16 for adapters, bf16-mixed for full; fp16 on GPUs without BF16), bf16-mixed, fp16-mixed, "
                 "fp8-mixed, fp4-mixed (NVFP4 matmuls, Blackwell), bf16 or fp32.",
                 "auto（适配器用 bf16，全量用 bf16-mixed；不支持 BF16 的显卡用 fp16）、bf16-mixed、fp16-mixed、"
                 "fp8-mixed、fp4-mixed（NVFP4 矩阵乘，Blackwell）、bf16 或 fp32。")),
    Option("optimizer", "--optimizer", str, applies=TRAINING, stages=_LAYOUT, choices=OPTIMIZERS,  # None: its
           help=("adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd, sgd-momentum or adafactor (default: the "
                 "--framework's default, else adamw).", "优化器：adamw、adamw-8bit、paged-adamw、paged-adamw-8bit、"
                 "sgd、sgd-momentum 或 adafactor（默认取 --framework 的默认值，否则 adamw）。")),
    _o("--mtp-layers", 0, 16, kind=int, default=0, applies=FULL_TRAINING, stages=_LAYOUT,
       help=("Multi-token prediction depths trained beside the model (Megatron's mtp_num_layers; DeepSeek-V3: 1).",
             "与模型一同训练的多 token 预测（MTP）深度（Megatron 的 mtp_num_layers；DeepSeek-V3 为 1）。")),
    _o("--prefix-len", 1, 1e5, kind=int, default=128, applies=PTUNING, stages=_LAYOUT,
       help=("P-tuning v2 prefix length.", "P-tuning v2 的前缀长度。")),
    # text, not the Engine enum: the library reads aliases and local runners ("llama.cpp", "Ollama"; estimate/runners)
    Option("engine", "--engine", str, Engine.VLLM, applies=INFERENCE, stages=("layout", "plan"),
           help=("hf, vllm, sglang, trtllm, llamacpp, mindie (Ascend NPUs) or mlx (Apple silicon); or a local runner "
                 "of llama.cpp/MLX with its own defaults: ollama or lmstudio (\"LM Studio\").",
                 "推理引擎：hf、vllm、sglang、trtllm、llamacpp、mindie（昇腾 NPU）或 mlx（Apple 芯片）；"
                 "或用自身默认设置运行 llama.cpp/MLX 的本地运行器：ollama 或 lmstudio（\"LM Studio\"）。")),
    Option("kv_dtype", "--kv-dtype", str, "bf16", applies=INFERENCE, stages=_LAYOUT, choices=KV_DTYPES,
           help=("KV-cache dtype: bf16, fp16 or fp8.", "KV 缓存的数据类型：bf16、fp16 或 fp8。")),
    # plan constraints
    _o("--max-gpus", 1, 100_000, kind=int, stages=_PLAN, by_command=(("plan pretrain", 2048),),
       help=("At most this many GPUs in total.", "总卡数上限。")),
    _o("--top", 1, 1000, kind=int, default=10, stages=_PLAN, help=("How many plans to show.", "显示多少个方案。")),
    _o("--budget", 0, 1e12, above=True, stages=_PLAN, form="MONEY",
       help=("Most you will spend, e.g. 500USD or ¥3000.", "最多花多少钱，例如 500USD 或 ¥3000。"),
       helps=((_SERVE, "Most the fleet may cost per hour, e.g. 40USD.", "集群每小时费用上限，例如 40USD。"),)),
    _o("--deadline", 0, 10 * 365 * 86400, above=True, unit="seconds (10 years)", name="deadline_s", stages=_PLAN,
       form="DURATION", applies=RUNS_TO_AN_END,
       help=("Must finish within, e.g. 12h or 3d.", "须在多长时间内完成，例如 12h 或 3d。")),
    Option("objective", "--objective", Objective, Objective.COST, stages=_PLAN,
           by_command=(("plan pretrain", Objective.TIME),),
           help=("cost, time or value (work per money, the seeds' 性价比).",
                 "目标：cost、time 或 value（单位费用完成的工作量，即性价比）。")),
    Option("market", "--market", Market, stages=_PLAN, by_command=(("buy", Market.GLOBAL),),
           help=("cn (mainland China, CNY) or global.", "cn（中国大陆，人民币）或 global。"),
           helps=(("gpus", "cn: parts legally sold or offered in mainland China.",
                   "cn：在中国大陆合法销售或提供的型号。"),
                  ("offers", "cn or global.", "cn 或 global。"), ("platforms", "cn or global.", "cn 或 global。"),
                  ("buy", "cn or global (purchase prices, electricity, legality).",
                   "cn 或 global（购置价格、电价、合规性）。"))),
    Option("providers", "--providers", list, stages=_PLAN, typed=("--provider", "--providers"),
           help=("Only these providers (repeatable).", "只用这些云厂商（可重复）。")),
    Option("gpus", "--gpus", list, stages=_PLAN,
           help=("Only these GPUs (repeatable; families match variants).",
                 "只用这些显卡（可重复；系列名匹配其各型号）。")),
    Option("exclude_gpus", "--exclude-gpus", list, stages=_PLAN,
           help=("Never these GPUs (repeatable).", "不用这些显卡（可重复）。")),
    Option("spot", "--spot", bool, stages=_PLAN, by_command=((_SERVE, False),),  # None: spot and not
           typed=("--spot/--no-spot",),
           help=("Only spot, or no spot (default: both; serving: no spot unless --spot).",
                 "只用竞价实例，或不用竞价实例（默认两者都考虑；在线服务默认不用，除非给了 --spot）。"),
           helps=((_SERVE, "Allow spot capacity in the mix (preemptions are correlated within a spot pool).",
                   "允许组合中使用竞价实例（同一竞价资源池内的抢占是相关的）。"),
                  ("offers", "Only spot, or no spot.", "只看竞价实例，或不看竞价实例。"))),
    Option("currency", "--currency", str, stages=_PLAN,  # None: the market's
           help=("USD, CNY or EUR (default: CNY with --market cn).",
                 "币种 USD、CNY 或 EUR（--market cn 时默认 CNY）。"),
           helps=(("offers", "Show prices in USD, CNY or EUR (newest FX rate).",
                   "以 USD、CNY 或 EUR 显示价格（按最新汇率）。"),)),
    # serving that stays up (gpuplan.plan.serving)
    _o("--peak-rps", 0, 1e6, above=True,
       help=("Peak requests per second the fleet is sized for (default: the mean, or the profile's busiest hour).",
             "集群按其规划的峰值每秒请求数（默认等于平均值，或 --profile 中最忙的一小时）。")),
    _o("--ttft-p99", 0, 3600, above=True, unit="seconds", name="ttft_p99_s", form="DURATION",
       help=("p99 time-to-first-token target, e.g. 2s (default 5s when no TTFT target is given).",
             "首字延迟 p99 目标，例如 2s（没有给任何首字延迟目标时默认 5s）。")),
    _o("--tpot-p99", 0, 60, above=True, unit="seconds", name="tpot_p99_s", form="DURATION",
       help=("p99 time-per-output-token target, e.g. 80ms.", "每字延迟 p99 目标，例如 80ms。")),
    _o("--availability", 0, 100, above=True, unit="percent", hint="a percentage below 100, e.g. 99.9", default=99.9,
       help=("Availability target in percent, e.g. 99.9.", "可用性目标（百分比），例如 99.9。")),
    _o("--prefix-hit", 0, 0.99, hint="share of prompt tokens found in the prefix cache", default=0.0,
       help=("Share of prompt tokens served from the prefix cache.", "由前缀缓存命中的输入 token 占比。")),
    _o("--max-per-offer", 1, 100_000, kind=int,
       help=("At most this many instances of one offer (a provider's capacity).",
             "同一报价最多用这么多个实例（云厂商的容量）。")),
    _o("--adapters", 0, 10_000, zero="none", kind=int, default=0,
       help=("LoRA adapters served on the same base (multi-LoRA), all resident on every replica: their memory comes "
             "out of the KV cache, and each decode step reads the adapters its batch uses.",
             "在同一底座上服务的 LoRA 适配器数（multi-LoRA），全部常驻于每个副本：其显存从 KV 缓存中扣除，每个解码步"
             "读取本批次用到的适配器。")),
    _o("--adapter-rank", 1, 512, kind=int, default=16,
       help=("Rank of the largest adapter (vLLM reserves its next --max-lora-rank choice).",
             "最大适配器的秩（vLLM 按不小于它的下一档 --max-lora-rank 预留）。")),
    Option("profile", "--profile", str,
           help=("Daily traffic: 24 hourly mean rates, e.g. 2,2,1,…,3,2 (hour 0 first), or a CSV file of hour,rps "
                 "rows. The fleet is sized for its peak; the plan prices following it with autoscaling against a "
                 "fixed peak fleet.", "每日流量：24 个每小时平均速率，例如 2,2,1,…,3,2（从 0 点开始），或 hour,rps "
                 "行的 CSV 文件。集群按其峰值规划；方案对比按流量自动扩缩容与固定峰值集群两种方式的费用。")),
    Option("buckets", "--bucket", list,
           help=("A request-size bucket PROMPT:OUTPUT:SHARE, e.g. 512:128:0.7 (repeatable; shares add up to 1; "
                 "replaces --prompt/--output).", "一种请求规格 PROMPT:OUTPUT:SHARE，例如 512:128:0.7（可重复；占比之和"
                 "为 1；代替 --prompt/--output）。")),
    Option("percentiles", "--percentile", list,
           help=("Request lengths at a percentile PCT:PROMPT:OUTPUT, e.g. 90:2000:400 (repeatable; each interval "
                 "between percentiles becomes a bucket at its upper lengths; replaces --prompt/--output).",
                 "某个分位数上的请求长度 PCT:PROMPT:OUTPUT，例如 90:2000:400（可重复；相邻分位数之间的请求成为一种请求"
                 "规格，按区间上端的长度计；代替 --prompt/--output）。")),
    Option("tolerate", "--tolerate", str, "zone", choices=("zone", "region", "none"),
           help=("Failure domain the fleet must survive losing: zone, region or none.",
                 "集群须能承受失去的故障域：zone、region 或 none。")),
    Option("regions", "--region", list,
           help=("Only offers in these regions (repeatable).", "只用这些区域的报价（可重复）。"),
           helps=(("history", "Region (repeatable).", "区域（可重复）。"),
                  ("refresh", "Region to price, repeatable: 'aws:us-west-2' for one provider, a bare name for every "
                   "provider priced per region (AWS, Azure, Tencent Cloud, Alibaba Cloud); default: us-east-1, "
                   "eastus, ap-beijing/ap-shanghai/ap-guangzhou, and the catalog's Alibaba Cloud regions.",
                   "要询价的区域，可重复：'aws:us-west-2' 只对一家云厂商，不带前缀的名称对所有按区域定价的云厂商（AWS、"
                   "Azure、腾讯云、阿里云）；默认：us-east-1、eastus、ap-beijing/ap-shanghai/ap-guangzhou，以及目录中的"
                   "阿里云区域。"))),
    Option("allow_marketplace", "--allow-marketplace", bool, False,
           help=("Allow marketplace / community hosts, which production serving leaves out.",
                 "允许市场/社区主机（生产环境的在线服务默认不用）。")),
    Option("users", "--users", Market, Market.GLOBAL,
           help=("Where the users are: cn (mainland China: the plan carries the China compliance checklist, and "
                 "says when data export rules apply) or global.",
                 "用户所在地：cn（中国大陆：方案附中国合规清单，并说明何时适用数据出境规则）或 global。")),
    Option("guard", "--guard", str, "none",
           help=(f"Content-safety guard: a guard model ({_GUARDS}) sized as a second model, api (a moderation "
                 "service, mainland for --users cn), api:SERVICE, or none.",
                 "内容安全护栏：护栏模型（Llama-Guard-3-1B、Llama-Guard-3-8B、Llama-Guard-4-12B、ShieldGemma-2B、"
                 "ShieldGemma-9B、Qwen3Guard-Gen-0.6B、Qwen3Guard-Gen-4B、Qwen3Guard-Gen-8B）作为第二个模型一并规划，"
                 "api（内容审核服务；--users cn 时用境内服务），api:SERVICE，或 none。")),
    Option("guard_mode", "--guard-mode", str, "serial", choices=("serial", "parallel"),
           help=("serial: the guard checks the prompt before the main prefill (its time comes out of the TTFT "
                 "target); parallel: alongside it, the first token held for the verdict.",
                 "serial：护栏在主模型预填充之前检查提示词（其耗时从首字延迟目标中扣除）；parallel：与预填充同时进行，"
                 "首个 token 等审核结论出来再发出。")),
    # the command line's choices of one run (an estimate's task and GPU; the tiers a plan rents; rent or buy)
    Option("task", "--task", Task, Task.INFER,
           help=("infer, serve, finetune or pretrain.", "任务：infer、serve、finetune 或 pretrain。")),
    Option("gpu", "--gpu", str, "H100", by_command=(("offers", None), ("buy", None)),
           kind_in=(("offers", list), ("buy", list)), required_in=("history",),
           help=("GPU name, e.g. H100, 4090, A100-80GB.", "显卡名称，例如 H100、4090、A100-80GB。"),
           helps=(("offers", "GPU name; a family (A100) also matches its variants (A100-80GB). Repeatable.",
                   "显卡名称；系列名（A100）也匹配其各型号（A100-80GB）。可重复。"),
                  ("buy", "GPU(s) to price (repeatable).", "要报价的显卡（可重复）。"),
                  ("history", "GPU name (aliases work), e.g. H100.", "显卡名称（可用别名），例如 H100。"))),
    Option("tiers", "--tier", list,
           help=("Pricing tiers to plan with: on-demand, spot, reserved, marketplace (repeatable; default: on-demand "
                 "and spot).", "参与规划的计费方式：on-demand、spot、reserved、marketplace（可重复；默认 on-demand 和 "
                 "spot）。"),
           helps=((_SERVE, "Pricing tiers the fleet may rent: on-demand, spot, reserved, marketplace (repeatable; "
                   "default: on-demand, with spot under --spot; reserved is a committed term, paid whether or not the "
                   "instance runs).", "服务集群可租用的计费方式：on-demand、spot、reserved、marketplace（可重复；默认 "
                   "on-demand，加 --spot 时含 spot；reserved 为承诺期限（包月/包年），无论实例是否运行都要付费）。"),
                  ("offers", "Only these pricing tiers: on-demand, spot, reserved, marketplace (repeatable).",
                   "只看这些计费方式：on-demand、spot、reserved、marketplace（可重复）。"),
                  ("history", "on-demand, spot, reserved or marketplace.",
                   "计费方式：on-demand、spot、reserved 或 marketplace。")),
           kind_in=(("history", str),)),
    Option("compare_buy", "--compare-buy", bool, False,
           help=("Also compare buying the picked GPUs.", "同时比较买下推荐方案的显卡。")),
    # listings
    Option("vendor", "--vendor", str, help=("NVIDIA, AMD, Intel, Google, Huawei.",
                                            "厂商：NVIDIA、AMD、Intel、Google、Huawei。")),
    Option("segment", "--segment", str, choices=SEGMENTS,
           help=("datacenter, workstation, consumer, tpu or npu.",
                 "类别：datacenter、workstation、consumer、tpu 或 npu。")),
    Option("sort", "--sort", str, by_command=(("gpus", "name"), ("offers", "gpu-price")),
           help=("name, memory, bandwidth, bf16, fp8, year or tdp.",
                 "排序：name、memory、bandwidth、bf16、fp8、year 或 tdp。"),
           helps=(("offers", "gpu-price, price, gpus, age or provider.",
                   "排序：gpu-price、price、gpus、age 或 provider。"),)),
    Option("wide", "--wide", bool, False, help=("Also show architecture, form factor, usable memory and interconnect.",
                                                "同时显示架构、形态、可用显存和互联。")),
    Option("exact", "--exact", bool, False, typed=("--exact/--no-exact",),
           help=("Match --gpu names exactly, without variants.", "--gpu 名称精确匹配，不含其他型号。")),
    Option("provider", "--provider", list, help=("Provider (repeatable).", "云厂商（可重复）。")),
    Option("points", "--points", bool, False,
           help=("Every stored price, not one line per offer.", "列出存下的每个价格，而不是每个报价一行。")),
    _o("--limit", 0, 1e6, zero="all", kind=int, default=40,
       help=("Show at most this many rows (0 = all).", "最多显示这么多行（0 = 全部）。")),
    _o("--min-gpus", 0, 1e5, above=True, help=("At least this many GPUs per instance.", "每个实例至少这么多张卡。")),
    _o("--min-memory", 0, 2**50, above=True, fmt=lambda n: fmt_bytes(n, 0), form="SIZE",
       help=("Smallest memory, e.g. 48GB.", "最小显存，例如 48GB。")),
    # a comparison
    Option("model", "--model", str, "Llama-3.1-8B", help=("Model to compare on.", "用来比较的模型。")),
    # rent or buy
    _o("--hours-per-month", 0, 744, unit="hours", by_command=(("buy", 200),),
       help=("Use per month, for --compare-buy.", "每月使用时长，用于 --compare-buy。"),
       helps=(("buy", "Hours of use per month.", "每月使用小时数。"),)),
    _o("--years", 0, 50, above=True, unit="years",
       help=("Depreciation period in years (default 3).", "折旧年限（默认 3 年）。")),
    _o("--electricity", 0, 100, unit="per kWh", form="MONEY",
       help=("Electricity price per kWh, e.g. 0.6CNY.", "每千瓦时电价，例如 0.6CNY。")),
    _o("--pue", 1, 4, hint="facility power over IT power: 1.0 at a desk, 1.1-1.6 in a data center",
       help=("Power usage effectiveness (1.0 at a desk).", "电能使用效率 PUE（放在办公桌上为 1.0）。")),
    # the server
    Option("host", "--host", str, "127.0.0.1",
           help=("Address to listen on: 127.0.0.1 (this machine only), or an address of this machine, or 0.0.0.0 for "
                 "every interface (then use a --token).",
                 "监听地址：127.0.0.1（仅本机）、本机的某个地址，或 0.0.0.0（所有网卡；此时请用 --token）。")),
    _o("--port", 1, 65535, kind=int, default=8000, help=("Port to listen on.", "监听端口。")),
    Option("token", "--token", str, env="GPUPLAN_WEB_TOKEN",
           help=("Require this secret (16+ characters) on every request: header 'Authorization: Bearer TOKEN', or "
                 "open /?token=TOKEN once in the browser (also GPUPLAN_WEB_TOKEN).",
                 "每个请求都须带上这个密钥（至少 16 个字符）：请求头 'Authorization: Bearer TOKEN'，"
                 "或在浏览器中打开一次 /?token=TOKEN（也可用 GPUPLAN_WEB_TOKEN）。")),
    _o("--workers", 1, 64, kind=int, default=1,
       help=("Server processes (uvicorn workers): plans run in parallel on as many cores.",
             "服务进程数（uvicorn worker）：方案在这么多个核上并行计算。")),
)

# The options of each command, in the order its help lists them (the command line's other options, --export,
# --out, --json and --csv, follow): a new option is its row above and its name here. The job commands' come first.
PLAN_CONSTRAINTS = ("market", "providers", "gpus", "exclude_gpus", "max_gpus", "budget", "deadline_s", "spot",
                     "tiers", "currency", "objective", "top")
COMMANDS: dict[str, tuple[str, ...]] = {
    "estimate": ("task", "method", "gpu", "n_gpus", "tp", "pp", "zero", "micro_batch", "grad_accum", "recompute",
                 "precision", "optimizer", "framework", "samples", "tokens_per_sample", "epochs", "tokens", "seq_len",
                 "prompt", "output", "batch", "requests", "engine", "quant", "kv_dtype", "lora_rank", "lora_targets",
                 "train_embeddings", "prefix_len", "mtp_layers"),
    "plan finetune": ("method", "samples", "tokens_per_sample", "epochs", "dataset_tokens", "seq_len", "lora_rank",
                      "lora_targets", "train_embeddings", "framework", "quant", "global_batch", *PLAN_CONSTRAINTS,
                      "compare_buy", "hours_per_month"),
    "plan pretrain": ("tokens", "seq_len", "global_batch", "framework", *PLAN_CONSTRAINTS),
    "plan infer": ("prompt", "output", "batch", "requests", "quant", "engine", *PLAN_CONSTRAINTS),
    "plan serve": ("rps", "peak_rps", "profile", "prompt", "output", "buckets", "percentiles", "ttft_s",
                   "ttft_p99_s", "tpot_s", "tpot_p99_s", "availability", "tolerate", "regions", "spot",
                   "allow_marketplace", "tiers", "prefix_hit", "max_per_offer", "adapters", "adapter_rank", "quant",
                   "engine", "market", "providers", "gpus", "exclude_gpus", "users", "budget", "guard", "guard_mode",
                   "currency"),
    # the other commands' options
    "gpus": ("market", "min_memory", "vendor", "segment", "sort", "wide"),
    "offers": ("gpu", "exact", "market", "currency", "spot", "tiers", "provider", "min_gpus", "sort", "limit"),
    "refresh": ("regions",),
    "history": ("gpu", "provider", "regions", "tiers", "points"),
    "platforms": ("market",),
    "fit": ("context", "gpus"),
    "compare": ("model",),
    "buy": ("gpu", "n_gpus", "hours_per_month", "market", "currency", "years", "pue", "electricity"),
    "web": ("host", "port", "token", "workers"),
}


def of_command(command: str) -> tuple[Option, ...]:
    """The options the job command ``command`` (``plan serve``) takes, in the order its help lists them."""
    return tuple(option(name) for name in COMMANDS[command])


def help_catalogue() -> dict[str, str]:
    """Every help text of the table, English to Chinese (part of the CLI's catalogue, :data:`gpuplan.i18n.ZH`)."""
    pairs = [o.help for o in OPTIONS] + [(en, zh) for o in OPTIONS for _, en, zh in o.helps]
    return {en: zh for en, zh in pairs if en}


# every number a user gives, by flag (the HTTP API's fields take the same ranges, in the same units)
RANGES: dict[str, Range] = {o.flag: o.range for o in OPTIONS if o.range is not None}


@cache
def _by_name() -> dict[str, Option]:
    return {o.name: o for o in OPTIONS}


def option(name: str) -> Option:
    """The row of ``name`` (the library's and the HTTP API's name, e.g. ``ttft_s``)."""
    return _by_name()[name]


def option_of_arg(arg: str) -> Option:
    """The row of the Python API's keyword (the command line's parameter name) ``arg``: ``ttft`` → ``ttft_s``."""
    return _by_arg()[arg]


@cache
def _by_arg() -> dict[str, Option]:
    return {o.arg: o for o in OPTIONS}


def default(name: str, command: str = "estimate") -> Any:
    """The default of option ``name`` in ``command`` (``plan finetune``), as a plain value (an enum's text)."""
    value = option(name).default_for(command)
    return value.value if isinstance(value, StrEnum) else value


def defaults(command: str) -> dict[str, Any]:
    """Every option's default in ``command``, by name, as plain values (an enum's text)."""
    return {o.name: default(o.name, command) for o in OPTIONS}


def of_stage(stage: str) -> tuple[Option, ...]:
    """The options one library call takes (``job``, ``layout``, ``plan``), in the table's order."""
    return tuple(o for o in OPTIONS if stage in o.stages)


def with_defaults(stage: str, command: str, given: dict[str, Any]) -> dict[str, Any]:
    """Every option of ``stage`` with the user's value where given, else ``command``'s default; a name the stage
    does not take is a TypeError (a caller's bug, as an unknown keyword argument is)."""
    rows = of_stage(stage)
    names = {o.name for o in rows}
    for name in given:
        if name not in names:
            raise TypeError(f"unexpected option {name!r}; the {stage} options are: {', '.join(sorted(names))}")
    return {o.name: o.default_for(command) for o in rows} | given


def check_ranges(stage: str, values: dict[str, Any]) -> None:
    """Every number of ``values`` within its option's range; a 0 where 0 is the default means "not given", and
    an option of choices (``--zero``) is checked as a choice."""
    for o in of_stage(stage):
        value = values.get(o.name)
        if o.range is not None and not o.choices and value is not None and not (value == 0 and o.default == 0):
            check_range(o.flag, value)


def refuse_inapplicable(stage: str, given: Collection[str], task: Task | None = None,
                        method: Method | None = None) -> None:
    """Refuse the first option of ``stage`` in ``given`` that does not apply to ``task`` (the kind of task
    first, then the task itself) or to ``method``."""
    rows = [o for o in of_stage(stage) if o.name in given]
    for err in (*(o.applies.task_refusal(o.flag, task) for o in rows if task is not None and _kind_differs(o, task)),
                *(o.applies.task_refusal(o.flag, task) for o in rows if task is not None),
                *(o.applies.method_refusal(o.flag, method) for o in rows if method is not None)):
        if err is not None:
            raise err


def _kind_differs(o: Option, task: Task) -> bool:
    tasks = o.applies.tasks
    return tasks is not None and all(t.is_training != task.is_training for t in tasks)


def check_range(flag: str, value: float | None, typed: str | None = None) -> None:
    """``value`` (None: not given) lies in the range :data:`RANGES` states for ``flag``; ``typed`` is the text
    the user typed, when that differs from the number (``2d`` for 172800 seconds)."""
    if value is None or isinstance(value, bool):
        return
    r = RANGES[flag]
    if r.contains(value):
        return
    given = typed if typed is not None else shown(value)
    raise InputError(flag, f"{given} is out of range: {flag} takes {r.text()} ({r.hint})." if r.hint else
                     f"{given} is out of range: {flag} takes {r.text()}.",
                     f"give {flag} {r.text()}; check its unit." if r.high > 1e6 else f"give {flag} {r.text()}.")


def shown(value: float) -> str:
    """A number for a message: a huge integer as its digit count, not as all its digits."""
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"a {len(str(abs(value)))}-digit number"
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


@cache
def _by_flag() -> dict[str, Option]:
    return {o.flag: o for o in OPTIONS}


def option_of_flag(flag: str) -> Option:
    """The row of the command line's ``flag`` (``--ttft`` → ``ttft_s``)."""
    return _by_flag()[flag]


def flag_form(flag: str) -> str:
    """The text form the option ``flag`` is typed in (COUNT, DURATION, ...; empty: none)."""
    o = _by_flag().get(flag)
    return o.form if o else ""


def flag_choices(flag: str) -> tuple[str, ...] | None:
    """The values the option ``flag`` takes, where it is a choice (None: any text or number)."""
    o = _by_flag().get(flag)
    if o is None:
        return None
    if isinstance(o.kind, type) and issubclass(o.kind, StrEnum):
        return tuple(m.value for m in o.kind)
    return o.choices or None


def names(stages: Iterable[str]) -> tuple[str, ...]:
    """The Python API's keywords (:attr:`Option.arg`) of the options of ``stages``."""
    return tuple(dict.fromkeys(o.arg for s in stages for o in of_stage(s)))
