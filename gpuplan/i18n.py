"""English and Chinese labels for what gpuplan shows people.

``tr(text)`` returns ``text`` in English and its Chinese form when the language is ``zh`` (``--lang zh``,
``GPUPLAN_LANG=zh`` or a ``zh_CN`` locale). Keys are the English strings themselves, so a missing translation
shows English. :data:`ZH` is the one catalogue of the CLI and the web page (served by ``/api/meta``): labels,
and the help of every command and option (:mod:`gpuplan.i18n_help`). JSON and CSV are made in English whatever
the language (keys and values are an interface); a plan's JSON carries its explanation in both languages.

Sentences the library builds with values in them (error messages and fixes, assumption values, notes) are
translated by :func:`translate` through :data:`TEMPLATES` (:mod:`gpuplan.i18n_sentences`): each key is the
sentence's source text with every interpolated expression written ``{expression}``, and its value the Chinese
with the same ``{expression}`` holes (``{expression|t}``: the value is translated too; ``{expression|l}``: a list
of phrases, each translated). The English and the
Chinese of a sentence sit side by side, and ``scripts/i18n_templates.py`` lists every sentence of the source
that has no Chinese form (a test fails on one).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Iterator, Sequence
from contextvars import ContextVar

from gpuplan.i18n_help import HELP

LANGS = ("en", "zh")
LANG_NAMES = ("en", "zh", "zh-CN")  # what --lang accepts
_lang: ContextVar[str] = ContextVar("gpuplan_lang", default="")


def __getattr__(name: str) -> dict[str, str]:
    """:data:`TEMPLATES` (:mod:`gpuplan.i18n_sentences`), read when first asked for: only Chinese text and the web
    page's catalogue need it, and an English command is spared reading its 600-odd sentences."""
    if name == "TEMPLATES":
        from gpuplan.i18n_sentences import TEMPLATES

        return TEMPLATES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

