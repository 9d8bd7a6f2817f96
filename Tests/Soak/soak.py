#!/usr/bin/env python3
"""Seeded, model-based soak test for the built `cachelog` binary.

Random steps, several processes at once, a hostile machine (SIGKILL, flipped bytes, deleted
records, damaged state rows and checkpoints, truncated files, a full disk, hostile keys and
numbers), and after every step an oracle written from the format article alone (Python's `lmdb`
and `zlib` reading `data.mdb`) checks what the binary reported against what the log holds.

    /usr/bin/python3 Tests/Soak/soak.py                      # CI: fixed seed, bounded steps
    CACHELOG_SOAK_SEED=7 CACHELOG_SOAK_STEPS=2000 /usr/bin/python3 Tests/Soak/soak.py
    /usr/bin/python3 Tests/Soak/soak.py --binary PATH --seed 7 --steps 300 -v

Every failure prints its seed, run, step and command line; the last line is
`soak: N steps, M checks: P passed, F failed`; the exit status is 0 only when F is 0.
See README.md next to this file.
"""

import argparse
import base64
import datetime
import hashlib
import http.server
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
import urllib.parse
import zlib

try:
    import lmdb
except ImportError:  # pragma: no cover - reported, not hidden
    sys.stderr.write("soak: the Python lmdb module is missing (Tools/setup installs python3-lmdb)\n")
    sys.exit(2)

DEFAULT_SEED = 20261201
DEFAULT_STEPS = 180
DEFAULT_MAX_SECONDS = 200  # a safety cap for the default (CI) run; the steps bound it first
DOCUMENTED_EXIT_CODES = {0, 1, 3, 64}  # `cachelog --help`: 0 ok, 1 failure, 3 no usable data (load, image), 64 usage
PROCESS_TIMEOUT = 40.0  # no cachelog command may take longer than this; the slowest response is 1.5 s
MAX_KEY_BYTES = 511  # LMDB's default maximum key size
CRASH_MARKERS = ("Fatal error", "Program crashed", "Backtrac", "Segmentation fault", "Illegal instruction")

HEADER = struct.Struct(">BBBBdddHII")  # Format.md, "Event records": the first 38 bytes
PUT, DELETE, EXPIRE, RETENTION = 1, 2, 3, 4
KIND_NAMES = {PUT: "put", DELETE: "delete", EXPIRE: "expire", RETENTION: "retention"}
REASONS = {1: "replaced", 2: "explicit", 3: "retrieval-error", 4: "evicted"}
EVICTED = 4
# Format.md, "Event records": the binary writes version 3, whose dates are stamps (seconds since
# 2001); before format 4, version 2 was for what version 1 lacks (a retention record, a delete
# with reason 4) and everything else version 1, with dates in seconds since 1970.
RECORD_VERSIONS = (1, 2, 3)
STAMPED = 3
# Format.md, "Dates": seconds since 1970 of a stamp are the stamp plus this, in f64 arithmetic.
SINCE_1970 = 978307200.0

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)

UNRECORDED_MAX_AGE = 7 * 86400  # state/validate --help: a put that recorded no policy is judged by 7d
SEARCH_MAX_AGE = 30 * 86400  # load --help: the verses contract's max age
# A writer whose --now is before the last recorded event says so on stderr (recorded time never
# goes backward): a warning, not a failure.
CLOCK_WARNING = "is before the last recorded event"
NOT_CACHED = "not cached"  # a save that did not happen says so on stderr (load, image)
NEWER = "a newer cache"  # …and why, when a newer cache was saved during the load


# --------------------------------------------------------------------------------------------
# Small helpers


def iso(seconds):
    """`2026-12-01T10:00:00Z` (milliseconds only when there are some), proleptic Gregorian."""
    total = int(round(seconds * 1000))
    whole, millis = divmod(total, 1000)
    text = (EPOCH + datetime.timedelta(seconds=whole)).strftime("%Y-%m-%dT%H:%M:%S")
    text = text.rjust(19, "0")
    return text + (".%03dZ" % millis if millis else "Z")


def parse_iso(text):
    """Seconds since 1970 of an ISO 8601 date as the binary prints them; None when unparseable."""
    try:
        value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError, TypeError):
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - EPOCH
    return delta.days * 86400 + delta.seconds + delta.microseconds / 1e6


def u64(raw, offset=0):
    return struct.unpack_from(">Q", raw, offset)[0]


def f64_bits(value):
    return struct.pack(">d", value)


def same_json(a, b):
    """Strict JSON equality: booleans are not numbers, numbers compare exactly (int vs float too)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return False


def page_times(metadata):
    """A search put's `page-times` (stamps: seconds since 2001) in seconds since 1970."""
    return [float(x) + SINCE_1970 for x in metadata.get("page-times", "").split()]


def decode_retention_state(raw):
    """Format.md, "Retention": meta `retention` as (zone, applied policy, bytes in use after the
    last pass, the pass under way as (clock, walked through, pressure bound) or None, the last
    report as (start, removed, bytes freed, evicted, finished) or None); clocks counted from 1970."""
    empty = (0, 0, 0, None, None)
    try:
        version, zone, applied, used_after, flags = struct.unpack_from(">BQQQB", raw, 0)
        if version != 1:
            return empty
        at, pass_, report = 26, None, None
        if flags & 1:
            pass_ = stamped_first(struct.unpack_from(">dQQ", raw, at))
            at += 24
        if flags & 2:
            report = stamped_first(struct.unpack_from(">dQQQB", raw, at))
            at += 33
            if raw[at]:
                at += 32
            at += 1
        return (zone, applied, used_after, pass_, report) if at == len(raw) else empty
    except (struct.error, IndexError):
        return empty


def stamped_first(values):
    """A `meta` value whose first field is a stamp, that field counted from 1970."""
    return (values[0] + SINCE_1970,) + tuple(values[1:])


def trusted_timestamp(ts, recorded_at):
    """The moment a cache's age is counted from: its timestamp, or when its put was recorded if
    that is earlier (a timestamp later than its recording cannot be trusted)."""
    return recorded_at if recorded_at < ts else ts


def is_fresh(ts, recorded_at, now, max_age):
    """A cache is fresh at `now` iff trusted <= now < trusted + max age: one stamped in the
    future is never fresh, one exactly max-age old is expired, a timestamp that is not finite
    never is."""
    trusted = trusted_timestamp(ts, recorded_at)
    return math.isfinite(trusted) and trusted <= now < trusted + max_age


def supersedes(live, position):
    """Format.md, "When a put's fetch began": whether the live put `live` (a Rec) is newer, by the
    log's order, than a save whose fetch began when the log's last seq was `position`: its own
    fetch began at or after it (of two that began with nothing appended between them, the first
    to land stays), or, recording none, it landed after it. The cache timestamps play no part."""
    return live.since >= position if live.since is not None else live.seq > position


def batch_start(snap, put):
    """The first seq of the save that wrote `put`: its delete (replaced) just before it, or itself
    (a refresh is a lone put)."""
    prior = snap.events.get(put.seq - 1)
    whole = prior is not None and prior.framing_ok and prior.kind == DELETE and prior.key == put.key and prior.reason == 1
    return put.seq - 1 if whole else put.seq


def problem_lines(err):
    """stderr without the warning that --now is behind the log (which is no failure)."""
    return [line for line in err.splitlines() if CLOCK_WARNING not in line]


def in_range(seconds):
    """Whether the binary prints this date as the harness's iso() does (years 1 to 9999)."""
    return isinstance(seconds, (int, float)) and -6e10 < seconds < 2.5e11


def short(value, limit=160):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def lossy(key_bytes):
    """A key as a String-keyed engine gives it back: bytes that are not UTF-8 become U+FFFD."""
    return key_bytes.decode("utf-8", "replace").encode("utf-8")


def key_args(name):
    """`--key NAME`, or `--key=NAME` for a name that looks like an option."""
    return ["--key=" + name] if name.startswith("-") else ["--key", name]


class DeadPort:
    """A loopback port that refuses every connection until closed: the 'unreachable' remote.
    A socket holds it, bound and never listening, so no other server can take the port meanwhile
    (a port bound and closed to be "free" can be given to another server, which then answers)."""

    def __init__(self):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # no SO_REUSEADDR: nothing may share it
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def close(self):
        self.socket.close()


# --------------------------------------------------------------------------------------------
# The loopback feed server: one route per request the harness plans


class Route:
    __slots__ = ("status", "body", "delay", "hits")

    def __init__(self, status, body, delay):
        self.status, self.body, self.delay, self.hits = status, body, delay, 0


class SearchRoute:
    """A verse search's numbered pages: `?page=N` answers page N (`[]` past the last, which ends
    the search), or, while `mode` says so, HTTP 500 or a body that is no page."""
    __slots__ = ("pages", "mode", "hits")

    def __init__(self, pages):
        self.pages, self.mode, self.hits = pages, "ok", {}  # pages: [(body, items)]; hits: {page: requests}

    def answer(self, query):
        try:
            page = int(urllib.parse.parse_qs(query).get("page", ["0"])[0])
        except ValueError:
            page = 0
        self.hits[page] = self.hits.get(page, 0) + 1
        if self.mode == "500":
            return 500, b"server error"
        if self.mode == "garbage":
            return 200, b'{"verses": "not a page"}'
        return 200, self.pages[page - 1][0] if 1 <= page <= len(self.pages) else b"[]"

    def items(self, page):
        return self.pages[page - 1][1] if 1 <= page <= len(self.pages) else []


