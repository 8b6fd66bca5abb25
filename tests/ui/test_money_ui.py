"""Cost where the operator looks in the window: the Cost column (sortable, actual or estimate),
the detail pane, the batch panel, the import preview's estimate, and the budget's reasons --
in English and in Chinese, amounts as each locale writes them."""

from __future__ import annotations

import json
import tomllib
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt

from mediaassist.core.budget import BatchEstimate, Budgeter, ModelEstimate, batch_pause_name
from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.lane_api import TaskResult
from mediaassist.core.lanes import ClaimRequest
from mediaassist.core.messages import msg
from mediaassist.core.money import SOURCE_TABLE, SOURCE_TEXTS, Money, Produced, Totals
from mediaassist.core.progress import Estimate
from mediaassist.core.queries import Queries, TaskFilter, TaskOrder
from mediaassist.core.store import NewTask, Store
from mediaassist.ui.core_texts import translated
from mediaassist.ui.disk_thumbnails import DiskThumbnails
from mediaassist.ui.gallery import GalleryView
from mediaassist.ui.import_dialog import estimate_html
from mediaassist.ui.panels import BatchList
from mediaassist.ui.task_model import COL, COLUMNS, TaskTableModel
from tests.media_helpers import write_png
from tests.ui.ui_helpers import table_model

pytestmark = pytest.mark.usefixtures("qapp")

CONFIG = """
[budget]
per_batch = { CNY = 1.3 }

[[providers]]
name = "sim-api"
kind = "api"
type = "simulated"

[[models]]
name = "writer"
kind = "api"
provider = "sim-api"
price = { currency = "CNY", per_task = 0.4 }

[[models]]
name = "painter"
kind = "api"
provider = "sim-api"
price = { currency = "USD", per_image = 1234.5 }
"""


@pytest.fixture
def config() -> AppConfig:
    return parse_config(tomllib.loads(CONFIG))


def _spent_batch(store: Store, config: AppConfig) -> None:
    """Through the real claim, reservation and settlement: two writer tasks cost ¥0.40 each and a
    painter task $1,234.50; a third writer task runs (¥0.40 reserved); the fourth does not fit
    the batch's ¥1.30 and waits."""
    writers = [NewTask(model="writer", model_kind="api", route="api:sim-api", prompt=f"w{i}", task_id=f"w{i}")
               for i in range(4)]
    painter = NewTask(model="painter", model_kind="api", route="api:sim-api", prompt="p", task_id="p0")
    store.enqueue("b1", [*writers[:2], painter, *writers[2:]])
    budgeter = Budgeter(store, config)
    claimed = budgeter.claim(ClaimRequest(lane="api:sim-api", route="api:sim-api", count=5), "me", None)
    assert [t.task_id for t in claimed.tasks] == ["w0", "w1", "p0", "w2"]
    stops = {batch: str(why) for batch, why in claimed.batch_stops.items()}
    assert stops == {"b1": "budget: ¥1.20 of ¥1.30 spent on batch b1"}
    store.pause_lane(batch_pause_name("b1"), claimed.batch_stops["b1"])
    for task in claimed.tasks[:3]:
        store.finish_success(task, "done", [])
        produced = Produced(images=1) if task.model == "painter" else None
        budgeter.settle(task, TaskResult(text="done", produced=produced))


def _cost_cells(model: TaskTableModel) -> dict[str, str]:
    return {model.feed.task_id_at(row): model.index(row, COL["cost"]).data() for row in range(model.rowCount())}


def test_the_cost_column_shows_actuals_and_estimates_and_sorts(store: Store, config: AppConfig) -> None:
    _spent_batch(store, config)
    model = table_model(store)
    assert _cost_cells(model) == {"w0": "¥0.40", "w1": "¥0.40", "w2": "≈ ¥0.40", "w3": "", "p0": "$1,234.50"}
    tooltip = model.index(0, COL["cost"]).data(Qt.ItemDataRole.ToolTipRole)
    assert "Cost: " in tooltip and "(price table)" in tooltip and "Estimated: " in tooltip
    assert COLUMNS[COL["cost"]].sort_key == "cost"
    by_cost = Queries(store).task_ids(TaskFilter(), TaskOrder("cost", descending=True))
    assert by_cost == ["p0", "w1", "w0", "w3", "w2"]  # the largest charge first, then none (newest first)


def test_amounts_and_reasons_in_chinese(store: Store, config: AppConfig, chinese: None) -> None:
    _spent_batch(store, config)
    model = table_model(store)
    assert _cost_cells(model)["p0"] == "US$1,234.50"
    assert model.headerData(COL["cost"], Qt.Orientation.Horizontal) == "费用"
    assert translated(msg("budget: {spent} of {cap} spent today", spent="¥48.20", cap="¥50.00")) == \
        "预算：今日已花费 ¥48.20，上限 ¥50.00"
    assert translated(store.paused_lane_reasons()[batch_pause_name("b1")]) == "预算：批次 b1 已花费 ¥1.20，上限 ¥1.30"
    assert translated(msg("balance: {left} left on {provider}, the next task needs about {needed}", left="6 coins",
                          provider="rh", needed="17 coins")) == "余额：rh 仅剩 6 coins，下一个任务约需 17 coins"
    assert translated(msg("cost {cost} ({source})", cost="¥0.40", source=SOURCE_TEXTS[SOURCE_TABLE])) == \
        "费用 ¥0.40（价格表）"


def test_the_batch_panel_shows_spent_estimated_budget_left_and_the_stop(store: Store, config: AppConfig,
                                                                        chinese: None) -> None:
    _spent_batch(store, config)
    panel = BatchList(per_batch=config.budget.per_batch)
    panel.show_snapshot(Queries(store).snapshot(), lambda _batch: (Estimate(seconds=60.0), 60.0),
                        store.paused_lane_reasons())
    label = panel._rows[0].detail.text()
    # spent counts what is reserved for the running task too: the budget it holds
    assert "已花费 ¥1.20, US$1,234.50，估算 ¥1.20, US$1,234.50 · 预算剩余 ¥0.10" in label
    assert "预算：批次 b1 已花费 ¥1.20，上限 ¥1.30" in label


def test_the_import_preview_states_the_estimate(chinese: None) -> None:
    estimate = BatchEstimate([ModelEstimate("writer", 3, 0, Totals([Money(Decimal("1.2"), "CNY")]), "price table"),
                              ModelEstimate("web", 2, 2, Totals(), "no price table")],
                             Totals([Money(Decimal("1.2"), "CNY")]))
    text = estimate_html(estimate)
    assert "估算费用：约 ¥1.20" in text
    assert "writer：3 个任务，约 ¥1.20" in text and "web：2 个任务 · 2 个无价格" in text


@pytest.mark.asyncio
async def test_the_gallery_caption_tells_what_an_output_cost(store: Store, config: AppConfig, tmp_path) -> None:
    _spent_batch(store, config)
    picture = write_png(tmp_path / "out" / "image-1.png")
    result = store.result("w0")
    result.files = json.dumps([str(picture)])
    result.save()
    cache = DiskThumbnails(tmp_path / "thumbs")
    try:
        gallery = GalleryView(cache, lambda: ["w0", "w2"])
        await gallery.reload()
        # the caption (row, model, the prompt's start), then what the output cost
        assert [gallery.model.index(row).data() for row in range(gallery.model.rowCount())] == \
            ["w0 · writer · w0 · ¥0.40"]  # the task (no row: enqueued directly), its model and prompt, its cost
    finally:
        gallery.close_media()
        cache.close()
