"""Chinese help of every command and option of the CLI (part of :data:`gpuplan.i18n.ZH`), keyed by the English
help with its whitespace folded; ``tests/test_i18n_complete.py`` fails when a help text has no entry here. Option
names, choices, units and examples stay as they are typed."""

from __future__ import annotations

HELP: dict[str, str] = {
    # the words typer and click put around the help
    "Usage: ": "用法：", "[OPTIONS]": "[选项]", "COMMAND [ARGS]...": "命令 [参数]...", "Arguments": "参数",
    "Options": "选项", "Commands": "命令", "Error": "错误", "[default: {}]": "[默认：{}]", "[required]": "[必填]",
    "[env var: {}]": "[环境变量：{}]", "(deprecated) ": "（已弃用）", "Aborted.": "已中止。",
    "Show this message and exit.": "显示本帮助并退出。",
    "Install completion for the current shell.": "为当前 shell 安装命令补全。",
    "Show completion for the current shell, to copy it or customize the installation.":
        "显示当前 shell 的补全脚本，可复制或自定义安装。",
    # gpuplan and its global options
    "Which GPU, where, how many, how long, at what cost — for LLM training, fine-tuning and serving. Offline; every "
    "number with its source, assumptions and error band.":
        "大模型训练、微调和推理服务该用哪种显卡、在哪里租、几张、多久、花多少钱。离线运行；每个数字都附来源、假设和误差带。",
    "Extra catalog folder laid out like gpuplan/data (repeatable; also GPUPLAN_CATALOG).":
        "额外的目录文件夹，结构同 gpuplan/data（可重复；也可用 GPUPLAN_CATALOG）。",
    "Language of tables, explanations, help and errors: en or zh (zh-CN), before or after the command (gpuplan "
    "plan … --lang zh); default: GPUPLAN_LANG, else LANG (zh_CN.UTF-8 is Chinese). JSON and CSV stay English.":
        "表格、说明、帮助和错误信息的语言：en 或 zh（zh-CN），可写在命令之前或之后（gpuplan plan … --lang zh）；"
        "默认取 GPUPLAN_LANG，其次 LANG（zh_CN.UTF-8 即中文）。JSON 和 CSV 始终是英文。",
    "Print the version and exit.": "显示版本号并退出。",
    "Print JSON (base units, unit-suffixed keys; English values).": "输出 JSON（基本单位，键名带单位后缀；值为英文）。",
    "Print CSV.": "输出 CSV。",
    # gpus
    "List accelerators with memory, bandwidth, dense tensor TFLOPS and China export status.":
        "列出加速卡的显存、带宽、稠密张量 TFLOPS 和对华出口状态。",
    "cn: parts legally sold or offered in mainland China.": "cn：在中国大陆合法销售或提供的型号。",
    "Smallest memory, e.g. 48GB.": "最小显存，例如 48GB。",
    "NVIDIA, AMD, Intel, Google, Huawei.": "厂商：NVIDIA、AMD、Intel、Google、Huawei。",
    "datacenter, workstation, consumer, tpu or npu.": "类别：datacenter、workstation、consumer、tpu 或 npu。",
    "name, memory, bandwidth, bf16, fp8, year or tdp.": "排序：name、memory、bandwidth、bf16、fp8、year 或 tdp。",
    "Also show architecture, form factor, usable memory and interconnect.": "同时显示架构、形态、可用显存和互联。",
    # offers
    "List cloud GPU offers, cheapest per GPU-hour first, with the age of each price.":
        "列出云 GPU 报价，按每卡时价格从低到高，并标出每个价格的时效。",
    "GPU name; a family (A100) also matches its variants (A100-80GB). Repeatable.":
        "显卡名称；系列名（A100）也匹配其各型号（A100-80GB）。可重复。",
    "Match --gpu names exactly, without variants.": "--gpu 名称精确匹配，不含其他型号。",
    "cn or global.": "cn 或 global。",
    "Show prices in USD, CNY or EUR (newest FX rate).": "以 USD、CNY 或 EUR 显示价格（按最新汇率）。",
    "Only spot, or no spot.": "只看竞价实例，或不看竞价实例。",
    "Only these pricing tiers: on-demand, spot, reserved, marketplace (repeatable).":
        "只看这些计费方式：on-demand、spot、reserved、marketplace（可重复）。",
    "Provider (repeatable).": "云厂商（可重复）。",
    "At least this many GPUs per instance.": "每个实例至少这么多张卡。",
    "gpu-price, price, gpus, age or provider.": "排序：gpu-price、price、gpus、age 或 provider。",
    "Show at most this many rows (0 = all).": "最多显示这么多行（0 = 全部）。",
    # refresh, history
    "Fetch current GPU prices and FX rates from the providers' public price APIs into the local price store, each "
    "provider on its own: one failing leaves the others and its earlier prices intact. With no PROVIDER, all of "
    "them; those whose key is not set are skipped. Sources: aws (AWS price list bulk API); azure (Azure retail "
    "prices API); gcp (Cloud Billing catalog, key GPUPLAN_GCP_API_KEY); runpod (GraphQL gpuTypes, key "
    "RUNPOD_API_KEY); vastai (marketplace search, key VAST_API_KEY optional); lambda (instance types, key "
    "LAMBDA_API_KEY); tencent (CVM DescribeZoneInstanceConfigInfos, keys TENCENTCLOUD_SECRET_ID and "
    "TENCENTCLOUD_SECRET_KEY); aliyun (ECS DescribePrice, keys ALIBABA_CLOUD_ACCESS_KEY_ID and "
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET); ecb (ECB euro reference rates: EUR/USD, EUR/CNY). The store is "
    "prices.sqlite in $GPUPLAN_DATA_DIR (default $XDG_DATA_HOME/gpuplan, i.e. ~/.local/share/gpuplan); plans and "
    "listings then use the newest refreshed prices over the bundled ones. Exit status 4 when a source failed; "
    "with GPUPLAN_OFFLINE set (to anything but 0, false, no or off) it refuses to run.":
        "从各云厂商公开的价格 API 拉取当前 GPU 价格和汇率，存入本地价格库；每家云厂商单独处理：一家失败不影响其他家，"
        "也不影响它之前存下的价格。不给 PROVIDER 时刷新全部来源；未设置密钥的来源会跳过。来源：aws（AWS 价格表批量 "
        "API）；azure（Azure 零售价格 API）；gcp（Cloud Billing 目录，密钥 GPUPLAN_GCP_API_KEY）；runpod（GraphQL "
        "gpuTypes，密钥 RUNPOD_API_KEY）；vastai（市场搜索，密钥 VAST_API_KEY 可选）；lambda（实例类型，密钥 "
        "LAMBDA_API_KEY）；tencent（CVM DescribeZoneInstanceConfigInfos，密钥 TENCENTCLOUD_SECRET_ID 和 "
        "TENCENTCLOUD_SECRET_KEY）；aliyun（ECS DescribePrice，密钥 ALIBABA_CLOUD_ACCESS_KEY_ID 和 "
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET）；ecb（欧洲央行欧元参考汇率：EUR/USD、EUR/CNY）。价格库是 "
        "$GPUPLAN_DATA_DIR 下的 prices.sqlite（默认 $XDG_DATA_HOME/gpuplan，即 ~/.local/share/gpuplan）；之后的方案和"
        "列表优先使用最新刷新的价格，而不是内置价格。有来源失败时退出码为 4；设置了 GPUPLAN_OFFLINE（除 0、false、"
        "no、off 之外的任何值）时拒绝运行。",
    "Price sources to refresh (see above); none: all.": "要刷新的价格来源（见上文）；不给则全部刷新。",
    "Region to price, repeatable: 'aws:us-west-2' for one provider, a bare name for every provider priced per "
    "region (AWS, Azure, Tencent Cloud, Alibaba Cloud); default: us-east-1, eastus, "
    "ap-beijing/ap-shanghai/ap-guangzhou, and the catalog's Alibaba Cloud regions.":
        "要询价的区域，可重复：'aws:us-west-2' 只对一家云厂商，不带前缀的名称对所有按区域定价的云厂商（AWS、Azure、"
        "腾讯云、阿里云）；默认：us-east-1、eastus、ap-beijing/ap-shanghai/ap-guangzhou，以及目录中的阿里云区域。",
    "Show how refreshed prices of a GPU moved: per offer the first, last, lowest and highest price stored by "
    "'gpuplan refresh' (--points: every fetch).":
        "显示一种显卡刷新后的价格走势：每个报价由 'gpuplan refresh' 存下的首个、最新、最低和最高价格（--points：每次拉取）。",
    "GPU name (aliases work), e.g. H100.": "显卡名称（可用别名），例如 H100。",
    "Region (repeatable).": "区域（可重复）。",
    "on-demand, spot, reserved or marketplace.": "计费方式：on-demand、spot、reserved 或 marketplace。",
    "Every stored price, not one line per offer.": "列出存下的每个价格，而不是每个报价一行。",
    # models, model, platforms
    "Search the bundled model presets (Hugging Face config.json files with their source).":
        "搜索内置的预置模型（附来源的 Hugging Face config.json 文件）。",
    "Part of a name, repository or family (e.g. qwen, 70b).": "名称、仓库或系列的一部分（例如 qwen、70b）。",
    "Show one model's architecture and its parameter breakdown (total and active).":
        "显示一个模型的架构及参数构成（总参数和激活参数）。",
    "Preset name, path to a config.json (or its folder), or a Hub id (online only).":
        "预置模型名、config.json 的路径（或其所在文件夹），或 Hub id（仅联网时）。",
    "List free and cheap notebook platforms (Kaggle, Colab, AutoDL, ...) with their quotas.":
        "列出免费和低价的 notebook 平台（Kaggle、Colab、AutoDL 等）及其配额。",
    # estimate
    "Memory per GPU (breakdown), time or speed, error band and assumptions for one configuration.":
        "估算一个配置的单卡显存（分项）、时间或速度、误差带和假设。",
    "Preset name (see 'gpuplan models'), path to a config.json, or a Hub id (online only).":
        "预置模型名（见 'gpuplan models'）、config.json 的路径，或 Hub id（仅联网时）。",
    "infer, serve, finetune or pretrain.": "任务：infer、serve、finetune 或 pretrain。",
    "full, lora, qlora, ptuning or freeze.": "方法：full、lora、qlora、ptuning 或 freeze。",
    "GPU name, e.g. H100, 4090, A100-80GB.": "显卡名称，例如 H100、4090、A100-80GB。",
    "GPUs (default: tp × pp; training spreads more over data parallelism).":
        "卡数（默认 tp × pp；训练时多出的卡用于数据并行）。",
    "Tensor parallel size.": "张量并行度。",
    "Pipeline parallel stages.": "流水线并行段数。",
    "ZeRO stage 0-3 (3 = FSDP full shard) over data parallelism.": "数据并行上的 ZeRO 阶段 0-3（3 = FSDP 全切分）。",
    "Sequences per GPU per micro-step.": "每张卡每个微步的序列数。",
    "Micro-steps per optimizer step.": "每个优化器步的微步数。",
    "Activation recomputation: none, selective or full (default: the --framework's default, else none).":
        "激活重计算：none、selective 或 full（默认取 --framework 的默认值，否则 none）。",
    "auto (bf16 for adapters, bf16-mixed for full; fp16 on GPUs without BF16), bf16-mixed, fp16-mixed, fp8-mixed, "
    "bf16 or fp32.":
        "auto（适配器用 bf16，全量用 bf16-mixed；不支持 BF16 的显卡用 fp16）、bf16-mixed、fp16-mixed、fp8-mixed、bf16 "
        "或 fp32。",
    "adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd, sgd-momentum or adafactor (default: the --framework's "
    "default, else adamw).":
        "优化器：adamw、adamw-8bit、paged-adamw、paged-adamw-8bit、sgd、sgd-momentum 或 adafactor（默认取 --framework "
        "的默认值，否则 adamw）。",
    "Training framework whose defaults apply where options are not given (gradient checkpointing, optimizer, loss, "
    "compile): llama-factory, hf, trl, torchtune, litgpt, axolotl, unsloth, swift, deepspeed, megatron, torchtitan, "
    "llm-foundry, chatglm, glm4, qwen, pytorch or llmc (gpuplan/data/frameworks.csv); plans use only the GPUs it "
    "runs on (gpuplan/data/runs_on.csv).":
        "训练框架：未指定的选项（梯度检查点、优化器、损失、编译）取它的默认值：llama-factory、hf、trl、torchtune、litgpt、"
        "axolotl、unsloth、swift、deepspeed、megatron、torchtitan、llm-foundry、chatglm、glm4、qwen、pytorch 或 llmc"
        "（gpuplan/data/frameworks.csv）；方案只用它支持的显卡（gpuplan/data/runs_on.csv）。",
    "Training samples, e.g. 10k.": "训练样本数，例如 10k。",
    "Tokens per sample (prompt + answer).": "每条样本的 token 数（提示 + 回答）。",
    "Epochs over the samples.": "在样本上训练的轮数。",
    "Training tokens in total, e.g. 1.4T (instead of samples).": "训练 token 总数，例如 1.4T（代替样本数）。",
    "Sequence length for training (default: tokens per sample, capped at 4096).":
        "训练序列长度（默认等于每条样本 token 数，最多 4096）。",
    "Prompt tokens per request.": "每个请求的输入 token 数。",
    "Generated tokens per request.": "每个请求生成的 token 数。",
    "Concurrent sequences (inference; 0: as many as the engine holds with --requests, else 1).":
        "并发序列数（推理；0：给了 --requests 时取引擎能容纳的最大值，否则 1）。",
    "Requests in a batch-inference job.": "批量推理任务的请求数。",
    "hf, vllm, sglang, trtllm or llamacpp.": "推理引擎：hf、vllm、sglang、trtllm 或 llamacpp。",
    "Weight format: bf16, fp16, fp8, int8-wo, int4-wo, awq-int4, gptq-int4, bnb-nf4, gguf-q4_k_m ...":
        "权重格式：bf16、fp16、fp8、int8-wo、int4-wo、awq-int4、gptq-int4、bnb-nf4、gguf-q4_k_m 等。",
    "KV-cache dtype: bf16, fp16 or fp8.": "KV 缓存的数据类型：bf16、fp16 或 fp8。",
    "LoRA rank.": "LoRA 秩。",
    "all-linear, attention, qv or mlp.": "LoRA 目标层：all-linear、attention、qv 或 mlp。",
    "LoRA/QLoRA also trains the embedding and output layer (PEFT modules_to_save), as when tokens are added.":
        "LoRA/QLoRA 同时训练词嵌入和输出层（PEFT modules_to_save），例如新增 token 时。",
    "P-tuning v2 prefix length.": "P-tuning v2 的前缀长度。",
    # fit, compare, buy
    "Which card for this model: the smallest GPU configurations per use case (inference 16/8/4-bit, LoRA, QLoRA, "
    "full fine-tuning), with the memory each needs.":
        "这个模型用哪张卡：每种用途（16/8/4 位推理、LoRA、QLoRA、全量微调）装得下的最小显卡配置，及各自所需显存。",
    "Tokens of context (inference) / sequence (training).": "上下文（推理）/ 序列（训练）的 token 数。",
    "Only these GPUs (repeatable; families match variants).": "只用这些显卡（可重复；系列名匹配其各型号）。",
    "Relative training and inference speed of two GPUs for a model, from the estimators.":
        "按估算模型比较两种显卡在某个模型上的训练和推理速度。",
    "First GPU.": "第一种显卡。",
    "Second GPU.": "第二种显卡。",
    "Model to compare on.": "用来比较的模型。",
    "Rent or buy: owning cost per month, renting cost per month, and the break-even hours per month.":
        "租还是买：每月自有成本、每月租用成本，以及回本所需的每月使用小时数。",
    "Optional model: price the smallest rentable GPUs that fine-tune it with LoRA and serve it in 16-bit.":
        "可选的模型：为能用 LoRA 微调它、并以 16 位部署它的最小可租显卡配置报价。",
    "GPU(s) to price (repeatable).": "要报价的显卡（可重复）。",
    "GPUs in the machine.": "整机的卡数。",
    "Hours of use per month.": "每月使用小时数。",
    "cn or global (purchase prices, electricity, legality).": "cn 或 global（购置价格、电价、合规性）。",
    "USD, CNY or EUR (default: CNY with --market cn).": "币种 USD、CNY 或 EUR（--market cn 时默认 CNY）。",
    "Depreciation period in years (default 3).": "折旧年限（默认 3 年）。",
    "Power usage effectiveness (1.0 at a desk).": "电能使用效率 PUE（放在办公桌上为 1.0）。",
    "Electricity price per kWh, e.g. 0.6CNY.": "每千瓦时电价，例如 0.6CNY。",
    # web
    "Serve the HTTP API (/api/...) and the web page with charts (needs: pip install 'gpuplan\\[web]').":
        "启动 HTTP API（/api/...）和带图表的网页（需要：pip install 'gpuplan\\[web]'）。",
    "Address to listen on: 127.0.0.1 (this machine only), or an address of this machine, or 0.0.0.0 for every "
    "interface (then use a --token).":
        "监听地址：127.0.0.1（仅本机）、本机的某个地址，或 0.0.0.0（所有网卡；此时请用 --token）。",
    "Port to listen on.": "监听端口。",
    "Require this secret (16+ characters) on every request: header 'Authorization: Bearer TOKEN', or open "
    "/?token=TOKEN once in the browser (also GPUPLAN_WEB_TOKEN).":
        "每个请求都须带上这个密钥（至少 16 个字符）：请求头 'Authorization: Bearer TOKEN'，或在浏览器中打开一次 "
        "/?token=TOKEN（也可用 GPUPLAN_WEB_TOKEN）。",
    "Server processes (uvicorn workers): plans run in parallel on as many cores.":
        "服务进程数（uvicorn worker）：方案在这么多个核上并行计算。",
    # plan
    "Rank GPU + offer choices for a job by cost, time or value.": "按费用、时间或性价比为任务排列显卡和报价的组合。",
    "Plan a fine-tuning run from the dataset size (samples × tokens per sample × epochs).":
        "按数据集大小（样本数 × 每条 token 数 × 轮数）规划一次微调。",
    "Tokens in the dataset (instead of samples).": "数据集的 token 数（代替样本数）。",
    "Frozen-base format for P-tuning and LoRA: int4 or int8 (weight-only), or a format such as nf4.":
        "P-tuning 和 LoRA 冻结底座的格式：int4 或 int8（仅权重量化），或 nf4 等格式。",
    "Sequences per optimizer step (0: 32).": "每个优化器步的序列数（0：32）。",
    "cn (mainland China, CNY) or global.": "cn（中国大陆，人民币）或 global。",
    "Only these providers (repeatable).": "只用这些云厂商（可重复）。",
    "Never these GPUs (repeatable).": "不用这些显卡（可重复）。",
    "At most this many GPUs in total.": "总卡数上限。",
    "Most you will spend, e.g. 500USD or ¥3000.": "最多花多少钱，例如 500USD 或 ¥3000。",
    "Must finish within, e.g. 12h or 3d.": "须在多长时间内完成，例如 12h 或 3d。",
    "Only spot, or no spot (default: both; serving: no spot unless --spot).":
        "只用竞价实例，或不用竞价实例（默认两者都考虑；在线服务默认不用，除非给了 --spot）。",
    "Pricing tiers the fleet may rent: on-demand, spot, reserved, marketplace (repeatable; default: on-demand, with spot under --spot; reserved is a committed term, paid whether or not the instance runs).":
        "服务集群可租用的计费方式：on-demand、spot、reserved、marketplace（可重复；默认 on-demand，加 --spot 时含 spot；reserved 为承诺期限（包月/包年），无论实例是否运行都要付费）。",
    "Pricing tiers to plan with: on-demand, spot, reserved, marketplace (repeatable; default: on-demand and spot).":
        "参与规划的计费方式：on-demand、spot、reserved、marketplace（可重复；默认 on-demand 和 spot）。",
    "cost, time or value (work per money, the seeds' 性价比).": "目标：cost、time 或 value（单位费用完成的工作量，即性价比）。",
    "How many plans to show.": "显示多少个方案。",
    "Also compare buying the picked GPUs.": "同时比较买下推荐方案的显卡。",
    "Use per month, for --compare-buy.": "每月使用时长，用于 --compare-buy。",
    "Also write the pick as skypilot (task YAML), vllm or sglang (server command) or k8s (manifest).":
        "同时把推荐方案导出为 skypilot（任务 YAML）、vllm 或 sglang（服务启动命令）或 k8s（清单）。",
    "File for --export (default: print it).": "--export 写入的文件（默认直接输出）。",
    "File for --export (default: print it); for plan serve, an existing folder gets one file per fleet group.":
        "--export 写入的文件（默认直接输出）；plan serve 时若给已存在的文件夹，则每个集群组写一个文件。",
    "Print the ranked plans as CSV.": "以 CSV 输出排好序的方案。",
    "Plan pretraining on a token budget (multi-node: NVLink inside a node, an assumed 400 Gb/s per GPU between).":
        "按 token 预算规划预训练（多机：节点内 NVLink，节点间假设每卡 400 Gb/s）。",
    "Training tokens, e.g. 1.4T.": "训练 token 数，例如 1.4T。",
    "Sequence length (default: 2048, at most the model's positions).": "序列长度（默认 2048，不超过模型的位置数）。",
    "Sequences per optimizer step (0: 4M tokens worth, as LLaMA).": "每个优化器步的序列数（0：相当于 4M token，同 LLaMA）。",
    "Plan a batch-inference job: requests × (prompt + output) tokens, continuously batched.":
        "规划一次批量推理：请求数 ×（输入 + 输出）token，连续批处理。",
    "Requests to process, e.g. 100k.": "要处理的请求数，例如 100k。",
    "Plan a serving fleet that stays up: the cheapest mix of GPU types, zones and on-demand/spot that meets the "
    "latency targets at peak with the largest failure domain lost, its expected availability and cost per token.":
        "规划一个高可用的在线服务集群：在失去最大故障域后仍能在峰值满足延迟目标的、由显卡型号、可用区和按量/竞价实例"
        "组成的最便宜组合，以及它的预计可用性和每 token 费用。",
    "Mean requests per second.": "平均每秒请求数。",
    "Peak requests per second the fleet is sized for (default: the mean).": "集群按其规划的峰值每秒请求数（默认等于平均值）。",
    "A request-size bucket PROMPT:OUTPUT:SHARE, e.g. 512:128:0.7 (repeatable; shares add up to 1; replaces "
    "--prompt/--output).":
        "一种请求规格 PROMPT:OUTPUT:SHARE，例如 512:128:0.7（可重复；占比之和为 1；代替 --prompt/--output）。",
    "Request lengths at a percentile PCT:PROMPT:OUTPUT, e.g. 90:2000:400 (repeatable; each interval between "
    "percentiles becomes a bucket at its upper lengths; replaces --prompt/--output).":
        "某个分位数上的请求长度 PCT:PROMPT:OUTPUT，例如 90:2000:400（可重复；相邻分位数之间的请求成为一种请求规格，"
        "按区间上端的长度计；代替 --prompt/--output）。",
    "Median time-to-first-token target, e.g. 500ms.": "首字延迟中位数目标，例如 500ms。",
    "p99 time-to-first-token target, e.g. 2s (default 5s when no TTFT target is given).":
        "首字延迟 p99 目标，例如 2s（没有给任何首字延迟目标时默认 5s）。",
    "Median time-per-output-token target, e.g. 50ms.": "每字延迟中位数目标，例如 50ms。",
    "p99 time-per-output-token target, e.g. 80ms.": "每字延迟 p99 目标，例如 80ms。",
    "Availability target in percent, e.g. 99.9.": "可用性目标（百分比），例如 99.9。",
    "Failure domain the fleet must survive losing: zone, region or none.": "集群须能承受失去的故障域：zone、region 或 none。",
    "Only offers in these regions (repeatable).": "只用这些区域的报价（可重复）。",
    "Allow spot capacity in the mix (preemptions are correlated within a spot pool).":
        "允许组合中使用竞价实例（同一竞价资源池内的抢占是相关的）。",
    "Allow marketplace / community hosts, which production serving leaves out.":
        "允许市场/社区主机（生产环境的在线服务默认不用）。",
    "Share of prompt tokens served from the prefix cache.": "由前缀缓存命中的输入 token 占比。",
    "At most this many instances of one offer (a provider's capacity).": "同一报价最多用这么多个实例（云厂商的容量）。",
    "Where the users are: cn (mainland China: the plan carries the China compliance checklist, and says when data "
    "export rules apply) or global.":
        "用户所在地：cn（中国大陆：方案附中国合规清单，并说明何时适用数据出境规则）或 global。",
    "Most the fleet may cost per hour, e.g. 40USD.": "集群每小时费用上限，例如 40USD。",
    "Mean requests per second (default 1; with --profile, the profile's mean).":
        "平均每秒请求数（默认 1；给了 --profile 时取其平均值）。",
    "Peak requests per second the fleet is sized for (default: the mean, or the profile's busiest hour).":
        "集群按其规划的峰值每秒请求数（默认等于平均值，或 --profile 中最忙的一小时）。",
    "Daily traffic: 24 hourly mean rates, e.g. 2,2,1,…,3,2 (hour 0 first), or a CSV file of hour,rps rows. The fleet "
    "is sized for its peak; the plan prices following it with autoscaling against a fixed peak fleet.":
        "每日流量：24 个每小时平均速率，例如 2,2,1,…,3,2（从 0 点开始），或 hour,rps 行的 CSV 文件。集群按其峰值规划；"
        "方案对比按流量自动扩缩容与固定峰值集群两种方式的费用。",
    "LoRA adapters served on the same base (multi-LoRA), all resident on every replica: their memory comes out of "
    "the KV cache, and each decode step reads the adapters its batch uses.":
        "在同一底座上服务的 LoRA 适配器数（multi-LoRA），全部常驻于每个副本：其显存从 KV 缓存中扣除，每个解码步读取"
        "本批次用到的适配器。",
    "Rank of the largest adapter (vLLM reserves its next --max-lora-rank choice).":
        "最大适配器的秩（vLLM 按不小于它的下一档 --max-lora-rank 预留）。",
    "Content-safety guard: a guard model (Llama-Guard-3-1B, Llama-Guard-3-8B, Llama-Guard-4-12B, ShieldGemma-2B, "
    "ShieldGemma-9B, Qwen3Guard-Gen-0.6B, Qwen3Guard-Gen-4B, Qwen3Guard-Gen-8B) sized as a second model, api (a "
    "moderation service, mainland for --users cn), api:SERVICE, or none.":
        "内容安全护栏：护栏模型（Llama-Guard-3-1B、Llama-Guard-3-8B、Llama-Guard-4-12B、ShieldGemma-2B、ShieldGemma-9B、"
        "Qwen3Guard-Gen-0.6B、Qwen3Guard-Gen-4B、Qwen3Guard-Gen-8B）作为第二个模型一并规划，api（内容审核服务；"
        "--users cn 时用境内服务），api:SERVICE，或 none。",
    "serial: the guard checks the prompt before the main prefill (its time comes out of the TTFT target); parallel: "
    "alongside it, the first token held for the verdict.":
        "serial：护栏在主模型预填充之前检查提示词（其耗时从首字延迟目标中扣除）；parallel：与预填充同时进行，"
        "首个 token 等审核结论出来再发出。",
}
