#!/usr/bin/env bash
# Installs cachelog into a temporary prefix with Tools/install and uses what was installed as a
# user would: the binary (its version, the demo's load from a loopback server, a real state), the
# manual page through man, and the bash completion through bash-completion's own loader. Then
# installs again and checks that nothing changed but the binary's and the page's bytes being
# rewritten (an update in place).
set -euo pipefail
cd "$(dirname "$0")/../.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
fail() { echo "install-test: $*" >&2; exit 1; }

Tools/install "$prefix" > "$work/installed"
expected="bin/cachelog
share/man/man1/cachelog.1
share/bash-completion/completions/cachelog
share/zsh/site-functions/_cachelog
share/fish/vendor_completions.d/cachelog.fish"
[ "$(sed "s|^$prefix/||" "$work/installed")" = "$expected" ] || fail "Tools/install printed: $(cat "$work/installed")"
[ "$(cd "$prefix" && find . -type f | sed 's|^\./||' | sort)" = "$(sort <<<"$expected")" ] || fail "unexpected files under the prefix"

cachelog="$prefix/bin/cachelog"
"$cachelog" --version | grep -q '^cachelog ' || fail "--version printed: $("$cachelog" --version)"
# The toolchain's runtime is not needed by the installed binary (where it was linked statically).
if ldd "$cachelog" | grep -q 'libswiftCore'; then echo "install-test: note: dynamic Swift runtime" >&2; fi
# The tool's modules import FoundationEssentials alone on Linux: neither Foundation's
# internationalisation nor ICU's data (34 MB of the binary) is linked. An `import Foundation` in
# any of them would bring both back.
if [ "$(uname -s)" = Linux ] && ! ldd "$cachelog" | grep -q 'libswiftCore'; then
    ! grep -qa 'icudt' "$cachelog" || fail "the binary carries ICU's data: a module linked into cachelog imports Foundation"
    # The C++ runtime is linked in with the Swift runtime (Tools/release-link): as a shared
    # library, the loader resolved its thousands of symbol relocations at every start.
    ! ldd "$cachelog" | grep -q 'libstdc++' || fail "the binary loads libstdc++ (Tools/release-link found no libstdc++.a?)"
fi

# The demo loads from a loopback server through the installed binary, and keeps its database.
TMPDIR="$work" "$cachelog" demo --keep > "$work/demo.txt" 2>"$work/demo.err" || fail "demo failed: $(tail -3 "$work/demo.txt")"
db="$(sed -n 's/^  database //p' "$work/demo.txt")"
[ -d "$db" ] || fail "the demo kept no database"
state="$("$cachelog" --db "$db" state --as-of 2026-12-05T00:00:00Z)"
grep -q '^films  *2026-12-01T10:00:00Z' <<<"$state" || fail "state printed: $state"
"$cachelog" --db "$db" verify > "$work/verify.out" || fail "verify failed on the demo database"

# The manual page renders with man, without a warning, and names the subcommands.
MANWIDTH=80 man -l "$prefix/share/man/man1/cachelog.1" 2> "$work/man.err" | col -b > "$work/man.txt" ||
    fail "man -l failed: $(tail -3 "$work/man.err")"
[ ! -s "$work/man.err" ] || fail "man -l warned: $(head -3 "$work/man.err")"
grep -q 'cachelog' "$work/man.txt" && grep -q 'replay' "$work/man.txt" || fail "man -l rendered: $(head -5 "$work/man.txt")"
# A help text with a literal backslash at a line's end (a `\\` where a line continuation was
# meant) shows in the page as an escaped backslash.
! grep -n '\\e$' "$prefix/share/man/man1/cachelog.1" >&2 || fail "a help text ends a line with a backslash"
# man finds the page by name once PREFIX/bin is on PATH (man-db maps bin to ../share/man).
PATH="$prefix/bin:$PATH" man -w cachelog | grep -q "^$prefix/share/man/man1/cachelog.1" || fail "man -w cachelog did not find the installed page"

# bash-completion loads a command's completion on demand from each XDG_DATA_DIRS entry (and from
# ~/.local/share): PREFIX/share is one of them for /usr/local. Without the package, sourcing the
# file registers it. Either way `complete -p cachelog` shows the function.
loader=/usr/share/bash-completion/bash_completion
if [ -f "$loader" ]; then
    XDG_DATA_DIRS="$prefix/share:/usr/share" bash -c "source $loader && __load_completion cachelog && complete -p cachelog"
else
    bash -c "source '$prefix/share/bash-completion/completions/cachelog' && complete -p cachelog"
fi | grep -q 'cachelog$' || fail "the bash completion did not register"
words="$(bash -c "source '$prefix/share/bash-completion/completions/cachelog'
COMP_WORDS=(cachelog rep); COMP_CWORD=1; COMP_LINE='cachelog rep'; COMP_POINT=\${#COMP_LINE}
\$(complete -p cachelog | sed 's/.*-F \([^ ]*\) .*/\1/') cachelog rep cachelog; printf '%s\n' \"\${COMPREPLY[@]}\"")"
grep -qx 'replay' <<<"$words" || fail "completing 'cachelog rep' offered: $words"
grep -q '#compdef cachelog' "$prefix/share/zsh/site-functions/_cachelog" || fail "zsh completion lacks #compdef"
grep -q "^complete -c 'cachelog'" "$prefix/share/fish/vendor_completions.d/cachelog.fish" || fail "fish completion lacks complete -c"

# Again: the same files, the same completions and page; nothing else appears.
before="$(cd "$prefix" && find . -type f -exec md5sum {} + | sort -k2)"
Tools/install "$prefix" > "$work/again" 2> "$work/again.err"
cmp -s "$work/installed" "$work/again" || fail "a second install printed something else"
after="$(cd "$prefix" && find . -type f -exec md5sum {} + | sort -k2)"
[ "$before" = "$after" ] || fail "a second install changed files: $(diff <(echo "$before") <(echo "$after"))"
echo "install-test: ok ($(wc -l < "$work/installed") files; $("$cachelog" --version))" >&2
