#!/usr/bin/env python3
"""Runs README.md and the guides behind it as a newcomer would, and fails on any difference from what they show.

The documents (DOCS): README.md, the guides in Documentation/, ARCHITECTURE.md and
CONTRIBUTING.md, read in that order as one; below, "the README" is any of them.

Every fenced block with a language (sh, text, swift) has a marker on the line before its fence,
an HTML comment that a rendered README does not show:

    <!-- readme-test: session NAME -->          runs in the shell of session NAME
    <!-- readme-test: session NAME; one command -->
                                                only its first `$` line is a command: the rest
                                                is that command's output, `$` lines included
                                                (the demo prints the commands it runs)
    <!-- readme-test: swift NAME -->            a whole program (main.swift): compiles on its
                                                own, as the app NAME, and runs; the `text` block
    <!-- readme-test: output -->                right after it, marked so, is what it must print
                                                (a snippet that runs and has none fails)
    <!-- readme-test: swift NAME; compile only -->
                                                compiles, not run (and has no output block)
    <!-- readme-test: shown only: REASON -->    not run, for the reason given

A block with a language and no marker fails the test, so a new block cannot go untested.

README.md's rule map is checked too (in a whole run): every file a row names must exist
and declare each part of the row's symbol, a method with the labels the row gives.

Sessions. The blocks of one session run in README order in one bash process, so `export`,
`cd` and `kill $!` carry over from block to block. An `sh` block's commands must each exit 0
(the README shows no output for them, and none is compared). A `text` block is a transcript:
each `$ COMMAND` line (a line ending in `\\` continues it) is run, and what it prints on stdout
and stderr together, as a terminal shows it, must equal the lines under it up to the next `$`
(blank lines at the end do not count), and its exit status must be the one shown:
  - a last line `(exit N)` of those lines (blank lines after it do not count) is not output but
    the status N, which must not be 0; without one the command must exit 0. The demo prints
    such lines itself for the commands it runs, in the middle of its output, where they are
    output like any other line: only the last line is the status of the `$` command.
  - the status is bash's `$?` after the command line, as a newcomer's shell gives it: for a
    pipeline (`cachelog … | jq`) that of its last command, since the README does not set
    pipefail; for `a && b` that of the last command run.
A session runs
  - in the repository's root, in a network namespace of its own with only loopback up
    (`unshare --net`, or `unshare -rn` when not root), so that the README's port 8000 is free
    and nothing else on the machine answers on, or takes, a loopback port;
  - with `/tmp/` in its commands made a new temporary directory (and that directory made `/tmp/`
    again in what they print), HOME and TMPDIR inside it, LANG=C.UTF-8, and no COLUMNS,
    CACHELOG_*, NO_COLOR or XDG_* from the caller;
  - waiting, after a command that ends in `&` and names a port (`http.server 8000 … &`, or
    `("127.0.0.1", 8443)`), until the port accepts connections (a person types slower than a
    script);
  - within SESSION_SECONDS, after which it is killed with everything it started.
Before comparison, in what the commands print: SwiftPM's progress lines are dropped (they
depend on what is already built), and on both sides the VOLATILE rules apply: 5-digit loopback
ports (a server of the tool's own, on an ephemeral port) become PORT and the demo's database
names cachelog-demo-X. Add a rule to VOLATILE for a value that changes from run to run; a rule
may apply to the snippets only (see below), so that the sessions' times, fixed with --now,
stay compared.
A command whose output depends on the machine it runs on is compared through a MACHINE rule,
on both sides, instead of line by line:
  - `du -h …/bin/cachelog`, the installed binary's size: a size from BINARY_MEGABYTES (8M to
    32M; the README shows 17M, and with Foundation's ICU linked it was 61M) becomes the same
    placeholder; any other size stays as printed, and differs from the README's.
  - `ldd …/bin/cachelog`: the libraries are compared as a set, in any order, without those
    that differ between glibc versions and architectures (linux-vdso, the loader's path,
    libpthread, libdl, librt, libutil, libanl: glibc 2.34 merged them into libc). On both
    sides liblmdb and libz must be there and no ICU, Foundation, curl, XML or Swift runtime
    library (the runtime is linked statically), as the install section promises.
An update (README_TEST_UPDATE) keeps the README's listing where the two mean the same.

Snippets. Each swift block becomes the main.swift of its own executable target (`readme-NAME`,
or `readme-LLINE` without a name) in one package outside this one that depends on it by path, as
an app's package would (the public API only, every library product; `#sourceLocation` makes
compiler errors name README lines). The package lives in .build-readme and is kept, so a second
run compiles only what changed; it resolves its dependencies as this package does, from the
local copies (offline). It is built while the sessions run. Each snippet then runs (unless
`compile only`) in a network namespace where `python3 -m http.server 8000 --bind 127.0.0.1
--directory Documentation/examples/feeds` serves, with a temporary directory of its own as
TMPDIR (and as `/tmp/` in its text, and `/tmp/` again in what it prints); it must exit 0
within SNIPPET_SECONDS and print, on stdout and stderr together, the lines of its `output`
block (blank lines at the end do not count), after the VOLATILE rules on both sides. The rules
for the snippets only: a real-clock time (a Date as Foundation prints it, `2026-11-26 23:02:41
+0000`, or the library's ISO 8601, `2026-11-26T23:02:42.060Z`) becomes NOW, in the README
whatever it is, in what ran only when it falls within this run; the age of a cache the snippet
saved a moment before, `Ns old` for N from 0 to 9 seconds, is the same whatever N; the name of a
damaged data file moved aside, `data.mdb.damaged-20261207T144035Z`, is data.mdb.damaged-TIME.

    /usr/bin/python3 Tests/Readme/readme-test.py              # every block; Tools/test runs this
    /usr/bin/python3 Tests/Readme/readme-test.py --only tool  # one session (or `swift`)
    README_TEST_PRINT=1 …    also prints each transcript as it ran, ready to paste into README.md
    README_TEST_UPDATE=1 …   writes what ran into README.md's transcripts (with their
                             `(exit N)` lines) and output blocks (review with `git diff`; a
                             line that differs only in a volatile value keeps the README's)

Under libfaketime (the calendar stage of Tools/test, which runs it with the clock years ahead)
what is built is not built again, so that nothing built carries a future time (and a build in
another environment would start over): the snippets run as the last run built them (they are
built only when one is not, as in a whole Tools/test under a moved clock), a command that builds
(`swift build`, Tools/demo, Tools/install) or opens Chromium (which does not start under
libfaketime) is not run, and a session that shows what such a command
prints is passed over; each is named, with the reason.

The last line is `readme-test: N passed, M failed` (blocks); the exit status is 0 only when M is 0.
"""

