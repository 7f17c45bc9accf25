"""Chinese forms of the sentences the library builds with values in them (:data:`gpuplan.i18n.TEMPLATES`).

Each key is the English as written in the source, every interpolated expression as ``{expression}``; each value
the Chinese with the same holes (``{expression|t}``: that value is translated too). ``scripts/i18n_templates.py``
lists the sentences of the source that have no entry; ``tests/test_i18n_complete.py`` fails on one.
"""

from __future__ import annotations

TEMPLATES: dict[str, str] = {
    # ---- what several modules say (gpuplan.errors, gpuplan.units, gpuplan.requests)
    "'{value}' is not one of: {', '.join(options)}.": "'{value}' 不是可选值之一：{', '.join(options)}。",
    "use one of: {', '.join(options)}.": "请用以下之一：{', '.join(options)}。",
    "{value} is not a finite number.": "{value} 不是有限的数。",
    "give a positive {field.lstrip('-')}.": "请给出一个正的 {field.lstrip('-')}。",
    "{shown} must be greater than 0.": "{shown} 必须大于 0。",
    "{shown} is beyond any real job (at most {limit}).": "{shown} 超出了任何真实任务的规模（至多 {limit}）。",
    "check the unit of {field}.": "请检查 {field} 的单位。",
    "'{text}' is too long for a name or a path ({len(encoded)} bytes; a file name has at most {NAME_MAX_BYTES} "
    "bytes, a path {PATH_MAX_BYTES}).":
        "'{text}' 太长，不可能是名称或路径（{len(encoded)} 字节；文件名最多 {NAME_MAX_BYTES} 字节，路径最多 "
        "{PATH_MAX_BYTES} 字节）。",
    "check what was pasted; give a preset name, or a path to an existing file or folder.":
        "请检查粘贴的内容；给出预置名称，或一个已存在的文件或文件夹的路径。",
    "'{text}' is not a finite number.": "'{text}' 不是有限的数。",
    "give {what}.": "请给出{what|t}。",
    "'{text}' is not a memory size.": "'{text}' 不是显存/内存大小。",
    "write it like 24GB, 80GiB or 512MiB.": "写法如 24GB、80GiB 或 512MiB。",
    "'{text}' is negative.": "'{text}' 是负数。",
    "give a positive count, e.g. 10k.": "请给出正数，例如 10k。",
    "'{text}' is not a count.": "'{text}' 不是数量。",
    "write it like 10000, 10k, 7B or 1.4T.": "写法如 10000、10k、7B 或 1.4T。",
    "give a positive duration, e.g. 2s or 21d.": "请给出正的时长，例如 2s 或 21d。",
    "'{text}' is not a duration.": "'{text}' 不是时长。",
    "write it like 50ms, 2s, 1h30m or 21d.": "写法如 50ms、2s、1h30m 或 21d。",
    "give a positive amount, e.g. 500USD.": "请给出正的金额，例如 500USD。",
    "'{text}' is not an amount of money.": "'{text}' 不是金额。",
    "write it like 500, 500USD or ¥3000.": "写法如 500、500USD 或 ¥3000。",
    "unknown currency in '{text}'.": "'{text}' 中的币种无法识别。",
    "use USD ($), CNY (¥) or EUR (€).": "请用 USD（$）、CNY（¥）或 EUR（€）。",
    "unknown currency '{text}'.": "未知币种 '{text}'。",
    "use USD, CNY or EUR.": "请用 USD、CNY 或 EUR。",
    "'{text}' is not a number.": "'{text}' 不是数字。",
    "write every number with its unit, e.g. {field} 50ms, 2s, 1h30min or 3d.":
        "每个数都要带单位，例如 {field} 50ms、2s、1h30min 或 3d。",
    "unknown time unit '{unit}' in '{text}'.": "'{text}' 中的时间单位 '{unit}' 无法识别。",
    "use ms, s, min, h, d or w.": "请用 ms、s、min、h、d 或 w。",
    "{given} is out of range: {field} takes {r.text()}{hint}.": "{given} 超出范围：{field} 的取值为 {r.text()|t}{hint|t}。",
    "{tokens} tokens is not a pretraining run.": "{tokens} 个 token 不够一次预训练。",
    "give the count with its unit, e.g. 100B or 1.4T.": "请带单位给出数量，例如 100B 或 1.4T。",
    "the training data is given twice: as samples and as tokens.": "训练数据给了两次：既按样本数，又按 token 数。",
    "give either --samples with --tokens-per-sample, or --tokens.": "请只给 --samples 加 --tokens-per-sample，或只给 --tokens。",
    "--samples needs the tokens in each sample.": "--samples 需要知道每条样本的 token 数。",
    "add --tokens-per-sample, e.g. 512.": "请加上 --tokens-per-sample，例如 512。",
    "serving is sized by a request rate, not a request count.": "在线服务按请求速率规划，而不是按请求总数。",
    "use --task infer for a batch of requests.": "批量处理请求请用 --task infer。",
    "--method {method} is a fine-tuning method; --task {task} trains (or runs) every weight.":
        "--method {method} 是微调方法；--task {task} 训练（或运行）全部权重。",
    "use --task finetune, or drop --method.": "请用 --task finetune，或去掉 --method。",
    "inference uses TP × PP GPUs per replica ({tp * pp}), not {n_gpus}.":
        "推理时每个副本用 TP × PP 张卡（{tp * pp}），而不是 {n_gpus}。",
    "use --tp {n_gpus}, or leave --n-gpus out.": "请用 --tp {n_gpus}，或不给 --n-gpus。",
    "{n} GPUs do not split into TP {tp} × PP {pp}.": "{n} 张卡无法分成 TP {tp} × PP {pp}。",
    "use a multiple of {tp * pp} GPUs.": "请用 {tp * pp} 的倍数张卡。",
    "ZeRO shards over data-parallel ranks; {n} GPU(s) at TP {tp} × PP {pp} make only one.":
        "ZeRO 在数据并行的各个 rank 上切分；{n} 张卡在 TP {tp} × PP {pp} 下只有一个 rank。",
    "use --n-gpus {2 * tp * pp} or more, or --zero 0.": "请用 --n-gpus {2 * tp * pp} 或更多，或用 --zero 0。",
    "{count} is negative.": "{count} 是负数。",
    "give a positive {field}, or 0 to let gpuplan choose.": "请给出正的 {field}，或给 0 让 gpuplan 自己选。",
    "{whole} is not a whole number.": "{whole} 不是整数。",
    "give a whole number of {field[2:]}.": "{field[2:]} 请给整数。",
    "{value} is less than one token.": "{value} 不足一个 token。",
    "give {field} as a count of tokens, e.g. 512.": "{field} 请给 token 数，例如 512。",
    "{option} applies to {applies_to}, not {here}.": "{option} 只适用于 {applies_to|t}，不适用于 {here}。",
    "{flag} applies to {where}, not to --task {task}.": "{flag} 只适用于{where|t}，不适用于 --task {task}。",
    "{flag} applies to {self.text}, not to --task {task}.": "{flag} 只适用于 {self.text|t}，不适用于 --task {task}。",
    "{flag} applies to {self.text}, not {method}.": "{flag} 只适用于 {self.text|t}，不适用于 {method}。",
    # where an option applies (gpuplan.options.Applies.text), as the sentences above name it
    "training (--task finetune or pretrain)": "训练（--task finetune 或 pretrain）",
    "inference (--task infer or serve)": "推理（--task infer 或 serve）",
    "--method lora, qlora, dora or adalora": "--method lora、qlora、dora 或 adalora", "--method lora, qlora, dora, adalora or galore": "--method lora、qlora、dora、adalora 或 galore", "jobs that end": "有终点的任务（finetune、pretrain、infer）",
    "drop {option}.": "请去掉 {option}。",
    "QLoRA's frozen base is NF4 by definition.": "QLoRA 的冻结底座按定义就是 NF4。",
    "drop --quant, or use --method lora --quant int8 (or int4) for another base format.":
        "请去掉 --quant；要用别的底座格式请用 --method lora --quant int8（或 int4）。",
    "--quant sets the frozen base of LoRA, P-tuning and LLaMA-Adapter; --method {method} trains 16-bit weights.":
        "--quant 设置 LoRA、P-tuning 和 LLaMA-Adapter 的冻结底座；--method {method} 训练的是 16 位权重。",
    "drop --quant, or use --method lora, ptuning or adapter.": "请去掉 --quant，或用 --method lora、ptuning 或 adapter。",
    "{field} applies to --task serve; a batch-inference job runs its requests as fast as it can.":
        "{field} 只适用于 --task serve；批量推理任务会尽快处理完所有请求。",
    "drop {field}, or use --task serve.": "请去掉 {field}，或用 --task serve。",
    "'{text}' is not a language gpuplan speaks.": "gpuplan 不支持语言 '{text}'。",
    "use en or zh (zh-CN).": "请用 en 或 zh（zh-CN）。",
    # ---- the command line (gpuplan.cli)
    "both output formats were asked for.": "同时要求了两种输出格式。",
    "choose one of --json and --csv.": "--json 和 --csv 只能选一个。",
    "--out names the file --export writes, and no --export was given.": "--out 是 --export 写入的文件，但没有给 --export。",
    "add --export skypilot (or vllm, sglang, k8s), or drop --out.": "请加上 --export skypilot（或 vllm、sglang、k8s），或去掉 --out。",
    "there is no plan to export.": "没有可导出的方案。",
    "relax the constraints until a plan fits.": "请放宽约束，直到有方案装得下。",
    "none of the {len(result.ranked)} plans is one SkyPilot launches.": "{len(result.ranked)} 个方案中没有一个能用 SkyPilot 启动。",
    "add --provider with one of: {', '.join(sorted(clouds))}.": "请加上 --provider，取值之一：{', '.join(sorted(clouds))}。",
    "the folder '{folder}' does not exist.": "文件夹 '{folder}' 不存在。",
    "create it first, or write elsewhere.": "请先创建它，或写到别处。",
    "'{target}' is a folder.": "'{target}' 是文件夹。",
    "give a file name, e.g. task.yaml.": "请给出文件名，例如 task.yaml。",
    "give the dataset either as tokens or as samples × tokens per sample, not both.":
        "数据集请只按 token 数给出，或只按 样本数 × 每条 token 数 给出，不要两者都给。",
    "drop --dataset-tokens, or --samples and --tokens-per-sample.": "请去掉 --dataset-tokens，或去掉 --samples 和 --tokens-per-sample。",
    "it sets the use assumed by rent-vs-buy.": "它设置的是租买对比所假设的使用时长。",
    "add --compare-buy, or drop --hours-per-month.": "请加上 --compare-buy，或去掉 --hours-per-month。",
    "there is no fleet to export.": "没有可导出的集群。",
    "relax the constraints until a fleet fits.": "请放宽约束，直到有集群方案可行。",
    "nothing to price.": "没有要报价的东西。",
    "give --gpu NAME (repeatable) or a MODEL.": "请给出 --gpu NAME（可重复）或一个 MODEL。",
    "cannot write '{target}' ({exc.strerror}).": "无法写入 '{target}'（{exc.strerror}）。",
    "check the path and its permissions.": "请检查路径及其权限。",
    "no group of the fleet can be exported.": "集群中没有任何一组能导出。",
    "try another --export.": "请换一种 --export。",
    "see '{path} --help' for the options.": "选项说明见 '{path} --help'。",
    "internal error ({type(err).__name__}: {err}); this is a bug in gpuplan.":
        "内部错误（{type(err).__name__}: {err}）；这是 gpuplan 的缺陷。",
    "please report it with the command line; GPUPLAN_DEBUG=1 shows the traceback.":
        "请附上命令行报告此问题；设置 GPUPLAN_DEBUG=1 可显示调用栈。",
    # click's own usage errors (the CLI parses options with it)
    "No such option: {name}": "没有这个选项：{name}",
    "No such option: {name} Did you mean {possibility}?": "没有这个选项：{name}。你是不是想用 {possibility}？",
    "No such option: {name} (Possible options: {possibilities})": "没有这个选项：{name}（可能的选项：{possibilities}）",
    "No such command '{name}'.": "没有这个命令 '{name}'。",
    "No such command '{name}'. Did you mean '{possibility}'?": "没有这个命令 '{name}'。你是不是想用 '{possibility}'？",
    "Missing option '{name}'.": "缺少选项 '{name}'。",
    "Missing argument '{name}'.": "缺少参数 '{name}'。",
    "Missing parameter: {name}": "缺少参数：{name}",
    "Invalid value for '{name}': {message}": "'{name}' 的值无效：{message|t}",
    "Invalid value for {name}: {message}": "{name} 的值无效：{message|t}",
    "Invalid value: {message}": "值无效：{message|t}",
    "Got unexpected extra argument ({args})": "多出了参数（{args}）",
    "Got unexpected extra arguments ({args})": "多出了参数（{args}）",
    "Got unexpected extra argument(s) ({args})": "多出了参数（{args}）",
    "Option '{name}' requires an argument.": "选项 '{name}' 需要一个值。",
    "Option '{name}' requires {n} arguments.": "选项 '{name}' 需要 {n} 个值。",
    "Option '{name}' does not take a value.": "选项 '{name}' 不接受值。",
    "'{value}' is not a valid integer.": "'{value}' 不是有效的整数。",
    "'{value}' is not a valid float.": "'{value}' 不是有效的数字。",
    "'{value}' is not a valid boolean.": "'{value}' 不是有效的布尔值。",
    "'{value}' is not one of {choices}.": "'{value}' 不是 {choices} 之一。",
    "'{value}' is not {choice}.": "'{value}' 不是 {choice}。",
    "{value} is not in the range {range}.": "{value} 不在范围 {range} 内。",
    "Error: {message}": "错误：{message|t}",
    # ---- models and their config.json (gpuplan.catalog.hfconfig, gpuplan.catalog.models)
    "'{path}' is {size / 1024 / 1024} MiB; a config.json is a few KiB.": "'{path}' 有 {size / 1024 / 1024} MiB；config.json 只有几 KiB。",
    "pass the model's config.json, not a weights file.": "请给出模型的 config.json，而不是权重文件。",
    "'{path}' holds JSON but not an object.": "'{path}' 是 JSON，但不是对象。",
    "pass a config.json.": "请给出一个 config.json。",
    "'{name}' has auto_map: its architecture is custom code in the model repository, for model_type "
    "'{cfg.get('model_type')}', an architecture gpuplan does not know. gpuplan never runs that code, and sizing the "
    "model as another architecture would be a guess.":
        "'{name}' 带有 auto_map：它的架构是模型仓库里的自定义代码，model_type 为 '{cfg.get('model_type')}'，gpuplan "
        "不认识这种架构。gpuplan 从不运行这类代码，而按别的架构估算这个模型只是猜测。",
    "gpuplan reads these model types: {', '.join(SUPPORTED_MODEL_TYPES)}; if the custom code only renames one of "
    "them, copy the config.json and set model_type to it.":
        "gpuplan 能读取这些 model_type：{', '.join(SUPPORTED_MODEL_TYPES)}；如果自定义代码只是把其中某个改了名，请复制 "
        "config.json 并把 model_type 设为它。",
    "'{name}' is a {model_type} model: {_UNSUPPORTED[model_type]}.": "'{name}' 是 {model_type} 模型：{_UNSUPPORTED[model_type]|t}。",
    "gpuplan sizes decoder-only transformers whose layers it models (and BERT); see 'gpuplan models'.":
        "gpuplan 只估算它能为其各层建模的仅解码器 Transformer（以及 BERT）；见 'gpuplan models'。",
    "'{name}' (model_type '{model_type}') has {key}: {what} gpuplan does not model.":
        "'{name}'（model_type '{model_type}'）带有 {key}：{what|t}，gpuplan 不对其建模。",
    "choose a model whose layers gpuplan models; see 'gpuplan models'.":
        "请选择 gpuplan 能为其各层建模的模型；见 'gpuplan models'。",
    "is not a preset in models/index.csv.": "不是 models/index.csv 中的预置模型。",
    "point the alias at a preset name from 'gpuplan models'.": "请让别名指向 'gpuplan models' 中的预置名称。",
    "is the name or Hub repo of preset '{taken[normalize(alias)]}'.":
        "是预置模型 '{taken[normalize(alias)]}' 的名称或 Hub 仓库。",
    "remove the alias row.": "请删除该别名行。",
    "'{name}': field model_type is '{cfg.get('model_type')}', an architecture gpuplan does not know; sizing it as "
    "another would be a guess (its experts, attention or layer pattern may differ).":
        "'{name}'：字段 model_type 为 '{cfg.get('model_type')}'，gpuplan 不认识这种架构；按别的架构估算只是猜测（它的专家、"
        "注意力或层结构可能不同）。",
    "gpuplan reads these model types: {', '.join(SUPPORTED_MODEL_TYPES)}; if the model really is one of them (a "
    "renamed Llama, say), copy its config.json and set model_type to that type.":
        "gpuplan 能读取这些 model_type：{', '.join(SUPPORTED_MODEL_TYPES)}；如果这个模型确实是其中之一（比如改了名的 "
        "Llama），请复制它的 config.json 并把 model_type 设为那个类型。",
    "the config nests more than {MAX_DEPTH} levels deep at {path}.": "配置在 {path} 处嵌套超过 {MAX_DEPTH} 层。",
    "pass the model's config.json as published.": "请给出模型发布时的 config.json。",
    "'{spec.name}': the config sets kv_lora_rank (latent attention), which the reader for model_type "
    "'{spec.model_type}' does not model.":
        "'{spec.name}'：配置设置了 kv_lora_rank（潜在注意力），而 model_type '{spec.model_type}' 的读取器不支持它。",
    "check model_type in the config.json.": "请检查 config.json 中的 model_type。",
    "'{name}': layer_types lists {len(layer_types)} layers but num_hidden_layers is {layers}.":
        "'{name}'：layer_types 列出 {len(layer_types)} 层，但 num_hidden_layers 为 {layers}。",
    "'{name}': {spec['linear_v_heads']} linear value heads do not divide into {spec['linear_k_heads']} key heads.":
        "'{name}'：{spec['linear_v_heads']} 个线性注意力 value 头不能均分到 {spec['linear_k_heads']} 个 key 头。",
    "check linear_num_key_heads in the config.json.": "检查 config.json 中的 linear_num_key_heads。",
    "'{name}': attn_output_gate is false, but Qwen3-Next and Qwen3.5 attention always has its output gate (transformers builds it whatever the field says).":
        "'{name}'：attn_output_gate 为 false，但 Qwen3-Next 和 Qwen3.5 的注意力总带有输出门（无论该字段如何，transformers 都会构建它）。",
    "'{name}': indexer_types (or index_topk_freq / index_topk_pattern) has layers that reuse another layer's sparse-attention picks ('shared'), whose missing indexer weights and keys gpuplan does not model.":
        "'{name}'：indexer_types（或 index_topk_freq / index_topk_pattern）含有复用其他层稀疏注意力选择结果的层（'shared'），gpuplan 不建模这些层缺少的索引器权重和键。",
    "choose GLM-5 or GLM-5.1, whose every layer runs its indexer; see 'gpuplan models'.":
        "请选择每层都运行索引器的 GLM-5 或 GLM-5.1；见 'gpuplan models'。",
    "'{name}': hybrid_override_pattern is '{pattern}'; it spells one block per layer with M (Mamba-2), * (attention), - (MLP) and E (MoE).":
        "'{name}'：hybrid_override_pattern 为 '{pattern}'；它应以 M（Mamba-2）、*（注意力）、-（MLP）和 E（MoE）逐层写出每个块。",
    "'{name}': {key} is true; gpuplan models Nemotron-H's projections without biases, as every published config has them.":
        "'{name}'：{key} 为 true；gpuplan 按所有已发布配置的做法，将 Nemotron-H 的投影建模为不带偏置。",
    "'{name}': hybrid_override_pattern mixes MLP (-) and MoE (E) blocks, which gpuplan does not model in one model.":
        "'{name}'：hybrid_override_pattern 混合了 MLP（-）和 MoE（E）块，gpuplan 不建模同一模型中的这种混合。",
    "'{name}': hybrid_override_pattern has more FFN blocks (- or E) than Mamba and attention blocks, a layout gpuplan does not model.":
        "'{name}'：hybrid_override_pattern 中的 FFN 块（- 或 E）多于 Mamba 和注意力块，gpuplan 不建模这种布局。",
    "'{name}': mlp_bias is true in a MoE Nemotron-H, whose experts have no biases while its shared expert would.":
        "'{name}'：MoE 版 Nemotron-H 的 mlp_bias 为 true，其专家没有偏置而共享专家会有。",
    "'{name}': {spec['linear_v_heads']} Mamba heads do not divide into {spec['linear_k_heads']} groups.":
        "'{name}'：{spec['linear_v_heads']} 个 Mamba 头不能均分到 {spec['linear_k_heads']} 个组。",
    "check n_groups in the config.json.": "检查 config.json 中的 n_groups。",
    "check n_group and topk_group in the config.json.": "检查 config.json 中的 n_group 与 topk_group。",
    "check topk_group in the config.json.": "检查 config.json 中的 topk_group。",
    "'{spec.name}': {spec.n_experts} experts do not split into {groups} groups with {routed} chosen per token.":
        "'{spec.name}'：{spec.n_experts} 个专家无法分成 {groups} 组、每个 token 选 {routed} 组。",
    "'{spec.name}': top-{spec.n_active_experts} experts do not fit in the {routed} chosen expert groups of "
    "{spec.n_experts // groups}.":
        "'{spec.name}'：top-{spec.n_active_experts} 个专家放不进所选的 {routed} 个专家组（每组 {spec.n_experts // groups} 个）。",
    "'{name}': {key} is {cfg[key]}: {what}, which gpuplan does not model.":
        "'{name}'：{key} 为 {cfg[key]}：{what}，gpuplan 不建模。",
    "choose Gemma 4 31B or 26B-A4B; see 'gpuplan models'.": "请选择 Gemma 4 31B 或 26B-A4B；见 'gpuplan models'。",
    "'{name}': layer_types must list sliding_attention or full_attention for each layer.":
        "'{name}'：layer_types 必须为每一层列出 sliding_attention 或 full_attention。",
    "check num_global_key_value_heads in the config.json.": "检查 config.json 中的 num_global_key_value_heads。",
    "'{spec.name}': {spec.n_heads} heads do not divide into {spec.n_kv_heads} KV heads.":
        "'{spec.name}'：{spec.n_heads} 个注意力头无法均分给 {spec.n_kv_heads} 个 KV 头。",
    "check num_key_value_heads in the config.json.": "请检查 config.json 中的 num_key_value_heads。",
    "'{spec.name}': expert FFN size {spec.moe_ffn_hidden} is outside [1, 2000000].":
        "'{spec.name}'：专家 FFN 维度 {spec.moe_ffn_hidden} 不在 [1, 2000000] 内。",
    "check moe_intermediate_size (or intermediate_size) in the config.json.":
        "请检查 config.json 中的 moe_intermediate_size（或 intermediate_size）。",
    "'{spec.name}': {', '.join(negative)} below 0.": "'{spec.name}'：{', '.join(negative)} 小于 0。",
    "check the config.json.": "请检查 config.json。",
    "'{spec.name}': {spec.n_active_experts} active of {spec.n_experts} experts.":
        "'{spec.name}'：{spec.n_experts} 个专家中激活 {spec.n_active_experts} 个。",
    "check num_experts_per_tok in the config.json.": "请检查 config.json 中的 num_experts_per_tok。",
    "'{path}' is not valid JSON ({exc}).": "'{path}' 不是有效的 JSON（{exc}）。",
    "pass the model's config.json as published on its Hugging Face page.": "请给出模型在 Hugging Face 页面上发布的 config.json。",
    "the JSON nests more than {MAX_DEPTH} levels deep; a config.json nests a few.":
        "JSON 嵌套超过 {MAX_DEPTH} 层；config.json 只有几层。",
    "config of '{name}' (model_type '{model_type}') lacks the key {exc}.": "'{name}' 的配置（model_type '{model_type}'）缺少键 {exc}。",
    "pass the complete config.json of the model.": "请给出模型完整的 config.json。",
    "config of '{name}' has a value of the wrong type ({exc}).": "'{name}' 的配置中有类型错误的值（{exc}）。",
    "pass the config.json as published.": "请给出发布时的 config.json。",
    "config of '{name}' has zero attention heads or zero layers.": "'{name}' 的配置中注意力头数或层数为 0。",
    "check num_attention_heads and num_hidden_layers in the config.json.":
        "请检查 config.json 中的 num_attention_heads 和 num_hidden_layers。",
    "'{name}': field {path} is {value}, not a finite number.": "'{name}'：字段 {path} 为 {value}，不是有限的数。",
    "set {path} to the model's value, as in the published config.json.": "请把 {path} 设为模型的实际值，与发布的 config.json 一致。",
    "'{name}': interleave_moe_layer_step is 0 (no MoE layer) but moe_layers lists {layers}.":
        "'{name}'：interleave_moe_layer_step 为 0（没有 MoE 层），但 moe_layers 列出了 {layers}。",
    "pass the config.json as published; a dense Llama 4 (Llama Guard 4) has interleave_moe_layer_step 0 and no "
    "moe_layers.": "请给出发布时的 config.json；稠密的 Llama 4（Llama Guard 4）的 interleave_moe_layer_step 为 0，且没有 "
                   "moe_layers。",
    "'{name}': field {key} is {shown}; a size must be above 0 and at most {MAX_SIZE}.":
        "'{name}'：字段 {key} 为 {shown}；尺寸必须大于 0 且至多 {MAX_SIZE}。",
    "set {key} to the model's value, as in the published config.json.": "请把 {key} 设为模型的实际值，与发布的 config.json 一致。",
    "'{name}' (model_type '{model_type}') has {key}: linear-attention / hybrid layers, whose parameters and "
    "recurrent state gpuplan does not model.":
        "'{name}'（model_type '{model_type}'）带有 {key}：线性注意力/混合层，gpuplan 不对其参数和循环状态建模。",
    "choose a model with standard attention layers; see 'gpuplan models'.": "请选择标准注意力层的模型；见 'gpuplan models'。",
    "'{name}': layer_types holds {', '.join(odd)}, a layer kind gpuplan does not model.":
        "'{name}'：layer_types 含有 {', '.join(odd)}，gpuplan 不对这种层建模。",
    "choose a model with full or sliding-window attention layers.": "请选择全注意力或滑动窗口注意力层的模型。",
    "'{spec.name}': the config sets {key} = {value} (a mixture of experts), but gpuplan's reader for model_type "
    "'{spec.model_type}' is for dense models.":
        "'{spec.name}'：配置设置了 {key} = {value}（混合专家），但 gpuplan 对 model_type '{spec.model_type}' 的读取器只适用于稠密模型。",
    "check model_type in the config.json; a MoE needs its MoE model type.": "请检查 config.json 中的 model_type；MoE 模型需要对应的 MoE model_type。",
    "'{spec.name}': {label} {shown} is outside [{low}, {high}].": "'{spec.name}'：{label} {shown} 不在 [{low}, {high}] 内。",
    "check the config.json; this is not a plausible transformer.": "请检查 config.json；这不像一个合理的 Transformer。",
    "'{text}' is not a model preset, and no config.json is there.": "'{text}' 不是预置模型，那里也没有 config.json。",
    "'{text}' is a GGUF copy of '{base}', which is not a model preset.": "'{text}' 是 '{base}' 的 GGUF 副本，而 '{base}' 不是预置模型。",
    "pass the path of the config.json of '{base}', or use a preset from 'gpuplan models'.":
        "传入 '{base}' 的 config.json 路径，或使用 'gpuplan models' 中的预置模型。",
    "check the path (a config.json or the folder holding one), or run 'gpuplan models'.":
        "请检查路径（config.json 或包含它的文件夹），或运行 'gpuplan models'。",
    "'{repo_id}' looks like a Hugging Face Hub id, but gpuplan is offline (HF_HUB_OFFLINE/GPUPLAN_OFFLINE is set).":
        "'{repo_id}' 看起来是 Hugging Face Hub id，但 gpuplan 处于离线模式（设置了 HF_HUB_OFFLINE/GPUPLAN_OFFLINE）。",
    "'{text}' is not a model preset, and it cannot be opened as a path ({exc}).": "'{text}' 不是预置模型，也无法作为路径打开（{exc}）。",
    "'{repo_id}' looks like a Hugging Face Hub id, but huggingface_hub is not installed.":
        "'{repo_id}' 看起来是 Hugging Face Hub id，但没有安装 huggingface_hub。",
    "could not fetch config.json of '{repo_id}' from the Hub ({type(exc).__name__}).":
        "无法从 Hub 获取 '{repo_id}' 的 config.json（{type(exc).__name__}）。",
    # ---- catalog files (gpuplan.catalog.csvload, gpuplan.catalog.store)
    "must be greater than 0.": "必须大于 0。",
    "leave the cell empty if unknown; never write 0 for unknown.": "未知时请留空；不要用 0 表示未知。",
    "is outside [{col.min}, {col.max}].": "不在 [{col.min}, {col.max}] 内。",
    "check the unit in the column name.": "请检查列名中的单位。",
    "the header cannot be read as CSV ({exc}).": "表头无法按 CSV 读取（{exc}）。",
    "the first line names the columns (see the data README).": "第一行是列名（见数据目录的 README）。",
    "this row has more cells than the header.": "这一行的单元格比表头多。",
    "quote cells that contain commas.": "含逗号的单元格请加引号。",
    "duplicate key (first at line {seen[k]}).": "键重复（首次出现在第 {seen[k]} 行）。",
    "remove or merge one of the rows.": "请删除或合并其中一行。",
    "file is not UTF-8 text.": "文件不是 UTF-8 文本。",
    "save it as UTF-8 CSV.": "请另存为 UTF-8 编码的 CSV。",
    "is empty but required.": "为空，但这是必填项。",
    "fill in '{col.name}' (see the data README).": "请填写 '{col.name}'（见数据目录的 README）。",
    "the row cannot be read as CSV ({exc}).": "这一行无法按 CSV 读取（{exc}）。",
    "look for a quote that is never closed; no cell needs more than a few hundred characters.":
        "请查找没有闭合的引号；任何单元格都不需要超过几百个字符。",
    "the part has no fp32, fp16 or bf16 compute figure.": "这个型号没有 fp32、fp16 或 bf16 算力数据。",
    "an Apple silicon GPU shares the system's memory, but the type is not marked unified.":
        "Apple 芯片的 GPU 与系统共用内存，但内存类型没有标注 unified。",
    "write it as '<type> (unified)', e.g. 'LPDDR5 (unified)', or 'unified' if the type is unknown.":
        "写成 '<类型> (unified)'，例如 'LPDDR5 (unified)'；类型不明时只写 'unified'。",
    "a row that names a chip covers that chip only.": "写明芯片的行只覆盖该芯片。",
    "leave oldest_architecture empty on it.": "该行的 oldest_architecture 请留空。",
    "fill in at least fp32_tflops or fp16_tflops.": "请至少填写 fp32_tflops 或 fp16_tflops。",
    "is empty but pricing is reserved.": "为空，但计费方式是 reserved。",
    "write the length of the commitment in months (12, 36 ...).": "请填写承诺期的月数（12、36 等）。",
    "is set but pricing is {pricing}.": "已填写，但计费方式是 {pricing}。",
    "clear it, or set pricing to reserved if the price needs the commitment.": "请清空它；如果这个价格需要承诺期，请把计费方式设为 reserved。",
    "is below sla_pct ({low}).": "低于 sla_pct（{low}）。",
    "sla_pct is the single-instance SLA, sla_multi_zone_pct the one across zones.":
        "sla_pct 是单实例 SLA，sla_multi_zone_pct 是跨可用区的 SLA。",
    "'{raw}' is not a folder.": "'{raw}' 不是文件夹。",
    "give a folder laid out like gpuplan/data (see docs/catalog.md).": "请给出结构同 gpuplan/data 的文件夹（见 docs/catalog.md）。",
    "is not a GPU in gpus.csv or gpu_aliases.csv.": "不是 gpus.csv 或 gpu_aliases.csv 中的显卡。",
    "use a name from 'gpuplan gpus', or add the part to gpus.csv.": "请用 'gpuplan gpus' 列出的名称，或把这个型号加到 gpus.csv。",
    "has no row in providers.csv.": "在 providers.csv 中没有对应的行。",
    "add a row for '{o.provider}' to {where} (at least provider, tier, source and as_of; see the data README), or "
    "spell the provider as an existing row does.":
        "请在 {where} 中为 '{o.provider}' 加一行（至少包括 provider、tier、source 和 as_of；见数据目录的 README），"
        "或按已有行的写法拼写云厂商名。",
    "bundled file is missing.": "内置文件缺失。",
    "is missing from the market snapshot.": "市场快照中缺少这个文件。",
    "copy gpuplan/data/{rel} into the snapshot folder (a snapshot holds every one of {', '.join(MARKET_TABLES)}).":
        "请把 gpuplan/data/{rel} 复制到快照文件夹中（快照须包含 {', '.join(MARKET_TABLES)} 中的每一个）。",
    "give a folder holding a copy of gpuplan/data's offers/, providers.csv, platforms.csv, purchase_prices.csv and "
    "fx.csv.":
        "请给出存有 gpuplan/data 中 offers/、providers.csv、platforms.csv、purchase_prices.csv 和 fx.csv 副本的文件夹。",
    "reinstall gpuplan.": "请重新安装 gpuplan。",
    "is a symbolic link to no folder (dangling or a loop).": "是指向不存在文件夹的符号链接（悬空或循环）。",
    "point the link at a folder of offer files, or remove it.": "请让链接指向存放报价文件的文件夹，或删除它。",
    "no offer files.": "没有报价文件。",
    "no {base}->{quote} exchange rate.": "没有 {base}->{quote} 的汇率。",
    "add a dated {base}/{quote} row to fx.csv.": "请在 fx.csv 中加一行带日期的 {base}/{quote} 汇率。",
    "'{raw}' cannot be opened as a folder ({exc}).": "'{raw}' 无法作为文件夹打开（{exc}）。",
    "give a folder laid out like gpuplan/data; if it is a link, point it at one.": "请给出结构同 gpuplan/data 的文件夹；如果是链接，请让它指向这样的文件夹。",
    "is not a name in gpus.csv.": "不是 gpus.csv 中的名称。",
    "point the alias at a canonical name.": "请让别名指向标准名称。",
    "is the name of GPU '{keys[key]}'.": "是显卡 '{keys[key]}' 的名称。",
    "remove the alias.": "请删除这个别名。",
    "has no config file models/{path.name}.": "没有配置文件 models/{path.name}。",
    "add the config.json as models/<name>.json or remove the row.": "请把 config.json 加为 models/<name>.json，或删除这一行。",
    "is in the future.": "是将来的日期。",
    "write the date the figure was read or published.": "请填写读取或发布这个数据的日期。",
    "is empty but '{fact}' is filled in.": "为空，但 '{fact}' 已填写。",
    "say where '{fact}' was read (a page, or a file at a revision), or clear it.":
        "请注明 '{fact}' 的出处（一个网页，或某个版本的文件），或清空它。",
    "same provider/instance/region/pricing as a row in {seen[offer.key]}.": "与 {seen[offer.key]} 中某行的云厂商/实例/区域/计费方式相同。",
    "keep one provider per file and one row per key.": "请每个文件只放一家云厂商，每个键只写一行。",
    # ---- estimators (gpuplan.estimate)
    "calibrated parameter is missing.": "缺少校准参数。",
    "rerun 'python bench/fit.py' to regenerate the fitted parameters.": "请重新运行 'python bench/fit.py' 生成拟合参数。",
    "cannot read fitted parameters ({exc}).": "无法读取拟合参数（{exc}）。",
    "rerun 'python bench/fit.py'.": "请重新运行 'python bench/fit.py'。",
    "unknown engine '{name}'.": "未知的推理引擎 '{name}'。",
    "unknown framework '{name}'.": "未知的训练框架 '{name}'。",
    "unknown KV-cache dtype '{kv_dtype}'.": "未知的 KV 缓存数据类型 '{kv_dtype}'。",
    "unknown sort key '{sort}'.": "未知的排序键 '{sort}'。",
    "the memory bandwidth of {gpu.name} is not in the catalog, so its decode speed cannot be estimated.":
        "目录中没有 {gpu.name} 的显存带宽，无法估算它的解码速度。",
    "add memory_bandwidth_gb_s for it in a --catalog folder.": "请在 --catalog 文件夹中为它补上 memory_bandwidth_gb_s。",
    "{m.name} does not fit on {s.tp * s.pp}× {gpu.name} with {s.weight_format} weights and {s.context_len} tokens of "
    "context.":
        "{m.name} 以 {s.weight_format} 权重和 {s.context_len} 个 token 的上下文装不进 {s.tp * s.pp}× {gpu.name}。",
    "use more GPUs (--tp), a smaller --quant, or a shorter context.": "请用更多的卡（--tp）、更小的 --quant 或更短的上下文。",
    "{s.seq_len} tokens is longer than {m.name} supports ({m.max_positions} positions).":
        "{s.seq_len} 个 token 超过了 {m.name} 支持的长度（{m.max_positions} 个位置）。",
    "use --seq-len {m.max_positions} or less.": "请用 --seq-len {m.max_positions} 或更小。",
    "{par.pp} pipeline stages for {m.n_layers} layers.": "{m.n_layers} 层却要分成 {par.pp} 个流水线段。",
    "use --pp {m.n_layers} or less.": "请用 --pp {m.n_layers} 或更小。",
    "{gpu.name} has no BF16 support.": "{gpu.name} 不支持 BF16。",
    "use --precision fp16-mixed.": "请用 --precision fp16-mixed。",
    "{gpu.name} has no FP8 tensor cores.": "{gpu.name} 没有 FP8 张量核心。",
    "use --precision bf16-mixed, or an H100/H200/L40S/Blackwell GPU.": "请用 --precision bf16-mixed，或 H100/H200/L40S/Blackwell 显卡。",
    "{gpu.name} has no FP4 tensor cores (no fp4_tflops in the GPU catalog).":
        "{gpu.name} 没有 FP4 张量核心（显卡目录中没有 fp4_tflops）。",
    "use --precision fp8-mixed, or a Blackwell GPU (B200, GB200, B300, GB300).":
        "请用 --precision fp8-mixed，或 Blackwell 显卡（B200、GB200、B300、GB300）。",
    "P-tuning v2 prefixes need per-head keys and values; MLA models cache a latent instead.":
        "P-tuning v2 的前缀需要每个头各自的键和值；MLA 模型缓存的是潜在向量。",
    "use --method lora.": "请用 --method lora。",
    "{s.prompt_len} + {s.output_len} tokens is longer than {m.name} supports ({m.max_positions} positions).":
        "{s.prompt_len} + {s.output_len} 个 token 超过了 {m.name} 支持的长度（{m.max_positions} 个位置）。",
    "keep prompt + output within {m.max_positions} tokens.": "请让输入 + 输出不超过 {m.max_positions} 个 token。",
    "{get_engine(s.engine).name} does not run on {gpu.name} ({gpu.vendor} {gpu.architecture}).":
        "{get_engine(s.engine).name} 不能在 {gpu.name}（{gpu.vendor} {gpu.architecture}）上运行。",
    "use another --engine (hf runs wherever PyTorch does) or GPU.": "请换一个 --engine（hf 在能跑 PyTorch 的地方都能运行）或换一种显卡。",
    "FP8 weights need FP8 units or an NVIDIA Ampere or newer GPU (which runs them as 8-bit weights with 16-bit "
    "math); {gpu.name} has neither.":
        "FP8 权重需要 FP8 计算单元，或 NVIDIA Ampere 及更新的显卡（以 8 位权重、16 位计算的方式运行）；{gpu.name} 两者都没有。",
    "use --quant int8-wo or awq-int4, or a newer GPU.": "请用 --quant int8-wo 或 awq-int4，或更新的显卡。",
    "TensorRT-LLM FP8 needs FP8 tensor cores; {gpu.name} has none.": "TensorRT-LLM 的 FP8 需要 FP8 张量核心；{gpu.name} 没有。",
    "use --quant int8-wo or awq-int4, or an Ada/Hopper/Blackwell GPU.": "请用 --quant int8-wo 或 awq-int4，或 Ada/Hopper/Blackwell 显卡。",
    "GGUF ({fmt.name}) runs in llama.cpp, not {s.engine}.": "GGUF（{fmt.name}）在 llama.cpp 中运行，不能用 {s.engine}。",
    "use --engine llamacpp, or --quant awq-int4 for vLLM/SGLang.": "请用 --engine llamacpp；vLLM/SGLang 请用 --quant awq-int4。",
    "llama.cpp loads GGUF files; {fmt.name} is not a GGUF type.": "llama.cpp 加载 GGUF 文件；{fmt.name} 不是 GGUF 类型。",
    "use --quant gguf-q4_k_m (or gguf-q8_0, bf16), or --engine vllm.": "请用 --quant gguf-q4_k_m（或 gguf-q8_0、bf16），或 --engine vllm。",
    "use --quant MXFP4_MOE (gguf-mxfp4_moe: llama.cpp's GGUF of MXFP4 experts, Q8_0 elsewhere), or leave --quant "
    "out.": "请用 --quant MXFP4_MOE（gguf-mxfp4_moe：专家为 MXFP4、其余为 Q8_0 的 llama.cpp GGUF），或不指定 --quant。",
    "bitsandbytes formats run in transformers, vLLM and SGLang, not {get_engine(s.engine).name}.":
        "bitsandbytes 格式在 transformers、vLLM 和 SGLang 中运行，不能用 {get_engine(s.engine).name}。",
    "use --quant awq-int4 or int8-wo, or --engine vllm.": "请用 --quant awq-int4 或 int8-wo，或 --engine vllm。",
    "transformers keeps its KV cache in the model's dtype.": "transformers 的 KV 缓存使用模型本身的数据类型。",
    "use --kv-dtype bf16, or --engine vllm/sglang/trtllm for an FP8 KV cache.": "请用 --kv-dtype bf16；要用 FP8 KV 缓存请用 --engine vllm/sglang/trtllm。",
    "{s.pp} pipeline stages for {m.n_layers} layers.": "{m.n_layers} 层却要分成 {s.pp} 个流水线段。",
    "llama.cpp splits layers across GPUs; it has no tensor parallelism.": "llama.cpp 把层分到各张卡上，不支持张量并行。",
    "use --tp 1 (llama.cpp) or --engine vllm.": "请用 --tp 1（llama.cpp）或 --engine vllm。",
    "MLX quantized weights ({fmt.name}) run in mlx-lm only, and mlx-lm loads MLX or 16-bit weights; here {fmt.name} with {s.engine}.": "MLX 量化权重（{fmt.name}）只能在 mlx-lm 中运行，mlx-lm 也只加载 MLX 或 16 位权重；这里是 {fmt.name} 配 {s.engine}。",
    "use --engine mlx with --quant mlx-q4 (or bf16), or another --quant for this engine.": "请用 --engine mlx 配 --quant mlx-q4（或 bf16），或为该引擎换一种 --quant。",
    "mlx-lm runs a model on one Mac's GPU.": "mlx-lm 只在一台 Mac 的 GPU 上运行模型。",
    "use --tp 1 --pp 1 with --engine mlx.": "使用 --engine mlx 时请用 --tp 1 --pp 1。",
    "FP8 KV cache in TensorRT-LLM needs FP8 support on {gpu.name}.": "TensorRT-LLM 的 FP8 KV 缓存需要 {gpu.name} 支持 FP8。",
    "use --kv-dtype bf16.": "请用 --kv-dtype bf16。",
    "{tp} is not a tensor-parallel size.": "{tp} 不是有效的张量并行度。",
    "use 1, 2, 4 or 8.": "请用 1、2、4 或 8。",
    "TP {tp} does not divide {m.name}'s {m.n_heads} attention heads.": "TP {tp} 不能整除 {m.name} 的 {m.n_heads} 个注意力头。",
    "TP {tp} neither divides nor is a multiple of {m.name}'s {m.n_kv_heads} KV heads.":
        "TP {tp} 既不能整除 {m.name} 的 {m.n_kv_heads} 个 KV 头，也不是它的倍数。",
    "use a TP size that divides the KV heads or is a multiple of them.": "请用能整除 KV 头数或是其倍数的 TP。",
    "{parallel.dp} data-parallel ranks × micro-batch {micro_batch} exceed the global batch of {global_batch} "
    "sequences.":
        "{parallel.dp} 个数据并行 rank × 微批 {micro_batch} 超过了全局批大小 {global_batch} 条序列。",
    "use fewer GPUs or a smaller micro-batch, or raise --global-batch.": "请用更少的卡或更小的微批，或调大 --global-batch。",
    "QLoRA loads its base through bitsandbytes, which does not run on {part}.":
        "QLoRA 通过 bitsandbytes 加载量化基座，而 bitsandbytes 不支持 {part}。",
    "use --method lora, or a --gpu bitsandbytes runs on: {bnb}.":
        "请用 --method lora，或换一个 bitsandbytes 支持的 --gpu：{bnb}。",
    "no listed training framework runs on {part}.": "已列出的训练框架都不支持 {part}。",
    "use another --gpu (see 'gpuplan gpus').": "请换一个 --gpu（见 'gpuplan gpus'）。",
    "{fw.name} does not run on {part}.": "{fw.name} 不支持 {part}。",
    "{fw.name} (--framework {fw.framework}) does not run --method {method}.":
        "{fw.name}（--framework {fw.framework}）不支持 --method {method}。",
    "use a --method it runs: {', '.join(fw.methods)}; or a --framework that runs {method}: "
    "{', '.join((name for name, f in frameworks().items() if f.runs(method)))}.":
        "请用它支持的 --method：{', '.join(fw.methods)}；或换一个支持 {method} 的 --framework："
        "{', '.join((name for name, f in frameworks().items() if f.runs(method)))}。",
    "use a --gpu it runs on: {where('framework', fw.framework)}; or a --framework that runs on {gpu.name}: "
    "{others}.":
        "请换一个它支持的 --gpu：{where('framework', fw.framework)}；或换一个支持 {gpu.name} 的 --framework："
        "{others}。",
    "not an ordered {v['vendor']} architecture.": "不是 {v['vendor']} 已排序的架构。",
    "{gpu.name} has no fast 16-bit path for QLoRA's compute dtype.": "{gpu.name} 没有适合 QLoRA 计算精度的快速 16 位通路。",
    "use a GPU from 2018 on (Turing or newer), or --method lora in fp32.": "请用 2018 年以后的显卡（Turing 或更新），或以 fp32 用 --method lora。",
    "the job has no tokens.": "任务没有 token。",
    "give --samples and --tokens-per-sample, or --tokens.": "请给出 --samples 和 --tokens-per-sample，或 --tokens。",
    # assumptions (the values of the assumptions tables)
    "{fmt.name} = {fmt.bits_per_weight} bits/weight ({fmt.scope} tensors)": "{fmt.name} = 每权重 {fmt.bits_per_weight} 位（{fmt.scope|t}张量）",
    "{eng.name}: {eng.memory_mode} memory": "{eng.name}：{eng.memory_mode|t}显存",
    "{train} of {total} ({s.method})": "{train} / {total}（{s.method}）",
    "weights {w_b} + grads {g_b} + master {master_b} + optimizer {opt_b} ({s.precision}, {s.optimizer}, "
    "{s.framework})":
        "权重 {w_b} + 梯度 {g_b} + 主权重 {master_b} + 优化器 {opt_b}（{s.precision}，{s.optimizer}，{s.framework}）",
    "recompute {s.recompute}, flash attention {'on' if s.flash_attention else 'off'}, fitted implementation factor":
        "重计算 {s.recompute}，flash attention {'on' if s.flash_attention else 'off'|t}，拟合的实现系数",
    "{cal.get('allocator_slack')} of activations, logits and gradients, and {VARYING_LENGTHS_EXTRA_POOL} of "
    "activations and logits more (sequence lengths vary between steps)":
        "激活值、logits 和梯度的 {cal.get('allocator_slack')}，另加激活值和 logits 的 {VARYING_LENGTHS_EXTRA_POOL}"
        "（各步序列长度不同）",
    "{cal.get('allocator_slack_persistent')} of weights, master weights and optimizer states":
        "权重、主权重和优化器状态的 {cal.get('allocator_slack_persistent')}",
    "{cal.get('allocator_slack_persistent')} of weights, master weights and optimizer states; none on the frozen "
    "base, which the stack loads in place":
        "权重、主权重和优化器状态的 {cal.get('allocator_slack_persistent')}；冻结的基座模型由该框架原地加载，不计此项",
    "{cal.get('allocator_slack')} of activations, logits and gradients (the same shapes every step)":
        "激活值、logits 和梯度的 {cal.get('allocator_slack')}（每步张量形状相同）",
    "paged/offloaded: not counted on the GPU": "分页/卸载：不计入显存",
    "{eng.name}: memory {_eff(cal, eng, 'eta_memory', gpu)} of bandwidth, compute {_eff(cal, eng, 'eta_compute', gpu)} of "
    "peak, {_eff(cal, eng, 'layer_overhead_s', gpu) * 1000000.0} µs per layer per step":
        "{eng.name}：显存带宽利用率 {_eff(cal, eng, 'eta_memory', gpu)}，算力利用率 {_eff(cal, eng, 'eta_compute', gpu)}，"
        "每步每层 {_eff(cal, eng, 'layer_overhead_s', gpu) * 1000000.0} µs",
    "decode batches up to {max(graphs)} replay a captured graph (not every size); other steps launch op by op at "
    "{_eager_layer_overhead(cal, eng, gpu) * 1000000.0} µs per layer, overlapped with the GPU":
        "不超过 {max(graphs)} 的解码批次重放已捕获的 CUDA 图（并非每种大小都有）；其余步骤逐个算子启动，"
        "每层 {_eager_layer_overhead(cal, eng, gpu) * 1000000.0} µs，与 GPU 计算重叠",
    "every decode batch up to {max(graphs)} replays a captured graph (padded to the next captured size); larger ones "
    "launch op by op at {_eager_layer_overhead(cal, eng, gpu) * 1000000.0} µs per layer, overlapped with the GPU":
        "不超过 {max(graphs)} 的解码批次都重放已捕获的 CUDA 图（补齐到下一个已捕获的大小）；更大的批次逐个算子启动，"
        "每层 {_eager_layer_overhead(cal, eng, gpu) * 1000000.0} µs，与 GPU 计算重叠",
    "every decode batch replays a captured graph; a step that carries prompt tokens launches op by op at "
    "{_eager_layer_overhead(cal, eng, gpu) * 1000000.0} µs per layer, overlapped with the GPU":
        "每个解码批次都重放已捕获的 CUDA 图；带有提示词 token 的步骤逐个算子启动，"
        "每层 {_eager_layer_overhead(cal, eng, gpu) * 1000000.0} µs，与 GPU 计算重叠",
    "off: every step launches op by op at {_eager_layer_overhead(cal, eng, gpu) * 1000000.0} µs per layer, overlapped "
    "with the GPU":
        "已关闭：每个步骤都逐个算子启动，每层 {_eager_layer_overhead(cal, eng, gpu) * 1000000.0} µs，与 GPU 计算重叠",
    "{eng.name}: {per_cycle} bytes per SM cycle × {gpu.sm_count} SMs × {clock_ghz} GHz = "
    "{per_cycle * cycles / GB} GB/s, below its share of the memory bandwidth":
        "{eng.name}：每个 SM 每周期 {per_cycle} 字节 × {gpu.sm_count} 个 SM × {clock_ghz} GHz = "
        "{per_cycle * cycles / GB} GB/s，低于其可用的显存带宽",
    "{per * 1000000.0} µs per running sequence and step, overlapped with the GPU's step":
        "每条运行中的序列每步 {per * 1000000.0} µs，与 GPU 的计算步骤重叠",
    "{per * 1000000.0} µs per running sequence and step, added to the GPU's step":
        "每条运行中的序列每步 {per * 1000000.0} µs，加在 GPU 的计算步骤之后",
    "the engine's scheduling, input preparation and sampling per sequence (docs/estimators.md, Inference speed); "
    "fitted (bench/fit.py)": "引擎对每条序列的调度、输入准备与采样（docs/estimators.md，推理速度）；拟合所得（bench/fit.py）",
    "{peak / TERA} TFLOP/s {dtype}, {_bandwidth(gpu) / GB} GB/s": "{peak / TERA} TFLOP/s {dtype}，{_bandwidth(gpu) / GB} GB/s",
    "{sp.batch} concurrent sequences of {s.prompt_len}+{s.output_len} tokens":
        "{sp.batch} 条并发序列，每条 {s.prompt_len}+{s.output_len} 个 token",
    "{sp.bound}-bound": "受{sp.bound|t}限制",
    "{s.mtp_layers} depth(s): {extra / 1000000000.0} GFLOP per token of the above; their memory is not counted":
        "{s.mtp_layers} 层深度：上述每 token 中占 {extra / 1000000000.0} GFLOP；其显存未计入",
    "TrainSetup.mtp_layers is {self.mtp_layers}; a count of multi-token prediction depths is 0 or more.":
        "TrainSetup.mtp_layers 为 {self.mtp_layers}；多 token 预测深度的个数须为 0 或更多。",
    "give 0 (no MTP) or the recipe's depth.": "请给 0（不用 MTP）或训练配方中的深度。",
    "{train_flops_per_token(m, s) / 1000000000.0} GFLOP ({s.method}, recompute {s.recompute})":
        "{train_flops_per_token(m, s) / 1000000000.0} GFLOP（{s.method}，重计算 {s.recompute}）",
    "{eng.name}: {flops} FLOP per {fmt.name} weight at {(gpu.fp32_flops_per_s or 0.0) / TERA} TFLOP/s FP32 = {1 / per_weight / 1000000000.0} G weights/s at most in a decode step":
        "{eng.name}：每个 {fmt.name} 权重 {flops} FLOP，FP32 {(gpu.fp32_flops_per_s or 0.0) / TERA} TFLOP/s = 解码一步至多每秒 {1 / per_weight / 1000000000.0} G 个权重",
    "{peak / TERA} TFLOP/s per GPU ({s.precision} dense)": "每卡 {peak / TERA} TFLOP/s（{s.precision} 稠密）",
    "{u} of peak ({s.framework}{', compiled' if s.compiled else ''}, {gpu.segment})":
        "峰值的 {u}（{s.framework}{', compiled' if s.compiled else ''|t}，{gpu.segment|t}）",
    "intra-node {link.intra_name} {link.intra_node / GB} GB/s; inter-node {link.inter_name}":
        "节点内 {link.intra_name} {link.intra_node / GB} GB/s；节点间 {link.inter_name|t}",
    "{w.score_bytes_per_token / 1000000.0} MB of score matrices per token at {UNFUSED_ATTENTION_HBM_SHARE} of the "
    "memory bandwidth; its GEMMs compute every score, masked or not":
        "每个 token {w.score_bytes_per_token / 1000000.0} MB 注意力分数矩阵，按显存带宽的 {UNFUSED_ATTENTION_HBM_SHARE} 计；"
        "其 GEMM 计算每一个分数，无论是否被掩码",
    "{share} of FP8's fraction of peak": "FP8 所达峰值比例的 {share}",
    "the transformer layers' fprop, dgrad and wgrad GEMMs in FP4 at {rate / TERA} TFLOP/s ({share} x the "
    "datasheet's {gpu.fp4_flops_per_s / TERA}) and the utilisation fitted on FP8 and 16-bit runs; attention, the LM "
    "head and the router in 16-bit; the casts (Hadamard transform, stochastic rounding) not counted apart, as FP8's "
    "are not; no FP4 training run is fitted":
        "Transformer 层的前向、输入梯度和权重梯度 GEMM 以 FP4 计算，速率 {rate / TERA} TFLOP/s（数据手册 "
        "{gpu.fp4_flops_per_s / TERA} 的 {share} 倍），利用率沿用在 FP8 与 16 位训练上拟合的值；注意力、LM 头和路由器"
        "保持 16 位；量化转换（Hadamard 变换、随机舍入）与 FP8 一样不单独计入；没有拟合任何 FP4 训练实测",
    "{share} of FP8's fraction of peak (the FP4 rate above is {share} x the datasheet's "
    "{gpu.fp4_flops_per_s / TERA} TFLOP/s)":
        "FP8 所达峰值比例的 {share}（上面的 FP4 速率为数据手册 {gpu.fp4_flops_per_s / TERA} TFLOP/s 的 {share} 倍）",
    "{share} x the datasheet peak: its best measured BF16 matmul reaches {mamf_shares()[gpu.name]} of the datasheet, "
    "{REFERENCE_GPU}'s {mamf_shares()[REFERENCE_GPU]}, which the fitted efficiencies hold":
        "数据手册峰值的 {share} 倍：它实测最快的 BF16 矩阵乘法达到数据手册的 {mamf_shares()[gpu.name]}，"
        "而拟合效率所依据的 {REFERENCE_GPU} 为 {mamf_shares()[REFERENCE_GPU]}",
    "{traffic_mb} MB per token (norms, activations, loss) at {eta_memory} of the memory bandwidth":
        "每个 token {traffic_mb} MB（归一化、激活函数、损失），按显存带宽的 {eta_memory} 计",
    "{steps} optimizer steps of {tokens_per_step} tokens": "{steps} 个优化器步，每步 {tokens_per_step} 个 token",
    "not in the catalog: the optimizer step is not counted": "目录中没有：不计优化器更新时间",
    "not in the catalog: the FP32 rate is used": "目录中没有：按 FP32 算力计算",
    # ---- exports (gpuplan.export)
    "unknown export format '{fmt}'.": "未知的导出格式 '{fmt}'。",
    "this plan was estimated for {g.engine} (its memory reservation and batch); the {fmt} export runs {fmt}.":
        "这个方案是按 {g.engine} 估算的（它的显存预留和批大小）；{fmt} 导出运行的是 {fmt}。",
    "plan with --engine {fmt} to export it.": "请用 --engine {fmt} 规划后再导出。",
    "a replica of {g.gpus_per_replica} GPUs spans nodes; the k8s export writes single-node replicas.":
        "一个 {g.gpus_per_replica} 卡的副本跨越多个节点；k8s 导出只写单节点副本。",
    "plan with --max-gpus 8, or deploy multi-node replicas with LeaderWorkerSet by hand.":
        "请用 --max-gpus 8 规划，或手动用 LeaderWorkerSet 部署多节点副本。",
    "no sourced GPU feature discovery label for {gpu} (gpuplan/data/gfd_labels.csv), so the manifest could not "
    "select its nodes.":
        "{gpu} 没有有出处的 GPU feature discovery 标签（gpuplan/data/gfd_labels.csv），清单无法选中它的节点。",
    "{tool} {version(tool)} has no option '{name}'.": "{tool} {version(tool)} 没有选项 '{name}'。",
    "report this: the export and the recorded options disagree.": "请报告此问题：导出内容与记录的选项不一致。",
    "{tool} {version(tool)} does not accept {name} {value}.": "{tool} {version(tool)} 不接受 {name} {value}。",
    "accepted: {', '.join(spec['choices'])}.": "可接受：{', '.join(spec['choices'])}。",
    "{server} has no on-load {fmt} quantization.": "{server} 不支持加载时做 {fmt} 量化。",
    "{what} runs an inference server; this plan is a {e.job.task} job.": "{what} 运行的是推理服务；这个方案是 {e.job.task} 任务。",
    "use --export skypilot for training plans.": "训练方案请用 --export skypilot。",
    "this plan was estimated for {get_engine(s.engine).name} (its memory reservation and batch); the {what} export "
    "runs {runs}.":
        "这个方案是按 {get_engine(s.engine).name} 估算的（它的显存预留和批大小）；{what} 导出运行的是 {runs}。",
    "plan with --engine {fix} to export it.": "请用 --engine {fix} 规划后再导出。",
    "the plan serves {fmt} weights, but {model} is published in {native}; {server} loads "
    "{fmt.split('-')[0].upper()} weights only from a checkpoint quantized that way.":
        "方案使用 {fmt} 权重，但 {model} 发布的是 {native}；{server} 只能从按这种方式量化的 checkpoint 加载 "
        "{fmt.split('-')[0].upper()} 权重。",
    "plan with that checkpoint's config.json (its quantization_config makes the format the default), or use --quant "
    "fp8, which the server quantizes on load.":
        "请用那个 checkpoint 的 config.json 规划（其中的 quantization_config 会让该格式成为默认），或用 --quant fp8，"
        "由服务在加载时量化。",
    "the serving exports run vLLM or SGLang, not '{self.engine}'.": "服务导出运行的是 vLLM 或 SGLang，不是 '{self.engine}'。",
    "plan with --engine vllm (or sglang).": "请用 --engine vllm（或 sglang）规划。",
    "must be at least 1, got {value}.": "至少为 1，实际为 {value}。",
    "give {field} >= 1.": "请给出 {field} >= 1。",
    "SkyPilot has no cloud for provider '{offer.provider}'.": "SkyPilot 没有对应云厂商 '{offer.provider}' 的云。",
    "SkyPilot's accelerator registry lists no {gpu} on {cloud}, so `sky launch` would find no resources.":
        "SkyPilot 的加速卡注册表中 {cloud} 上没有 {gpu}，`sky launch` 会找不到资源。",
    "this plan runs on a notebook platform, which SkyPilot does not launch.": "这个方案运行在 notebook 平台上，SkyPilot 无法启动。",
    "plan with --provider set to a cloud SkyPilot launches.": "请把 --provider 设为 SkyPilot 能启动的云再规划。",
    "a replica of {g.gpus_per_replica} GPUs spans nodes; the skypilot export writes single-node replicas.":
        "一个 {g.gpus_per_replica} 卡的副本跨越多个节点；skypilot 导出只写单节点副本。",
    "plan with --max-gpus 8.": "请用 --max-gpus 8 规划。",
    "a replica of {g.name} is a MIG {g.mig} slice; SkyPilot launches whole GPUs.":
        "{g.name} 的一个副本是一个 MIG {g.mig} 切片；SkyPilot 只启动整块 GPU。",
    "export it with --export k8s, or run its server command on the slices.":
        "请用 --export k8s 导出，或在这些切片上自行运行它的服务命令。",
    "SkyPilot's accelerator registry has no {gpu}.": "SkyPilot 的加速卡注册表中没有 {gpu}。",
    "plan with other --gpus.": "请换用其他 --gpus 规划。",
    "SkyPilot names {gpu} differently per cloud ({', '.join(sorted(names))}).": "SkyPilot 在不同云上对 {gpu} 的命名不同（{', '.join(sorted(names))}）。",
    "give the offer (its cloud) to export.": "请给出要导出的报价（即它的云）。",
    "the skypilot export writes the run for --framework {' or '.join(written)} ({e.job.task}); this plan was sized "
    "for --framework {fw}.":
        "skypilot 导出只为 --framework {' or '.join(written)}（{e.job.task|t}）写训练任务；这个方案是按 --framework {fw} "
        "估算的。",
    "plan with --framework {written[0]} (or {', '.join(written[1:])}) to export a task that trains, or write the run "
    "for that framework by hand from the plan's settings.":
        "请用 --framework {written[0]}（或 {', '.join(written[1:])}）规划，才能导出能训练的任务；或按方案的设置手写该框架的"
        "运行命令。",
    "finetune": "微调", "pretrain": "预训练",
    # torchtune export (gpuplan.export.torchtune)
    "torchtune {version('torchtune')} has no model builder for {e.model.name}.":
        "torchtune {version('torchtune')} 没有 {e.model.name} 的模型构建函数。",
    "plan a model of a family torchtune builds ({known}), or plan with --framework llama-factory or trl.":
        "请规划 torchtune 能构建的模型系列（{known}）中的模型，或用 --framework llama-factory 或 trl 规划。",
    "torchtune trains in bf16 or fp32 without mixed precision, not {s.precision}.":
        "torchtune 用 bf16 或 fp32 训练，没有混合精度，不是 {s.precision}。",
    "plan with --framework torchtune (which prices pure bf16) on a GPU with bf16, or with --framework llama-factory "
    "or trl.":
        "请在支持 bf16 的 GPU 上用 --framework torchtune 规划（按纯 bf16 估算），或用 --framework llama-factory 或 trl "
        "规划。",
    "the torchtune export builds a torch.optim optimizer; it has no '{s.optimizer}'.":
        "torchtune 导出构建的是 torch.optim 优化器；没有 '{s.optimizer}'。",
    "the plan recomputes selectively; torchtune's recipes checkpoint whole layers or nothing.":
        "方案按选择性重计算估算；torchtune 的配方只能对整层做检查点，或完全不做。",
    "plan with --framework torchtune, which prices its own choice.":
        "请用 --framework torchtune 规划，它按 torchtune 自己的选择估算。",
    "the torchtune export trains full or with LoRA, not {s.method}.":
        "torchtune 导出只做全参或 LoRA 训练，不是 {s.method}。",
    "torchtune's LoRA recipes train no embeddings beside the adapters (and would not reload them on resume).":
        "torchtune 的 LoRA 配方除适配器外不训练词嵌入（续训时也不会重新加载它们）。",
    "plan without --train-embeddings, or with --framework llama-factory or trl.":
        "请不带 --train-embeddings 规划，或用 --framework llama-factory 或 trl 规划。",
    "torchtune keeps a frozen base in bf16 or in NF4 with double quantization (QLoRA), not {base}.":
        "torchtune 冻结的基座只用 bf16 或带双重量化的 NF4（QLoRA），不是 {base}。",
    "plan --method qlora, or --method lora without --quant.": "请用 --method qlora，或不带 --quant 的 --method lora 规划。",
    "torchtune's LoRA builders adapt at least one attention projection, so they cannot adapt {s.lora_targets} alone.":
        "torchtune 的 LoRA 构建函数至少要适配一个注意力投影，不能只适配 {s.lora_targets}。",
    "plan with --lora-targets {' or '.join(_TARGETS)}.": "请用 --lora-targets {' or '.join(_TARGETS)} 规划。",
    "torchtune's LoRA recipes have no optimizer step in the backward pass.":
        "torchtune 的 LoRA 配方不能在反向传播中执行优化器步。",
    "plan without the fused optimizer step, or with --method full.": "请不用融合优化器步规划，或用 --method full 规划。",
    "the plan splits the model with {p.describe()}; the torchtune export trains with FSDP data parallelism only.":
        "方案用 {p.describe()} 切分模型；torchtune 导出只用 FSDP 数据并行训练。",
    "torchtune offloads whole FSDP shards (fsdp_cpu_offload), not only the optimizer states.":
        "torchtune 卸载的是整个 FSDP 分片（fsdp_cpu_offload），而不只是优化器状态。",
    "on {p.dp} GPUs torchtune shards weights, gradients and optimizer states with FSDP; this plan was priced with "
    "{p.describe()}.":
        "在 {p.dp} 块 GPU 上，torchtune 用 FSDP 切分权重、梯度和优化器状态；这个方案是按 {p.describe()} 估算的。",
    "plan with --framework torchtune, which prices its FSDP (ZeRO-3), or with --max-gpus 1.":
        "请用 --framework torchtune 规划（按它的 FSDP，即 ZeRO-3 估算），或用 --max-gpus 1 规划。",
    "torchtune {version('torchtune')} has no {name} taking {', '.join(unknown)}.":
        "torchtune {version('torchtune')} 没有接受 {', '.join(unknown)} 的 {name}。",
    "plan with --method full, or with --framework llama-factory or trl.":
        "请用 --method full 规划，或用 --framework llama-factory 或 trl 规划。",
    "torchtune {version('torchtune')}'s {name} reads no {', '.join(unknown)}.":
        "torchtune {version('torchtune')} 的 {name} 不读取 {', '.join(unknown)}。",
    "report this: the export and the recorded recipe keys disagree.": "请报告此问题：导出与记录的配方键不一致。",
    # TRL and torchtitan exports (gpuplan.export.trl, gpuplan.export.torchtitan)
    "torchtitan {version('torchtitan')} has no recipe for {e.model.name}.":
        "torchtitan {version('torchtitan')} 没有 {e.model.name} 的配方。",
    "plan one of {', '.join(RECIPES)} with --framework torchtitan, or plan with --framework megatron (which the "
    "export describes from the model's architecture).":
        "请用 --framework torchtitan 规划以下模型之一：{', '.join(RECIPES)}；或用 --framework megatron 规划（导出会按模型结构"
        "写出参数）。",
    "the torchtitan recipes train with AdamW, not {s.optimizer}.": "torchtitan 的配方用 AdamW 训练，不是 {s.optimizer}。",
    "the torchtitan export trains in bf16 (mixed or pure), not {s.precision}.":
        "torchtitan 导出按 bf16（混合或纯 bf16）训练，不是 {s.precision}。",
    "torchtitan offloads whole FSDP shards, not only the optimizer states.":
        "torchtitan 卸载的是整个 FSDP 分片，而不只是优化器状态。",
    "plan without optimizer offload.": "请在不卸载优化器的情况下规划。",
    "the HF Trainer (TRL) has no '{s.optimizer}' optimizer.": "HF Trainer（TRL）没有 '{s.optimizer}' 优化器。",
    "the plan splits the model with {p.describe()}; TRL's SFTTrainer trains with data parallelism and ZeRO only.":
        "这个方案用 {p.describe()} 切分模型；TRL 的 SFTTrainer 只支持数据并行和 ZeRO。",
    "TRL's sft script trains full or with a PEFT LoRA, not {s.method}.":
        "TRL 的 sft 脚本只做全量或 PEFT LoRA 训练，不支持 {s.method}。",
    "plan with --method lora, qlora or full.": "请用 --method lora、qlora 或 full 规划。",
    "the plan recomputes selectively; the HF Trainer checkpoints whole layers or nothing.":
        "这个方案做选择性重计算；HF Trainer 只能整层检查点或完全不做。",
    "plan with --framework trl, which prices its own choice (estimate: --recompute full or none).":
        "请用 --framework trl 规划，它按 TRL 自己的选择估价（estimate：--recompute full 或 none）。",
    "TRL loads a frozen base in bitsandbytes NF4 or int8, not {fmt}.":
        "TRL 只能以 bitsandbytes NF4 或 int8 加载冻结底座，不支持 {fmt}。",
    "TRL does not train in {s.precision}.": "TRL 不支持以 {s.precision} 训练。",
    "LLaMA-Factory has no {fmt} frozen base.": "LLaMA-Factory 不支持 {fmt} 冻结底座。",
    "plan --method qlora (NF4) or --method lora --quant int8.": "请用 --method qlora（NF4）或 --method lora --quant int8 规划。",
    "LLaMA-Factory does not train in {s.precision}.": "LLaMA-Factory 不支持以 {s.precision} 训练。",
    "plan with bf16 or fp16 mixed precision.": "请用 bf16 或 fp16 混合精度规划。",
    "the plan splits the model with {s.parallel.describe()}; LLaMA-Factory trains with data parallelism and "
    "ZeRO/FSDP only.":
        "方案用 {s.parallel.describe()} 切分模型；LLaMA-Factory 只支持数据并行和 ZeRO/FSDP。",
    "plan with --max-gpus (fewer GPUs) or a GPU with more memory so the model fits without tensor parallelism.":
        "请用 --max-gpus（更少的卡）或显存更大的显卡规划，让模型不用张量并行也能装下。",
    "LLaMA-Factory has no P-tuning v2.": "LLaMA-Factory 不支持 P-tuning v2。",
    "use the model's own P-tuning scripts (ChatGLM ptuning/main.py); the skypilot export covers lora, qlora, freeze "
    "and full.":
        "请用模型自带的 P-tuning 脚本（ChatGLM ptuning/main.py）；skypilot 导出支持 lora、qlora、freeze 和 full。",
    "the plan recomputes selectively; LLaMA-Factory checkpoints whole layers or nothing.":
        "方案用的是选择性重计算；LLaMA-Factory 只能对整层做检查点，或完全不做。",
    "plan with --framework llama-factory, which prices its own choice.": "请用 --framework llama-factory 规划，它按自己的设置估算。",
    "LLaMA-Factory has no '{s.optimizer}' optimizer.": "LLaMA-Factory 没有 '{s.optimizer}' 优化器。",
    "{what} names modules, and {m.name} ({m.model_type}) is not a Llama-style decoder whose module names the export "
    "knows.":
        "{what} 要写出模块名，而 {m.name}（{m.model_type}）不是导出器认识其模块名的 Llama 式解码器。",
    "plan with --lora-targets all-linear and without --train-embeddings, or edit lora_target in the exported config.":
        "请用 --lora-targets all-linear 且不带 --train-embeddings 规划，或修改导出配置中的 lora_target。",
    "the Megatron-LM export describes dense RoPE decoders; {m.name} has {', '.join(unsupported)}.":
        "Megatron-LM 导出只描述稠密的 RoPE 解码器；{m.name} 含有 {', '.join(unsupported)}。",
    "write the model's Megatron-LM arguments by hand (its examples/ folder has recipes for MoE and MLA models).":
        "请手写这个模型的 Megatron-LM 参数（它的 examples/ 文件夹里有 MoE 和 MLA 模型的示例）。",
    "Megatron-LM has no '{s.optimizer}' optimizer.": "Megatron-LM 没有 '{s.optimizer}' 优化器。",
    "plan with --optimizer adamw.": "请用 --optimizer adamw 规划。",
    "Megatron-LM trains in mixed precision, not {s.precision}.": "Megatron-LM 以混合精度训练，不支持 {s.precision}。",
    "plan with bf16 mixed precision.": "请用 bf16 混合精度规划。",
    # ---- prices: refresh, the store, provider APIs (gpuplan.market)
    "the API answered error {code}: {error.get('Message', '')}": "API 返回错误 {code}：{error.get('Message', '')}",
    "the API answered error {code}: {message}": "API 返回错误 {code}：{message}",
    "retry later; the previous prices stay in use.": "请稍后重试；之前的价格继续有效。",
    "the API refused the key: {code}: {message}": "API 拒绝了密钥：{code}：{message}",
    "cannot reach {url} ({type(exc).__name__}: {exc}).": "无法连接 {url}（{type(exc).__name__}: {exc}）。",
    "check the connection (and any proxy) and retry.": "请检查网络连接（以及代理）后重试。",
    "the response from {url} is not what the provider documents: {problem}.": "{url} 的响应与云厂商文档不符：{problem}。",
    "retry later; if it persists, the provider changed its API (please report it). The previous prices stay in use.":
        "请稍后重试；如果一直这样，说明云厂商改了 API（请报告此问题）。之前的价格继续有效。",
    "{url} answered HTTP {status} ({_snippet(response)}).": "{url} 返回 HTTP {status}（{_snippet(response)}）。",
    "{url} did not answer in time ({attempt + 1} tries).": "{url} 没有及时响应（试了 {attempt + 1} 次）。",
    "check the connection and retry later.": "请检查网络连接，稍后重试。",
    "rate limited by {url} (HTTP 429, {attempt + 1} tries).": "被 {url} 限流（HTTP 429，试了 {attempt + 1} 次）。",
    "wait a few minutes and refresh this provider again.": "请等几分钟后再刷新这家云厂商。",
    "{url} refused the request (HTTP {status}).": "{url} 拒绝了请求（HTTP {status}）。",
    "check the API key in the environment variable named in 'gpuplan refresh --help'.":
        "请检查 'gpuplan refresh --help' 中所列环境变量里的 API 密钥。",
    "the answer from {url} broke off ({type(exc).__name__}: {exc}).": "{url} 的响应中断了（{type(exc).__name__}: {exc}）。",
    "gpuplan refresh needs the network, and {OFFLINE_ENV} is set.": "gpuplan refresh 需要联网，但设置了 {OFFLINE_ENV}。",
    "unset {OFFLINE_ENV} to refresh; plans and listings go on with the prices already stored and the bundled ones.":
        "要刷新请取消设置 {OFFLINE_ENV}；方案和列表会继续使用已存的价格和内置价格。",
    "the answer held no GPU price gpuplan can use (every SKU unmapped, or none listed).":
        "响应中没有 gpuplan 能用的 GPU 价格（所有 SKU 都无法对应，或没有列出任何 SKU）。",
    "see the unmapped SKUs below; the previous prices stay in use.": "无法对应的 SKU 见下文；之前的价格继续有效。",
    "its price API needs a key and {variable} is not set.": "它的价格 API 需要密钥，但没有设置 {variable}。",
    "create one ({where}) and export {variable}=…; without it the other sources still refresh.":
        "请创建一个（{where}）并 export {variable}=…；没有它其他来源照样刷新。",
    "cannot be read ({exc}).": "无法读取（{exc}）。",
    "move the file aside (e.g. mv '{path}' '{path}.broken') and run 'gpuplan refresh' again; until then gpuplan uses "
    "the bundled prices only.":
        "请把这个文件移开（例如 mv '{path}' '{path}.broken'）后再运行 'gpuplan refresh'；在此之前 gpuplan 只用内置价格。",
    "cannot be written ({why}).": "无法写入（{why}）。",
    "make {path.parent} writable, or point {ENV_DIR} at a writable folder; the prices already stored are still read.":
        "请让 {path.parent} 可写，或把 {ENV_DIR} 指向一个可写的文件夹；已存的价格仍会被读取。",
    "is locked by another process ({exc}; waited {LOCK_WAIT_S} s).": "被另一个进程锁定（{exc}；已等待 {LOCK_WAIT_S} 秒）。",
    "wait for the other gpuplan refresh (or the program holding the file) to finish, then run the command again; the "
    "file itself is fine.":
        "请等另一个 gpuplan refresh（或占用该文件的程序）结束后再运行这条命令；文件本身没有问题。",
    "was written by a newer gpuplan (schema {version}, this one reads {SCHEMA_VERSION}).":
        "由更新版本的 gpuplan 写入（schema {version}，当前版本读取 {SCHEMA_VERSION}）。",
    "upgrade gpuplan, or point GPUPLAN_DATA_DIR elsewhere.": "请升级 gpuplan，或把 GPUPLAN_DATA_DIR 指向别处。",
    # ---- planning (gpuplan.plan)
    "a percentage is below 100.": "百分比应小于 100。",
    "give the commitment as a percent, e.g. 99.9.": "请以百分比给出承诺值，例如 99.9。",
    "no default row for this assumption.": "这个假设没有默认行。",
    "add a row '{name},default,…'.": "请加一行 '{name},default,…'。",
    "{hours_per_month} hours is not a month of use.": "{hours_per_month} 小时不是一个月的使用时长。",
    "use 0 to 744.": "请用 0 到 744。",
    "no purchase price for {gpu.name} in the catalog.": "目录中没有 {gpu.name} 的购置价格。",
    "add one to purchase_prices.csv in a --catalog folder, or pick another GPU.":
        "请在 --catalog 文件夹的 purchase_prices.csv 中加一个，或换一种显卡。",
    "{gpu.name} cannot be bought new in mainland China under {gpu.export_rule} ({gpu.export_status}).":
        "按 {gpu.export_rule}（{gpu.export_status}），{gpu.name} 在中国大陆买不到新卡。",
    "pick a part sold there (e.g. RTX4090D, L20, H20 where licensed, Ascend-910B), or rent it.":
        "请选择在那里有售的型号（例如 RTX4090D、L20、获得许可时的 H20、Ascend-910B），或租用。",
    "'{users}' is not a place of users gpuplan knows.": "gpuplan 不认识用户所在地 '{users}'。",
    "use cn (mainland China) or global.": "请用 cn（中国大陆）或 global。",
    "the date in force is before the date issued.": "施行日期早于发布日期。",
    "give the dates from the text.": "请按原文给出日期。",
    "no GPU is left after --gpus/--exclude-gpus.": "经过 --gpus/--exclude-gpus 筛选后没有剩下任何显卡。",
    "allow more GPUs.": "请放开更多的显卡。",
    "the job has no training tokens.": "任务没有训练 token。",
    "give --samples N --tokens-per-sample T (and --epochs), or --tokens.": "请给出 --samples N --tokens-per-sample T（以及 --epochs），或 --tokens。",
    "serving needs a request rate.": "在线服务需要请求速率。",
    "give --rps, e.g. --rps 5.": "请给出 --rps，例如 --rps 5。",
    "a batch inference job needs a number of requests.": "批量推理任务需要请求数。",
    "give --requests N.": "请给出 --requests N。",
    "{self.max_gpus} GPUs is not a limit.": "{self.max_gpus} 张卡不是有效的上限。",
    "give 1 or more.": "请给 1 或更多。",
    "the budget must be positive.": "预算必须为正。",
    "give an amount such as 500USD.": "请给出金额，例如 500USD。",
    "the deadline must be in the future.": "期限必须在将来。",
    "give a duration such as 2d.": "请给出时长，例如 2d。",
    "{self.headroom} headroom is out of range.": "余量 {self.headroom} 超出范围。",
    "use 0 to 0.5.": "请用 0 到 0.5。",
    "{availability_pct} % cannot be planned: no fleet is never down, and at or below 0 % is no target.":
        "无法按 {availability_pct} % 规划：没有永不宕机的集群，而 0 % 及以下不是目标。",
    "give a percentage below 100, e.g. --availability 99.9.": "请给出小于 100 的百分比，例如 --availability 99.9。",
    "{self.prompt_len}:{self.output_len} has an empty prompt or output.": "{self.prompt_len}:{self.output_len} 的输入或输出为空。",
    "give PROMPT:OUTPUT:SHARE with positive token counts, e.g. 512:128:0.7.": "请以正的 token 数给出 PROMPT:OUTPUT:SHARE，例如 512:128:0.7。",
    "a share of {self.share} is not a part of the traffic.": "占比 {self.share} 不是流量的一部分。",
    "give a share above 0 and at most 1; the shares add up to 1.": "请给出大于 0、至多 1 的占比；各占比之和为 1。",
    "a rate of {self.mean_rps} requests/s serves nobody.": "每秒 {self.mean_rps} 个请求等于没有人用。",
    "give the mean request rate, e.g. --rps 5.": "请给出平均请求速率，例如 --rps 5。",
    "the peak ({self.peak_rps}/s) is below the mean ({self.mean_rps}/s).": "峰值（{self.peak_rps}/秒）低于平均值（{self.mean_rps}/秒）。",
    "give a peak at least the mean, or leave --peak-rps out.": "请给出不低于平均值的峰值，或不给 --peak-rps。",
    "{self.availability * 100} % cannot be planned: no fleet is never down (and 0 % is no target).":
        "无法按 {self.availability * 100} % 规划：没有永不宕机的集群（而 0 % 不是目标）。",
    "'{self.tolerate}' is not a failure domain.": "'{self.tolerate}' 不是故障域。",
    "use zone, region or none.": "请用 zone、region 或 none。",
    "{self.prefix_hit} is not a share of the prompt below 1.": "{self.prefix_hit} 不是小于 1 的输入占比。",
    "give a share from 0 to 0.99, e.g. 0.3.": "请给出 0 到 0.99 的占比，例如 0.3。",
    "the bucket shares add up to {sum((b.share for b in self.buckets))}.": "各请求规格的占比之和为 {sum((b.share for b in self.buckets))}。",
    "make the shares of all --bucket options add up to 1.": "请让所有 --bucket 的占比之和为 1。",
    "give an amount per hour, e.g. 20USD.": "请给出每小时金额，例如 20USD。",
    "'{text}' is not PCT:PROMPT:OUTPUT.": "'{text}' 不是 PCT:PROMPT:OUTPUT 格式。",
    "give e.g. --percentile 50:500:150 --percentile 90:2000:400 --percentile 99:8000:1000.":
        "请这样给出：--percentile 50:500:150 --percentile 90:2000:400 --percentile 99:8000:1000。",
    "no percentile was given.": "没有给出任何分位数。",
    "give e.g. --percentile 50:500:150.": "请这样给出：--percentile 50:500:150。",
    "{pct:g} is not a percentile above 0 and at most 100.": "{pct:g} 不是大于 0、不超过 100 的分位数。",
    "give percentiles such as 50, 90 and 99.": "请给出 50、90、99 这样的分位数。",
    "the lengths at p{pct:g} ({p}, {o}) are not 1 to 10,000,000 tokens.":
        "p{pct:g} 处的长度（{p}, {o}）不在 1 到 10,000,000 个 token 之间。",
    "give prompt and output token counts from 1 to 10,000,000.": "请给出 1 到 10,000,000 之间的输入和输出 token 数。",
    "p{a:g} is given twice.": "p{a:g} 给了两次。",
    "give each percentile once.": "每个分位数只给一次。",
    "the lengths fall from p{a:g} ({pa}, {oa}) to p{b:g} ({pb}, {ob}); a higher percentile is never shorter.":
        "长度从 p{a:g}（{pa}, {oa}）到 p{b:g}（{pb}, {ob}）变短了；更高的分位数不会更短。",
    "give lengths that grow with the percentile.": "请给出随分位数增长的长度。",
    "both --bucket and --percentile were given.": "同时给出了 --bucket 和 --percentile。",
    "describe the request sizes one way: buckets or percentiles.": "请只用一种方式描述请求规格：请求规格或分位数。",
    "'{text}' is not PROMPT:OUTPUT:SHARE.": "'{text}' 不是 PROMPT:OUTPUT:SHARE 格式。",
    "give e.g. --bucket 512:128:0.7 --bucket 4096:512:0.3.": "请这样给出：--bucket 512:128:0.7 --bucket 4096:512:0.3。",
    "'{text}' is longer than any model's context.": "'{text}' 超过了任何模型的上下文长度。",
    "give prompt and output token counts below 10,000,000.": "请给出小于 10,000,000 的输入和输出 token 数。",
    "no offer is in region '{region}'.{did}": "没有报价在区域 '{region}'。{did|t}",
    "run 'gpuplan offers' to see the regions offers are in, or drop --region.": "运行 'gpuplan offers' 查看报价所在的区域，或去掉 --region。",
    "the p99 target ({high} s) is below the p50 one ({low} s); the 99th percentile is never faster than the median.":
        "p99 目标（{high} 秒）低于 p50 目标（{low} 秒）；第 99 百分位永远不会比中位数快。",
    "give {field_} at least the p50 target, or drop one of them.": "请让 {field_} 不低于 p50 目标，或去掉其中一个。",
    # ---- the web server and the HTTP API (gpuplan.web, gpuplan.api)
    "an empty address listens on every interface.": "空地址会监听所有网卡。",
    "use --host 127.0.0.1 (this machine only), or name the interface, e.g. 0.0.0.0 with --token.":
        "请用 --host 127.0.0.1（仅本机），或指明网卡，例如 0.0.0.0 并配合 --token。",
    "the token has characters other than letters, digits and ._~+/=-.": "令牌含有字母、数字和 ._~+/=- 以外的字符。",
    "use a token such as python -c 'import secrets; print(secrets.token_urlsafe())' prints.":
        "请用类似 python -c 'import secrets; print(secrets.token_urlsafe())' 生成的令牌。",
    "the token has {len(token)} characters; guessable.": "令牌只有 {len(token)} 个字符，容易被猜到。",
    "use {MIN_TOKEN_CHARS} or more, e.g. from: python -c 'import secrets; print(secrets.token_urlsafe())'.":
        "请用 {MIN_TOKEN_CHARS} 个或更多字符，例如由 python -c 'import secrets; print(secrets.token_urlsafe())' 生成。",
    "the web server needs FastAPI and uvicorn ({exc.name} is not installed).": "网页服务需要 FastAPI 和 uvicorn（没有安装 {exc.name}）。",
    "pip install 'gpuplan[web]'.": "请运行 pip install 'gpuplan[web]'。",
    "cannot listen on {host}:{port} ({exc}).": "无法监听 {host}:{port}（{exc}）。",
    "choose a free --port from 1 to 65535, and a --host that is an address of this machine.":
        "请选择 1 到 65535 之间空闲的 --port，以及本机地址作为 --host。",
    "{n} must be greater than 0.": "{n} 必须大于 0。",
    "give a positive number, e.g. 10k.": "请给出正数，例如 10k。",
    "serving runs continuously; a deadline does not apply.": "在线服务持续运行，期限不适用。",
    "drop {field}; use --ttft and --tpot for latency targets.": "请去掉 {field}；延迟目标请用 --ttft 和 --tpot。",
    "{value} is not text.": "{value} 不是文本。",
    "give it as text, e.g. 'USD', 'CNY', 'EUR' or '€'.": "请以文本给出，例如 'USD'、'CNY'、'EUR' 或 '€'。",
    "{where} has no option '{name}'.": "{where} 没有选项 '{name}'。",
    "{hint}options: {', '.join(sorted(set(known)))}.": "{hint|t}可用选项：{', '.join(sorted(set(known)))}。",
    "{out[name]} is not {what}.": "{out[name]} 不是{what|t}。",
    "give {name} {_range_text(name)}.": "请给出 {name}：{_range_text(name)|t}。",
    "this plan needs more than the {seconds} s of work a request may take here.": "这个方案需要的计算量超过了这里每个请求允许的 {seconds} 秒。",
    "narrow it: fewer GPU types (gpu), a lower max_gpus, or a provider; or run 'gpuplan plan' locally, which has no "
    "limit.":
        "请缩小范围：更少的显卡型号（gpu）、更低的 max_gpus，或指定云厂商；或在本地运行没有限制的 'gpuplan plan'。",
    # fragments put into the sentences above
    " Did you mean {x}?": "你是不是想用 {x}？",
    "memory": "显存带宽", "on": "开", "off": "关", ", compiled": "，已编译", "all": "全部", "weight": "权重",
    "datacenter": "数据中心卡", "workstation": "工作站卡", "consumer": "消费级显卡", "tpu": "TPU", "npu": "NPU",
        # ---- composed sentences (parts chosen at run time)
    "cannot read file ({exc.strerror}).": "无法读取文件（{exc.strerror}）。",
    "is {_kind(info.st_mode)}, not a regular file.": "是{_kind(info.st_mode)|t}，不是普通文件。",
    "a folder": "文件夹", "a named pipe (FIFO)": "命名管道（FIFO）", "a device": "设备", "a socket": "套接字",
    "not a file": "非文件",
    "put the data in a plain file.": "请把数据放在普通文件里。",
    "file is larger than {max_bytes // (1024 * 1024)} MiB.": "文件大于 {max_bytes // (1024 * 1024)} MiB。",
    "split it or trim it.": "请拆分或精简它。",
    "is not a regular file.": "不是普通文件。",
    "is a symbolic link that loops (it points back at itself).": "是循环的符号链接（指回了自己）。",
    "point the link at the real file, or replace it with the file.": "请让链接指向真正的文件，或用文件替换它。",
    "is a symbolic link to '{os.readlink(path)}', which does not exist.": "是指向 '{os.readlink(path)}' 的符号链接，而它不存在。",
    "point the link at an existing file, or remove it.": "请让链接指向已存在的文件，或删除它。",
    "missing columns {missing}.": "缺少列 {missing}。",
    "unknown columns {unknown}.": "未知的列 {unknown}。",
    "missing columns {missing}; unknown columns {unknown}.": "缺少列 {missing}；未知的列 {unknown}。",
    "the header must be: {header} (see the data README); {', '.join(optional)} may be left out.":
        "表头必须是：{header}（见数据目录的 README）；{', '.join(optional)} 可以省略。",
    "the header must be: {header} (see the data README).": "表头必须是：{header}（见数据目录的 README）。",
    "is not a number.": "不是数字。", "is not a finite number.": "不是有限的数。", "is not a whole number.": "不是整数。",
    "is not a YYYY-MM-DD date.": "不是 YYYY-MM-DD 格式的日期。", "is not an accepted value.": "不是可接受的值。",
    "is not yes or no.": "不是 yes 或 no。",
    "names a value twice.": "同一个值写了两次。",
    "separate the values with ';', each once, from: {', '.join(col.values)}.":
        "请用 ';' 分隔各值，每个只写一次，可选：{', '.join(col.values)}。",
    "download config.json of '{repo_id}' and pass its path, or use a preset from 'gpuplan models'.":
        "请下载 '{repo_id}' 的 config.json 并给出它的路径，或使用 'gpuplan models' 中的预置模型。",
    "pip install 'gpuplan[hub]', or {fix}": "请 pip install 'gpuplan[hub]'，或{fix|t}",
    "use a TP size that divides {m.n_heads} ({', '.join((str(t) for t in (1, 2, 4, 8, 16) if m.n_heads % t == 0))}).":
        "请用能整除 {m.n_heads} 的 TP（{', '.join((str(t) for t in (1, 2, 4, 8, 16) if m.n_heads % t == 0))}）。",
    "unknown weight format '{name}'{did}": "未知的权重格式 '{name}'{did|t}",
    "; did you mean {', '.join(hint)}?": "；你是不是想用 {', '.join(hint)}？",
    ".": "。",
    "plan with --gpus set to one of: {', '.join(sorted(_gfd()))}.": "请把 --gpus 设为以下之一再规划：{', '.join(sorted(_gfd()))}。",
    "plan with --engine {other[0]}, which quantizes {fmt} on load; or {fix}":
        "请用 --engine {other[0]} 规划，它在加载时做 {fmt} 量化；或{fix|t}",
    "use --quant fp8 (quantized on load), a pre-quantized AWQ/GPTQ checkpoint, or 16-bit.":
        "请用 --quant fp8（加载时量化）、预先量化好的 AWQ/GPTQ checkpoint，或 16 位权重。",
    "pick a plan on {', '.join(sorted(skypilot_clouds(clouds)))} (--provider), or use another export format.":
        "请选择 {', '.join(sorted(skypilot_clouds(clouds)))} 上的方案（--provider），或换一种导出格式。",
    "plan with --provider on one of: {', '.join(where)}.": "请把 --provider 设为以下之一再规划：{', '.join(where)}。",
    "SkyPilot launches no {gpu}; plan with other --gpus.": "SkyPilot 无法启动 {gpu}；请换用其他 --gpus 规划。",
    "plan with --optimizer {' or '.join(sorted(_HF_OPTIM))}.": "请用 --optimizer {' or '.join(sorted(_HF_OPTIM))} 规划。",
    "check {TENCENT_KEY_ENV} and {TENCENT_SECRET_ENV}.": "请检查 {TENCENT_KEY_ENV} 和 {TENCENT_SECRET_ENV}。",
    "check {ALIYUN_KEY_ENV} and {ALIYUN_SECRET_ENV} (an AccessKey of the account, enabled, with permission to call "
    "ECS DescribePrice); the previous prices stay in use.":
        "请检查 {ALIYUN_KEY_ENV} 和 {ALIYUN_SECRET_ENV}（账号的 AccessKey，须已启用并有调用 ECS DescribePrice 的权限）；"
        "之前的价格继续有效。",
    "give {field} {r.text()}; check its unit.": "请给出 {field}：{r.text()|t}；请检查单位。",
    "give {field} {r.text()}.": "请给出 {field}：{r.text()|t}。",
    "{given} is out of range: {field} takes {r.text()} ({r.hint}).": "{given} 超出范围：{field} 的取值为 {r.text()|t}（{r.hint|t}）。",
    "{given} is out of range: {field} takes {r.text()}.": "{given} 超出范围：{field} 的取值为 {r.text()|t}。",
    "a percentage below 100, e.g. 99.9": "小于 100 的百分比，例如 99.9",
    "share of prompt tokens found in the prefix cache": "前缀缓存命中的输入 token 占比",
    "facility power over IT power: 1.0 at a desk, 1.1-1.6 in a data center": "机房总功耗与 IT 设备功耗之比：办公桌上为 1.0，数据中心为 1.1-1.6",
    "'{text}' has no unit.": "'{text}' 没有单位。",
    "'{num}' in '{text}' has no unit.": "'{text}' 中的 '{num}' 没有单位。",
    # assumption values chosen at run time
    "optimizer step: every gradient, and foreach AdamW's temporaries of {fmt_bytes(step_temp)}":
        "优化器更新时：全部梯度，以及 foreach AdamW 的临时张量 {fmt_bytes(step_temp)}",
    "{fmt_bytes(kv_now)} per step, the previous step's held too":
        "每步 {fmt_bytes(kv_now)}，上一步的也仍被持有",
    "{fmt_bytes(kv_now)} per step":
        "每步 {fmt_bytes(kv_now)}",
    "{fmt_bytes(saved_in_backward)} per layer in fp16, every layer whose graph is alive":
        "每层 fp16 {fmt_bytes(saved_in_backward)}，计算图仍存活的每一层都保留",
    "{s.kv_dtype}, {fmt_bytes(kv_bytes_per_token(m, s.kv_dtype, s.tp, latent))} per token per GPU":
        "{s.kv_dtype}，每卡每 token {fmt_bytes(kv_bytes_per_token(m, s.kv_dtype, s.tp, latent))}",
    "{s.kv_dtype}, {fmt_bytes(kv_bytes_per_token(m, s.kv_dtype, s.tp, latent))} per token per GPU (MLA latent)":
        "{s.kv_dtype}，每卡每 token {fmt_bytes(kv_bytes_per_token(m, s.kv_dtype, s.tp, latent))}（MLA 潜在向量）",
    "{fmt_bytes(linear_state_bytes(m, s.tp))} per sequence per GPU in {m.n_linear_layers} recurrent ({m.linear_kind}) layers, whatever the context":
        "每卡每条序列 {fmt_bytes(linear_state_bytes(m, s.tp))}，分布在 {m.n_linear_layers} 个循环（{m.linear_kind}）层中，与上下文长度无关",
    "{fmt_bytes(workspace)} in fp32 for {ubatch} tokens": "{fmt_bytes(workspace)}，fp32，按 {ubatch} 个 token 预留",
    "{fmt_bytes(t.at_load)} beyond the generation's peak: the largest matrix in fp16 beside its int8 copies while bitsandbytes quantizes it":
        "比生成阶段的峰值多 {fmt_bytes(t.at_load)}：bitsandbytes 量化时最大矩阵的 fp16 副本与其 int8 副本同时存在",
    "{fmt_bytes(dequant)}: the largest quantized matrix of a layer in 16-bit, for a cuBLAS matmul":
        "{fmt_bytes(dequant)}：一层中最大的量化矩阵反量化为 16 位，供 cuBLAS 矩阵乘使用",
    "{fmt_bytes(workspace)} in fp32 for {ubatch} tokens, with the attention scores (no Flash Attention)":
        "{fmt_bytes(workspace)}，fp32，按 {ubatch} 个 token 预留，含注意力分数（未用 Flash Attention）",
    "held while the next is built": "构建下一步缓存时仍被持有",
    "{fmt_bytes(repeated)}: one layer's copy for the whole context, at the end of decoding":
        "{fmt_bytes(repeated)}：解码结束时，一层覆盖整个上下文的副本",
    "{fmt_bytes(t.rotary)}: cos and sin for every position the model takes, built in each attention layer at load":
        "{fmt_bytes(t.rotary)}：模型可接受的每个位置的 cos 与 sin，加载时在每个注意力层各建一份",
    "no CUDA on Apple parts: the Metal runtime and the process's own allocations, fitted on process readings on "
    "Apple silicon (bench/fit.py)": "Apple 芯片上没有 CUDA：Metal 运行时和进程自身的分配，在 Apple 芯片的进程读数上拟合"
                                    "（bench/fit.py）",
    "all prompt tokens": "全部输入 token", "last token only (generate)": "只保留最后一个 token（生成）",
    # the loss's cases (gpuplan.estimate.loss.LossCase.held), and the softcap's tanh output beside one
    "one logits buffer, their gradient written over it (llm.c's fused classifier)":
        "一个 logits 缓冲区，其梯度直接覆盖写入（llm.c 的融合分类器）",
    "every chunk's logits + their log-softmax or gradient + one chunk's two gradients, none upcast (16-bit "
    "chunked loss)":
        "每个分块的 logits + 其 log-softmax 或梯度 + 一个分块的两份梯度，均不转为 fp32（16 位分块计算损失）",
    "logits + their gradient, no fp32 copy (compiled loss)": "logits + 其梯度，没有 fp32 副本（编译后的损失）",
    "16-bit logits + their shifted 16-bit copy + 16-bit log-softmax (model code without upcast, run without autocast)":
        "16 位 logits + 其移位后的 16 位副本 + 16 位 log-softmax（模型代码不转 fp32，且不在 autocast 下运行）",
    "logits + fp32 copy and fp32 log-softmax of one chunk in 8 (chunked loss)":
        "logits + 8 个分块之一的 fp32 副本和 fp32 log-softmax（分块计算损失）",
    "logits + fp32 copy + fp32 log-softmax": "logits + fp32 副本 + fp32 log-softmax",
    "16-bit logits + their shifted 16-bit copy + its fp32 cast + fp32 log-softmax (the model code's shifted copy)":
        "16 位 logits + 其移位后的 16 位副本 + 该副本转成的 fp32 + fp32 log-softmax（模型代码移位后的副本）",
    "fp32 logits + their shifted fp32 copy + fp32 log-softmax + a 16-bit recast (the model code's shifted copy)":
        "fp32 logits + 其移位后的 fp32 副本 + fp32 log-softmax + 转回的 16 位 logits（模型代码移位后的副本）",
    "16-bit logits + fp32 logits + their shifted fp32 copy + fp32 log-softmax (transformers 4.46 to 4.48)":
        "16 位 logits + fp32 logits + 其移位后的 fp32 副本 + fp32 log-softmax（transformers 4.46 至 4.48）",
    "fp32 logits + their shifted fp32 copy + fp32 log-softmax (transformers before 4.46)":
        "fp32 logits + 其移位后的 fp32 副本 + fp32 log-softmax（transformers 4.46 之前）",
    "{loss.case.held} + the capped logits' tanh output": "{loss.case.held|t} + 截断（softcap）后 logits 的 tanh 输出",
    "end of backward: gradients complete, one layer's activations left": "反向传播结束时：梯度已完整，只剩一层的激活值",
    "end of forward: activations and logits held": "前向传播结束时：持有激活值和 logits",
    "end of forward: activations and logits held, gradients in Megatron's persistent buffer":
        "前向传播结束时：持有激活值和 logits，梯度在 Megatron 的常驻缓冲区中",
    "end of forward: activations and logits held, gradients in llm.c's persistent buffer":
        "前向传播结束时：持有激活值和 logits，梯度在 llm.c 的常驻缓冲区中",
    "end of forward: activations and logits held, gradients kept across micro-batches":
        "前向传播结束时：持有激活值和 logits，梯度跨微批保留",
    "end of forward: activations and logits held, the output layer's gradient made first":
        "前向传播结束时：持有激活值和 logits，输出层的梯度最先生成",
    "end of forward: activations and logits held, gradients not yet made": "前向传播结束时：持有激活值和 logits，梯度尚未生成",
    "1 GPU": "1 张卡",
    # serving fleets (gpuplan.plan.serving): notes, why nothing fits, assumptions
    "the mix solver stopped at its limit of {MILP_NODE_LIMIT} nodes: the fleet is within {fleet.gap} of the cheapest":
        "组合求解器在 {MILP_NODE_LIMIT} 个节点的上限处停止：该集群与最便宜方案的差距在 {fleet.gap} 以内",
    "availability target not reached: {fleet.availability} expected with +{fleet.headroom} headroom against "
    "{r.availability} asked":
        "未达到可用性目标：+{fleet.headroom} 余量下预计 {fleet.availability}，目标为 {r.availability}",
    "the mix sends requests by size to {', '.join(fleet.gpu_types)}: it needs a length-aware router (prompt + output "
    "buckets as in the routing table)":
        "该组合按请求规格把请求分给 {', '.join(fleet.gpu_types)}：需要能识别长度的路由（按请求分配表中的 输入 + 输出 规格）",
    "price of {where}: as of {date}, {age} days old (over {STALE_AFTER_DAYS}): check it":
        "{where} 的价格：价格日期 {date}，已 {age} 天（超过 {STALE_AFTER_DAYS} 天），请核实",
    "price of {where}: undated (read on {date}), read {age} days ago (over {STALE_AFTER_DAYS}): check it":
        "{where} 的价格：未注明日期（{date} 读取），{age} 天前读取（超过 {STALE_AFTER_DAYS} 天），请核实",
    "price of {where}: undated (read on {date})": "{where} 的价格：未注明日期（{date} 读取）",
    "the mix spreads one kind of request over {', '.join(fleet.gpu_types)}: the router weights each replica by the "
    "rate it serves (routing table), not round-robin":
        "该组合把同一种请求分散到 {', '.join(fleet.gpu_types)}：路由须按各副本承担的速率加权（见请求分配表），而不是轮询",
    "no offer is left after the market, providers, regions, spot and marketplace choices. To fix: allow more "
    "providers or regions, --spot, or --allow-marketplace.":
        "按市场、云厂商、区域、竞价和市场主机的选择筛选后没有剩下任何报价。解决办法：放开更多云厂商或区域、--spot 或 "
        "--allow-marketplace。",
    "nothing holds the model on the GPUs offered (8 GPUs per node, or TP 8 × PP across 8-GPU cluster offers). To "
    "fix: quantize (--quant fp8 or awq-int4), or allow larger GPUs or more providers.":
        "所提供的显卡都装不下这个模型（每节点 8 卡，或在 8 卡集群报价上用 TP 8 × PP）。解决办法：量化（--quant fp8 或 "
        "awq-int4），或放开显存更大的显卡或更多云厂商。",
    "no fleet survives the failure scenarios within the budget. To fix: raise --budget.":
        "在预算内没有能扛过各种故障情形的集群。解决办法：提高 --budget。",
    "no fleet survives the failure scenarios with these offers. To fix: allow more regions or providers, or "
    "--tolerate none.":
        "用这些报价组不出能扛过各种故障情形的集群。解决办法：放开更多区域或云厂商，或用 --tolerate none。",
    "the quickest {what} is {fmt_seconds(value)} on {best.config} (target {option} {fmt_seconds(target)})":
        "最快的{what|t}是 {best.config} 上的 {fmt_seconds(value)}（目标 {option} {fmt_seconds(target)}）",
    "first token": "首字延迟", "p99 first token": "p99 首字延迟", "token step": "每字延迟", "p99 token step": "p99 每字延迟",
    "configurations fit in memory, but none meets the latency targets even at a trickle of requests: {what}. To "
    "fix: relax the targets, use shorter prompts, or allow faster GPUs.":
        "有配置装得下，但即使请求极少也没有一个满足延迟目标：{what|t}。解决办法：放宽目标、缩短输入，或放开更快的显卡。",
    "no configuration meets the latency targets together": "没有配置能同时满足所有延迟目标",
    "{rec.total_s} s = provisioning {rec.provisioning_s} s + weight load {rec.weight_load_s} s + warm-up "
    "{rec.warmup_s} s":
        "{rec.total_s} 秒 = 开机 {rec.provisioning_s} 秒 + 加载权重 {rec.weight_load_s} 秒 + 预热 {rec.warmup_s} 秒",
    "continuous batching, Little's law, M/D/1 prompt queue (p99 by Kingman's exponential tail)":
        "连续批处理、Little 定律、M/D/1 输入队列（p99 按 Kingman 指数尾近似）",
    "a replica given several buckets shares its time linearly": "承担多种请求规格的副本按线性比例分配时间",
    "zones per region and single-/multi-zone SLAs from the provider table (one zone per region, and "
    "availability.csv's defaults, where a provider publishes none); marketplace and notebook tiers left out":
        "每个区域的可用区数和单/多可用区 SLA 取自云厂商表（云厂商未公布时按每区域一个可用区和 availability.csv 的默认值）；"
        "不含市场和 notebook 档位",
    "zones per region and single-/multi-zone SLAs from the provider table (one zone per region, and "
    "availability.csv's defaults, where a provider publishes none); marketplace and notebook tiers left out "
    "(allowed here)":
        "每个区域的可用区数和单/多可用区 SLA 取自云厂商表（云厂商未公布时按每区域一个可用区和 availability.csv 的默认值）；"
        "不含市场和 notebook 档位（这里允许使用）",
    "p99 ≤ {DEFAULT_TTFT_P99_S} s": "p99 ≤ {DEFAULT_TTFT_P99_S} 秒",
    "{r.prefix_hit} of prompt tokens skip prefill and share their KV blocks": "{r.prefix_hit} 的输入 token 跳过预填充并共享 KV 块",
    "{net} Gb/s per GPU (pipeline stages pass hidden states once per step: a few MB, well under 1 % of a step; "
    "expert-parallel ranks send every token to the ranks of its experts and back, over it between nodes and NVLink "
    "within one)":
        "每卡 {net} Gb/s（流水线各段每步传递一次隐藏状态：几 MB，远不到一步时间的 1 %；专家并行的各 rank 把每个 token "
        "发往其专家所在的 rank 再收回，跨节点走该网络，节点内走 NVLink）",
    "data-parallel attention on every rank for its own sequences, the routed experts split evenly over the ranks, "
    "uniform routing; per MoE layer a dispatch and a combine of top-k × hidden × 2 bytes per token (16-bit), the "
    "off-node share over the network and the rest over NVLink, one after the other (errs slow)":
        "每个 rank 以数据并行方式为自己的序列计算注意力，路由专家平均分到各 rank，按均匀路由计；每个 MoE 层每个 token "
        "分发和汇总各 top-k × hidden × 2 字节（16 位），跨节点部分走网络、其余走 NVLink，二者依次进行（偏慢估计）",
    "{m.name}'s {m.n_experts} experts do not split over {ranks} ranks.":
        "{m.name} 的 {m.n_experts} 个专家无法平均分到 {ranks} 个 rank 上。",
    "plan expert parallelism over a number of GPUs that divides the experts.": "请用能整除专家数的 GPU 数规划专家并行。",
    # ---- the planner's sentences (gpuplan.plan.planner): why nothing fits, changes that would make it fit
    "every plan takes longer than {fmt_seconds(DEFAULT_MAX_SECONDS)}, the longest --objective {c.objective} allows "
    "without a deadline (the fastest, {fastest.label()}, takes {fmt_seconds(_time(fastest))}). To fix: give a longer "
    "--deadline (e.g. --deadline {math.ceil(_time(fastest) / DAY)}d), or use --objective time.":
        "每个方案都超过 {fmt_seconds(DEFAULT_MAX_SECONDS)}，这是没有期限时 --objective {c.objective} 允许的最长时间"
        "（最快的 {fastest.label()} 需要 {fmt_seconds(_time(fastest))}）。解决办法：给更长的 --deadline（例如 --deadline "
        "{math.ceil(_time(fastest) / DAY)}d），或用 --objective time。",
    "configurations fit in memory, but none is offered within the constraints (market, providers, spot, budget, "
    "deadline).":
        "有配置装得下，但在约束条件（市场、云厂商、竞价、预算、期限）内都没有报价。",
    "no configuration can run this job: {message} To fix: {fix}": "没有配置能运行这个任务：{message|t}解决办法：{fix|t}",
    "no configuration can run this job: {message}": "没有配置能运行这个任务：{message|t}",
    "no offer has {what}{where}. To fix: allow more GPUs, another market or more providers (see 'gpuplan offers').":
        "没有{where|t}提供{what|t}的报价。解决办法：放开更多显卡、换个市场或放开更多云厂商（见 'gpuplan offers'）。",
    "the allowed GPUs": "所允许的显卡", "GPUs that can run it": "能运行它的显卡",
    "nothing fits: the closest, {near.describe()}, needs {fmt_bytes(near.needed_bytes)} per GPU but has "
    "{fmt_bytes(near.capacity_bytes)} ({fmt_bytes(near.shortfall_bytes)} short).":
        "都装不下：最接近的 {near.describe()} 每卡需要 {fmt_bytes(near.needed_bytes)}，但只有 "
        "{fmt_bytes(near.capacity_bytes)}（差 {fmt_bytes(near.shortfall_bytes)}）。",
    "the quickest first token is {fmt_seconds(first_token(best_ttft))} on {best_ttft.describe()} (target --ttft "
    "{fmt_seconds(job.ttft_s)})":
        "最快的首字延迟是 {best_ttft.describe()} 上的 {fmt_seconds(first_token(best_ttft))}（目标 --ttft "
        "{fmt_seconds(job.ttft_s)}）",
    "the quickest token step is {fmt_seconds(best_tpot.speed.tpot_s)} on {best_tpot.describe()} (target --tpot "
    "{fmt_seconds(job.tpot_s)})":
        "最快的每字延迟是 {best_tpot.describe()} 上的 {fmt_seconds(best_tpot.speed.tpot_s)}（目标 --tpot "
        "{fmt_seconds(job.tpot_s)}）",
    "no configuration meets the latency targets": "没有配置满足延迟目标",
    "configurations fit in memory, but none meets the latency targets even serving one request at a time: {what}. "
    "Relax --ttft/--tpot, use a shorter prompt, or allow faster GPUs.":
        "有配置装得下，但即使一次只处理一个请求也没有一个满足延迟目标：{what|t}。请放宽 --ttft/--tpot、缩短输入，"
        "或放开更快的显卡。",
    "quantize to {q}": "量化为 {q}", "halve the prompt length": "输入长度减半", "switch to {meth.upper()}": "改用 {meth.upper()}",
    "switch to {names[m]}": "改用 {names[m]}", "halve the sequence length": "序列长度减半",
    "allow any number of GPUs": "不限卡数", "switch to QLoRA and allow any number of GPUs": "改用 QLoRA 并不限卡数",
    "allow any GPU": "不限显卡型号", "drop the {limits}": "去掉{limits|t}限制", "budget": "预算", "deadline": "期限",
    "budget and deadline": "预算和期限", "serve with {e}": "改用 {e} 部署",
    # ---- fit, buy, compare (gpuplan.plan.fitting, gpuplan.plan.buy)
    "inference 16-bit": "16 位推理", "inference 8-bit": "8 位推理", "inference 4-bit": "4 位推理",
    "LoRA fine-tune": "LoRA 微调", "QLoRA fine-tune": "QLoRA 微调", "full fine-tune": "全量微调",
    "full fine-tuning": "全量微调",
    "{name} defaults: {rest}": "{name} 默认设置：{rest|l}",
    "packed sequences": "打包序列", "unpacked sequences": "不打包序列", "chunked loss": "分块计算损失",
    "sequences padded to the maximum length": "序列补齐到最大长度",
    "full fine-tuning in pure bf16 (no fp32 master or states)": "全量微调用纯 bf16（没有 fp32 主权重和状态）",
    "inference int8": "int8 推理", "inference int4 (AWQ)": "int4 推理（AWQ）",
    "batch 1, {context} tokens of context, vLLM": "批大小 1，{context} token 上下文，vLLM",
    "micro-batch 1 × {context} tokens, activation checkpointing, AdamW; FSDP across GPUs":
        "微批 1 × {context} token，激活重计算，AdamW；多卡用 FSDP",
    "training (LoRA, tokens/s)": "训练（LoRA，token/秒）", "training (full, tokens/s)": "训练（全量，token/秒）",
    "inference batch-1 decode (tokens/s)": "推理：批大小 1 解码（token/秒）",
    "inference throughput (tokens/s)": "推理：吞吐（token/秒）",
    "no rental offer to compare with": "没有可比较的租用报价",
    "renting is cheaper at any use (power alone costs more than the rental)": "怎么用都是租更便宜（光电费就比租金贵）",
    "renting is cheaper: owning pays only above {be} h/month, more than a month has":
        "租更便宜：每月用超过 {be} 小时买才划算，而一个月没有这么多小时",
    "buy if you use it more than {be} h/month ({be / 730} of the time); at {self.hours_per_month} h/month owning is "
    "cheaper":
        "每月使用超过 {be} 小时（{be / 730} 的时间）就该买；按每月 {self.hours_per_month} 小时，自己买更便宜",
    "buy if you use it more than {be} h/month ({be / 730} of the time); at {self.hours_per_month} h/month renting is "
    "cheaper":
        "每月使用超过 {be} 小时（{be / 730} 的时间）就该买；按每月 {self.hours_per_month} 小时，租更便宜",
    "nothing fits.": "都装不下。",
    "recovery": "故障恢复", "latency model": "延迟模型", "mixed buckets": "混合请求规格", "zones and SLAs": "可用区与 SLA",
    "default TTFT target": "默认首字延迟目标", "prefix cache": "前缀缓存", "network between nodes": "节点间网络",
    "guard checks": "安全护栏的检查", "guard latency": "安全护栏的延迟", "co-located guard": "同卡部署的安全护栏",
    "co-located interference": "同卡部署的相互干扰", "availability split": "可用性分配", "MIG slices": "MIG 切片",
    "moderation price": "审核服务价格", "characters per token": "每 token 字符数", "service latency": "审核服务延迟",
    "none published, so the plan counts 0 s: the check's round trip adds to every TTFT; measure it and lower "
    "--ttft/--ttft-p99 by it, or use --guard-mode parallel":
        "服务方未公布延迟，规划按 0 秒计：审核请求的往返时间会加到每个首字延迟上；请实测并把 --ttft/--ttft-p99 减去它，"
        "或使用 --guard-mode parallel",
    "none published, so the plan counts 0 s: the check runs beside the main prefill, and the first token "
    "waits only for what its round trip takes beyond the prefill":
        "服务方未公布延迟，规划按 0 秒计：审核与主模型预填充同时进行，首字只需多等往返时间超出预填充的部分",
    "the two servers time-share the GPU (no MPS), as the linear split assumes; the context switches "
    "between them and their contention for caches and memory bandwidth are not modelled, so the "
    "co-located capacity and verdict times err fast":
        "两个服务分时共用 GPU（未启用 MPS），与线性分摊的假设一致；二者之间的上下文切换以及对缓存和显存带宽的争用没有建模，"
        "因此同卡部署的容量和判定时间偏乐观",
    "0: as many as fit": "0：装得下的最大值", "0: gpuplan chooses": "0：由 gpuplan 选择", "0: all": "0：全部",
    "preallocate": "预分配", "on-demand": "按需分配", "context": "按上下文分配",
    "no activation recomputation": "不做激活重计算", "gradient checkpointing on": "开启梯度检查点",
    "selective recomputation": "选择性重计算",
    # ---- the assumptions' sources where they explain rather than cite (a citation stays as published)
    "ZeRO stage shards optimizer (1), gradients (2), weights (3)": "ZeRO 阶段切分：优化器状态（1）、梯度（2）、权重（3）",
    "{loss.bytes_per_entry} bytes per vocabulary entry per token": "每个 token 每个词表项 {loss.bytes_per_entry} 字节",
    "fitted on training-memory rows (bench/fit.py)": "在训练显存数据上拟合（bench/fit.py）",
    "PyTorch caching-allocator reserve above the allocated peak, fitted (bench/fit.py)":
        "PyTorch 缓存分配器在已分配峰值之上的预留，拟合得出（bench/fit.py）",
    "reserved or device memory above the counted tensors, growing with the resident bytes; fitted (bench/fit.py)":
        "预留显存或设备显存超出所计张量的部分，随常驻字节增长；拟合得出（bench/fit.py）",
    "torch.optim.AdamW's foreach step (torch/optim/adamw.py _multi_tensor_adamw) after PyTorch's backward":
        "PyTorch 反向传播之后 torch.optim.AdamW 的 foreach 更新（torch/optim/adamw.py _multi_tensor_adamw）",
    "PyTorch zero_grad(set_to_none=True); gradient accumulation keeps gradients":
        "PyTorch zero_grad(set_to_none=True)；梯度累积会保留梯度",
    "bitsandbytes paged optimizers use CUDA managed memory that spills to the host":
        "bitsandbytes 的分页优化器使用 CUDA 统一内存，放不下时溢出到主机内存",
    "fitted on device-level inference-memory rows (bench/fit.py)": "在设备级推理显存数据上拟合（bench/fit.py）",
    "fitted on PyTorch-counted inference-memory rows (bench/fit.py)": "在 PyTorch 统计的推理显存数据上拟合（bench/fit.py）",
    "transformers >= 4.45 keeps only the last position's logits during generation":
        "transformers >= 4.45 在生成时只保留最后一个位置的 logits",
    "2·n_kv_heads·head_dim·bytes per layer; DeepSeek-V2 sec. 2.1 for MLA":
        "每层 2·n_kv_heads·head_dim·字节数；MLA 见 DeepSeek-V2 第 2.1 节",
    "roofline: max(weight bytes/bandwidth, FLOPs/peak) + KV bytes/bandwidth":
        "roofline 模型：max(权重字节/带宽, FLOPs/峰值) + KV 字节/带宽",
    "largest that fits the KV cache and the engine cap": "KV 缓存和引擎上限允许的最大值", "as requested": "按请求给定",
    "fitted (bench/fit.py)": "拟合得出（bench/fit.py）",
    "per-SM load cap of its mat-vec kernels (docs/estimators.md)": "其矩阵-向量乘算子每个 SM 的读取上限（docs/estimators.md）",
    "fitted (bench/fit.py); none on {gpu.vendor} parts: their efficiency is not calibrated":
        "拟合得出（bench/fit.py）；没有 {gpu.vendor} 产品的数据：其效率未经校准",
    "fitted on published runs (bench/fit.py, docs/accuracy.md)": "在公开的训练记录上拟合（bench/fit.py、docs/accuracy.md）",
    "fitted on published runs (bench/fit.py, docs/accuracy.md); none on {gpu.vendor} parts: their efficiency is not "
    "calibrated":
        "在公开的训练记录上拟合（bench/fit.py、docs/accuracy.md）；没有 {gpu.vendor} 产品的数据：其效率未经校准",
    "gpus.csv; network is an assumption (params.json)": "gpus.csv；网络带宽是假设值（params.json）",
    "gpus.csv; NCCL moves 76-82 % of an NVLink's rate, by collective (nccl-tests: links.NVLINK_BUS_SHARE); network "
    "is an assumption (params.json)":
        "gpus.csv；NCCL 集合通信按操作类型只用到 NVLink 速率的 76-82 %（nccl-tests：links.NVLINK_BUS_SHARE）；网络带宽是假设值"
        "（params.json）",
    "micro-batch × sequence × grad-accum × data-parallel ranks": "微批 × 序列长度 × 梯度累积 × 数据并行 rank 数",
    "gpus.csv (left empty where no source was found); the time is a lower bound": "gpus.csv（找不到来源处留空）；时间为下限",
    "gpus.csv (left empty where no source was found); the time is an upper bound": "gpus.csv（找不到来源处留空）；时间为上限",
    "6·N + attention (Kaplan et al. 2020); frozen base: 4·N": "6·N + 注意力（Kaplan et al. 2020）；冻结底座：4·N",
    "Korthikanti et al. 2022 sec. 4.1, re-derived": "Korthikanti et al. 2022 第 4.1 节，重新推导",
    "every parameter is trained": "训练全部参数",
    "LoRA (Hu et al. 2021), rank {s.lora_rank}, targets {s.lora_targets}": "LoRA（Hu et al. 2021），秩 {s.lora_rank}，目标层 {s.lora_targets}",
    "LoRA (Hu et al. 2021), rank {s.lora_rank}, targets {s.lora_targets}; embedding and output layer trained too "
    "(PEFT modules_to_save)":
        "LoRA（Hu et al. 2021），秩 {s.lora_rank}，目标层 {s.lora_targets}；词嵌入和输出层也参与训练（PEFT modules_to_save）",
    "DoRA (Liu et al. 2024): LoRA rank {s.lora_rank}, targets {s.lora_targets}, and a trained magnitude per output feature; PEFT's forward multiplies the input by each adapted weight again and keeps that product and the adapters' output":
        "DoRA（Liu et al. 2024）：LoRA 秩 {s.lora_rank}，目标层 {s.lora_targets}，外加每个输出特征一个可训练的幅度；PEFT 的前向会再用每个被适配的权重乘一次输入，并保留这个乘积和适配器的输出",
    "DoRA (Liu et al. 2024): LoRA rank {s.lora_rank}, targets {s.lora_targets}, and a trained magnitude per output feature; PEFT's forward multiplies the input by each adapted weight again and keeps that product and the adapters' output; embedding and output layer trained too (PEFT modules_to_save)":
        "DoRA（Liu et al. 2024）：LoRA 秩 {s.lora_rank}，目标层 {s.lora_targets}，外加每个输出特征一个可训练的幅度；PEFT 的前向会再用每个被适配的权重乘一次输入，并保留这个乘积和适配器的输出；词嵌入和输出层也参与训练（PEFT modules_to_save）",
    "GaLore (Zhao et al. 2024): every weight trained; Adam states of the {s.lora_targets} linears kept in a rank-{s.lora_rank} projection of their full-size gradients, the projection's periodic SVD not counted in the time":
        "GaLore（Zhao et al. 2024）：所有权重都训练；{s.lora_targets} 线性层的 Adam 状态保存在其全尺寸梯度的秩 {s.lora_rank} 投影中，投影定期做的 SVD 不计入时间",
    "GaLore is not modelled on a mixture-of-experts model (each routed expert would be projected on its own).":
        "尚未对混合专家（MoE）模型建模 GaLore（每个路由专家会各自投影）。",
    "use --method full or lora for this model.": "此模型请用 --method full 或 lora。",
    "LLaMA-Factory has no LISA.": "LLaMA-Factory 不支持 LISA。",
    "LLaMA-Factory has no LLaMA-Adapter.": "LLaMA-Factory 不支持 LLaMA-Adapter。",
    "LLaMA-Factory has no AdaLoRA.": "LLaMA-Factory 不支持 AdaLoRA。",
    "plan with --method lora or dora, or run AdaLoRA with PEFT's AdaLoraConfig (ms-swift --sft_type adalora).":
        "请用 --method lora 或 dora 重新规划，或用 PEFT 的 AdaLoraConfig（ms-swift --sft_type adalora）运行 AdaLoRA。",
    "AdaLoRA (Zhang et al. 2023): P·Λ·Q adapters at initial rank {s.lora_rank}, targets {s.lora_targets}, with the rank allocator's three importance buffers per adapter weight; the orthogonal regularizer's rank × rank products not counted":
        "AdaLoRA（Zhang et al. 2023）：初始秩为 {s.lora_rank} 的 P·Λ·Q 适配器，目标 {s.lora_targets}，每个适配器权重另有秩分配器的三个重要性缓冲；正交正则项的秩 × 秩乘积未计入",
    "plan with --method lora or qlora, or run LLaMA-Adapter with LitGPT (--framework litgpt).":
        "请用 --method lora 或 qlora 重新规划，或用 LitGPT（--framework litgpt）运行 LLaMA-Adapter。",
    "LLaMA-Adapter is not modelled on {m.name}: gpuplan sizes it for dense decoders whose layers all attend with plain query, key and value heads.":
        "尚未对 {m.name} 建模 LLaMA-Adapter：gpuplan 只为每层都用普通查询、键、值头做注意力的稠密解码器估算它。",
    "use --method lora or qlora for this model.": "此模型请用 --method lora 或 qlora。",
    "LLaMA-Adapter (Zhang et al. 2023) as LitGPT runs it: a {s.adapter_prompt_len}-token prompt and a zero-init gate per layer from layer {s.adapter_start_layer}":
        "LLaMA-Adapter（Zhang et al. 2023），按 LitGPT 的实现：从第 {s.adapter_start_layer} 层起每层一个 {s.adapter_prompt_len} 个词元的可学习提示和一个零初始化门控",
    "LLaMA-Adapter v2 (Gao et al. 2023) as LitGPT runs it: a {s.adapter_prompt_len}-token prompt and a zero-init gate per layer from layer {s.adapter_start_layer}, a bias and a scale on every linear, norms trained":
        "LLaMA-Adapter v2（Gao et al. 2023），按 LitGPT 的实现：从第 {s.adapter_start_layer} 层起每层一个 {s.adapter_prompt_len} 个词元的可学习提示和一个零初始化门控，每个线性层加偏置和缩放，归一化层参与训练",
    "QDoRA (DoRA on a quantized base) is not modelled: PEFT's DoRA dequantizes each quantized weight to 16-bit in every forward to take the column norm of W + s·BA, and reuses the quantized matmul's output for the magnitude's product, both of which gpuplan does not size yet.":
        "尚未对 QDoRA（量化底座上的 DoRA）建模：PEFT 的 DoRA 在每次前向中把每个量化权重反量化为 16 位以计算 W + s·BA 的列范数，并复用量化矩阵乘的输出来计算幅度项，这两者 gpuplan 目前都未计入。",
    "drop --quant for DoRA on a 16-bit base, or use --method qlora for a 4-bit base.":
        "去掉 --quant 以在 16 位底座上做 DoRA，或对 4 位底座使用 --method qlora。",
    "AdaLoRA on a quantized base is not modelled: gpuplan sizes its adapters and rank allocator over a 16-bit base.":
        "尚未对量化底座上的 AdaLoRA 建模：gpuplan 只按 16 位底座计算它的适配器和秩分配器。",
    "drop --quant for AdaLoRA on a 16-bit base, or use --method qlora for a 4-bit base.":
        "去掉 --quant 以在 16 位底座上做 AdaLoRA，或对 4 位底座使用 --method qlora。",
    "plan with --method full, lora or galore, or run LISA with ms-swift's --lisa_activated_layers or LMFlow.":
        "请用 --method full、lora 或 galore 重新规划，或用 ms-swift 的 --lisa_activated_layers 或 LMFlow 运行 LISA。",
    "LISA (Pan et al. 2024): embedding, output layer and {s.trainable_layers} sampled layers trained at a time, with gradients and Adam states for those; backward runs through every layer to the embedding":
        "LISA（Pan et al. 2024）：每次训练词嵌入、输出层和 {s.trainable_layers} 个随机抽取的层，只为它们保存梯度和 Adam 状态；反向传播经过每一层直到词嵌入",
    "the LLaMA-Factory export projects GaLore on every linear, not {s.lora_targets}.":
        "LLaMA-Factory 导出对所有线性层做 GaLore 投影，而不是 {s.lora_targets}。",
    "plan with --lora-targets all-linear.": "请用 --lora-targets all-linear 重新规划。",
    "QLoRA (Dettmers et al. 2023): NF4 base + LoRA rank {s.lora_rank}, targets {s.lora_targets}":
        "QLoRA（Dettmers et al. 2023）：NF4 底座 + LoRA 秩 {s.lora_rank}，目标层 {s.lora_targets}",
    "QLoRA (Dettmers et al. 2023): NF4 base + LoRA rank {s.lora_rank}, targets {s.lora_targets}; embedding and output "
    "layer trained too (PEFT modules_to_save)":
        "QLoRA（Dettmers et al. 2023）：NF4 底座 + LoRA 秩 {s.lora_rank}，目标层 {s.lora_targets}；词嵌入和输出层也参与训练"
        "（PEFT modules_to_save）",
    "P-tuning v2 (Liu et al. 2022): prefix of {s.prefix_len} per layer for K and V":
        "P-tuning v2（Liu et al. 2022）：每层 K 和 V 各 {s.prefix_len} 长度的前缀",
    "freeze: last {s.trainable_layers} layers trained": "冻结：只训练最后 {s.trainable_layers} 层",
    "{net * 8 / 1000000000.0} Gb/s per GPU network": "每卡 {net * 8 / 1000000000.0} Gb/s 网络",
    # assumption values of serving fleets (availability.csv units) and error bands
    "{v} percent per month": "每月 {v} %", "{v} per GPU-hour": "每卡时 {v}", "{v} per instance-month": "每实例每月 {v}",
    "{v} seconds": "{v} 秒",
    "{self.low}×–{self.high}× ({self.cls}; held out {self.held_low}×–{self.held_high}×)":
        "{self.low}×–{self.high}×（{self.cls}；留出 {self.held_low}×–{self.held_high}×）",
    "{self.low}×–{self.high}× ({self.cls})": "{self.low}×–{self.high}×（{self.cls}）",
    # listings' captions and notes (gpuplan.cli)
    "TFLOPS are dense tensor rates; 'Usable' is the driver-visible capacity where published.":
        "TFLOPS 为稠密张量算力；“可用显存”是已公布的驱动可见容量。",
    "TFLOPS are dense tensor rates; --wide shows architecture, usable memory, links.":
        "TFLOPS 为稠密张量算力；--wide 显示架构、可用显存和互联。",
    "Age = days since the price was published; 'undated' = the source states no date. ⚠ older than {STALE_AFTER_DAYS} "
    "days: check the price. reserved rows need the commitment shown (mo = months). † GPU inferred from the instance "
    "family. --json shows each row's source.":
        "价格时效 = 价格发布至今的天数；'undated' = 来源未注明日期。⚠ 超过 {STALE_AFTER_DAYS} 天：请核实价格。reserved "
        "行需要所示的承诺期（mo = 月）。† 显卡型号由实例系列推断。--json 显示每行的来源。",
    "no offers match. Try fewer filters, or 'gpuplan offers' to see all.": "没有符合条件的报价。请减少筛选条件，或运行 'gpuplan offers' 查看全部。",
    " — showing {len(shown)} of {len(views)}; --limit 0 shows all": " — 显示 {len(views)} 条中的 {len(shown)} 条；--limit 0 显示全部",
    "no refreshed prices of {name} stored yet. Run 'gpuplan refresh' (see 'gpuplan refresh --help') to fetch current "
    "prices.":
        "还没有存下 {name} 刷新后的价格。请运行 'gpuplan refresh'（见 'gpuplan refresh --help'）拉取当前价格。",
    "no refreshed prices of {name} stored yet for these filters. Run 'gpuplan refresh' (see 'gpuplan refresh --help') "
    "to fetch current prices.":
        "按这些筛选条件还没有存下 {name} 刷新后的价格。请运行 'gpuplan refresh'（见 'gpuplan refresh --help'）拉取当前价格。",
    "total": "合计", "active per token": "每 token 激活", "source: {detail['source']}": "来源：{detail['source']}",
    "wrote {target}": "已写入 {target}",
    "note: {x}": "注意：{x|t}", "warning: {x}": "警告：{x|t}",
    "prices: bundled offers as read up to {bundled.isoformat()} + refreshed {refreshed}":
        "价格：内置报价（读取至 {bundled.isoformat()}）+ 刷新的 {refreshed}",
    "prices: bundled offers as read up to {bundled.isoformat()} + refreshed {refreshed}; FX rates of {fx.isoformat()}":
        "价格：内置报价（读取至 {bundled.isoformat()}）+ 刷新的 {refreshed}；汇率日期 {fx.isoformat()}",
    "your catalog replaces {n} bundled row(s): {rows}.": "你的目录替换了 {n} 行内置数据：{rows}。",
    "the pick ({result.pick.label()}) cannot be exported to SkyPilot as planned{why}; exporting the best plan that "
    "can: {chosen.label()}":
        "推荐方案（{result.pick.label()}）无法按规划导出到 SkyPilot{why|t}；改为导出能导出的最佳方案：{chosen.label()}",
    "no group of the fleet can be written as --export {fmt}; exporting the best single configuration that can be "
    "instead":
        "集群中没有任何一组能写成 --export {fmt}；改为导出能导出的最佳单一配置",
    # ---- the HTTP API's own errors (gpuplan.web): the guard, validation, unknown routes
    "this server answers requests for 127.0.0.1 or localhost, not for Host '{shown}'.":
        "这个服务只响应发给 127.0.0.1 或 localhost 的请求，不响应 Host '{shown}'。",
    "open http://127.0.0.1:PORT/ (a page from another site cannot use this server).":
        "请打开 http://127.0.0.1:PORT/（其他网站的页面不能使用这个服务）。",
    "the request body is larger than {self.max_body_bytes // 1024} KiB.": "请求体大于 {self.max_body_bytes // 1024} KiB。",
    "send a smaller request: a plan or an estimate is a few hundred bytes of JSON.":
        "请发送更小的请求：一次规划或估算只需几百字节的 JSON。",
    "this server needs its token.": "这个服务需要令牌。",
    "send 'Authorization: Bearer TOKEN', or open /?token=TOKEN once in the browser.":
        "请发送 'Authorization: Bearer TOKEN'，或在浏览器中打开一次 /?token=TOKEN。",
    "remove '{field}'; did you mean '{hint[0]}'?": "请去掉 '{field}'；你是不是想用 '{hint[0]}'？",
    "remove '{field}' (see docs/web.md).": "请去掉 '{field}'（见 docs/web.md）。",
    "use {ctx.get('expected')}.": "请用 {ctx.get('expected')}。", "give a number above {ctx.get('gt')}.": "请给出大于 {ctx.get('gt')} 的数。",
    "give {ctx.get('ge')} or more.": "请给出 {ctx.get('ge')} 或更大的数。", "add '{field}'.": "请加上 '{field}'。",
    "the model name is empty.": "模型名称为空。",
    "give a preset from 'gpuplan models' or the path of a config.json.": "请给出 'gpuplan models' 中的预设，或 config.json 的路径。",
    "give {ctx.get('le')} or less.": "请给出 {ctx.get('le')} 或更小的数。", "give a non-empty value.": "请给出非空的值。",
    "give at least one value.": "请至少给出一个值。", "send a JSON object.": "请发送 JSON 对象。",
    "send a JSON object with the fields in docs/web.md.": "请发送包含 docs/web.md 所列字段的 JSON 对象。",
    "{fixes[kind][:-1]}: {field} takes {limits.text()}.": "{fixes[kind][:-1]|t}：{field} 的取值为 {limits.text()|t}。",
    "give a number above 0": "请给出大于 0 的数", "give 0 or more": "请给出 0 或更大的数", "give 1 or more": "请给出 1 或更大的数",
    "check '{field}': {msg}.": "请检查 '{field}'：{msg|t}。",
    "see docs/web.md for the endpoints, or GET /openapi.json.": "接口见 docs/web.md，或 GET /openapi.json。",
    # the HTTP status texts Starlette gives as the detail of a route not found or a method it does not take
    "Not Found": "没有这个接口", "Method Not Allowed": "这个接口不接受此请求方法",
    # the kinds of name an UnknownNameError names ("unknown model 'x'")
    "model": "模型", "provider": "云厂商", "vendor": "厂商", "price source": "价格来源",
    "internal error ({type(exc).__name__}) in {request.url.path}: a bug in gpuplan.":
        "{request.url.path} 出现内部错误（{type(exc).__name__}）：这是 gpuplan 的缺陷。",
    "please report it with the request that caused it.": "请附上引发它的请求报告此问题。",
    # pydantic's validation messages (the API's field types)
    "Field required": "缺少必填字段", "Extra inputs are not permitted": "不接受多余的字段",
    "field required": "缺少必填字段", "extra inputs are not permitted": "不接受多余的字段",
    "Input should be greater than {gt}": "应大于 {gt}", "Input should be greater than or equal to {ge}": "应大于或等于 {ge}",
    "Input should be less than or equal to {le}": "应小于或等于 {le}", "Input should be less than {lt}": "应小于 {lt}",
    "input should be greater than {gt}": "应大于 {gt}", "input should be greater than or equal to {ge}": "应大于或等于 {ge}",
    "input should be less than or equal to {le}": "应小于或等于 {le}", "input should be less than {lt}": "应小于 {lt}",
    "Input should be a valid integer": "应为有效的整数", "Input should be a valid number": "应为有效的数字",
    "Input should be a valid string": "应为有效的字符串", "Input should be a valid boolean": "应为有效的布尔值",
    "Input should be a valid list": "应为有效的列表", "Input should be a valid dictionary": "应为有效的对象",
    "input should be a valid integer": "应为有效的整数", "input should be a valid number": "应为有效的数字",
    "input should be a valid string": "应为有效的字符串", "input should be a valid boolean": "应为有效的布尔值",
    "input should be a valid list": "应为有效的列表", "input should be a valid dictionary": "应为有效的对象",
    "Input should be a finite number": "应为有限的数", "input should be a finite number": "应为有限的数",
    "Input should be {expected}": "应为 {expected}", "input should be {expected}": "应为 {expected}",
    "String should have at least {n} character": "字符串至少应有 {n} 个字符",
    "String should have at least {n} characters": "字符串至少应有 {n} 个字符",
    "String should have at most {n} characters": "字符串至多应有 {n} 个字符",
    "List should have at least {n} item after validation, not {m}": "列表至少应有 {n} 项，实际为 {m} 项",
    "List should have at most {n} items after validation, not {m}": "列表至多应有 {n} 项，实际为 {m} 项",
    "JSON decode error": "JSON 解析错误", "Input should be a valid integer, unable to parse string as an integer":
        "应为有效的整数，无法把字符串解析为整数",
    "Input should be a valid number, unable to parse string as a number": "应为有效的数字，无法把字符串解析为数字",
    "Input should be a valid integer, got a number with a fractional part": "应为有效的整数，实际是带小数的数",
    # ---- fleet exports (gpuplan.export.fleet, gpuplan.export.k8s, gpuplan.cli)
    "the fleet has {len(files)} groups, and `sky serve up` loads one service per file (a file of several YAML "
    "documents is a pipeline, which it refuses).":
        "集群有 {len(files)} 组，而 `sky serve up` 每个文件只加载一个服务（含多个 YAML 文档的文件会被当作流水线而拒绝）。",
    "give --out an existing folder: one file per group is written there (or add --json).":
        "请给 --out 一个已存在的文件夹：每组写一个文件（或加上 --json）。",
    "this fleet was estimated for {get_engine(c.engine).name} (its memory reservation and batch); the {what} export "
    "runs vLLM or SGLang.":
        "这个集群是按 {get_engine(c.engine).name} 估算的（它的显存预留和批大小）；{what} 导出运行的是 vLLM 或 SGLang。",
    "plan with --engine vllm (or sglang) to export it.": "请用 --engine vllm（或 sglang）规划后再导出。",
    "this fleet was estimated for {x.group.engine} (its memory reservation and batch); the {fmt} export runs {fmt}.":
        "这个集群是按 {x.group.engine} 估算的（它的显存预留和批大小）；{fmt} 导出运行的是 {fmt}。",
    "two groups of the fleet have the same name.": "集群中有两组同名。",
    "report this: the fleet export names every group.": "请报告此问题：集群导出会为每组命名。",
    "note: the fleet cannot be exported to SkyPilot as planned ({detail}); exporting the cheapest fleet SkyPilot "
    "launches instead: {now}/h (was {was}/h)":
        "注意：该集群无法按规划导出到 SkyPilot（{detail|t}）；改为导出 SkyPilot 能启动的最便宜集群：每小时 {now}"
        "（原为每小时 {was}）",
    # ---- daily profiles and multi-LoRA serving (gpuplan.plan.traffic, gpuplan.plan.serving)
    "a daily profile has {HOURS} hourly rates; {len(rates)} were given.": "每日流量应有 {HOURS} 个每小时速率；实际给了 {len(rates)} 个。",
    "give one mean rate per hour, 0 to 23, e.g. {EXAMPLE}.": "请为 0 到 23 点每小时给一个平均速率，例如 {EXAMPLE}。",
    "hour {hour} has a rate of {rate} requests/s.": "{hour} 点的速率为每秒 {rate} 个请求。",
    "give every hour a finite rate from 0 to {top} (the range of --rps).": "请为每小时给出 0 到 {top} 的有限速率（--rps 的范围）。",
    "every hour of the profile is 0 requests/s: there is nothing to serve.": "流量中每小时都是每秒 0 个请求：没有要服务的请求。",
    "give the mean rate of each hour, e.g. {EXAMPLE}.": "请给出每小时的平均速率，例如 {EXAMPLE}。",
    "'{text}' is neither a file nor a list of 24 rates.": "'{text}' 既不是文件，也不是 24 个速率的列表。",
    "give a CSV file of hour,rps rows, or the rates: {EXAMPLE}.": "请给出 hour,rps 行的 CSV 文件，或直接给速率：{EXAMPLE}。",
    "'{text}' is not a list of numbers.": "'{text}' 不是数字列表。",
    "give the rates, e.g. {EXAMPLE}.": "请给出速率，例如 {EXAMPLE}。",
    "cannot read '{path}' ({exc}).": "无法读取 '{path}'（{exc}）。",
    "give a readable UTF-8 CSV file.": "请给出可读的 UTF-8 CSV 文件。",
    "{path}: row {n} {','.join(row)} is not hour,rps.": "{path}：第 {n} 行 {','.join(row)} 不是 hour,rps。",
    "write one row per hour: the hour (0-23) and its mean requests per second.": "每小时写一行：小时（0-23）和该小时的平均每秒请求数。",
    "{path}: row {n} has hour {row[0].strip()}.": "{path}：第 {n} 行的小时为 {row[0].strip()}。",
    "give each hour from 0 to 23 exactly once.": "0 到 23 点每小时恰好给一次。",
    "{path}: hours {', '.join(map(str, missing))} are missing.": "{path}：缺少 {', '.join(map(str, missing))} 点。",
    "both a mean rate (--rps) and a daily profile were given.": "同时给了平均速率（--rps）和每日流量。",
    "give one of them: the profile's mean is the mean rate.": "请只给其中一个：每日流量的平均值就是平均速率。",
    "{self.adapters} adapters cannot be served.": "无法服务 {self.adapters} 个适配器。",
    "give 0 (none) to {MAX_ADAPTERS} LoRA adapters.": "请给出 0（不用）到 {MAX_ADAPTERS} 个 LoRA 适配器。",
    "a rank of {self.adapter_rank} is not one an engine serves.": "推理引擎不支持秩 {self.adapter_rank}。",
    "give the largest adapter's rank, 1 to {MAX_ADAPTER_RANK}, e.g. 16.": "请给出最大适配器的秩，1 到 {MAX_ADAPTER_RANK}，例如 16。",
    "multi-LoRA serving is planned on vLLM or SGLang, not '{self.engine}'.": "multi-LoRA 服务只按 vLLM 或 SGLang 规划，不支持 '{self.engine}'。",
    "plan with --engine vllm (or sglang), or drop --adapters.": "请用 --engine vllm（或 sglang）规划，或去掉 --adapters。",
    "{m.name} is a mixture-of-experts model; LoRA adapters on its experts are not modelled.":
        "{m.name} 是混合专家模型；未对其专家上的 LoRA 适配器建模。",
    "plan a dense model, or drop --adapters.": "请规划稠密模型，或去掉 --adapters。",
    "LoRA adapters": "LoRA 适配器",
    "{s.lora_adapters} resident, rank {s.lora_rank}, on every linear layer, 16-bit: {fmt_bytes(adapters)} per GPU, "
    "out of the KV cache":
        "常驻 {s.lora_adapters} 个，秩 {s.lora_rank}，作用于每个线性层，16 位：每卡 {fmt_bytes(adapters)}，从 KV 缓存中扣除",
    "r·(in + out) per matrix (Hu et al. 2021); slots reserved per layer as vLLM's LoRA layers do":
        "每个矩阵 r·(in + out)（Hu et al. 2021）；每层按 vLLM 的 LoRA 层方式预留槽位",
    "unknown guard '{name}'.{did}": "未知的护栏 '{name}'。{did|t}",
    # training memory: what each stack's modeling code keeps (gpuplan/data/stacks.csv)
    "{s.framework} modeling code: {rest}": "{s.framework} 建模代码：{rest|l}",
    "norms keep an fp32 copy of their input": "归一化层保留一份 fp32 的输入副本",
    "K/V expanded to every query head": "K/V 扩展到每个查询头",
    "LayerNorm keeps its 16-bit input": "LayerNorm 保留其 16 位输入",
    "attention keeps the fused QKV output whole (V is a view)": "注意力保留整个融合 QKV 输出（V 是它的视图）",
    "the ungated MLP's GELU keeps only its input": "无门控 MLP 的 GELU 只保留其输入",
    "the q and v adapters' output is kept padded to the QKV width": "q 和 v 适配器的输出按 QKV 宽度补零后被保留",
    "fp32 adapters keep an fp32 copy of each adapted input": "fp32 适配器为每个被适配的输入保留一份 fp32 副本",
    "LoRA dropout {s.lora_dropout:g}: a dropped copy and a 1-byte mask per adapter input":
        "LoRA 丢弃率 {s.lora_dropout:g}：每个适配器输入多一份丢弃后的副本和 1 字节掩码",
    "bitsandbytes matmuls keep every quantized linear's input": "bitsandbytes 矩阵乘法保留每个量化线性层的输入",
    "the previous micro-batch's logits and their graph live through the next forward":
        "上一个微批次的 logits 及其计算图在下一次前向传播期间仍然存在",
    "FSDP's no_sync keeps the accumulated gradients unsharded until the step":
        "FSDP 的 no_sync 使累积的梯度在优化器步骤之前保持未分片",
    "FSDP's root unit keeps the embedding and output layer unsharded": "FSDP 的根单元使嵌入层和输出层保持未分片",
    "the output layer is quantized too": "输出层也被量化",
    "a tied output layer is held (and in a full fine-tune trained) as its own matrix":
        "与嵌入共享的输出层单独存为一个矩阵（全参数微调时也单独训练）",
    "only the layer's own tensors": "只有各层自身的张量",
    "LoRA dropout {self.lora_dropout:g}": "LoRA 丢弃率 {self.lora_dropout:g}",
    "'{path}' is longer than a daily profile ({MAX_FILE_BYTES // 1024} KiB at most).":
        "'{path}' 比日流量曲线长（最多 {MAX_FILE_BYTES // 1024} KiB）。",
    "give a CSV file of 24 hour,rps rows.": "请给出 24 行 hour,rps 的 CSV 文件。",
    "'{path}' is not a CSV file ({exc}).": "'{path}' 不是 CSV 文件（{exc}）。",
    # --lang anywhere on the line (gpuplan.cli.lang_first)
    "the option needs a language.": "该选项需要给出语言。",
    "use --lang en or --lang zh (zh-CN).": "请用 --lang en 或 --lang zh（zh-CN）。",
    # the planner's assumptions (gpuplan.plan.planner._assumptions, _limit_text), shown by the page and the API
    "memory margin": "显存余量",
    "the estimate × (1 + margin) must fit the GPU, the margin being the upper end of its held-out error band, at "
    "least {c.headroom}; for training, the estimate without the allocator's cache, which PyTorch gives back when "
    "memory runs short":
        "估算值 × (1 + 余量) 必须装进显卡，余量取其留出误差带的上端，至少 {c.headroom}；"
        "训练任务用不含分配器缓存的估算值（显存不足时 PyTorch 会释放缓存）",
    "the estimate × (1 + margin) must fit the GPU, the margin being the upper end of its held-out error band"
    "; for training, the estimate without the allocator's cache, which PyTorch gives back when memory runs short":
        "估算值 × (1 + 余量) 必须装进显卡，余量取其留出误差带的上端；"
        "训练任务用不含分配器缓存的估算值（显存不足时 PyTorch 会释放缓存）",
    "{fmt_bytes(floor.value)}: the tensors and the CUDA context; the allocator's cache above them is given back when "
    "memory runs short": "{fmt_bytes(floor.value)}：张量与 CUDA 上下文；其上的分配器缓存在显存不足时会被释放",
    # the LeaderWorkerSet and multi-node SkyPilot exports (gpuplan.export.lws, gpuplan.export.skypilot)
    "a replica of {g.gpus_per_replica} GPUs does not fill nodes of {GPUS_PER_NODE}.":
        "每个副本 {g.gpus_per_replica} 张 GPU，凑不满每节点 {GPUS_PER_NODE} 张的整节点。",
    "plan with a multiple of {GPUS_PER_NODE} GPUs per replica.": "请按每副本 {GPUS_PER_NODE} 的整数倍张 GPU 规划。",
    "the plan puts the guard beside a replica that spans nodes; the LeaderWorkerSet export runs the main server only.":
        "方案把安全护栏模型放在跨节点的副本旁；LeaderWorkerSet 导出只运行主模型服务。",
    "plan with --guard none and plan the guard model as a service of its own (gpuplan plan serve GUARD-MODEL), or add "
    "its container to the leader by hand.":
        "请用 --guard none 规划，并把护栏模型单独规划为一个服务（gpuplan plan serve GUARD-MODEL），或手动把它的容器加到 "
        "leader 上。",
    "plan with whole nodes of {GPUS_PER_NODE} GPUs per replica, and the guard as a service of its own (--guard none).":
        "请按每副本整节点（每节点 {GPUS_PER_NODE} 张 GPU）规划，护栏模型单独作为服务（--guard none）。",
    "spot overhead": "竞价额外时间",
    "+{c.spot_overhead} run time; serving plans use no spot unless --spot":
        "运行时间 +{c.spot_overhead}；在线服务方案不用竞价实例，除非给出 --spot",
    "5 min + weights downloaded at 500 MB/s, billed with each run": "5 分钟 + 按 500 MB/s 下载权重，每次运行都计费",
    "storage": "存储",
    "weights + data + one checkpoint beyond the included disk": "权重 + 数据 + 一个检查点中超出自带磁盘的部分",
    "longest run": "最长运行时间",
    "none (--objective time)": "不限（--objective time）",
    "{fmt_seconds(DEFAULT_MAX_SECONDS)} by default for --objective {c.objective}; --deadline sets another":
        "--objective {c.objective} 默认 {fmt_seconds(DEFAULT_MAX_SECONDS)}；用 --deadline 可另设",
    "ties": "持平规则",
    "costs within {COST_TIE_SHARE} of the cheapest tie and the faster wins; times within {math.expm1(TIME_TIE)} "
    "of the fastest tie and the cheaper wins":
        "费用与最便宜者相差 {COST_TIE_SHARE} 以内算持平，取更快的；时间与最快者相差 {math.expm1(TIME_TIE)} 以内算持平，"
        "取更便宜的",
    "FX": "汇率", "newest USD/CNY rate for every price": "每个价格都用最新的 USD/CNY 汇率",
    "fitted parameters": "拟合参数",
    # serving: multi-LoRA and the content-safety guard (gpuplan.plan.serving, gpuplan.plan.guard)
    "multi-LoRA": "多 LoRA",
    "expert parallelism": "专家并行",
    "{n} adapters of rank {rank} resident on every replica, on every linear layer in 16-bit (r·(in + out) per "
    "matrix), out of the KV cache; requests spread evenly over them; each token adds its adapter's FLOPs, each "
    "decode step reads every distinct adapter of its batch once":
        "每个副本常驻 {n} 个秩为 {rank} 的适配器，作用于每个线性层，16 位（每个矩阵 r·(in + out)），从 KV 缓存中扣除；"
        "请求均匀分布到各适配器；每个 token 增加其适配器的 FLOPs，每个解码步把批次中每个不同的适配器读一遍",
    "named by --guard": "由 --guard 指定",
    "the cheapest mainland-China service (data stays in mainland China)": "中国大陆最便宜的服务（数据留在境内）",
    "the cheapest service": "最便宜的服务",
    # the availability figures a fleet is planned with, as their rows are named (gpuplan/data/availability.csv)
    "gpu_interruptions_per_gpu_hour (default)": "每 GPU 小时的中断次数（默认）",
    "instance_sla_pct (default)": "单实例 SLA（默认）", "multizone_sla_pct (default)": "多可用区 SLA（默认）",
    "lb_sla_pct (default)": "负载均衡 SLA（默认）",
    "spot_interruptions_per_month (default)": "竞价实例每月中断次数（默认）", "warmup_seconds (vllm)": "预热时间（vllm）",
    "guard: {n}": "护栏：{n|t}",  # a note of the guard's own fleet (gpuplan.plan.guard)
    "{p.name} checks the {p.checks} ({' and '.join(p.kinds)} check{'s' if len(p.kinds) > 1 else ''}); a check "
    "reads the text and a {p.template_tokens}-token template and writes a {p.verdict_tokens}-token verdict":
        "{p.name} 检查{p.checks|t}（{' and '.join(p.kinds)|t}检查）；每次检查读入文本和 {p.template_tokens} token 的模板，"
        "写出 {p.verdict_tokens} token 的判定",
    "both": "提示词和回答", "prompt": "提示词", "response": "回答",
    "input and output": "输入和输出", "input": "输入", "output": "输出",
    "serial: the guard is planned to {GUARD_TTFT_SHARE} of the TTFT targets and the main model to the rest":
        "串行：护栏按首字延迟目标的 {GUARD_TTFT_SHARE} 规划，主模型用其余部分",
    "parallel: the guard has the whole TTFT target; the first token waits for the later of the verdict and the "
    "main prefill": "并行：护栏享有全部首字延迟目标；首个 token 等判定和主模型预填充中较晚的一个",
    "main fleet and guard fleet each planned to {math.sqrt(r.availability)} (√ of {r.availability}): a request "
    "needs both": "主集群和护栏集群各按 {math.sqrt(r.availability)} 规划（{r.availability} 的平方根）：一个请求两者都要",
    "{s.price_per_unit} {s.currency} per {'request' if s.unit == 'request' else f'{s.chars_per_unit} characters'}; "
    "the prompt and the response are each one call":
        "每{'request' if s.unit == 'request' else f'{s.chars_per_unit} characters'} {s.price_per_unit} "
        "{s.currency}；提示词和回答各算一次调用",
    # the same two sentences as they come out (a hole with an f-string inside cannot be matched as a pattern)
    "{price} {currency} per request; the prompt and the response are each one call":
        "每次请求 {price} {currency}；提示词和回答各算一次调用",
    "{price} {currency} per {n} characters; the prompt and the response are each one call":
        "每 {n} 字符 {price} {currency}；提示词和回答各算一次调用",
    "{CHARS_PER_TOKEN} (English text; Chinese runs fewer characters a token, so a per-character price errs high "
    "there)": "{CHARS_PER_TOKEN}（英文文本；中文每 token 的字符更少，所以按字符计价对中文偏高）",
    "one guard engine (TP 1, {COLOCATED_GUARD_SEQS} sequences) on one GPU of each replica; its memory leaves every "
    "GPU of the replica that much less for KV cache; its prefills take GPU time from the main model (capacity 1 / "
    "(1/c + Σ 1/c_guard)); its verdict time is its own at that load":
        "每个副本的一张卡上跑一个护栏引擎（TP 1，{COLOCATED_GUARD_SEQS} 个序列）；它占的显存让副本每张卡的 KV 缓存少同样多；"
        "它的预填充占用主模型的 GPU 时间（容量 1 / (1/c + Σ 1/c_guard)）；它的判定时间按它自己在该负载下的计",
    "not estimated: the services publish no latency; a serial check adds its round trip to the TTFT":
        "未估算：这些服务没有公布延迟；串行检查会把一次往返加到首字延迟上",
    "{s.service} runs outside mainland China: the users' prompts and responses leave the country (data-export "
    "rules apply); --guard api picks a mainland service for --users cn":
        "{s.service} 在中国大陆境外运行：用户的提示词和回答会出境（适用数据出境规定）；--users cn 时 --guard api "
        "会选大陆的服务",
    "{s.service}: the price covers the detection metering only, so the moderation cost is a lower bound":
        "{s.service}：价格只含检测计量部分，所以审核费用是下限",
    # the LitGPT, ms-swift and Axolotl exports
    "the plan splits the model with {p.describe()}; the Axolotl export trains with data parallelism and ZeRO only.":
        "这个方案用 {p.describe()} 切分模型；Axolotl 导出只支持数据并行和 ZeRO。",
    "the Axolotl export trains full or with LoRA, not {s.method}.":
        "Axolotl 导出只做全量或 LoRA 训练，不支持 {s.method}。",
    "plan with --framework axolotl, which prices its own choice.":
        "请用 --framework axolotl 规划，它会按自己的选择计价。",
    "without DeepSpeed, Axolotl trains a full fine-tune's weights in the 16 bits it loads them in, so it cannot train as planned in {s.precision} (with an fp32 master copy).":
        "不用 DeepSpeed 时，Axolotl 全量微调按加载时的 16 位训练权重，所以无法按方案以 {s.precision}（带 fp32 主权重副本）训练。",
    "with DeepSpeed ZeRO-{p.zero} the optimizer keeps an fp32 master copy and fp32 states of the bf16 weights Axolotl loads, which this plan (pure bf16) did not price.":
        "用 DeepSpeed ZeRO-{p.zero} 时，优化器为 Axolotl 加载的 bf16 权重保留 fp32 主权重副本和 fp32 状态，这个方案（纯 bf16）"
        "没有计入。",
    "plan with --framework llama-factory or trl, or with --method lora.":
        "请用 --framework llama-factory 或 trl 规划，或用 --method lora。",
    "the Axolotl export trains in bf16 or fp16 mixed precision, not {s.precision}.":
        "Axolotl 导出只用 bf16 或 fp16 混合精度训练，不支持 {s.precision}。",
    "Axolotl loads a frozen base in bitsandbytes NF4 or int8 for this export, not {fmt}.":
        "这个导出中 Axolotl 只以 bitsandbytes NF4 或 int8 加载冻结底座，不支持 {fmt}。",
    "LitGPT {version('litgpt')} has no model config for {e.model.name} ({model_ref}), so `litgpt download` could not convert its weights.":
        "LitGPT {version('litgpt')} 没有 {e.model.name}（{model_ref}）的模型配置，`litgpt download` 无法转换它的权重。",
    "plan a model LitGPT lists (`litgpt download list`), or plan with --framework llama-factory or trl.":
        "请规划 LitGPT 列出的模型（`litgpt download list`），或用 --framework llama-factory 或 trl 规划。",
    "LitGPT {version('litgpt')} cannot resume a LoRA run (finetune_lora takes no --resume), and this plan rents "
    "spot capacity: a preemption would start the run over, so the export's promise of resuming from the bucket "
    "would not hold.":
        "LitGPT {version('litgpt')} 不能续训 LoRA 运行（finetune_lora 没有 --resume），而这个方案租用竞价实例：被抢占后要"
        "从头开始，导出承诺的从存储桶续训做不到。",
    "plan with --no-spot (on-demand capacity is not preempted), or with --framework llama-factory, trl or torchtune, "
    "which resume.":
        "请用 --no-spot 规划（按需实例不会被抢占），或用能续训的 --framework llama-factory、trl 或 torchtune 规划。",
    "LitGPT's finetune_lora trains no embeddings beside the adapters.":
        "LitGPT 的 finetune_lora 除适配器外不训练词嵌入。",
    "the LitGPT export keeps a frozen base in bf16 or bitsandbytes NF4 (QLoRA), not {base}.":
        "LitGPT 导出冻结的基座只用 bf16 或 bitsandbytes NF4（QLoRA），不是 {base}。",
    "LitGPT quantizes the base on one GPU, in true (not mixed) precision, and trains it with paged AdamW; this plan "
    "has {s.parallel.describe()}, {s.precision} and {s.optimizer}.":
        "LitGPT 只在单块 GPU 上、以非混合精度量化基座，并用分页 AdamW 训练；这个方案是 {s.parallel.describe()}、"
        "{s.precision} 和 {s.optimizer}。",
    "plan with --max-gpus 1 and --optimizer adamw (LitGPT prices pure bf16), or with --framework llama-factory or "
    "trl.":
        "请用 --max-gpus 1 和 --optimizer adamw 规划（LitGPT 按纯 bf16 估算），或用 --framework llama-factory 或 trl 规划。",
    "LitGPT has no {s.method} fine-tuning.": "LitGPT 没有 {s.method} 微调。",
    "plan with --method full, lora, qlora, adapter or adapter-v2.":
        "请用 --method full、lora、qlora、adapter 或 adapter-v2 规划。",
    "LitGPT {version('litgpt')} cannot resume a LLaMA-Adapter run (finetune_adapter takes no --resume; finetune_adapter_v2's reloads the adapter but restarts at step 0 without the optimizer state), and this plan rents spot capacity: a preemption would start the run over.":
        "LitGPT {version('litgpt')} 不能续训 LLaMA-Adapter 运行（finetune_adapter 没有 --resume；finetune_adapter_v2 的续训只重新加载适配器，步数从 0 重新开始且没有优化器状态），而这个方案租用竞价实例：被抢占后要从头开始。",
    "plan with --no-spot (on-demand capacity is not preempted).": "请用 --no-spot 规划（按需实例不会被抢占）。",
    "LitGPT's finetune_adapter keeps a frozen base in bf16 or bitsandbytes NF4, not {s.base_quant}.":
        "LitGPT 的 finetune_adapter 冻结的基座只用 bf16 或 bitsandbytes NF4，不是 {s.base_quant}。",
    "plan with --quant bnb-nf4 or bnb-nf4-dq, or without --quant.": "请用 --quant bnb-nf4 或 bnb-nf4-dq 规划，或不加 --quant。",
    "LitGPT quantizes the base on one GPU, in true (not mixed) precision, and trains it with bitsandbytes' AdamW; this plan has {s.parallel.describe()}, {s.precision} and {s.optimizer}.":
        "LitGPT 只在单块 GPU 上、以非混合精度量化基座，并用 bitsandbytes 的 AdamW 训练；这个方案是 {s.parallel.describe()}、{s.precision} 和 {s.optimizer}。",
    "plan with --max-gpus 1 and --optimizer adamw.": "请用 --max-gpus 1 和 --optimizer adamw 规划。",
    "plan with --method full.": "请用 --method full 规划。",
    "the plan splits the model with {p.describe()}; LitGPT's finetune_full trains with FSDP data parallelism only.":
        "这个方案用 {p.describe()} 切分模型；LitGPT 的 finetune_full 只支持 FSDP 数据并行。",
    "{e.n_gpus} GPUs do not split evenly over {n_nodes} nodes.": "{e.n_gpus} 块 GPU 不能平均分到 {n_nodes} 个节点上。",
    "plan with --max-gpus 8 or a multiple of 8.": "请用 --max-gpus 8 或 8 的倍数规划。",
    "LitGPT's finetune_full does not offload optimizer states to the CPU.":
        "LitGPT 的 finetune_full 不会把优化器状态卸载到 CPU。",
    "plan on a GPU with more memory, or with --framework llama-factory.":
        "请选显存更大的 GPU 规划，或用 --framework llama-factory。",
    "on {p.dp} GPUs LitGPT shards the model with FSDP (ZeRO-3) and checkpoints every block, and it has no option to do otherwise; this plan was priced with {p.describe()} and recomputation {s.recompute}.":
        "在 {p.dp} 块 GPU 上 LitGPT 用 FSDP（ZeRO-3）切分模型并对每个块做检查点，没有选项可以改变；这个方案按 "
        "{p.describe()}、重计算 {s.recompute} 计价。",
    "plan with --max-gpus 1 (LitGPT on one GPU recomputes nothing, as planned), or with --framework llama-factory or trl.":
        "请用 --max-gpus 1 规划（单 GPU 上 LitGPT 不做重计算，与方案一致），或用 --framework llama-factory 或 trl。",
    "on one GPU LitGPT recomputes no activations, and it has no option to do so; this plan was priced with recomputation {s.recompute}.":
        "单 GPU 上 LitGPT 不重计算激活值，也没有选项开启；这个方案按重计算 {s.recompute} 计价。",
    "plan with --framework litgpt (which prices its own choice), or with --framework llama-factory or trl.":
        "请用 --framework litgpt 规划（它按自己的选择计价），或用 --framework llama-factory 或 trl。",
    "LitGPT's export trains in {', '.join(_PRECISION)}, not {s.precision}.":
        "LitGPT 导出只用 {', '.join(_PRECISION)} 训练，不支持 {s.precision}。",
    "LitGPT's finetune_full builds a torch.optim optimizer; it has no '{s.optimizer}'.":
        "LitGPT 的 finetune_full 构建 torch.optim 优化器，没有 '{s.optimizer}'。",
    "the plan splits the model with {p.describe()}; ms-swift's sft trains with data parallelism and ZeRO only (its Megatron path is another command).":
        "这个方案用 {p.describe()} 切分模型；ms-swift 的 sft 只支持数据并行和 ZeRO（它的 Megatron 路径是另一个命令）。",
    "the ms-swift export trains full or with LoRA, not {s.method}.":
        "ms-swift 导出只做全量或 LoRA 训练，不支持 {s.method}。",
    "plan with --framework swift, which prices its own choice.":
        "请用 --framework swift 规划，它会按自己的选择计价。",
    "ms-swift loads a frozen base in bitsandbytes NF4 or int8 for this export, not {fmt}.":
        "这个导出中 ms-swift 只以 bitsandbytes NF4 或 int8 加载冻结底座，不支持 {fmt}。",
    "the ms-swift export trains in bf16 or fp16 mixed precision, not {s.precision}.":
        "ms-swift 导出只用 bf16 或 fp16 混合精度训练，不支持 {s.precision}。",
    "the HF Trainer ({who}) has no '{s.optimizer}' optimizer.": "HF Trainer（{who}）没有 '{s.optimizer}' 优化器。",
    "the plan trains on {e.n_gpus} GPUs; Unsloth's open-source release trains on one GPU.":
        "这个方案在 {e.n_gpus} 块 GPU 上训练；Unsloth 的开源版本只在单 GPU 上训练。",
    "plan with --framework unsloth --max-gpus 1 (or --gpus with more memory), or plan with --framework trl to export a several-GPU run.":
        "请用 --framework unsloth --max-gpus 1 规划（或用 --gpus 选显存更大的 GPU），或用 --framework trl 规划以导出多 GPU 运行。",
    "the plan shards or offloads with {s.parallel.describe()}; the Unsloth export trains without DeepSpeed.":
        "这个方案用 {s.parallel.describe()} 分片或卸载；Unsloth 导出不用 DeepSpeed 训练。",
    "plan with --framework unsloth without ZeRO or optimizer offload, or with --framework trl.":
        "请用 --framework unsloth 且不用 ZeRO 或优化器卸载规划，或用 --framework trl。",
    "Unsloth trains full or with LoRA/QLoRA, not {s.method}.": "Unsloth 做全量训练或 LoRA/QLoRA，不支持 {s.method}。",
    "the plan recomputes selectively; Unsloth checkpoints whole layers or nothing.":
        "这个方案做选择性重计算；Unsloth 要么对整层做检查点，要么不做。",
    "plan with --framework unsloth, which prices its own choice (--recompute full or none).":
        "请用 --framework unsloth 规划，它会按自己的选择计价（--recompute full 或 none）。",
    "the Unsloth export does not train the embeddings with LoRA.": "Unsloth 导出不在 LoRA 中训练嵌入层。",
    "plan without --train-embeddings, or with --framework trl.": "请不用 --train-embeddings 规划，或用 --framework trl。",
    "Unsloth loads a frozen base in bitsandbytes NF4 with double quantization or int8, not {fmt}.":
        "Unsloth 只以带双重量化的 bitsandbytes NF4 或 int8 加载冻结底座，不支持 {fmt}。",
    "plan --method qlora (NF4 with double quantization) or --method lora --quant int8.":
        "请用 --method qlora（带双重量化的 NF4）或 --method lora --quant int8 规划。",
    "with DeepSpeed ZeRO-{p.zero} the optimizer keeps an fp32 master copy and fp32 states of the bf16 weights ms-swift loads, which this plan (pure bf16) did not price.":
        "用 DeepSpeed ZeRO-{p.zero} 时，优化器为 ms-swift 加载的 bf16 权重保留 fp32 主权重副本和 fp32 状态，这个方案（纯 "
        "bf16）没有计入。",
    "plan on one GPU (--max-gpus 1), or with --framework llama-factory or trl.":
        "请在单 GPU 上规划（--max-gpus 1），或用 --framework llama-factory 或 trl。",
    # ---- the DeepSpeed-Chat export (gpuplan.export.deepspeed_chat)
    "DeepSpeed-Chat's step-1 script saves the model only after its last epoch and cannot resume, and this plan rents spot capacity: a preemption would start the run over.":
        'DeepSpeed-Chat 的第 1 步脚本只在最后一个 epoch 结束后保存模型，无法续训，而本方案租用的是竞价（spot）实例：一次抢占就会让训练从头开始。',
    "the plan splits the model with {p.describe()}; DeepSpeed-Chat's step 1 trains with data parallelism and ZeRO only.":
        '本方案用 {p.describe()} 切分模型；DeepSpeed-Chat 的第 1 步只支持数据并行和 ZeRO。',
    "DeepSpeed-Chat's step 1 trains full or with its own LoRA, not {s.method}.":
        'DeepSpeed-Chat 的第 1 步只做全参数训练或用它自带的 LoRA，不支持 {s.method}。',
    'plan with --method full or lora, or with --framework llama-factory for the others.':
        '请用 --method full 或 lora 规划；其他方法请用 --framework llama-factory。',
    'DeepSpeed-Chat loads the base in 16-bit; it has no quantized base.':
        'DeepSpeed-Chat 以 16 位加载基座模型，不支持量化基座。',
    'plan --method lora without --quant.':
        '请用 --method lora 且不加 --quant 规划。',
    'DeepSpeed offloads optimizer states only with ZeRO 1-3.':
        'DeepSpeed 只在 ZeRO 1-3 下卸载优化器状态。',
    'plan with ZeRO, or without optimizer offload.':
        '请启用 ZeRO 规划，或不卸载优化器状态。',
    "DeepSpeed-Chat's --offload moves the parameters to the CPU too under ZeRO-3, which this plan did not price.":
        '在 ZeRO-3 下，DeepSpeed-Chat 的 --offload 会把参数也移到 CPU，本方案没有为此估算。',
    'plan with ZeRO-2 and optimizer offload, or without offload.':
        '请用 ZeRO-2 加优化器卸载规划，或不卸载。',
    'DeepSpeed-Chat checkpoints whole layers (--gradient_checkpointing) or nothing.':
        'DeepSpeed-Chat 要么对整层做重计算（--gradient_checkpointing），要么完全不做。',
    'plan with --recompute full or none.':
        '请用 --recompute full 或 none 规划。',
    'DeepSpeed-Chat trains in fp16 or bf16 (--dtype), not {s.precision}.':
        'DeepSpeed-Chat 以 fp16 或 bf16 训练（--dtype），不支持 {s.precision}。',
    "DeepSpeed-Chat trains with DeepSpeed's FusedAdam (AdamW), not {s.optimizer}.":
        'DeepSpeed-Chat 使用 DeepSpeed 的 FusedAdam（AdamW）训练，不支持 {s.optimizer}。',
    'DeepSpeed-Chat trains whole epochs over the dataset (--num_train_epochs is an integer) and has no step budget.':
        'DeepSpeed-Chat 按整数个 epoch 遍历数据集训练（--num_train_epochs 是整数），没有按步数的预算。',
    'plan with --samples and a whole number of --epochs.':
        '请用 --samples 和整数的 --epochs 规划。',
    "DeepSpeed-Chat adapts the linear layers whose names contain one string; the export knows those of Llama-style decoders for {', '.join(_LORA_SCOPE)}, not --lora-targets {s.lora_targets} on {e.model.name} ({e.model.model_type}).":
        "DeepSpeed-Chat 只对名称包含某一个字符串的线性层加 LoRA；导出只知道 Llama 式解码器在 {', '.join(_LORA_SCOPE)} 下的名称，不支持在 {e.model.name}（{e.model.model_type}）上用 --lora-targets {s.lora_targets}。",
    "DeepSpeed-Chat's LoRA trains no embeddings and has no dropout.":
        'DeepSpeed-Chat 的 LoRA 不训练嵌入层，也没有 dropout。',
    'plan without --train-embeddings (and LoRA dropout 0), or with --framework trl.':
        '请不加 --train-embeddings（且 LoRA dropout 为 0）规划，或用 --framework trl。',
    # ---- the llm-foundry export (gpuplan.export.llmfoundry)
    "the plan splits the model with {p.describe()}; the llm-foundry export trains with FSDP over data-parallel ranks "
    "only.":
        '本方案用 {p.describe()} 切分模型；llm-foundry 导出只用 FSDP 在数据并行各卡上训练。',
    'plan with --max-gpus (fewer GPUs) or a GPU with more memory so the model fits without tensor or pipeline '
    'parallelism.':
        '请用 --max-gpus（更少的 GPU）或显存更大的 GPU 规划，使模型不用张量并行或流水线并行也能放下。',
    "llm-foundry trains full or with LoRA (its peft_config is LoRA only), not {s.method}.":
        'llm-foundry 只做全参数训练或 LoRA（它的 peft_config 只支持 LoRA），不支持 {s.method}。',
    'plan with --method lora or full, or with --framework trl or llama-factory for QLoRA.':
        '请用 --method lora 或 full 规划；要 QLoRA 请用 --framework trl 或 llama-factory。',
    "llm-foundry loads the base unquantized (load_in_8bit raises in training), not {s.base_quant}.":
        'llm-foundry 加载未量化的基座模型（训练时 load_in_8bit 会报错），不支持 {s.base_quant}。',
    'FSDP has no optimizer offload.': 'FSDP 没有单独的优化器卸载。',
    'FSDP shards everything (ZeRO-3), gradients and states (ZeRO-2) or nothing; it has no ZeRO-1.':
        'FSDP 要么全部分片（ZeRO-3），要么分片梯度和优化器状态（ZeRO-2），要么不分片；它没有 ZeRO-1。',
    'plan with --zero 2 or 3.': '请用 --zero 2 或 3 规划。',
    'llm-foundry checkpoints whole blocks or nothing.': 'llm-foundry 要么对整个块做重计算，要么不做。',
    'plan with --recompute none or full.': '请用 --recompute none 或 full 规划。',
    'llm-foundry checkpoints activations through FSDP, which it drops on one GPU.':
        'llm-foundry 通过 FSDP 做激活重计算，而单卡时它不用 FSDP。',
    'plan with --recompute none, or with --min-gpus 2.': '请用 --recompute none 规划，或用 --min-gpus 2。',
    "llm-foundry trains with fp32 master weights under autocast (amp_bf16, amp_fp16), not {s.precision}.":
        'llm-foundry 用 fp32 主权重加自动混合精度（amp_bf16、amp_fp16）训练，不支持 {s.precision}。',
    'plan with --precision bf16-mixed or fp16-mixed.': '请用 --precision bf16-mixed 或 fp16-mixed 规划。',
    "the llm-foundry export trains with its decoupled_adamw, not {s.optimizer}.":
        'llm-foundry 导出用它的 decoupled_adamw 训练，不支持 {s.optimizer}。',
    "the llm-foundry export trains whole epochs over the samples, not {j.epochs}.":
        'llm-foundry 导出按整数个 epoch 遍历样本训练，不支持 {j.epochs}。',
    'plan with a whole number of --epochs, or with --tokens.': '请用整数的 --epochs 规划，或用 --tokens。',
    "the export names the modules LoRA adapts for Llama-style decoders; {e.model.name} ({e.model.model_type}) is not "
    "one.":
        '导出只知道 Llama 式解码器中 LoRA 适配的模块名；{e.model.name}（{e.model.model_type}）不是这类模型。',
    'plan with --lora-targets all-linear and without --train-embeddings.':
        '请用 --lora-targets all-linear 且不加 --train-embeddings 规划。',
    # mixture-of-experts training: expert parallelism (gpuplan/estimate/moe_train.py)
    '{m.name} has no experts to split over {par.ep} expert-parallel ranks.':
        '{m.name} 没有专家，无法分到 {par.ep} 个专家并行 rank 上。',
    'train it without expert parallelism (EP 1).':
        '请不用专家并行（EP 1）训练它。',
    "{m.name}'s {m.n_experts} experts do not split over {par.ep} expert-parallel ranks.":
        '{m.name} 的 {m.n_experts} 个专家无法均分到 {par.ep} 个专家并行 rank 上。',
    'split the experts over a number of ranks that divides both.':
        '请把专家分到一个能同时整除两者的 rank 数上。',
    'EP {par.ep} does not divide the {stage} GPUs of a pipeline stage (TP × CP × DP).':
        'EP {par.ep} 不能整除一个流水线阶段的 {stage} 个 GPU（TP × CP × DP）。',
    "'{name}' is a GGUF whose publisher chose each tensor's type (unsloth UD-*, bartowski *_K_L): it has no fixed "
    "bits per weight.": "'{name}' 是发布者自行决定每个张量类型的 GGUF（unsloth UD-*、bartowski *_K_L）：没有固定的每权重位数。",
    "use the llama.cpp type it is built on, --quant {base}; the file is larger than that type's estimate.":
        "请用它所基于的 llama.cpp 类型 --quant {base}；文件比该类型的估计更大。",
    # ---- local runners (gpuplan.estimate.runners)
    "{name} runs {kernels}'s kernels with its own defaults; no constant is fitted for it":
        "{name} 运行 {kernels} 的算子，但用它自己的默认设置；没有为它单独拟合常数",
    "{name}'s default context length was not read from a source: the KV cache is sized for prompt + output (set its "
    "context length to at least that)":
        "{name} 的默认上下文长度没有找到可引用的来源：KV 缓存按提示 + 输出的长度估算（请把它的上下文长度设为至少这么多）",
    "prompt + output ({ctx} tokens) exceed {name}'s default num_ctx ({row.num_ctx} tokens), which would cut the "
    "prompt: sized for num_ctx {ctx} (set OLLAMA_CONTEXT_LENGTH or num_ctx)":
        "提示 + 输出（{ctx} 个 token）超过 {name} 的默认 num_ctx（{row.num_ctx} 个 token），默认设置会截断提示："
        "按 num_ctx {ctx} 估算（请设置 OLLAMA_CONTEXT_LENGTH 或 num_ctx）",
    "KV cache allocated at load for num_ctx {ctx} tokens, {name}'s default on {gpu.name} x {s.n_gpus} (at most the "
    "model's trained context)":
        "加载时按 num_ctx {ctx} 个 token 分配 KV 缓存，这是 {name} 在 {gpu.name} x {s.n_gpus} 上的默认值（不超过模型的训练上下文）",
    "KV cache allocated at load for num_ctx {ctx} tokens: {name}'s default {row.num_ctx} does not fit, so it lowers "
    "num_ctx":
        "加载时按 num_ctx {ctx} 个 token 分配 KV 缓存：{name} 的默认值 {row.num_ctx} 放不下，因此它调低了 num_ctx",
    "KV cache allocated at load for {ctx // per} sequences of num_ctx {per} tokens, {name}'s default where they fit "
    "(OLLAMA_NUM_PARALLEL unset)":
        "加载时为 {ctx // per} 个序列各分配 num_ctx {per} 个 token 的 KV 缓存，这是 {name} 放得下时的默认值（未设置 OLLAMA_NUM_PARALLEL）",
    "KV cache {row.kv_cache_type}, Flash Attention {row.flash_attention}, library quantization {library}":
        "KV 缓存 {row.kv_cache_type}，Flash Attention {row.flash_attention}，模型库默认量化 {library}",
    "a model larger than the GPU memory is split by layers with the CPU by {name} (far slower): sized on the GPU "
    "alone, it is reported as not fitting":
        "模型超出显存时 {name} 会按层把一部分放到 CPU 上运行（慢得多）：这里只按 GPU 估算，并报告放不下",
    "{name}'s '{row.decode_readout}' is the batch-1 decode rate and its '{row.prefill_readout}' the prefill rate":
        "{name} 的 '{row.decode_readout}' 是批大小 1 的解码速度，'{row.prefill_readout}' 是预填充速度",
}
