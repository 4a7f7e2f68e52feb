#!/usr/bin/env bash
# The fault benchmark (issue #5): local clusters from the tarball, real node processes and FUSE
# mounts, measured by the itests' probe processes (Probe, ProbeLog, DeathWatch: JDK only, compiled
# here from itests/src/test/java). Each scenario runs ETCFS_BENCH_FAULT_RUNS times (default 3);
# every table ends with min / median / max.
#   node-kill   node1 and node3 write one shared file (a region each), node3 also its own file
#               with fsync; node3 is SIGKILLed and node2 starts writing node3's file at once.
#               Columns: victim down after the kill (death watch on its pid), node1's worst stall
#               on the shared file, takeover (kill -> first write on node3's file on node2),
#               whether each probe still writes at the end of the window (past the 10 s lease).
#   elasticity  node1 and node2 write files of their own; node3 leaves (etcfs umount) and joins
#               again (etcfs mount). Columns: baseline MiB/s (node1 + node2), leave time, leave
#               stall and bandwidth lost, join time (mount command start -> first write on the new
#               mount), join stall and bandwidth lost.
#   join        the same leave and join with nobody writing: join latency alone.
# Usage: faults.sh ETCFS_HOME WORKDIR   (ETCFS_BENCH_FAULT_PARTS="node-kill elasticity" picks
#   parts; ETCFS_BENCH_UP_ARGS and ETCFS_BENCH_TSV as for cluster.sh: the node-kill medians go
#   to the TSV)
set -euo pipefail
home=$1
work=$2
runs=${ETCFS_BENCH_FAULT_RUNS:-3}
window=${ETCFS_BENCH_KILL_WINDOW:-15}   # seconds the survivors are watched after the kill
baseline_s=${ETCFS_BENCH_BASELINE:-3}   # seconds of the elasticity baseline
record=65536
etcfs="$home/bin/etcfs"
fault_parts=${ETCFS_BENCH_FAULT_PARTS:-"node-kill elasticity"}
read -r -a up_args <<< "${ETCFS_BENCH_UP_ARGS:-}"
tsv=${ETCFS_BENCH_TSV:-/dev/null}
wanted() { [[ " $fault_parts " == *" $1 "* ]]; }
src=$(cd "$(dirname "$0")/.." && pwd)/itests/src/test/java/io/etcfs/itests
export ETCFS_RUNTIME_DIR="$work/rt"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'faults.sh: %s\n' "$*" >&2; exit 1; }
now() { date +%s%6N; }
jrun() { java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$work/classes" "io.etcfs.itests.$@"; }

declare -A probe_pid=()
cluster=""

cleanup() {
  set +e
  for name in "${!probe_pid[@]}"; do kill -9 "${probe_pid[$name]}" 2>/dev/null; done
  probe_pid=()
  if [[ -n $cluster && -f $cluster/cluster.env ]]; then
    "$etcfs" down --dir "$cluster" >/dev/null 2>&1
    for mp in "$cluster"/mnt/*; do
      grep -q " $mp " /proc/self/mountinfo && fusermount -uz "$mp"
    done
  fi
  cluster=""
}
trap cleanup EXIT

up() { # DIR NODES
  cleanup
  cluster=$1
  rm -rf "$cluster"
  "$etcfs" up --nodes "$2" --dir "$cluster" --size 4G "${up_args[@]}" >/dev/null
  for i in $(seq 1 "$2"); do
    grep -q " $cluster/mnt/node$i .* - fuse.etcfs " /proc/self/mountinfo \
      || die "$cluster/mnt/node$i is not an etcfs mount"
  done
}

remount() { # NODE
  # shellcheck disable=SC1091
  (source "$cluster/cluster.env" && "$etcfs" mount "$ETCFS_DEVICE" "$cluster/mnt/node$1" \
    --etcd "$ETCFS_ETCD" --name "$ETCFS_FS" --node "node$1" --state-dir "$cluster/run" \
    --log "$cluster/log/node$1.log" >/dev/null)
}

probe() { # NAME FILE ID OFFSET SLOTS [PROBE OPTIONS...]
  local name=$1 file=$2 id=$3 off=$4 slots=$5
  shift 5
  rm -f "$work/$name.log" "$work/$name.stop"
  jrun Probe --file "$file" --log "$work/$name.log" --id "$id" --size "$record" --offset "$off" \
    --slots "$slots" --stop-file "$work/$name.stop" "$@" >"$work/$name.out" 2>&1 &
  probe_pid[$name]=$!
}

done_since() { # NAME SINCE_US -> records completed since then
  awk -v s="$2" '$1 ~ /^[0-9]+$/ && $2 >= s { n++ } END { print n + 0 }' "$work/$1.log" 2>/dev/null \
    || echo 0
}

await_records() { # NAME N SINCE_US TIMEOUT_S
  local deadline=$(($(now) + $4 * 1000000))
  until (($(done_since "$1" "$3") >= $2)); do
    (($(now) < deadline)) || die "probe $1: fewer than $2 records in $4 s ($(tail -n 2 "$work/$1.log" 2>/dev/null | tr '\n' ' '))"
    kill -0 "${probe_pid[$1]}" 2>/dev/null || die "probe $1 exited: $(cat "$work/$1.out")"
    sleep 0.02
  done
}

stop_probe() { # NAME: asks it to end, kills it if it is stuck
  touch "$work/$1.stop"
  local pid=${probe_pid[$1]} i
  for i in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "probe_pid[$1]"
}

measure() { # NAME FROM_US TO_US KEY -> one of ProbeLog's measures
  jrun ProbeLog "$work/$1.log" "$record" "$2" "$3" | tr ' ' '\n' | sed -n "s/^$4=//p"
}

ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) / 1000 }'; }
lost() { awk -v base="$1" -v d="$2" 'BEGIN { if (base > 0) { l = 100 * (1 - d / base); printf "%.0f", l < 0 ? 0 : l } else print "-" }'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a + b }'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }

# Prints TABLE with a min / median / max line per numeric column and a count of "true" for the
# yes/no columns; the first column names the run.
summarize() { # FILE
  awk '
    NR == 1 { print; next }
    { print; rows++; ncol = NF; for (i = 2; i <= NF; i++) v[i, rows] = $i }
    END {
      for (k = 0; k < 3; k++) {
        label = k == 0 ? "min" : k == 1 ? "median" : "max"
        line = sprintf("%-8s", label)
        for (i = 2; i <= ncol; i++) {
          n = 0; t = 0
          for (r = 1; r <= rows; r++) {
            x = v[i, r]
            if (x == "true") t++
            if (x ~ /^-?[0-9.]+$/) a[++n] = x + 0
          }
          if (n == 0) { cell = (k == 1 ? t "/" rows " true" : ""); line = line sprintf(" %16s", cell); continue }
          for (p = 1; p <= n; p++) for (q = p + 1; q <= n; q++) if (a[q] < a[p]) { s = a[p]; a[p] = a[q]; a[q] = s }
          cell = k == 0 ? a[1] : k == 2 ? a[n] : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
          line = line sprintf(" %16s", cell)
        }
        print line
      }
    }' "$1"
}

rm -rf "$work" && mkdir -p "$work/classes"
say "compiling the probe harness"
javac -d "$work/classes" "$src/Probe.java" "$src/ProbeLog.java" "$src/DeathWatch.java"

# ---- node kill ----
kill_table="$work/node-kill.txt"
if wanted node-kill; then
printf '%-8s %16s %16s %16s %16s %16s %16s\n' run "victim down ms" "shared stall ms" \
  "takeover ms" "shared at end" "takeover at end" "failed ops" > "$kill_table"
for r in $(seq 1 "$runs"); do
  say "node kill, run $r of $runs"
  up "$work/kill" 3
  c=$cluster
  touch "$c/mnt/node1/shared"
  probe shared1 "$c/mnt/node1/shared" 1 0 256
  probe shared3 "$c/mnt/node3/shared" 3 $((256 * record)) 256
  probe own3 "$c/mnt/node3/victim" 30 0 16384 --fsync
  t=$(now)
  for p in shared1 shared3 own3; do await_records "$p" 20 "$t" 60; done
  vpid=$(cat "$c/run/node3.pid")
  jrun DeathWatch "$vpid" > "$work/death.txt" &
  watch_pid=$!
  until grep -q watching "$work/death.txt" 2>/dev/null; do sleep 0.01; done
  kill_us=$(now)
  kill -9 "$vpid"
  probe takeover "$c/mnt/node2/victim" 20 $((16384 * record)) 4096
  wait "$watch_pid"
  death_us=$(sed -n 2p "$work/death.txt")
  stop_probe shared3
  stop_probe own3
  sleep "$(awk -v w="$window" -v k="$kill_us" -v n="$(now)" 'BEGIN { s = w - (n - k) / 1e6; print (s > 0 ? s : 0) }')"
  end_us=$(now)
  shared_stall=$(measure shared1 "$kill_us" "$end_us" stall_ms)
  shared_end=$(measure shared1 "$kill_us" "$end_us" writing_at_end)
  takeover=$(measure takeover "$kill_us" "$end_us" first_after_ms)
  takeover_end=$(measure takeover "$kill_us" "$end_us" writing_at_end)
  failed=$(($(measure shared1 "$kill_us" "$end_us" errors) + $(measure takeover "$kill_us" "$end_us" errors)))
  stop_probe shared1
  stop_probe takeover
  printf '%-8s %16s %16s %16s %16s %16s %16s\n' "$r" "$(ms "$kill_us" "$death_us")" "$shared_stall" \
    "$takeover" "$shared_end" "$takeover_end" "$failed" >> "$kill_table"
done
median() { # FILE COLUMN: the median of a numeric column of a table (header skipped)
  awk -v c="$2" 'NR > 1 && $c ~ /^-?[0-9.]+$/ { a[++n] = $c + 0 }
    END { if (n == 0) { print "-"; exit }
      for (p = 1; p <= n; p++) for (q = p + 1; q <= n; q++) if (a[q] < a[p]) { t = a[p]; a[p] = a[q]; a[q] = t }
      print (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) }' "$1"
}
printf 'node kill: victim down, ms (median)\t%s\n' "$(median "$kill_table" 2)" >> "$tsv"
printf 'node kill: stall on the shared file, ms (median)\t%s\n' "$(median "$kill_table" 3)" >> "$tsv"
printf 'node kill: takeover of its file, ms (median)\t%s\n' "$(median "$kill_table" 4)" >> "$tsv"
fi

# ---- elasticity and join latency ----
el_table="$work/elasticity.txt"
if wanted elasticity; then
join_table="$work/join.txt"
printf '%-8s %16s %16s %16s %16s %16s %16s %16s\n' run "baseline MiB/s" "leave ms" \
  "leave stall ms" "leave lost %" "join ms" "join stall ms" "join lost %" > "$el_table"
printf '%-8s %16s %16s\n' run "leave ms" "join ms" > "$join_table"
for r in $(seq 1 "$runs"); do
  say "elasticity, run $r of $runs"
  up "$work/elastic" 3
  c=$cluster
  probe own1 "$c/mnt/node1/own1" 1 0 256
  probe own2 "$c/mnt/node2/own2" 2 0 256
  t=$(now)
  for p in own1 own2; do await_records "$p" 20 "$t" 60; done
  b0=$(now)
  sleep "$baseline_s"
  b1=$(now)
  base=$(sum "$(measure own1 "$b0" "$b1" mibs)" "$(measure own2 "$b0" "$b1" mibs)")
  l0=$(now)
  "$etcfs" umount "$c/mnt/node3" >/dev/null
  l1=$(now)
  leave_stall=$(max "$(measure own1 "$l0" "$l1" stall_ms)" "$(measure own2 "$l0" "$l1" stall_ms)")
  leave_bw=$(sum "$(measure own1 "$l0" "$l1" mibs)" "$(measure own2 "$l0" "$l1" mibs)")
  probe join "$c/mnt/node3/join" 3 0 1 --await-mount "$c/mnt/node3" --records 1
  j0=$(now)
  remount 3
  await_records join 1 "$j0" 60
  j1=$(measure join "$j0" "$(now)" last_us)
  join_stall=$(max "$(measure own1 "$j0" "$j1" stall_ms)" "$(measure own2 "$j0" "$j1" stall_ms)")
  join_bw=$(sum "$(measure own1 "$j0" "$j1" mibs)" "$(measure own2 "$j0" "$j1" mibs)")
  stop_probe join
  stop_probe own1
  stop_probe own2
  printf '%-8s %16s %16s %16s %16s %16s %16s %16s\n' "$r" "$base" "$(ms "$l0" "$l1")" \
    "$leave_stall" "$(lost "$base" "$leave_bw")" "$(ms "$j0" "$j1")" "$join_stall" \
    "$(lost "$base" "$join_bw")" >> "$el_table"
  say "join latency alone, run $r of $runs"
  q0=$(now)
  "$etcfs" umount "$c/mnt/node3" >/dev/null
  q1=$(now)
  probe quiet "$c/mnt/node3/quiet" 3 0 1 --await-mount "$c/mnt/node3" --records 1
  k0=$(now)
  remount 3
  await_records quiet 1 "$k0" 60
  k1=$(measure quiet "$k0" "$(now)" last_us)
  stop_probe quiet
  printf '%-8s %16s %16s\n' "$r" "$(ms "$q0" "$q1")" "$(ms "$k0" "$k1")" >> "$join_table"
done
fi
cleanup

printf '\netcfs fault benchmark, %s, %s, %s cores, %s, %s run(s) each\n' "$(date -u +%Y-%m-%d)" \
  "$(uname -r)" "$(nproc)" "$(free -g | awk '/Mem:/{print $2 " GiB"}')" "$runs"
if wanted node-kill; then
  printf '\nnode kill under load (node3 SIGKILLed; node2 takes over its file; watched %s s)\n' "$window"
  summarize "$kill_table"
fi
if wanted elasticity; then
  printf '\nelasticity (node3 leaves and joins while node1 and node2 write files of their own)\n'
  summarize "$el_table"
  printf '\njoin latency alone (nobody writing; join = mount command start to first write)\n'
  summarize "$join_table"
fi
