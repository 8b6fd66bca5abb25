"""The queue panels built for 1366×768 (issue 27 item 3): with 2 web accounts, 1 API and 3 poll
lanes every lane row shows whole without scrolling (name, gauge, counts, button), the failed
count is never the elided part, three batches show, and the Prompt column gets the room that
empty Result and Error columns do not need (and shares it with a Result shown). In English and
Chinese, by geometry (each language in its own process: the screen is fixed when Qt starts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.ui_helpers import probe_on_a_laptop_screen


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_every_lane_and_its_failed_count_show_at_1366x768(tmp_path: Path, language: str) -> None:
    report = probe_on_a_laptop_screen("panels_probe", language, tmp_path)
    assert report.get("problems") == [], report
    assert report["maximized"] and report["lanes"] == 6 and report["batches_seen"] >= 3
    # pending rows: Result and Error as narrow as their titles, the Prompt wider than both together
    assert report["result_px"] < 100 and report["error_px"] < 100, report
    assert report["prompt_px"] >= 200 and report["prompt_px"] > report["result_px"] + report["error_px"], report
    # finished rows: the Result shares the room with the Prompt (its 200 px left the Prompt 80)
    assert report["done_prompt_px"] >= 120 and report["done_prompt_px"] >= report["done_result_px"] - 1, report
