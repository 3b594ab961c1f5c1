#!/usr/bin/env bash
# Install the real agent clients that tests/e2e drives, at pinned versions, into a cache that
# later runs reuse (one npm install per client and version, ever, on a machine).
#
#   scripts/install-clients.sh                 # all four; prints NAME<TAB>BINARY per client
#   scripts/install-clients.sh claude codex    # just these
#   scripts/install-clients.sh ccusage         # optional tool, only when named: the usage report
#                                              # cleanup --keep-usage is checked against
#
# Cache: $CTXTOOL_E2E_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/ctxtool-e2e. Each client lands in
# <cache>/<package>@<version>/ and is only used once its binary answers --version, so a broken or
# half-finished install is redone, never trusted. Exit 1 when any client could not be installed
# (the tests skip those clients with the reason printed here).
set -euo pipefail

# The versions the end-to-end suite was written and run against. Bump one, run the suite.
CLAUDE_CODE="@anthropic-ai/claude-code@2.1.332"
OPENCODE="opencode-ai@1.18.33"
CODEX="@openai/codex@0.171.0"
GEMINI="@google/gemini-cli@0.61.0"  # Node >= 20
CCUSAGE="ccusage@18.0.11"  # optional; the version cleanup --keep-usage is tested with (Node >= 20.19.4)

cache="${CTXTOOL_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctxtool-e2e}"

spec_of() {
    case "$1" in
        claude) echo "$CLAUDE_CODE claude" ;;
        opencode) echo "$OPENCODE opencode" ;;
        codex) echo "$CODEX codex" ;;
        gemini) echo "$GEMINI gemini" ;;
        ccusage) echo "$CCUSAGE ccusage" ;;
        *) echo "install-clients.sh: unknown client '$1' (claude, opencode, codex, gemini, ccusage)" >&2
           return 2 ;;
    esac
}

works() { "$1" --version >/dev/null 2>&1; }

install_one() {
    local name=$1 spec bin dir tmp
    read -r spec bin <<<"$(spec_of "$name")"
    dir="$cache/${spec//\//+}"
    if ! works "$dir/node_modules/.bin/$bin"; then
        command -v npm >/dev/null || { echo "install-clients.sh: npm not found" >&2; return 1; }
        mkdir -p "$cache"
        tmp=$(mktemp -d "$cache/.installing.XXXXXX")
        if ! npm install --prefix "$tmp" "$spec" --no-audit --no-fund --loglevel=error >&2 \
                || ! works "$tmp/node_modules/.bin/$bin"; then
            rm -rf "$tmp"
            echo "install-clients.sh: could not install $spec from npm" >&2
            return 1
        fi
        rm -rf "$dir" && mv "$tmp" "$dir"
    fi
    printf '%s\t%s\n' "$name" "$dir/node_modules/.bin/$bin"
}

status=0
for name in "${@:-claude opencode codex gemini}"; do
    for one in $name; do install_one "$one" || status=1; done
done
exit $status
