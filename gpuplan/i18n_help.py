"""Chinese help of every command and option of the CLI (part of :data:`gpuplan.i18n.ZH`), keyed by the English
help with its whitespace folded; ``tests/test_i18n_complete.py`` fails when a help text has no entry here. Option
names, choices, units and examples stay as they are typed. The options of the commands have
their Chinese help in their row of :data:`gpuplan.options.OPTIONS`, with the English."""

from __future__ import annotations

from gpuplan.options import help_catalogue

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
    # offers
    "List cloud GPU offers, cheapest per GPU-hour first, with the age of each price.":
        "列出云 GPU 报价，按每卡时价格从低到高，并标出每个价格的时效。",
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
    "Show how refreshed prices of a GPU moved: per offer the first, last, lowest and highest price stored by "
    "'gpuplan refresh' (--points: every fetch).":
        "显示一种显卡刷新后的价格走势：每个报价由 'gpuplan refresh' 存下的首个、最新、最低和最高价格（--points：每次拉取）。",
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
    # fit, compare, buy
    "Which card for this model: the smallest GPU configurations per use case (inference 16/8/4-bit, LoRA, QLoRA, "
    "full fine-tuning), with the memory each needs.":
        "这个模型用哪张卡：每种用途（16/8/4 位推理、LoRA、QLoRA、全量微调）装得下的最小显卡配置，及各自所需显存。",
    "Relative training and inference speed of two GPUs for a model, from the estimators.":
        "按估算模型比较两种显卡在某个模型上的训练和推理速度。",
    "First GPU.": "第一种显卡。",
    "Second GPU.": "第二种显卡。",
    "Rent or buy: owning cost per month, renting cost per month, and the break-even hours per month.":
        "租还是买：每月自有成本、每月租用成本，以及回本所需的每月使用小时数。",
    "Optional model: price the smallest rentable GPUs that fine-tune it with LoRA and serve it in 16-bit.":
        "可选的模型：为能用 LoRA 微调它、并以 16 位部署它的最小可租显卡配置报价。",
    # web
    "Serve the HTTP API (/api/...) and the web page with charts (needs: pip install 'gpuplan\\[web]').":
        "启动 HTTP API（/api/...）和带图表的网页（需要：pip install 'gpuplan\\[web]'）。",
    # plan
    "Rank GPU + offer choices for a job by cost, time or value.": "按费用、时间或性价比为任务排列显卡和报价的组合。",
    "Plan a fine-tuning run from the dataset size (samples × tokens per sample × epochs).":
        "按数据集大小（样本数 × 每条 token 数 × 轮数）规划一次微调。",
    "Also write the pick as skypilot (task YAML), vllm or sglang (server command) or k8s (manifest).":
        "同时把推荐方案导出为 skypilot（任务 YAML）、vllm 或 sglang（服务启动命令）或 k8s（清单）。",
    "File for --export (default: print it).": "--export 写入的文件（默认直接输出）。",
    "File for --export (default: print it); for plan serve, an existing folder gets one file per fleet group.":
        "--export 写入的文件（默认直接输出）；plan serve 时若给已存在的文件夹，则每个集群组写一个文件。",
    "Print the ranked plans as CSV.": "以 CSV 输出排好序的方案。",
    "Plan pretraining on a token budget (multi-node: NVLink inside a node, an assumed 400 Gb/s per GPU between).":
        "按 token 预算规划预训练（多机：节点内 NVLink，节点间假设每卡 400 Gb/s）。",
    "Plan a batch-inference job: requests × (prompt + output) tokens, continuously batched.":
        "规划一次批量推理：请求数 ×（输入 + 输出）token，连续批处理。",
    "Plan a serving fleet that stays up: the cheapest mix of GPU types, zones and on-demand/spot that meets the "
    "latency targets at peak with the largest failure domain lost, its expected availability and cost per token.":
        "规划一个高可用的在线服务集群：在失去最大故障域后仍能在峰值满足延迟目标的、由显卡型号、可用区和按量/竞价实例"
        "组成的最便宜组合，以及它的预计可用性和每 token 费用。",
    "Mean requests per second.": "平均每秒请求数。",
    "Peak requests per second the fleet is sized for (default: the mean).": "集群按其规划的峰值每秒请求数（默认等于平均值）。",
    # the job commands' options (gpuplan.options.OPTIONS)
    **help_catalogue(),
}
