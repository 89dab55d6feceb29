#!/bin/sh
# startup.sh: what agentty costs before it does anything, and a whole
# `agentty run` of the offline model.
#   init: the sum of GODEBUG=inittrace's package initialisations of
#         `agentty --version` (best of ROUNDS);
#   run:  user+system CPU of `agentty run --model offline "what is 2+2"`
#         (median of ROUNDS), from /usr/bin/time.
# Usage: bench/startup.sh            (ROUNDS=11 by default)
set -eu
ROUNDS=${ROUNDS:-11}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/agentty
go build -o "$bin" .
home=$(mktemp -d)
export AGENTTY_HOME="$home" AGENTTY_CONFIG="$home/none.json"
inits=""
runs=""
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	inits="$inits $(GODEBUG=inittrace=1 "$bin" --version 2>&1 | awk '/^init/ {ms += $5} END {printf "%.1f", ms}')"
	runs="$runs $(/usr/bin/time -f '%U %S' "$bin" run --model offline 'what is 2+2' 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", ($1 + $2) * 1000}')"
	i=$((i + 1))
done
best=$(echo $inits | tr ' ' '\n' | sort -n | head -1)
median=$(echo $runs | tr ' ' '\n' | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p")
echo "init ms (best of $ROUNDS): $best   [$inits ]"
echo "run cpu ms (median of $ROUNDS): $median   [$runs ]"
rm -rf "$home" "$(dirname "$bin")"