ZH: dict[str, str] = {
    # compliance checklist (plan serve)
    "China compliance checklist": "中国合规清单",
    # listing headers
    "GPU": "显卡", "Vendor": "厂商", "Segment": "类别", "Architecture": "架构", "Form": "形态",
    "Memory": "显存", "Usable": "可用显存", "Bandwidth": "带宽", "BF16/FP16": "BF16/FP16", "FP8": "FP8",
    "Link": "互联", "TDP": "功耗", "Year": "年份", "China export": "对华出口", "Provider": "云厂商",
    "Instance": "实例", "GPUs": "卡数", "Region": "区域", "Pricing": "计费", "Price/h": "价格/小时",
    "Per GPU-h": "每卡时", "Age": "价格时效", "Model": "模型", "Family": "系列", "Params": "参数量",
    "Active": "激活参数", "Layers": "层数", "Hidden": "隐藏维度", "Heads": "注意力头", "KV heads": "KV 头",
    "Experts": "专家数", "Context": "上下文", "Source": "来源", "Platform": "平台", "Tier": "档位",
    "Quota": "配额", "Session": "单次时长", "Price": "价格",
    # titles
    "Accelerators": "加速卡", "Cloud offers": "云 GPU 报价", "Model presets": "预置模型",
    "Free and cheap platforms": "免费与低价算力平台", "Parameter breakdown": "参数构成",
    "Memory per GPU": "单卡显存", "Time": "时间", "Time if it fit": "若能装下，时间",
    "Speed if it fit": "若能装下，速度", "Assumptions": "假设", "Plans": "方案",
    "Part": "部分", "Value": "数值", "Share": "占比", "Band (p10–p90)": "误差带 (p10–p90)",
    "Total": "合计", "Cost": "费用", "Fits": "能否装下", "Why": "原因", "Pick": "推荐",
    "Pareto front (cost vs time)": "帕累托前沿（费用 vs 时间）", "Hours": "小时", "Config": "配置",
    "Memory needed": "所需显存", "Memory available": "可用显存", "Throughput": "吞吐",
    "Use case": "使用场景", "Smallest fit": "最小可行配置", "Replicas": "副本数",
    "Rent vs buy": "租用 vs 购买", "Break-even": "回本点", "TTFT / TPOT": "首字延迟 / 每字延迟",
    "Seqs/replica": "单副本并发", "Settings": "设置", "Measure": "指标", "Configurations": "配置",
    "Purchase (incl. host)": "购置（含主机）", "Own": "自有成本", "Rent": "租用成本", "Verdict": "结论",
    "Guaranteed": "保证有卡", "nothing up to 8 GPUs": "8 卡以内都装不下", "error": "错误", "Saving": "节省",
    "Cost per hour": "每小时费用", "Epochs": "轮数", "First-token target (s)": "首字延迟目标（秒）",
    "Per-token target (ms)": "每字延迟目标（毫秒）", "Only these providers": "只用这些云厂商",
    "At most GPUs": "最多卡数", "Budget (in the currency)": "预算（所选币种）", "Deadline (days)": "期限（天）",
    "Per 1M output tokens": "每百万输出 token",
    "Cheaper alternatives": "更省钱的改动",
    # architecture parts a config may declare that gpuplan does not model (gpuplan.catalog.hfconfig)
    "a sparse-attention indexer (DeepSeek Sparse Attention), whose weights and key cache":
        "稀疏注意力索引器（DeepSeek Sparse Attention），其权重和键缓存",
    "per-layer block shapes (DeciLM / Nemotron NAS: layers that differ in width or skip attention), whose parameters":
        "逐层不同的块结构（DeciLM / Nemotron NAS：各层宽度不同或跳过注意力），其参数",
    "hybrid Mamba-2 / attention / MoE layers (Nemotron-H), whose parameters and recurrent state":
        "Mamba-2 / 注意力 / MoE 混合层（Nemotron-H），其参数和循环状态",
    "free": "免费", "pay per use, rate not published": "按量付费，未公布单价", "Held-out band": "留出误差带",
    # sentences
    "days old": "天前", "no offers match": "没有符合条件的报价", "does not fit": "装不下", "fits": "装得下",
    "weights": "权重", "kv_cache": "KV 缓存", "activations": "激活值", "gradients": "梯度",
    "optimizer": "优化器状态", "master_weights": "FP32 主权重", "adapter": "适配器", "workspace": "工作区",
    "logits": "logits", "overhead": "CUDA/框架开销", "dequant": "反量化缓冲", "prefix": "前缀",
    "zero_buckets": "ZeRO 梯度归约缓冲", "optimizer_temporaries": "优化器更新的临时张量",
    "dequantized_saved": "为反向保存的反量化权重",
    "output_layer_copy": "autocast 为反向保存的输出层 bf16 副本",
    "load_workspace": "加载时量化留下的缓存",
    "compute_buffer": "计算缓冲区", "previous_kv_cache": "上一步的 KV 缓存", "repeated_kv": "扩展到每个头的键值副本",
    "rotary_tables": "每层各自的旋转位置编码表", "quantize_at_load": "加载时 int8 量化的峰值",
    "cheapest": "最便宜", "fastest": "最快", "best value": "性价比最高",
    "memory_bound_ops": "访存受限算子", "launch_stall": "CPU 启动等待", "notes": "备注",
    "Changes that would make it fit": "能让它装下的改动",
    "by": "按", "fine-tune": "微调", "pretraining": "预训练", "batch inference": "批量推理", "serving": "在线服务",
    "tokens": "tokens", "requests of": "个请求，每个", "incl.": "含", "start-up": "启动",
    # breakdown parts not named above (memory: allocator slack; time: training steps, inference phases)
    "allocator_slack": "分配器预留", "compute": "计算", "optimizer_step": "优化器更新", "dequantize": "权重反量化",
    "data_parallel_comm": "数据并行通信", "tensor_parallel_comm": "张量并行通信", "pipeline_bubble": "流水线气泡",
    "pipeline_parallel_comm": "流水线并行通信", "expert_gemm_launches": "逐专家 GEMM 启动",
    "prefill": "预填充", "decode": "解码",
    # serving fleets (gpuplan.present_serving)
    "Fleet": "服务集群", "Instances": "实例数", "Bucket": "请求规格", "req/s": "请求/秒",
    "Routing with nothing lost": "无故障时的请求分配", "Note": "注意", "Assumption": "假设", "Guard": "内容安全模型",
    # the web page's labels (gpuplan/web/static: its forms, tables and charts), served by /api/meta
    "sources left out of the fit": "来源不参与拟合时",
    "Which GPU, where, how many, how long, at what cost.": "用哪种显卡、在哪里租、几张、多久、花多少钱。",
    "Plan": "方案", "Estimate": "估算", "Task": "任务", "pretrain": "预训练", "Method": "方法", "full": "全量",
    "freeze": "冻结部分层", "Samples": "样本数", "Tokens per sample": "每条样本 token 数",
    "Training tokens": "训练 token 数", "Requests": "请求数", "Requests per second": "每秒请求数",
    "Prompt tokens": "输入 token 数", "Output tokens": "输出 token 数", "Market": "市场", "any": "不限",
    "China (CNY)": "中国大陆（人民币）", "global": "海外", "Currency": "币种", "market's": "随市场",
    "Objective": "目标", "best value (work per money)": "性价比最高", "Only these GPUs": "只用这些显卡",
    "Spot instances": "竞价实例", "allowed": "允许", "only spot": "只用竞价实例", "no spot": "不用竞价实例",
    "Make a plan": "生成方案", "Memory per GPU of the pick": "推荐方案的单卡显存", "Tensor parallel": "张量并行",
    "Precision": "精度", "ZeRO stage": "ZeRO 阶段", "Micro-batch": "微批大小",
    "Activation checkpointing": "激活重计算", "none": "不用", "selective": "选择性", "Sequence length": "序列长度",
    "Batch": "批大小", "Weight format": "权重格式", "Engine": "推理引擎", "Rank": "排名", "Notes": "备注",
    "Memory needed / available": "所需 / 可用显存", "per hour": "每小时", "To fix": "解决办法", "headroom": "余量",
    "capacity": "容量", "needed to run": "运行所需", "Working…": "计算中…", "No plan": "没有可行方案", "Change": "改动",
    "Time (log scale)": "时间（对数坐标）", "Cost (log scale)": "费用（对数坐标）", "other plans": "其他方案",
    "Speed": "速度", "configurations fit of": "个配置装得下，共考虑", "considered": "个", "tokens/s": "token/秒",
    "GPU-hours": "卡时", "replicas": "副本", "Could not reach the gpuplan server.": "无法连接 gpuplan 服务。",
    "Name": "名称", "models": "个模型", "offers": "条报价", "providers": "家云厂商", "calibration": "校准于",
    "Serving": "在线服务", "Pipeline stages": "流水线段数", "Gradient accumulation": "梯度累积步数",
    "Open the pick in the estimate tab": "在估算页打开推荐配置", "Pareto front": "帕累托前沿",
    "Framework": "训练框架",
    # the web page's serving tab (POST /api/serve): its form, headline figures, fleet table and chart, checklist
    "Mean requests per second": "平均每秒请求数", "Peak requests per second": "峰值每秒请求数",
    "TTFT p50 target (s)": "首字延迟 p50 目标（秒）", "TTFT p99 target (s)": "首字延迟 p99 目标（秒）",
    "TPOT p50 target (ms)": "每字延迟 p50 目标（毫秒）", "TPOT p99 target (ms)": "每字延迟 p99 目标（毫秒）",
    "Request sizes (prompt, output tokens and share of the traffic)": "请求规格（输入、输出 token 数及流量占比）",
    "Add a request size": "添加一种请求规格", "Remove this size": "删除此规格", "Sizes given as": "规格给法",
    "shares of the traffic": "按流量占比", "length percentiles": "按长度分位数", "Percentile (%)": "分位数（%）",
    "Availability target (%)": "可用性目标（%）", "Survive the loss of": "须能承受失去", "a zone": "一个可用区",
    "a region": "一个区域", "nothing": "不考虑故障", "Spot capacity allowed": "允许使用竞价实例",
    "Marketplace hosts allowed": "允许使用算力市场/社区主机", "Users are in": "用户所在地",
    "anywhere but mainland China": "中国大陆以外", "mainland China": "中国大陆", "Only these regions": "只用这些区域",
    "Prefix-cache hit (share, 0–0.99)": "前缀缓存命中率（比例，0–0.99）",
    "Budget per hour (in the currency)": "每小时预算（所选币种）", "At most instances per offer": "每个报价最多实例数",
    "Plan the fleet": "规划服务集群", "Fleet at peak": "峰值时的服务集群",
    "Replicas per GPU type, zone and pricing": "按显卡型号、可用区和计费方式的副本数", "Region / zone": "区域 / 可用区",
    "Cost per hour at peak": "峰值每小时费用", "Cost per hour at the mean rate": "平均负载每小时费用",
    "Per 1M input tokens": "每百万输入 token", "Expected availability": "预计可用性", "target": "目标",
    "SLO-violation minutes per month": "每月未达延迟目标分钟数", "Recovery of a lost replica": "故障副本恢复时间",
    "provisioning": "开机准备", "weight load": "加载权重", "warm-up": "预热",
    "Replicas at peak / at the mean rate": "峰值 / 平均负载副本数",
    "Peak raised for availability by": "为满足可用性峰值上调",
    "Best single-GPU-type fleet": "最优单一型号集群", "the fleet is that fleet: one GPU type": "本方案即为单一型号",
    "the mix saves": "混合方案节省", "on-demand: solid": "按需：实心", "spot: hatched": "竞价：斜纹",
    "on-demand": "按需", "spot": "竞价", "reserved": "预留", "marketplace": "算力市场", "yes": "是", "no": "否",
    "mean": "平均", "peak": "峰值", "pools": "个资源池", "configurations": "种配置", "failure scenarios": "种故障情形",
    "planned in": "用时", "optimality gap": "最优性差距",
    "TTFT / TPOT p99 at the most a replica is given": "首字/每字延迟为单副本满载时的 p99",
    "Content-safety guard": "内容安全护栏", "Guard model": "护栏模型", "Where it runs": "部署位置",
    "Added TTFT p99": "增加的首字延迟 p99", "Moderation service": "内容审核服务",
    "on its own GPUs": "单独的 GPU", "beside the main model, on its GPUs": "与主模型共用 GPU",
    "on MIG slices": "MIG 切片", "a moderation service": "内容审核服务", "at peak": "峰值",
    "at the mean rate": "平均负载", "Added to the first token (p50 / p99)": "首字延迟增加（p50 / p99）",
    "Guard availability": "护栏可用性", "serial": "串行", "parallel": "并行",
    "in the main fleet's cost (it shares its GPUs)": "已含在主集群费用中（共用其 GPU）",
    "The guard checks the prompt": "护栏检查提示词", "before the prefill (serial)": "在预填充之前（串行）",
    "alongside the prefill (parallel)": "与预填充同时（并行）",
    "Rule": "规定", "Issued / in force": "发布 / 施行", "What it asks": "要求",
    "Changes the plan": "影响方案", "checked": "核对于",
    "Daily profile: 24 hourly mean req/s (instead of the mean)": "日流量曲线：24 个小时的平均每秒请求数（代替平均值）",
    "LoRA adapters (multi-LoRA)": "LoRA 适配器数（多 LoRA）", "Largest adapter rank": "最大适配器秩",
    "Per day following the profile": "按日流量曲线每天费用", "peak fleet all day": "峰值集群全天",
    # the assumptions tables' names (gpuplan.estimate)
    "linear-attention state": "线性注意力状态",
    "runner": "本地运行器", "context": "上下文长度", "runner defaults": "运行器默认设置", "partial offload": "部分卸载",
    "readout": "速度读数",
    "weight format": "权重格式", "KV cache": "KV 缓存", "engine": "推理引擎", "CUDA context (outside PyTorch)":
        "CUDA 上下文（PyTorch 之外）", "framework workspace (cuBLAS, buffers)": "框架工作区（cuBLAS、缓冲区）",
    "compute buffer": "计算缓冲区", "runtime context": "运行时上下文", "previous step's KV cache": "上一步的 KV 缓存",
    "keys and values widened to every head": "扩展到每个注意力头的键和值",
    "rotary tables in every layer": "每层各自的旋转位置编码表", "int8 quantization at load": "加载时的 int8 量化",
    "trainable parameters": "可训练参数", "bytes per trainable parameter": "每个可训练参数的字节数",
    "modeling code": "建模代码",
    "parallelism": "并行方式", "loss": "损失", "allocator slack": "分配器预留",
    "allocator reserve on resident tensors": "常驻张量的分配器预留", "peak moment": "显存峰值时刻",
    "optimizer states": "优化器状态", "FLOPs per token": "每 token 浮点运算量",
    "multi-token prediction": "多 token 预测（MTP）",
    "fp4 gemm share": "FP4 GEMM 效率比例", "matmul ceiling": "矩阵乘法上限",
    "NVFP4 training": "NVFP4 训练", "standard attention": "标准（非融合）注意力",
    "utilisation": "利用率", "links": "互联", "steps": "步数", "memory bandwidth": "显存带宽",
    "memory-bound kernels": "访存受限算子",
    "16-bit tensor peak": "16 位张量峰值", "framework": "训练框架", "engine efficiency": "引擎效率", "batch": "批大小",
    "CUDA graphs": "CUDA 图", "weight load rate": "权重读取速率", "host time per sequence": "每条序列的主机时间",
    "never": "永不回本",
    "LoRA adapters": "LoRA 适配器",
    **HELP,
}


