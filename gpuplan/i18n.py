"""English and Chinese labels for what gpuplan shows people.

``tr(text)`` returns ``text`` in English and its Chinese form when the language is ``zh`` (``--lang zh`` or
``GPUPLAN_LANG=zh``). Keys are the English strings themselves, so a missing translation shows English.
JSON and CSV keys are never translated: they are an interface.
"""

from __future__ import annotations

import os
from contextvars import ContextVar

LANGS = ("en", "zh")
LANG_NAMES = ("en", "zh", "zh-CN")  # what --lang accepts
_lang: ContextVar[str] = ContextVar("gpuplan_lang", default="")

ZH: dict[str, str] = {
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
    "Memory per GPU": "单卡显存", "Time": "时间", "Assumptions": "假设", "Plans": "方案",
    "Part": "部分", "Value": "数值", "Share": "占比", "Band (p10–p90)": "误差带 (p10–p90)",
    "Total": "合计", "Cost": "费用", "Fits": "能否装下", "Why": "原因", "Pick": "推荐",
    "Pareto front (cost vs time)": "帕累托前沿（费用 vs 时间）", "Hours": "小时", "Config": "配置",
    "Memory needed": "所需显存", "Memory available": "可用显存", "Throughput": "吞吐",
    "Use case": "使用场景", "Smallest fit": "最小可行配置", "Replicas": "副本数",
    "Rent vs buy": "租用 vs 购买", "Break-even": "回本点", "TTFT / TPOT": "首字延迟 / 每字延迟",
    "Seqs/replica": "单副本并发", "Settings": "设置", "Held-out band": "留出误差带",
    # sentences
    "days old": "天前", "no offers match": "没有符合条件的报价", "does not fit": "装不下", "fits": "装得下",
    "weights": "权重", "kv_cache": "KV 缓存", "activations": "激活值", "gradients": "梯度",
    "optimizer": "优化器状态", "master_weights": "FP32 主权重", "adapter": "适配器", "workspace": "工作区",
    "logits": "logits", "overhead": "CUDA/框架开销", "dequant": "反量化缓冲", "prefix": "前缀",
    "cheapest": "最便宜", "fastest": "最快", "best value": "性价比最高",
    "step_overhead": "每步框架开销", "notes": "备注", "Changes that would make it fit": "能装下的调整",
    "by": "排序", "fine-tune": "微调", "pretraining": "预训练", "batch inference": "批量推理", "serving": "在线服务",
    "tokens": "tokens", "requests of": "个请求，每个", "incl.": "含", "start-up": "启动",
    # breakdown parts not named above (memory: allocator slack; time: training steps, inference phases)
    "allocator_slack": "分配器预留", "compute": "计算", "optimizer_step": "优化器更新",
    "data_parallel_comm": "数据并行通信", "tensor_parallel_comm": "张量并行通信", "pipeline_bubble": "流水线气泡",
    "prefill": "预填充", "decode": "解码",
    # serving fleets (gpuplan.present_serving)
    "Fleet": "服务集群", "Instances": "实例数", "Bucket": "请求规格", "req/s": "请求/秒",
    "Routing with nothing lost": "无故障时的请求分配", "Note": "注意", "Assumption": "假设",
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
    return ZH.get(text, text) if lang() == "zh" else text


def say(en: str, zh: str) -> str:
    """A sentence with numbers in it, given in both languages at the place it is built."""
    return zh if lang() == "zh" else en