import argparse
import datetime
import difflib
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
# The documents whose blocks run, in the order their sessions run (a session may span them).
DOCS = ["README.md", "Documentation/Tool.md", "Documentation/Library.md", "Documentation/Reliability.md",
        "Documentation/Performance.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
SNIPPETS = os.path.join(ROOT, ".build-readme")
EXAMPLES = "Documentation/examples/feeds"
SESSION_SECONDS = 900  # a session that installs builds in release mode when nothing is built yet
SNIPPET_SECONDS = 60
PORT_WAIT_SECONDS = 10

MARKER = re.compile(r"^\s*<!--\s*readme-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
STATUS = re.compile(r"\n\x1e(\d+) (\d+)\n")
# The line that ends a command's shown output when it exits non-zero, as the demo prints it.
EXIT = re.compile(r"^\(exit (\d+)\)$")
PROGRESS = re.compile(r"^(\[\d+/\d+\] .*|Building for (debugging|production)\.\.\.|Build (of product '.*' )?complete! \(.*\)|Planning build|Fetching .*|Fetched .*|Computing version .*|Computed .*|Creating working copy .*|Working copy .*)$")
# A server started in the background: `python3 -m http.server 8000 … &`, or a script that binds ("127.0.0.1", 8443).
BACKGROUND_PORT = re.compile(r"(?:http\.server\s+|\"127\.0\.0\.1\",\s*)(\d+)\b.*&\s*$", re.S)
STARTED = time.time()  # the real clock when this run started
# libfaketime's clock (Tests/Calendar/later), under which nothing is built (see the top).
FAKED_CLOCK = "libfaketime" in os.environ.get("LD_PRELOAD", "")
# Session commands not run under the faked clock, and why.
NOT_UNDER_FAKED_CLOCK = [
    (re.compile(r"^\s*(Tools/demo|Tools/install|swift build(?!\s+--show-bin-path))\b"),
     "it builds (what it builds is there from the run on the real clock)"),
    (re.compile(r"^\s*chromium\b"), "Chromium does not start under libfaketime (the suites open the report in it on the real clock)"),
]


def not_under_faked_clock(command):
    """Why `command` is not run under the faked clock; None when it is."""
    return next((reason for pattern, reason in NOT_UNDER_FAKED_CLOCK if pattern.search(command.text)), None)


def real_clock(match, printed):
    """A time the real clock gave a snippet: on the README's side any such time; in what a snippet
    printed only a time during this run (else it stays, and the comparison fails)."""
    text = match.group(0)
    try:
        moment = (datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S %z") if " " in text
                  else datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))).timestamp()
    except ValueError:
        return text
    return "NOW" if not printed or STARTED - 2 <= moment <= time.time() + 2 else text


