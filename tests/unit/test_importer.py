"""Task-file import: every format and encoding, per-row errors, unreadable files, re-import."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from openpyxl import Workbook

from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.errors import ImportFileError
from mediaassist.core.importer import RowError, new_batch_id, read_task_file
from mediaassist.core.messages import render
from mediaassist.core.paths import RESOURCES
from mediaassist.core.store import Store

EXAMPLES = RESOURCES / "examples"


@pytest.fixture
def config() -> AppConfig:
    return parse_config({
        "providers": [
            {"name": "sim-api", "kind": "api", "type": "simulated"},
            {"name": "sim-poll", "kind": "poll", "type": "simulated"},
            {"name": "rh", "kind": "poll", "type": "runninghub", "base_url": "http://127.0.0.1:9"},
        ],
        "accounts": [{"name": "acc-a", "site": "chat"}, {"name": "acc-b", "site": "chat"},
                     {"name": "acc-x", "site": "other"}],
        "models": [
            {"name": "reasoner", "kind": "web", "site": "chat"},
            {"name": "writer", "kind": "api", "provider": "sim-api"},
            {"name": "video", "kind": "poll", "provider": "sim-poll"},
            {"name": "rh-flow", "kind": "poll", "provider": "rh", "workflow_id": "1",
             "prompt_node_id": "6"},
        ],
    })


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


# --- formats and encodings ---------------------------------------------------------------

def test_utf8_csv_builds_tasks_with_routes_and_all_columns(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "batch.csv",
                 'task_id,model,prompt,account,system_prompt,params,priority\n'
                 't1,reasoner,"Line one\nline two",acc-a,,,5\n'
                 't2,writer,写一个标题,,Be brief,"{""temperature"": 0.2}",\n'
                 't3,video,,,,,-1\n')
    report = read_task_file(path, config)
    assert report.format == "csv" and report.errors == [] and report.total_rows == 3
    web, api, poll = report.tasks
    assert (web.task_id, web.model_kind, web.route, web.account, web.priority) == \
        ("t1", "web", "web:chat", "acc-a", 5)
    assert web.prompt == "Line one\nline two"
    assert (api.route, api.prompt, api.system_prompt, api.params, api.priority) == \
        ("api:sim-api", "写一个标题", "Be brief", {"temperature": 0.2}, 0)
    assert (poll.route, poll.prompt, poll.priority) == ("poll:sim-poll", "", -1)


def test_gb18030_csv_as_excel_saves_it(tmp_path: Path, config: AppConfig) -> None:
    rows = ["task_id,model,prompt", "cn-1,writer,为新品发布会写三条微博文案",
            'cn-2,writer,"短视频脚本：开头三秒\n要抓人眼球"', "cn-3,writer,𠀀 罕见字也要能读"]
    data = ("\r\n".join(rows) + "\r\n").encode("gb18030")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")  # the test file really is not UTF-8
    report = read_task_file(write(tmp_path / "excel.csv", data), config)
    assert report.errors == []
    assert [t.prompt for t in report.tasks] == ["为新品发布会写三条微博文案", "短视频脚本：开头三秒\n要抓人眼球",
                                                "𠀀 罕见字也要能读"]


def test_utf8_bom_csv_header_is_recognised(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "bom.csv", "\ufeffModel , PROMPT\r\nwriter,标题党\r\n".encode("utf-8"))
    report = read_task_file(path, config)
    assert report.errors == [] and report.warnings == []
    assert [(t.model, t.prompt) for t in report.tasks] == [("writer", "标题党")]


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_semicolon_and_tab_csv(tmp_path: Path, config: AppConfig, delimiter: str) -> None:
    text = delimiter.join(["model", "prompt", "priority"]) + "\n"
    text += delimiter.join(["writer", '"Hello, world; again"', "2"]) + "\n"
    report = read_task_file(write(tmp_path / "semi.csv", text), config)
    assert [(t.prompt, t.priority) for t in report.tasks] == [("Hello, world; again", 2)]


def test_utf16_tab_text_as_excel_unicode_text_saves_it(tmp_path: Path, config: AppConfig) -> None:
    data = "model\tprompt\r\nwriter\t直播预告文案\r\n".encode("utf-16")
    report = read_task_file(write(tmp_path / "unicode.csv", data), config)
    assert [t.prompt for t in report.tasks] == ["直播预告文案"]


def test_xlsx_first_sheet_with_numeric_cells(tmp_path: Path, config: AppConfig) -> None:
    book = Workbook()
    sheet = book.active
    sheet.title = "tasks"
    sheet.append(["Task_ID", "Model", "Prompt", "Priority", "Notes"])
    sheet.append([101, "writer", "产品卖点提炼", 3, "ignored"])
    sheet.append([None, None, None, None, None])
    sheet.append(["x-2", "reasoner", "Long\nanswer", 7.0, None])
    book.create_sheet("other").append(["model", "prompt"])
    path = tmp_path / "book.xlsx"
    book.save(path)

    report = read_task_file(path, config)
    assert report.format == "xlsx" and report.errors == [] and report.total_rows == 2
    assert [(t.task_id, t.model, t.prompt, t.priority) for t in report.tasks] == \
        [("101", "writer", "产品卖点提炼", 3), ("x-2", "reasoner", "Long\nanswer", 7)]
    assert [str(w) for w in report.warnings] == [
        "ignored unknown column(s): notes (known: model, prompt, task_id, account, system_prompt, "
        "params, priority, not_before, models)"]


def test_xlsx_bad_row_numbers_are_spreadsheet_rows(tmp_path: Path, config: AppConfig) -> None:
    book = Workbook()
    sheet = book.active
    sheet.append(["model", "prompt"])
    sheet.append(["writer", "ok"])
    sheet.append(["nope", "bad"])
    path = tmp_path / "book.xlsx"
    book.save(path)
    report = read_task_file(path, config)
    assert [e.row for e in report.errors] == [3]


def test_json_list_of_objects_with_params_object(tmp_path: Path, config: AppConfig) -> None:
    items = [{"model": "writer", "prompt": "a", "params": {"n": 2}, "priority": "4", "task_id": 9},
             {"model": "writer", "prompt": "b", "params": '{"size": "1024x1024"}'},
             "not an object",
             {"prompt": "c"}]
    path = write(tmp_path / "tasks.json", json.dumps(items, ensure_ascii=False))
    report = read_task_file(path, config, default_model="reasoner")
    assert report.format == "json" and report.total_rows == 4
    assert [(t.model, t.params, t.priority, t.task_id) for t in report.tasks] == [
        ("writer", {"n": 2}, 4, "9"), ("writer", {"size": "1024x1024"}, 0, None),
        ("reasoner", {}, 0, None)]
    assert report.errors == [RowError(3, "item is not a JSON object")]


def test_jsonl_skips_blank_lines_and_reports_line_numbers(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "tasks.jsonl",
                 '{"model": "writer", "prompt": "one"}\n\n'
                 '{"model": "writer", "prompt": "two", "params": [1]}\n'
                 '{"model": "writer", "prompt": \n'
                 '{"MODEL": "writer", "Prompt": "four", "extra": 1}\n')
    report = read_task_file(path, config)
    assert [t.prompt for t in report.tasks] == ["one", "four"]
    assert [(e.row, e.reason.split(" (")[0]) for e in report.errors] == [
        (3, "params is not a JSON object"), (4, "not valid JSON")]
    assert len(report.warnings) == 1 and "extra" in str(report.warnings[0])


def test_txt_uses_default_model_and_line_numbers(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "prompts.txt", "a red fox\n\n  a blue whale  \n" + "x" * 100_001 + "\n")
    report = read_task_file(path, config, default_model="writer")
    assert report.format == "txt" and report.total_rows == 3
    assert [(t.model, t.route, t.prompt) for t in report.tasks] == \
        [("writer", "api:sim-api", "a red fox"), ("writer", "api:sim-api", "a blue whale")]
    assert [e.row for e in report.errors] == [4]
    assert "100,001 characters" in report.errors[0].reason


def test_csv_empty_model_cell_falls_back_to_default(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "mixed.csv", "model,prompt\n,uses default\nreasoner,explicit\n")
    report = read_task_file(path, config, default_model="writer")
    assert [t.model for t in report.tasks] == ["writer", "reasoner"]


# --- bad rows ------------------------------------------------------------------------------

def test_bad_rows_are_reported_with_row_and_reason_good_rows_import(
        tmp_path: Path, config: AppConfig) -> None:
    long_id = "i" * 65
    path = write(tmp_path / "bad.csv", "\n".join([
        "task_id,model,prompt,account,params,priority",  # row 1
        "ok-1,writer,fine,,,",                             # row 2
        "b-1,gpt-9,hello,,,",                              # row 3 unknown model
        "b-2,reasoner,,,,",                                # row 4 missing prompt
        'b-3,writer,hi,,"[1, 2]",',                        # row 5 params not an object
        "b-4,writer,hi,,,high",                            # row 6 priority not an integer
        "b-5,reasoner,hi,nobody,,",                        # row 7 account not configured
        "b-6,reasoner,hi,acc-x,,",                         # row 8 account of another site
        "b-7,writer,hi,acc-a,,",                           # row 9 account on an api model
        "ok-1,writer,again,,,",                            # row 10 duplicate id
        f"{long_id},writer,hi,,,",                         # row 11 id too long
        '"ok-2","reasoner","multi\nline",acc-b,"{}",1',    # row 12 (a two-line cell)
        "b-8,rh-flow,,,,",                                 # row 13 workflow maps the prompt
        "b-9,writer,hi,,{oops,",                           # row 14 params not JSON
        "ok-3,video,,,,",                                  # row 15 poll model needs no prompt
    ]) + "\n")
    report = read_task_file(path, config)
    assert [t.task_id for t in report.tasks] == ["ok-1", "ok-2", "ok-3"]
    assert report.total_rows == 14
    errors = {e.row: e.reason for e in report.errors}
    assert sorted(errors) == [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14]
    assert errors[3] == "unknown model 'gpt-9' (known models: reasoner, writer, video, rh-flow)"
    assert errors[4] == "prompt is empty (model 'reasoner' needs one)"
    assert errors[5] == "params is not a JSON object"
    assert errors[6] == "priority 'high' is not an integer"
    assert errors[7].startswith("account 'nobody' is not configured")
    assert "acc-a, acc-b" in errors[7]
    assert errors[8].startswith("account 'acc-x' belongs to site 'other'")
    assert errors[9].startswith("account 'acc-a' given for api model 'writer'")
    assert errors[10] == "duplicate task_id 'ok-1' (first on row 2)"
    assert errors[11] == "task_id is 65 characters long (at most 64)"
    assert errors[13] == "prompt is empty (model 'rh-flow' needs one)"
    assert errors[14] == "params is not valid JSON"
    assert str(report.errors[2]) == "row 5: params is not a JSON object"


def test_a_row_with_several_faults_gets_one_error_naming_all(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "many.csv", "model,prompt,priority,params\nwriter,hi,1.5,3\n")
    report = read_task_file(path, config)
    assert report.tasks == []
    assert report.errors == [RowError(2, "params is not a JSON object; priority '1.5' is not an integer")]


# --- unreadable files -----------------------------------------------------------------------

@pytest.mark.parametrize(("name", "content", "message"), [
    ("missing.csv", None, "file not found"),
    ("empty.csv", "", "the file is empty"),
    ("blank.csv", "\n \n", "the file is empty"),
    ("header-only.csv", "model,prompt\n", "holds no tasks"),
    ("nomodel.csv", "prompt\nhello\n", "no model given"),
    ("binary.csv", b"model,prompt\n\xff\xfe\xff\xff,x\n", "not readable as text"),
    ("nul.csv", "model,prompt\nwriter,a\0b\n", "not readable as text"),
    ("utf16.csv", "model,prompt\nwriter,x\n".encode("utf-16-le"), "not readable as text"),
    ("unclosed.csv", 'model,prompt\nwriter,"never closed\n', "not a valid CSV file (line 2: unexpected end of data)"),
    ("broken.xlsx", b"PK\x03\x04 this is not a workbook", "not a readable XLSX workbook"),
    ("text.xlsx", "model,prompt\n", "not a readable XLSX workbook"),
    ("object.json", '{"model": "writer", "prompt": "x"}', "JSON must be a list of objects"),
    ("strings.json", '["a", "b"]', "JSON must be a list of objects"),
    ("empty-list.json", "[]", "holds no tasks"),
    ("broken.json", '[{"model": ', "not valid JSON"),
    ("deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("garbage.jsonl", "hello\nworld\n", "JSONL must hold one JSON object per line"),
    ("old.xls", "x", "save it as .xlsx"),
    ("tasks.docx", "x", "unsupported file type '.docx'"),
    ("prompts.txt", "a prompt\n", "name the model"),
])
def test_unreadable_file_raises_naming_the_file(
        tmp_path: Path, config: AppConfig, name: str, content: str | bytes | None, message: str) -> None:
    path = tmp_path / name
    if content is not None:
        write(path, content)
    with pytest.raises(ImportFileError, match=re.escape(message)) as caught:
        read_task_file(path, config)
    assert str(path) in str(caught.value)


def test_unknown_default_model_is_a_file_error(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "p.txt", "hello\n")
    with pytest.raises(ImportFileError, match="unknown model 'ghost'"):
        read_task_file(path, config, default_model="ghost")


def test_a_mistyped_model_names_the_model_it_likely_meant(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "t.csv", "model,prompt\nwritr,hello\nzzz,hello\n")
    report = read_task_file(path, config)
    assert [str(e) for e in report.errors] == [
        "row 2: unknown model 'writr'; did you mean \"writer\"? (known models: reasoner, writer, video, rh-flow)",
        "row 3: unknown model 'zzz' (known models: reasoner, writer, video, rh-flow)"]
    in_chinese = render(report.errors[0].text, "zh_CN")
    assert in_chinese.startswith("第 2 行：未知模型 'writr'；是不是想写 \"writer\"？（已知模型：")
    with pytest.raises(ImportFileError, match='unknown model \'vidoe\'; did you mean "video"'):
        read_task_file(path, config, default_model="vidoe")


def test_duplicate_header_column_is_a_file_error(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "dup.csv", "model,prompt,Prompt\nwriter,a,b\n")
    with pytest.raises(ImportFileError, match="column 'prompt' appears more than once"):
        read_task_file(path, config)


# --- enqueue and batch ids -----------------------------------------------------------------

def test_reimport_through_store_never_duplicates(tmp_path: Path, config: AppConfig, store: Store) -> None:
    path = write(tmp_path / "batch.csv", "task_id,model,prompt\nr-1,writer,a\nr-2,reasoner,b\n")
    first = read_task_file(path, config)
    assert store.enqueue(new_batch_id(path), first.tasks) == (["r-1", "r-2"], [])
    write(path, "task_id,model,prompt\nr-1,writer,a\nr-2,reasoner,b\nr-3,writer,c\n")
    second = read_task_file(path, config)
    assert store.enqueue(new_batch_id(path), second.tasks) == (["r-3"], ["r-1", "r-2"])
    stored = store.get("r-2")
    assert stored is not None and (stored.model_kind, stored.route) == ("web", "web:chat")


def test_batch_id_is_readable_and_unique() -> None:
    ids = {new_batch_id(Path("/tmp/新品 batch (1).csv")) for _ in range(50)}
    assert len(ids) == 50
    for batch_id in ids:
        assert re.fullmatch(r"新品-batch-1-\d{8}T\d{6}Z-[0-9a-f]{8}", batch_id)


# --- shipped examples ----------------------------------------------------------------------

@pytest.fixture
def demo_config() -> AppConfig:
    return parse_config({
        "providers": [{"name": "p-api", "kind": "api", "type": "simulated"},
                      {"name": "p-poll", "kind": "poll", "type": "simulated"},
                      {"name": "p-img", "kind": "api", "type": "simulated"}],
        "accounts": [{"name": "demo-a", "site": "demo-chat"}, {"name": "demo-b", "site": "demo-chat"}],
        "models": [{"name": "demo-reasoner", "kind": "web", "site": "demo-chat"},
                   {"name": "demo-writer", "kind": "api", "provider": "p-api"},
                   {"name": "demo-video", "kind": "poll", "provider": "p-poll"},
                   {"name": "demo-sora", "kind": "poll", "provider": "p-poll"},
                   {"name": "demo-illustrator", "kind": "api", "provider": "p-img"}],
    })


def test_seed_batch_has_40_interleaved_tasks(demo_config: AppConfig) -> None:
    report = read_task_file(EXAMPLES / "seed-batch.csv", demo_config)
    assert report.errors == [] and report.warnings == []
    kinds = [t.model_kind for t in report.tasks]
    assert (len(kinds), kinds.count("web"), kinds.count("api")) == (40, 12, 28)
    assert [t.task_id for t in report.tasks] == [f"seed-{i:03d}" for i in range(1, 41)]
    assert kinds[:12] != ["web"] * 12 and any("\n" in t.prompt for t in report.tasks)
    assert not (EXAMPLES / "seed-batch.csv").read_bytes().startswith(b"\xef\xbb\xbf")


def test_other_examples_import(demo_config: AppConfig) -> None:
    video = read_task_file(EXAMPLES / "video-batch.csv", demo_config)
    assert (len(video.tasks), video.errors) == (8, [])
    assert {t.model for t in video.tasks} == {"demo-video"}
    images = read_task_file(EXAMPLES / "images.txt", demo_config, default_model="demo-illustrator")
    assert (len(images.tasks), images.errors) == (5, [])
    bad = read_task_file(EXAMPLES / "bad-rows.csv", demo_config)
    assert (len(bad.tasks), len(bad.errors)) == (2, 3)
    assert len({e.reason.split(" ")[0] for e in bad.errors}) == 3  # three different kinds of fault
    # the demo's failure markers (docs/desktop-app.md): a newcomer's way to see a failure
    failures = read_task_file(EXAMPLES / "failures.csv", demo_config)
    assert (len(failures.tasks), failures.errors) == (4, [])
    assert sum(("[error]" in t.prompt) or ("#fail" in t.prompt) for t in failures.tasks) == 3


# --- hardening (issue 9 item 8) ------------------------------------------------------------

def test_a_cell_longer_than_the_csv_field_limit_is_that_rows_error(tmp_path: Path, config: AppConfig) -> None:
    import csv
    huge = "长" * (csv.field_size_limit() + 10)  # over the csv module's default 128 KiB field limit
    path = write(tmp_path / "long.csv", f'model,prompt\nwriter,short\nwriter,"{huge}"\nwriter,also short\n')
    report = read_task_file(path, config)
    assert [t.prompt for t in report.tasks] == ["short", "also short"]
    assert report.errors == [RowError(3, f"prompt has {len(huge):,} characters (at most 100,000)")]


def test_json_values_of_the_wrong_type_are_row_errors_not_strings(tmp_path: Path, config: AppConfig) -> None:
    items = [{"model": "writer", "prompt": ["a", "list"]},
             {"model": "writer", "prompt": "fine", "task_id": {"id": 1}},
             {"model": ["writer"], "prompt": "x"},
             {"model": "writer", "prompt": True},
             {"model": "writer", "prompt": "ok", "task_id": 7, "system_prompt": "be brief"}]
    path = write(tmp_path / "t.jsonl", "\n".join(json.dumps(item) for item in items) + "\n")
    report = read_task_file(path, config)
    assert [(t.task_id, t.prompt) for t in report.tasks] == [("7", "ok")]
    assert {e.row: e.reason for e in report.errors} == {
        1: "prompt must be text, not a list", 2: "task_id must be text, not an object",
        3: "model must be text, not a list", 4: "prompt must be text, not true/false"}


LEGACY = [  # (codec, text): what Excel saves on a Japanese, Taiwanese and Korean Windows
    ("shift_jis", "task_id,model,prompt\njp-1,writer,新製品発表会のためのツイートを三つ書いてください\n"
                  "jp-2,writer,東京の夜景を撮影した動画の説明文を作成する\n"),
    ("big5", "task_id,model,prompt\ntw-1,writer,為新品發表會寫三條微博文案，要求活潑有趣\n"
             "tw-2,writer,臺灣的夜市小吃非常有名，請寫一篇介紹文章\n"),
    ("euc_kr", "task_id,model,prompt\nkr-1,writer,신제품 발표회를 위한 트윗 세 개를 작성해 주세요\n"
               "kr-2,writer,서울의 야경을 촬영한 동영상 설명\n"),
]


@pytest.mark.parametrize(("codec", "text"), LEGACY)
def test_legacy_cjk_files_are_detected_never_read_as_gb18030(tmp_path: Path, config: AppConfig,
                                                             codec: str, text: str) -> None:
    data = text.encode(codec)
    data.decode("gb18030")  # the trap: these bytes are "valid" GB18030 mojibake
    report = read_task_file(write(tmp_path / "legacy.csv", data), config)
    expected = [line.split(",")[2] for line in text.splitlines()[1:]]
    assert [t.prompt for t in report.tasks] == expected
    assert len(report.warnings) == 1 and "(detected); name another with --encoding" in str(report.warnings[0])


def test_an_undecidable_legacy_file_is_refused_and_encoding_reads_it(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "short.csv", "model,prompt\nwriter,안녕하세요\n".encode("euc_kr"))
    with pytest.raises(ImportFileError, match="not UTF-8, and could be GB18030 or EUC-KR; name the encoding "
                                              "with --encoding"):
        read_task_file(path, config)
    assert [t.prompt for t in read_task_file(path, config, encoding="euc_kr").tasks] == ["안녕하세요"]
    kanji = write(tmp_path / "kanji.csv", "model,prompt\nwriter,東京都新宿区\n".encode("shift_jis"))
    with pytest.raises(ImportFileError, match="not clearly GB18030, Shift-JIS, Big5 or EUC-KR"):
        read_task_file(kanji, config)
    assert read_task_file(kanji, config, encoding="shift_jis").tasks[0].prompt == "東京都新宿区"


def test_a_named_encoding_that_does_not_fit_says_where(tmp_path: Path, config: AppConfig) -> None:
    path = write(tmp_path / "gb.csv", "model,prompt\nwriter,为新品发布会写文案\n".encode("gb18030"))
    with pytest.raises(ImportFileError, match=r"not valid utf-8 \(byte offset 22: invalid continuation byte\)"):
        read_task_file(path, config, encoding="utf-8")
    with pytest.raises(ImportFileError, match="unknown encoding 'klingon'"):
        read_task_file(path, config, encoding="klingon")
    assert read_task_file(path, config, encoding="GB18030").tasks[0].prompt == "为新品发布会写文案"


def test_a_utf8_bom_on_bytes_that_are_not_utf8_says_so(tmp_path: Path, config: AppConfig) -> None:
    data = b"\xef\xbb\xbf" + "model,prompt\nwriter,为新品发布会写文案\n".encode("gb18030")
    path = write(tmp_path / "bom.csv", data)
    with pytest.raises(ImportFileError, match="starts with a UTF-8 byte-order mark but is not UTF-8 "
                                              r"\(invalid byte at offset 22 after the mark\)"):
        read_task_file(path, config)
    assert read_task_file(path, config, encoding="gb18030").tasks[0].prompt == "为新品发布会写文案"


def test_xlsx_formula_without_a_cached_value_is_a_row_error(tmp_path: Path, config: AppConfig) -> None:
    book = Workbook()
    sheet = book.active
    sheet.append(["model", "prompt", "notes"])
    sheet.append(["writer", "plain", "=1+1"])  # a formula in an ignored column does not matter
    sheet.append(["writer", '="make "&"a title"', None])
    sheet.append(["writer", "also plain", None])
    path = tmp_path / "formulas.xlsx"
    book.save(path)  # openpyxl saves formulas without results, as scripts and web apps do
    report = read_task_file(path, config)
    assert [t.prompt for t in report.tasks] == ["plain", "also plain"]
    assert [e.row for e in report.errors] == [3]
    assert report.errors[0].reason.startswith('column prompt: holds the formula ="make "&"a title" with no saved '
                                              "value")
