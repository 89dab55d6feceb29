#!/usr/bin/env bash
# The side-by-side harness (../shared/bench) with a third peer: the floor
# (bench/floor), the same workload with no runtime at all. Measures, round by
# round and interleaved, Eino, the floor, agentty isolated and agentty inline
# in steps mode (one run of N steps) and concurrency mode (M runs of S steps at
# once), over a sweep of N and M, and prints each one's CPU per step with its
# spread, Eino's over it, and agentty's over the floor's, for each path.
#
#   cd <the agentty checkout> && bench/floor.sh
#
# A measurement is not one process: a process measures its own run (CPU from
# getrusage around it, start-up left out), and a 1,000-step run is about 2 ms
# of work, which one lucky or unlucky moment decides. Each measurement runs
# the peer's process again and again until the CPU they measured adds up to
# TARGET_MS, and is their total CPU over their total steps. The headline is
# the median of the rounds; min, max and the coefficient of variation are
# printed beside it, and a spread (CV) over 10 % is flagged.
#
# Env: ROUNDS (5), TARGET_MS (1000), STEPS ("1000 10000 50000": the run
# lengths), RUNS ("1000 10000 50000": the runs at once), S (10 steps each),
# PEERS ("eino floor agentty agentty-inline"), SHARED (the harness's folder,
# ../shared/bench), BASE (a git revision: agentty as it was there is measured
# too, as base and base-inline, in the same rounds: a before and after).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "${SHARED:-$src/../shared/bench}" && pwd)
export ROUNDS=${ROUNDS:-5} TARGET_MS=${TARGET_MS:-1000} STEPS=${STEPS:-1000 10000 50000} RUNS=${RUNS:-1000 10000 50000} S=${S:-10}
export PEERS=${PEERS:-eino floor agentty agentty-inline}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$shared/eino" "$shared/agentty" "$work/"
chmod -R u+w "$work"
( cd "$work/eino" && go build -o eino-bench . )
( cd "$work/agentty" && go mod edit -replace "github.com/agentty/agentty=$src" && go mod tidy >/dev/null 2>&1 && go build -o agentty-bench . )
( cd "$src" && go build -o "$work/floor" ./bench/floor )
if [ -n "${BASE:-}" ]; then # agentty at another revision, side by side in the same rounds
  git -C "$src" worktree add -f --detach "$work/base-src" "$BASE" >/dev/null 2>&1
  trap 'git -C "$src" worktree remove --force "$work/base-src" >/dev/null 2>&1; rm -rf "$work"' EXIT
  cp -r "$shared/agentty" "$work/base" && chmod -R u+w "$work/base"
  ( cd "$work/base" && go mod edit -replace "github.com/agentty/agentty=$work/base-src" && go mod tidy >/dev/null 2>&1 && go build -o agentty-bench . )
  PEERS="${PEERS} base base-inline"
fi
echo "$(go version); agentty $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?'); $(nproc) cores;" \
  "$ROUNDS rounds of ${TARGET_MS} ms of CPU per measurement"
export WORK=$work
python3 - <<'PY'
import os, re, subprocess, statistics as st, collections, sys
w = os.environ["WORK"]
cmds = {"eino": [f"{w}/eino/eino-bench"], "floor": [f"{w}/floor"],
        "agentty": [f"{w}/agentty/agentty-bench"], "agentty-inline": [f"{w}/agentty/agentty-bench"],
        "base": [f"{w}/base/agentty-bench"], "base-inline": [f"{w}/base/agentty-bench"]}
env_of = {"agentty-inline": {"INLINE": "1"}, "base-inline": {"INLINE": "1"}}
peers = os.environ["PEERS"].split()
rounds, target = int(os.environ["ROUNDS"]), float(os.environ["TARGET_MS"]) * 1000
S = int(os.environ["S"])
cases = [("steps", int(n), [str(n)], int(n)) for n in os.environ["STEPS"].split()] + \
        [("concur", int(m), [str(m), str(S)], int(m) * S) for m in os.environ["RUNS"].split()]

def measure(peer, mode, args, steps):
    """Runs the peer until its measured CPU adds up to target: CPU µs per step."""
    cpu = done = procs = 0
    env = dict(os.environ, **env_of.get(peer, {}))
    while cpu < target:
        out = subprocess.run(cmds[peer] + [mode] + args, env=env, capture_output=True, text=True, check=True).stdout
        per = float(re.search(r"cpu_us_per_step=([0-9.]+)", out).group(1))
        cpu, done, procs = cpu + per * steps, done + steps, procs + 1
    return cpu / done, procs

cpu = collections.defaultdict(list)
procs = {}
for r in range(1, rounds + 1):
    for mode, size, args, steps in cases:
        for peer in peers:
            v, n = measure(peer, mode, args, steps)
            cpu[(peer, mode, size)].append(v)
            procs[(peer, mode, size)] = n
            print(f"round {r} {peer:15} {mode:6} {size:6} {v:7.3f} us/step ({n} processes)", flush=True)

def spread(c):
    m = st.median(c)
    cv = st.pstdev(c) / st.mean(c) * 100 if len(c) > 1 else 0.0
    flag = "  SPREAD OVER 10%" if cv > 10 else ""
    return m, f"median {m:6.3f} us/step (min {min(c):.3f}, max {max(c):.3f}, cv {cv:4.1f}%){flag}"

print("\nCPU per step, medians of the rounds:")
for mode, size, _, _ in cases:
    for peer in peers:
        c = cpu[(peer, mode, size)]
        m, line = spread(c)
        extra = ""
        if "eino" in peers and peer != "eino":
            extra = f"   eino / this {st.median(cpu[('eino', mode, size)]) / m:5.2f}x"
        print(f"{peer:15} {mode:6} {size:6} {line}{extra}")
if "floor" in peers:
    print("\nagentty over the floor (medians; the spread is of the ratio round by round):")
    for mode, size, _, _ in cases:
        f = cpu[("floor", mode, size)]
        for peer in ("agentty", "agentty-inline", "base", "base-inline"):
            if peer not in peers:
                continue
            c = cpu[(peer, mode, size)]
            ratios = [a / b for a, b in zip(c, f)]
            cv = st.pstdev(ratios) / st.mean(ratios) * 100 if len(ratios) > 1 else 0.0
            print(f"{peer:15} {mode:6} {size:6} {st.median(c) / st.median(f):5.2f}x  (round by round {min(ratios):.2f}-{max(ratios):.2f}x, cv {cv:4.1f}%)")
for peer in ("agentty", "agentty-inline", "base", "base-inline", "floor"):
    if peer not in peers:
        continue
    for mode in ("steps", "concur"):
        sizes = sorted({size for m, size, _, _ in cases if m == mode})
        if len(sizes) > 1:
            lo, hi = st.median(cpu[(peer, mode, sizes[0])]), st.median(cpu[(peer, mode, sizes[-1])])
            print(f"{peer:15} {mode:6} CPU per step at {sizes[-1]} over {sizes[0]}: {hi / lo:4.2f}x")
PY