# Values that differ from run to run, made the same on both sides before comparison:
# (pattern, replacement, where). The replacement is text, or a function of the match and whether
# it is in what ran (True) or in the README (False); `where` is "all", or "snippets" for what only
# the snippets print: the sessions fix their clock with --now, and their times are compared.
VOLATILE = [
    (re.compile(r"127\.0\.0\.1:\d{5}\b"), "127.0.0.1:PORT", "all"),
    (re.compile(r"cachelog-demo-[0-9A-F]{8}\b"), "cachelog-demo-X", "all"),
    # Foundation's description of a Date, and the library's ISO 8601 (with milliseconds).
    (re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000\b"), real_clock, "snippets"),
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"), real_clock, "snippets"),
    # The name a damaged data file is moved aside to: the time it was moved, on the real clock.
    (re.compile(r"\bdata\.mdb\.damaged-\d{8}T\d{6}Z(-\d+)?"), "data.mdb.damaged-TIME", "snippets"),
    # The age of a cache the same run saved a moment before: under 10 s on a loaded machine.
    (re.compile(r"\b\ds old\b"), "Ns old", "snippets"),
]


def binary_size(lines):
    """`du -h` of the installed binary: its size, which each toolchain and build changes a little,
    is compared as a range. Out of range it stays as printed, so that the comparison fails."""
    def size(line):
        match = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG])", line.strip())
        megabytes = float(match.group(1)) * {"K": 1 / 1024, "M": 1, "G": 1024}[match.group(2)] if match else None
        return f"SIZE {BINARY_MEGABYTES[0]}M to {BINARY_MEGABYTES[1]}M" if megabytes is not None and \
            BINARY_MEGABYTES[0] <= megabytes <= BINARY_MEGABYTES[1] else line
    return [size(line) for line in lines], []


def linked_libraries(lines):
    """`ldd … | cut -d' ' -f1`: the libraries the binary needs, as a sorted set without those that
    differ between glibc versions and architectures (the vDSO, the loader's path, libraries that
    glibc 2.34 merged into libc); and the promise of the install section checked."""
    names = sorted({line.strip() for line in lines if line.strip() and not GLIBC_VARIES.search(line.strip())})
    problems = [f"{name} is not linked, and the install section promises it" for name in LINKED
                if not any(re.fullmatch(re.escape(name) + r"\.so(\.\d+)*", found) for found in names)]
    problems += [f"{name} is linked, and the install section promises it is not" for name in names if NOT_LINKED.search(name)]
    return names, problems


# The installed binary's size in megabytes, as `du -h` prints it: the README shows 17M; with
# Foundation's internationalisation (ICU) linked it was 61M.
BINARY_MEGABYTES = (8, 32)
# Libraries of the installed binary that depend on the machine's glibc and architecture.
GLIBC_VARIES = re.compile(r"^(linux-vdso|linux-gate|ld-linux|/.*/ld-|libpthread\.|libdl\.|librt\.|libutil\.|libanl\.)")
# What the install section promises: the system's liblmdb and zlib, and static Swift and C++
# runtimes (libstdc++, which the loader relocated at every start) with neither Foundation's ICU
# nor libcurl.
LINKED = ("liblmdb", "libz")
NOT_LINKED = re.compile(r"icu|foundation|curl|swift|dispatch|blocksruntime|xml|stdc\+\+", re.I)
# Commands whose output depends on the machine: (a pattern of the command, a function from the
# lines shown or printed to (the lines compared, problems)), applied to both sides.
MACHINE = [
    (re.compile(r"^du -h \S*/bin/cachelog\b"), binary_size),
    (re.compile(r"^ldd \S*/bin/cachelog\b"), linked_libraries),
]


class Block:
    """One fenced block of the README and its marker."""

    def __init__(self, file, line, indent, language, lines, marker):
        self.file = file  # the document, relative to the repository's root
        self.line = line  # the fence's line number (1-based)
        self.indent = indent
        self.language = language
        self.lines = lines  # the content, without the indentation
        self.marker = marker  # the marker's text, or None
        self.session = None
        self.name = None
        self.options = set()
        self.kind = None  # "session", "swift", "output", "shown"
        self.error = None
        words = [part.strip() for part in (marker or "").split(";")]
        head = words[0]
        if marker is None:
            self.error = "no <!-- readme-test: … --> marker before this block"
        elif head.startswith("session "):
            self.kind, self.session = "session", head[len("session "):].strip()
            self.options = set(words[1:])
            if language not in ("sh", "text"):
                self.error = "a session block is `sh` or `text`"
            elif self.options - {"one command"}:
                self.error = f"a session block takes only the option `one command`, not {sorted(self.options)}"
        elif head == "swift" or head.startswith("swift "):
            self.kind, self.options = "swift", set(words[1:])
            self.name = head[len("swift"):].strip() or f"L{line}"
            if language != "swift":
                self.error = "a swift marker on a block that is not swift"
            elif self.options - {"compile only"}:
                self.error = f"a swift block takes only the option `compile only`, not {sorted(self.options)}"
            elif not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", self.name):
                self.error = f"a snippet's name is letters, digits, - and _: {self.name!r}"
        elif head == "output":
            self.kind = "output"
        elif head.startswith("shown only:") and head[len("shown only:"):].strip():
            self.kind = "shown"
        else:
            self.error = f"marker not understood: {marker}"

    def where(self):
        return f"{self.file}:{self.line}"


