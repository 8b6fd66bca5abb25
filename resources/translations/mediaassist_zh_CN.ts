<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
  <context>
    <name>mediaassist</name>
    <message>
      <source>logged in</source>
      <translation>已登录</translation>
    </message>
    <message>
      <source>needs login</source>
      <translation>需要登录</translation>
    </message>
    <message>
      <source>unknown</source>
      <translation>未知</translation>
    </message>
    <message>
      <source>Account</source>
      <translation>账号</translation>
    </message>
    <message>
      <source>Site</source>
      <translation>站点</translation>
    </message>
    <message>
      <source>Enabled</source>
      <translation>启用</translation>
    </message>
    <message>
      <source>Login</source>
      <translation>登录状态</translation>
    </message>
    <message>
      <source>Last error</source>
      <translation>最近错误</translation>
    </message>
    <message>
      <source>Machine</source>
      <translation>机器</translation>
    </message>
    <message>
      <source>Log in</source>
      <translation>登录</translation>
    </message>
    <message>
      <source>any (not bound yet)</source>
      <translation>任意（尚未绑定）</translation>
    </message>
    <message>
      <source>mediaassist cannot start</source>
      <translation>mediaassist 无法启动</translation>
    </message>
    <message>
      <source>Open the config file</source>
      <translation>打开配置文件</translation>
    </message>
    <message>
      <source>Try again</source>
      <translation>重试</translation>
    </message>
    <message>
      <source>Start with the demo providers</source>
      <translation>使用演示服务启动</translation>
    </message>
    <message>
      <source>Quit</source>
      <translation>退出</translation>
    </message>
    <message>
      <source>The config file {path} has {n} problems. Fix them and try again, or start with the demo providers.</source>
      <translation>配置文件 {path} 有 {n} 个问题。请修正后重试，或使用演示服务启动。</translation>
    </message>
    <message>
      <source>attempt {attempt} started on {lane}</source>
      <translation>第 {attempt} 次尝试已在 {lane} 上开始</translation>
    </message>
    <message>
      <source>attempt {attempt} failed ({kind}): {message}</source>
      <translation>第 {attempt} 次尝试失败（{kind}）：{message}</translation>
    </message>
    <message>
      <source>attempt {attempt} failed ({kind}): {message}; will retry</source>
      <translation>第 {attempt} 次尝试失败（{kind}）：{message}；将重试</translation>
    </message>
    <message>
      <source>success</source>
      <translation>成功</translation>
    </message>
    <message>
      <source>canceled</source>
      <translation>已取消</translation>
    </message>
    <message>
      <source>canceled by operator</source>
      <translation>已被操作员取消</translation>
    </message>
    <message>
      <source>canceled before it ran</source>
      <translation>运行前已取消</translation>
    </message>
    <message>
      <source>heartbeat stalled; abandoning this attempt</source>
      <translation>心跳停止；放弃本次尝试</translation>
    </message>
    <message>
      <source>cancel requested; stopping at the next checkpoint</source>
      <translation>已请求取消；将在下一个检查点停止</translation>
    </message>
    <message>
      <source>finished after being reaped; result dropped (the retry owns the row)</source>
      <translation>被回收后才完成；结果已丢弃（由重试接管该任务）</translation>
    </message>
    <message>
      <source>finished, but the row was no longer this attempt's; result not written</source>
      <translation>已完成，但任务已不属于本次尝试；结果未写入</translation>
    </message>
    <message>
      <source>app stopped; task goes back to the queue to resume on the next start</source>
      <translation>应用已停止；任务回到队列，下次启动时继续</translation>
    </message>
    <message>
      <source>back in the queue: {reason}</source>
      <translation>回到队列：{reason}</translation>
    </message>
    <message>
      <source>model {model} is not in the config</source>
      <translation>配置中没有模型 {model}</translation>
    </message>
    <message>
      <source>paused by operator</source>
      <translation>已被操作员暂停</translation>
    </message>
    <message>
      <source>account disabled</source>
      <translation>账号已停用</translation>
    </message>
    <message>
      <source>account needs login</source>
      <translation>账号需要登录</translation>
    </message>
    <message>
      <source>remote task id {remote_id} saved</source>
      <translation>已保存远程任务 ID {remote_id}</translation>
    </message>
    <message>
      <source>uploaded {file} as {name}</source>
      <translation>已上传 {file}，远程名称 {name}</translation>
    </message>
    <message>
      <source>input file {path} is gone since import</source>
      <translation>输入文件 {path} 在导入后已不存在</translation>
    </message>
    <message>
      <source>input file {path} cannot be read: {reason}</source>
      <translation>无法读取输入文件 {path}：{reason}</translation>
    </message>
    <message>
      <source>input file {path} changed since import (size/hash differ); import the task again to send the new file</source>
      <translation>输入文件 {path} 在导入后已改变（大小/哈希不同）；如需发送新文件，请重新导入该任务</translation>
    </message>
    <message>
      <source>simulated failure</source>
      <translation>模拟失败</translation>
    </message>
    <message>
      <source>lane paused ({reason}); waits at the head of the queue until it is resumed</source>
      <translation>通道已暂停（{reason}）；在队首等待，直到通道恢复</translation>
    </message>
    <message>
      <source>cost {cost} ({source})</source>
      <translation>费用 {cost}（{source}）</translation>
    </message>
    <message>
      <source>price table</source>
      <translation>价格表</translation>
    </message>
    <message>
      <source>estimate</source>
      <translation>估算</translation>
    </message>
    <message>
      <source>coins</source>
      <translation>个币</translation>
    </message>
    <message>
      <source>budget: {spent} of {cap} spent today</source>
      <translation>预算：今日已花费 {spent}，上限 {cap}</translation>
    </message>
    <message>
      <source>budget: {spent} of {cap} spent on batch {batch}</source>
      <translation>预算：批次 {batch} 已花费 {spent}，上限 {cap}</translation>
    </message>
    <message>
      <source>budget: {spent} of {cap} spent today on {provider}</source>
      <translation>预算：{provider} 今日已花费 {spent}，上限 {cap}</translation>
    </message>
    <message>
      <source>balance: {left} left on {provider}, the next task needs about {needed}</source>
      <translation>余额：{provider} 仅剩 {left}，下一个任务约需 {needed}</translation>
    </message>
    <message>
      <source>account: {plan}, balance {balance} {currency}, {running} task(s) running</source>
      <translation>账户：{plan}，余额 {balance} {currency}，正在运行 {running} 个任务</translation>
    </message>
    <message>
      <source>queue: the key runs {limit} task(s) at once</source>
      <translation>队列：此密钥可同时运行 {limit} 个任务</translation>
    </message>
    <message>
      <source>warning: max_polling_tasks = {polled} is above what the account runs at once ({limit}); the rest wait in RunningHub's queue or get 421</source>
      <translation>警告：max_polling_tasks = {polled} 超过账户可同时运行的任务数（{limit}）；其余任务将在 RunningHub 队列中等待或收到 421</translation>
    </message>
    <message>
      <source>warning: max_polling_tasks = {polled} is above the {limit} jobs {service} runs at once; the rest are refused with 429 and wait</source>
      <translation>警告：max_polling_tasks = {polled} 超过 {service} 可同时运行的 {limit} 个作业；其余任务会被 429 拒绝并等待</translation>
    </message>
    <message>
      <source>warning: accountStatus answered {code} {message}</source>
      <translation>警告：accountStatus 返回 {code} {message}</translation>
    </message>
    <message>
      <source>warning: account check failed: {reason}</source>
      <translation>警告：账户检查失败：{reason}</translation>
    </message>
    <message>
      <source>warning: account check gave no answer in {seconds} s</source>
      <translation>警告：账户检查在 {seconds} 秒内没有应答</translation>
    </message>
    <message>
      <source>no API key for provider {provider} (set {where}, the OS keyring or api_key)</source>
      <translation>服务 {provider} 没有 API 密钥（请设置 {where}、系统密钥环或 api_key）</translation>
    </message>
    <message>
      <source>environment variable {name}</source>
      <translation>环境变量 {name}</translation>
    </message>
    <message>
      <source>HTTP {status}: {detail}</source>
      <translation>HTTP {status}：{detail}</translation>
    </message>
    <message>
      <source>HTTP {status}, API key rejected: {detail}</source>
      <translation>HTTP {status}，API 密钥被拒绝：{detail}</translation>
    </message>
    <message>
      <source>HTTP 408: {detail}</source>
      <translation>HTTP 408：{detail}</translation>
    </message>
    <message>
      <source>quota exhausted: {detail}</source>
      <translation>额度已用尽：{detail}</translation>
    </message>
    <message>
      <source>API key rejected (HTTP {status}): {detail}</source>
      <translation>API 密钥被拒绝（HTTP {status}）：{detail}</translation>
    </message>
    <message>
      <source>HTTP {status} but the body is not a JSON object</source>
      <translation>HTTP {status}，但响应体不是 JSON 对象</translation>
    </message>
    <message>
      <source>HTTP {status} but the body is not JSON: {detail}</source>
      <translation>HTTP {status}，但响应体不是 JSON：{detail}</translation>
    </message>
    <message>
      <source>still rate limited after {n} waits</source>
      <translation>等待 {n} 次后仍被限流</translation>
    </message>
    <message>
      <source>{n} image(s) saved to {folder}</source>
      <translation>已将 {n} 张图片保存到 {folder}</translation>
    </message>
    <message>
      <source>image data[] entry has neither b64_json nor url</source>
      <translation>图片 data[] 条目既没有 b64_json 也没有 url</translation>
    </message>
    <message>
      <source>image data[].b64_json is not valid base64</source>
      <translation>图片 data[].b64_json 不是有效的 base64</translation>
    </message>
    <message>
      <source>image response has no data[] entries</source>
      <translation>图片响应中没有 data[] 条目</translation>
    </message>
    <message>
      <source>image download failed ({problem}); trying again</source>
      <translation>图片下载失败（{problem}）；正在重试</translation>
    </message>
    <message>
      <source>the image was generated (and billed) but its download failed {n} times ({problem}); not retried, so it is not paid for twice: {detail}</source>
      <translation>图片已生成（并已计费），但下载失败 {n} 次（{problem}）；不再重试，以免重复付费：{detail}</translation>
    </message>
    <message>
      <source>empty answer (finish_reason={reason})</source>
      <translation>回答为空（finish_reason={reason}）</translation>
    </message>
    <message>
      <source>the prompt is empty</source>
      <translation>提示词为空</translation>
    </message>
    <message>
      <source>model {model}: defaults must be a table</source>
      <translation>模型 {model}：defaults 必须是一个表</translation>
    </message>
    <message>
      <source>response has no choices[0].message.content</source>
      <translation>响应中没有 choices[0].message.content</translation>
    </message>
    <message>
      <source>stopped ({reason}); the request in flight was dropped</source>
      <translation>已停止（{reason}）；进行中的请求已丢弃</translation>
    </message>
    <message>
      <source>no response within {seconds} s (timeout_s)</source>
      <translation>{seconds} 秒内没有响应（timeout_s）</translation>
    </message>
    <message>
      <source>no API key for provider {provider} (set api_key_env, the OS keyring or api_key)</source>
      <translation>服务 {provider} 没有 API 密钥（请设置 api_key_env、系统密钥环或 api_key）</translation>
    </message>
    <message>
      <source>RunningHub API key rejected ({code} {msg}); fix it, then resume the lane</source>
      <translation>RunningHub API 密钥被拒绝（{code} {msg}）；修正后请恢复通道</translation>
    </message>
    <message>
      <source>RunningHub balance or membership exhausted ({code} {msg}); fix it, then resume the lane</source>
      <translation>RunningHub 余额或会员已用尽（{code} {msg}）；处理后请恢复通道</translation>
    </message>
    <message>
      <source>RunningHub API key rejected ({code} {msg})</source>
      <translation>RunningHub API 密钥被拒绝（{code} {msg}）</translation>
    </message>
    <message>
      <source>RunningHub balance or membership exhausted ({code} {msg})</source>
      <translation>RunningHub 余额或会员已用尽（{code} {msg}）</translation>
    </message>
    <message>
      <source>RunningHub task {remote_id} succeeded but its outputs did not come; a retry fetches them again (no resubmission)</source>
      <translation>RunningHub 任务 {remote_id} 已成功，但没有拿到输出；重试会重新获取（不会重新提交）</translation>
    </message>
    <message>
      <source>downloaded {n} file(s) to {folder}</source>
      <translation>已下载 {n} 个文件到 {folder}</translation>
    </message>
    <message>
      <source>node_info_list entry {n} needs nodeId, fieldName and fieldValue</source>
      <translation>node_info_list 第 {n} 项需要 nodeId、fieldName 和 fieldValue</translation>
    </message>
    <message>
      <source>RunningHub task {remote_id} failed: {reason}</source>
      <translation>RunningHub 任务 {remote_id} 失败：{reason}</translation>
    </message>
    <message>
      <source>{detail} (unknown to RunningHub under this key)</source>
      <translation>{detail}（此密钥下 RunningHub 不认识该任务）</translation>
    </message>
    <message>
      <source>{detail} (the remote task failed; submit it again as a new task to run it again)</source>
      <translation>{detail}（远程任务已失败；如需再次运行，请作为新任务提交）</translation>
    </message>
    <message>
      <source>model {model} names neither workflow_id nor webapp_id</source>
      <translation>模型 {model} 既没有 workflow_id 也没有 webapp_id</translation>
    </message>
    <message>
      <source>create answered code 0 without a taskId; check {where} before retrying</source>
      <translation>创建返回 code 0 但没有 taskId；重试前请先检查 {where}</translation>
    </message>
    <message>
      <source>{path} for {remote_id}: {detail}</source>
      <translation>{remote_id} 的 {path}：{detail}</translation>
    </message>
    <message>
      <source>download of {url} failed ({problem}); fetching it again (try {n} of {tries})</source>
      <translation>{url} 下载失败（{problem}）；重新下载（第 {n} 次，共 {tries} 次）</translation>
    </message>
    <message>
      <source>warning: the result of {service} task {remote_id} expires in {left}; fetching it now</source>
      <translation>警告：{service} 任务 {remote_id} 的结果将在 {left} 后过期；立即下载</translation>
    </message>
    <message>
      <source>the result of {service} task {remote_id} expired {ago} ago and can no longer be fetched; run the task again to generate it anew</source>
      <translation>{service} 任务 {remote_id} 的结果已于 {ago} 前过期，无法再下载；请重新运行任务以重新生成</translation>
    </message>
    <message>
      <source>remixing {service} video {remote_id}</source>
      <translation>正在重混 {service} 视频 {remote_id}</translation>
    </message>
    <message>
      <source>no batch {batch} (mediaassist status lists the lanes; a batch id looks like tasks-20260101T120000Z-0a1b2c3d)</source>
      <translation>没有批次 {batch}（批次编号形如 tasks-20260101T120000Z-0a1b2c3d；mediaassist status 列出各通道）</translation>
    </message>
    <message>
      <source>batch {batch} has no outputs to deliver</source>
      <translation>批次 {batch} 没有可交付的输出</translation>
    </message>
    <message>
      <source>batch {batch} has no picked outputs to deliver (pick some first: mediaassist outputs pick TASK_ID)</source>
      <translation>批次 {batch} 没有已选的输出可交付（请先选中：mediaassist outputs pick TASK_ID）</translation>
    </message>
    <message>
      <source>no task {task}</source>
      <translation>没有任务 {task}</translation>
    </message>
    <message>
      <source>no model {model} in the config (models: {names})</source>
      <translation>配置中没有模型 {model}（现有模型：{names}）</translation>
    </message>
    <message>
      <source>--remix needs a task-API model whose profile has a [remix] route (like openai-videos); {model} has none</source>
      <translation>--remix 需要其配置文件含 [remix] 接口的任务 API 模型（如 openai-videos）；{model} 没有</translation>
    </message>
    <message>
      <source>--remix keeps the model: a video is remixed by the service that made it</source>
      <translation>--remix 不能换模型：视频只能由生成它的服务重混</translation>
    </message>
    <message>
      <source>task {task} is {state}; only a succeeded video can be remixed</source>
      <translation>任务 {task} 的状态是 {state}；只有成功的视频才能重混</translation>
    </message>
    <message>
      <source>column {column}: {reason}</source>
      <translation>第 {column} 列：{reason}</translation>
    </message>
    <message>
      <source>column {column}: required by model {model} (a file path or URL)</source>
      <translation>第 {column} 列：模型 {model} 必须填写（文件路径或 URL）</translation>
    </message>
    <message>
      <source>models names no model (write them as a|b|c)</source>
      <translation>models 列没有写模型（写法：a|b|c）</translation>
    </message>
    <message>
      <source>column {column}: model {model} takes no input {name} (its inputs: {inputs})</source>
      <translation>第 {column} 列：模型 {model} 没有输入 {name}（它的输入：{inputs}）</translation>
    </message>
    <message>
      <source>file not found: {path}</source>
      <translation>文件不存在：{path}</translation>
    </message>
    <message>
      <source>cannot read {path}: {reason}</source>
      <translation>无法读取 {path}：{reason}</translation>
    </message>
    <message>
      <source>unknown model {model} ({known})</source>
      <translation>未知模型 {model}（{known}）</translation>
    </message>
    <message>
      <source>known models: {names}</source>
      <translation>已知模型：{names}</translation>
    </message>
    <message>
      <source>no models are configured</source>
      <translation>没有配置任何模型</translation>
    </message>
    <message>
      <source>model is empty and no default model was given</source>
      <translation>模型为空，也没有指定默认模型</translation>
    </message>
    <message>
      <source>prompt is empty (model {model} needs one)</source>
      <translation>提示词为空（模型 {model} 需要提示词）</translation>
    </message>
    <message>
      <source>prompt has {n} characters (at most {limit})</source>
      <translation>提示词有 {n} 个字符（最多 {limit} 个）</translation>
    </message>
    <message>
      <source>duplicate task_id {task_id} (first on row {row})</source>
      <translation>task_id {task_id} 重复（第一次出现在第 {row} 行）</translation>
    </message>
    <message>
      <source>params is not valid JSON</source>
      <translation>params 不是有效的 JSON</translation>
    </message>
    <message>
      <source>params: sim_duration_s must be a number of seconds &gt;= 0, not {value}</source>
      <translation>params：sim_duration_s 必须是 &gt;= 0 的秒数，而不是 {value}</translation>
    </message>
    <message>
      <source>params: sim_fail must be one of {allowed}, not {value}</source>
      <translation>params：sim_fail 必须是 {allowed} 之一，而不是 {value}</translation>
    </message>
    <message>
      <source>{literal} is not a JSON value (JSON has no NaN or Infinity): write a number or a text in quotes</source>
      <translation>{literal} 不是 JSON 值（JSON 没有 NaN 或 Infinity）：请写一个数字或带引号的文本</translation>
    </message>
    <message>
      <source>params is not a JSON object</source>
      <translation>params 不是 JSON 对象</translation>
    </message>
    <message>
      <source>priority {value} is not an integer</source>
      <translation>priority {value} 不是整数</translation>
    </message>
    <message>
      <source>outside its hours {hours}; opens at {time}</source>
      <translation>不在工作时段 {hours} 内；{time} 开始</translation>
    </message>
    <message>
      <source>outside its hours {hours}; opens at {time} tomorrow</source>
      <translation>不在工作时段 {hours} 内；明天 {time} 开始</translation>
    </message>
    <message>
      <source>not_before {value} is not a time (allowed: 2026-12-03 23:00, an ISO 8601 time with its offset, or 23:00 for the next time the clock shows it)</source>
      <translation>not_before {value} 不是时间（可用：2026-12-03 23:00、带时区偏移的 ISO 8601 时间，或 23:00 表示下一次到这个钟点）</translation>
    </message>
    <message>
      <source>{path}: file not found</source>
      <translation>{path}：文件不存在</translation>
    </message>
    <message>
      <source>{path}: the file is empty</source>
      <translation>{path}：文件是空的</translation>
    </message>
    <message>
      <source>{path}: the file holds no tasks</source>
      <translation>{path}：文件中没有任务</translation>
    </message>
    <message>
      <source>{path}: unknown model {model} ({known})</source>
      <translation>{path}：未知模型 {model}（{known}）</translation>
    </message>
    <message>
      <source>{path}: a TXT file holds only prompts; name the model (--model NAME)</source>
      <translation>{path}：TXT 文件只含提示词；请指定模型（--model 名称）</translation>
    </message>
    <message>
      <source>{path}: no model given; add a 'model' column or name a default model (--model NAME)</source>
      <translation>{path}：未指定模型；请添加 'model' 列，或指定默认模型（--model 名称）</translation>
    </message>
    <message>
      <source>{path}: old .xls workbooks are not supported; save it as .xlsx or CSV</source>
      <translation>{path}：不支持旧的 .xls 工作簿；请另存为 .xlsx 或 CSV</translation>
    </message>
    <message>
      <source>{path}: unsupported file type {suffix} (supported: {formats})</source>
      <translation>{path}：不支持的文件类型 {suffix}（支持：{formats}）</translation>
    </message>
    <message>
      <source>{path}: cannot read the file ({reason})</source>
      <translation>{path}：无法读取文件（{reason}）</translation>
    </message>
    <message>
      <source>the import process ended early (exit code {code})</source>
      <translation>导入进程意外结束（退出码 {code}）</translation>
    </message>
    <message>
      <source>the import process failed: {error}: {detail}</source>
      <translation>导入进程出错：{error}：{detail}</translation>
    </message>
    <message>
      <source>unexpected reply from the import process: {reply}</source>
      <translation>导入进程的回复不符合预期：{reply}</translation>
    </message>
    <message>
      <source>unreadable reply from the import process ({error}: {detail})</source>
      <translation>无法读取导入进程的回复（{error}：{detail}）</translation>
    </message>
    <message>
      <source>{path}: not readable as text (it holds NUL bytes); save it as UTF-8</source>
      <translation>{path}：无法作为文本读取（含 NUL 字节）；请另存为 UTF-8</translation>
    </message>
    <message>
      <source>{path}: not a valid CSV file (line {line}: {detail})</source>
      <translation>{path}：不是有效的 CSV 文件（第 {line} 行：{detail}）</translation>
    </message>
    <message>
      <source>{path}: not a readable XLSX workbook ({detail})</source>
      <translation>{path}：不是可读取的 XLSX 工作簿（{detail}）</translation>
    </message>
    <message>
      <source>{path}: column {column} appears more than once in the header</source>
      <translation>{path}：表头中 {column} 列出现了不止一次</translation>
    </message>
    <message>
      <source>{path}: not valid JSON ({detail})</source>
      <translation>{path}：不是有效的 JSON（{detail}）</translation>
    </message>
    <message>
      <source>{path}: JSON nested too deeply to be a task list</source>
      <translation>{path}：JSON 嵌套过深，不是任务列表</translation>
    </message>
    <message>
      <source>{path}: JSON must be a list of objects, one per task</source>
      <translation>{path}：JSON 必须是对象列表，每个任务一个对象</translation>
    </message>
    <message>
      <source>{path}: JSONL must hold one JSON object per line</source>
      <translation>{path}：JSONL 每行必须是一个 JSON 对象</translation>
    </message>
    <message>
      <source>ignored unknown column(s): {columns} (known: {known})</source>
      <translation>已忽略未知列：{columns}（已知列：{known}）</translation>
    </message>
    <message>
      <source>task_id is {n} characters long (at most {limit})</source>
      <translation>task_id 长 {n} 个字符（最多 {limit} 个）</translation>
    </message>
    <message>
      <source>priority {value} is out of range ({low}..{high})</source>
      <translation>优先级 {value} 超出范围（{low}..{high}）</translation>
    </message>
    <message>
      <source>account {account} given for {kind} model {model} (only web models run on an account)</source>
      <translation>为 {kind} 模型 {model} 指定了账号 {account}（只有网页模型使用账号）</translation>
    </message>
    <message>
      <source>account {account} is not configured, but {runs_on}</source>
      <translation>账号 {account} 未配置；{runs_on}</translation>
    </message>
    <message>
      <source>account {account} belongs to site {other}, but {runs_on}</source>
      <translation>账号 {account} 属于站点 {other}；{runs_on}</translation>
    </message>
    <message>
      <source>model {model} runs on site {site} (accounts: {accounts})</source>
      <translation>模型 {model} 运行在站点 {site}（账号：{accounts}）</translation>
    </message>
    <message>
      <source>{path}: starts with a UTF-8 byte-order mark but is not UTF-8 (invalid byte at offset {offset} after the mark); save it as UTF-8 again, or name its encoding with --encoding</source>
      <translation>{path}：以 UTF-8 字节序标记开头，但不是 UTF-8（标记后偏移 {offset} 处有无效字节）；请重新另存为 UTF-8，或用 --encoding 指定编码</translation>
    </message>
    <message>
      <source>{path}: unknown encoding {encoding} (e.g. utf-8, gb18030, shift_jis, big5, euc_kr)</source>
      <translation>{path}：未知编码 {encoding}（例如 utf-8、gb18030、shift_jis、big5、euc_kr）</translation>
    </message>
    <message>
      <source>{path}: not valid {encoding} (byte offset {offset}: {reason}); check --encoding, or save the file as UTF-8</source>
      <translation>{path}：不是有效的 {encoding}（字节偏移 {offset}：{reason}）；请检查 --encoding，或将文件另存为 UTF-8</translation>
    </message>
    <message>
      <source>read as {encoding} (detected); name another with --encoding if that is wrong</source>
      <translation>已按 {encoding} 读取（自动识别）；如有误，请用 --encoding 指定其他编码</translation>
    </message>
    <message>
      <source>{path}: not UTF-8, and could be {encodings}; name the encoding with --encoding (e.g. --encoding gb18030), or save the file as UTF-8</source>
      <translation>{path}：不是 UTF-8，可能是 {encodings}；请用 --encoding 指定编码（例如 --encoding gb18030），或将文件另存为 UTF-8</translation>
    </message>
    <message>
      <source>{path}: not readable as text (not UTF-8, and not clearly GB18030, Shift-JIS, Big5 or EUC-KR); save it as UTF-8, or name its encoding with --encoding</source>
      <translation>{path}：无法作为文本读取（不是 UTF-8，也无法确定是 GB18030、Shift-JIS、Big5 或 EUC-KR）；请另存为 UTF-8，或用 --encoding 指定编码</translation>
    </message>
    <message>
      <source>must be a file path or URL, not {type}</source>
      <translation>必须是文件路径或 URL，而不是 {type}</translation>
    </message>
    <message>
      <source>several files given ({separator}) but {input} takes one</source>
      <translation>给出了多个文件（{separator}），但 {input} 只接受一个</translation>
    </message>
    <message>
      <source>an empty file name between '{separator}' separators</source>
      <translation>'{separator}' 分隔符之间有空文件名</translation>
    </message>
    <message>
      <source>{url} is not a valid URL</source>
      <translation>{url} 不是有效的 URL</translation>
    </message>
    <message>
      <source>{url} is not a valid http(s) URL</source>
      <translation>{url} 不是有效的 http(s) URL</translation>
    </message>
    <message>
      <source>{url} looks like {media} by its name, but {input} takes {kinds}</source>
      <translation>{url} 从名称看是{media}，但 {input} 只接受{kinds}</translation>
    </message>
    <message>
      <source>{path} is a folder</source>
      <translation>{path} 是文件夹</translation>
    </message>
    <message>
      <source>{path} is not a regular file</source>
      <translation>{path} 不是普通文件</translation>
    </message>
    <message>
      <source>{name} is not {kinds} file by its content (known: PNG, JPEG, GIF, WEBP, BMP, MP4, MOV, WEBM, MKV, MP3, WAV, M4A, AAC, OGG, FLAC)</source>
      <translation>{name} 从内容看不是{kinds}文件（已知格式：PNG、JPEG、GIF、WEBP、BMP、MP4、MOV、WEBM、MKV、MP3、WAV、M4A、AAC、OGG、FLAC）</translation>
    </message>
    <message>
      <source>{name} is {media} ({mime}), but {input} takes {kinds}</source>
      <translation>{name} 是{media}（{mime}），但 {input} 只接受{kinds}</translation>
    </message>
    <message>
      <source>{name} is {size}, over the {limit} limit for {media}</source>
      <translation>{name} 大小为 {size}，超过{media}的上限 {limit}</translation>
    </message>
    <message>
      <source>{n} bytes</source>
      <translation>{n} 字节</translation>
    </message>
    <message>
      <source>{size} MiB ({n} bytes)</source>
      <translation>{size} MiB（{n} 字节）</translation>
    </message>
    <message>
      <source>no Chromium executable found ({detail}); set app.chromium_path</source>
      <translation>找不到 Chromium 可执行文件（{detail}）；请设置 app.chromium_path</translation>
    </message>
    <message>
      <source>prompt entered by {way} ({detail})</source>
      <translation>提示词已通过 {way} 方式输入（{detail}）</translation>
    </message>
    <message>
      <source>the learned profile's own test turn read an empty answer; redo the click on the answer (on its text, once it has finished)</source>
      <translation>学习到的配置自己的测试轮读到的回答为空；请重新点击回答（在它完成后点击其文字）</translation>
    </message>
    <message>
      <source>the prompt box's selector no longer matches once text is typed ({selector}); redo the click on the prompt box</source>
      <translation>输入文字后提示词框的选择器不再匹配（{selector}）；请重新点击提示词框</translation>
    </message>
    <message>
      <source>the page shows it is logged out</source>
      <translation>页面显示已退出登录</translation>
    </message>
    <message>
      <source>the learned profile's own test turn failed: {reason}; run sites learn again (click the prompt box itself, the send button, then the finished answer's text)</source>
      <translation>学习到的配置自己的测试轮失败：{reason}；请重新运行 sites learn（点击提示词框本身、发送按钮，然后点击已完成回答的文字）</translation>
    </message>
    <message>
      <source>{site}: prompt box not found</source>
      <translation>{site}：找不到提示词输入框</translation>
    </message>
    <message>
      <source>{site}: the prompt cannot be entered verbatim, not sent ({detail}); try another prompt_entry ({ways})</source>
      <translation>{site}：提示词无法原样输入，未发送（{detail}）；请换一种 prompt_entry（{ways}）</translation>
    </message>
    <message>
      <source>could not open {url}: {detail}</source>
      <translation>无法打开 {url}：{detail}</translation>
    </message>
    <message>
      <source>{site} shows a rate-limit banner: {detail}</source>
      <translation>{site} 显示限流提示：{detail}</translation>
    </message>
    <message>
      <source>{site} refused: {detail}</source>
      <translation>{site} 拒绝了请求：{detail}</translation>
    </message>
    <message>
      <source>rate limited by {site}: {detail}</source>
      <translation>被 {site} 限流：{detail}</translation>
    </message>
    <message>
      <source>{site} logged the account out during the answer</source>
      <translation>{site} 在回答过程中让账号退出了登录</translation>
    </message>
    <message>
      <source>no complete answer within {seconds} s</source>
      <translation>{seconds} 秒内没有得到完整回答</translation>
    </message>
    <message>
      <source>image {src} could not be fetched (HTTP {status})</source>
      <translation>无法获取图片 {src}（HTTP {status}）</translation>
    </message>
    <message>
      <source>the answer started</source>
      <translation>开始回答</translation>
    </message>
    <message>
      <source>the answer did not start within {seconds} s after send (the send may have been swallowed)</source>
      <translation>发送后 {seconds} 秒内没有开始回答（发送可能没有生效）</translation>
    </message>
    <message>
      <source>answer complete: {chars} characters, {images} image(s) in {seconds} s</source>
      <translation>回答完成：{chars} 个字符，{images} 张图片，用时 {seconds} 秒</translation>
    </message>
    <message>
      <source>prompt entered ({chars} characters, {lines} lines)</source>
      <translation>已输入提示词（{chars} 个字符，{lines} 行）</translation>
    </message>
    <message>
      <source>an earlier answer was still being generated on this account; clicked stop ({outcome})</source>
      <translation>该账号上仍有之前的回答在生成；已点击停止（{outcome}）</translation>
    </message>
    <message>
      <source>account {account} is logged out of {site}; log in with: mediaassist accounts login {name}</source>
      <translation>账号 {account} 已退出 {site}；请登录：mediaassist accounts login {name}</translation>
    </message>
    <message>
      <source>clicked stop on the page; the answer ended</source>
      <translation>已在页面上点击停止；回答已结束</translation>
    </message>
    <message>
      <source>a web task reached the provider without an account</source>
      <translation>网页任务到达服务时没有指定账号</translation>
    </message>
    <message>
      <source>waiting: account {account} is still busy with another generation</source>
      <translation>等待中：账号 {account} 仍在进行另一次生成</translation>
    </message>
    <message>
      <source>need_empty_prompt: cleared the page's default instructions</source>
      <translation>need_empty_prompt：已清除页面的默认指令</translation>
    </message>
    <message>
      <source>need_empty_prompt: the system prompt is not sent</source>
      <translation>need_empty_prompt：不发送系统提示词</translation>
    </message>
    <message>
      <source>stopping the generation failed ({error})</source>
      <translation>停止生成失败（{error}）</translation>
    </message>
    <message>
      <source>browser error: {detail}</source>
      <translation>浏览器错误：{detail}</translation>
    </message>
    <message>
      <source>recycling the browser after {n} tasks</source>
      <translation>已运行 {n} 个任务，重启浏览器</translation>
    </message>
    <message>
      <source>not recycling the browser after {n} tasks: the login of {site} lives in the open page (navigation = "stay"), which is kept</source>
      <translation>已运行 {n} 个任务，但不重启浏览器：{site} 的登录保存在打开的页面中（navigation = "stay"），保留该页面</translation>
    </message>
    <message>
      <source>no generation was showing; nothing to stop</source>
      <translation>页面上没有正在进行的生成；无需停止</translation>
    </message>
    <message>
      <source>handed back to the queue after a storage fault</source>
      <translation>存储故障后已交还队列</translation>
    </message>
    <message>
      <source>canceled: {reason}</source>
      <translation>已取消：{reason}</translation>
    </message>
    <message>
      <source>stream read to the end: {n} characters</source>
      <translation>流已读完：{n} 个字符</translation>
    </message>
    <message>
      <source>stream error: {detail}</source>
      <translation>流错误：{detail}</translation>
    </message>
    <message>
      <source>the stream ended without [DONE] after {n} characters</source>
      <translation>流在 {n} 个字符后结束，未收到 [DONE]</translation>
    </message>
    <message>
      <source>endpoint {endpoint} is not one of: {endpoints}</source>
      <translation>端点 {endpoint} 不是以下之一：{endpoints}</translation>
    </message>
    <message>
      <source>HTTP {status} and the server says not to retry (x-should-retry: false): {detail}</source>
      <translation>HTTP {status}，服务器表示不要重试（x-should-retry: false）：{detail}</translation>
    </message>
    <message>
      <source>HTTP {status} (rate limited): the server asks for {seconds} s; no request to {provider} before then</source>
      <translation>HTTP {status}（限流）：服务器要求等待 {seconds} 秒；在此之前不向 {provider} 发送请求</translation>
    </message>
    <message>
      <source>the stream broke after {n} characters ({error})</source>
      <translation>流在 {n} 个字符后中断（{error}）</translation>
    </message>
    <message>
      <source>HTTP {status} at {n} in flight: over the provider's limit; learned limit now {limit}, sent again when a slot frees</source>
      <translation>HTTP {status}，{n} 个请求进行中：超出提供方的限制；学习到的限制现为 {limit}，有空位时再次发送</translation>
    </message>
    <message>
      <source>HTTP {status} (rate limited, no usable header): one probe to {provider} in {seconds} s, the other requests wait for its answer</source>
      <translation>HTTP {status}（限流，无可用的响应头）：{seconds} 秒后向 {provider} 发送一个探测请求，其他请求等待其回复</translation>
    </message>
    <message>
      <source>receiving: {n} characters so far: …{tail}</source>
      <translation>接收中：已收到 {n} 个字符：…{tail}</translation>
    </message>
    <message>
      <source>stream event is not JSON: {detail}</source>
      <translation>流事件不是 JSON：{detail}</translation>
    </message>
    <message>
      <source>images_edit needs at least one image input (declare inputs = ["image"] and fill its column)</source>
      <translation>images_edit 至少需要一个图片输入（声明 inputs = ["image"] 并填写该列）</translation>
    </message>
    <message>
      <source>input {name} is {media}; a chat model takes images only</source>
      <translation>输入 {name} 是 {media}；对话模型只接受图片</translation>
    </message>
    <message>
      <source>input {name}: images_edit uploads local files; {url} is a URL</source>
      <translation>输入 {name}：images_edit 只上传本地文件；{url} 是 URL</translation>
    </message>
    <message>
      <source>dismissed {n} pop-up(s)</source>
      <translation>已关闭 {n} 个弹窗</translation>
    </message>
    <message>
      <source>{site} showed an error: {detail}</source>
      <translation>{site} 显示了错误：{detail}</translation>
    </message>
    <message>
      <source>{site}: file input not found (selectors.file_input)</source>
      <translation>{site}：找不到文件输入框（selectors.file_input）</translation>
    </message>
    <message>
      <source>{site}: {what} not found</source>
      <translation>{site}：找不到{what}</translation>
    </message>
    <message>
      <source>send button</source>
      <translation>发送按钮</translation>
    </message>
    <message>
      <source>the copy button gave no text; reading the answer from the page instead</source>
      <translation>复制按钮没有给出文本；改为从页面读取回答</translation>
    </message>
    <message>
      <source>{site}: the page shows no login marker ({seen}); the site may have changed (check it with: mediaassist sites check {name} --account NAME)</source>
      <translation>{site}：页面没有显示登录标记（{seen}）；网站可能已改版（用以下命令检查：mediaassist sites check {name} --account NAME）</translation>
    </message>
    <message>
      <source>neither logged in nor logged out</source>
      <translation>既非已登录也非已登出</translation>
    </message>
    <message>
      <source>{site} rejected the attachment {names}: {detail}</source>
      <translation>{site} 拒绝了附件 {names}：{detail}</translation>
    </message>
    <message>
      <source>attached {names}</source>
      <translation>已附加 {names}</translation>
    </message>
    <message>
      <source>{site}: the attachment {names} was not shown as ready within {seconds} s</source>
      <translation>{site}：附件 {names} 在 {seconds} 秒内未显示为就绪</translation>
    </message>
    <message>
      <source>copy button {n} could not be clicked ({error})</source>
      <translation>无法点击复制按钮 {n}（{error}）</translation>
    </message>
    <message>
      <source>the stop button could not be clicked ({error})</source>
      <translation>无法点击停止按钮（{error}）</translation>
    </message>
    <message>
      <source>no click for the {step} within {seconds} s</source>
      <translation>{seconds} 秒内没有点击{step}</translation>
    </message>
    <message>
      <source>the clicked element has no stable selector (no data-testid, aria-label, id, role or stable class); write this role by hand</source>
      <translation>点击的元素没有稳定的选择器（没有 data-testid、aria-label、id、role 或稳定的 class）；请手动填写此角色</translation>
    </message>
    <message>
      <source>reloading the page and checking again</source>
      <translation>重新加载页面并再次检查</translation>
    </message>
    <message>
      <source>{detail}; reloading the page once</source>
      <translation>{detail}；重新加载页面一次</translation>
    </message>
    <message>
      <source>an earlier answer on account {account} was still being generated {seconds} s after clicking stop, also after a reload</source>
      <translation>点击停止 {seconds} 秒后，账号 {account} 上之前的回答仍在生成，重新加载后也是如此</translation>
    </message>
    <message>
      <source>clicked stop on the page, but the answer was still being generated {seconds} s later; the page is reloaded before the next task</source>
      <translation>已点击页面上的停止，但 {seconds} 秒后回答仍在生成；下一个任务前会重新加载页面</translation>
    </message>
    <message>
      <source>input {name}: {url} is a URL; a web model attaches local files only (download it and name the file instead)</source>
      <translation>输入 {name}：{url} 是 URL；网页模型只能附加本地文件（请先下载，再填写文件名）</translation>
    </message>
    <message>
      <source>the session cookies could not be saved ({error})</source>
      <translation>无法保存会话 Cookie（{error}）</translation>
    </message>
    <message>
      <source>{site}: {detail}, also after a reload; add a selector for its close button to the profile's dismiss list</source>
      <translation>{site}：{detail}，重新加载后依然如此；请把它的关闭按钮的选择器加入配置的 dismiss 列表</translation>
    </message>
    <message>
      <source>created {service} task {remote_id} ({status})</source>
      <translation>已创建 {service} 任务 {remote_id}（{status}）</translation>
    </message>
    <message>
      <source>created {service} task {remote_id}, but the task already had remote id {other} (another attempt created it first): {detail}</source>
      <translation>已创建 {service} 任务 {remote_id}，但该任务已有远程 ID {other}（另一次尝试先创建了它）：{detail}</translation>
    </message>
    <message>
      <source>{service} is full ({detail}); keeping the head of the queue, next try in {seconds} s or when one of our tasks ends</source>
      <translation>{service} 已满（{detail}）；保持在队列头部，{seconds} 秒后或我们的某个任务结束时再试</translation>
    </message>
    <message>
      <source>left {service} task {remote_id} running; polling resumes on the next start</source>
      <translation>{service} 任务 {remote_id} 保持运行；下次启动时继续轮询</translation>
    </message>
    <message>
      <source>{service} task {remote_id} was created meanwhile; polling it, not creating</source>
      <translation>{service} 任务 {remote_id} 已在此期间创建；改为轮询它，不再创建</translation>
    </message>
    <message>
      <source>{service} rejected the inputs: {detail}</source>
      <translation>{service} 拒绝了输入：{detail}</translation>
    </message>
    <message>
      <source>input {name}: {service} needs a local file to upload, not a URL ({url})</source>
      <translation>输入 {name}：{service} 需要上传本地文件，而不是 URL（{url}）</translation>
    </message>
    <message>
      <source>{file} was uploaded as {name} already; not uploading it again</source>
      <translation>{file} 已上传为 {name}；不再重复上传</translation>
    </message>
    <message>
      <source>{file} was uploaded as {name} for another task; not uploading it again</source>
      <translation>{file} 已为另一个任务上传为 {name}；不再重复上传</translation>
    </message>
    <message>
      <source>{task} was canceled remotely ({reason})</source>
      <translation>{task} 已在远端取消（{reason}）</translation>
    </message>
    <message>
      <source>{task} failed: {reason}</source>
      <translation>{task} 失败：{reason}</translation>
    </message>
    <message>
      <source>{failed} of {total} downloads of {service} task {remote_id} failed after {tries} tries ({error}: {detail}); its remote id is kept: a retry fetches the result again without generating it</source>
      <translation>{service} 任务 {remote_id} 的 {total} 个下载中有 {failed} 个在尝试 {tries} 次后失败（{error}：{detail}）；远程编号已保留：重试只会重新下载结果，不会重新生成</translation>
    </message>
    <message>
      <source>resuming {service} task {remote_id} (a task is never created twice)</source>
      <translation>继续 {service} 任务 {remote_id}（任务绝不会创建两次）</translation>
    </message>
    <message>
      <source>remote cancel of {service} task {remote_id} failed ({problem}); trying again</source>
      <translation>远程取消 {service} 任务 {remote_id} 失败（{problem}）；正在重试</translation>
    </message>
    <message>
      <source>create was sent but its reply was lost ({problem}); {service} may have created the task, so it is not resubmitted automatically: check {where} before retrying</source>
      <translation>创建请求已发送但回复丢失（{problem}）；{service} 可能已创建该任务，因此不会自动重新提交：重试前请检查 {where}</translation>
    </message>
    <message>
      <source>no result after {seconds} s; {service} task {remote_id} is still running remotely; check {where}</source>
      <translation>{seconds} 秒后仍无结果；{service} 任务 {remote_id} 仍在远端运行；请检查 {where}</translation>
    </message>
    <message>
      <source>{service} task {remote_id} canceled remotely (verified)</source>
      <translation>{service} 任务 {remote_id} 已在远端取消（已确认）</translation>
    </message>
    <message>
      <source>{service} task {remote_id}: {status}</source>
      <translation>{service} 任务 {remote_id}：{status}</translation>
    </message>
    <message>
      <source>{service} task {remote_id}: {progress} %</source>
      <translation>{service} 任务 {remote_id}：{progress} %</translation>
    </message>
    <message>
      <source>create failed ({problem}); trying again</source>
      <translation>创建失败（{problem}）；正在重试</translation>
    </message>
    <message>
      <source>{n} polls in a row failed (last: {problem}); {service} task {remote_id} may still be running: check {where}</source>
      <translation>连续 {n} 次轮询失败（最后一次：{problem}）；{service} 任务 {remote_id} 可能仍在运行：请检查 {where}</translation>
    </message>
    <message>
      <source>{service} create: {detail}</source>
      <translation>{service} 创建：{detail}</translation>
    </message>
    <message>
      <source>RunningHub upload of {file}: {code} {msg}{why}</source>
      <translation>RunningHub 上传 {file}：{code} {msg}{why}</translation>
    </message>
    <message>
      <source>model {model} input {name} names no nodeId (inputs = { name = { nodeId = "39", fieldName = "image" } })</source>
      <translation>模型 {model} 的输入 {name} 没有指定 nodeId（inputs = { name = { nodeId = "39", fieldName = "image" } }）</translation>
    </message>
    <message>
      <source>outputs of RunningHub task {remote_id} taken from the v2 query</source>
      <translation>RunningHub 任务 {remote_id} 的输出取自 v2 查询</translation>
    </message>
    <message>
      <source>input file {path} is gone</source>
      <translation>输入文件 {path} 已不存在</translation>
    </message>
    <message>
      <source>v2 query for {remote_id}: {detail}</source>
      <translation>{remote_id} 的 v2 查询：{detail}</translation>
    </message>
    <message>
      <source>{service}: inputs travel inside the create request</source>
      <translation>{service}：输入随创建请求一起发送</translation>
    </message>
    <message>
      <source>create answered HTTP {status} without a job id at {path}; check {where} before retrying</source>
      <translation>创建返回 HTTP {status}，但 {path} 处没有作业 ID；重试前请检查 {where}</translation>
    </message>
    <message>
      <source>{service} job {remote_id}: HTTP 404 {detail} (unknown to the service, or expired)</source>
      <translation>{service} 作业 {remote_id}：HTTP 404 {detail}（服务不认识该作业，或已过期）</translation>
    </message>
    <message>
      <source>{service} job {remote_id} completed without a result URL</source>
      <translation>{service} 作业 {remote_id} 已完成，但没有结果 URL</translation>
    </message>
    <message>
      <source>{service} job {remote_id} completed without a result URL: {reason}</source>
      <translation>{service} 作业 {remote_id} 已完成，但没有结果 URL：{reason}</translation>
    </message>
    <message>
      <source>{service} refused the task: {detail}</source>
      <translation>{service} 拒绝了该任务：{detail}</translation>
    </message>
    <message>
      <source>create answered a job id that cannot be polled safely ({remote_id}); check {where}</source>
      <translation>创建请求返回的作业 ID 无法安全地用于查询（{remote_id}）；请检查 {where}</translation>
    </message>
    <message>
      <source>input {name}: {service} takes the file's bytes here; give a local file, not the URL {url}</source>
      <translation>输入 {name}：{service} 此处需要文件内容本身；请提供本地文件，而不是 URL {url}</translation>
    </message>
    <message>
      <source>input {name}: {service} takes only URLs here, not the local file {path}</source>
      <translation>输入 {name}：{service} 此处只接受 URL，不接受本地文件 {path}</translation>
    </message>
    <message>
      <source>{service} job {remote_id} succeeded without {path} to ask for its result</source>
      <translation>{service} 作业 {remote_id} 已成功，但没有可用于获取结果的 {path}</translation>
    </message>
    <message>
      <source>{service} task {remote_id} succeeded but its results could not be fetched ({problem}); a retry asks again, the task is not resubmitted</source>
      <translation>{service} 任务 {remote_id} 已成功，但无法获取其结果（{problem}）；重试会再次获取，任务不会重新提交</translation>
    </message>
    <message>
      <source>results of {service} task {remote_id} could not be fetched ({problem}); try {n} soon</source>
      <translation>无法获取 {service} 任务 {remote_id} 的结果（{problem}）；稍后进行第 {n} 次尝试</translation>
    </message>
    <message>
      <source>{service} task {remote_id}</source>
      <translation>{service} 任务 {remote_id}</translation>
    </message>
    <message>
      <source>no login was seen before the window closed or the time ran out</source>
      <translation>在窗口关闭或时间用完之前没有看到登录</translation>
    </message>
    <message>
      <source>no display to open the login window on (DISPLAY is not set); log in from a desktop session, or on a virtual screen: xvfb-run -a mediaassist accounts login {account}</source>
      <translation>没有可打开登录窗口的显示器（未设置 DISPLAY）；请在桌面会话中登录，或在虚拟屏幕上登录：xvfb-run -a mediaassist accounts login {account}</translation>
    </message>
    <message>
      <source>the login did not survive relaunching the browser (the site may keep it only in the open page, or the session expired at once); tasks on this account would find it logged out</source>
      <translation>重新启动浏览器后登录没有保留（网站可能只在打开的页面中保持登录，或会话立即过期）；此账号的任务会发现它已退出登录</translation>
    </message>
    <message>
      <source>disk full: the filesystem {filesystem} holding {path} has {free} free ({reason}); free some space -- queued and running tasks stay queued and resume when there is room</source>
      <translation>磁盘已满：存放 {path} 的文件系统 {filesystem} 的可用空间为 {free}（{reason}）；请释放一些空间——排队和运行中的任务会保留在队列中，有空间后继续</translation>
    </message>
    <message>
      <source>cannot write {path} ({reason}): the file or its folder is read-only or not yours; make both writable by you (e.g. chmod u+w), or choose another --data-dir</source>
      <translation>无法写入 {path}（{reason}）：文件或其所在文件夹是只读的或不属于你；请让两者对你可写（例如 chmod u+w），或选择另一个 --data-dir</translation>
    </message>
    <message>
      <source>{path} is damaged ({reason}); first keep what it holds: 'mediaassist doctor' backs it up and saves the rows it can still read; then move it aside together with its -wal and -shm files to start with an empty queue, or restore a backup</source>
      <translation>{path} 已损坏（{reason}）；请先保留其中的内容：'mediaassist doctor' 会备份它并保存仍可读取的行；然后再把它连同 -wal 和 -shm 文件一起移走，以空队列重新开始，或恢复备份</translation>
    </message>
    <message>
      <source>{path} reports damage ({reason}); nothing is lost yet: run 'mediaassist doctor' -- it backs the file up first, then checks it -- before moving anything</source>
      <translation>{path} 报告了损坏（{reason}）；目前没有丢失任何内容：在移动任何文件之前，请先运行 'mediaassist doctor'——它会先备份文件，再检查它</translation>
    </message>
    <message>
      <source>{path} is not a mediaassist database ({reason}); move it aside, or choose another --data-dir</source>
      <translation>{path} 不是 mediaassist 数据库（{reason}）；请把它移走，或选择另一个 --data-dir</translation>
    </message>
    <message>
      <source>{path} stays locked by another process ({reason} for {seconds} s): a mediaassist process that is stopped (Ctrl-Z, a debugger) or hung holds its write lock; resume or end it -- queued and running tasks stay queued and go on once the lock is free</source>
      <translation>{path} 一直被另一个进程锁定（{reason}，已 {seconds} 秒）：某个已暂停（Ctrl-Z、调试器）或卡住的 mediaassist 进程持有写锁；请让它继续或结束它——排队和运行中的任务会保留在队列中，锁释放后继续</translation>
    </message>
    <message>
      <source>{path} was {reason} while in use; nothing more was written to it. Put the file back (or move the new one aside), then start again</source>
      <translation>{path} 在使用中被{reason}；之后没有再写入。请把文件放回（或把新文件移走），然后重新启动</translation>
    </message>
    <message>
      <source>cannot read or write {path} ({reason}); check the disk and the file, then start again</source>
      <translation>无法读写 {path}（{reason}）；请检查磁盘和文件，然后重新启动</translation>
    </message>
    <message>
      <source>{service} job {remote_id}: {n} output(s)</source>
      <translation>{service} 作业 {remote_id}：{n} 个输出</translation>
    </message>
    <message>
      <source>{service} job {remote_id}: {n} output(s); {figures}</source>
      <translation>{service} 作业 {remote_id}：{n} 个输出；{figures}</translation>
    </message>
    <message>
      <source>RunningHub task {remote_id}: {n} output(s), {seconds} s, {coins} coins</source>
      <translation>RunningHub 任务 {remote_id}：{n} 个输出，用时 {seconds} 秒，{coins} 个币</translation>
    </message>
    <message>
      <source>RunningHub task {remote_id}: {n} output(s), {seconds} s, {amount} {currency}</source>
      <translation>RunningHub 任务 {remote_id}：{n} 个输出，用时 {seconds} 秒，{amount} {currency}</translation>
    </message>
    <message>
      <source>{service} job {remote_id}: {n} output(s); seconds {seconds}</source>
      <translation>{service} 作业 {remote_id}：{n} 个输出；计费 {seconds} 秒</translation>
    </message>
    <message>
      <source>RunningHub task {remote_id}: {n} output(s), {seconds} s, no charge reported</source>
      <translation>RunningHub 任务 {remote_id}：{n} 个输出，用时 {seconds} 秒，未报告扣费</translation>
    </message>
    <message>
      <source>[{model}] {prompt} ({seconds} s)</source>
      <translation>[{model}] {prompt}（{seconds} 秒）</translation>
    </message>
    <message>
      <source>queued</source>
      <translation>排队中</translation>
    </message>
    <message>
      <source>submitted</source>
      <translation>已提交</translation>
    </message>
    <message>
      <source>pending</source>
      <translation>等待中</translation>
    </message>
    <message>
      <source>not_start</source>
      <translation>未开始</translation>
    </message>
    <message>
      <source>create</source>
      <translation>已创建</translation>
    </message>
    <message>
      <source>in_progress</source>
      <translation>进行中</translation>
    </message>
    <message>
      <source>processing</source>
      <translation>处理中</translation>
    </message>
    <message>
      <source>running</source>
      <translation>运行中</translation>
    </message>
    <message>
      <source>completed</source>
      <translation>已完成</translation>
    </message>
    <message>
      <source>succeeded</source>
      <translation>成功</translation>
    </message>
    <message>
      <source>failed</source>
      <translation>失败</translation>
    </message>
    <message>
      <source>failure</source>
      <translation>失败</translation>
    </message>
    <message>
      <source>expired</source>
      <translation>已过期</translation>
    </message>
    <message>
      <source>cancelled</source>
      <translation>已取消</translation>
    </message>
    <message>
      <source>cancel</source>
      <translation>已取消</translation>
    </message>
    <message>
      <source>an image</source>
      <translation>图片</translation>
    </message>
    <message>
      <source>a video</source>
      <translation>视频</translation>
    </message>
    <message>
      <source>an audio file</source>
      <translation>音频</translation>
    </message>
    <message>
      <source> or </source>
      <translation>或</translation>
    </message>
    <message>
      <source>; </source>
      <translation>；</translation>
    </message>
    <message>
      <source>Prompt</source>
      <translation>提示词</translation>
    </message>
    <message>
      <source>Result</source>
      <translation>结果</translation>
    </message>
    <message>
      <source>Media</source>
      <translation>媒体</translation>
    </message>
    <message>
      <source>Error</source>
      <translation>错误</translation>
    </message>
    <message>
      <source>Cost</source>
      <translation>费用</translation>
    </message>
    <message>
      <source>Log</source>
      <translation>日志</translation>
    </message>
    <message>
      <source>Select a task to see its details.</source>
      <translation>选择一个任务查看详情。</translation>
    </message>
    <message>
      <source>{id} · {state} · {lane} · attempt {attempt} · created {created}</source>
      <translation>{id} · {state} · {lane} · 第 {attempt} 次尝试 · 创建于 {created}</translation>
    </message>
    <message>
      <source>Look in:</source>
      <translation>查找范围：</translation>
    </message>
    <message>
      <source>File name:</source>
      <translation>文件名：</translation>
    </message>
    <message>
      <source>Files of type:</source>
      <translation>文件类型：</translation>
    </message>
    <message>
      <source>output</source>
      <translation>输出</translation>
    </message>
    <message>
      <source>file</source>
      <translation>文件</translation>
    </message>
    <message>
      <source>Open with the system player</source>
      <translation>用系统播放器打开</translation>
    </message>
    <message>
      <source>Open with the system viewer</source>
      <translation>用系统查看器打开</translation>
    </message>
    <message>
      <source>Videos and sounds play in the system player: this build has no Qt Multimedia (PySide6-Essentials).</source>
      <translation>视频和音频用系统播放器播放：此版本不含 Qt Multimedia（PySide6-Essentials）。</translation>
    </message>
    <message>
      <source>Cannot open</source>
      <translation>无法打开</translation>
    </message>
    <message>
      <source>Preview</source>
      <translation>预览</translation>
    </message>
    <message>
      <source>Copy location</source>
      <translation>复制位置</translation>
    </message>
    <message>
      <source>In the table's order</source>
      <translation>按表格顺序</translation>
    </message>
    <message>
      <source>By batch and row</source>
      <translation>按批次和行分组</translation>
    </message>
    <message>
      <source>All models</source>
      <translation>全部模型</translation>
    </message>
    <message>
      <source>All batches</source>
      <translation>全部批次</translation>
    </message>
    <message>
      <source>Picked only</source>
      <translation>只看已选</translation>
    </message>
    <message>
      <source>★ Pick (P)</source>
      <translation>★ 选中 (P)</translation>
    </message>
    <message>
      <source>Pick or unpick the selected outputs (key P)</source>
      <translation>选中或取消选中所选输出（按 P 键）</translation>
    </message>
    <message>
      <source>Reload</source>
      <translation>刷新</translation>
    </message>
    <message>
      <source>No images or videos in the current view yet: outputs appear here as tasks finish.</source>
      <translation>当前视图中还没有图片或视频：任务完成后输出会显示在这里。</translation>
    </message>
    <message>
      <source>input {name}</source>
      <translation>输入 {name}</translation>
    </message>
    <message>
      <source>row {row}</source>
      <translation>第 {row} 行</translation>
    </message>
    <message>
      <source>image</source>
      <translation>图片</translation>
    </message>
    <message>
      <source>video</source>
      <translation>视频</translation>
    </message>
    <message>
      <source>audio</source>
      <translation>音频</translation>
    </message>
    <message>
      <source>Open folder</source>
      <translation>打开文件夹</translation>
    </message>
    <message>
      <source>Outputs and inputs</source>
      <translation>输出和输入</translation>
    </message>
    <message>
      <source>Outputs</source>
      <translation>输出文件</translation>
    </message>
    <message>
      <source>Inputs</source>
      <translation>输入</translation>
    </message>
    <message>
      <source>All kinds</source>
      <translation>全部类型</translation>
    </message>
    <message>
      <source>Images</source>
      <translation>图片</translation>
    </message>
    <message>
      <source>Videos</source>
      <translation>视频</translation>
    </message>
    <message>
      <source>Sounds</source>
      <translation>音频</translation>
    </message>
    <message>
      <source>{n} media files of {tasks} tasks in the current view</source>
      <translation>当前视图 {tasks} 个任务中的 {n} 个媒体文件</translation>
    </message>
    <message>
      <source>filtered here too</source>
      <translation>此处另有筛选</translation>
    </message>
    <message>
      <source>Compare this row's outputs…</source>
      <translation>对比这一行的输出…</translation>
    </message>
    <message>
      <source>Edit and run again…</source>
      <translation>编辑后重新运行…</translation>
    </message>
    <message>
      <source>{w}×{h} pixels</source>
      <translation>{w}×{h} 像素</translation>
    </message>
    <message>
      <source>Reading the media of {n} tasks…</source>
      <translation>正在读取 {n} 个任务的媒体…</translation>
    </message>
    <message>
      <source>Unpick</source>
      <translation>取消选中</translation>
    </message>
    <message>
      <source>Pick</source>
      <translation>选中</translation>
    </message>
    <message>
      <source>Zoom in</source>
      <translation>放大</translation>
    </message>
    <message>
      <source>Zoom out</source>
      <translation>缩小</translation>
    </message>
    <message>
      <source>Fit</source>
      <translation>适应窗口</translation>
    </message>
    <message>
      <source>A link: it is fetched by the provider, not stored here.</source>
      <translation>这是一个链接：由服务方获取，不保存在本地。</translation>
    </message>
    <message>
      <source>Playing inside the window; the system player is there too.</source>
      <translation>正在窗口内播放；也可以用系统播放器打开。</translation>
    </message>
    <message>
      <source>The file is gone: {path}</source>
      <translation>文件已不存在：{path}</translation>
    </message>
    <message>
      <source>showing the first {n}</source>
      <translation>仅显示前 {n} 个</translation>
    </message>
    <message>
      <source>Loading…</source>
      <translation>正在加载…</translation>
    </message>
    <message>
      <source>The first frame ({size}). {player}</source>
      <translation>第一帧（{size}）。{player}</translation>
    </message>
    <message>
      <source>Follows the Queue tab's filter ({filter}); clear it there to see every task's media.</source>
      <translation>跟随“队列”页的筛选（{filter}）；在那里清除筛选即可看到所有任务的媒体。</translation>
    </message>
    <message>
      <source>This file cannot be shown as an image.</source>
      <translation>该文件无法作为图片显示。</translation>
    </message>
    <message>
      <source>This video has no frame that can be shown.</source>
      <translation>此视频没有可显示的画面。</translation>
    </message>
    <message>
      <source>{label}: {text}</source>
      <translation>{label}：{text}</translation>
    </message>
    <message>
      <source>(from the file)</source>
      <translation>（按文件）</translation>
    </message>
    <message>
      <source>File</source>
      <translation>文件</translation>
    </message>
    <message>
      <source>Tasks</source>
      <translation>任务</translation>
    </message>
    <message>
      <source>Errors</source>
      <translation>错误</translation>
    </message>
    <message>
      <source>Import</source>
      <translation>导入</translation>
    </message>
    <message>
      <source>Estimated cost: about {total}</source>
      <translation>估算费用：约 {total}</translation>
    </message>
    <message>
      <source>{model}: {n} task(s), about {cost}</source>
      <translation>{model}：{n} 个任务，约 {cost}</translation>
    </message>
    <message>
      <source>Default model</source>
      <translation>默认模型</translation>
    </message>
    <message>
      <source>Model</source>
      <translation>模型</translation>
    </message>
    <message>
      <source>Row</source>
      <translation>行</translation>
    </message>
    <message>
      <source>Reason</source>
      <translation>原因</translation>
    </message>
    <message>
      <source>Cannot read {path}: {reason}</source>
      <translation>无法读取 {path}：{reason}</translation>
    </message>
    <message>
      <source>{good} of {total} rows are good and will be enqueued as one batch; {bad} rows have errors.</source>
      <translation>{total} 行中有 {good} 行有效，将作为一个批次加入队列；{bad} 行有错误。</translation>
    </message>
    <message>
      <source>Nothing new to import</source>
      <translation>没有新任务可导入</translation>
    </message>
    <message>
      <source>Import {name}</source>
      <translation>导入 {name}</translation>
    </message>
    <message>
      <source> (required for TXT)</source>
      <translation>（TXT 文件必填）</translation>
    </message>
    <message>
      <source>Tasks ({n})</source>
      <translation>任务（{n}）</translation>
    </message>
    <message>
      <source>Errors ({n})</source>
      <translation>错误（{n}）</translation>
    </message>
    <message>
      <source>{n} with no price</source>
      <translation>{n} 个无价格</translation>
    </message>
    <message>
      <source>Input files of task {n}:</source>
      <translation>任务 {n} 的输入文件：</translation>
    </message>
    <message>
      <source>Reading {name}…</source>
      <translation>正在读取 {name}…</translation>
    </message>
    <message>
      <source>All {n} of them are in the queue already: importing the file again adds nothing and creates no batch.</source>
      <translation>它们 {n} 个都已在队列中：再次导入此文件不会添加任何任务，也不会创建批次。</translation>
    </message>
    <message>
      <source>Note: {w}</source>
      <translation>注意：{w}</translation>
    </message>
    <message>
      <source>Import {n} tasks</source>
      <translation>导入 {n} 个任务</translation>
    </message>
    <message>
      <source>{n} of them are already in the store (an earlier import of this file) and will be skipped, not run twice.</source>
      <translation>其中 {n} 个任务已在队列中（此前导入过该文件），将被跳过，不会重复执行。</translation>
    </message>
    <message>
      <source>Import task file</source>
      <translation>导入任务文件</translation>
    </message>
    <message>
      <source>Task files (*.csv *.xlsx *.json *.jsonl *.txt)</source>
      <translation>任务文件 (*.csv *.xlsx *.json *.jsonl *.txt)</translation>
    </message>
    <message>
      <source>Imported</source>
      <translation>已导入</translation>
    </message>
    <message>
      <source>{n} tasks enqueued as {batch}</source>
      <translation>已将 {n} 个任务加入批次 {batch}</translation>
    </message>
    <message>
      <source>; {n} task ids were already in the queue and were skipped</source>
      <translation>；{n} 个任务 ID 已在队列中，已跳过</translation>
    </message>
    <message>
      <source>Import failed</source>
      <translation>导入失败</translation>
    </message>
    <message>
      <source>Importing {name}: {n} of {total} tasks…</source>
      <translation>正在导入 {name}：已加入 {n} / {total} 个任务…</translation>
    </message>
    <message>
      <source>Nothing imported from {name}: its {n} tasks are in the queue already</source>
      <translation>没有从 {name} 导入任何任务：它的 {n} 个任务已在队列中</translation>
    </message>
    <message>
      <source>login</source>
      <translation>需登录</translation>
    </message>
    <message>
      <source>quota</source>
      <translation>额度用尽</translation>
    </message>
    <message>
      <source>timeout</source>
      <translation>超时</translation>
    </message>
    <message>
      <source>stalled</source>
      <translation>心跳停止</translation>
    </message>
    <message>
      <source>provider</source>
      <translation>服务方错误</translation>
    </message>
    <message>
      <source>network</source>
      <translation>网络错误</translation>
    </message>
    <message>
      <source>bad input</source>
      <translation>输入有误</translation>
    </message>
    <message>
      <source>internal</source>
      <translation>内部错误</translation>
    </message>
    <message>
      <source>download</source>
      <translation>下载</translation>
    </message>
    <message>
      <source>{s} s</source>
      <translation>{s} 秒</translation>
    </message>
    <message>
      <source>{m} min {s:02d} s</source>
      <translation>{m} 分 {s:02d} 秒</translation>
    </message>
    <message>
      <source>{h} h {m:02d} min</source>
      <translation>{h} 小时 {m:02d} 分</translation>
    </message>
    <message>
      <source>reported by the provider</source>
      <translation>服务方报告</translation>
    </message>
    <message>
      <source>Web</source>
      <translation>网页通道</translation>
    </message>
    <message>
      <source>API</source>
      <translation>API 通道</translation>
    </message>
    <message>
      <source>Polling</source>
      <translation>轮询通道</translation>
    </message>
    <message>
      <source>Log in failed</source>
      <translation>登录失败</translation>
    </message>
    <message>
      <source>Logging in is not available: the web lane is not installed.</source>
      <translation>无法登录：未安装网页通道。</translation>
    </message>
    <message>
      <source>Opening the browser for {name}…</source>
      <translation>正在为 {name} 打开浏览器…</translation>
    </message>
    <message>
      <source>{name} is a simulated account; it needs no login.</source>
      <translation>{name} 是模拟账号，无需登录。</translation>
    </message>
    <message>
      <source>Queue</source>
      <translation>队列</translation>
    </message>
    <message>
      <source>Accounts</source>
      <translation>账号</translation>
    </message>
    <message>
      <source>Gallery</source>
      <translation>图库</translation>
    </message>
    <message>
      <source>Retry failed in view</source>
      <translation>重试当前视图中失败的任务</translation>
    </message>
    <message>
      <source>Cancel pending/running in view</source>
      <translation>取消当前视图中等待/运行的任务</translation>
    </message>
    <message>
      <source>Compare row outputs…</source>
      <translation>对比该行输出…</translation>
    </message>
    <message>
      <source>Deliver picked…</source>
      <translation>交付已选…</translation>
    </message>
    <message>
      <source>&amp;File</source>
      <translation>文件(&amp;F)</translation>
    </message>
    <message>
      <source>&amp;Tasks</source>
      <translation>任务(&amp;T)</translation>
    </message>
    <message>
      <source>&amp;Lanes</source>
      <translation>通道(&amp;L)</translation>
    </message>
    <message>
      <source>API and polling pools</source>
      <translation>API 与轮询池</translation>
    </message>
    <message>
      <source>Search id, prompt, model, error…</source>
      <translation>搜索 ID、提示词、模型、错误…</translation>
    </message>
    <message>
      <source>All states</source>
      <translation>全部状态</translation>
    </message>
    <message>
      <source>All lanes</source>
      <translation>全部通道</translation>
    </message>
    <message>
      <source>Undo</source>
      <translation>撤销</translation>
    </message>
    <message>
      <source>Export tasks</source>
      <translation>导出任务</translation>
    </message>
    <message>
      <source>Please confirm</source>
      <translation>请确认</translation>
    </message>
    <message>
      <source>Quit mediaassist</source>
      <translation>退出 mediaassist</translation>
    </message>
    <message>
      <source>Stop them</source>
      <translation>停止这些任务</translation>
    </message>
    <message>
      <source>Resume next start</source>
      <translation>下次启动时继续</translation>
    </message>
    <message>
      <source>&amp;Import…</source>
      <translation>导入(&amp;I)…</translation>
    </message>
    <message>
      <source>Export view to CSV/XLSX…</source>
      <translation>导出当前视图为 CSV/XLSX…</translation>
    </message>
    <message>
      <source>&amp;Settings…</source>
      <translation>设置(&amp;S)…</translation>
    </message>
    <message>
      <source>&amp;Quit</source>
      <translation>退出(&amp;Q)</translation>
    </message>
    <message>
      <source>Find…</source>
      <translation>查找…</translation>
    </message>
    <message>
      <source>Pause/resume all</source>
      <translation>全部暂停/继续</translation>
    </message>
    <message>
      <source>No new work taken</source>
      <translation>暂停接收新任务</translation>
    </message>
    <message>
      <source>Excel workbook (*.xlsx)</source>
      <translation>Excel 工作簿 (*.xlsx)</translation>
    </message>
    <message>
      <source>CSV (*.csv)</source>
      <translation>CSV (*.csv)</translation>
    </message>
    <message>
      <source>{n} tasks are running. Stop them now, or leave them to resume at the next start?</source>
      <translation>有 {n} 个任务正在运行。现在停止它们，还是留待下次启动时继续？</translation>
    </message>
    <message>
      <source>Quitting</source>
      <translation>正在退出</translation>
    </message>
    <message>
      <source>Finishing the export before quitting…</source>
      <translation>正在完成导出，完成后退出…</translation>
    </message>
    <message>
      <source>Search failed</source>
      <translation>搜索失败</translation>
    </message>
    <message>
      <source>State</source>
      <translation>状态</translation>
    </message>
    <message>
      <source>Lane</source>
      <translation>通道</translation>
    </message>
    <message>
      <source>Batch</source>
      <translation>批次</translation>
    </message>
    <message>
      <source>No new work is taken: {problem}</source>
      <translation>暂停接收新任务：{problem}</translation>
    </message>
    <message>
      <source>Account {name} enabled</source>
      <translation>账号 {name} 已启用</translation>
    </message>
    <message>
      <source>{n} of them are run by another process and go on whatever you choose.</source>
      <translation>其中 {n} 个由另一个进程运行，无论你选择什么都会继续。</translation>
    </message>
    <message>
      <source>No program could be found to open {path} (xdg-open ended with code {code}): install a file manager or media player, or set a default application.</source>
      <translation>找不到可以打开 {path} 的程序（xdg-open 退出码 {code}）：请安装文件管理器或媒体播放器，或设置默认应用。</translation>
    </message>
    <message>
      <source>No program could be found to open {path}.</source>
      <translation>找不到可以打开 {path} 的程序。</translation>
    </message>
    <message>
      <source>No program could be found to open {path}: xdg-open is not installed (package xdg-utils).</source>
      <translation>找不到可以打开 {path} 的程序：未安装 xdg-open（软件包 xdg-utils）。</translation>
    </message>
    <message>
      <source>Nothing picked among these tasks: pick outputs with P or the star first.</source>
      <translation>这些任务中没有已选的输出：请先按 P 键或点星标选中。</translation>
    </message>
    <message>
      <source>Remix the finished video (the service's remix route; no new create)</source>
      <translation>在已完成的视频上重混（使用服务的 remix 接口，不新建任务）</translation>
    </message>
    <message>
      <source>Params (JSON)</source>
      <translation>参数（JSON）</translation>
    </message>
    <message>
      <source>Run again</source>
      <translation>重新运行</translation>
    </message>
    <message>
      <source>Play all from the start</source>
      <translation>全部从头播放</translation>
    </message>
    <message>
      <source>Deliver picked outputs to</source>
      <translation>把已选输出交付到</translation>
    </message>
    <message>
      <source>The task is gone.</source>
      <translation>该任务已不存在。</translation>
    </message>
    <message>
      <source>Params must be a JSON object, e.g. {"seconds": "8"}</source>
      <translation>参数必须是 JSON 对象，例如 {"seconds": "8"}</translation>
    </message>
    <message>
      <source>Picked (P to toggle)</source>
      <translation>已选中（按 P 切换）</translation>
    </message>
    <message>
      <source>Pick (P)</source>
      <translation>选中 (P)</translation>
    </message>
    <message>
      <source>This row has no outputs yet.</source>
      <translation>这一行还没有输出。</translation>
    </message>
    <message>
      <source>{n} files delivered to {folder}, with a manifest</source>
      <translation>已向 {folder} 交付 {n} 个文件，并附清单</translation>
    </message>
    <message>
      <source>Delivered with gaps</source>
      <translation>交付不完整</translation>
    </message>
    <message>
      <source>Delivered</source>
      <translation>已交付</translation>
    </message>
    <message>
      <source>Edit and run again: {id}</source>
      <translation>编辑后重新运行：{id}</translation>
    </message>
    <message>
      <source>Cannot run again</source>
      <translation>无法重新运行</translation>
    </message>
    <message>
      <source>Queued again</source>
      <translation>已重新排队</translation>
    </message>
    <message>
      <source>Nothing delivered</source>
      <translation>未交付任何文件</translation>
    </message>
    <message>
      <source>Compare: row {row}</source>
      <translation>对比：第 {row} 行</translation>
    </message>
    <message>
      <source>Compare: {group}</source>
      <translation>对比：{group}</translation>
    </message>
    <message>
      <source>{n} outputs of this row (its models and reruns). Click a star, or select a tile and press P, to pick.</source>
      <translation>这一行共 {n} 个输出（各模型及重新运行的结果）。点击星标，或选中一格后按 P 键，即可选中。</translation>
    </message>
    <message>
      <source>Params are not valid JSON: {error}</source>
      <translation>参数不是有效的 JSON：{error}</translation>
    </message>
    <message>
      <source>{new} queued as a rerun of {old}</source>
      <translation>{new} 已作为 {old} 的重新运行排队</translation>
    </message>
    <message>
      <source>Gone from disk: {files}</source>
      <translation>磁盘上已不存在：{files}</translation>
    </message>
    <message>
      <source>waiting in the site's shared queue: any of its accounts takes them</source>
      <translation>在该网站的共享队列中等待：它的任一账号都可领取</translation>
    </message>
    <message>
      <source>polled {n} of {limit}</source>
      <translation>轮询中 {n}/{limit}</translation>
    </message>
    <message>
      <source>running {n} of {limit}</source>
      <translation>运行中 {n}/{limit}</translation>
    </message>
    <message>
      <source>Batches</source>
      <translation>批次</translation>
    </message>
    <message>
      <source>No batches yet: drop a task file on the window.</source>
      <translation>还没有批次：把任务文件拖到窗口上。</translation>
    </message>
    <message>
      <source>finished</source>
      <translation>已完成</translation>
    </message>
    <message>
      <source>no lane in the config takes them</source>
      <translation>配置中没有能处理它们的通道</translation>
    </message>
    <message>
      <source>paused</source>
      <translation>已暂停</translation>
    </message>
    <message>
      <source>Resume</source>
      <translation>继续</translation>
    </message>
    <message>
      <source>Pause</source>
      <translation>暂停</translation>
    </message>
    <message>
      <source>{failed} failed · {done} done · {running} running · {waiting} waiting</source>
      <translation>失败 {failed} · 完成 {done} · 运行中 {running} · 等待 {waiting}</translation>
    </message>
    <message>
      <source>ETA {t}</source>
      <translation>预计剩余 {t}</translation>
    </message>
    <message>
      <source>web</source>
      <translation>网页</translation>
    </message>
    <message>
      <source>polling</source>
      <translation>轮询</translation>
    </message>
    <message>
      <source>{n} {kind} tasks wait:</source>
      <translation>{n} 个{kind}任务在等待：</translation>
    </message>
    <message>
      <source>blocked</source>
      <translation>受阻</translation>
    </message>
    <message>
      <source>{pending} waiting · {done} done · {failed} failed</source>
      <translation>等待 {pending} · 完成 {done} · 失败 {failed}</translation>
    </message>
    <message>
      <source>balance {balance}</source>
      <translation>余额 {balance}</translation>
    </message>
    <message>
      <source>ETA: measuring (no {kind} task has finished yet)</source>
      <translation>预计时间：测算中（还没有{kind}任务完成）</translation>
    </message>
    <message>
      <source>No lanes of this kind yet. Add them to {config} (see the README), or start with: mediaassist --demo</source>
      <translation>尚未配置这类通道。请在 {config} 中添加（见 README），或用演示模式启动：mediaassist --demo</translation>
    </message>
    <message>
      <source>{canceled} canceled</source>
      <translation>已取消 {canceled}</translation>
    </message>
    <message>
      <source>spent {spent} of estimated {estimate}</source>
      <translation>已花费 {spent}，估算 {estimate}</translation>
    </message>
    <message>
      <source>budget left {left}</source>
      <translation>预算剩余 {left}</translation>
    </message>
    <message>
      <source>account {name} needs login</source>
      <translation>账号 {name} 需要登录</translation>
    </message>
    <message>
      <source>account {name} is disabled</source>
      <translation>账号 {name} 已停用</translation>
    </message>
    <message>
      <source>Enable it</source>
      <translation>启用它</translation>
    </message>
    <message>
      <source>Play</source>
      <translation>播放</translation>
    </message>
    <message>
      <source>Concurrency</source>
      <translation>并发数</translation>
    </message>
    <message>
      <source>Polling pool</source>
      <translation>轮询池</translation>
    </message>
    <message>
      <source>Poll interval (s)</source>
      <translation>轮询间隔（秒）</translation>
    </message>
    <message>
      <source>Queue sweep (s)</source>
      <translation>队列检查间隔（秒）</translation>
    </message>
    <message>
      <source>Time-out (s)</source>
      <translation>超时（秒）</translation>
    </message>
    <message>
      <source>Settings</source>
      <translation>设置</translation>
    </message>
    <message>
      <source>Application</source>
      <translation>应用</translation>
    </message>
    <message>
      <source>found automatically</source>
      <translation>自动查找</translation>
    </message>
    <message>
      <source>Chromium path</source>
      <translation>Chromium 路径</translation>
    </message>
    <message>
      <source>Data dir (next start)</source>
      <translation>数据目录（下次启动生效）</translation>
    </message>
    <message>
      <source>Language</source>
      <translation>语言</translation>
    </message>
    <message>
      <source>set in the real app's settings, not in the demo</source>
      <translation>请在正式应用的设置中修改，演示模式中不可修改</translation>
    </message>
    <message>
      <source>in use now: {path}</source>
      <translation>当前使用：{path}</translation>
    </message>
    <message>
      <source>System</source>
      <translation>跟随系统</translation>
    </message>
    <message>
      <source>Data dir: {path} is the demo's folder; choose another one, or leave it empty for the default.</source>
      <translation>数据目录：{path} 是演示模式的文件夹；请选择其他文件夹，或留空使用默认目录。</translation>
    </message>
    <message>
      <source>allowed: {low}..{high}</source>
      <translation>允许范围：{low}..{high}</translation>
    </message>
    <message>
      <source>Lane paused</source>
      <translation>通道已暂停</translation>
    </message>
    <message>
      <source>Batch finished</source>
      <translation>批次完成</translation>
    </message>
    <message>
      <source>Account needs login</source>
      <translation>账号需要登录</translation>
    </message>
    <message>
      <source>{batch}: {ok} done, {failed} failed, {canceled} canceled</source>
      <translation>{batch}：{ok} 完成，{failed} 失败，{canceled} 已取消</translation>
    </message>
    <message>
      <source>Cancel</source>
      <translation>取消</translation>
    </message>
    <message>
      <source>Retry</source>
      <translation>重试</translation>
    </message>
    <message>
      <source>Open output folder</source>
      <translation>打开输出文件夹</translation>
    </message>
    <message>
      <source>Copy prompt</source>
      <translation>复制提示词</translation>
    </message>
    <message>
      <source>Copy result</source>
      <translation>复制结果</translation>
    </message>
    <message>
      <source>Copy error</source>
      <translation>复制错误</translation>
    </message>
    <message>
      <source>Copy task id</source>
      <translation>复制任务 ID</translation>
    </message>
    <message>
      <source>Delete</source>
      <translation>删除</translation>
    </message>
    <message>
      <source>Exported</source>
      <translation>已导出</translation>
    </message>
    <message>
      <source>No outputs</source>
      <translation>没有输出</translation>
    </message>
    <message>
      <source>Action failed</source>
      <translation>操作失败</translation>
    </message>
    <message>
      <source>Export failed</source>
      <translation>导出失败</translation>
    </message>
    <message>
      <source>{n} tasks written to {path}</source>
      <translation>已将 {n} 个任务写入 {path}</translation>
    </message>
    <message>
      <source>Delete {n} tasks with their results and logs?</source>
      <translation>删除 {n} 个任务及其结果和日志？</translation>
    </message>
    <message>
      <source>{id} has no output folder yet.</source>
      <translation>{id} 还没有输出文件夹。</translation>
    </message>
    <message>
      <source>Cancel {n} tasks?</source>
      <translation>取消 {n} 个任务？</translation>
    </message>
    <message>
      <source>Output</source>
      <translation>输出</translation>
    </message>
    <message>
      <source>Attempt</source>
      <translation>尝试次数</translation>
    </message>
    <message>
      <source>Created</source>
      <translation>创建时间</translation>
    </message>
    <message>
      <source>Duration</source>
      <translation>耗时</translation>
    </message>
    <message>
      <source>Heartbeat age</source>
      <translation>心跳间隔</translation>
    </message>
    <message>
      <source>Task</source>
      <translation>任务</translation>
    </message>
    <message>
      <source>{site}: any account</source>
      <translation>{site}：任一账号</translation>
    </message>
    <message>
      <source>{n} files</source>
      <translation>{n} 个文件</translation>
    </message>
    <message>
      <source>Cost: {cost} ({source})</source>
      <translation>费用：{cost}（{source}）</translation>
    </message>
    <message>
      <source>Estimated: {estimate}</source>
      <translation>估算：{estimate}</translation>
    </message>
    <message>
      <source>, </source>
      <translation>、</translation>
    </message>
    <message>
      <source>{kind}: {running} running · {waiting} waiting · {failed} failed</source>
      <translation>{kind}：{running} 运行中 · {waiting} 等待中 · {failed} 失败</translation>
    </message>
    <message>
      <source>{n} tasks failed within a minute ({kinds}). Check the Failed filter.</source>
      <translation>一分钟内有 {n} 个任务失败（{kinds}）。请查看“失败”筛选。</translation>
    </message>
    <message>
      <source>Show window</source>
      <translation>显示窗口</translation>
    </message>
    <message>
      <source>Pause all</source>
      <translation>全部暂停</translation>
    </message>
    <message>
      <source>Resume all</source>
      <translation>全部继续</translation>
    </message>
    <message>
      <source>mediaassist: {running} running, {waiting} waiting, {failed} failed</source>
      <translation>mediaassist：{running} 运行中，{waiting} 等待中，{failed} 失败</translation>
    </message>
    <message>
      <source>Paused</source>
      <translation>已暂停</translation>
    </message>
    <message>
      <source>Failures</source>
      <translation>失败</translation>
    </message>
  </context>
</TS>
