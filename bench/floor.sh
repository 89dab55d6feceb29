#!/usr/bin/env bash
# The side-by-side harness (../shared/bench) with a third peer: the floor
# (bench/floor), the same workload with no runtime at all. Interleaves, round
# by round, Eino, the floor, agentty isolated and agentty inline, in steps and
# concurrency mode, and prints each one's CPU per step and Eino's divided by
# it: the floor's ratio is the most any runtime could show on this harness;
# then agentty's CPU per step over the floor's, for each path.
#
#   cd <the agentty checkout> && bench/floor.sh
#
# Env: ROUNDS (7), N (1000 steps), M (1000 runs), S (10 steps each), SHARED
# (the harness's folder, ../shared/bench).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "${SHARED:-$src/../shared/bench}" && pwd)
ROUNDS=${ROUNDS:-7} N=${N:-1000} M=${M:-1000} S=${S:-10}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$shared/eino" "$shared/agentty" "$work/"
chmod -R u+w "$work"
( cd "$work/eino" && go build -o eino-bench . )
( cd "$work/agentty" && go mod edit -replace "github.com/agentty/agentty=$src" && go mod tidy >/dev/null 2>&1 && go build -o agentty-bench . )
( cd "$src" && go build -o "$work/floor" ./bench/floor )
echo "$(go version); agentty $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?'); $(nproc) cores"
out=$work/rounds.txt
for r in $(seq 1 "$ROUNDS"); do
  for mode in steps concur; do
    args=$N; [ "$mode" = concur ] && args="$M $S"
    for cmd in "eino $work/eino/eino-bench" "floor $work/floor" \
               "agentty $work/agentty/agentty-bench" "agentty-inline env INLINE=1 $work/agentty/agentty-bench"; do
      set -- $cmd; peer=$1; shift
      cpu=$("$@" $mode $args | grep -o 'cpu_us_per_step=[0-9.]*' | cut -d= -f2)
      echo "$r $peer $mode $cpu" | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import sys, statistics as st, collections
cpu = collections.defaultdict(list)
for l in open(sys.argv[1]):
    r, peer, mode, v = l.split()
    cpu[(peer, mode)].append(float(v))
for mode in ("steps", "concur"):
    e = cpu[("eino", mode)]
    for peer in ("eino", "floor", "agentty", "agentty-inline"):
        c = cpu[(peer, mode)]
        print(f"{peer:15} {mode:6} cpu {st.median(c):6.2f} us/step (min {min(c):.2f})   "
              f"eino's / this: {min(e)/min(c):5.1f}x (best rounds), {st.median(e)/st.median(c):5.1f}x (medians)")
    f = cpu[("floor", mode)]
    for peer in ("agentty", "agentty-inline"):
        c = cpu[(peer, mode)]
        print(f"{peer:15} {mode:6} agentty / floor: {min(c)/min(f):4.2f}x (best rounds), {st.median(c)/st.median(f):4.2f}x (medians)")
PY