def parse_readme(text, file="README.md"):
    lines = text.split("\n")
    blocks = []
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, language = match.group(1), match.group(2)
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        content = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[index + 1:end]]
        if language:
            previous = index - 1
            while previous >= 0 and not lines[previous].strip():
                previous -= 1
            marker = MARKER.match(lines[previous]) if previous >= 0 else None
            blocks.append(Block(file, index + 1, indent, language, content, marker.group(1) if marker else None))
        index = end + 1
    return blocks


class Command:
    """One command of a session, with what the README shows it printing (None for `sh` blocks)
    and the exit status it shows (0 unless an `(exit N)` line ends its output)."""

    def __init__(self, block, line, text, expected):
        self.block, self.line, self.text, self.expected = block, line, text, expected
        self.expected_status = 0
        self.output = None
        self.status = None

    def take_status(self):
        """Moves a last `(exit N)` line of the shown output into expected_status."""
        if self.expected is None:
            return
        last = len(self.expected) - 1
        while last >= 0 and not self.expected[last].strip():
            last -= 1
        match = EXIT.match(self.expected[last]) if last >= 0 else None
        if match:
            self.expected_status = int(match.group(1))
            if self.expected_status == 0:
                raise ValueError(f"{self.block.file}:{self.line}: a command that exits 0 shows no `(exit 0)` line")
            del self.expected[last]


def commands_of(block):
    """The commands of a session block: `$` lines of a transcript, every line of an `sh` block."""
    commands = []
    continuing = False
    for offset, line in enumerate(block.lines):
        number = block.line + 1 + offset
        if block.language == "sh":
            if continuing:
                commands[-1].text += "\n" + line
            elif line.strip() and not line.lstrip().startswith("#"):
                commands.append(Command(block, number, line, None))
            else:
                continue
            continuing = line.endswith("\\")
            continue
        starts = line.startswith("$ ") and not continuing and not ("one command" in block.options and commands)
        if starts:
            commands.append(Command(block, number, line[2:], []))
        elif continuing:
            commands[-1].text += "\n" + line
        elif commands:
            commands[-1].expected.append(line)
        elif line.strip():
            raise ValueError(f"{block.where()}: a transcript starts with a `$ ` line, not {line!r}")
        continuing = (starts or continuing) and line.endswith("\\")
    for command in commands:
        command.take_status()
    return commands


def trimmed(lines):
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def volatile(text, printed=False, snippet=False):
    """The text with its volatile values replaced; `printed` when it is what ran, not the README."""
    for pattern, replacement, where in VOLATILE:
        if where == "all" or snippet:
            text = pattern.sub((lambda match, rule=replacement: rule(match, printed)) if callable(replacement) else replacement, text)
    return text


# iproute2's ip, which a user's PATH may not reach (it lives in sbin).
IP = shutil.which("ip", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") or "ip"


def namespace_prefix():
    """The command that runs a child in a network namespace of its own, or None where none can be made."""
    for prefix in (["unshare", "--net"], ["unshare", "-rn"]):
        try:
            probe = subprocess.run(prefix + ["--", IP, "link", "set", "lo", "up"], capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return prefix
    return None


def write_if_changed(path, text):
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as handle:
            handle.write(text)


def session_environment(scratch):
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("CACHELOG_", "XDG_", "LC_")) and key not in (
               "COLUMNS", "LINES", "NO_COLOR", "MANWIDTH", "PAGER", "MANPAGER",
               "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")}
    home = os.path.join(scratch, "home")
    os.makedirs(home, exist_ok=True)
    env.update(HOME=home, TMPDIR=scratch, LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="dumb")
    return env


def in_namespace(prefix, script_args):
    """argv that runs `bash script_args…` in a namespace of its own with loopback up, when there is one."""
    if not prefix:
        return ["bash"] + script_args
    return prefix + ["--", "bash", "-c", f'{IP} link set lo up && exec bash "$@"', "bash"] + script_args


def run_group(argv, cwd, env, seconds):
    """Runs argv in a process group of its own, stdout and stderr together, at most `seconds`;
    then ends whatever it left running (its servers). Returns (status, output, timed out)."""
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        timed_out = False
        try:
            child.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            child.wait()
        out.seek(0)
        return child.returncode, out.read().decode("utf-8", errors="replace"), timed_out


