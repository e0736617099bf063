#!/usr/bin/env python3
"""A receiver of svc webhooks using only Python's standard library.

It applies the seven receiver rules of the svc-webhook-v1 suite before acting on anything:

1. refuse a missing or unsupported X-SVC-Signature-Suite;
2. build the signed string from the exact raw body: "{X-SVC-Delivery}.{X-SVC-Timestamp}.{body}";
3. HMAC-SHA256 it with the subscription secret (its UTF-8 bytes, "whsec_" prefix included);
4. compare with every "sha256=<hex>" value of X-SVC-Signature-256 in constant time;
5. refuse timestamps older than min(X-SVC-Signature-Max-Age, MAX_AGE) or from the future;
6. remember accepted X-SVC-Delivery ids for the window; a repeat is acknowledged, not re-done;
7. parse the JSON body only after all of the above.

Usage:
    SVC_WEBHOOK_SECRET=whsec_... PORT=8000 OUT=deliveries.jsonl python3 webhook_receiver.py

On start it prints one JSON line {"url": "http://127.0.0.1:PORT/hook"}; every accepted
delivery is appended to OUT (or printed) as one JSON line {"delivery", "event", "body"}.
"""

import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SUITE = "svc-webhook-v1"
SECRET = os.environ["SVC_WEBHOOK_SECRET"].encode("utf-8")
MAX_AGE = int(os.environ.get("MAX_AGE", "300"))  # the receiver's own ceiling, in seconds
CLOCK_SKEW = 60
MAX_BODY = 1024 * 1024
OUT = os.environ.get("OUT")

_accepted = {}  # delivery id -> until (unix seconds)
_lock = threading.Lock()


class Refused(Exception):
    """A permanent validation failure: answer 400."""


def verify(headers, body, now):
    """Rules 1 to 5; returns (delivery id, event type, window)."""
    if headers.get("X-SVC-Signature-Suite") != SUITE:
        raise Refused("missing or unsupported signature suite")
    delivery = headers.get("X-SVC-Delivery")
    timestamp = headers.get("X-SVC-Timestamp")
    signatures = headers.get("X-SVC-Signature-256")
    if not delivery or not timestamp or not signatures:
        raise Refused("missing X-SVC-Delivery, X-SVC-Timestamp or X-SVC-Signature-256")
    signed = delivery.encode("utf-8") + b"." + timestamp.encode("utf-8") + b"." + body
    expected = "sha256=" + hmac.new(SECRET, signed, hashlib.sha256).hexdigest()
    # compare_digest is constant-time; every value is checked (two during a secret rotation).
    if not any(hmac.compare_digest(expected, value) for value in signatures.split(" ")):
        raise Refused("signature mismatch")
    try:
        signed_at = int(timestamp)
    except ValueError:
        raise Refused("X-SVC-Timestamp is not a Unix time") from None
    try:
        sender_window = int(headers.get("X-SVC-Signature-Max-Age", MAX_AGE))
    except ValueError:
        sender_window = MAX_AGE
    window = min(sender_window, MAX_AGE)
    age = now - signed_at
    if age > window:
        raise Refused("stale delivery")
    if age < -CLOCK_SKEW:
        raise Refused("timestamp in the future")
    return delivery, headers.get("X-SVC-Event"), window


def record(line):
    text = json.dumps(line, separators=(",", ":"))
    if OUT:
        with open(OUT, "a", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        print(text, flush=True)


class Receiver(BaseHTTPRequestHandler):
    def answer(self, status, message):
        payload = json.dumps({"status": message}).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        self.answer(405, "POST only")

    def do_POST(self):
        if self.path != "/hook":
            return self.answer(404, "not found")
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            return self.answer(415, "application/json only")
        length = int(self.headers.get("Content-Length", "0") or 0)
        if length > MAX_BODY:
            return self.answer(413, "body too large")
        body = self.rfile.read(length)  # the raw bytes: never re-serialise before verifying
        now = int(time.time())
        try:
            delivery, event, window = verify(self.headers, body, now)
        except Refused as refused:
            return self.answer(400, str(refused))
        with _lock:
            for seen in [d for d, until in _accepted.items() if until <= now]:
                del _accepted[seen]
            if delivery in _accepted:
                # A duplicate of an accepted delivery: acknowledge, do not act again.
                return self.answer(200, "duplicate")
            # Rule 7: only now is the body parsed and acted on.
            try:
                envelope = json.loads(body)
            except ValueError:
                return self.answer(400, "body is not JSON")
            record({"delivery": delivery, "event": event, "body": envelope})
            _accepted[delivery] = now + window + CLOCK_SKEW
        self.answer(200, "accepted")

    def log_message(self, *args):
        pass  # deliveries are recorded above; request lines would repeat them


def main():
    server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "0"))), Receiver)
    print(json.dumps({"url": "http://127.0.0.1:%d/hook" % server.server_address[1]}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