class FeedServer:
    """http.server on 127.0.0.1, port 0, in daemon threads. Each load gets its own path, so
    concurrent loads get their own responses and the harness can count each one's requests."""

    def __init__(self):
        self.routes = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.counter = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10  # a client that stalls cannot hold a handler thread for long

            def log_message(self, *args):
                pass

            def do_GET(self):
                path, _, query = self.path.partition("?")
                with server.lock:
                    route = server.routes.get(path)
                    if isinstance(route, SearchRoute):
                        (status, body), delay = route.answer(query), 0.0
                    elif route is not None:
                        route.hits += 1
                if route is None:
                    status, body, delay = 404, b"not found", 0.0
                elif not isinstance(route, SearchRoute):
                    status, body, delay = route.status, route.body, route.delay
                if delay:
                    server.stopping.wait(min(delay, 2.0))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError, socket.timeout, OSError):
                    pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def add(self, status, body, delay=0.0, name="feed.json"):
        with self.lock:
            self.counter += 1
            path = "/%d/%s" % (self.counter, name)
            self.routes[path] = Route(status, body, delay)
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def hits(self, url):
        path = url.split(str(self.port), 1)[-1]
        with self.lock:
            route = self.routes.get(path)
            return route.hits if route else 0

    def set(self, url, status, body):
        """Changes what an existing URL answers (an image the harness asks for again)."""
        with self.lock:
            route = self.routes[url.split(str(self.port), 1)[-1]]
            route.status, route.body = status, body

    def add_search(self, pages):
        """A verse search's pages; returns its URL template (`{query}`, `{page}`)."""
        with self.lock:
            self.counter += 1
            path = "/%d/verses" % self.counter
            self.routes[path] = SearchRoute(pages)
        return "http://127.0.0.1:%d%s?q={query}&page={page}" % (self.port, path)

    def search_route(self, template):
        """The pages behind a template of this server; None for another server's (the dead port)."""
        prefix = "http://127.0.0.1:%d" % self.port
        if not template.startswith(prefix):
            return None
        with self.lock:
            return self.routes.get(template[len(prefix):].split("?")[0])

    def stop(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# --------------------------------------------------------------------------------------------
# Running the binary


class Cmd:
    """One cachelog command line: arguments, extra environment, an optional file size limit."""

    def __init__(self, args, env=None, fsize=None, label=None):
        self.args = [str(a) for a in args]
        self.env = dict(env or {})
        self.fsize = fsize
        self.label = label or (self.args[0] if self.args else "")
        self.sub = next((a for a in self.args if a in SUBCOMMANDS), "")
        self.now = None  # the clock it runs with (seconds), set by Run.cmd
        self.incoming = 0  # the bytes it may save at most (a load's body), for the size limit
        self.key = None  # the key a load saves (never evicted to make room for its own save)
        self.fmt = None
        for i, a in enumerate(self.args):
            if a == "--format" and i + 1 < len(self.args):
                self.fmt = self.args[i + 1]

    def shell(self, binary):
        parts = ["%s=%s" % (k, shlex.quote(v)) for k, v in self.env.items()]
        if self.fsize is not None:
            parts += ["python3", "-c", shlex.quote(FSIZE_WRAPPER), str(self.fsize)]
        parts.append(shlex.quote(binary))
        parts += [shlex.quote(a) for a in self.args]
        return " ".join(parts)


SUBCOMMANDS = {"load", "image", "searches", "replay", "state", "audit", "report", "validate", "stats", "verify", "compact",
               "demo", "rebuild", "version", "help", "retention"}
# The commands that write, and so run retention passes (Format.md, "Retention": writers remove
# history; `compact` runs the pass that is due after its compaction, as a load does after its save):
# a pass measures every window back from the clock of the process that started it.
WRITING = {"load", "image", "validate", "retention", "compact"}

# A full disk, for any user on any machine: RLIMIT_FSIZE at the database's size, SIGXFSZ ignored
# (as a full disk sends no signal), so the first write past the end fails with EFBIG.
FSIZE_WRAPPER = (
    "import os,resource,signal,sys; n=int(sys.argv[1]); signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); os.execv(sys.argv[2], sys.argv[2:])"
)


class Outcome:
    def __init__(self, cmd, rc, out, err, seconds, timed_out=False, killed=False):
        self.cmd, self.rc, self.out, self.err = cmd, rc, out, err
        self.seconds, self.timed_out, self.killed = seconds, timed_out, killed
        self.json = None  # the parsed document (json) or list of documents (jsonl)

    @property
    def signal_name(self):
        if self.rc is not None and self.rc < 0:
            try:
                return signal.Signals(-self.rc).name
            except ValueError:
                return "signal %d" % -self.rc
        return None


class Running:
    def __init__(self, cmd, popen, out, err, started):
        self.cmd, self.popen, self.out, self.err, self.started = cmd, popen, out, err, started
        self.killed = False


class Runner:
    def __init__(self, binary, display, home):
        self.binary, self.display, self.home = binary, display, home
        self.base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8", "TZ": "UTC"}
        self.invocations = 0
        self.launched = []  # every command started since the last check: whose clocks may run retention

    def launch(self, cmd, cwd):
        self.launched.append(cmd)
        env = dict(self.base_env)
        env.update(cmd.env)
        argv = [self.binary] + cmd.args
        if cmd.fsize is not None:
            argv = [sys.executable, "-c", FSIZE_WRAPPER, str(cmd.fsize)] + argv
        # Output goes to files, so that no pipe fills while several processes run; under a file
        # size limit to pipes, which the limit does not cut short.
        if cmd.fsize is not None:
            out = err = subprocess.PIPE
        else:
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.invocations += 1
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd,
                                 start_new_session=True)
        return Running(cmd, popen, out, err, time.monotonic())

    def kill(self, running, sig=signal.SIGKILL):
        if running.popen.poll() is None:
            running.killed = True
            try:
                running.popen.send_signal(sig)
            except ProcessLookupError:
                pass

    def finish(self, running, timeout=PROCESS_TIMEOUT):
        timed_out = False
        remaining = max(0.1, timeout - (time.monotonic() - running.started))
        if running.out is subprocess.PIPE:
            try:
                streams = running.popen.communicate(timeout=remaining)
            except subprocess.TimeoutExpired:
                timed_out = True
                running.popen.kill()
                streams = running.popen.communicate()
            rc = running.popen.returncode
            texts = [b.decode("utf-8", "replace") for b in streams]
            return Outcome(running.cmd, rc, texts[0], texts[1], time.monotonic() - running.started, timed_out, running.killed)
        try:
            rc = running.popen.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = True
            running.popen.kill()
            rc = running.popen.wait()
        seconds = time.monotonic() - running.started
        texts = []
        for f in (running.out, running.err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
            f.close()
        return Outcome(running.cmd, rc, texts[0], texts[1], seconds, timed_out, running.killed)


# --------------------------------------------------------------------------------------------
# The oracle: the database read with Python's lmdb and zlib, from Format.md alone


def is_utf8(data):
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


class Rec:
    """One event record, decoded the way Format.md describes it."""

    def __init__(self, seq, raw):
        self.seq, self.raw = seq, raw
        self.frame_err = None
        self.crc_ok = len(raw) >= 4 and zlib.crc32(raw[:-4]) == struct.unpack(">I", raw[-4:])[0]
        self.kind = self.flags = self.reason = self.version = 0
        self.recorded_at = self.ts = self.max_age = float("nan")
        self.key, self.body, self.payload_len, self.ref = b"", b"", 0, None
        self.meta_raw = b""
        self.header_ok = len(raw) >= 42
        if not self.header_ok:
            self.frame_err = "shorter than a header"
            return
        (self.version, self.kind, self.flags, self.reason, self.recorded_at, self.ts, self.max_age,
         key_len, self.payload_len, body_len) = HEADER.unpack_from(raw)
        self.ts_bits = raw[12:20]
        if self.version == STAMPED:  # the harness counts in seconds since 1970
            self.recorded_at += SINCE_1970
            if self.kind in (PUT, EXPIRE):
                self.ts += SINCE_1970
        self.key = raw[38:38 + key_len]
        self.body = raw[38 + key_len:38 + key_len + body_len]
        # Flag bit 3: a metadata block (u16 length, then the names and values) follows the body.
        meta_len = 0
        if self.flags & 8 and len(raw) >= 38 + key_len + body_len + 2:
            meta_len = 2 + struct.unpack_from(">H", raw, 38 + key_len + body_len)[0]
            self.meta_raw = raw[38 + key_len + body_len + 2:38 + key_len + body_len + meta_len]
        if 42 + key_len + body_len + meta_len != len(raw):
            self.frame_err = "length"
        elif self.version not in RECORD_VERSIONS:
            self.frame_err = "version"
        elif self.kind not in KIND_NAMES or self.kind == RETENTION and self.version < 2:
            self.frame_err = "kind"
        elif self.kind == DELETE and (self.reason not in REASONS or self.reason == EVICTED and self.version < 2):
            self.frame_err = "reason"
        elif not is_utf8(self.key):
            self.frame_err = "key"
        elif self.kind == PUT and self.flags & 2:
            # The fold needs the reference of a put: an earlier seq, 8 bytes.
            if body_len != 8 or u64(self.body) >= seq:
                self.frame_err = "reference"
            else:
                self.ref = u64(self.body)

    @property
    def framing_ok(self):
        return self.frame_err is None

    @property
    def recorded_max_age(self):
        """The max age the put was saved under (flag bit 2), else the default readers judge by."""
        return self.max_age if self.flags & 4 else UNRECORDED_MAX_AGE

    @property
    def since_recorded(self):
        """Format.md, "When a put's fetch began": the put's `since` entry as written (an int, the
        log's last seq when the fetch of its payload began), None without one or when it is not
        decimal digits."""
        text = (self.metadata or {}).get("since")
        if text is None or not re.fullmatch(r"[0-9]{1,20}", text) or int(text) >= 1 << 64:
            return None
        return int(text)

    @property
    def since(self):
        """The `since` a later save is judged against: as recorded, or the seq before the put's
        own when it is at or past it (no fetch can have begun there)."""
        value = self.since_recorded
        return None if value is None else min(value, max(self.seq - 1, 0))

    @property
    def metadata(self):
        """Format.md, "The policy a put was saved under": {name: value} (text), {} without the
        block, None when it does not parse."""
        raw, pos, out = self.meta_raw, 0, {}
        try:
            while pos < len(raw):
                name_len = raw[pos]
                name = raw[pos + 1:pos + 1 + name_len].decode("utf-8")
                value_len, = struct.unpack_from(">H", raw, pos + 1 + name_len)
                start = pos + 3 + name_len
                if start + value_len > len(raw):
                    return None
                out[name] = raw[start:start + value_len].decode("utf-8")
                pos = start + value_len
        except (IndexError, struct.error, UnicodeDecodeError):
            return None
        return out

    @property
    def intact(self):
        return self.frame_err is None and self.crc_ok

    def own_payload(self):
        """The payload this record holds itself, or None when its body does not give it."""
        if self.flags & 1:
            try:
                d = zlib.decompressobj()
                out = d.decompress(self.body)
                if not d.eof:
                    return None
            except zlib.error:
                return None
        else:
            out = self.body
        return out if len(out) == self.payload_len else None

    def key_text(self):
        return self.key.decode("utf-8", "replace")


STATE_ROW_VERSION = 2  # Format.md: a 29-byte state row starts with it; a checkpoint's entries lack it


def decode_row(raw):
    """A 29-byte state row: (seq, timestamp bits as stored, payload bytes, payload seq)."""
    if len(raw) != 29 or raw[0] != STATE_ROW_VERSION:
        return None
    return decode_entry(raw[1:])


def decode_entry(raw):
    """A checkpoint's 28-byte entry: (seq, timestamp bits as stored, payload bytes, payload seq)."""
    if len(raw) != 28:
        return None
    seq, = struct.unpack_from(">Q", raw, 0)
    size, = struct.unpack_from(">I", raw, 16)
    pseq, = struct.unpack_from(">Q", raw, 20)
    return (seq, bytes(raw[8:16]), size, pseq)


def encode_row(seq, ts_bits, size, pseq):
    return bytes([STATE_ROW_VERSION]) + struct.pack(">Q", seq) + ts_bits + struct.pack(">IQ", size, pseq)


def entry_ts(entry):
    """An entry's timestamp in seconds since 1970 (the binary stores a stamp)."""
    return struct.unpack(">d", entry[1])[0] + SINCE_1970


def decode_checkpoint(raw):
    """Format.md, "Checkpoints": {key bytes: entry}, or None when it fails its checks."""
    if len(raw) < 8 or zlib.crc32(raw[:-4]) != struct.unpack(">I", raw[-4:])[0]:
        return None
    length, = struct.unpack_from(">I", raw, 0)
    try:
        d = zlib.decompressobj()
        snap = d.decompress(raw[4:-4])
        if not d.eof or len(snap) != length:
            return None
        # Format.md, "Checkpoints": the marker of a snapshot whose dates are stamps, then the count.
        marker, count = struct.unpack_from(">II", snap, 0)
        if marker != 0xFFFFFFFF:
            return None
        pos, entries = 8, {}
        for _ in range(count):
            key_len, = struct.unpack_from(">H", snap, pos)
            key = snap[pos + 2:pos + 2 + key_len]
            pos += 2 + key_len
            entry = decode_entry(snap[pos:pos + 28])
            if entry is None:
                return None
            entries[bytes(key)] = entry
            pos += 28
        return entries if pos == len(snap) else None
    except (struct.error, zlib.error):
        return None


DAY = 86400


class Policy:
    """A retention policy as Format.md, "Retention", records it: a history window in seconds
    (None: kept for ever), a size limit in bytes (None: none), and overrides, the first that
    matches a key winning: ("prefix", text, seconds) for keys that start with those bytes,
    ("contract", name, seconds) for keys whose live put records that contract."""

    __slots__ = ("history", "size_limit", "overrides")

    def __init__(self, history, size_limit, overrides=()):
        self.history, self.size_limit, self.overrides = history, size_limit, tuple(overrides)

    def __eq__(self, other):
        return isinstance(other, Policy) and (self.history, self.size_limit, self.overrides) == (
            other.history, other.size_limit, other.overrides)

    def __hash__(self):
        return hash((self.history, self.size_limit, self.overrides))

    def __repr__(self):
        return "Policy(history=%s, size=%s, overrides=%s)" % (self.history, self.size_limit, list(self.overrides))

    def window(self, key, contract):
        """The window of `key` (bytes) whose live put records `contract` (None: no live put, or
        one that records none)."""
        for kind, name, seconds in self.overrides:
            if kind == "prefix" and key.startswith(name.encode("utf-8")) or kind == "contract" and contract == name:
                return seconds
        return self.history

    def as_json(self):
        """What `retention --format json` prints as "policy"."""
        return {"history": self.history, "sizeLimit": self.size_limit,
                "overrides": [{kind if kind == "contract" else "prefix": name, "history": seconds}
                              for kind, name, seconds in self.overrides]}


def replaced_overrides(recorded, prefixes, contracts):
    """The overrides a `retention` records (retention --help): --keep, given, replaces the recorded
    prefixes and --keep-contract, given, the recorded contracts; prefixes first, then contracts."""
    return tuple((prefixes if prefixes else [o for o in recorded if o[0] == "prefix"])
                 + (contracts if contracts else [o for o in recorded if o[0] == "contract"]))


DEFAULT_POLICY = Policy(30 * DAY, 256 << 20)  # retention --help: a database that records none


def policy_from_metadata(meta):
    """Format.md, "Retention": the policy a retention record's metadata holds, and who set it;
    None when the entries do not describe one."""
    if meta is None:
        return None

    def seconds(text):
        return None if text == "none" else int(text)

    try:
        history = seconds(meta["history"])
        size = seconds(meta["size-limit"])
        overrides = []
        for index in sorted({name.split(".")[1] for name in meta if name.startswith("override.")}):
            base = "override.%s." % index
            window = int(meta[base + "history"])
            if base + "prefix" in meta:
                overrides.append(("prefix", meta[base + "prefix"], window))
            else:
                overrides.append(("contract", meta[base + "contract"], window))
    except (KeyError, ValueError, IndexError):
        return None
    return Policy(history, size, overrides), meta.get("by", "")


def kept_with(log, seqs, b, present, stored, base=0, base_holds=False):
    """Format.md, "Retention": the records that stay with b, the version a key's history starts
    from, when it is an expire: the key's last put before it when it judged an earlier version (the
    put is still live after it); when it removed the key (or follows a delete), the records that
    ended the key (its last put or delete, and the expires after that) while a put before them
    stays stored (or the checkpoint at the compaction base, which the fold starts from, holds the
    key: `base_holds`); else none. `seqs` are the key's records in order (its key index), `present`
    the ones stored when the pass ran, `stored` the ones stored after it."""
    r = log.get(b)
    # A b the harness deleted (the key index still lists it) reads as nothing, as one whose
    # header no longer frames does: what it was, and so what stays with it, is unknown to a writer.
    if r is None or b not in present or not r.framing_ok or r.kind != EXPIRE:
        return set()
    judged, expires = {r.ts_bits}, []
    for q in reversed([q for q in seqs if q < b and q in present]):
        e = log[q]
        if not e.framing_ok:
            continue
        if e.kind == EXPIRE:
            judged.add(e.ts_bits)
            expires.append(q)
            continue
        if e.kind == PUT and e.ts_bits not in judged:
            return {q}
        if e.kind in (PUT, DELETE):
            earlier = base_holds and q > base or any(p < q and p in stored and log[p].framing_ok and log[p].kind == PUT for p in seqs)
            return {q} | set(expires) if earlier else set()
        return set()
    return set()


def used_estimate(snap):
    """Bounds on the bytes a size limit counts (Format.md, "Retention": the pages of every tree,
    LMDB's free list among them): at least the pages of the trees a binding shows and the two
    meta pages; at most that plus the pages the free list can take to list every other free page."""
    free_pages = max(0, snap.used_upper - snap.used_lower) // snap.psize
    return snap.used_lower, snap.used_lower + (free_pages // 64 + 4) * snap.psize


class OracleError(Exception):
    def __init__(self, seq, why):
        super().__init__("seq %s: %s" % (seq, why))
        self.seq, self.why = seq, why


class Snap:
    """Everything in the database, read once with no cachelog process running."""

    def __init__(self, db, stash):
        self.events, self.state, self.checkpoints, self.meta, self.trims = {}, {}, {}, {}, {}
        self.used_lower = self.used_upper = 0
        self.psize = 4096
        self.exists = os.path.exists(os.path.join(db, "data.mdb"))
        if self.exists:
            env = lmdb.open(db, readonly=True, lock=False, max_dbs=8, subdir=True)
            try:
                names = {}
                with env.begin() as txn:
                    for name, _ in txn.cursor():
                        names[bytes(name)] = True
                # The bytes a size limit bounds (Format.md, "Retention"; the pages of every tree,
                # LMDB's free list among them, which no binding shows): at least the pages of the
                # other trees and the two meta pages, at most every page below the file's last.
                info, main = env.info(), env.stat()
                self.psize = main["psize"]
                self.used_lower = (main["branch_pages"] + main["leaf_pages"] + main["overflow_pages"] + 2) * main["psize"]
                self.used_upper = (info["last_pgno"] + 1) * main["psize"]
                for table in (b"events", b"state", b"checkpoints", b"meta", b"trims", b"keys"):
                    if table not in names:
                        continue
                    try:
                        handle = env.open_db(table, create=False, dupsort=table == b"keys")
                    except lmdb.Error:
                        continue
                    with env.begin(db=handle) as txn:
                        stat = txn.stat(handle)
                        self.used_lower += (stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"]) * stat["psize"]
                        if table == b"keys":
                            continue
                        rows = {bytes(k): bytes(v) for k, v in txn.cursor()}
                    if table == b"events":
                        self.events = {u64(k): Rec(u64(k), v) for k, v in rows.items() if len(k) == 8}
                    elif table == b"state":
                        self.state = rows
                    elif table == b"checkpoints":
                        self.checkpoints = {u64(k): v for k, v in rows.items() if len(k) == 8}
                    elif table == b"trims":
                        self.trims = {k: u64(v) for k, v in rows.items() if len(v) == 8}
                    else:
                        self.meta = rows
            finally:
                env.close()
        self.seqs = sorted(self.events)
        self.last = u64(self.meta[b"lastSeq"]) if len(self.meta.get(b"lastSeq", b"")) == 8 else 0
        self.base = u64(self.meta[b"baseSeq"]) if len(self.meta.get(b"baseSeq", b"")) == 8 else 0
        raw = self.meta.get(b"lastRecordedAt", b"")
        self.last_recorded_at = struct.unpack(">d", raw[1:])[0] + SINCE_1970 if len(raw) == 9 and raw[0] == 2 else float("nan")
        # Format.md, "Retention": the policy's record, the zone up to which a missing seq is
        # history retention let go, the pass under way and what the last pass did.
        self.retention_seq = self.meta_u64(b"retentionSeq")
        (self.zone, self.retention_applied, self.retention_used_after, self.retention_pass,
         self.retention_report) = decode_retention_state(self.meta.get(b"retention", b""))
        self.stored = {}
        self.malformed = set()
        for key, raw in self.state.items():
            entry = decode_row(raw)
            if entry is None:
                self.malformed.add(key)
            else:
                self.stored[key] = entry
        self.decoded_checkpoints = {}
        for seq, raw in self.checkpoints.items():
            decoded = decode_checkpoint(raw)
            self.decoded_checkpoints[seq] = decoded
            if decoded is not None:
                stash[seq] = decoded  # the latest good copy: what a planted flip destroyed
        self.stash = stash

    def meta_u64(self, name):
        raw = self.meta.get(name, b"")
        return u64(raw) if len(raw) == 8 else 0

    def policy(self):
        """The policy in effect, as the engine reads it: the record meta's retentionSeq names, or
        the default when there is none or it does not read (a damaged record: verify names it)."""
        r = self.events.get(self.retention_seq) if self.retention_seq else None
        found = policy_from_metadata(r.metadata) if r is not None and r.intact and r.kind == RETENTION else None
        return found[0] if found else DEFAULT_POLICY

    def trimmed_past(self, seq):
        """Keys whose history retention trimmed past `seq`: their state there is not known."""
        return {k for k, t in self.trims.items() if t > seq}

    def key_seqs(self):
        """{key bytes: [seq, …]} of the records that read."""
        out = {}
        for seq in self.seqs:
            r = self.events[seq]
            if r.header_ok:
                out.setdefault(r.key, []).append(seq)
        return out

    def base_state(self):
        """The state right after baseSeq: empty without a compaction, else the base checkpoint (or
        the copy the harness kept of it before damaging it)."""
        if self.base == 0:
            return {}
        decoded = self.decoded_checkpoints.get(self.base)
        if decoded is not None:
            return decoded
        return self.stash.get(self.base)

    @property
    def base_checkpoint_damaged(self):
        return self.base > 0 and self.decoded_checkpoints.get(self.base) is None

    def fold(self, upto=None, start=None, appended=None):
        """Format.md, "Folding the log into the state": headers and keys only; framing, not CRC.
        `appended`: {seq: the record as it was appended}, read in place of a record damaged since."""
        live = dict(self.base_state() if start is None else start)
        for seq in self.seqs:
            if seq <= self.base:
                continue
            if upto is not None and seq > upto:
                break
            r = (appended or {}).get(seq, self.events[seq])
            if not r.framing_ok or r.kind == RETENTION:
                continue  # a retention record is about no key
            if r.kind == PUT:
                live[r.key] = (seq, r.ts_bits, r.payload_len, r.ref if r.ref is not None else seq)
            elif r.kind == DELETE:
                live.pop(r.key, None)
            elif r.key in live and live[r.key][1] == r.ts_bits:
                del live[r.key]
        return live

    def payload(self, seq, key=None):
        """The payload of the put at seq (following its reference), or OracleError."""
        r = self.events.get(seq)
        if r is None:
            raise OracleError(seq, "missing")
        if not r.intact:
            raise OracleError(seq, "corrupt (%s)" % (r.frame_err or "checksum"))
        if r.kind != PUT:
            raise OracleError(seq, "not a put")
        if key is not None and r.key != key:
            raise OracleError(seq, "a put of another key")
        if r.ref is None:
            out = r.own_payload()
            if out is None:
                raise OracleError(seq, "body does not inflate")
            return out
        t = self.events.get(r.ref)
        if t is None:
            raise OracleError(seq, "references missing seq %d" % r.ref)
        if not t.intact:
            raise OracleError(t.seq, "referenced record corrupt")
        if t.kind != PUT or t.ref is not None or t.payload_len != r.payload_len or t.key != r.key:
            raise OracleError(seq, "reference to seq %d does not match" % t.seq)
        out = t.own_payload()
        if out is None:
            raise OracleError(t.seq, "referenced body does not inflate")
        return out

    def live_bytes(self, key):
        """What retrieving `key` must give: (payload bytes, its put's record) or OracleError / None.
        A state row that does not decode is answered from the log (Format.md, "Folding the log into
        the state"; `state` shows what the log says for it), unless the fold's start is damaged too."""
        if key in self.malformed:
            if self.base_checkpoint_damaged or self.base_state() is None:
                raise OracleError(None, "damaged state row and base checkpoint")
            entry = self.fold().get(key)
            if entry is None:
                return None
            if entry[0] not in self.events:
                raise OracleError(entry[0], "damaged state row, and the put the log names is gone")
            return self.payload(entry[0], key), self.events[entry[0]]
        entry = self.stored.get(key)
        if entry is None:
            return None
        return self.payload(entry[0], key), self.events[entry[0]]

    def live_value(self, key):
        """What retrieving `key` must give: (items, timestamp seconds, seq, its put's record) or
        OracleError / None."""
        found = self.live_bytes(key)
        if found is None:
            return None
        payload, rec = found
        try:
            items = json.loads(payload)
        except ValueError:
            raise OracleError(rec.seq, "payload is not JSON")
        return items, rec.ts, rec.seq, rec

    def judged_live_put(self, key):
        """The live put a save of `key` is judged against (a save never replaces a newer cache):
        the put the state row names, or, for a row that does not decode, the one the fold gives;
        None when there is none, or when the record at its seq is no put of the key with the row's
        timestamp (no cache to keep). OracleError when the engine cannot know it: a damaged row,
        and the base checkpoint its fold starts from too."""
        if key in self.malformed:
            if self.base_checkpoint_damaged or self.base_state() is None:
                raise OracleError(self.base, "damaged state row and base checkpoint")
            entry = self.fold().get(key)
        else:
            entry = self.stored.get(key)
        if entry is None:
            return None
        r = self.events.get(entry[0])
        if r is None or not r.framing_ok or r.kind != PUT or r.key != key or r.ts_bits != entry[1]:
            return None
        return r

    def last_record(self):
        """The last record in the log (what the binary compares --now with), or None."""
        return self.events[self.seqs[-1]] if self.seqs else None

    def resolve_date(self, seconds, upper):
        """Format/README: --as-of/--to date = last event recorded at or before it; --from/--before
        date = first event recorded at or after it."""
        chosen = None
        for seq in self.seqs:
            r = self.events[seq]
            if upper and r.recorded_at <= seconds:
                chosen = seq
            if not upper and r.recorded_at >= seconds:
                return seq
        return chosen if upper else None


class Expect:
    """What `verify` must report: requirements (each matched by a problem) and tolerances
    (consequences of a planted fault that it may also report)."""

    def __init__(self):
        self.required = []  # (label, predicate)
        self.tolerated = []  # predicate

    def need(self, label, pred):
        self.required.append((label, pred))

    def allow(self, pred):
        self.tolerated.append(pred)


def by_seq(*seqs):
    wanted = set(seqs)
    return lambda p: p.get("seq") in wanted


def mentions(key_bytes):
    text = key_bytes.decode("utf-8", "replace")
    return lambda p: text in str(p.get("message", ""))


def covers(seq):
    """A problem that names seq inside a range ("seq 17 through 18")."""
    def pred(p):
        for lo, hi in re.findall(r"seq (\d+) through (?:seq )?(\d+)", str(p.get("message", ""))):
            if int(lo) <= seq <= int(hi):
                return True
        return False
    return pred


def either(*preds):
    return lambda p: any(f(p) for f in preds)


def expected_problems(snap):
    """The oracle's own `verify`, from Format.md: what must and what may be reported."""
    e = Expect()
    prev_time = -math.inf
    for seq in snap.seqs:
        r = snap.events[seq]
        if seq > snap.last:
            e.need("record seq %d beyond meta lastSeq %d" % (seq, snap.last), by_seq(seq))
        if not r.intact:
            e.need("corrupt record at seq %d" % seq, by_seq(seq))
        elif r.kind == PUT:
            if r.ref is None:
                if r.own_payload() is None:
                    e.need("seq %d body does not inflate" % seq, by_seq(seq))
            else:
                t = snap.events.get(r.ref)
                if t is None:
                    e.need("seq %d references missing seq %d" % (seq, r.ref), either(by_seq(seq, r.ref), covers(r.ref)))
                elif not t.intact or (t.kind == PUT and t.ref is None and t.own_payload() is None):
                    e.allow(by_seq(seq))  # reported at the target (required there) or here
                elif t.kind != PUT or t.ref is not None or t.payload_len != r.payload_len or t.key != r.key:
                    e.need("seq %d reference to seq %d does not match" % (seq, r.ref), by_seq(seq))
        if r.header_ok:
            if r.recorded_at < prev_time or math.isnan(r.recorded_at):
                e.allow(by_seq(seq))
            if not math.isnan(r.recorded_at):
                prev_time = max(prev_time, r.recorded_at) if r.framing_ok else prev_time
            if not r.framing_ok:
                e.allow(by_seq(seq + 1))
    present = [s for s in snap.seqs if s > snap.base]
    top = max([snap.last] + present)
    have = set(present)
    for m in range(snap.base + 1, top + 1):
        if m not in have:
            later = [s for s in present if s > m]
            ok = {m, snap.last} | ({later[0]} if later else set())
            if m <= snap.zone:
                # Up to meta's retentionZone a missing seq is history retention let go, not damage
                # (whether retention may have let it go is the harness's to judge).
                e.allow(either(by_seq(*ok), covers(m)))
            else:
                e.need("seq %d is missing" % m, either(by_seq(*ok), covers(m)))
    # The state table and the checkpoints against the fold.
    base_state = snap.base_state()
    if base_state is None:
        e.allow(by_seq(snap.base))
    if snap.base_checkpoint_damaged:
        # Without the base checkpoint the engine's fold starts from nothing: every key live at
        # the base may be reported as differing from the log.
        for key, entry in (base_state or {}).items():
            e.allow(either(mentions(key), by_seq(entry[0])))
        for key, entry in snap.stored.items():
            e.allow(either(mentions(key), by_seq(entry[0])))
    folded = snap.fold() if base_state is not None else None
    for key in snap.malformed:
        e.need("damaged state row %r" % key, mentions(key))
    if folded is not None:
        for key in set(snap.stored) | set(folded):
            if key in snap.malformed:
                continue
            have_e, want_e = snap.stored.get(key), folded.get(key)
            if have_e != want_e and snap.base_checkpoint_damaged:
                # The engine cannot fold from a base it cannot read.
                e.allow(either(mentions(key), by_seq(*[x[0] for x in (have_e, want_e) if x])))
            elif have_e != want_e:
                seqs = [x[0] for x in (have_e, want_e) if x]
                e.need("state row %r is %s, the log says %s" % (key, have_e and have_e[0], want_e and want_e[0]),
                       either(mentions(key), by_seq(*seqs)))
    else:
        for key, entry in snap.stored.items():
            e.allow(either(mentions(key), by_seq(entry[0])))
    damaged = any(not r.intact for r in snap.events.values()) or snap.malformed
    for seq, decoded in snap.decoded_checkpoints.items():
        if decoded is None:
            e.need("damaged checkpoint at seq %d" % seq, by_seq(seq))
        elif seq > snap.base and folded is not None and decoded != snap.fold(seq):
            # A checkpoint holds the state as it was; the keys whose history retention trimmed
            # past it fold to something else now, which is no damage of the checkpoint.
            trimmed = snap.trimmed_past(seq)
            fold = snap.fold(seq)
            if damaged or any(decoded.get(k) != fold.get(k) for k in set(decoded) | set(fold) if k not in trimmed):
                e.allow(by_seq(seq))
    # Stored rows whose live record is gone (after a compaction nothing else says so).
    for key, entry in snap.stored.items():
        if entry[0] not in snap.events and entry[0] <= snap.base:
            e.need("live record seq %d of %r is missing" % (entry[0], key), either(by_seq(entry[0]), mentions(key)))
    return e


# --------------------------------------------------------------------------------------------
# Payloads


TEXT_PIECES = ["a", "b", "k", "z", "Q", " ", "  ", "é", "e\u0301", "ß", "漢字", "🎬", "\"", "\\", "/", "\n", "\t",
               "Ω", "\u2028", "ü", "0", "9", "<", "&", "'"]


def rand_text(rng, low=0, high=16):
    return "".join(rng.choice(TEXT_PIECES) for _ in range(rng.randint(low, high)))


def rand_uuid(rng):
    h = "%032x" % rng.getrandbits(128)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def rand_json(rng, depth=0, big_numbers=False):
    roll = rng.random()
    if depth >= 3 or roll < 0.55:
        kind = rng.choice(["int", "int", "float", "str", "str", "bool", "null"])
        if kind == "int":
            if big_numbers and rng.random() < 0.5:
                return rng.choice([2 ** 53 + 1, 12345678901234567890, -(2 ** 63), 2 ** 63 - 1, 10 ** 30])
            return rng.randint(-10 ** 6, 10 ** 6)
        if kind == "float":
            return rng.choice([0.5, -1.25, 3.141592653589793, 1e300, -2.5e-8, 0.1, 123456.789])
        if kind == "str":
            return rand_text(rng)
        if kind == "bool":
            return rng.random() < 0.5
        return None
    if roll < 0.8:
        return [rand_json(rng, depth + 1, big_numbers) for _ in range(rng.randint(0, 4))]
    return {rand_text(rng, 1, 6): rand_json(rng, depth + 1, big_numbers) for _ in range(rng.randint(0, 4))}


def make_feed(rng, contract, big_numbers=False):
    """A valid body for `contract` and the items the binary must deliver and cache for it."""
    if contract == "films":
        films = []
        for _ in range(rng.randint(0, 5)):
            fid = rand_uuid(rng)
            films.append({"id": fid, "title": rand_text(rng, 1), "description": rand_text(rng),
                          "image": "https://img.example.com/%x.png" % rng.getrandbits(32),
                          "url": "https://ghibli.example.com/films/" + fid})
        body = [dict(f, release_date="1986") if rng.random() < 0.3 else f for f in films]
        return json.dumps(body, ensure_ascii=rng.random() < 0.5).encode(), films
    if contract == "genres":
        genres = [{"id": rng.choice([rng.randint(0, 999), rng.randint(0, 2 ** 63 - 1)]), "name": rand_text(rng, 1)}
                  for _ in range(rng.randint(0, 6))]
        body = {"genres": genres}
        if rng.random() < 0.3:
            body["total"] = len(genres)
        return json.dumps(body, ensure_ascii=rng.random() < 0.5).encode(), genres
    value = rand_json(rng, big_numbers=big_numbers)
    if rng.random() < 0.75:
        value = [rand_json(rng, 1, big_numbers) for _ in range(rng.randint(0, 5))]
    items = value if isinstance(value, list) else [value]
    return json.dumps(value, ensure_ascii=rng.random() < 0.5).encode(), items


def make_verses(rng, low=1, high=3):
    """One page of a verse search: the body served, and the items (scripture, distance, text)
    the binary must deliver and cache for it (fields the contract does not know are dropped)."""
    verses = [{"scripture": rand_text(rng, 1, 8), "distance": rng.choice([0, 0.125, 0.5, 1.75, 3, 12.0625]),
               "text": rand_text(rng)} for _ in range(rng.randint(low, high))]
    body = [dict(v, book="John") if rng.random() < 0.3 else v for v in verses]
    return json.dumps(body, ensure_ascii=rng.random() < 0.5).encode(), verses


def make_garbage(rng, contract):
    choices = [b"", b"<html><body>502 Bad Gateway</body></html>", bytes(rng.getrandbits(8) for _ in range(64)),
               b'{"items": [', b"\xff\xfe\x00garbage"]
    if contract in ("films", "genres"):
        other = "genres" if contract == "films" else "films"
        body, _ = make_feed(rng, other)
        if contract == "genres" or body != b"[]":
            choices.append(body if contract == "genres" else b'{"genres": []}')
    return rng.choice(choices)


def bulky_feed(rng, total):
    """A json-contract body that hardly compresses (for the full disk)."""
    chunks, size = [], 0
    while size < total:
        text = base64.b64encode(rng.getrandbits(8 * 3000).to_bytes(3000, "big")).decode()
        chunks.append(text)
        size += len(text)
    return json.dumps(chunks).encode(), chunks


# --------------------------------------------------------------------------------------------
# Failures and the summary


class Ledger:
    def __init__(self, seed, display, max_print):
        self.seed, self.display, self.max_print = seed, display, max_print
        self.checks = 0
        self.failed = 0
        self.classes = {}  # class -> [count, first message, first command]
        self.context = ("-", "-", "-")

    def check(self, ok, cls, message, outcome=None, cmd=None):
        self.checks += 1
        if ok:
            return True
        self.failed += 1
        cmd = cmd or (outcome.cmd if outcome is not None else None)
        line = cmd.shell(self.display) if cmd is not None else None
        run, step, kind = self.context
        entry = self.classes.setdefault(cls, [0, message, line, step])
        entry[0] += 1
        if entry[0] <= self.max_print:
            print("soak: FAIL [%s] seed=%s run=%s step=%s (%s): %s" % (cls, self.seed, run, step, kind, message), flush=True)
            if line:
                print("  $ " + line, flush=True)
            if outcome is not None:
                detail = "rc=%s%s" % (outcome.rc, " (%s)" % outcome.signal_name if outcome.signal_name else "")
                if outcome.err.strip():
                    detail += "; stderr: " + short(outcome.err.strip().replace("\n", " | "), 300)
                print("    " + detail, flush=True)
            print("  replay: CACHELOG_SOAK_SEED=%s CACHELOG_SOAK_STEPS=%s /usr/bin/python3 Tests/Soak/soak.py"
                  % (self.seed, step), flush=True)
        return False


# --------------------------------------------------------------------------------------------
# One database and its model


class Key:
    def __init__(self, name, contract):
        self.name, self.contract = name, contract
        self.bytes = name.encode("utf-8")
        self.last_body = None
        self.last_items = None


class Save:
    """A load that reported its feed cached: it must be in the log as a put of these items,
    recording as `since` the seq before its batch ("alone": no other process wrote meanwhile),
    or one from `since` (a seq) up to below its own."""

    def __init__(self, key, ts, items, cmd, step, since=None):
        self.key, self.ts, self.items, self.cmd, self.step = key, ts, items, cmd, step
        self.since = since
        self.seq = None


class Search:
    """A verse search the run keeps coming back to: its query, its key, the max age its
    commands give (None: none, so each is judged by the policy its put recorded, 30d for a new
    save) and the URL templates it was loaded from."""

    def __init__(self, query, age_text):
        self.query, self.age_text = query, age_text
        self.key = Key("search:verses:" + query, "verses")
        self.templates = []


class Fault:
    def __init__(self, kind, step, seq=None, key=None, detail="", last_at_plant=0):
        self.kind, self.step, self.seq, self.key, self.detail = kind, step, seq, key, detail
        self.last_at_plant = last_at_plant


KEY_POOL = [("films", "films"), ("genres", "genres"), ("feed", "json"), ("search:totoro", "films"),
            ("image:https://example.com/a.png", "json"), ("podcasts:news", "genres"), ("verses:love", "json"),
            ("people:page=2", "json")]
# Verse search queries: percent-encoded into the URL; the empty query is a search too.
QUERIES = ["love", "love one another", "café", "", "a&page=9", "{page}", "🎬 ü"]
MAX_AGES = [("90s", 90), ("15m", 900), ("12h", 43200), ("7d", 604800), ("30d", 2592000)]
HUGE_SECONDS = "9223372036854775807s"
HUGE_DAYS = "9223372036854775807d"


def pages_of(snap, key_bytes):
    """The page times a search's live put records ([] when it reads back without them)."""
    try:
        value = snap.live_value(key_bytes)
    except OracleError:
        return []
    return ((value[3].metadata or {}).get("page-times") or "").split() if value else []


def value_ts(snap, key_bytes):
    """The timestamp of the live cache of a key when it reads back, else None."""
    try:
        value = snap.live_value(key_bytes)
    except OracleError:
        return None
    return value[1] if value else None


class Run:
    def __init__(self, soak, index, rng):
        self.soak, self.index, self.rng = soak, index, rng
        self.ledger, self.runner, self.server = soak.ledger, soak.runner, soak.server
        self.dir = tempfile.mkdtemp(prefix="run%d-" % index, dir=soak.tmp)
        self.db = os.path.join(self.dir, "db")
        self.now = int((datetime.datetime(2026, 1, 1, tzinfo=UTC) - EPOCH).total_seconds()) + rng.randint(0, 300) * 86400
        self.max_age_text, self.max_age = rng.choice(MAX_AGES)
        self.keys = [Key(n, c) for n, c in rng.sample(KEY_POOL, rng.randint(3, 6))]
        self.pending = []  # Save, resolved after the step
        self.saves = []  # resolved Save: must stay in the log (until compaction may drop them)
        self.expect_live = {}  # key bytes -> seq (or None) where the model is certain
        self.uncertain = set()  # keys a concurrent or killed writer touched this step
        self.damaged = set()  # key bytes excused from the live model until healed
        self.faults = []
        self.state_faults = set()  # keys whose state row the harness damaged
        self.absurd = set()  # keys saved under an absurd max age or clock
        self.checked_last = 0
        self.stash = {}
        self.unreachable = soak.dead.url("/feed.json")
        self.images = {}  # URL -> the bytes it last served: images this run asks for again and again
        self.searches = []  # Search
        self.truncated = False
        self.snap = None
        self.step_kind = "-"
        # Retention (Format.md, "Retention"): the policy the harness set (the default until it
        # sets one) and the seq of its record, the policies that may have been in effect during
        # the step, every clock a writer of this run ran with, the snapshot of the last check,
        # every record seen (a record retention let go is judged by what it was), and the seqs
        # retention let go (their record, or None when it went before a check saw it).
        self.policy = DEFAULT_POLICY
        self.policy_seq = 0
        self.step_policies = [DEFAULT_POLICY]
        self.writer_clocks = set()
        self.prev = None
        self.known = {}
        self.undamaged = {}  # {seq: the record as it was before the harness flipped a bit of it}
        self.let_go = {}
        self.zone = 0
        self.pressed = False  # a step pressed the size limit on purpose: evictions are expected
        self.big_history = False  # the run built its big history (step_retention_kill)
        soak.runner.launched = []

    # ---- plumbing

    def fail(self, ok, cls, message, outcome=None, cmd=None):
        return self.ledger.check(ok, cls, message, outcome, cmd)

    def met(self, label):
        self.soak.seen[label] = self.soak.seen.get(label, 0) + 1

    def cmd(self, sub, *args, now=None, fsize=None):
        """A command line with the database and the clock, as flags or as environment variables,
        before or after the command name."""
        now = self.now if now is None else now
        now_text = now if isinstance(now, str) else iso(now)
        roll = self.rng.random()
        if roll < 0.15:
            cmd = Cmd([sub] + list(args), env={"CACHELOG_DB": self.db, "CACHELOG_NOW": now_text}, fsize=fsize)
        elif roll < 0.4:
            cmd = Cmd(["--db", self.db, "--now", now_text, sub] + list(args), fsize=fsize)
        else:
            cmd = Cmd([sub] + list(args) + ["--db", self.db, "--now", now_text], fsize=fsize)
        cmd.now = parse_iso(now_text)
        return cmd

    def run(self, cmd, timeout=PROCESS_TIMEOUT):
        if self.soak.verbose:
            print("    $ " + cmd.shell(self.soak.display), flush=True)
        outcome = self.runner.finish(self.runner.launch(cmd, self.dir), timeout)
        self.basic(outcome)
        return outcome

    def basic(self, o):
        """What every command must do: finish, not die of a signal, exit with a documented code,
        print no crash report, and print JSON that parses when asked for JSON."""
        if self.soak.verbose and (o.rc != 0 or o.err.strip()):
            print("      rc=%s %s" % (o.rc, short(o.err.strip().replace("\n", " | "), 200)), flush=True)
        self.fail(not o.timed_out, "hang", "no exit within %.0fs" % PROCESS_TIMEOUT, o)
        if o.killed:
            return
        self.fail(o.rc is not None and o.rc >= 0, "signal-death", "died of %s" % o.signal_name, o)
        if o.rc is None or o.rc < 0:
            return
        self.fail(o.rc in DOCUMENTED_EXIT_CODES, "undocumented-exit", "exit code %s" % o.rc, o)
        if o.rc == 3:
            self.fail(o.cmd.sub in ("load", "image"), "undocumented-exit", "exit code 3 from %s (documented for load and image only)"
                      % o.cmd.sub, o)
        crash = [m for m in CRASH_MARKERS if m in o.err]
        self.fail(not crash, "crash-report", "stderr carries a crash report (%s)" % ", ".join(crash), o)
        if o.rc in (1, 3) and o.cmd.sub not in ("verify",):
            self.fail(any(line.startswith("cachelog: ") for line in problem_lines(o.err)) or o.out.strip() != "",
                      "silent-failure", "exit %d with no 'cachelog: …' line on stderr (besides the clock warning)" % o.rc, o)
        if o.cmd.fmt == "json" and o.out.strip():
            try:
                o.json = json.loads(o.out)
                self.fail(True, "bad-json", "")
            except ValueError as error:
                self.fail(False, "bad-json", "stdout is not one JSON document (%s): %s" % (error, short(o.out)), o)
        elif o.cmd.fmt == "jsonl" and o.out.strip():
            docs = []
            for line in o.out.split("\n"):  # not splitlines(): U+2028 may stand raw in a JSON string
                if not line.strip():
                    continue
                try:
                    docs.append(json.loads(line))
                except ValueError as error:
                    self.fail(False, "bad-json", "a JSON line does not parse (%s): %s" % (error, short(line)), o)
                    docs = None
                    break
            if docs is not None:
                self.fail(True, "bad-json", "")
                o.json = docs

    def read(self):
        self.snap = Snap(self.db, self.stash)
        return self.snap

    def unknowable(self, snap):
        """The live state cannot be told: a state row disagrees with the log (or is damaged) and
        the base checkpoint the log's fold starts from is damaged too. Refusing is then honest."""
        if not snap.base_checkpoint_damaged:
            return False
        folded = snap.fold() if snap.base_state() is not None else None
        return bool(snap.malformed or self.state_faults or folded is None or folded != snap.stored)

    def tick(self):
        roll = self.rng.random()
        if roll < 0.2:
            return
        if roll < 0.26:
            # The clock jumps back (set right after running ahead, or another machine's): saves
            # older than the live caches write nothing, caches stamped after it are not fresh,
            # and what it appends is recorded at the log's later time.
            self.now -= self.rng.choice([self.rng.randint(1, 300), self.rng.randint(300, max(301, self.max_age)),
                                         self.rng.randint(self.max_age, 3 * self.max_age)])
            return
        if roll < 0.6:
            self.now += self.rng.randint(1, 300)
        elif roll < 0.8:
            self.now += self.rng.randint(300, max(301, self.max_age // 2))
        elif roll < 0.9 and self.snap is not None and self.snap.stored:
            # Right at a cache's max age (a cache exactly max-age old is expired), or a second before.
            entry = self.rng.choice(list(self.snap.stored.values()))
            ts = entry_ts(entry)
            if math.isfinite(ts) and ts == int(ts) and self.now <= ts + self.max_age <= self.now + 40 * 86400:
                self.now = int(ts) + self.max_age - self.rng.choice([0, 0, 1])
            else:
                self.now += self.max_age
        else:
            self.now += self.rng.randint(self.max_age, 3 * self.max_age)

    def key_for(self, contract=None):
        choices = [k for k in self.keys if contract is None or k.contract == contract]
        return self.rng.choice(choices or self.keys)

    def feed_for(self, key, same=None):
        """A feed for `key`: sometimes the very same body as last time (the engine then stores a
        reference to the earlier put), else a new one."""
        if same is None:
            same = key.last_body is not None and self.rng.random() < 0.4
        if same and key.last_body is not None:
            return key.last_body, key.last_items
        return make_feed(self.rng, key.contract, big_numbers=self.rng.random() < 0.08)

    # ---- loads

    def plan_load(self, key, mode, same=None, retries=0, max_age=None, now=None, body_items=None, strategy="remote-first"):
        """Registers the response and builds the command line; returns (cmd, plan)."""
        if body_items is not None:
            body, items = body_items
        else:
            body, items = self.feed_for(key, same)
        if mode == "ok":
            url = self.server.add(200, body)
        elif mode == "slow":
            url = self.server.add(200, body, delay=self.rng.uniform(0.2, 1.5))
        elif mode == "500":
            url = self.server.add(500, body)
        elif mode == "garbage":
            url = self.server.add(200, make_garbage(self.rng, key.contract))
        else:
            url = self.unreachable
        args = [url] + key_args(key.name) + ["--contract", key.contract, "--format", "json"]
        args += ["--max-age", max_age or self.max_age_text]
        # The model asks for the strategy and the retries: the genres contract alone would
        # default to cache first with 2 retries.
        args += ["--strategy", strategy, "--retries", str(retries or 0)]
        cmd = self.cmd("load", *args, now=now)
        cmd.incoming, cmd.key = len(body), key.bytes
        plan = {"key": key, "mode": mode, "items": items, "body": body, "url": url, "retries": retries,
                "now": self.now if now is None else now, "judge_age": self.max_age_seconds(max_age or self.max_age_text),
                "strategy": strategy, "hits": lambda: self.server.hits(url)}
        return cmd, plan

    def max_age_seconds(self, text):
        if text is None:
            return self.max_age
        unit = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[text[-1]]
        return int(text[:-1]) * unit

    def expect_fallback(self, snap, key, now, max_age):
        """What the cache must deliver at `now` when it is asked (a remote that failed, or cache
        first): ("cache", items, ts, put) when it reads back and is fresh, else ("none", why).
        `max_age` None: the max age its put recorded."""
        try:
            value = snap.live_value(key.bytes)
        except OracleError as error:
            return ("none", "cache unreadable (%s)" % error)
        if value is None:
            return ("none", "no cache")
        items, ts, _, rec = value
        if trusted_timestamp(ts, rec.recorded_at) > now:
            self.met("future-stamped cache not served")
            return ("none", "cache stamped in the future")
        if not is_fresh(ts, rec.recorded_at, now, rec.recorded_max_age if max_age is None else max_age):
            return ("none", "cache expired")
        return ("cache", items, ts, rec)

    @staticmethod
    def expected_save(snap, key_bytes, position):
        """A save never replaces a newer cache, by the log's order: 'superseded' when the live
        put it is judged against (Snap.judged_live_put) began its fetch at or after `position`,
        the log's last seq when the save's request began, or, recording none, landed after it;
        else 'saved'. The stamps (and so the clocks that took them) play no part. A load run
        alone begins at the snapshot's last seq, which no live put is past: it saves."""
        try:
            live = snap.judged_live_put(key_bytes)
        except OracleError:
            return None  # either: the engine cannot tell the live entry, and may count it as none
        return "superseded" if live is not None and supersedes(live, position) else "saved"

    def check_clock_warning(self, o, snap, now, beside=False):
        """A writer whose --now is before the last recorded event says so on stderr (what it
        appends is recorded at that later time); one whose clock is not behind does not. `beside`:
        other writers ran at once, and one that appended first recorded its events at the log's
        last recorded time (meta), which a compaction or a deleted record may have left later
        than the last record's: a warning is then no failure."""
        if o.killed or o.rc not in (0, 1, 3) or not snap.exists:
            return
        last = snap.last_record()
        if last is None or not last.intact or not math.isfinite(last.recorded_at) or not in_range(now):
            return
        behind = last.recorded_at > now
        if beside and not behind and CLOCK_WARNING in o.err and snap.last_recorded_at > now:
            return
        if behind:
            self.met("clock behind the log")
        self.fail((CLOCK_WARNING in o.err) == behind, "clock-warning", "--now %s, the last record (seq %d) was recorded at %s: %s" % (
            iso(now), last.seq, iso(last.recorded_at) if in_range(last.recorded_at) else last.recorded_at,
            "no warning on stderr" if behind else "stderr warns that the clock is behind"), o)

    def check_more(self, o, report, plan, rec=None):
        """A search's JSON says whether the server has another page: as the put recorded it (from
        the cache), or as the page just fetched says (from the remote)."""
        if plan.get("search") is None or report is None:
            return
        want = ("next" in (rec.metadata or {})) if rec is not None else plan.get("more", bool(plan["items"]))
        self.fail(report.get("more") is want, "search-more", "\"more\": %r, expected %r (%s)" % (
            report.get("more"), want, "the put records next=%r" % (rec.metadata or {}).get("next") if rec is not None
            else "page 1 holds %d items" % len(plan["items"])), o)

    def judge_load(self, o, plan, snap, candidates=None):
        """Checks one load against the model; queues a reported save for the log check.
        `candidates`: the load ran beside other writers of the key, whose payloads it may serve."""
        key, mode = plan["key"], plan["mode"]
        now = plan["now"] if isinstance(plan["now"], (int, float)) else parse_iso(plan["now"])
        max_age = plan["judge_age"]
        if o.killed or o.rc is None or o.rc < 0 or o.timed_out:
            if mode in ("ok", "slow"):
                self.uncertain.add(key.bytes)
            return
        report = o.json if isinstance(o.json, dict) else None
        if o.rc == 0:
            if not self.fail(report is not None, "load-output", "exit 0 but stdout is no JSON object: %s" % short(o.out), o):
                return
            self.fail(report.get("key") == key.name, "load-output",
                      "reported key %r, asked for %r" % (short(report.get("key")), short(key.name)), o)
        if candidates is None:
            self.check_clock_warning(o, snap, now, beside=plan.get("beside", False))
        hits = plan["hits"]()
        if plan["strategy"] == "cache-first" and candidates is None:
            want = self.expect_fallback(snap, key, now, max_age)
            if want[0] == "cache":
                self.fail(hits == 0, "cache-first", "a fresh cache (cached %s): the remote was asked %d times" % (iso(want[2]), hits), o)
                if self.fail(o.rc == 0, "cache-first", "a fresh readable cache (cached %s): exit %d, expected 0 from cache" % (
                        iso(want[2]), o.rc), o) and report is not None:
                    self.judge_served(o, report, want, plan)
                return
        remote_ok = mode in ("ok", "slow")
        fits = len(key.bytes) <= MAX_KEY_BYTES
        if remote_ok:
            save_ts = plan.get("save_ts", now)
            want_save = plan["save"] if "save" in plan else self.expected_save(snap, key.bytes, snap.last)
            self.fail(hits == 1, "load-requests", "an answered request was sent %d times" % hits, o)
            if o.rc == 0 and report is not None:
                self.fail(report.get("source") == "remote", "load-outcome",
                          "remote answered 200 with a valid feed, source is %r" % report.get("source"), o)
                self.fail(same_json(report.get("items"), plan["items"]), "payload-altered",
                          "items printed differ from the feed served: %s vs %s" % (short(report.get("items")), short(plan["items"])), o)
                ts = parse_iso(str(report.get("timestamp")))
                if in_range(save_ts):
                    self.fail(ts is not None and abs(ts - save_ts) < 0.001, "load-output",
                              "timestamp %r is not %s %s" % (report.get("timestamp"), "the first page's time" if "save_ts" in plan
                                                              else "the clock", iso(save_ts)), o)
                self.check_more(o, report, plan)
                cached = report.get("cached", True)
                self.fail(isinstance(cached, bool), "load-output", "'cached' is %r, not a boolean" % (cached,), o)
                if cached is True:
                    # Its request began with the log where its own save starts (alone), or at the
                    # snapshot's last seq or later (beside other writers): what its put records.
                    self.pending.append(Save(key, save_ts, plan["items"], o.cmd, self.soak.step,
                                             since="alone" if candidates is None else snap.last))
                    self.fail(fits, "unsaved-reported-cached",
                              "a %d-byte key (over LMDB's %d) cannot be saved, yet load says it cached it (exit 0%s)"
                              % (len(key.bytes), MAX_KEY_BYTES, "" if "cached" in report else ", no 'cached' field"), o)
                    if want_save == "superseded":
                        live = snap.judged_live_put(key.bytes)
                        self.fail(False, "older-save-cached", "a save whose request began at seq %d replaced the newer cache of %r "
                                  "(seq %d, its fetch begun at %s)" % (snap.last, short(key.name), live.seq, live.since), o)
                else:
                    self.fail(False, "load-outcome", "exit 0 although the feed was not cached", o)
            elif o.rc != 0:
                # Not cached: the honest answer is exit 1 ("cached": false when JSON is printed), or
                # 64 for a key no database can hold; and only when the save could not be made.
                if report is not None:
                    self.fail(report.get("cached") is False, "load-output", "exit %d with JSON that does not say cached:false" % o.rc, o)
                self.fail(o.rc == 1 or o.rc == 64 and not fits, "load-outcome",
                          "remote answered 200 with a valid feed: exit %d" % o.rc, o)
                if want_save == "superseded" and fits:
                    self.met("older save refused")
                    # The older save writes nothing, says so, and still prints what the remote sent.
                    self.fail(NOT_CACHED in o.err and NEWER in o.err, "superseded-save", "a save older than the live cache: exit %d "
                              "without saying the items were not cached for a newer cache" % o.rc, o)
                    if report is not None:
                        self.fail(report.get("source") == "remote" and same_json(report.get("items"), plan["items"]),
                                  "superseded-save", "a save older than the live cache printed source %r, items %s" % (
                                      report.get("source"), short(report.get("items"))), o)
                elif want_save == "saved" and fits and not self.disk_limited:
                    refused = NEWER in o.err
                    why = ""
                    if refused:
                        live = snap.stored.get(key.bytes)
                        why = " (it kept the live entry, %s, which does not read back: no cache to keep)" % (
                            "seq %d stamped %s" % (live[0], iso(entry_ts(live)) if in_range(entry_ts(live)) else entry_ts(live))
                            if live else "a damaged state row")
                    self.fail(False, "superseded-by-unreadable-cache" if refused else "load-outcome",
                              "a valid feed under a %d-byte key on a disk with room was not cached: exit %d%s" % (
                                  len(key.bytes), o.rc, why), o)
            return
        # The remote failed: the cache when it is fresh and readable, else exit 3.
        if mode in ("500", "garbage"):
            self.fail(hits == 1 + plan["retries"], "load-requests",
                      "invalid data with --retries %d: %d requests, expected %d" % (plan["retries"], hits, 1 + plan["retries"]), o)
        if candidates is not None:
            # Concurrent writers of the key: any of their payloads, or exit 3.
            if o.rc == 0 and report is not None:
                self.fail(report.get("source") == "cache", "load-outcome", "remote failed, source %r" % report.get("source"), o)
                self.fail(any(same_json(report.get("items"), c) for c in candidates), "load-outcome",
                          "fallback items match no version of the key: %s" % short(report.get("items")), o)
            else:
                self.fail(o.rc in (1, 3), "load-outcome", "remote failed: exit %d" % o.rc, o)
            return
        want = self.expect_fallback(snap, key, now, max_age)
        if want[0] == "cache":
            if self.fail(o.rc == 0, "load-fallback", "remote %s, fresh readable cache (cached %s): exit %d, expected 0 from cache"
                         % (mode, iso(want[2]) if in_range(want[2]) else want[2], o.rc), o) and report is not None:
                self.judge_served(o, report, want, plan)
        else:
            self.fail(o.rc == 3, "load-fallback", "remote %s and %s: exit %d, expected 3%s" % (
                mode, want[1], o.rc, (" (served %s)" % short(report.get("items"))) if report else ""), o)

    def judge_served(self, o, report, want, plan):
        """A load the cache answered: its items, its timestamp and (a search) whether there is more."""
        self.fail(report.get("source") == "cache", "load-fallback", "source %r, expected cache" % report.get("source"), o)
        self.fail(same_json(report.get("items"), want[1]), "load-fallback",
                  "cache served %s, the log holds %s" % (short(report.get("items")), short(want[1])), o)
        ts = parse_iso(str(report.get("timestamp")))
        if in_range(want[2]):
            self.fail(ts is not None and abs(ts - want[2]) < 0.001, "load-output",
                      "timestamp %r, the cache was saved at %s" % (report.get("timestamp"), iso(want[2])), o)
        self.check_more(o, report, plan, want[3])

    def step_load(self, key=None, mode=None, same=None, retries=None, strategy=None, now=None):
        key = key or self.key_for()
        if mode is None:
            mode = self.rng.choices(["ok", "slow", "500", "garbage", "unreachable"], [50, 8, 14, 14, 14])[0]
        if retries is None:
            retries = self.rng.choice([0, 0, 0, 1, 2])
        if strategy is None:
            strategy = "cache-first" if self.rng.random() < 0.2 else "remote-first"
        snap = self.snap
        cmd, plan = self.plan_load(key, mode, same, retries, strategy=strategy, now=now)
        last_before = snap.last
        o = self.run(cmd)
        self.judge_load(o, plan, snap)
        self.after_serial_load(o, plan, last_before)
        return o, plan

    def after_serial_load(self, o, plan, last_before):
        key = plan["key"]
        if self.pending and self.pending[-1].cmd is o.cmd:
            self.expect_live[key.bytes] = "pending"
            if key.bytes in self.damaged:
                self.damaged.discard(key.bytes)
            plan["key"].last_body, plan["key"].last_items = plan["body"], plan["items"]
        else:
            # Nothing reported as cached: nothing may have been appended.
            snap = self.read()
            self.fail(snap.last == last_before, "unreported-write",
                      "load did not report a save (exit %s) but the log grew from seq %d to %d" % (o.rc, last_before, snap.last), o)

    # ---- steps

    def step_burst(self):
        """Several processes at once: loads on distinct and equal keys, readers, maybe a writer of
        maintenance, and maybe SIGKILL of one of them."""
        snap = self.snap
        clean = not expected_problems(snap).required
        n = self.rng.randint(2, 5)
        shared = self.key_for()
        jobs = []
        for _ in range(n):
            roll = self.rng.random()
            if roll < 0.6:
                key = shared if self.rng.random() < 0.5 else self.key_for()
                mode = self.rng.choices(["ok", "slow", "500", "unreachable"], [60, 15, 15, 10])[0]
                cmd, plan = self.plan_load(key, mode, retries=0)
                plan["beside"] = True
                jobs.append(("load", cmd, plan))
            else:
                what = self.rng.choice(["verify", "state", "replay", "stats", "audit", "validate", "compact", "rebuild", "follow"])
                if what == "rebuild" and not self.soak.has_rebuild:
                    what = "verify"
                if what == "verify":
                    cmd = self.cmd("verify", "--format", "json")
                elif what == "state":
                    cmd = self.cmd("state", "--format", "json")
                elif what == "replay":
                    cmd = self.cmd("replay", "--format", "jsonl")
                elif what == "stats":
                    cmd = self.cmd("stats", "--format", "json")
                elif what == "audit":
                    cmd = self.cmd("audit", "--format", "json", "--max-age", self.max_age_text)
                elif what == "validate":
                    cmd = self.cmd("validate", "--max-age", self.max_age_text, "--format", "json")
                elif what == "compact":
                    cut = self.rng.randint(snap.base + 1, snap.last + 1) if snap.last else 1
                    cmd = self.cmd("compact", "--before", str(cut))
                elif what == "rebuild":
                    cmd = self.cmd("rebuild")
                else:
                    cmd = self.cmd("replay", "--follow", "--format", "jsonl")
                jobs.append((what, cmd, None))
        # A save never replaces a newer cache, by the log's order: every request here begins
        # with the log at the snapshot's last seq or later, so no live put of the snapshot is
        # newer, and a load alone on its key saves; of loads of one key that overlap, the one
        # that lands first saves and a later one may be refused (which is checked after).
        for what, _, plan in jobs:
            if what == "load":
                plan["save"] = self.expected_save(snap, plan["key"].bytes, snap.last)
                if any(other is not plan and other["key"].bytes == plan["key"].bytes and other["mode"] in ("ok", "slow")
                       for w, _, other in jobs if w == "load"):
                    plan["save"] = None
        victim = self.rng.randrange(len(jobs)) if self.rng.random() < 0.35 else None
        delay = self.rng.uniform(0.0, 0.4)
        if self.soak.verbose:
            for _, cmd, _ in jobs:
                print("    & " + cmd.shell(self.soak.display), flush=True)
        running = [self.runner.launch(cmd, self.dir) for _, cmd, _ in jobs]
        follow = [r for (what, _, _), r in zip(jobs, running) if what == "follow"]
        if victim is not None:
            time.sleep(delay)
            self.runner.kill(running[victim])
        for r, (what, _, _) in zip(running, jobs):
            if what != "follow":
                try:
                    r.popen.wait(timeout=PROCESS_TIMEOUT)
                except subprocess.TimeoutExpired:
                    pass
        for r in follow:
            self.runner.kill(r, signal.SIGINT)
        outcomes = [self.runner.finish(r) for r in running]
        self.check_refusals([(plan, o) for (what, _, plan), o in zip(jobs, outcomes) if what == "load"], snap)
        writers = {}
        for (what, _, plan), o in zip(jobs, outcomes):
            if what == "load" and plan["mode"] in ("ok", "slow"):
                writers.setdefault(plan["key"].bytes, []).append(plan["items"])
        for (what, cmd, plan), o in zip(jobs, outcomes):
            self.basic(o)
            if what == "load":
                k = plan["key"].bytes
                cands = None
                if k in writers:
                    cands = list(writers[k])
                    try:
                        value = snap.live_value(k)
                        if value is not None:
                            cands.append(value[0])
                    except OracleError:
                        pass
                self.judge_load(o, plan, snap, candidates=cands)
                if plan["mode"] in ("ok", "slow"):
                    self.uncertain.add(k)
                    if not o.killed:
                        plan["key"].last_body, plan["key"].last_items = plan["body"], plan["items"]
            elif o.killed or o.rc is None or o.rc < 0:
                if what in ("validate", "compact", "rebuild"):
                    self.uncertain.update(self.expect_live)
            elif what == "verify" and clean and o.json is not None and not any(
                    what2 in ("compact", "rebuild", "validate") and r.killed for (what2, _, _), r in zip(jobs, running)):
                self.fail(o.rc == 0 and o.json.get("clean") is True and not o.json.get("problems"), "verify-false-alarm",
                          "verify during concurrent appends to a clean log reports %s" % short(o.json.get("problems")), o)
            elif what in ("validate", "compact", "rebuild"):
                # Without its base checkpoint the log before the cut is unknown: refusing is honest.
                self.fail(o.rc == 0 or (what != "validate" and snap.base_checkpoint_damaged) or self.unknowable(snap), "maintenance-failed",
                          "%s alongside loads: exit %d" % (what, o.rc), o)
                self.uncertain.update(self.expect_live)
            elif what == "follow" and isinstance(o.json, list):
                seqs = [d.get("seq") for d in o.json]
                self.fail(seqs == sorted(seqs) and len(set(seqs)) == len(seqs), "replay-mismatch",
                          "replay --follow printed seqs out of order: %s" % short(seqs), o)
            if what == "replay" and isinstance(o.json, list) and clean and o.rc == 0 and "compact" not in [j[0] for j in jobs]:
                seqs = [d.get("seq") for d in o.json]
                base = snap.base
                tail = [s for s in seqs if isinstance(s, int) and s > base]
                # A prefix of the log: every record up to the last printed, but what retention let
                # go meanwhile (history, which it may or may not have printed) or had let go before.
                after = self.read()
                top = tail[-1] if tail else base
                must = {q for q in range(base + 1, top + 1) if q in after.events}
                may = must | set(snap.events) | {q for q in range(snap.last + 1, after.last + 1) if q not in after.events}
                self.fail(tail == sorted(set(tail)) and must <= set(tail) <= may, "replay-mismatch",
                          "replay during appends is not a prefix of the log: %s (missing %s)" % (short(tail), short(sorted(must - set(tail)))), o)
        self.saw_kill = victim is not None

    def step_first_open(self):
        """The very first open of a brand-new database by several processes at once."""
        given_mode = None
        if self.rng.random() < 0.5:
            os.makedirs(self.db)
            given_mode = os.stat(self.db).st_mode & 0o777
        n = self.rng.randint(3, 6)
        jobs = []
        for i in range(n):
            key = self.keys[i % len(self.keys)]
            cmd, plan = self.plan_load(key, "ok", same=False)
            jobs.append((cmd, plan))
        for _ in range(self.rng.randint(0, 3)):
            jobs.append((self.cmd(self.rng.choice(["state", "verify", "stats"]), "--format", "json"), None))
        if self.soak.verbose:
            for cmd, _ in jobs:
                print("    & " + cmd.shell(self.soak.display), flush=True)
        running = [self.runner.launch(cmd, self.dir) for cmd, _ in jobs]
        outcomes = [self.runner.finish(r) for r in running]
        empty = Snap(self.db + ".none", {})
        loads = [(plan, o) for (_, plan), o in zip(jobs, outcomes) if plan is not None]
        self.check_refusals(loads, empty)
        for (cmd, plan), o in zip(jobs, outcomes):
            self.basic(o)
            if plan is None:
                # A reader may come before there is any database: "no CacheLog database", exit 1.
                self.fail(o.rc == 0 or o.rc == 1 and "no CacheLog database" in o.err, "concurrent-first-open",
                          "a reader while %d processes create the database: exit %d" % (n, o.rc), o)
                continue
            # Two loads of one key, both begun on the empty log: the first to land stays, and the
            # other is refused (exit 1; check_refusals judged it).
            shared = any(other is not plan and other["key"].bytes == plan["key"].bytes for other, _ in loads)
            if shared:
                plan["save"] = None
            if not self.fail(o.rc == 0 or shared and o.rc == 1 and NEWER in o.err, "concurrent-first-open",
                             "%d processes creating one database at once: exit %d" % (n, o.rc), o):
                continue
            self.judge_load(o, plan, empty, candidates=[plan["items"]])
            plan["key"].last_body, plan["key"].last_items = plan["body"], plan["items"]
            self.uncertain.add(plan["key"].bytes)
        # README: the directory the tool makes is 0700, one it is given keeps its mode; the
        # LMDB files are 0600 (less what the umask removes).
        umask = os.umask(0)
        os.umask(umask)
        want = {"": given_mode if given_mode is not None else 0o700 & ~umask,
                "data.mdb": 0o600 & ~umask, "lock.mdb": 0o600 & ~umask}
        have = {name: os.stat(os.path.join(self.db, name)).st_mode & 0o777
                for name in want if os.path.exists(os.path.join(self.db, name))}
        self.fail(all(have[name] == want[name] for name in have), "file-modes",
                  "modes %s, expected %s" % ({n or "db": oct(m) for n, m in have.items()}, {n or "db": oct(m) for n, m in want.items()}))

    def step_validate(self, key=None, max_age_text=None):
        snap = self.snap
        now = self.now
        # One max age for every key, or (without --max-age) each key's recorded policy.
        if max_age_text is None and self.rng.random() < 0.7:
            max_age_text = self.max_age_text
        given = [] if max_age_text is None else ["--max-age", max_age_text]
        keys = [key.bytes] if key else sorted(set(snap.stored) | snap.malformed)
        expected, judged_by, stamps = {}, {}, {}
        for k in keys:
            if k in snap.malformed or k in self.state_faults:
                expected[k] = None  # a damaged row: any outcome (or none), but the others go on
                continue
            entry = snap.stored.get(k)
            if entry is None:
                expected[k] = "empty"
                continue
            try:
                snap.payload(entry[0], None)
                rec = snap.events[entry[0]]
                judged_by[k] = rec.recorded_max_age if max_age_text is None else self.max_age_seconds(max_age_text)
                stamps[k] = entry_ts(entry)
                # The trusted timestamp judges: a cache stamped in the future is expired too.
                expected[k] = "fresh" if is_fresh(rec.ts, rec.recorded_at, now, judged_by[k]) else "expired"
                if trusted_timestamp(rec.ts, rec.recorded_at) > now:
                    self.met("validate of a future-stamped cache")
                if k in self.absurd:
                    expected[k] = None
            except OracleError:
                expected[k] = "deleted"
        # validate --key with a key the log never held is an error (validate --help); a key
        # whose records the harness damaged may be indexed under bytes it no longer shows.
        never_held = key is not None and not any(r.key == key.bytes for r in snap.events.values())
        dry = None
        if self.soak.has_dry_run and self.rng.random() < 0.4:
            args = ["validate", "--dry-run"] + given + ["--format", "json"] + (key_args(key.name) if key else [])
            dry = self.run(self.cmd(*args, now=now))
            after = self.read()
            self.fail(after.last == snap.last, "dry-run-wrote", "validate --dry-run appended seqs %d..%d" % (snap.last + 1, after.last), dry)
        args = ["validate"] + given + ["--format", "json"] + (key_args(key.name) if key else [])
        o = self.run(self.cmd(*args, now=now))
        self.check_clock_warning(o, snap, now)
        after = self.read()
        # What a pressing size limit evicted after validate's commit is retention's (check() judges it).
        new = [after.events[s] for s in after.seqs if s > snap.last and not (after.events[s].kind == DELETE and after.events[s].reason == EVICTED)]
        if o.rc == 64 and max_age_text in (HUGE_DAYS, HUGE_SECONDS):
            self.fail(not new, "unreported-write", "validate refused its --max-age yet appended", o)
            return o  # refusing an absurd max age as a usage error is fine
        if never_held and (key.bytes not in self.damaged or o.rc == 1):
            self.fail(o.rc == 1 and not new, "validate-outcome", "validate --key %r, a key the log never held: exit %d%s, expected 1" % (
                short(key.name), o.rc, ", appended" if new else ""), o)
            return o
        hopeless = self.unknowable(snap)
        if not self.fail(o.rc == 0 or hopeless, "validate-failed", "validate exit %d%s" % (
                o.rc, " (a damaged state row must not stop it)" if snap.malformed else ""), o) or o.rc != 0:
            # Even when it fails it must not have stopped the other keys… only checkable when it reports.
            # What it did append for the keys it could judge is in the log: the model follows it.
            for r in new:
                if r.kind in (DELETE, EXPIRE) and r.key in self.expect_live:
                    self.expect_live[r.key] = None
            return o
        reported = {}
        if isinstance(o.json, list):
            for item in o.json:
                if isinstance(item, dict):
                    reported[str(item.get("key")).encode("utf-8", "surrogatepass")] = item.get("outcome")
        else:
            self.fail(False, "validate-output", "validate --format json printed %s" % short(o.out), o)
            return o
        ages = {str(i.get("key")).encode("utf-8", "surrogatepass"): i.get("age") for i in o.json if isinstance(i, dict)}
        for k, want in expected.items():
            got = reported.get(k)
            if want is None:
                continue
            if not self.fail(got == want, "validate-outcome", "key %r: %s, expected %s%s" % (
                    short(k.decode("utf-8", "replace")), got, want, " (cached %s, judged at %s by %ds)" % (
                        iso(stamps[k]), iso(now), judged_by[k]) if k in stamps and in_range(stamps[k]) else ""), o):
                continue
            if k in stamps and in_range(stamps[k]):
                # The JSON's age is still now - timestamp (negative for a cache stamped in the future).
                age = ages.get(k)
                self.fail(isinstance(age, (int, float)) and abs(age - (now - stamps[k])) < 0.001, "validate-output",
                          "key %r: age %r, expected %s (now - timestamp)" % (short(k.decode("utf-8", "replace")), age, now - stamps[k]), o)
        extra = set(reported) - set(expected) - self.state_faults
        self.fail(not extra, "validate-outcome", "reported keys that are not live: %s" % short(sorted(extra)), o)
        if dry is not None and isinstance(dry.json, list):
            dry_map = {str(i.get("key")).encode(): i.get("outcome") for i in dry.json if isinstance(i, dict)}
            self.fail(dry_map == reported, "dry-run-outcome", "validate --dry-run said %s, validate did %s" % (
                short(dry_map), short(reported)), dry)
        # The events appended are exactly the outcomes: delete(retrieval-error) or expire(ts, max age).
        want_events = sorted((("delete" if reported.get(k) == "deleted" else "expire"), k) for k in reported
                             if reported.get(k) in ("deleted", "expired"))
        got_events = sorted((KIND_NAMES.get(r.kind, "?"), r.key) for r in new)
        self.fail(want_events == got_events, "validate-events", "appended %s for outcomes %s" % (
            short(got_events), short(want_events)), o)
        for r in new:
            if r.kind == DELETE:
                self.fail(r.reason == 3, "validate-events", "delete of %r has reason %s, not retrieval-error" % (r.key, r.reason), o)
            if r.kind == EXPIRE and r.key in judged_by:
                self.fail(r.max_age == float(judged_by[r.key]), "validate-events", "expire of %r records max age %r, not %d" % (
                    r.key, r.max_age, judged_by[r.key]), o)
        for k, outcome in reported.items():
            if outcome in ("deleted", "expired") and k in self.expect_live:
                self.expect_live[k] = None
        return o

    def step_compact(self, cut=None):
        snap = self.snap
        if snap.last == 0:
            return
        if cut is None:
            if self.rng.random() < 0.3 and snap.seqs:
                when = snap.events[self.rng.choice(snap.seqs)].recorded_at
                if math.isfinite(when) and -6e10 < when < 2.5e11:
                    cut = iso(when)
            if cut is None:
                cut = str(self.rng.randint(max(1, snap.base), snap.last + 1))
        cmd = self.cmd("compact", "--before", cut)
        o = self.run(cmd)
        damaged_rows = bool(snap.malformed)
        base_ck_bad = snap.base > 0 and snap.decoded_checkpoints.get(snap.base) is None
        self.fail(o.rc == 0 or base_ck_bad, "compact-failed", "compact exit %d%s" % (
            o.rc, " (with a damaged state row)" if damaged_rows else ""), o)
        if o.rc != 0:
            return
        after = self.read()
        # Exactly what Format.md says is kept: the live puts, their payload records, the puts of
        # the state at the cut and theirs, and every record a later put refers to.
        cut_seq = int(cut) if cut.isdigit() else (snap.resolve_date(parse_iso(cut), upper=False) or snap.last + 1)
        cut_seq = min(cut_seq, snap.last + 1)
        if cut_seq <= snap.base + 1:
            # Such a cut removes nothing, but compact writes, so it runs the retention pass due at
            # its clock as every writer does (retention --help: every process that writes the
            # database applies the policy as it goes), as after any cut below: what that pass let
            # go (every record is at or after the cut) check() judges by the retention rule. The
            # cut's own change is none: the base stays, and records go only with a pass that ran.
            gone = [q for q in snap.seqs if q not in after.events]
            ran = after.retention_report is not None and after.retention_report != snap.retention_report
            appended = [q for q in after.seqs if q > snap.last]
            self.fail(after.base == snap.base and (not gone or ran and len(gone) <= after.retention_report[1])
                      and all(after.events[q].kind == DELETE and after.events[q].reason == EVICTED for q in appended),
                      "compact-result", "a cut at or before the base changed the log: base %d to %d, seqs %s gone%s, %s appended" % (
                          snap.base, after.base, short(gone), "" if ran else " with no retention pass", short(appended)), o)
            if gone and ran:
                self.met("compact's retention pass let history go")
            return
        intact = not expected_problems(snap).required
        keep = {snap.retention_seq} - {0}  # the record of the policy in effect, whatever its age
        for entry in snap.stored.values():
            keep.update((entry[0], entry[3]))
        if intact:
            for entry in snap.fold(cut_seq - 1).values():
                keep.update((entry[0], entry[3]))
        for s in snap.seqs:
            r = snap.events[s]
            if s >= cut_seq and r.framing_ok and r.kind == PUT and r.ref is not None and r.ref < cut_seq:
                keep.add(r.ref)
        want = sorted(s for s in snap.seqs if s >= cut_seq or s in keep)
        if intact:
            # A date falls between two stored records; the seqs missing between them (history
            # retention let go) were recorded at unknown times in between, so the cut may be at
            # any of them: what is kept is the same.
            lowest = cut_seq
            if not cut.isdigit():
                while lowest - 1 > snap.base and lowest - 1 not in snap.events:
                    lowest -= 1
            self.fail(lowest - 1 <= after.base <= cut_seq - 1, "compact-result", "baseSeq %d after a cut at seq %d%s" % (
                after.base, cut_seq, " (or, as seqs %d to %d are gone, at one of them)" % (lowest, cut_seq - 1) if lowest < cut_seq else ""), o)
            # compact then runs the retention pass due (at its clock), which may let history go:
            # what went at or after the cut check() judges; before it, only a record compaction
            # kept for the state at the cut, live no more and outside its window at that clock.
            went = set(want) - set(after.seqs)
            if after.retention_report is not None and after.retention_report != snap.retention_report:
                clock = after.retention_report[0]  # its own, or that of a pass under way it finished
                needed = {r.ref for r in after.events.values() if r.framing_ok and r.kind == PUT and r.ref is not None}
                for entry in after.stored.values():
                    needed.update((entry[0], entry[3]))
                contracts = self.contracts_now(snap)
                for q in sorted(went):
                    r = snap.events[q]
                    window = after.policy().window(r.key, contracts.get(r.key))
                    if q >= cut_seq or q not in needed and r.kind != RETENTION and window is not None and r.recorded_at < clock - window:
                        self.met("compact's retention pass let history go")
                        want.remove(q)
            self.fail(after.seqs == want, "compact-result", "records kept %s, Format.md keeps %s" % (
                short(sorted(set(after.seqs) ^ set(want))), "the live puts, their payloads and referenced records"), o)
            ck = after.decoded_checkpoints.get(after.base)
            self.fail(ck is not None and ck == snap.fold(after.base), "compact-result",
                      "the checkpoint at the new base is not the state as of seq %d" % after.base, o)
        # Reported saves dropped legitimately: before the cut and not in use.
        self.saves = [s for s in self.saves if s.seq in after.events or s.seq >= cut_seq]

    def step_rebuild(self):
        if not self.soak.has_rebuild:
            return
        snap = self.snap
        o = self.run(self.cmd("rebuild"))
        base_ok = snap.base_state() is not None and (snap.base == 0 or snap.decoded_checkpoints.get(snap.base) is not None)
        self.fail(o.rc == 0 or not base_ok, "rebuild-failed", "rebuild exit %d" % o.rc, o)
        if o.rc != 0:
            return
        after = self.read()
        if base_ok:
            folded = after.fold()
            # Keys that are not UTF-8 (only a flipped key byte makes one) come back with U+FFFD.
            altered = {lossy(k) for k in folded if lossy(k) != k} | {k for k in folded if lossy(k) != k}
            diff = {k.decode("utf-8", "replace"): (after.stored.get(k), folded.get(k))
                    for k in set(folded) | set(after.stored) if after.stored.get(k) != folded.get(k) and k not in altered}
            self.fail(not diff and not after.malformed, "rebuild-result",
                      "after rebuild the state table is not the fold of the log: %s (table, fold)" % short(diff, 400), o)
            for seq, decoded in after.decoded_checkpoints.items():
                self.fail(decoded is not None and (seq <= after.base or decoded == after.fold(seq)), "rebuild-result",
                          "after rebuild the checkpoint at seq %d is %s" % (seq, "damaged" if decoded is None else "not the fold"), o)
        self.state_faults.clear()

    def step_replay(self):
        snap = self.snap
        args = ["replay"]
        fmt = self.rng.choice(["jsonl", "jsonl", "text"])
        key = None
        if self.rng.random() < 0.3:
            key = self.key_for()
            args += key_args(key.name)
        if self.rng.random() < 0.2:
            args += ["--type", self.rng.choice(["put", "delete", "expire"])]
        lo = hi = None
        if self.rng.random() < 0.3 and snap.last:
            lo = self.rng.randint(0, snap.last + 1)
            args += ["--from", str(lo)]
        if self.rng.random() < 0.3 and snap.last:
            hi = self.rng.randint(0, snap.last + 1)
            args += ["--to", str(hi)]
        limit = None
        if self.rng.random() < 0.2:
            limit = self.rng.randint(0, 5)
            args += ["--limit", str(limit)]
        reverse = self.rng.random() < 0.2
        if reverse:
            args.append("--reverse")
        payload = self.rng.random() < 0.3
        if payload:
            args.append("--payload")
        args += ["--format", fmt]
        o = self.run(self.cmd(*args))
        self.fail(o.rc == 0, "replay-failed", "replay exit %d" % o.rc, o)
        if fmt != "jsonl" or o.rc != 0 or not isinstance(o.json, list) and o.out.strip():
            return
        docs = o.json or []
        types = None
        if "--type" in args:
            types = {args[args.index("--type") + 1]}
        want = []
        for s in snap.seqs:
            r = snap.events[s]
            if lo is not None and s < lo or hi is not None and s > hi:
                continue
            if not r.intact:
                want.append((s, "corrupt", None))
                continue
            if key is not None and r.key != key.bytes:
                continue
            if types and KIND_NAMES[r.kind] not in types:
                continue
            want.append((s, KIND_NAMES[r.kind], r))
        if key is not None or types:
            want = [w for w in want if w[1] != "corrupt"]
            docs = [d for d in docs if d.get("type") != "corrupt"]
        if reverse:
            want.reverse()
        if limit is not None:
            want = want[:limit]
        damaged = any(not snap.events[s].intact for s in snap.seqs)
        got = [(d.get("seq"), d.get("type")) for d in docs]
        exp = [(w[0], w[1]) for w in want]
        if damaged and (limit is not None or key is not None or types):
            return

        def unreadable(w):
            # With --payload, a put whose payload lives in a damaged record may print as corrupt.
            if not payload or w[1] != "put":
                return False
            try:
                snap.payload(w[0])
                return False
            except OracleError:
                return True

        same = len(got) == len(exp) and all(
            g[0] == w[0] and (g[1] == w[1] or g[1] == "corrupt" and unreadable(w)) for g, w in zip(got, want))
        diff = [(g, e) for g, e in zip(got, exp) if g != e][:4]
        self.fail(same, "replay-mismatch", "replay printed %d events, the log holds %d; first differences %s" % (
            len(got), len(exp), short(diff, 300)), o)
        if not same:
            return
        for d, (s, kind, r) in zip(docs, want):
            if r is None or d.get("type") == "corrupt":
                continue
            ok = d.get("key") == r.key.decode("utf-8", "replace")
            if kind == "put":
                ok = ok and d.get("bytes") == r.payload_len
                if payload:
                    try:
                        ok = ok and same_json(d.get("payload"), json.loads(snap.payload(s)))
                    except (OracleError, ValueError):
                        pass
            if kind == "delete":
                ok = ok and d.get("reason") == REASONS.get(r.reason)
            if not self.fail(ok, "replay-mismatch", "seq %d printed as %s, the record says %s %r" % (
                    s, short(d), kind, r.key_text()), o):
                break

    def step_state_as_of(self):
        snap = self.snap
        use_date = self.rng.random() < 0.35 and snap.seqs
        if use_date:
            r = snap.events[self.rng.choice(snap.seqs)]
            if not (math.isfinite(r.recorded_at) and -6e10 < r.recorded_at < 2.5e11):
                return
            when = r.recorded_at + self.rng.choice([0, 0, -1, 1])
            position = iso(when)
            seq = snap.resolve_date(when, upper=True) or 0
        else:
            seq = self.rng.randint(0, snap.last + 2)
            position = str(seq)
        key = self.key_for() if self.rng.random() < 0.3 else None
        args = ["state", "--as-of", position, "--format", "json"] + (key_args(key.name) if key else [])
        o = self.run(self.cmd(*args))
        if not use_date and seq > snap.last:
            # state --help: one past the end of the log is an error (the log ends at its last seq).
            self.fail(o.rc == 1 and not o.out.strip(), "state-as-of", "state --as-of %d on a log ending at seq %d: exit %d, expected 1" % (
                seq, snap.last, o.rc), o)
            return
        damaged_ck = [s for s, d in snap.decoded_checkpoints.items() if d is None]
        if use_date and any(not snap.events[s].intact for s in snap.seqs):
            # A damaged recordedAt breaks the order a date is searched in: any answer or a refusal.
            self.fail(o.rc in (0, 1), "state-as-of", "state --as-of a date on a damaged log: exit %d" % o.rc, o)
            return
        if seq < snap.base:
            self.fail(o.rc == 1, "state-as-of", "as of seq %d, before the compacted base %d: exit %d, expected 1 (history compacted)" % (
                seq, snap.base, o.rc), o)
            return
        base_known = snap.base_state() is not None
        if snap.base in damaged_ck and o.rc == 1:
            return  # honest: the state at the base is only in that checkpoint
        trimmed = snap.trimmed_past(seq)
        if key is not None and key.bytes in trimmed:
            # One key as of a point its history was trimmed past: not known there, and said so.
            self.met("state --as-of a trimmed key")
            self.fail(o.rc == 1 and "trimmed" in o.err and not o.out.strip(), "state-as-of",
                      "state --as-of %s --key %r, whose history retention trimmed to seq %d: exit %d, %s" % (
                          position, short(key.name), snap.trims[key.bytes], o.rc, short(o.out or o.err)), o)
            return
        if not self.fail(o.rc == 0, "state-as-of", "state --as-of %s exit %d%s" % (
                position, o.rc, " (a damaged checkpoint must fall back)" if damaged_ck else ""), o):
            return
        if not isinstance(o.json, dict) or not base_known:
            return
        # The keys whose history retention trimmed past that point are left out, and named.
        named = {str(k).encode("utf-8", "surrogatepass") for k in o.json.get("trimmed") or []}
        want_named = {k for k in trimmed if lossy(k) == k and (key is None or k == key.bytes)}
        if want_named:
            self.met("state --as-of leaves trimmed keys out")
        self.fail(named == want_named, "state-as-of", "as of %s: trimmed %s, the trims table says %s" % (
            position, short(sorted(named)), short(sorted(want_named))), o)
        want = {k: v for k, v in snap.fold(seq).items() if k not in trimmed}
        if key is not None:
            want = {k: v for k, v in want.items() if k == key.bytes}
        got = {}
        for item in o.json.get("entries", []):
            got[str(item.get("key")).encode("utf-8", "surrogatepass")] = item.get("seq")
        exp = {k: v[0] for k, v in want.items()}
        # Keys that do not decode as UTF-8 come back altered; compare the rest.
        exp = {k: v for k, v in exp.items() if k.decode("utf-8", "replace").encode() == k}
        got = {k: v for k, v in got.items() if k in exp or "\ufffd" not in k.decode("utf-8", "replace")}
        self.fail(got == exp, "state-as-of", "as of %s: %s, the fold of the log gives %s" % (position, short(got), short(exp)), o)
        self.fail(o.json.get("seq") == seq, "state-as-of", "as of %s reports seq %s, expected %d" % (position, o.json.get("seq"), seq), o)

    def step_inspect(self):
        snap = self.snap
        what = self.rng.choice(["stats", "audit", "audit-key", "audit-text", "stats-text", "replay-text", "searches"])
        if what == "searches":
            self.step_searches()
        elif what == "stats":
            o = self.run(self.cmd("stats", "--format", "json"))
            if o.rc == 0 and isinstance(o.json, dict) and not expected_problems(snap).required:
                counts = {"put": 0, "delete": 0, "expire": 0, "retention": 0}
                for r in snap.events.values():
                    counts[KIND_NAMES[r.kind]] += 1
                ev = o.json.get("events", {})
                self.fail(all(ev.get(k) == v for k, v in counts.items()), "stats-mismatch",
                          "stats counts %s, the log holds %s" % (short(ev), counts), o)
                per_key = {}
                for r in snap.events.values():
                    if r.kind != RETENTION:  # about no key
                        per_key[r.key] = per_key.get(r.key, 0) + 1
                got = {str(k).encode(): v.get("total") for k, v in o.json.get("keys", {}).items() if isinstance(v, dict)}
                self.fail(got == per_key, "stats-mismatch", "stats per key %s, the log holds %s" % (short(got), short(per_key)), o)
            self.fail(o.rc == 0, "inspect-failed", "stats exit %d" % o.rc, o)
        elif what.startswith("audit"):
            args = ["audit", "--max-age", self.max_age_text]
            key = None
            if what == "audit-key":
                key = self.key_for()
                args += key_args(key.name)
            args += ["--format", "text" if what == "audit-text" else "json"]
            o = self.run(self.cmd(*args))
            self.fail(o.rc == 0, "inspect-failed", "audit exit %d" % o.rc, o)
            if key is not None and o.rc == 0 and isinstance(o.json, dict):
                names = [k.get("key") for k in o.json.get("keys", []) if isinstance(k, dict)]
                self.fail(all(n == key.name for n in names), "key-merged", "audit --key %r lists %s" % (key.name, short(names)), o)
        elif what == "stats-text":
            o = self.run(self.cmd("stats"))
            self.fail(o.rc == 0, "inspect-failed", "stats exit %d" % o.rc, o)
        else:
            o = self.run(self.cmd("replay"))
            self.fail(o.rc == 0, "inspect-failed", "replay (text) exit %d" % o.rc, o)

    # ---- the new rules: clocks that disagree, searches, images

    def step_future_save(self):
        """A save with the clock ahead, then reads with the clock back where it was: a cache
        stamped in the future is never fresh. Remote first falls back to nothing, cache first
        asks the remote, state calls it not fresh, validate expires it. A later load replaces it
        whatever its stamp: its request began after that cache landed, which the log's order
        says, and no clock."""
        key = self.key_for()
        ahead = self.rng.choice([1, 90, 3600, self.max_age, 30 * 86400, 400 * 86400])
        self.step_load(key=key, mode="ok", same=False, retries=0, strategy="remote-first", now=self.now + ahead)
        self.check()
        for _ in range(self.rng.randint(1, 3)):
            what = self.rng.choice(["fallback", "cache-first", "remote", "validate"])
            if what == "fallback":
                self.step_load(key=key, mode=self.rng.choice(["500", "unreachable"]), retries=0, strategy="remote-first")
            elif what == "cache-first":
                self.step_load(key=key, mode="ok", retries=0, strategy="cache-first")
            elif what == "remote":
                self.step_load(key=key, mode="ok", retries=0, strategy="remote-first")
            else:
                self.step_validate(key=key)
            self.check()

    def step_race_clocks(self):
        """Concurrent saves of one key by processes with different clocks (a fixed --now each).
        Which save is newer is the log's order, never a clock: every request begins with the log
        at the snapshot's last seq or later, so no live put of the snapshot refuses a save; the
        first to land saves, and one that lands after a put whose request began no earlier than
        its own is refused (exit 1, "a newer cache" on stderr, nothing written), whatever the
        clocks say. check_refusals judges the refusals, check() the order of the puts that
        landed; the log gains one put per save reported cached."""
        snap = self.snap
        key = self.key_for()
        if len(key.bytes) > MAX_KEY_BYTES:
            return
        try:
            snap.judged_live_put(key.bytes)
        except OracleError:
            return
        offsets = [self.rng.choice([0, 0, -1, 1, -90, 90, -3600, 3600, -86400, 86400, -2 * 86400, 2 * 86400,
                                    -self.max_age, self.max_age // 2])
                   for _ in range(self.rng.randint(2, 4))]
        jobs = [self.plan_load(key, self.rng.choice(["ok", "ok", "slow"]), same=False, now=self.now + off) for off in offsets]
        for _, plan in jobs:
            plan["save"] = None  # the order of the requests and of the commits decides
        if self.soak.verbose:
            for cmd, _ in jobs:
                print("    & " + cmd.shell(self.soak.display), flush=True)
        self.met("concurrent saves with clocks apart")
        running = [self.runner.launch(cmd, self.dir) for cmd, _ in jobs]
        outcomes = [self.runner.finish(r) for r in running]
        self.check_refusals([(plan, o) for (_, plan), o in zip(jobs, outcomes)], snap)
        candidates = [plan["items"] for _, plan in jobs]
        saved = []
        for (cmd, plan), o in zip(jobs, outcomes):
            self.basic(o)
            self.judge_load(o, plan, snap, candidates=candidates)
            if o.rc == 0 and isinstance(o.json, dict) and o.json.get("cached") is True:
                saved.append(plan)
        self.uncertain.add(key.bytes)
        after = self.read()
        puts = [after.events[q] for q in after.seqs if q > snap.last and after.events[q].kind == PUT and after.events[q].key == key.bytes]
        clocks = ", ".join(iso(plan["now"]) for _, plan in jobs)
        # A put replaced within the step is history at once under a short window: retention may
        # have let it go before this read (a seq missing past the snapshot, that trims says the
        # key's history now starts after; check() judges what went).
        gone = [q for q in range(snap.last + 1, after.last + 1) if q not in after.events and after.trims.get(key.bytes, 0) > q]
        if len(puts) < len(saved) <= len(puts) + len(gone):
            self.met("a racing save's put let go within the step")
        self.fail(len(puts) <= len(saved) <= len(puts) + len(gone), "race-clocks",
                  "%d loads of %r (clocks %s) reported their feed cached; the log gained %d puts%s" % (
                      len(saved), short(key.name), clocks, len(puts), " (and retention let %d seqs of it go)" % len(gone) if gone else ""),
                  cmd=jobs[0][0])
        if puts:
            try:
                items = json.loads(after.payload(puts[-1].seq, key.bytes))
            except (OracleError, ValueError):
                items = None
            live = next((plan for plan in saved if items is not None and same_json(plan["items"], items)), None)
            if live is not None:
                key.last_body, key.last_items = live["body"], live["items"]

    def check_refusals(self, loads, snap):
        """Loads (plan, outcome) that ran at once, from `snap`: one refused for a newer cache
        (exit 1, "a newer cache" on stderr) must have met a put of its key that landed while it
        ran, after the snapshot: its request began with the log at the snapshot's last seq or
        later, and no put of the snapshot began its fetch there (so of loads of one key whose
        remote answered, the first to land saves)."""
        after = self.read()
        landed = {after.events[q].key for q in after.seqs if q > snap.last and after.events[q].kind == PUT}
        for plan, o in loads:
            if o.killed or o.rc != 1 or NEWER not in o.err:
                continue
            self.met("concurrent save refused for a newer cache")
            self.fail(plan["key"].bytes in landed, "superseded-save",
                      "a load of %r was refused for a newer cache, yet no put of the key landed while it ran (the log went "
                      "from seq %d to %d)" % (short(plan["key"].name), snap.last, after.last), o)

    # -- images

    def step_image(self):
        """`image URL`, a few times as the clock moves: cache first, judged by the trusted
        timestamp (a copy stamped in the future is asked for again); a copy from the remote is
        cached unless the live copy is newer (then exit 1, not cached); no copy and no remote,
        exit 3."""
        if not self.images or (len(self.images) < 3 and self.rng.random() < 0.25):
            first = b"\x89PNG" + self.rng.getrandbits(64).to_bytes(8, "big")
            self.images[self.server.add(200, first)] = first
        url = self.rng.choice(sorted(self.images))
        for i in range(self.rng.randint(1, 3)):
            if i:
                self.check()
                self.now += self.rng.randint(1, 600)
            self.image_once(url)

    def image_once(self, url):
        key = ("image:" + url).encode()
        mode = self.rng.choices(["ok", "same", "500", "empty"], [45, 20, 20, 15])[0]
        body = self.images[url]  # "same": the bytes it sent last (stored as a reference to them)
        if mode == "ok":
            body = self.images[url] = bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(1, 600)))
        if mode in ("ok", "same"):
            self.server.set(url, 200, body)
        elif mode == "500":
            self.server.set(url, 500, b"server error")
        else:
            self.server.set(url, 200, b"")  # an image is at least one byte
        now = self.now + self.rng.choice([0, 0, 0, 0, 0, 0, -60, -self.max_age, 3600])
        age_text = self.rng.choice([None, None, self.max_age_text, "1d"])
        args = ["image", url, "--format", "json"] + ([] if age_text is None else ["--max-age", age_text])
        snap = self.snap
        before = self.server.hits(url)
        o = self.run(self.cmd(*args, now=now))
        hits = self.server.hits(url) - before
        self.check_clock_warning(o, snap, now)
        after = self.read()
        new = [after.events[q] for q in after.seqs if q > snap.last]
        if new:
            self.uncertain.add(key)  # whatever the checks below say of it, the model follows the log
        report = o.json if isinstance(o.json, dict) else {}
        try:
            found = snap.live_bytes(key)
        except OracleError:
            found = None
        if found is not None:
            payload, rec = found
            judge_age = rec.recorded_max_age if age_text is None else self.max_age_seconds(age_text)
            if is_fresh(rec.ts, rec.recorded_at, now, judge_age):
                self.met("image from the cache")
                self.fail(hits == 0, "image", "a fresh cached image (cached %s, max age %ds, at %s): the remote was asked %d times" % (
                    iso(rec.ts), judge_age, iso(now), hits), o)
                self.fail(o.rc == 0 and report.get("source") == "cache" and report.get("bytes") == len(payload) and not new,
                          "image", "a fresh cached image of %d bytes (cached %s, max age %ds, at %s): exit %d, %s, appended %d records" % (
                              len(payload), iso(rec.ts), judge_age, iso(now), o.rc, short(o.out), len(new)), o)
                ts = parse_iso(str(report.get("timestamp")))
                self.fail(ts is not None and abs(ts - rec.ts) < 0.001, "image", "timestamp %r, the image was cached at %s" % (
                    report.get("timestamp"), iso(rec.ts)), o)
                return
        self.fail(hits == 1, "image", "no fresh cached image: the remote was asked %d times, expected once" % hits, o)
        if mode in ("500", "empty"):
            self.fail(o.rc == 3 and not new, "image", "no fresh cached image and the remote sent %s: exit %d, appended %d records, "
                      "expected exit 3 and nothing written" % ("HTTP 500" if mode == "500" else "no bytes", o.rc, len(new)), o)
            return
        want = self.expected_save(snap, key, snap.last)
        self.met("image from the remote")
        if want == "superseded":
            self.met("older save refused")
            live = snap.judged_live_put(key)
            self.fail(o.rc == 1 and report.get("cached") is False and report.get("source") == "remote" and NOT_CACHED in o.err
                      and not new, "superseded-save", "an image older than the cached copy (seq %d, its fetch begun at %s): exit %d, "
                      "%s, appended %d records; expected exit 1, cached false, nothing written" % (
                          live.seq, live.since, o.rc, short(o.out), len(new)), o)
            return
        if not self.fail(o.rc == 0 and report.get("cached") is True and report.get("source") == "remote"
                         and report.get("bytes") == len(body), "image", "an image from the remote (%d bytes): exit %d, %s" % (
                             len(body), o.rc, short(o.out)), o):
            self.uncertain.add(key)
            return
        ts = parse_iso(str(report.get("timestamp")))
        self.fail(ts is not None and abs(ts - now) < 0.001, "image", "timestamp %r, the clock was %s" % (report.get("timestamp"), iso(now)), o)
        puts = [r for r in new if r.kind == PUT and r.key == key]
        ok = len(puts) == 1 and abs(puts[0].ts - now) < 0.001
        if len(puts) == 1:
            # Format.md, "When a put's fetch began": since is the log's last seq before the save's
            # batch (its delete, then its put) and before the evictions that made room for it. A
            # pass after its commit may let that delete, or those evictions, go before the log
            # is read here (Format.md, "Retention": whatever is history once the limit presses):
            # a seq this command appended that is gone was one of them.
            highest = lowest = batch_start(after, puts[0]) - 1
            while lowest > snap.last and (lowest not in after.events or after.events[lowest].kind == DELETE
                                          and after.events[lowest].reason == EVICTED):
                lowest -= 1
            since = puts[0].since_recorded
            self.fail(since is not None and lowest <= since <= highest, "since-recorded", "the image's put (seq %d) records since %r; "
                      "its request began with the log at seq %s" % (puts[0].seq, (puts[0].metadata or {}).get("since"),
                                                                   lowest if highest == lowest else "%d to %d" % (lowest, highest)), o)
        try:
            ok = ok and after.payload(puts[0].seq, key) == body
        except OracleError:
            ok = False
        self.fail(ok and puts[0].recorded_max_age == (604800 if age_text is None else self.max_age_seconds(age_text)), "saved-missing",
                  "image reported cached at %s; the log gained %s" % (iso(now), [(r.seq, KIND_NAMES.get(r.kind), r.ts) for r in new]), o)
        self.damaged.discard(key)

    # -- searches

    def search_for(self):
        if not self.searches or (len(self.searches) < 3 and self.rng.random() < 0.2):
            query = self.rng.choice(QUERIES)
            found = next((x for x in self.searches if x.query == query), None)
            if found:
                return found
            self.searches.append(Search(query, self.rng.choice([None, None, self.max_age_text, "7d"])))
        return self.rng.choice(self.searches)

    def new_template(self, search):
        """Another endpoint for the search: 0 to 3 pages of 1 to 3 verses (then `[]`)."""
        pages = [make_verses(self.rng) for _ in range(self.rng.choice([0, 1, 2, 2, 3]))]
        template = self.server.add_search(pages)
        search.templates.append(template)
        return template

    def search_args(self, search, template, more=False, strategy=None):
        args = [template, "--contract", "verses", "--query", search.query, "--format", "json", "--retries", "0"]
        if self.rng.random() < 0.3:
            args += key_args(search.key.name)  # the default key, given
        if search.age_text:
            args += ["--max-age", search.age_text]
        if strategy:
            args += ["--strategy", strategy]
        return args + (["--more"] if more else [])

    def plan_first_page(self, search, template, now, strategy="remote-first"):
        """A search's first page as a load plan (judge_load): page 1's items, stamped now."""
        route = self.server.search_route(template)
        mode = "unreachable" if route is None else {"ok": "ok", "500": "500", "garbage": "garbage"}[route.mode]
        before = route.hits.get(1, 0) if route else 0
        return {"key": search.key, "mode": mode, "items": route.items(1) if route else [], "body": None, "url": template,
                "retries": 0, "now": now, "strategy": strategy, "search": search, "template": template,
                "judge_age": self.max_age_seconds(search.age_text) if search.age_text else None,
                "hits": (lambda: route.hits.get(1, 0) - before) if route else (lambda: 0)}

    def step_search(self):
        """Verse searches: a session (the first page, then `--more` as the clock moves on: the
        merged list stays as old as its first page), `--more` alone (from the template the list
        came from, or another, which starts over), offline loads judged at and around the list's
        expiry and before it was cached, and `searches`."""
        search = self.search_for()
        snap = self.snap
        try:
            value = snap.live_value(search.key.bytes)
        except OracleError:
            value = None
        recorded = (value[3].metadata or {}).get("template") if value else None
        what = self.rng.choices(["session", "more", "other", "offline", "searches"], [30, 30, 8, 22, 10])[0]
        if what in ("more", "other") and recorded is None and self.rng.random() < 0.8:
            what = "session"  # nothing to load more of: search first (sometimes --more anyway: exit 3)
        if what == "searches":
            self.step_searches()
        elif what == "session":
            fresh = not search.templates or self.rng.random() < 0.3
            template = self.new_template(search) if fresh else self.rng.choice(search.templates)
            now = self.now + (self.rng.choice([-86400, 86400]) if self.rng.random() < 0.1 else 0)
            self.search_first(search, template, now, self.rng.choice(["remote-first", "remote-first", "cache-first"]))
            age = self.max_age_seconds(search.age_text) if search.age_text else SEARCH_MAX_AGE
            for _ in range(self.rng.randint(1, 3)):
                self.check()
                self.now += self.rng.choice([self.rng.randint(1, 600), self.rng.randint(1, max(1, age // 2))])
                self.search_more(search, template, self.now)
            if self.rng.random() < 0.5:
                # Offline at the merged list's expiry, counted from its first page (or a second
                # before it): not from the last --more.
                self.check()
                snap = self.snap
                ts = value_ts(snap, search.key.bytes)
                if ts is not None and in_range(ts):
                    if len(pages_of(snap, search.key.bytes)) > 1:
                        self.met("offline read of a merged list")
                    now = ts + self.judge_age(snap, search) - self.rng.choice([0, 1])
                    self.search_first(search, template, now, "remote-first", mode=self.rng.choice(["500", "garbage"]))
        elif what == "offline":
            # The remote fails: the list serves while fresh, counted from its first page.
            template = self.rng.choice(search.templates) if search.templates else self.new_template(search)
            now = self.now
            ts = value_ts(snap, search.key.bytes)
            if ts is not None and in_range(ts) and self.rng.random() < 0.6:
                age = self.judge_age(snap, search)
                now = self.rng.choice([ts + age - 1, ts + age, ts - 1, ts])
            if len(pages_of(snap, search.key.bytes)) > 1:
                self.met("offline read of a merged list")
            if self.rng.random() < 0.4:
                self.search_first(search, self.soak.dead.url("/verses?q={query}&page={page}"), now, "remote-first")
            else:
                self.search_first(search, template, now, self.rng.choice(["remote-first", "cache-first"]),
                                  mode=self.rng.choice(["500", "garbage"]))
        else:
            if what == "other" or recorded not in search.templates:
                template = self.new_template(search) if what == "other" or not search.templates else self.rng.choice(search.templates)
            else:
                template = recorded
            self.search_more(search, template, self.now + (self.rng.choice([-86400, 86400]) if self.rng.random() < 0.1 else 0))

    def judge_age(self, snap, search):
        """The max age a search's commands judge its list by: the one they give, else the one
        its live put recorded."""
        if search.age_text:
            return self.max_age_seconds(search.age_text)
        return snap.live_value(search.key.bytes)[3].recorded_max_age

    def search_first(self, search, template, now, strategy, mode=None):
        """`load TEMPLATE --query Q`: page 1, judged as any load (a save stamped now, a fallback,
        cache first), and its put's record."""
        route = self.server.search_route(template)
        if route is not None:
            route.mode = mode or self.rng.choices(["ok", "500", "garbage"], [85, 10, 5])[0]
        snap = self.snap
        plan = self.plan_first_page(search, template, now, strategy)
        o = self.run(self.cmd("load", *self.search_args(search, template, strategy=strategy), now=now))
        if route is not None:
            route.mode = "ok"
        self.judge_load(o, plan, snap)
        self.after_search_load(o, plan, snap)

    def search_more(self, search, template, now):
        route = self.server.search_route(template)
        route.mode = self.rng.choices(["ok", "500", "garbage"], [85, 10, 5])[0]
        self.judge_more(search, template, now, self.snap)
        route.mode = "ok"

    def after_search_load(self, o, plan, snap, pages=None, next_page=None):
        """After a search load: nothing written unless it reported a save; a save's put records
        the query, the template, when each page was fetched and the next page."""
        saved = bool(self.pending) and self.pending[-1].cmd is o.cmd
        after = self.read()
        if not saved:
            self.fail(after.last == snap.last, "unreported-write", "a search load did not report a save (exit %s) but the log grew "
                      "from seq %d to %d" % (o.rc, snap.last, after.last), o)
            return
        self.uncertain.add(plan["key"].bytes)
        self.damaged.discard(plan["key"].bytes)
        puts = [after.events[q] for q in after.seqs if q > snap.last and after.events[q].kind == PUT and after.events[q].key == plan["key"].bytes]
        if not puts:
            return  # check() reports the save as missing
        meta = puts[-1].metadata or {}
        pages = [plan["now"]] if pages is None else pages
        next_page = (2 if plan["items"] else None) if next_page is None else next_page
        try:
            recorded_pages = page_times(meta)
        except ValueError:
            recorded_pages = None
        want = {"query": plan["search"].query, "template": plan["template"], "contract": "verses",
                "next": None if not next_page else str(next_page)}
        got = {name: meta.get(name) for name in want}
        self.fail(got == want and recorded_pages is not None and len(recorded_pages) == len(pages)
                  and all(abs(a - b) < 0.001 for a, b in zip(recorded_pages, pages)), "search-record",
                  "seq %d records %s and pages %r; expected %s and pages %s" % (
                      puts[-1].seq, short(got, 300), meta.get("page-times"), short(want, 300), [iso(p) for p in pages]), o)

    def judge_more(self, search, template, now, snap):
        """`load --more`: extends a fresh cached list with its next page and caches the merged
        list, stamped with its first page's time; from another template it starts over; a list
        missing or not fresh, or a remote that fails, exits 3 and writes nothing; a complete
        list is delivered as it is."""
        route = self.server.search_route(template)
        before = dict(route.hits)
        o = self.run(self.cmd("load", *self.search_args(search, template, more=True), now=now))
        self.check_clock_warning(o, snap, now)
        asked = {p: n - before.get(p, 0) for p, n in route.hits.items() if n != before.get(p, 0)}
        judge_age = self.max_age_seconds(search.age_text) if search.age_text else None
        want = self.expect_fallback(snap, search.key, now, judge_age)
        report = o.json if isinstance(o.json, dict) else {}
        if want[0] != "cache":
            self.met("--more on a list missing or not fresh")
            self.fail(o.rc == 3 and not asked, "search-more", "--more with %s: exit %d, asked pages %s; expected exit 3 and no request" % (
                want[1], o.rc, asked), o)
            self.after_search_load(o, {"key": search.key}, snap)
            return
        _, items, ts, rec = want
        meta = rec.metadata or {}
        if meta.get("template") != template:
            # Another endpoint's list is not extended: the search starts over with this page 1.
            self.met("--more from another template")
            plan = self.plan_first_page(search, template, now)
            plan["hits"] = lambda: asked.get(1, 0)
            self.judge_load(o, plan, snap)
            self.fail(set(asked) <= {1}, "search-more", "--more from another template asked pages %s, expected page 1 only" % asked, o)
            self.after_search_load(o, plan, snap)
            return
        nxt = meta.get("next")
        if nxt is None or not nxt.isdigit() or int(nxt) < 1:
            self.met("--more on a complete list")
            self.fail(o.rc == 0 and not asked and report.get("source") == "cache" and report.get("more") is False
                      and same_json(report.get("items"), items), "search-more",
                      "--more on a complete list (no next page recorded): exit %d, asked %s, printed %s; expected the cached "
                      "list, no request" % (o.rc, asked, short(o.out)), o)
            self.after_search_load(o, {"key": search.key}, snap)
            return
        page = int(nxt)
        if route.mode != "ok":
            self.met("--more with the remote failing")
            self.fail(o.rc == 3 and asked == {page: 1}, "search-more", "--more while page %d fails (%s): exit %d, asked %s; "
                      "expected exit 3 and one request" % (page, route.mode, o.rc, asked), o)
            self.after_search_load(o, {"key": search.key}, snap)
            return
        try:
            pages = page_times(meta)
        except ValueError:
            pages = []
        if not pages or not all(math.isfinite(p) for p in pages):
            pages = [ts]
        fetched = route.items(page)
        # A page that returns items is one of the list's pages; the empty one past the last only
        # says there is no more (README, the verses app), so it adds no fetch time.
        if fetched:
            pages = pages + [now]
        self.met("--more merging page %s" % ("2" if page == 2 else "3+"))
        plan = {"key": search.key, "mode": "ok", "items": items + fetched, "body": None, "url": template, "retries": 0, "now": now,
                "strategy": "remote-first", "search": search, "template": template, "judge_age": judge_age,
                "save_ts": min(pages), "more": bool(fetched), "hits": lambda: asked.get(page, 0)}
        self.judge_load(o, plan, snap)
        self.fail(set(asked) == {page}, "search-more", "--more after page %d asked pages %s" % (page - 1, asked), o)
        self.after_search_load(o, plan, snap, pages=pages, next_page=page + 1 if fetched else 0)

    def step_searches(self):
        """`searches`: one line per search key, from its last put (newest first): when it was
        cached, how many items, whether it is still the live cache and fresh by the trusted
        timestamp, whether there is more."""
        snap = self.snap
        contract = self.rng.choice([None, "verses"])
        o = self.run(self.cmd("searches", "--format", "json", *(["--contract", contract] if contract else [])))
        if not snap.exists:
            self.fail(o.rc == 1, "searches", "searches before there is a database: exit %d" % o.rc, o)
            return
        if not self.fail(o.rc == 0 or self.unknowable(snap), "searches", "searches exit %d" % o.rc, o) or not isinstance(o.json, list):
            return
        prefix = b"search:" + (contract.encode() + b":" if contract else b"")
        last = {}
        for q in snap.seqs:
            r = snap.events[q]
            if r.intact and r.kind == PUT and r.key.startswith(prefix):
                last[r.key] = r
        skip = set(self.damaged) | self.state_faults | snap.malformed
        model = []
        for k, r in sorted(last.items(), key=lambda item: -item[1].seq):
            try:
                payload = snap.payload(r.seq, k)
            except OracleError:
                skip.add(k)
                continue
            try:
                value = json.loads(payload)
                count = len(value) if isinstance(value, list) else 1
            except ValueError:
                count = 1
            meta = r.metadata or {}
            parts = k.decode().split(":", 2)
            entry = snap.stored.get(k)
            model.append({"key": k.decode(), "query": meta.get("query", parts[2] if len(parts) == 3 else k.decode()),
                          "contract": meta.get("contract", parts[1] if len(parts) == 3 else ""), "items": count,
                          "fresh": bool(entry and entry[0] == r.seq and is_fresh(r.ts, r.recorded_at, self.now, r.recorded_max_age)),
                          "more": "next" in meta, "timestamp": r.ts})
        self.met("searches listed")
        got = [e for e in o.json if isinstance(e, dict) and str(e.get("key")).encode("utf-8", "surrogatepass") not in skip]
        model = [m for m in model if m["key"].encode() not in skip]
        self.fail([e.get("key") for e in got] == [m["key"] for m in model], "searches",
                  "searches lists %s, the log's search puts (newest first) are %s" % (
                      short([e.get("key") for e in got], 300), short([m["key"] for m in model], 300)), o)
        for e, m in zip(got, model):
            ts = parse_iso(str(e.get("timestamp")))
            same = all(e.get(f) == m[f] for f in ("key", "query", "contract", "items", "fresh", "more")) and (
                not in_range(m["timestamp"]) or ts is not None and abs(ts - m["timestamp"]) < 0.001)
            if not self.fail(same, "searches", "searches says %s; its last put says %s" % (short(e, 300), short(m, 300)), o):
                break

    # ---- retention: policies set, shown and applied, a size limit that presses, a pass killed

    def contracts_now(self, snap):
        """{key: contract its live put records (None without)}: what a contract override matches."""
        out = {}
        for k, entry in snap.stored.items():
            r = snap.events.get(entry[0])
            out[k] = (r.metadata or {}).get("contract") if r is not None and r.kind == PUT else None
        return out

    def removable(self, before, after, clock, policy, walked=0):
        """The records of `after` that a pass at `clock` under `policy` lets go, by the rule
        (no size limit pressing): history outside its key's window, except each key's live put
        and the record holding its payload, the version its history starts from (and the put an
        expire there judged), and every record a stored record (before the pass) refers to.
        Only records after `walked` when a pass was under way from there."""
        log = after.events
        fault_keys = set(self.damaged) | self.state_faults | {f.key for f in self.faults if f.key is not None}
        live, sources = set(), set()
        for entry in after.stored.values():
            live.update((entry[0], entry[3]))
        for source in (before, after):
            sources |= {r.ref for r in source.events.values() if r.framing_ok and r.kind == PUT and r.ref is not None}
        contracts = self.contracts_now(after)
        base_keys = set(after.base_state() or {}) if after.base else set()
        doomed = []
        for k, seqs in after.key_seqs().items():
            if k in fault_keys or lossy(k) != k:
                continue
            window = policy.window(k, contracts.get(k))
            if window is None:
                continue
            cut = clock - window
            outside = [q for q in seqs if log[q].recorded_at < cut]
            if not outside:
                continue
            b = outside[-1]
            # A base checkpoint that does not decode may hold any key (Format.md, "Retention").
            kept = {b} | kept_with(log, seqs, b, set(seqs), set(seqs), after.base, k in base_keys or after.base_checkpoint_damaged)
            doomed += [q for q in outside if q > walked and q not in kept and q not in live and q not in sources
                       and log[q].intact and log[q].kind != RETENTION]
        return sorted(doomed)

    def check_applied(self, before, after, clock, policy, o, walked=0):
        """After a pass at `clock` ran to its end: nothing the rule lets go is left."""
        if any(f.kind == "flip" for f in self.faults) or self.state_faults or after.malformed:
            return  # a damaged recorded time or live entry changes what a pass sees: judged by check() alone
        left = self.removable(before, after, clock, policy, walked)
        self.met("retention pass checked complete")
        self.fail(not left, "retention-incomplete", "after a pass at %s under %s, history the rule lets go is still there: seqs %s" % (
            iso(clock), policy, short(["%d (%s %s, recorded %s)" % (q, KIND_NAMES.get(after.events[q].kind), short(after.events[q].key_text(), 40),
                                                                   iso(after.events[q].recorded_at)) for q in left[:6]], 400)), o)
        self.fail(after.retention_pass is None, "retention-incomplete", "a pass is still under way after retention ran one to its end "
                  "(meta retentionPass: %s)" % (after.retention_pass,), o)

    def check_status(self, o, after, label, ran=None):
        """`retention --format json`: the policy in effect, the record that set it and who, the
        bytes in use (which no binding shows exactly: within what the trees and the free list can
        take), and the last pass as meta records it; for a run that applied the policy (`ran`, the
        snapshot before it), what its passes did: the records that went, the caches it evicted."""
        doc = o.json if isinstance(o.json, dict) else None
        if not self.fail(o.rc == 0 and doc is not None, "retention-output", "%s: exit %d, %s" % (label, o.rc, short(o.out or o.err)), o):
            return None
        want = after.policy().as_json()
        self.fail(doc.get("policy") == want, "retention-output", "%s: policy %s, the log records %s" % (label, short(doc.get("policy")), want), o)
        recorded = doc.get("recorded")
        r = after.events.get(after.retention_seq) if after.retention_seq else None
        if r is not None and r.intact and r.kind == RETENTION and policy_from_metadata(r.metadata):
            ok = isinstance(recorded, dict) and recorded.get("seq") == after.retention_seq and str(recorded.get("by")).startswith("cachelog retention (")
        else:
            ok = recorded is None  # none, or one that does not read (verify names it): the default applies
        self.fail(ok, "retention-output", "%s: recorded %s, meta retentionSeq is %d (%s)" % (
            label, short(recorded), after.retention_seq, "it reads" if recorded is None else "it does not read"), o)
        used = doc.get("bytesInUse")
        low, high = used_estimate(after)
        self.fail(isinstance(used, int) and low <= used <= high, "retention-output", "%s: bytesInUse %r, the trees hold %d to %d bytes" % (
            label, used, low, high), o)
        report, got = after.retention_report, doc.get("lastPass")
        if ran is not None:
            went = [q for q in ran.seqs if q not in after.events]
            evicted = [q for q in after.seqs if q > ran.last and after.events[q].kind == DELETE and after.events[q].reason == EVICTED]
            ok = isinstance(got, dict) and got.get("removed") == len(went) and got.get("evicted") == len(evicted) and got.get("finished") is True
            self.fail(ok, "retention-output", "%s: lastPass %s; the run let %d records go and evicted %d" % (
                label, short(got), len(went), len(evicted)), o)
            return doc
        if report is None:
            self.fail(got is None, "retention-output", "%s: lastPass %s, meta records no pass" % (label, short(got)), o)
        else:
            want_pass = {"removed": report[1], "freedBytes": report[2], "evicted": report[3], "finished": bool(report[4])}
            ok = isinstance(got, dict) and all(got.get(k) == v for k, v in want_pass.items()) and (
                not in_range(report[0]) or abs((parse_iso(str(got.get("startedAt"))) or 0) - report[0]) < 0.001)
            self.fail(ok, "retention-output", "%s: lastPass %s, meta retentionReport says %s started %s" % (
                label, short(got), want_pass, iso(report[0]) if in_range(report[0]) else report[0]), o)
        return doc

    def retention_set(self, args, new, fmt=True, apply=False, now=None):
        """`retention` with options: records `new` (one retention record, by this tool) and applies it."""
        before = self.snap
        cmd = self.cmd("retention", *(args + (["--apply"] if apply else []) + (["--format", "json"] if fmt else [])), now=now)
        o = self.run(cmd)
        after = self.read()
        self.check_clock_warning(o, before, cmd.now)
        added = [after.events[q] for q in after.seqs if q > before.last and after.events[q].kind == RETENTION]
        if not self.fail(o.rc == 0 and len(added) == 1, "retention-set", "retention %s: exit %d, %d retention records appended" % (
                " ".join(args), o.rc, len(added)), o):
            return o
        r = added[0]
        found = policy_from_metadata(r.metadata)
        self.fail(found is not None and found[0] == new and found[1].startswith("cachelog retention (") and after.retention_seq == r.seq,
                  "retention-set", "retention %s: seq %d records %s by %r (meta retentionSeq %d); expected %s" % (
                      " ".join(args), r.seq, found and found[0], found and found[1], after.retention_seq, new), o)
        self.policy, self.policy_seq = new, r.seq
        self.step_policies.append(new)
        self.met("retention policy set")
        if fmt:
            self.check_status(o, after, "retention " + " ".join(args), ran=before)
        # It applies the policy at once, to the end of a pass: at its own clock.
        self.check_applied(before, after, cmd.now, new, o)
        return o

    def random_window(self):
        return self.rng.choice([("0", 0), ("0s", 0), ("90s", 90), ("45m", 2700), ("1h", 3600), ("12h", 43200), ("1d", DAY),
                                ("3d", 3 * DAY), ("1w", 7 * DAY), ("30d", 30 * DAY), ("90d", 90 * DAY), ("forever", None)])

    def step_retention_set(self):
        """A policy: windows from 0 to forever, overrides by key prefix and contract, size limits
        in both unit families (not pressing: that is step_retention_press); or a bad one, which
        is a usage error that changes nothing."""
        if self.rng.random() < 0.25:
            return self.retention_usage()
        # What is not given stays as it was in effect (the default when the policy's record does not read).
        now = self.snap.policy()
        args, new = [], Policy(now.history, now.size_limit, now.overrides)
        if self.rng.random() < 0.75:
            text, seconds = self.random_window()
            args += ["--history", text]
            new.history = seconds
        if self.rng.random() < 0.3:
            text, size = self.rng.choice([("64MB", 64_000_000), ("256MiB", 256 << 20), ("1GB", 10 ** 9), ("512MiB", 512 << 20),
                                          ("none", None), ("2GiB", 2 << 30), ("100000000", 100_000_000), ("40000KiB", 40_000 << 10)])
            args += ["--size-limit", text]
            new.size_limit = size
        if self.rng.random() < 0.4 or not args:
            keeps, contracts = [], []
            for _ in range(self.rng.randint(1, 3)):
                text, seconds = self.random_window()
                if seconds is None:
                    text, seconds = "0s", 0
                # Each prefix and contract once: a policy that names one twice is a usage error
                # (RetentionPolicy.problem), which retention_usage covers.
                if self.rng.random() < 0.5:
                    prefix = self.rng.choice(["image:", "search:", "search:verses:", "object:", "feed", "films", "absurd:", "podcasts:",
                                              "café", "press:", "verses:", "L", "bulk:"])
                    if all(entry[1] != prefix for entry in keeps):
                        keeps.append(("prefix", prefix, seconds, "--keep", "%s=%s" % (prefix, text)))
                else:
                    name = self.rng.choice(["films", "genres", "json", "verses", "people", "person", "images"])
                    if all(entry[1] != name for entry in contracts):
                        contracts.append(("contract", name, seconds, "--keep-contract", "%s=%s" % (name, text)))
            for entry in keeps + contracts:
                args += [entry[3], entry[4]]
            new.overrides = replaced_overrides(now.overrides, [e[:3] for e in keeps], [e[:3] for e in contracts])
        self.retention_set(args, new, fmt=self.rng.random() < 0.7, apply=self.rng.random() < 0.2)

    def retention_usage(self):
        """A bad policy on the command line: exit 64, nothing on stdout, nothing written."""
        args = self.rng.choice([
            ["--history", "-1d"], ["--history", "1e309d"], ["--history", "36501d"], ["--history", "soon"], ["--history", "1.5d"],
            ["--history", "never"], ["--size-limit", "1000KB"], ["--size-limit", "1MB"], ["--size-limit", "12"],
            ["--size-limit", "5TB"], ["--size-limit", "1.5MiB"], ["--size-limit", "-1MiB"], ["--size-limit", "99999999999GiB"],
            ["--size-limit", "1048575B"], ["--keep", "=1d"], ["--keep", "image:"], ["--keep", "image:=forever"],
            ["--keep-contract", "=5d"], ["--keep", "image:=-1d"], ["--keep-contract", "films"], ["--history", "7d", "--format", "xml"],
            ["--size-limit", "2MiB", "--keep", "a=1x"]])
        before = self.snap
        o = self.run(self.cmd("retention", *args))
        after = self.read()
        self.met("retention usage error")
        self.fail(o.rc == 64 and not o.out.strip() and after.seqs == before.seqs and after.retention_seq == before.retention_seq,
                  "retention-usage", "retention %s: exit %d (expected 64), stdout %s, log %s" % (
                      " ".join(args), o.rc, short(o.out), "unchanged" if after.seqs == before.seqs else "changed"), o)

    def step_retention_show(self):
        """`retention` alone: the policy, the bytes in use and the last pass; it writes nothing."""
        before = self.snap
        fmt = self.rng.random() < 0.8
        o = self.run(self.cmd("retention", *(["--format", "json"] if fmt else [])))
        after = self.read()
        self.fail(after.seqs == before.seqs and after.meta == before.meta, "retention-output", "retention without options changed the database", o)
        if fmt:
            self.check_status(o, after, "retention")
        else:
            self.fail(o.rc == 0 and o.out.startswith("retention "), "retention-output", "retention (text): exit %d, %s" % (o.rc, short(o.out)), o)

    def step_retention_apply(self, now=None):
        """`retention --apply`: a pass now, to its end, at this clock."""
        before = self.snap
        fmt = self.rng.random() < 0.6
        cmd = self.cmd("retention", "--apply", *(["--format", "json"] if fmt else []), now=now)
        o = self.run(cmd)
        after = self.read()
        self.check_clock_warning(o, before, cmd.now)
        # Without its base checkpoint, which key the base holds is unknown, and with it what a key's
        # history starts from: a pass refuses, naming the checkpoint, as compact and rebuild do
        # (what earlier slices let go, check() judges).
        if o.rc == 1 and before.base_checkpoint_damaged and ("corrupt checkpoint at seq %d" % before.base) in o.err:
            self.met("retention --apply refused without its base checkpoint")
            return o
        if not self.fail(o.rc == 0, "retention-apply", "retention --apply: exit %d" % o.rc, o):
            return o
        self.fail(after.last == before.last or all(after.events[q].kind == DELETE and after.events[q].reason == EVICTED
                                                   for q in after.seqs if q > before.last), "retention-apply",
                  "retention --apply appended %s" % short([q for q in after.seqs if q > before.last]), o)
        if fmt:
            doc = self.check_status(o, after, "retention --apply", ran=before)
            if doc is not None and isinstance(doc.get("lastPass"), dict):
                self.fail(doc["lastPass"].get("finished") is True, "retention-apply", "retention --apply: the last pass is not finished", o)
        self.check_applied(before, after, cmd.now, after.policy(), o)
        return o

    def press_once(self, key, size):
        """One bulky save under a pressing size limit; then the bytes in use stay near the limit."""
        body, items = bulky_feed(self.rng, size)
        cmd, plan = self.plan_load(key, "ok", body_items=(body, items))
        last = self.snap.last
        o = self.run(cmd)
        self.judge_load(o, plan, self.snap)
        self.after_serial_load(o, plan, last)
        key.last_body, key.last_items = body, items
        self.check()
        return o

    def step_retention_press(self):
        """A size limit small enough to press (a few MiB against saves of a few hundred KB): the
        oldest history goes first, then live caches, the least recently saved first, each with a
        delete whose reason is evicted (check() judges them); the bytes in use stay near the limit;
        a save larger than the limit is refused and evicts nothing."""
        text, limit = self.rng.choice([("1MiB", 1 << 20), ("2MiB", 2 << 20), ("3MB", 3_000_000), ("2MB", 2_000_000),
                                       ("1500KiB", 1500 << 10), ("4000KB", 4_000_000), ("3145728", 3 << 20)])
        now = self.snap.policy()
        new = Policy(now.history, limit, now.overrides)
        o = self.retention_set(["--size-limit", text], new, fmt=True)
        if o.rc != 0:
            return
        self.pressed = True
        keys = []
        for i in range(self.rng.randint(4, 8)):  # more live bytes than the limit holds: some are evicted
            key = next((k for k in self.keys if k.name == "press:%d" % i), None) or Key("press:%d" % i, "json")
            if key not in self.keys:
                self.keys.append(key)
            keys.append(key)
        for _ in range(self.rng.randint(6, 12)):
            self.now += self.rng.randint(1, 600)
            self.press_once(self.rng.choice(keys), self.rng.choice([limit // 8, limit // 6, limit // 4]))
            after = self.snap
            s = self.run(self.cmd("retention", "--format", "json"))
            doc = self.check_status(s, self.read(), "retention under a pressing limit")
            if doc is not None and isinstance(doc.get("bytesInUse"), int):
                # Before a commit that would pass the limit, retention makes room below its margin;
                # the estimate of what a save takes may be off by a page or so per record.
                self.met("size limit pressed")
                self.fail(doc["bytesInUse"] <= limit + 64 * 1024, "size-limit", "%d bytes in use under a size limit of %d (%s)" % (
                    doc["bytesInUse"], limit, text), s)
        # One save larger than the limit by itself: refused (it would empty the cache and still
        # not fit), nothing written, nothing evicted.
        before = self.read()
        body, items = bulky_feed(self.rng, int(limit * 1.7))
        cmd, plan = self.plan_load(self.rng.choice(keys), "ok", body_items=(body, items))
        o = self.run(cmd)
        after = self.read()
        self.met("a save larger than the size limit refused")
        report = o.json if isinstance(o.json, dict) else {}
        self.fail(o.rc == 1 and NOT_CACHED in o.err and report.get("cached") is False and after.seqs == before.seqs, "size-limit",
                  "a save of %d bytes under a size limit of %d: exit %d, cached %r, the log %s" % (
                      len(body), limit, o.rc, report.get("cached"), "unchanged" if after.seqs == before.seqs else
                      "went from %d records to %d" % (len(before.seqs), len(after.seqs))), o)
        self.check()
        if self.rng.random() < 0.6:
            text, size = self.rng.choice([("none", None), ("256MiB", 256 << 20), ("64MB", 64_000_000)])
            now = self.snap.policy()
            self.retention_set(["--size-limit", text], Policy(now.history, size, now.overrides))

    def people_page(self, count, version):
        people = [{"name": "person %d v%d" % (i, version), "height": str(150 + i % 50), "mass": str(version),
                   "url": "http://127.0.0.1:%d/people/%d.json" % (self.server.port, i)} for i in range(count)]
        return json.dumps({"count": count, "next": None, "previous": None, "results": people}).encode()

    def step_retention_floor(self):
        """Retention's floor (Format.md, "Retention"), once a soak, in a database of its own: a long
        history of hundreds of small caches (the test writer's --history), then the tightest size
        limit, 1MiB. The live caches are a few kilobytes: nothing is evicted and every live cache
        stays, whether the history that must stay (a record a key, its index entries, the
        checkpoints) fits the limit (300 keys: the pass brings the bytes in use under it) or not
        (2000 keys: the report says the limit is unmet, and by a floor above nine tenths of it);
        verify is clean; and a save after it stays live through the next pass."""
        if self.soak.floor_checked or self.soak.writer is None:
            return
        self.soak.floor_checked = True
        db = os.path.join(self.dir, "floor")
        keys = self.rng.choice([300, 2000])
        made = subprocess.run([self.soak.writer, db, "100000", "--history", "--keys", str(keys), "--days", "60",
                               "--start", "2026-09-01T00:00:00Z", "--seed", str(self.rng.randint(1, 1 << 30))],
                              capture_output=True, text=True, timeout=600)
        if not self.fail(made.returncode == 0, "floor", "cachelog-writer --history: exit %d, %s" % (made.returncode, short(made.stderr))):
            return

        def run(*args, now="2026-11-01T00:00:00Z"):
            return self.run(Cmd(["--db", db, "--now", now] + list(args)))

        def live():
            o = run("state", "--format", "json")
            return sorted(e.get("key") for e in (o.json or {}).get("entries", [])) if isinstance(o.json, dict) else None

        before = live()
        o = run("retention", "--size-limit", "1MiB", "--format", "json")
        last = (o.json or {}).get("lastPass") if isinstance(o.json, dict) else None
        unmet = last.get("unmetLimit") if isinstance(last, dict) else None
        used = (o.json or {}).get("bytesInUse") if isinstance(o.json, dict) else None
        if keys == 300:
            judged = unmet is None and isinstance(used, int) and used <= 1 << 20
        else:
            judged = (isinstance(unmet, dict) and unmet.get("limit") == 1 << 20 and unmet.get("keys", 0) >= len(before or [])
                      and unmet.get("floorBytes", 0) > 0.9 * (1 << 20))
        self.fail(o.rc == 0 and judged and isinstance(last, dict) and last.get("evicted") == 0, "floor",
                  "retention --size-limit 1MiB on %d live caches of %d keys' long history: exit %d, in use %s, lastPass %s" % (
                      len(before or []), keys, o.rc, used, short(last)), o)
        self.fail(before is not None and live() == before, "floor", "live caches went for the floor", o)
        body = json.dumps({"genres": [{"id": 1, "name": "Comedy"}]}).encode()
        o = run("load", self.server.add(200, body, name="genres.json"), "--key", "floor:new", "--contract", "genres", "--format", "json",
                now="2026-11-01T01:00:00Z")
        self.fail(o.rc == 0 and isinstance(o.json, dict) and o.json.get("cached") is True, "floor", "a save after the pass: exit %d" % o.rc, o)
        o = run("retention", "--apply", "--format", "json", now="2026-11-01T02:00:00Z")
        kept = live()
        self.fail(o.rc == 0 and kept is not None and "floor:new" in kept and set(before or []) <= set(kept), "floor",
                  "after the next pass the save is %s" % ("live" if kept and "floor:new" in kept else "gone"), o)
        o = run("verify")
        self.fail(o.rc == 0, "floor", "verify after the floor's passes: exit %d" % o.rc, o)
        self.met("a long history under the tightest size limit: live caches kept")

    def step_retention_kill(self):
        """SIGKILL during `retention --apply` on a big history (a people search caches each person
        too: thousands of records in two loads): the next commands find the database whole (verify
        clean but for planted damage), and the pass goes on where it stood, at its own clock."""
        if self.big_history:
            return self.step_retention_apply()
        self.big_history = True
        self.met("big history built")
        now = self.snap.policy()
        # No override may hold the people's history back: those recorded are replaced (retention
        # --help: --keep replaces the recorded prefixes, --keep-contract the recorded contracts).
        keep = [] if not now.overrides else ["--keep", "nothing:=1d", "--keep-contract", "nothing=1d"]
        new = Policy(None, now.size_limit, (("prefix", "nothing:", DAY), ("contract", "nothing", DAY)) if keep else ())
        if self.retention_set(["--history", "forever"] + keep, new, fmt=False).rc != 0:
            return
        self.check()
        count = self.rng.randint(800, 1100)  # two loads: more records than two slices of a pass walk
        query = "sky %d" % self.rng.randint(0, 99)
        for version in (1, 2):
            page = self.people_page(count, version)
            url = self.server.add(200, page, name="people.json")
            last = self.snap.last
            cmd = self.cmd("load", url + "?q={query}", "--contract", "people", "--query", query, "--format", "json", "--retries", "0")
            # What it may add to the bytes in use, for the size limit: the page, and a record per
            # person (a put of its object, its key index entry, its state row, half-full pages).
            cmd.incoming = 2 * len(page) + 1024 * (2 * count + 2)
            o = self.run(cmd)
            after = self.read()
            report = o.json if isinstance(o.json, dict) else {}
            self.fail(o.rc == 0 and report.get("cached") is True and after.last - last >= count, "big-history",
                      "a people search of %d persons: exit %d, cached %r, %d records appended" % (count, o.rc, report.get("cached"), after.last - last), o)
            self.uncertain.update(after.events[q].key for q in after.seqs if q > last)
            self.check()
            self.now += 2 * DAY
        # The policy that lets it go, set at a clock when nothing was history yet.
        self.retention_set(["--history", "1d"], Policy(DAY, new.size_limit, new.overrides), fmt=False, now=self.now - 60 * DAY)
        self.check()
        self.now += 40 * DAY
        # Killed later and later until the kill lands in the pass or after it (one that lands
        # before the pass began leaves nothing to see): the pass takes a fraction of a second.
        delay = self.rng.uniform(0.03, 0.08)
        for _ in range(10):
            cmd = self.cmd("retention", "--apply")
            if self.soak.verbose:
                print("    ! %.2fs " % delay + cmd.shell(self.soak.display), flush=True)
            r = self.runner.launch(cmd, self.dir)
            time.sleep(delay)
            self.runner.kill(r)
            o = self.runner.finish(r)
            self.basic(o)
            after = self.read()
            if after.retention_pass is not None or after.retention_report is not None and after.retention_report[0] == cmd.now:
                break
            delay += self.rng.uniform(0.02, 0.06)
        self.check()
        after = self.snap
        if after.retention_pass is not None:
            self.met("retention --apply killed mid-pass")
            self.fail(after.retention_pass[0] == cmd.now, "retention-pass", "the pass under way after the kill started at %s, not at "
                      "the killed apply's clock %s" % (iso(after.retention_pass[0]), iso(cmd.now)), o)
        # The pass goes on at its own clock: by the next save's commit, or by the next apply,
        # which then applies the policy as of its own clock (history saved since, too).
        roll = self.rng.random()
        if roll < 0.3:
            self.step_load(mode="ok")
            self.check()
        elif roll < 0.65:
            key = self.key_for()
            for _ in range(2):
                self.now += 3600
                self.step_load(key=key, mode="ok", same=False, strategy="remote-first")
                self.check()
            self.now += 3 * DAY
        if after.retention_pass is not None:
            self.met("a killed pass resumed")
        self.step_retention_apply()

    # ---- the hostile machine

    def pages_in_use(self):
        """Bytes of data.mdb that LMDB's meta counts as pages in use."""
        env = lmdb.open(self.db, readonly=True, lock=False, max_dbs=8)
        try:
            info, stat = env.info(), env.stat()
            return (info["last_pgno"] + 1) * stat["psize"]
        finally:
            env.close()

    def catalog_root_end(self):
        """Where the page of the newest commit's catalog root ends in data.mdb: the main tree's
        md_root of the meta page with the larger txnid (lmdb.h's MDB_meta, 64-bit)."""
        env = lmdb.open(self.db, readonly=True, lock=False, max_dbs=8)
        try:
            page_size = env.stat()["psize"]
        finally:
            env.close()
        with open(os.path.join(self.db, "data.mdb"), "rb") as f:
            metas = []
            for number in (0, 1):
                f.seek(number * page_size)
                page = f.read(152)
                root, txnid = struct.unpack_from("<Q", page, 128)[0], struct.unpack_from("<Q", page, 144)[0]
                metas.append((txnid, root))
        return (max(metas)[1] + 1) * page_size

    def plant(self, mutate, kind, seq=None, key=None, detail=""):
        """Damages the database with Python's lmdb while no cachelog process runs."""
        info_env = lmdb.open(self.db, readonly=True, lock=False, max_dbs=8)
        map_size = info_env.info()["map_size"]
        info_env.close()
        env = lmdb.open(self.db, lock=False, max_dbs=8, map_size=map_size)
        try:
            mutate(env)
        finally:
            env.sync(True)
            env.close()
        fault = Fault(kind, self.soak.step, seq, key, detail, self.snap.last)
        self.faults.append(fault)
        if self.soak.verbose:
            print("    planted %s seq=%s key=%r %s" % (kind, seq, key, detail), flush=True)
        return fault

    def step_flip(self):
        snap = self.snap
        if not snap.seqs:
            return
        live_seqs = [e[0] for e in snap.stored.values() if e[0] in snap.events]
        if live_seqs and self.rng.random() < 0.5:
            seq = self.rng.choice(live_seqs)
        else:
            seq = self.rng.choice(snap.seqs)
        r = snap.events[seq]
        if any(f.seq == seq for f in self.faults):
            return
        k_len = len(r.key)
        regions = {"crc": (len(r.raw) - 4, len(r.raw)), "header": (0, 38)}
        if k_len:
            regions["key"] = (38, 38 + k_len)
        if len(r.body):
            regions["body"] = (38 + k_len, 38 + k_len + len(r.body))
        region = self.rng.choice(sorted(regions))
        lo, hi = regions[region]
        at = self.rng.randrange(lo, hi)
        mask = 1 << self.rng.randrange(8) if self.rng.random() < 0.7 else self.rng.randint(1, 255)
        raw = bytearray(r.raw)
        raw[at] ^= mask

        def mutate(env):
            db = env.open_db(b"events", create=False)
            with env.begin(write=True, db=db) as txn:
                txn.put(struct.pack(">Q", seq), bytes(raw))

        self.undamaged.setdefault(seq, r)
        self.plant(mutate, "flip", seq=seq, key=r.key, detail="%s byte %d ^= 0x%02x" % (region, at, mask))
        damaged = Rec(seq, bytes(raw))
        self.damaged.add(r.key)
        if damaged.header_ok:
            self.damaged.add(damaged.key)
        self.after_plant()

    def step_delete_record(self):
        snap = self.snap
        above = [s for s in snap.seqs if s > snap.base]
        if not above:
            return
        roll = self.rng.random()
        if roll < 0.25:
            seq = above[0]  # the very first record after the base (seq 1 without a compaction)
        elif roll < 0.45:
            seq = above[-1]
        else:
            seq = self.rng.choice(above)
        if any(f.seq == seq for f in self.faults):
            return
        r = snap.events[seq]

        def mutate(env):
            db = env.open_db(b"events", create=False)
            with env.begin(write=True, db=db) as txn:
                txn.delete(struct.pack(">Q", seq))

        self.plant(mutate, "delete", seq=seq, key=r.key, detail="%s of %r" % (KIND_NAMES.get(r.kind), r.key_text()))
        self.damaged.add(r.key)
        self.after_plant()

    def step_damage_state(self):
        snap = self.snap
        if not snap.stored:
            return
        key = self.rng.choice(sorted(snap.stored))
        entry = snap.stored[key]
        mode = self.rng.choice(["short", "garbage", "drop", "stale", "ghost"])
        puts = [s for s in snap.seqs if snap.events[s].kind == PUT and snap.events[s].key == key and s != entry[0]
                and snap.events[s].intact]
        if mode == "stale" and not puts:
            mode = "short"
        target_key, value = key, None
        if mode == "short":
            value = snap.state[key][:28]
        elif mode == "garbage":
            value = bytes(self.rng.getrandbits(8) for _ in range(29))
        elif mode == "stale":
            old = snap.events[self.rng.choice(puts)]
            value = encode_row(old.seq, old.ts_bits, old.payload_len, old.ref or old.seq)
        elif mode == "ghost":
            target_key = b"ghost:%d" % self.rng.randint(0, 999)
            value = encode_row(0xFFFFFFF0, f64_bits(self.now - SINCE_1970), 10, 0xFFFFFFF0)

        def mutate(env):
            db = env.open_db(b"state", create=False)
            with env.begin(write=True, db=db) as txn:
                if mode == "drop":
                    txn.delete(key)
                else:
                    txn.put(target_key, value)

        self.plant(mutate, "state-" + mode, key=target_key, detail=mode)
        self.state_faults.add(target_key)
        self.damaged.add(target_key)
        self.after_plant()

    def step_damage_checkpoint(self):
        snap = self.snap
        if not snap.checkpoints:
            if snap.last < 3:
                return
            self.step_compact(cut=str(self.rng.randint(2, snap.last)))
            self.check()
            snap = self.snap
            if not snap.checkpoints:
                return
        seq = self.rng.choice(sorted(snap.checkpoints))
        raw = bytearray(snap.checkpoints[seq])
        if snap.decoded_checkpoints.get(seq) is None:
            return
        at = self.rng.randrange(len(raw))
        raw[at] ^= 1 << self.rng.randrange(8)

        def mutate(env):
            db = env.open_db(b"checkpoints", create=False)
            with env.begin(write=True, db=db) as txn:
                txn.put(struct.pack(">Q", seq), bytes(raw))

        self.plant(mutate, "checkpoint", seq=seq, detail="byte %d of %d" % (at, len(raw)))
        self.after_plant()
        # The state as of points after it still answers (from an earlier checkpoint or the log).
        for _ in range(2):
            self.step_state_as_of()

    def after_plant(self):
        """Right after planting: verify must exit 1 and report the fault, and nothing else (check())."""
        self.check(planted=True)

    def step_heal(self, key=None):
        """`validate` then `load` (remote ok) must bring a damaged key back to a readable, fresh cache."""
        candidates = [k for k in self.keys if k.bytes in self.damaged]
        key = key or (self.rng.choice(candidates) if candidates else self.key_for())
        if key.last_body is not None and self.rng.random() < 0.35:
            # A save of the very same feed, without validating first: it may be stored as a
            # reference to the earlier put only if that put passes its checksum (DESIGN.md), so it
            # reads back too.
            o, plan = self.step_load(key=key, mode="ok", same=True, retries=0, strategy="remote-first")
            self.check()
            if o.rc == 0:
                p = self.run(self.plan_load(key, "500")[0])
                ok = p.rc == 0 and isinstance(p.json, dict) and same_json(p.json.get("items"), plan["items"])
                why = ""
                try:
                    self.snap.live_value(key.bytes)
                except OracleError as error:
                    why = " (the log: %s)" % error
                self.fail(ok, "heal-failed", "a fresh save of the same feed of %r does not read back: exit %d%s" % (
                    key.name, p.rc, why), p)
                self.check()
        if self.rng.random() < 0.3:
            self.step_validate()
        else:
            self.step_validate(key=key)
        self.check()
        same = key.last_body is not None and self.rng.random() < 0.6
        o, plan = self.step_load(key=key, mode="ok", same=same, retries=0, strategy="remote-first")
        self.check()
        if o.rc != 0:
            self.fail(False, "heal-failed", "validate then load of %r: the load exit %d" % (key.name, o.rc), o)
            return
        probe_cmd, probe = self.plan_load(key, "500")
        p = self.run(probe_cmd)
        ok = p.rc == 0 and isinstance(p.json, dict) and p.json.get("source") == "cache" and same_json(p.json.get("items"), plan["items"])
        snap = self.snap
        why = ""
        try:
            snap.live_value(key.bytes)
        except OracleError as error:
            why = " (the log: %s)" % error
        if self.fail(ok, "heal-failed", "after validate and a load of %s, the cache of %r does not read back: exit %d%s" % (
                "the same feed" if same else "a new feed", key.name, p.rc, why), p):
            self.damaged.discard(key.bytes)
            self.state_faults.discard(key.bytes)

    def step_full_disk(self):
        key = self.key_for("json")
        if key.contract != "json":
            key = Key("bulk:%d" % self.rng.randint(0, 9), "json")
            if all(k.name != key.name for k in self.keys):
                self.keys.append(key)
        body, items = bulky_feed(self.rng, self.rng.choice([200_000, 600_000]))
        size = os.path.getsize(os.path.join(self.db, "data.mdb"))
        snap = self.snap
        url = self.server.add(200, body)
        args = [url] + key_args(key.name) + ["--contract", "json", "--format", "json", "--max-age", self.max_age_text]
        cmd = self.cmd("load", *args, fsize=size)
        # A full disk stops the file from growing, not the save: free pages inside it may hold
        # it. What it saves counts toward the size limit like any load's (Format.md, "Retention":
        # a pass presses while the bytes in use are over T, the save's bytes included).
        cmd.incoming, cmd.key = len(body), key.bytes
        self.disk_limited = True
        try:
            o = self.run(cmd)
            plan = {"key": key, "mode": "ok", "items": items, "body": body, "url": url, "retries": 0, "now": self.now,
                    "judge_age": self.max_age, "strategy": "remote-first", "hits": lambda: self.server.hits(url)}
            self.judge_load(o, plan, snap)
            if not (self.pending and self.pending[-1].cmd is o.cmd):
                after = self.read()
                self.fail(after.last == snap.last, "full-disk", "a save that failed (exit %d) still appended seqs %d..%d" % (
                    o.rc, snap.last + 1, after.last), o)
                self.fail(o.rc == 1, "full-disk", "a save on a full disk: exit %d, expected 1 (not cached)" % o.rc, o)
            else:
                self.expect_live[key.bytes] = "pending"
            # Readers are unaffected by a full disk.
            v = self.run(self.cmd("verify", "--format", "json", fsize=size))
            self.fail(v.rc in (0, 1), "full-disk", "verify on a full disk: exit %d" % v.rc, v)
        finally:
            self.disk_limited = False
        self.check()
        # With room again the same save works.
        older = self.expected_save(self.snap, key.bytes, self.snap.last) == "superseded"
        o2, _ = self.step_load(key=key, mode="ok", same=False, strategy="remote-first")
        self.fail(o2.rc == 0 or older, "full-disk", "after the disk has room again a save: exit %d" % o2.rc, o2)

    def step_hostile_key(self):
        roll = self.rng.random()
        if roll < 0.35:
            name = self.rng.choice([
                "L" * MAX_KEY_BYTES, "é" * 255 + "x", "k:" + "🎬" * 127 + "x",  # 511 bytes
                "L" * (MAX_KEY_BYTES + 1), "é" * 256, "k:" + "🎬" * 127 + "xy"])  # 512 bytes
            key = Key(name, "genres")
            self.keys.append(key) if len(key.bytes) <= MAX_KEY_BYTES else None
            older = self.expected_save(self.snap, key.bytes, self.snap.last) == "superseded"
            o, plan = self.step_load(key=key, mode="ok", strategy="remote-first")
            if len(key.bytes) > MAX_KEY_BYTES:
                self.fail(o.rc != 0, "unsaved-reported-cached", "a %d-byte key: load exit 0" % len(key.bytes), o)
            else:
                self.fail(o.rc == 0 or older, "load-outcome", "a %d-byte key (LMDB's limit): exit %d" % (len(key.bytes), o.rc), o)
                self.check()
                s = self.run(self.cmd("state", *key_args(key.name), "--format", "json"))
                if isinstance(s.json, dict):
                    keys = [e.get("key") for e in s.json.get("entries", [])]
                    self.fail(keys == [key.name], "key-merged", "state --key with a 511-byte key lists %s" % short(keys), s)
            return
        if roll < 0.75:
            prefix = self.rng.choice(["", "search:", "image:https://example.com/"])
            nfc = prefix + unicodedata.normalize("NFC", "café crème")
            nfd = prefix + unicodedata.normalize("NFD", "café crème")
            pair = []
            for name in (nfc, nfd):
                key = next((k for k in self.keys if k.name == name), None)
                if key is None:
                    key = Key(name, "json")
                    self.keys.append(key)
                pair.append(key)
            for key in pair:
                self.step_load(key=key, mode="ok", same=False)
            self.check()
            snap = self.snap
            for key in pair:
                s = self.run(self.cmd("state", *key_args(key.name), "--format", "json"))
                if isinstance(s.json, dict):
                    keys = [e.get("key") for e in s.json.get("entries", [])]
                    want = [key.name] if key.bytes in snap.stored else []
                    self.fail(keys == want, "key-merged", "state --key %s lists %s (NFC and NFD are distinct keys)" % (
                        ascii(key.name), ascii(keys)), s)
                r = self.run(self.cmd("replay", *key_args(key.name), "--format", "jsonl"))
                if isinstance(r.json, list):
                    names = {d.get("key") for d in r.json if d.get("type") != "corrupt"}
                    self.fail(names <= {key.name}, "key-merged", "replay --key %s prints events of %s" % (ascii(key.name), ascii(sorted(names))), r)
                a = self.run(self.cmd("audit", *key_args(key.name), "--format", "json", "--max-age", self.max_age_text))
                if isinstance(a.json, dict):
                    names = [k.get("key") for k in a.json.get("keys", []) if isinstance(k, dict)]
                    self.fail(all(n == key.name for n in names), "key-merged", "audit --key %s lists %s" % (ascii(key.name), ascii(names)), a)
            st = self.run(self.cmd("stats", "--format", "json"))
            if isinstance(st.json, dict):
                keys = st.json.get("keys", {})
                self.fail(nfc in keys and nfd in keys, "key-merged", "stats keys hold %s for NFC and NFD" % ascii(
                    [k for k in keys if "caf" in k]), st)
            return
        name = self.rng.choice(['"quoted\\key"', "tab\tkey", "line\nbreak", "emoji🎬key", "\u2028sep", "-dash",
                                "  spaced  ", "ctl\x01key", "x" * 100 + "\u00e9"])
        key = next((k for k in self.keys if k.name == name), None) or Key(name, "json")
        if key not in self.keys:
            self.keys.append(key)
        self.step_load(key=key, mode="ok")
        self.check()
        s = self.run(self.cmd("state", "--key=" + name, "--format", "json"))
        if isinstance(s.json, dict):
            keys = [e.get("key") for e in s.json.get("entries", [])]
            self.fail(keys == [name], "key-merged", "state --key %s lists %s" % (ascii(name), ascii(keys)), s)

    def step_absurd(self):
        case = self.rng.choice(["huge-max-age", "huge-validate", "usage", "usage", "far-clock-read", "edges",
                                "big-numbers", "far-clock-write"])
        if case == "huge-max-age":
            key = next((k for k in self.keys if k.name == "absurd:maxage"), None) or Key("absurd:maxage", "genres")
            if key not in self.keys:
                self.keys.append(key)
            self.absurd.add(key.bytes)
            text = self.rng.choice([HUGE_SECONDS, HUGE_DAYS, "106751991167300d"])
            cmd, plan = self.plan_load(key, "ok", max_age=text)
            last = self.snap.last
            o = self.run(cmd)
            if o.rc == 64:
                return
            self.judge_load(o, plan, self.snap)
            self.after_serial_load(o, plan, last)
            self.check()
            # A cache 0 s old under an enormous max age is fresh.
            cmd, plan = self.plan_load(key, "500", max_age=text)
            o = self.run(cmd)
            self.judge_load(o, plan, self.snap)
        elif case == "huge-validate":
            self.step_validate(max_age_text=self.rng.choice([HUGE_DAYS, HUGE_SECONDS]))
            # Whatever durations are now stored, every reader still reads them.
            snap = self.read()
            for args in (["replay"], ["replay", "--format", "jsonl"], ["audit"], ["audit", "--format", "json"],
                         ["state", "--format", "json"], ["stats", "--format", "json"]):
                o = self.run(self.cmd(*args))
                # `state` reads the live state, which a damaged row and a damaged base checkpoint
                # together make unknowable (see `unknowable`): refusing is then honest.
                self.fail(o.rc == 0 or (args[0] == "state" and self.unknowable(snap)), "absurd-number", "%s after a validate with --max-age huge: exit %d" % (" ".join(args), o.rc), o)
        elif case == "usage":
            args = self.rng.choice([
                ["load", self.unreachable, "--key", "k", "--max-age", "1e309d"],
                ["load", self.unreachable, "--key", "k", "--max-age", "0s"],
                ["load", self.unreachable, "--key", "k", "--max-age", "-1d"],
                ["load", self.unreachable, "--key", "k", "--max-age", "99999999999999999999999d"],
                ["load", self.unreachable, "--key", "k", "--retries", "11"],
                ["load", self.unreachable, "--key", "k", "--retries", "-1"],
                ["load", self.unreachable, "--key", ""],
                ["load", "ftp://example.com/x", "--key", "k"],
                ["replay", "--limit", "-1"],
                ["replay", "--limit", "99999999999999999999"],
                ["state", "--as-of", "99999999999999999999"],
                ["compact", "--before", "-1"],
                ["validate", "--max-age", "NaNd"],
                ["audit", "--max-age", "infd"],
                ["replay", "--format", "xml"],
                ["replay", "--follow", "--reverse"],
                ["state", "--as-of", "2026-13-45T99:99:99Z"],
            ])
            o = self.run(self.cmd(*args))
            self.fail(o.rc == 64, "usage-exit", "a bad command line: exit %d, expected 64 (usage)" % o.rc, o)
            self.fail(o.out.strip() == "", "usage-exit", "a usage error printed on stdout: %s" % short(o.out), o)
        elif case == "far-clock-read":
            now = self.rng.choice(["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z"])
            sub = self.rng.choice([["state", "--format", "json"], ["audit", "--format", "json"], ["replay", "--format", "jsonl"],
                                   ["stats", "--format", "json"], ["audit"], ["state"]])
            o = self.run(self.cmd(*sub, now=now))
            self.fail(o.rc == 0 or (sub[0] == "state" and self.unknowable(self.read())), "absurd-clock", "%s with --now %s: exit %d" % (sub[0], now, o.rc), o)
        elif case == "edges":
            snap = self.snap
            choice = self.rng.choice(["limit0", "from-max", "as-of-max", "as-of-0", "before-0"])
            if choice == "limit0":
                o = self.run(self.cmd("replay", "--limit", "0", "--format", "jsonl"))
                self.fail(o.rc == 0 and not o.out.strip(), "absurd-number", "replay --limit 0 printed %s" % short(o.out), o)
            elif choice == "from-max":
                o = self.run(self.cmd("replay", "--from", "18446744073709551615", "--format", "jsonl"))
                self.fail(o.rc == 0 and not o.out.strip(), "absurd-number", "replay --from u64.max: exit %d %s" % (o.rc, short(o.out)), o)
            elif choice == "as-of-max":
                # Past the end of the log: an error that says where the log ends.
                o = self.run(self.cmd("state", "--as-of", "18446744073709551615", "--format", "json"))
                self.fail(o.rc == 1 and not o.out.strip(), "absurd-number", "state --as-of u64.max on a log ending at seq %d: exit %d, %s" % (
                    snap.last, o.rc, short(o.out)), o)
            elif choice == "as-of-0":
                o = self.run(self.cmd("state", "--as-of", "0", "--format", "json"))
                if snap.base == 0:
                    self.fail(o.rc == 0 and isinstance(o.json, dict) and o.json.get("entries") == [], "absurd-number",
                              "state --as-of 0: exit %d %s" % (o.rc, short(o.out)), o)
                else:
                    self.fail(o.rc == 1, "absurd-number", "state --as-of 0 after a compaction: exit %d, expected 1" % o.rc, o)
            else:
                before = snap.seqs
                o = self.run(self.cmd("compact", "--before", "0"))
                self.fail(o.rc == 0 and self.read().seqs == before, "absurd-number", "compact --before 0 changed the log", o)
        elif case == "big-numbers":
            key = next((k for k in self.keys if k.name == "absurd:numbers"), None) or Key("absurd:numbers", "json")
            if key not in self.keys:
                self.keys.append(key)
            values = [2 ** 53 + 1, 12345678901234567890, -(2 ** 63), 2 ** 64, 10 ** 30, 0.1, 1e308]
            self.rng.shuffle(values)
            body = json.dumps(values[:self.rng.randint(1, len(values))]).encode()
            cmd, plan = self.plan_load(key, "ok", body_items=(body, json.loads(body)))
            last = self.snap.last
            o = self.run(cmd)
            self.judge_load(o, plan, self.snap)
            self.after_serial_load(o, plan, last)
        else:
            key = next((k for k in self.keys if k.name == "absurd:clock"), None) or Key("absurd:clock", "genres")
            if key not in self.keys:
                self.keys.append(key)
            # Judged by the ordinary rules: stamped in year 9999 it is never fresh (and newer than
            # every later save of the key until validate expires it); in year 1 or 1970 it is
            # expired, and older than the live cache, which it does not replace.
            now = self.rng.choice(["0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z"])
            cmd, plan = self.plan_load(key, "ok", now=now)
            last = self.snap.last
            o = self.run(cmd)
            self.judge_load(o, plan, self.snap)
            self.after_serial_load(o, plan, last)

    def step_kill_write(self):
        """SIGKILL of a writer at a random moment: a load (slow or not), a validate, a compaction."""
        snap = self.snap
        what = self.rng.choice(["load", "load", "validate", "compact", "rebuild"])
        if what == "rebuild" and not self.soak.has_rebuild:
            what = "load"
        if what == "load":
            key = self.key_for()
            cmd, plan = self.plan_load(key, self.rng.choice(["ok", "slow"]))
        elif what == "validate":
            cmd = self.cmd("validate", "--max-age", self.max_age_text)
        elif what == "compact":
            cmd = self.cmd("compact", "--before", str(self.rng.randint(1, snap.last + 1)))
        else:
            cmd = self.cmd("rebuild")
        if self.soak.verbose:
            print("    ! " + cmd.shell(self.soak.display), flush=True)
        r = self.runner.launch(cmd, self.dir)
        time.sleep(self.rng.uniform(0.0, 0.25))
        self.runner.kill(r)
        o = self.runner.finish(r)
        self.basic(o)
        if what == "load":
            self.judge_load(o, plan, snap, candidates=[plan["items"]])
            self.uncertain.add(plan["key"].bytes)
            if o.rc == 0:
                plan["key"].last_body, plan["key"].last_items = plan["body"], plan["items"]
        else:
            self.uncertain.update(self.expect_live)

    def step_truncate(self):
        """The last step of a run: data.mdb cut short. Every command refuses with one line and
        exit 1; none dies of SIGBUS. (The harness never reads the file again.)"""
        path = os.path.join(self.db, "data.mdb")
        # Cut into the pages in use: past them the file holds zeros written ahead.
        size = min(os.path.getsize(path), self.pages_in_use())
        if size <= 8192:
            return
        new = self.rng.choice([4096, 8192, (size // 2) // 4096 * 4096, size - 4096, size - 1, size // 3])
        # And into a page a tree uses: a cut that takes only free pages (LMDB writes a free page
        # before it uses it again) leaves a healthy database. The catalog's root is one.
        new = max(1, min(new, size - 1, self.catalog_root_end() - 1))
        os.truncate(path, new)
        self.truncated = True
        self.faults.append(Fault("truncate", self.soak.step, detail="%d of %d bytes" % (new, size)))
        key = self.key_for()
        cmds = [self.cmd("verify", "--format", "json"), self.cmd("state", "--format", "json"),
                self.cmd("replay", "--format", "jsonl"), self.cmd("stats"), self.cmd("audit"),
                self.cmd("validate", "--max-age", self.max_age_text), self.plan_load(key, "ok")[0],
                self.cmd("compact", "--before", "2")]
        if self.soak.has_rebuild:
            cmds.append(self.cmd("rebuild"))
        self.rng.shuffle(cmds)
        for cmd in cmds:
            o = self.run(cmd)
            if o.rc is None or o.rc < 0:
                continue
            if cmd.sub == "verify":
                self.fail(o.rc == 1, "truncation-missed", "verify of a data.mdb cut from %d to %d bytes: exit %d" % (size, new, o.rc), o)
            elif cmd.sub == "load":
                report = o.json if isinstance(o.json, dict) else {}
                self.fail(o.rc != 0 or report.get("cached") is False, "truncation-missed",
                          "load on a data.mdb cut from %d to %d bytes reports it cached (exit 0)" % (size, new), o)
            else:
                self.fail(o.rc == 1, "truncation-missed", "%s on a data.mdb cut from %d to %d bytes: exit %d" % (cmd.sub, size, new, o.rc), o)
            if o.rc == 1:
                lines = [line for line in problem_lines(o.err) if line.strip()]
                self.fail(len(lines) <= 2, "truncation-missed", "%s refuses with %d lines on stderr" % (cmd.sub, len(lines)), o)

    # ---- the check after every step

    # ---- retention: the rule, as Format.md ("Retention") states it

    def pressure_possible(self, prev, launched, policies):
        """Whether a size limit may have pressed during the step: the bytes in use before it
        (at most the pages the trees hold, and a bound on LMDB's free list) plus all it may have
        saved reach the target below a limit (LogTables.pressureTarget), or a pass under way
        already pressed."""
        if prev.retention_pass is not None and prev.retention_pass[2] > 0:
            return True
        incoming = sum(c.incoming for c in launched) + 65536 * len([c for c in launched if c.sub in WRITING])
        used = used_estimate(prev)[1] + incoming
        # The margin shrinks by as much as the file has grown past the limit (LogTables.pressureTarget),
        # and the file may have grown by all the step wrote.
        extent = prev.used_upper + incoming
        return any(p.size_limit is not None and used > max(p.size_limit // 2, int(0.9 * p.size_limit) - max(0, extent - p.size_limit))
                   for p in policies)

    def retention_verdict(self, r, ctx):
        """None when the rule lets record `r` go; else why it must stay. A record of key K may go
        only when it is history outside K's window as judged at a clock a writer ran with (or,
        under a pressing size limit, any history), and it is not K's live put (nor holds its
        payload), not the version K's history starts from (the last record of K before the
        window; with an expire there, also the put before it), and no stored record refers to
        its payload. A retention record stays as the policy's history."""
        key = r.key
        if r.kind == RETENTION:
            return "it is a retention record (a policy stays as its history)"
        if r.seq in ctx["live"]:
            return "it is the live put of %r or holds its payload" % short(r.key_text())
        if r.seq in ctx["referenced"]:
            return "a stored put refers to its payload"
        log, seqs = ctx["log"], ctx["key_seqs"].get(key, [])
        later = [q for q in seqs if q > r.seq]
        if not later:
            return "it is the last record of %r: the version its history starts from" % short(r.key_text())

        def keeps(b):
            """Whether b, as the version the history starts from, keeps r with it."""
            return r.seq in kept_with(log, seqs, b, ctx["present"], ctx["stored"], ctx["base"],
                                      key in ctx["base_keys"] or ctx["base_unknown"])

        if ctx["pressure"] or ctx["blurred"]:
            if any(not keeps(b) for b in later):
                return None
            return "it stays with the expire its history starts from (the put still live after it, or what ended the key while a put before it stays)"
        windows = set()
        for policy in ctx["policies"]:
            for contract in ctx["contracts"].get(key, {None}):
                windows.add(policy.window(key, contract))
        starts = []
        for window in sorted(w for w in windows if w is not None):
            for clock in sorted(ctx["clocks"]):
                cut = clock - window
                if not r.recorded_at < cut:
                    continue
                before = [q for q in seqs if log[q].header_ok and log[q].recorded_at < cut]
                b = before[-1]
                if b > r.seq and not keeps(b):
                    return None
                starts.append(b)
        if windows == {None}:
            return "its key keeps its history for ever"
        if not starts:
            return "recorded %s, inside its window (%s) at every clock a writer ran with (%s)" % (
                iso(r.recorded_at) if in_range(r.recorded_at) else r.recorded_at, ", ".join(
                    "forever" if w is None else "%ds" % w for w in sorted(windows, key=lambda w: -1 if w is None else w)),
                ", ".join(iso(c) for c in sorted(ctx["clocks"])[:4]) or "none")
        return "it is the version the history of %r starts from (seq %s)" % (short(r.key_text()), sorted(set(starts)))

    def gone_unseen(self, key, unseen, snap):
        """Whether a put of `key` appended during the step may be one of the seqs retention let go
        before a check saw them: a later record of the key is history by the rule (outside its
        window at a clock of the step, or any history under a pressing size limit), so the put was
        history too (what it was next to is not known: it went unseen). Takes the seq it explains."""
        ctx = self.retention_ctx
        seqs = [q for q in snap.seqs if snap.events[q].header_ok and snap.events[q].key == key]
        for m in list(unseen):
            later = [q for q in seqs if q > m]
            for b in later:
                r = snap.events[b]
                windows = {p.window(key, c) for p in ctx["policies"] for c in ctx["contracts"].get(key, {None})}
                if ctx["pressure"] or ctx["blurred"] or any(
                        w is not None and r.recorded_at < clock - w for w in windows for clock in ctx["clocks"]):
                    unseen.remove(m)
                    return True
        return False

    def judge_retention(self, snap, launched):
        """What went since the last check went by the rule; the zone, the trims and the new
        records say what Format.md says they do. Returns the seqs that went before any check saw
        them (appended and let go within the step)."""
        prev = self.prev if self.prev is not None else Snap(self.db + ".none", {})
        # The policy in effect is the one the harness set, recorded where meta says.
        r = snap.events.get(snap.retention_seq)
        found = policy_from_metadata(r.metadata) if r is not None and r.intact and r.kind == RETENTION else None
        self.fail(snap.retention_seq == self.policy_seq and (found is None and snap.retention_seq in {f.seq for f in self.faults}
                                                             or found is not None and found[0] == self.policy or not self.policy_seq),
                  "retention-policy", "meta retentionSeq is %d (%s); the harness set %s at seq %d" % (
                      snap.retention_seq, found[0] if found else "no policy there", self.policy, self.policy_seq))
        clocks = {c.now for c in launched if c.sub in WRITING and c.now is not None and math.isfinite(c.now)}
        if prev.retention_pass is not None:
            # A pass under way goes on at the clock it started with, whichever process runs it.
            clocks.add(prev.retention_pass[0])
        self.writer_clocks |= clocks
        for name, found in (("a pass under way", snap.retention_pass), ("the last pass", snap.retention_report)):
            if found is not None:
                self.fail(found[0] in self.writer_clocks, "retention-pass", "%s started at %s, a clock no writer ran with (%s)" % (
                    name, iso(found[0]) if in_range(found[0]) else found[0], short(sorted(iso(c) for c in self.writer_clocks if in_range(c)))))
        policies = list(dict.fromkeys(self.step_policies + [prev.policy(), snap.policy()]))
        planted = {f.seq for f in self.faults if f.kind == "delete"}
        flips = {f.seq: f for f in self.faults if f.kind == "flip"}
        log = dict(prev.events)
        log.update(snap.events)
        for seq in planted:
            if seq in self.known and seq not in log and seq > snap.base:
                log[seq] = self.known[seq]  # the key index still lists it: a history can start from it
        # Format.md, "The key index": a record damaged after its append stays listed under the key
        # it was appended with, so that key's history may start from it (a flipped key byte names
        # another key only to a reader of the bytes).
        appended_as = {}
        for f in self.faults:
            if f.kind == "flip" and f.key is not None:
                appended_as.setdefault(f.seq, f.key)
        key_seqs = {}
        for seq in sorted(log):
            if log[seq].header_ok or seq in appended_as:
                key_seqs.setdefault(appended_as.get(seq, log[seq].key), []).append(seq)
        # The live entries: the state rows, and the fold of the log as its records were appended,
        # which the writers' state is (a dropped row leaves its key live there). A byte flipped
        # in a record's key after its append makes the fold of the bytes give that key's put to
        # another key: an expire after it, which ended the key (Format.md, "Folding the log into
        # the state"), then no longer matches, and the version before the put looks live again.
        # Retention rightly lets that version go (it keeps what ended the key: "Retention"), as
        # the key index lists the record under the key it was appended with ("The key index").
        # Where a state row does not decode, a writer answers from the fold of the bytes, and so
        # keeps what that fold says is live too.
        live = set()
        base_known = snap.base_state() is not None
        folded = snap.fold(appended=self.undamaged) if base_known else {}
        by_bytes = snap.fold() if base_known and snap.malformed else {}
        for entry in list(snap.stored.values()) + list(folded.values()) + [by_bytes[k] for k in snap.malformed if k in by_bytes]:
            live.update((entry[0], entry[3]))
        # Format.md, "Who needs which record": refs lists each put under the source it was appended
        # with; a flipped body byte may name another seq, which the damaged record does not need.
        referenced = set()
        for r in snap.events.values():
            r = self.undamaged.get(r.seq, r)
            if r.framing_ok and r.kind == PUT and r.ref is not None:
                referenced.add(r.ref)
        contracts = {}
        for source in (prev, snap):
            entries = list(source.stored.items())
            # Format.md, "Folding the log into the state": a state row that does not decode is
            # answered from the log, so a key whose row is damaged has the window of the contract
            # its folded live put records (a contract override applies to it as to any key).
            # Without the base checkpoint the fold's start is not known: any put of the key may
            # be the live one, or none.
            if source.malformed:
                known = not source.base_checkpoint_damaged and source.base_state() is not None
                folded_rows = source.fold() if known else {}
                for k in source.malformed:
                    if k in folded_rows:
                        entries.append((k, folded_rows[k]))
                    elif not known:
                        entries += [(k, (q,)) for q in key_seqs.get(k, [])]
                        contracts.setdefault(k, set()).add(None)
            for k, entry in entries:
                r = log.get(entry[0])
                contracts.setdefault(k, set()).add((r.metadata or {}).get("contract") if r is not None and r.kind == PUT else None)
        # A damaged recorded time (a flipped byte 4-11, or a header that no longer frames) can mislead
        # the search for where a window starts: then any history may have gone.
        blurred = any(s in log and (not log[s].framing_ok or f.detail.startswith("header byte") and 4 <= int(f.detail.split()[2]) < 12)
                      for s, f in flips.items())
        ctx = {"log": log, "key_seqs": key_seqs, "live": live, "present": set(prev.events) | set(snap.events), "stored": set(snap.events),
               "base": snap.base, "base_keys": set(snap.base_state() or {}) if snap.base else set(),
               "base_unknown": snap.base_checkpoint_damaged,
               "referenced": referenced,
               "contracts": contracts, "clocks": clocks, "policies": policies, "blurred": blurred, "appended_as": appended_as,
               "pressure": self.pressure_possible(prev, launched, policies)}
        self.retention_ctx = ctx
        self.illegal = set()
        compacted = snap.base > prev.base
        went = []
        for seq in prev.seqs:
            if seq in snap.events or seq in planted or compacted and seq <= snap.base:
                continue
            r = prev.events[seq]
            self.let_go[seq] = r
            went.append(seq)
            if seq in flips or not r.header_ok:
                self.met("retention let a damaged record go")
                continue
            why = self.retention_verdict(r, ctx)
            if why is None:
                self.met("retention: history let go (%s)" % ("pressure" if ctx["pressure"] else "window"))
                continue
            self.illegal.add(seq)
            self.fail(False, "retention-illegal", "seq %d (%s of %r, recorded %s) is gone, but %s" % (
                seq, KIND_NAMES.get(r.kind, "?"), short(r.key_text()), iso(r.recorded_at) if in_range(r.recorded_at) else r.recorded_at, why))
        if went and not self.illegal:
            self.fail(True, "retention-illegal", "")  # one check per step: all that went, went by the rule
        unseen = [m for m in range(max(prev.last, snap.base) + 1, snap.last + 1) if m not in snap.events and m not in planted]
        for m in unseen:
            self.let_go[m] = None
        went += unseen
        # The zone: the highest seq retention let go, never lower; a missing seq up to it is not damage.
        if went:
            self.fail(snap.zone >= max(went), "retention-zone", "retention let seqs %s go, but meta retentionZone is %d: verify "
                      "would call them missing" % (short(sorted(went)), snap.zone))
        self.fail(snap.zone >= self.zone and snap.zone <= snap.last and (snap.zone == 0 or snap.zone not in snap.events),
                  "retention-zone", "meta retentionZone is %d (it was %d; the last seq is %d%s)" % (
                      snap.zone, self.zone, snap.last, ", and that record is stored" if snap.zone in snap.events else ""))
        self.zone = max(self.zone, snap.zone)
        # The trims: each key's history starts at a record of the key, after everything of the key
        # retention let go.
        for seq in went:
            r = self.let_go.get(seq)
            if r is None or not r.intact or r.kind == RETENTION or seq in flips:
                continue
            start = snap.trims.get(r.key, 0)
            if not self.fail(start > seq, "retention-trims", "seq %d of %r is gone, but trims says its history starts at seq %d" % (
                    seq, short(r.key_text()), start)):
                continue
        for k, start in snap.trims.items():
            r = snap.events.get(start) or self.known.get(start)
            ok = start <= snap.last and (r is None and (start in planted or start <= snap.base) or r is not None and (r.key == k or start in flips))
            self.fail(ok, "retention-trims", "trims says the history of %r starts at seq %d, which %s" % (
                short(k.decode("utf-8", "replace")), start, "is past the last seq" if start > snap.last else
                "is gone" if r is None else "is a record of %r" % short(r.key_text())))
        self.judge_new_records(prev, snap, log, launched, policies, ctx["pressure"], unseen)
        return unseen

    def judge_new_records(self, prev, snap, log, launched, policies, pressure, unseen):
        """The records appended since the last check: of record version 3 (Format.md: every record
        written from format 4 on), a retention record as Format.md frames it, and evictions only
        under a pressing size limit, the least recently saved first, each a delete with reason
        evicted."""
        new = [log[s] for s in sorted(log) if s > prev.last and log[s].intact]
        for r in new:
            self.fail(r.version == STAMPED, "record-version", "seq %d (%s) is record version %d; Format.md: the binary "
                      "writes version 3" % (r.seq, KIND_NAMES.get(r.kind), r.version))
            if r.kind == RETENTION:
                self.fail(r.key == b"" and r.ts_bits == bytes(8) and r.max_age == 0 and r.flags & 8 and policy_from_metadata(r.metadata),
                          "retention-record", "seq %d: a retention record with key %r, timestamp %r, maxAge %r, metadata %s" % (
                              r.seq, r.key, r.ts, r.max_age, short(r.metadata)))
        evictions = [r for r in new if r.kind == DELETE and r.reason == EVICTED]
        if not evictions:
            return
        self.fail(pressure, "eviction", "seqs %s evict live caches, but no size limit pressed (policies %s)" % (
            [r.seq for r in evictions], policies))
        spared = {c.key for c in launched if c.key is not None}
        batches = []
        for r in evictions:
            if batches and batches[-1][-1].seq == r.seq - 1:
                batches[-1].append(r)
            else:
                batches.append([r])
        base = prev.base_state() if prev.exists else {}
        # A record whose key bytes the harness flipped is still the key's it was appended with: its
        # state row and key index entry say so (Format.md, "The key index").
        appended_as = self.retention_ctx["appended_as"]
        by_key = {}
        for q in sorted(log):
            if log[q].header_ok or q in appended_as:
                by_key.setdefault(appended_as.get(q, log[q].key), []).append(q)
        for batch in batches:
            fold = dict(base or {})
            for s in sorted(log):
                if s >= batch[0].seq:
                    break
                r = log[s]
                if s <= prev.base or not r.framing_ok or r.kind == RETENTION:
                    continue
                k = appended_as.get(s, r.key)
                if r.kind == PUT:
                    fold[k] = (s, r.ts_bits, r.payload_len, r.ref if r.ref is not None else s)
                elif r.kind == DELETE:
                    fold.pop(k, None)
                elif k in fold and fold[k][1] == r.ts_bits:
                    del fold[k]
            evicted = {r.key for r in batch}
            self.met("eviction")
            for r in batch:
                if r.key not in fold:
                    # A put appended and let go within the step (evicted, then history under the
                    # pressing limit) is not in the log the check sees: the key may have been live
                    # by a seq that went unseen after its last record the check knows, when trims
                    # says retention let the key's history go past that seq.
                    known = [q for q in by_key.get(r.key, []) if q < batch[0].seq]
                    if any((not known or m > known[-1]) and m < batch[0].seq and snap.trims.get(r.key, 0) > m for m in unseen):
                        self.met("eviction of a key whose put went unseen")
                        continue
                self.fail(r.key in fold, "eviction", "seq %d evicts %r, which was not live" % (r.seq, short(r.key_text())))

            def saved(k):
                put = log.get(fold[k][0])
                return (put.recorded_at if put is not None else -math.inf, k)

            # A put that went unseen may have been the live one of a key: its rank is not known.
            # Nor is it to a writer when the key's live put is one the harness deleted, or one whose
            # header no longer frames: it learns when a cache was saved from its put, and passes over
            # a live entry whose put it cannot read (it would free none of its bytes either).
            doubtful = {k for k, e in fold.items() if any(e[0] < m < batch[0].seq for m in unseen)
                        or not any(e[0] in source.events and source.events[e[0]].framing_ok for source in (prev, snap))}
            for r in batch:
                if r.key not in fold or r.key in doubtful:
                    continue
                older = sorted(k for k in fold if k not in evicted and k not in spared and k not in doubtful and saved(k) < saved(r.key))
                self.fail(not older, "eviction-order", "seq %d evicts %r (saved %s) while %s, saved before it, stay live" % (
                    r.seq, short(r.key_text()), iso(saved(r.key)[0]), short([k.decode("utf-8", "replace") for k in older])))
            self.evicted_now += [(k, batch[-1].seq) for k in evicted]

    def check(self, planted=False):
        if self.truncated:
            return
        snap = self.read()
        launched, self.runner.launched = self.runner.launched, []
        self.evicted_now = []
        unseen = self.judge_retention(snap, launched)
        # 1. Every save reported since the last check is in the log as a put of the items served.
        new_puts = [snap.events[s] for s in snap.seqs if s > self.checked_last and snap.events[s].framing_ok
                    and snap.events[s].kind == PUT]
        taken = set()
        for save in self.pending:
            found = None
            near = []  # (rank, put, why): a put of the key that differs in its clock or its payload
            for r in new_puts:
                if r.seq in taken or r.key != save.key.bytes:
                    continue
                same_clock = isinstance(save.ts, (int, float)) and abs(r.ts - save.ts) < 0.001
                try:
                    items = json.loads(snap.payload(r.seq, r.key))
                except (OracleError, ValueError) as error:
                    near.append((0, r, "saved-unreadable", "is unreadable: %s" % error))
                    continue
                if same_json(items, save.items):
                    if same_clock:
                        found = r
                        break
                    near.append((1, r, "clock-altered", "is stamped %r (%s), the clock was %s" % (
                        r.ts, iso(r.ts) if -6e10 < r.ts < 2.5e11 else "?", iso(save.ts))))
                elif same_clock:
                    near.append((2, r, "payload-altered", "holds %s, not the %s served" % (short(items), short(save.items))))
            if found is None and near:
                _, r, cls, why = sorted(near, key=lambda n: (n[0], -n[1].seq))[0]
                self.fail(False, cls, "the save of %r reported at step %d is seq %d, which %s" % (
                    short(save.key.name), save.step, r.seq, why), cmd=save.cmd)
                found = r
            if found is None and self.gone_unseen(save.key.bytes, unseen, snap):
                self.met("retention let a save go before a check saw it")
                if self.expect_live.get(save.key.bytes) == "pending":
                    self.uncertain.add(save.key.bytes)
                continue
            ok = self.fail(found is not None, "saved-missing",
                           "load reported %r cached at %s; no put of it is in the log" % (short(save.key.name), save.ts), cmd=save.cmd)
            if found is not None and save.since is not None:
                if save.since == "alone":
                    lowest = highest = batch_start(snap, found) - 1
                    if found.seq - 1 in self.let_go:
                        lowest = found.seq - 2  # retention let the delete of its batch go
                    # Before its commit, a save that would pass the size limit makes room: the
                    # evictions it appended came after its request began.
                    while lowest > snap.base and (lowest in self.let_go or lowest in snap.events and snap.events[lowest].kind == DELETE
                                                  and snap.events[lowest].reason == EVICTED):
                        lowest -= 1
                else:
                    lowest, highest = save.since, found.seq - 1
                recorded = found.since_recorded
                self.fail(recorded is not None and lowest <= recorded <= highest,
                          "since-recorded", "the save of %r (seq %d) records since %r; its request began with the log at seq %s" % (
                              short(save.key.name), found.seq, (found.metadata or {}).get("since"),
                              lowest if highest == lowest else "%d or later" % lowest), cmd=save.cmd)
            if found is not None:
                taken.add(found.seq)
                save.seq = found.seq
                self.saves.append(save)
                if self.expect_live.get(save.key.bytes) == "pending":
                    self.expect_live[save.key.bytes] = found.seq
            elif not ok and self.expect_live.get(save.key.bytes) == "pending":
                self.expect_live.pop(save.key.bytes, None)
        self.pending = []
        # 1b. A save never replaces a newer cache, by the log's order: a put written since the
        # last check replaced a live put that began its fetch before its own (or, recording none,
        # landed no later than its own began). Keys whose state row or records the harness damaged
        # are judged by what the engine read there, which the fold does not tell.
        skip = self.damaged | self.state_faults | snap.malformed
        for r in new_puts:
            if not r.intact or r.key in skip:
                continue
            since = r.since_recorded
            if not self.fail(since is not None and since < r.seq, "since-recorded", "the put of %r at seq %d records since %r" % (
                    short(r.key_text()), r.seq, (r.metadata or {}).get("since"))):
                continue
            start = batch_start(snap, r)
            if start - 1 < snap.base or snap.base_state() is None:
                continue
            before = snap.fold(upto=start - 1).get(r.key)
            live = snap.events.get(before[0]) if before else None
            if live is None or not live.intact or live.kind != PUT or live.key != r.key:
                continue
            self.fail(not supersedes(live, since), "older-save-cached",
                      "seq %d, a put of %r whose request began at seq %d, replaced seq %d, whose fetch began at %s: a newer cache" % (
                          r.seq, short(r.key_text()), since, live.seq, live.since if live.since is not None else "no recorded seq"))
        for k, v in list(self.expect_live.items()):
            if v == "pending":
                self.uncertain.add(k)
        for k, seq in self.evicted_now:
            if isinstance(self.expect_live.get(k), int) and self.expect_live[k] < seq:
                self.expect_live[k] = None  # the model follows the evictions judge_new_records judged
        # 2. …and stays there (compaction drops only what is not in use; retention only history).
        for save in self.saves:
            if save.seq in snap.events or save.seq <= snap.base and save.seq not in [e[0] for e in snap.stored.values()]:
                continue
            if any(f.kind == "delete" and f.seq == save.seq for f in self.faults):
                continue
            if save.seq in self.let_go and save.seq not in self.illegal:
                self.met("retention let a save's put go")
                continue
            self.fail(False, "saved-missing", "the put of %r at seq %d (reported cached at step %d) is gone from the log" % (
                short(save.key.name), save.seq, save.step), cmd=save.cmd)
        self.saves = [s for s in self.saves if s.seq in snap.events]
        # 3. The live entries the model is sure of.
        for k in self.uncertain:
            entry = snap.stored.get(k)
            self.expect_live[k] = entry[0] if entry else None
        self.uncertain = set()
        for k, seq in self.expect_live.items():
            if k in self.damaged or k in snap.malformed:
                continue
            entry = snap.stored.get(k)
            self.fail((entry[0] if entry else None) == seq, "live-entry-lost",
                      "the live entry of %r is %s, the model expects %s" % (
                          short(k.decode("utf-8", "replace")), entry and "seq %d" % entry[0], seq and "seq %d" % seq))
        # 4. The log is what Format.md says, except where the harness damaged it.
        expect = expected_problems(snap)
        for f in self.faults:
            if f.kind == "delete":
                # Compaction past a record the harness deleted leaves its key index entry (the
                # index lists the seq, the log has no record): verify may say so at that seq.
                expect.allow(by_seq(f.seq))
        explained = self.explain(snap, expect)
        for label in explained:
            self.fail(False, "log-invariant", label)
        # 5. verify: exit 1 and report each fault, nothing else; exit 0 on a clean log.
        v = self.run(self.cmd("verify", "--format", "json"))
        if v.rc in (0, 1) and isinstance(v.json, dict):
            problems = [p for p in v.json.get("problems", []) if isinstance(p, dict)]
            self.fail(v.json.get("clean") is (not problems) and (v.rc == 0) is (not problems), "verify-output",
                      "clean=%s, %d problems, exit %d" % (v.json.get("clean"), len(problems), v.rc), v)
            for label, pred in expect.required:
                self.fail(any(pred(p) for p in problems), "verify-missed-fault",
                          "verify does not report: %s (it reports %s)" % (label, short([(p.get("seq"), p.get("message")) for p in problems], 300)), v)
            for p in problems:
                ok = any(pred(p) for _, pred in expect.required) or any(pred(p) for pred in expect.tolerated)
                self.fail(ok, "verify-false-alarm", "verify reports %r at seq %s, which the log does not show" % (
                    p.get("message"), p.get("seq")), v)
        elif v.rc in (0, 1):
            self.fail(False, "verify-output", "verify --format json printed no JSON object: %s" % short(v.out), v)
        else:
            self.fail(False, "verify-failed", "verify exit %d" % v.rc, v)
        # 6. state --format json lists the state table.
        s = self.run(self.cmd("state", "--format", "json"))
        # With a damaged row and no base checkpoint either, nothing tells the live state: refusing is honest.
        hopeless = self.unknowable(snap)
        if self.fail(s.rc == 0 or hopeless, "state-failed", "state exit %d%s" % (
                s.rc, " (a damaged state row must not block it)" if snap.malformed else ""), s) and s.rc == 0 \
                and isinstance(s.json, dict):
            got = {}
            for e in s.json.get("entries", []):
                got[str(e.get("key")).encode("utf-8", "surrogatepass")] = (e.get("seq"), e.get("bytes"), parse_iso(str(e.get("timestamp"))))
            # Each key as the state table holds it, or, where the table disagrees with the log
            # (a damaged row), as the fold of the log gives it.
            folded = snap.fold() if snap.base_state() is not None else {}
            options = {}
            for source in (snap.stored, folded):
                for k, entry in source.items():
                    ts = entry_ts(entry)
                    options.setdefault(k, []).append((entry[0], entry[2], ts if -6e10 < ts < 2.5e11 else None))
            must = {k for k, e in snap.stored.items() if folded.get(k) == e or k not in self.damaged}
            for k, opts in options.items():
                if k.decode("utf-8", "replace").encode() != k:
                    continue  # a key that is not UTF-8 comes back altered
                g = got.get(k)
                if g is None:
                    self.fail(k not in must, "state-mismatch", "state omits %r, which the state table holds as %s" % (
                        short(k.decode()), opts[0]), s)
                    continue
                same = any(g[0] == w[0] and g[1] == w[1] and (w[2] is None or (g[2] is not None and abs(g[2] - w[2]) < 0.001))
                           for w in opts)
                self.fail(same, "state-mismatch", "state lists %r as %s, the state table (or the log) holds %s" % (
                    short(k.decode()), g, opts), s)
            extra = [k for k in got if k not in options and "\ufffd" not in k.decode("utf-8", "replace")]
            self.fail(not extra, "state-mismatch", "state lists keys neither the state table nor the log has: %s" % short(extra), s)
            self.fail(s.json.get("seq") == snap.last, "state-mismatch", "state says seq %s, meta lastSeq is %d" % (s.json.get("seq"), snap.last), s)
            self.judge_freshness(s, snap)
        self.checked_last = snap.last
        self.prev = snap
        self.known.update(snap.events)
        self.step_policies = [self.policy]

    def judge_freshness(self, s, snap):
        """state's `fresh` and `expires` for each entry the log tells exactly: its put's recorded
        max age, counted from the trusted timestamp (never fresh when stamped in the future)."""
        for e in s.json.get("entries", []):
            k = str(e.get("key")).encode("utf-8", "surrogatepass")
            entry = snap.stored.get(k)
            rec = snap.events.get(entry[0]) if entry else None
            if (rec is None or not rec.intact or rec.kind != PUT or rec.key != k or e.get("seq") != entry[0]
                    or k in self.damaged or k in self.state_faults or k in snap.malformed):
                continue
            ts = entry_ts(entry)
            trusted = trusted_timestamp(ts, rec.recorded_at)
            fresh = is_fresh(ts, rec.recorded_at, self.now, rec.recorded_max_age)
            if trusted > self.now:
                self.met("state of a future-stamped cache")
            why = "cached %s (recorded %s), max age %ds, judged at %s" % (
                iso(ts) if in_range(ts) else ts, iso(rec.recorded_at) if in_range(rec.recorded_at) else rec.recorded_at,
                rec.recorded_max_age, iso(self.now))
            self.fail(e.get("fresh") is fresh, "state-freshness", "state calls %r %s, the rule says %s: %s" % (
                short(k.decode("utf-8", "replace")), "fresh" if e.get("fresh") else "not fresh", "fresh" if fresh else "not fresh", why), s)
            self.fail(e.get("maxAge") == rec.recorded_max_age, "state-freshness", "state gives %r maxAge %r, its put recorded %d" % (
                short(k.decode("utf-8", "replace")), e.get("maxAge"), rec.recorded_max_age), s)
            expires = trusted + rec.recorded_max_age
            if in_range(expires):
                got = parse_iso(str(e.get("expires")))
                self.fail(got is not None and abs(got - expires) < 0.001, "state-freshness",
                          "state says %r expires %r, the trusted timestamp plus the max age is %s (%s)" % (
                              short(k.decode("utf-8", "replace")), e.get("expires"), iso(expires), why), s)

    def explain(self, snap, expect):
        """Oracle findings the planted faults do not explain: each is a bug of the engine."""
        unexplained = []
        flips = {f.seq: f for f in self.faults if f.kind == "flip"}
        deletes = {f.seq: f for f in self.faults if f.kind == "delete"}
        ckpts = {f.seq for f in self.faults if f.kind == "checkpoint"}
        fault_keys = set(self.damaged) | self.state_faults
        for f in self.faults:
            if f.key is not None:
                fault_keys.add(f.key)
        # A flipped key byte may leave a key that is not UTF-8; the engine keeps such a key as a
        # string, with U+FFFD for the bad bytes, in the checkpoints and rows it writes.
        fault_keys |= {lossy(k) for k in fault_keys}
        for seq in snap.seqs:
            r = snap.events[seq]
            if not r.intact and seq not in flips:
                unexplained.append("seq %d is corrupt (%s) but was never damaged" % (seq, r.frame_err or "checksum"))
            elif r.intact and r.kind == PUT and r.ref is not None:
                t = snap.events.get(r.ref)
                bad = t is None or not t.intact
                cause = flips.get(r.ref) or deletes.get(r.ref)
                if bad and (cause is None or seq > cause.last_at_plant):
                    unexplained.append("seq %d (a put of %r written after seq %d was damaged) stores its payload as a reference to it" % (
                        seq, r.key_text(), r.ref) if cause else "seq %d references seq %d, which is %s" % (
                        seq, r.ref, "missing" if t is None else "corrupt"))
            elif r.intact and r.kind == PUT and r.ref is None and r.own_payload() is None:
                unexplained.append("seq %d: the body does not inflate to its payload length" % seq)
        have = set(s for s in snap.seqs if s > snap.base)
        for m in range(snap.base + 1, snap.last + 1):
            if m not in have and m not in deletes and m not in self.let_go:
                unexplained.append("seq %d is missing but was never deleted" % m)
        for s in snap.seqs:
            if s > snap.last:
                unexplained.append("seq %d is beyond meta lastSeq %d" % (s, snap.last))
        # A planted fault changes the fold only for the keys it touched (the damaged record's key,
        # and the key a flipped key byte made of it): every other key must agree.
        base_state = snap.base_state()

        def differing(a, b):
            return sorted(k for k in set(a) | set(b) if k not in fault_keys and a.get(k) != b.get(k))

        if base_state is not None:
            folded = snap.fold()
            for k in differing(folded, {k: v for k, v in snap.stored.items() if k not in snap.malformed}):
                unexplained.append("the state row of %r is %s, the fold of the log gives %s" % (
                    k.decode("utf-8", "replace"), snap.stored.get(k), folded.get(k)))
        for seq, decoded in snap.decoded_checkpoints.items():
            if decoded is None and seq not in ckpts:
                unexplained.append("checkpoint %d is damaged but was never touched" % seq)
            elif decoded is not None and seq > snap.base and base_state is not None:
                # Keys whose history retention trimmed past the checkpoint are not known there.
                trimmed = snap.trimmed_past(seq)
                wrong = [k for k in differing(decoded, snap.fold(seq)) if k not in trimmed]
                if wrong:
                    unexplained.append("checkpoint %d is not the fold of the log (keys %s)" % (seq, short(wrong)))
        prev = -math.inf
        for seq in snap.seqs:
            r = snap.events[seq]
            if not r.intact:
                continue
            if r.recorded_at < prev:
                unexplained.append("seq %d was recorded before the record preceding it" % seq)
            prev = max(prev, r.recorded_at)
        return unexplained

    # ---- the run

    def execute(self, steps):
        self.disk_limited = False
        self.soak.begin_step(self, "first-open")
        self.snap = Snap(self.db, self.stash)
        self.step_first_open()
        self.check()
        for i in range(steps):
            if self.soak.out_of_time():
                break
            self.tick()
            if i == steps // 2 and not self.soak.floor_checked:
                self.step_retention_floor()  # once a soak: its long history takes seconds
            weights = {
                "load": 24, "burst": 14, "validate": 6, "compact": 3, "rebuild": 2 if self.soak.has_rebuild else 0,
                "future_save": 2, "race_clocks": 3, "image": 4, "search": 10,
                "replay": 5, "state_as_of": 5, "inspect": 4, "flip": 4, "delete_record": 2, "damage_state": 2,
                "damage_checkpoint": 2, "full_disk": 1.5, "hostile_key": 3, "absurd": 4, "kill_write": 3,
                "heal": 8 if self.damaged & {k.bytes for k in self.keys} else 0,
                "truncate": 1 if i > steps * 0.7 else 0,
                "retention_set": 3, "retention_show": 1.5, "retention_apply": 2, "retention_press": 1.2, "retention_kill": 0.6,
            }
            if len([f for f in self.faults if f.kind in ("flip", "delete")]) >= 4:
                weights.update(flip=0, delete_record=0)
            names = sorted(weights)
            kind = self.rng.choices(names, [weights[n] for n in names])[0]
            self.soak.begin_step(self, kind)
            getattr(self, "step_" + kind)()
            if self.truncated:
                break
            self.check()

    def close(self, keep):
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The driver


class Soak:
    def __init__(self, args):
        self.seed = args.seed
        self.steps = args.steps
        self.verbose = args.verbose
        self.keep = args.keep
        self.max_seconds = args.max_seconds
        self.started = time.monotonic()
        self.tmp = tempfile.mkdtemp(prefix="cachelog-soak-")
        self.display = args.binary
        # A private copy: others may rebuild the binary while the soak runs.
        copy = os.path.join(self.tmp, "cachelog")
        shutil.copy2(args.binary, copy)
        home = os.path.join(self.tmp, "home")
        os.makedirs(home)
        self.runner = Runner(copy, args.binary, home)
        # The test writer beside the binary, for the floor's long history (step_retention_floor).
        writer = os.path.join(os.path.dirname(args.binary), "cachelog-writer")
        self.writer = writer if os.access(writer, os.X_OK) else None
        self.floor_checked = False
        self.ledger = Ledger(self.seed, args.binary, args.max_print)
        self.server = FeedServer()
        self.dead = DeadPort()
        self.step = 0
        self.seen = {}  # what the new rules' checks met, counted (a check that never meets its case proves nothing)
        help_text = subprocess.run([copy, "--help"], capture_output=True, text=True, timeout=30, env=self.runner.base_env).stdout
        subcommands = help_text.split("SUBCOMMANDS:", 1)[-1]
        self.has_rebuild = any(line.split()[:1] == ["rebuild"] for line in subcommands.splitlines())
        validate_help = subprocess.run([copy, "validate", "--help"], capture_output=True, text=True, timeout=30,
                                       env=self.runner.base_env).stdout
        self.has_dry_run = "--dry-run" in validate_help
        digest = hashlib.sha256(open(copy, "rb").read()).hexdigest()[:12]
        print("soak: seed %d, %d steps, binary %s (sha256 %s); rebuild %s, validate --dry-run %s" % (
            self.seed, self.steps, args.binary, digest, "yes" if self.has_rebuild else "not yet",
            "yes" if self.has_dry_run else "not yet"), flush=True)

    def out_of_time(self):
        return self.max_seconds and time.monotonic() - self.started > self.max_seconds

    def begin_step(self, run, kind):
        self.step += 1
        run.step_kind = kind
        self.ledger.context = (run.index, self.step, kind)
        if self.verbose:
            print("  step %d (run %d): %s" % (self.step, run.index, kind), flush=True)

    def main(self):
        rng = random.Random(self.seed)
        index = 0
        stopped_early = False
        try:
            while self.step < self.steps:
                if self.out_of_time():
                    stopped_early = True
                    break
                index += 1
                run = Run(self, index, random.Random(rng.getrandbits(64)))
                length = rng.randint(25, 70)
                remaining = self.steps - self.step - 1
                failed_before = self.ledger.failed
                try:
                    run.execute(min(length, max(0, remaining)))
                except Exception as error:  # a harness bug must not pass as a green run
                    import traceback
                    traceback.print_exc()
                    self.ledger.check(False, "harness-error", "%s: %s" % (type(error).__name__, error))
                keep = self.keep and self.ledger.failed > failed_before
                if keep:
                    print("soak: kept run %d at %s" % (index, run.dir), flush=True)
                run.close(keep)
        finally:
            self.server.stop()
            self.dead.close()
            if not self.keep:
                shutil.rmtree(self.tmp, ignore_errors=True)
        seconds = time.monotonic() - self.started
        if stopped_early:
            print("soak: stopped at the %ds time cap after %d of %d steps" % (self.max_seconds, self.step, self.steps), flush=True)
        if self.ledger.classes:
            print("soak: failure classes (seed %d):" % self.seed)
            for cls, (count, message, line, step) in sorted(self.ledger.classes.items()):
                print("  %-26s %4d× first at step %s: %s" % (cls, count, step, short(message, 200)))
                if line:
                    print("  %-26s       $ %s" % ("", short(line, 400)))
        passed = self.ledger.checks - self.ledger.failed
        print("soak: %d runs, %d commands, %.0fs" % (index, self.runner.invocations, seconds))
        if self.seen:
            print("soak: cases met: " + ", ".join("%s %d" % (label, n) for label, n in sorted(self.seen.items())))
        print("soak: %d steps, %d checks: %d passed, %d failed" % (self.step, self.ledger.checks, passed, self.ledger.failed), flush=True)
        return 0 if self.ledger.failed == 0 else 1


def default_binary():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=root, capture_output=True, text=True,
                              timeout=120).stdout.strip()
        if path and os.path.exists(os.path.join(path, "cachelog")):
            return os.path.join(path, "cachelog")
    except (OSError, subprocess.TimeoutExpired):
        pass
    return os.path.join(root, ".build", "debug", "cachelog")


def main():
    env_seed = os.environ.get("CACHELOG_SOAK_SEED")
    env_steps = os.environ.get("CACHELOG_SOAK_STEPS")
    parser = argparse.ArgumentParser(description="Seeded, model-based soak test for the cachelog binary.")
    parser.add_argument("--binary", help="the cachelog binary (default: swift build --show-bin-path)/cachelog")
    parser.add_argument("--seed", type=int, default=int(env_seed) if env_seed else DEFAULT_SEED)
    parser.add_argument("--steps", type=int, default=int(env_steps) if env_steps else DEFAULT_STEPS)
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="stop taking steps after this long (default: %ds for the default run, none otherwise)" % DEFAULT_MAX_SECONDS)
    parser.add_argument("--max-print", type=int, default=3, help="details printed per failure class (default 3)")
    parser.add_argument("--keep", action="store_true", help="keep the databases of runs that failed")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every step and command")
    args = parser.parse_args()
    if args.max_seconds is None:
        args.max_seconds = DEFAULT_MAX_SECONDS if (args.seed, args.steps) == (DEFAULT_SEED, DEFAULT_STEPS) else 0
    # A soak started in the background (`nohup … &`) inherits SIGINT ignored, and so would every
    # command it starts: `replay --follow`, stopped with SIGINT, would then never stop. A handler
    # (reset to the default by exec) gives the commands the SIGINT a user's terminal gives them.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args.binary = os.path.abspath(args.binary or default_binary())
    if not os.access(args.binary, os.X_OK):
        print("soak: no cachelog binary at %s (run swift build --product cachelog, or pass --binary)" % args.binary)
        return 2
    # A watchdog: whatever happens, the soak ends, and says which seed to replay.
    limit = (args.max_seconds or args.steps * 5) + 600

    def expire():
        print("soak: watchdog: no end after %ds; seed %d" % (limit, args.seed), flush=True)
        os._exit(3)

    timer = threading.Timer(limit, expire)
    timer.daemon = True
    timer.start()
    return Soak(args).main()


if __name__ == "__main__":
    sys.exit(main())