def run_session(name, commands, prefix):
    """Runs the commands in one bash, filling in each one's output and status."""
    scratch = tempfile.mkdtemp(prefix=f"readme-{name}-")
    try:
        script = ["set +e"]
        for number, command in enumerate(commands):
            script.append(":" if getattr(command, "passed_over", False) else command.text.replace("/tmp/", scratch + "/"))
            script.append(f"__readme_status=$?; printf '\\n\\036%d %d\\n' {number} \"$__readme_status\"")
            port = BACKGROUND_PORT.search(command.text)
            if port:
                script.append(
                    f"for __readme_try in $(seq {PORT_WAIT_SECONDS * 20}); do "
                    f"(exec 3<>/dev/tcp/127.0.0.1/{port.group(1)}) 2>/dev/null && break; sleep 0.05; done")
        path = os.path.join(scratch, "session.sh")
        with open(path, "w") as handle:
            handle.write("\n".join(script) + "\n")
        _, text, timed_out = run_group(in_namespace(prefix, [path]), ROOT, session_environment(scratch), SESSION_SECONDS)
        start = 0
        for match in STATUS.finditer(text):
            command = commands[int(match.group(1))]
            command.output = text[start:match.start()].replace(scratch + "/", "/tmp/").replace(scratch, "/tmp")
            command.status = int(match.group(2))
            start = match.end()
        if timed_out:
            return f"session {name} did not finish within {SESSION_SECONDS} s; killed. Its last output:\n" + text[start:][-2000:]
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def actual_lines(command):
    lines = (command.output or "").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line for line in lines if not PROGRESS.match(line)]


def check_session_block(block, commands):
    """The problems of one session block, as text (empty when it ran as written)."""
    problems = []
    for command in commands:
        shown = command.text.split("\n")[0]
        if command.status is None:
            problems.append(f"{block.where()}: `{shown}` did not run (the session ended before it)")
        elif command.expected is None:
            if command.status != 0:
                problems.append(f"{command.block.file}:{command.line}: `{shown}` exited {command.status}\n" + indent_text(command.output))
        else:
            expected, actual, trouble = compared(command, trimmed(command.expected), trimmed(actual_lines(command)))
            problems.extend(f"{command.block.file}:{command.line}: `{shown}`: {problem}" for problem in trouble)
            if expected != actual:
                diff = difflib.unified_diff(expected, actual, f"{block.file} (as written)", "what it printed", lineterm="", n=2)
                problems.append(f"{command.block.file}:{command.line}: `{shown}` printed something else (exit {command.status}):\n"
                                + "\n".join(diff))
                if any(pattern.search(command.text) for pattern, _ in MACHINE):
                    problems.append("  (compared through its MACHINE rule; as printed:)\n" + indent_text(command.output))
            if command.status != command.expected_status:
                problems.append(f"{command.block.file}:{command.line}: `{shown}` exited {command.status}, where the README shows "
                                + (f"(exit {command.expected_status})" if command.expected_status else "no (exit N) line (exit 0)"))
    return "\n".join(problems)


def compared(command, expected, actual):
    """The shown and the printed lines as they are compared (volatile values made the same, and a
    machine-dependent listing in its canonical form), and the problems a MACHINE rule found."""
    expected, actual = [volatile(line) for line in expected], [volatile(line, printed=True) for line in actual]
    problems = []
    for pattern, canonical in MACHINE:
        if pattern.search(command.text):
            (expected, shown_problems), (actual, printed_problems) = canonical(expected), canonical(actual)
            problems += [f"as the README shows it, {problem}" for problem in shown_problems]
            problems += [f"as it ran, {problem}" for problem in printed_problems]
    return expected, actual, problems


def indent_text(text):
    return "\n".join("    " + line for line in (text or "").rstrip("\n").split("\n"))


def as_ran(expected, actual, snippet=False):
    """What a command or snippet printed, in README form: where a line differs from the README's
    only in its volatile values, the README's line stays (so that an update does not churn them)."""
    shown = [volatile(line, snippet=snippet) for line in expected]
    matcher = difflib.SequenceMatcher(None, shown, [volatile(line, True, snippet) for line in actual], autojunk=False)
    lines = []
    for operation, low, high, start, end in matcher.get_opcodes():
        lines.extend(expected[low:high] if operation == "equal" else actual[start:end])
    return lines


def transcript(block, commands):
    """The block as it ran: each command, what it printed and its status, in README form."""
    lines = []
    for index, command in enumerate(commands):
        lines.extend(("$ " + command.text).split("\n"))
        expected, actual = trimmed(command.expected), trimmed(actual_lines(command))
        same, printed, _ = compared(command, expected, actual)
        if any(pattern.search(command.text) for pattern, _ in MACHINE) and same == printed:
            lines.extend(expected)  # a machine-dependent listing that means the same stays as the README has it
        else:
            lines.extend(as_ran(expected, actual))
        if command.status:
            lines.append(f"(exit {command.status})")
        # A blank line after a command's output stays where the README had one.
        if index + 1 < len(commands) and command.expected and not command.expected[-1].strip():
            lines.append("")
    return lines


