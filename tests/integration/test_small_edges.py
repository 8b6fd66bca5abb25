"""The smaller edges of issue 22, each one line for the operator: the demo OpenAI server's 401s as
the real service words them, a directory where the store file belongs, a damaged store in
``status``, NaN/Infinity in a JSON task file, a bad parameter on the simulated provider."""

from __future__ import annotations

import httpx

from mediaassist.demo_servers.openai_server import DemoOpenAIServer

KEY = "sk-abcdef0123456789wjh3"


def test_the_demo_openai_401_masks_the_key_and_names_a_missing_one_as_the_real_service_does() -> None:
    with DemoOpenAIServer(api_key=KEY, models=("writer",)) as server:
        body = {"model": "writer", "messages": [{"role": "user", "content": "hi"}]}
        wrong = httpx.post(f"{server.base_url}/chat/completions", json=body,
                           headers={"Authorization": "Bearer sk-abcXYZ9876543210wjh3"})
        missing = httpx.post(f"{server.base_url}/chat/completions", json=body)
    assert wrong.status_code == 401 and missing.status_code == 401
    error = wrong.json()["error"]
    assert error["message"].startswith("Incorrect API key provided: sk-abc*************wjh3.")
    assert "XYZ9876543210" not in wrong.text and error["code"] == "invalid_api_key"
    assert missing.json()["error"]["message"].startswith("You didn't provide an API key.")
    assert "(none)" not in missing.text
