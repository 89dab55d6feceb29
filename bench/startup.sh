#!/usr/bin/env bash
# startup.sh: the start-up people feel, and what agentty costs before it does
# anything. Medians of ROUNDS (min–max beside them):
#   version: the wall time of `agentty --version`;
#   run:     the wall time and the user+system CPU of
#            `agentty run --model offline "what is 2+2"`;
#   frame:   the console's first frame: from starting `agentty` in a tmux
#            window of its own (120×40) to its input line drawn, polled every
#            few milliseconds with capture-pane (so a few ms coarse);
#   init:    the sum of GODEBUG=inittrace's package initialisations of
#            `agentty --version` (best of ROUNDS), the part of each figure no
#            code of ours runs in.
# Usage: bench/startup.sh            (ROUNDS=10 by default; needs tmux)
set -euo pipefail
ROUNDS=${ROUNDS:-10}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
bin=$tmp/agentty
go build -o "$bin" .
home=$tmp/home
mkdir -p "$home"
export AGENTTY_HOME="$home" AGENTTY_CONFIG="$home/none.json" XDG_CONFIG_HOME="$home/xdg"
sock="agentty-startup-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
ms_since() { # start (EPOCHREALTIME) → milliseconds, to 0.1
  awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (b - a) * 1000 }'
}
versions="" runs="" cpus="" frames="" inits=""
"$bin" --version >/dev/null # the binary's pages in the cache, as for anyone who ran it once
for _ in $(seq 1 "$ROUNDS"); do
  t=$EPOCHREALTIME; "$bin" --version >/dev/null; versions="$versions $(ms_since "$t")"
  t=$EPOCHREALTIME; "$bin" run --model offline 'what is 2+2' >/dev/null 2>&1; runs="$runs $(ms_since "$t")"
  /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$bin" run --model offline 'what is 2+2' >/dev/null 2>&1
  cpus="$cpus $(awk '{printf "%.0f", ($1 + $2) * 1000}' "$tmp/cpu")"
  inits="$inits $(GODEBUG=inittrace=1 "$bin" --version 2>&1 >/dev/null | awk '/^init/ {ms += $5} END {printf "%.1f", ms}')"
  rm -f "$tmp/t0"
  # The window's shell notes the time and becomes agentty: the clock starts there.
  (cd "$tmp" && tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 -s s \
    "bash -c 'echo \$EPOCHREALTIME > $tmp/t0; exec $bin --workspace $tmp'")
  until [ -s "$tmp/t0" ] && tmux -L "$sock" capture-pane -p -t s 2>/dev/null | grep -q 'Ask the agent'; do
    if [ -s "$tmp/t0" ] && awk -v a="$(cat "$tmp/t0")" -v b="$EPOCHREALTIME" 'BEGIN { exit !((b - a) > 10) }'; then echo "no first frame in 10 s" >&2; exit 1; fi
  done
  frames="$frames $(ms_since "$(cat "$tmp/t0")")"
  tmux -L "$sock" kill-server 2>/dev/null || true
done
stats() { # label unit values…
  python3 - "$@" <<'PY'
import sys, statistics as st
label, unit, vals = sys.argv[1], sys.argv[2], [float(v) for v in sys.argv[3:]]
print(f"{label:8} median {st.median(vals):7.1f} {unit}  (min {min(vals):.1f}, max {max(vals):.1f}; {len(vals)} rounds)")
PY
}
stats version "ms wall" $versions
stats run "ms wall" $runs
stats run-cpu "ms CPU" $cpus
stats frame "ms wall" $frames
echo "init     best $(echo $inits | tr ' ' '\n' | sort -n | head -1) ms of package initialisation (every figure above pays it)"