# English words for the breakdown parts, whose keys are the JSON's (snake_case): tables and the page's legends
EN: dict[str, str] = {
    "kv_cache": "KV cache", "master_weights": "FP32 master weights", "optimizer": "optimizer states",
    "allocator_slack": "allocator slack", "overhead": "CUDA/framework overhead", "dequant": "dequantization buffer",
    "zero_buckets": "ZeRO gradient reduce buffers", "optimizer_temporaries": "optimizer step temporaries",
    "dequantized_saved": "dequantized weights saved for backward",
    "output_layer_copy": "bf16 copy of the fp16 output layer autocast keeps for backward",
    "load_workspace": "pool left by quantizing on load",
    "compute_buffer": "compute buffer", "previous_kv_cache": "previous step's KV cache",
    "repeated_kv": "keys and values widened to every head", "rotary_tables": "rotary tables in every layer",
    "quantize_at_load": "int8 quantization at load",
    "memory_bound_ops": "memory-bound kernels", "launch_stall": "kernel-launch stall",
    "optimizer_step": "optimizer step", "dequantize": "weight dequantization",
    "data_parallel_comm": "data-parallel communication", "tensor_parallel_comm": "tensor-parallel communication",
    "pipeline_bubble": "pipeline bubble", "pipeline_parallel_comm": "pipeline-parallel communication",
    "expert_gemm_launches": "per-expert GEMM launches",
}


