<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
  <context>
    <name>mediaassist</name>
    <message>
      <source>Log in</source>
      <translation>登录</translation>
    </message>
    <message>
      <source>Log in and keep me logged in (OS keyring)</source>
      <translation>登录并保持登录（系统钥匙串）</translation>
    </message>
    <message>
      <source>What you type into the site's login form is kept in the OS keyring (never a file) and typed again whenever a new browser finds the page logged out.</source>
      <translation>您在网站登录表单中输入的内容保存在系统钥匙串中（绝不写入文件），新的浏览器发现页面已退出登录时会自动重新填写。</translation>
    </message>
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
      <source>This video has no frame that can be shown.</source>
      <translation>此视频没有可显示的画面。</translation>
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
      <source>First frames of videos need PyAV, which is not installed (the optional video part, ~100 MB); add it with {command}.</source>
      <translation>显示视频的第一帧需要 PyAV，但它未安装（可选的视频部分，约 100 MB）；用 {command} 添加。</translation>
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
      <source>{model}: {n} task(s), about {cost}</source>
      <translation>{model}：{n} 个任务，约 {cost}</translation>
    </message>
    <message>
      <source>{model}: {n} task(s)</source>
      <translation>{model}：{n} 个任务</translation>
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
      <source>pending</source>
      <translation>等待中</translation>
    </message>
    <message>
      <source>running</source>
      <translation>运行中</translation>
    </message>
    <message>
      <source>success</source>
      <translation>成功</translation>
    </message>
    <message>
      <source>failed</source>
      <translation>失败</translation>
    </message>
    <message>
      <source>canceled</source>
      <translation>已取消</translation>
    </message>
    <message>
      <source>login</source>
      <translation>需登录</translation>
    </message>
    <message>
      <source>account disabled</source>
      <translation>账号已停用</translation>
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
      <source>price table</source>
      <translation>价格表</translation>
    </message>
    <message>
      <source>estimate</source>
      <translation>估算</translation>
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
      <source>Pause all</source>
      <translation>全部暂停</translation>
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
      <source>; </source>
      <translation>；</translation>
    </message>
    <message>
      <source>{n} {kind} tasks wait</source>
      <translation>{n} 个{kind}任务在等待</translation>
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
      <source>no preview: PyAV not installed</source>
      <translation>无预览：未安装 PyAV</translation>
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