class SnippetBuild:
    """The outside package of the swift blocks, built in the background."""

    def __init__(self, blocks):
        self.blocks = blocks
        self.process = None
        self.as_built = False
        self.log = None
        # One place run after run, as `/tmp/` in the sources: a source changes only when its
        # snippet does, so a second run builds nothing.
        self.scratch = os.path.join(SNIPPETS, "scratch")
        shutil.rmtree(self.scratch, ignore_errors=True)
        os.makedirs(self.scratch)

    def target(self, block):
        # Prefixed, so that no snippet's name can clash with a target of the package it depends on.
        return f"readme-{block.name}"

    def directory(self, block):
        """The snippet's own `/tmp/`, where it runs."""
        return os.path.join(self.scratch, self.target(block))

    def start(self):
        products = re.findall(r'\.library\(name: "([^"]+)"', open(os.path.join(ROOT, "Package.swift")).read())
        dependencies = "".join(f'                .product(name: "{product}", package: "{os.path.basename(ROOT)}"),\n' for product in products)
        targets = "".join(
            f'        .executableTarget(name: "{self.target(block)}", dependencies: [\n{dependencies}        ]),\n'
            for block in self.blocks)
        os.makedirs(os.path.join(SNIPPETS, "Sources"), exist_ok=True)
        # SwiftPM plans a path dependency's sources once, and misses a file added to it since (the
        # build then fails on a name the new file declares): the manifest names the package's
        # source files by a digest, so that a change to the list makes it plan again.
        listing = "\n".join(sorted(
            os.path.relpath(os.path.join(folder, name), ROOT)
            for top in ("Sources", "CLMDB") for folder, _, names in os.walk(os.path.join(ROOT, top)) for name in names))
        digest = hashlib.sha256(listing.encode()).hexdigest()[:16]
        # Written only when it changed, as the sources below: a second run (the calendar stage of
        # Tools/test, under a faked clock) then builds nothing.
        write_if_changed(os.path.join(SNIPPETS, "Package.swift"),
                         "// swift-tools-version: 6.0\n"
                         "// Written by Tests/Readme/readme-test.py: each README snippet as an app of its own.\n"
                         f"// The package's source files: {digest}\n"
                         "import PackageDescription\n\n"
                         'let package = Package(\n    name: "readme-snippets",\n    platforms: [.macOS(.v14)],\n'
                         f'    dependencies: [.package(path: "{ROOT}")],\n    targets: [\n{targets}    ],\n'
                         "    swiftLanguageModes: [.v6]\n)\n")
        wanted = {self.target(block) for block in self.blocks}
        for name in os.listdir(os.path.join(SNIPPETS, "Sources")):
            if name not in wanted:
                shutil.rmtree(os.path.join(SNIPPETS, "Sources", name))
        for block in self.blocks:
            directory = os.path.join(SNIPPETS, "Sources", self.target(block))
            os.makedirs(directory, exist_ok=True)
            source = "\n".join(block.lines).replace("/tmp/", self.directory(block) + "/")
            text = f'#sourceLocation(file: "{os.path.join(ROOT, block.file)}", line: {block.line + 1})\n{source}\n'
            write_if_changed(os.path.join(directory, "main.swift"), text)
        resolved = os.path.join(ROOT, "Package.resolved")
        if os.path.exists(resolved) and not os.path.exists(os.path.join(SNIPPETS, "Package.resolved")):
            shutil.copy(resolved, os.path.join(SNIPPETS, "Package.resolved"))
        # Under the calendar's clock the snippets run as the real-clock run built them; only a run
        # that finds them unbuilt (a whole Tools/test under the moved clock) builds them.
        self.as_built = FAKED_CLOCK and all(self.built(block) for block in self.blocks)
        if self.as_built:
            return
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(["swift", "build", "--package-path", SNIPPETS], stdin=subprocess.DEVNULL,
                                        stdout=self.log, stderr=subprocess.STDOUT)

    def finish(self):
        if self.as_built:
            return 0, ""
        self.process.wait()
        self.log.seek(0)
        output = self.log.read().decode("utf-8", errors="replace")
        return self.process.returncode, output


    def built(self, block):
        """Whether the snippet's binary was built from its source as it stands."""
        binary = os.path.join(SNIPPETS, ".build", "debug", self.target(block))
        source = os.path.join(SNIPPETS, "Sources", self.target(block), "main.swift")
        return os.path.exists(binary) and os.path.getmtime(binary) >= os.path.getmtime(source)

    def errors_for(self, block, output):
        """The compiler's lines about this block (its README lines)."""
        last = block.line + len(block.lines)
        path = os.path.join(ROOT, block.file)
        mine = [line for line in output.split("\n")
                if (m := re.match(re.escape(path) + r":(\d+):", line)) and block.line < int(m.group(1)) <= last]
        return list(dict.fromkeys(line.replace(path, block.file) for line in mine))  # each once, in order

    def run(self, block, prefix):
        binary = os.path.join(SNIPPETS, ".build", "debug", self.target(block))
        scratch = self.directory(block)
        os.makedirs(scratch, exist_ok=True)
        env = session_environment(scratch)
        serve = (f"python3 -m http.server 8000 --bind 127.0.0.1 --directory {ROOT}/{EXAMPLES} >/dev/null 2>&1 & "
                 f"for i in $(seq {PORT_WAIT_SECONDS * 20}); do (exec 3<>/dev/tcp/127.0.0.1/8000) 2>/dev/null && break; sleep 0.05; done; "
                 f'exec "$0"')
        argv = (prefix + ["--", "bash", "-c", f"{IP} link set lo up && " + serve, binary]) if prefix else ["bash", "-c", serve, binary]
        status, output, timed_out = run_group(argv, scratch, env, SNIPPET_SECONDS)
        if timed_out:
            return None, f"did not finish within {SNIPPET_SECONDS} s"
        return status, output.replace(scratch + "/", "/tmp/")