def normalize(text: str) -> str | None:
    """The language a locale or tag names: ``zh``, ``zh-CN``, ``zh_CN.UTF-8`` → ``zh``; ``en_US``, ``C`` → ``en``;
    None for an empty one."""
    base = text.strip().split(".")[0].replace("_", "-").split("-")[0].lower()
    if not base:
        return None
    return "zh" if base == "zh" else "en"


def parse_lang(text: str, field: str) -> str:
    """A language the user named (``--lang``): one of :data:`LANG_NAMES`, any case."""
    from gpuplan.errors import InputError

    if text.replace("_", "-").lower() not in {n.lower() for n in LANG_NAMES}:
        raise InputError(field, f"'{text}' is not a language gpuplan speaks.", "use en or zh (zh-CN).")
    return normalize(text) or "en"


def set_lang(lang: str) -> None:
    _lang.set(lang)


@contextlib.contextmanager
def using(lang: str) -> Iterator[None]:
    """Make sentences in ``lang`` inside the block (JSON is made in English whatever the user's language)."""
    token = _lang.set(lang)
    try:
        yield
    finally:
        _lang.reset(token)


def lang() -> str:
    """``--lang``, else GPUPLAN_LANG, else the locale (LC_ALL, LC_MESSAGES, LANG), else English."""
    chosen = _lang.get()
    if chosen:
        return chosen
    for var in ("GPUPLAN_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        found = normalize(os.environ.get(var, ""))
        if found:
            return found
    return "en"


def tr(text: str) -> str:
    return ZH.get(text, text) if lang() == "zh" else EN.get(text, text)


def say(en: str, zh: str) -> str:
    """A sentence with numbers in it, given in both languages at the place it is built."""
    return zh if lang() == "zh" else en


def translate(text: str) -> str:
    """``text`` (a sentence the library built in English) in the current language: itself in English; in Chinese
    its label (:data:`ZH`) or its template's Chinese (:data:`TEMPLATES`) with the values put in, else itself."""
    if lang() != "zh" or not text:
        return text
    return zh_sentence(text)


def zh_sentence(text: str) -> str:
    """``text`` in Chinese whatever the language (the HTTP API sends both)."""
    from gpuplan.i18n_sentences import TEMPLATES

    exact = TEMPLATES.get(text) or ZH.get(text) or _range_zh(text)  # a range before "{n} seconds" takes it
    if exact:
        return exact
    for pattern, holes, zh in _patterns():
        m = pattern.match(text)
        if m:
            values = dict(zip(holes, m.groups(), strict=True))
            return _HOLE.sub(lambda h, found=values: _fill(h.group(0), found), zh)  # type: ignore[misc]
    return text


_NUM = r"\d[\d,.e+]*(?: [KMGTPE]?i?B)?"  # a bound as Range.text shows it: 1,000,000, 1e+15, 0 B, 1024 TiB
_RANGE = (rf"(?:more than (?P<low>{_NUM}) and at most (?P<high>{_NUM})|(?P<start>{_NUM}) to (?P<end>{_NUM}))"
          r"(?: (?P<unit>seconds \(10 years\)|seconds|percent|hours|years|per kWh))?"
          r"(?: \(0: (?P<zero>.+)\))?")
_RANGE_WORDS = {"seconds (10 years)": " 秒（10 年）", "seconds": " 秒", "percent": " %", "hours": " 小时",
                "years": " 年", "per kWh": "（每千瓦时）", "as many as fit": "装得下的最大值",
                "gpuplan chooses": "由 gpuplan 选择", "all": "全部"}


def _range_zh(text: str) -> str | None:
    """A range as :meth:`gpuplan.requests.Range.text` states it (``more than 0 and at most 50 years``), in
    Chinese; None for other text."""
    m = _range_pattern().fullmatch(text)
    if not m or not any(c.isdigit() for c in text):
        return None
    unit = _RANGE_WORDS.get(m["unit"] or "", "")
    span = f"大于 {m['low']}、至多 {m['high']}{unit}" if m["low"] else f"{m['start']} 到 {m['end']}{unit}"
    return span + (f"（0：{_RANGE_WORDS.get(m['zero'], m['zero'])}）" if m["zero"] else "")


@functools.cache
def _range_pattern() -> re.Pattern[str]:
    """:data:`_RANGE` compiled on first use: only Chinese text asks for it, and an English command is spared the
    compiling (about 0.6 ms of CPU)."""
    return re.compile(_RANGE)


_HOLE = re.compile(r"\{[^{}]*\}")
_MIN_LETTERS = 2  # a template with fewer letters of its own (e.g. "{a}: {b}") would match sentences it is not


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern[str], tuple[str, ...], str], ...]:
    """Every template with holes as a pattern (each hole a group), the one with the most text of its own first."""
    from gpuplan.i18n_sentences import TEMPLATES

    found = []
    for en, zh in TEMPLATES.items():
        holes = tuple(_HOLE.findall(en))
        literal = _HOLE.split(en)
        if not holes or sum(c.isalpha() for c in "".join(literal)) < _MIN_LETTERS:
            continue
        pattern = "(.*?)".join(re.escape(part) for part in literal)
        found.append((len("".join(literal)), re.compile(pattern + r"\Z", re.S), holes, zh))
    found.sort(key=lambda f: -f[0])
    return tuple((p, h, z) for _, p, h, z in found)


