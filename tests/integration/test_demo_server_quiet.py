"""A client that goes away mid-request (the app quitting) is normal for the demo OpenAI server:
no traceback on the terminal (issue 27 item 9)."""

from __future__ import annotations

import json
import socket
import struct
import time

import pytest

from mediaassist.demo_servers.openai_server import DemoOpenAIServer
from tests.harness import wait_until_sync


def test_a_request_dropped_with_a_reset_prints_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    with DemoOpenAIServer(latency_s=(0.3, 0.3)) as server:
        host, port = server.root_url.removeprefix("http://").split(":")
        body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}).encode()
        request = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        for answered in (False, True):
            client = socket.create_connection((host, int(port)))
            client.sendall(request)
            if answered:  # a keep-alive connection, idle between requests, as a quitting client leaves it
                assert client.recv(65536).startswith(b"HTTP/1.1 200")
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()  # a reset: mid-answer, then between requests
        wait_until_sync(lambda: server.in_flight == 0 and len(server.requests) >= 2, timeout=20,
                        what="the server to finish the dropped requests")
        time.sleep(0.2)  # not an assertion's wait: the handler thread reads the reset after the answer
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err and "BrokenPipeError" not in err, err
