"""How soon a change made through one `darkroom serve` process reaches another's change feed.

Usage: change_delay.py PORT_A PORT_B TOKEN PHOTO...

Follows B's change feed (server-sent events) on a thread; uploads each PHOTO (distinct
content) through A, one at a time, after a random pause of up to 300 ms; for each, the delay from A's answer (the asset is
catalogued) to B's event naming it, negative when B's event came first. Prints the delays'
median, p99 and maximum in ms.
"""
import http.client
import json
import os
import random
import sys
import threading
import time

port_a, port_b, token = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
photos = sys.argv[4:]
seen = {}
lock = threading.Condition()


def follow():
    connection = http.client.HTTPConnection("127.0.0.1", port_b)
    connection.request("GET", "/api/changes", headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    while True:
        line = response.readline()
        if not line:
            return
        if line.startswith(b"data:"):
            change = json.loads(line[5:])
            with lock:
                seen.setdefault(change["id"], time.monotonic())
                lock.notify_all()


threading.Thread(target=follow, daemon=True).start()
time.sleep(0.5)  # the feed is open: it starts at the latest change
delays = []
upload = http.client.HTTPConnection("127.0.0.1", port_a)
random.seed(32)
for photo in photos:
    # A pause of its own before each upload: uploads do not fall into step with B's polls.
    time.sleep(random.uniform(0, 0.3))
    body = open(photo, "rb").read()
    upload.request(
        "POST", "/api/uploads?name=" + os.path.basename(photo), body=body,
        headers={"Authorization": f"Bearer {token}"})
    response = upload.getresponse()
    answer = json.loads(response.read())
    answered = time.monotonic()
    if response.status != 201:
        sys.exit(f"upload of {photo}: {response.status} {answer}")
    asset = answer["asset"]["id"]
    with lock:
        if not lock.wait_for(lambda: asset in seen, timeout=10):
            sys.exit(f"{asset} never reached B's change feed")
        # Negative when B's feed had it before A's answer reached this client.
        delays.append((seen[asset] - answered) * 1000)
delays.sort()
p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
early = sum(1 for delay in delays if delay < 0)
print(f"{len(delays)} uploads through A, each in B's change feed after: median "
      f"{delays[len(delays) // 2]:.1f} ms, p99 {p99:.1f} ms, max {delays[-1]:.1f} ms "
      f"(before A's answer in {early}: negative)")