def _fill(hole: str, values: dict[str, str]) -> str:
    """A hole of a Chinese template filled: ``{x}`` with the value of ``{x}`` in the English, ``{x|t}`` with it
    translated."""
    name, _, how = hole[1:-1].partition("|")
    value = values.get("{" + name + "}", hole)
    if how == "l":  # a list of phrases, each translated
        return "，".join(zh_sentence(v) for v in value.split(", "))
    return zh_sentence(value) if how == "t" else value


def help_text(text: str | None) -> str | None:
    """A command's or option's help in the current language (whitespace as click folds it); a trailing
    "Range: …." that gpuplan adds is translated apart."""
    if not text or lang() != "zh":
        return text
    base, sep, rest = " ".join(text.split()).partition(" Range: ")
    zh = ZH.get(base, base) if base else ""
    return f"{zh}{'范围：' + zh_sentence(rest.removesuffix('.')) + '。' if sep else ''}"


def lang_of_argv(argv: Sequence[str]) -> str:
    """The language a command line asks for (``--lang X`` or ``--lang=X`` anywhere in it), else :func:`lang`:
    known before click parses it, so that help and usage errors are in that language."""
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else arg[7:] if arg.startswith("--lang=") \
            else None
        if value is not None and value.replace("_", "-").lower() in {n.lower() for n in LANG_NAMES}:
            return normalize(value) or "en"
    return lang()
