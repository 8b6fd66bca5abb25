"""Shared by the tests that run real ``mediaassist run`` processes against the demo OpenAI and
RunningHub servers (tests/integration/test_multi_process.py, test_process_edges.py): one config
of the two lanes, and a task file of both kinds."""

from __future__ import annotations

from pathlib import Path

from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from mediaassist.demo_servers.runninghub_server import RunningHubDemoServer
from tests.helpers import write_config, write_csv

# An API lane (model "writer" on provider "acme") and a poll lane (model "video" on provider "rh"),
# each with its limit; the keys come from the environment (ACME_API_KEY, RH_API_KEY).
DEMO_LANES_CONFIG = """
[[providers]]
name = "acme"
kind = "api"
type = "openai"
base_url = "{openai}"
api_key_env = "ACME_API_KEY"
concurrency = {api_limit}

[[providers]]
name = "rh"
kind = "poll"
type = "runninghub"
base_url = "{runninghub}"
api_key_env = "RH_API_KEY"
max_polling_tasks = {poll_limit}

[[models]]
name = "writer"
kind = "api"
provider = "acme"
endpoint = "chat"

[[models]]
name = "video"
kind = "poll"
provider = "rh"
workflow_id = "1904136902449209346"
prompt_node_id = "6"
prompt_field_name = "text"
"""


def write_demo_lanes_config(folder: Path, openai: DemoOpenAIServer, runninghub: RunningHubDemoServer,
                            api_limit: int, poll_limit: int) -> Path:
    """``folder/config.toml``: the two lanes on these demo servers, with these limits."""
    return write_config(folder / "config.toml", DEMO_LANES_CONFIG.format(
        openai=openai.base_url, runninghub=runninghub.url, api_limit=api_limit, poll_limit=poll_limit))


def write_mixed_task_file(folder: Path, name: str, api: int, poll: int) -> Path:
    """``folder/NAME.csv``: ``api`` writer tasks then ``poll`` video tasks, each prompt holding
    ``NAME-`` (so that its batch can be found by the file's stem)."""
    rows = ([{"model": "writer", "prompt": f"ad copy {name}-{n}"} for n in range(api)]
            + [{"model": "video", "prompt": f"video {name}-{n}"} for n in range(poll)])
    return write_csv(folder / f"{name}.csv", rows)