def update_readme(text, replacements):
    """README text with the given blocks' contents replaced (block line → new content lines)."""
    lines = text.split("\n")
    for block, content in sorted(replacements, key=lambda item: -item[0].line):
        start = block.line  # the index of the first content line
        end = start + len(block.lines)
        lines[start:end] = [(block.indent + line) if line else "" for line in content]
    return "\n".join(lines)


def rule_map_problems():
    """What is wrong with README.md's rule map: each row names a file that must exist and a
    symbol (`Type.member(label:)`) whose every part that file declares, with those labels."""
    text = open(os.path.join(ROOT, "README.md")).read()
    section = text.split("## Where a rule lives", 1)[1].split("\n## ", 1)[0] if "## Where a rule lives" in text else ""
    rows = [line for line in section.split("\n") if line.startswith("| ") and "`" in line]
    if not rows:
        return ["README.md: no rule map (a `## Where a rule lives` table of rule | file | symbol)"]
    problems = []
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        files, symbols = re.findall(r"`([^`]+)`", cells[1]), re.findall(r"`([^`]+)`", cells[2])
        if len(cells) != 3 or not files or len(symbols) != 1:
            problems.append(f"README.md: a row is not rule | `file` | `symbol`: {row}")
            continue
        path = os.path.join(ROOT, files[0])
        if not os.path.isfile(path):
            problems.append(f"README.md: {files[0]} does not exist ({cells[0]})")
            continue
        source = open(path).read()
        name, _, labels = symbols[0].partition("(")
        for part in name.split("."):
            if not re.search(r"\b(struct|enum|class|protocol|extension|actor|func|var|let|case|typealias)\s+" + re.escape(part) + r"\b", source):
                problems.append(f"README.md: {files[0]} declares no `{part}` ({symbols[0]})")
        if labels:
            wanted = [label for label in labels.rstrip(")").split(":") if label]
            member = name.split(".")[-1]
            declared = [[parameter.strip().split()[0].rstrip(":") for parameter in found.split(",") if parameter.strip()]
                        for found in re.findall(r"func\s+" + re.escape(member) + r"(?:<[^>]*>)?\(([^)]*)\)", source)]
            if wanted not in declared:
                problems.append(f"README.md: {files[0]} declares no `{member}` with the labels {wanted} (found {declared})")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="one session, or `swift` for the snippets")
    arguments = parser.parse_args()
    printing = os.environ.get("README_TEST_PRINT") == "1"
    updating = os.environ.get("README_TEST_UPDATE") == "1"
    if FAKED_CLOCK:
        print("readme-test: the clock is libfaketime's: no session command that builds is run; the snippets run as last built "
              "(built now only when they are not)", flush=True)
    started = time.monotonic()

    texts = {file: open(os.path.join(ROOT, file)).read() for file in DOCS}
    blocks = [block for file in DOCS for block in parse_readme(texts[file], file)]
    passed, failed = 0, 0
    replacements = []

    def report(block, problem, label):
        nonlocal passed, failed
        if problem:
            failed += 1
            print(f"FAIL {block.where()} {label}\n{problem}\n", flush=True)
        else:
            passed += 1
            print(f"ok   {block.where()} {label}", flush=True)

    names = [block.name for block in blocks if block.kind == "swift"]
    for block in blocks:
        if block.kind == "swift" and names.count(block.name) > 1:
            block.error = f"another snippet is named {block.name!r} too"
    for previous, block in zip([None] + blocks, blocks):
        if block.kind == "output" and not (previous and previous.kind == "swift" and "compile only" not in previous.options):
            block.error = "an output block follows the swift block that prints it"
        elif block.kind == "output" and block.language != "text":
            block.error = "an output block is `text`"
        if block.error:
            report(block, block.error, block.language)
    if arguments.only is None:
        problems = rule_map_problems()
        if problems:
            failed += 1
            print("FAIL README.md rule map\n" + "\n".join(problems) + "\n", flush=True)
        else:
            passed += 1
            print("ok   README.md rule map: every file and symbol it names exists", flush=True)
    good = [block for block in blocks if not block.error]
    snippets = [block for block in good if block.kind == "swift"] if arguments.only in (None, "swift") else []
    sessions = {}
    for block in good:
        if block.kind == "session" and arguments.only in (None, block.session):
            sessions.setdefault(block.session, []).append(block)
    shown = [block for block in good if block.kind == "shown"]
    if arguments.only is None:
        for block in shown:
            print(f"--   {block.where()} {block.language}, shown only: {block.marker.split(':', 1)[1].strip()}")
    if arguments.only and not sessions and not snippets:
        parser.error(f"no session named {arguments.only!r} (and not `swift`)")

    build = None
    if snippets:
        build = SnippetBuild(snippets)
        build.start()

    prefix = namespace_prefix()
    if prefix is None and sessions:
        print("readme-test: note: no network namespace can be made here; the sessions use this machine's loopback, "
              "where port 8000 must be free", flush=True)

    for name, session_blocks in sessions.items():
        commands = {}
        try:
            for block in session_blocks:
                commands[block.line] = commands_of(block)
        except ValueError as error:
            report(session_blocks[0], str(error), f"session {name}")
            continue
        if FAKED_CLOCK:
            passed_over = [(command, why) for block in session_blocks for command in commands[block.line]
                           if (why := not_under_faked_clock(command))]
            shown = next(((command, why) for command, why in passed_over if command.expected is not None), None)
            if shown:
                for block in session_blocks:
                    print(f"--   {block.where()} {block.language}, session {name}: passed over under the faked clock: "
                          f"`{shown[0].text.strip()}` shows its output, and is not run: {shown[1]}", flush=True)
                continue
            for command, why in passed_over:
                print(f"--   {command.block.file}:{command.line} sh, session {name}: `{command.text.strip()}` not run under the faked clock: {why}",
                      flush=True)
                command.passed_over = True
        every = [command for block in session_blocks for command in commands[block.line]]
        clock = time.monotonic()
        trouble = run_session(name, every, prefix)
        print(f"     session {name}: {len(every)} commands in {time.monotonic() - clock:.1f} s", flush=True)
        for block in session_blocks:
            problem = check_session_block(block, commands[block.line])
            if trouble and problem:
                problem = trouble + "\n" + problem
            report(block, problem, f"{block.language}, session {name}")
            if block.language == "text":
                ran = transcript(block, commands[block.line])
                if printing:
                    print(f"---- {block.where()} as it ran:\n" + "\n".join(ran) + "\n----")
                if updating:
                    replacements.append((block, ran))

    if build:
        clock = time.monotonic()
        status, output = build.finish()
        print(f"     swift snippets: built ({len(snippets)} targets) in {time.monotonic() - clock:.1f} s more", flush=True)
        for block in snippets:
            errors = build.errors_for(block, output)
            problem = None
            if errors:
                problem = "does not compile on its own:\n" + "\n".join(errors)
            elif status != 0:
                problem = "the snippets' package did not build:\n" + "\n".join(
                    line for line in output.split("\n") if "error" in line or "warning: " in line)
            elif "compile only" not in block.options:
                code, printed = build.run(block, prefix)
                position = blocks.index(block)
                following = blocks[position + 1] if position + 1 < len(blocks) else None
                if following is not None and following.file != block.file:
                    following = None
                if code != 0:
                    lines = printed.rstrip("\n").split("\n")
                    shown = lines[:30] + ([f"… ({len(lines) - 30} lines more)"] if len(lines) > 30 else [])
                    problem = f"exited {code}:\n" + indent_text("\n".join(shown))
                elif following is None or following.kind != "output":
                    problem = ("has no `<!-- readme-test: output -->` text block under it showing what it prints, which is:\n"
                               + indent_text(printed))
                else:
                    expected, actual = trimmed(following.lines), trimmed(printed.split("\n"))
                    shown = [volatile(line, snippet=True) for line in expected]
                    ran = [volatile(line, True, True) for line in actual]
                    if shown != ran:
                        problem = "printed something else:\n" + "\n".join(difflib.unified_diff(
                            shown, ran, f"{block.file} (as written)", "what it printed", lineterm="", n=2))
                    if updating:
                        replacements.append((following, as_ran(expected, actual, snippet=True)))
            report(block, problem, f"swift {block.name}" + ("; compile only" if "compile only" in block.options else ""))
        shutil.rmtree(build.scratch, ignore_errors=True)

    for file in DOCS if updating else []:
        mine = [(block, content) for block, content in replacements if block.file == file]
        if mine:
            with open(os.path.join(ROOT, file), "w") as handle:
                handle.write(update_readme(texts[file], mine))
            print(f"readme-test: wrote {len(mine)} blocks into {file} as they ran (review with git diff)")
    print(f"readme-test: {time.monotonic() - started:.0f} s")
    print(f"readme-test: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
