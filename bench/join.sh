#!/usr/bin/env bash
# The join benchmark (issue #13 item 5): how long a node takes from the start of `etcfs mount` to
# the first successful write on its mount, on a local 2-node cluster from the tarball, nobody else
# writing. A probe (itests' Probe, JDK only, compiled here) polls /proc/self/mountinfo and writes
# one record as soon as the mount appears. node3 joins and leaves ETCFS_BENCH_JOIN_RUNS times
# (default 7) in each of two modes, alternated:
#   cds      as etcfs runs it: with the installation's class-data-sharing archive
#   no-cds   the same with ETCFS_NODE_JAVA_OPTS=-Xshare:auto (the JVM's own archive only)
# A first join and leave before them records the archive if the installation has none yet.
# Columns: join (mount start -> first write), mount (mount start -> command returned), spawn
# (mount start -> the node's process started), the node's READY line (total and its steps), and
# the CPU time the node had used when mount returned (less noisy than wall time on a busy machine).
# Usage: join.sh ETCFS_HOME WORKDIR
set -euo pipefail
home=$1
work=$2
runs=${ETCFS_BENCH_JOIN_RUNS:-7}
etcfs="$home/bin/etcfs"
src=$(cd "$(dirname "$0")/.." && pwd)/itests/src/test/java/io/etcfs/itests
export ETCFS_RUNTIME_DIR="$work/rt"
c="$work/cluster"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'join.sh: %s\n' "$*" >&2; exit 1; }
now() { date +%s%6N; }

cleanup() {
  set +e
  [[ -n ${probe:-} ]] && kill -9 "$probe" 2>/dev/null
  if [[ -f $c/cluster.env ]]; then
    "$etcfs" down --dir "$c" >/dev/null 2>&1
    for mp in "$c"/mnt/*; do
      grep -q " $mp " /proc/self/mountinfo && fusermount -uz "$mp"
    done
  fi
}
trap cleanup EXIT

# One join of node3 in MODE; prints its row.
join() { # MODE RUN
  local mode=$1 r=$2 opts="" t0 t1 pid cpu st up tn spawn w ready
  [[ $mode == no-cds ]] && opts="-Xshare:auto"
  rm -f "$work/probe.log"
  java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$work/classes" io.etcfs.itests.Probe \
    --file "$c/mnt/node3/$mode-$r" --log "$work/probe.log" --id 3 --size 65536 --slots 1 \
    --await-mount "$c/mnt/node3" --records 1 >"$work/probe.out" 2>&1 &
  probe=$!
  # as in faults.sh: the probe's JVM polls long before a node's mount can appear
  t0=$(now)
  ETCFS_NODE_JAVA_OPTS="$opts" "$etcfs" mount "$ETCFS_DEVICE" "$c/mnt/node3" --etcd "$ETCFS_ETCD" \
    --name "$ETCFS_FS" --node node3 --state-dir "$c/run" --log "$c/log/node3.log" >/dev/null
  t1=$(now)
  pid=$(cat "$c/run/node3.pid")
  cpu=$(awk '{ print ($14 + $15) * 10 }' "/proc/$pid/stat")
  # the node's start, from its start time in clock ticks since boot against /proc/uptime
  st=$(awk '{ print $22 }' "/proc/$pid/stat")
  up=$(awk '{ print $1 }' /proc/uptime)
  tn=$(now)
  spawn=$(awk -v st="$st" -v up="$up" -v tn="$tn" -v t0="$t0" \
    'BEGIN { printf "%d", (tn - (up - st / 100) * 1e6 - t0) / 1000 }')
  wait "$probe" || die "probe failed: $(cat "$work/probe.out")"
  probe=""
  grep -q '^ERR' "$work/probe.log" && die "the first write failed: $(grep '^ERR' "$work/probe.log")"
  w=$(awk '$1 ~ /^[0-9]+$/ { print $2; exit }' "$work/probe.log")
  [[ -n $w ]] || die "the probe wrote nothing: $(cat "$work/probe.log")"
  ready=$(grep ' READY: ' "$c/log/node3.log" | tail -n 1 | sed 's/.*started in //')
  "$etcfs" umount "$c/mnt/node3" >/dev/null
  # ready looks like "1234 ms (jvm 90, framework 300, bundles 400, backend 5, components 200)"
  printf '%-8s %-7s %8d %8d %8d %8d %s\n' "$r" "$mode" $(((w - t0) / 1000)) $(((t1 - t0) / 1000)) \
    "$spawn" "$cpu" "$(awk '{ gsub(/[(),]/, ""); printf "%8s", $1; for (i = 3; i < NF; i += 2) printf " %s=%s", $i, $(i + 1) }' <<<"$ready")"
}

# min / median / max of the numeric columns 3-7, per mode
summarize() { # FILE
  awk '
    NR == 1 { next }
    { m = $2; n[m]++; for (i = 3; i <= 7; i++) v[m, i, n[m]] = $i }
    END {
      printf "%-16s %8s %8s %8s %8s %8s\n", "", "join", "mount", "spawn", "cpu", "ready"
      for (m in n) for (k = 0; k < 3; k++) {
        label = k == 0 ? "min" : k == 1 ? "median" : "max"
        line = sprintf("%-16s", m " " label)
        for (i = 3; i <= 7; i++) {
          c = n[m]; for (p = 1; p <= c; p++) a[p] = v[m, i, p]
          for (p = 1; p <= c; p++) for (q = p + 1; q <= c; q++) if (a[q] < a[p]) { s = a[p]; a[p] = a[q]; a[q] = s }
          x = k == 0 ? a[1] : k == 2 ? a[c] : (c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2)
          line = line sprintf(" %8s", x)
        }
        print line
      }
    }' "$1"
}

rm -rf "$work" && mkdir -p "$work/classes"
say "compiling the probe"
javac -d "$work/classes" "$src/Probe.java"
say "starting a 2-node cluster"
"$etcfs" up --nodes 2 --dir "$c" --size 1G >/dev/null
# shellcheck disable=SC1091
source "$c/cluster.env"
mkdir -p "$c/mnt/node3"
table="$work/join.txt"
printf '%-8s %-7s %8s %8s %8s %8s %8s %s\n' run mode "join ms" "mount ms" "spawn ms" "cpu ms" \
  "READY ms" "READY steps (ms)" >"$table"
say "first join (records the class-data-sharing archive if there is none)"
join cds 0 >"$work/first.txt"
for r in $(seq 1 "$runs"); do
  for mode in cds no-cds; do
    say "join $r of $runs, $mode"
    join "$mode" "$r" >>"$table"
  done
done
cleanup

printf '\netcfs join benchmark, %s, %s, %s cores, load %s, %s run(s) per mode\n' \
  "$(date -u +%Y-%m-%d)" "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$runs"
printf '\nfirst join of node3 (new bundle cache; archive recorded at its exit if missing)\n'
cat "$work/first.txt"
printf '\njoins (join = mount command start to the first write on the new mount)\n'
cat "$table"
printf '\n'
summarize "$table"
