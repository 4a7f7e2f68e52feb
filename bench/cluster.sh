#!/usr/bin/env bash
# The multi-node benchmark (issue #4): local clusters on one device image and one etcd, real
# node processes and FUSE mounts, printed as tables.
#   handoff  node1 writes a file with fsync and publishes it (user.etcfs.publish); node2 reads it
#            at once: time to first byte and read MiB/s, beside node1 reading its own file.
#   stat     node1 writes and closes small files; ls -l of them on node2 (the writer's locks
#            declared clean: no recall) beside ls -l on node1; then node1 keeps a file open and
#            appends, and node2 stats it after every append (a recall each) beside node1's stat.
#   scaling  1, 2, 3 and 6 nodes writing at once: one shared file (a region each), a file each,
#            and creates in one shared directory; aggregate rates and their ratio to one node.
# Usage: cluster.sh ETCFS_HOME WORKDIR   (ETCFS_BENCH_PARTS="handoff stat scaling" picks parts;
#   ETCFS_BENCH_UP_ARGS adds words to every `etcfs up`, e.g. "--lock hazelcast"; ETCFS_BENCH_TSV
#   names a file each figure is appended to as "name<TAB>value", for bench/strategies.sh)
set -euo pipefail
home=$1
work=$2
sizes=${ETCFS_BENCH_HANDOFF_SIZES:-"1M 64M 1G"}
counts=${ETCFS_BENCH_NODES:-"1 2 3 6"}
region=${ETCFS_BENCH_REGION_MB:-256}   # MiB each node writes in the scaling runs
files=${ETCFS_BENCH_NODE_FILES:-1000}  # creates per node in the shared directory
parts=${ETCFS_BENCH_PARTS:-"handoff stat scaling"}
listed=${ETCFS_BENCH_STAT_FILES:-500}  # files node1 writes for ls -l on node2
appends=${ETCFS_BENCH_STAT_APPENDS:-100}  # appends node2 stats, a recall each
etcfs="$home/bin/etcfs"
export ETCFS_RUNTIME_DIR="$work/rt"
read -r -a up_args <<< "${ETCFS_BENCH_UP_ARGS:-}"
tsv=${ETCFS_BENCH_TSV:-/dev/null}
figure() { printf '%s\t%s\n' "$1" "$2" >> "$tsv"; } # NAME VALUE

say() { printf '==> %s\n' "$*" >&2; }
now() { date +%s%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
mibs() { awk -v bytes="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", bytes / 1048576 / ((b - a) / 1e9) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
bytes() { numfmt --from=iec "$1"; }

cluster=""
down() {
  [[ -n $cluster && -f $cluster/cluster.env ]] && "$etcfs" down --dir "$cluster" >/dev/null 2>&1
  cluster=""
}
trap down EXIT

up() { # NODES
  down
  cluster="$work/c$1"
  rm -rf "$cluster"
  say "starting $1 node(s)"
  "$etcfs" up --nodes "$1" --dir "$cluster" --size 12G "${up_args[@]}" >/dev/null
  for i in $(seq 1 "$1"); do
    grep -q " $cluster/mnt/node$i .* - fuse.etcfs " /proc/self/mountinfo \
      || { echo "bench: $cluster/mnt/node$i is not an etcfs mount" >&2; exit 1; }
  done
}

# first byte: open and read 1 byte, timed; then the whole file
first_byte() { # FILE -> ns
  local t0; t0=$(now)
  head -c 1 "$1" >/dev/null
  echo $(($(now) - t0))
}
read_all() { # FILE -> ns
  local t0; t0=$(now)
  dd if="$1" of=/dev/null bs=1M status=none
  echo $(($(now) - t0))
}

stat_ns() { # FILE -> ns of one stat(1) of it
  local t0; t0=$(now)
  stat -c %s "$1" >/dev/null
  echo $(($(now) - t0))
}

rm -rf "$work" && mkdir -p "$work"
: > "$work/handoff.txt"; : > "$work/stat.txt"; : > "$work/scaling.txt"
has() { [[ " $parts " == *" $1 "* ]]; }

# ---- handoff ----
if has handoff; then
up 2
n1="$cluster/mnt/node1"
n2="$cluster/mnt/node2"
printf '\nhandoff: written with fsync and published on node1, read on node2 (node1 = reading its own file)\n' >> "$work/handoff.txt"
printf '%-6s %14s %14s %12s %12s %8s\n' size "ttfb node2 ms" "ttfb node1 ms" "node2 MiB/s" "node1 MiB/s" "2/1" >> "$work/handoff.txt"
# one hand-over first, unmeasured: the nodes' JIT and lock sessions warm up
echo warm > "$n1/warm" && setfattr -n user.etcfs.publish "$n1/warm" && cat "$n2/warm" >/dev/null
for size in $sizes; do
  say "handoff of $size"
  f="h-$size"
  fio --directory="$n1" --name=w --filename="$f" --rw=write --bs=1M --size="$size" \
    --end_fsync=1 >/dev/null 2>&1
  setfattr -n user.etcfs.publish "$n1/$f"
  t2=$(first_byte "$n2/$f")
  r2=$(read_all "$n2/$f")
  t1=$(first_byte "$n1/$f")
  r1=$(read_all "$n1/$f")
  b=$(bytes "$size")
  m2=$(mibs "$b" 0 "$r2")
  m1=$(mibs "$b" 0 "$r1")
  printf '%-6s %14s %14s %12s %12s %8s\n' "$size" "$(ms 0 "$t2")" "$(ms 0 "$t1")" "$m2" "$m1" \
    "$(ratio "$m2" "$m1")" >> "$work/handoff.txt"
  figure "handoff $size: first byte on node2, ms" "$(ms 0 "$t2")"
  figure "handoff $size: read on node2, MiB/s" "$m2"
  rm -f "$n1/$f"
done
fi

# ---- stat ----
if has stat; then
up 2
n1="$cluster/mnt/node1"
n2="$cluster/mnt/node2"
say "stat: $listed files written and closed on node1, listed on both nodes"
mkdir "$n1/listed" "$n1/warm"
for i in $(seq 1 50); do echo "file $i" > "$n1/warm/f$i"; done
ls -l "$n1/warm" "$n2/warm" >/dev/null # the same code paths once on both nodes (JIT), unmeasured
for i in $(seq 1 "$listed"); do echo "file $i" > "$n1/listed/f$i"; done
t0=$(now); ls -l "$n2/listed" >/dev/null; l2=$(($(now) - t0))
t0=$(now); ls -l "$n1/listed" >/dev/null; l1=$(($(now) - t0))
recalls=$("$etcfs" shell "$n1" -c 'stats' | awk '/^recalls served/ {gsub(",", "", $3); print $3}')
say "stat: node1 appends to a file it keeps open, node2 stats it after each of $appends appends"
exec {fd}>>"$n1/appended"
s2=0 s1=0
for i in $(seq 1 "$appends"); do
  echo "line $i" >&"$fd"
  s2=$((s2 + $(stat_ns "$n2/appended")))
  s1=$((s1 + $(stat_ns "$n1/appended")))
done
exec {fd}>&-
want=$(wc -c < "$n1/appended")
[[ $(stat -c %s "$n2/appended") -eq $want ]] || { echo "bench: node2 sees a wrong size" >&2; exit 1; }
{
  printf '
stat: ls -l of %s files node1 wrote and closed; stat after each of %s appends node1 made to an open file
' "$listed" "$appends"
  printf '%-34s %12s %12s %8s
' "" "node2 ms" "node1 ms" "2/1"
  printf '%-34s %12s %12s %8s
' "ls -l (node1's recalls: $recalls)" "$(ms 0 "$l2")" "$(ms 0 "$l1")" "$(ratio "$l2" "$l1")"
  printf '%-34s %12s %12s %8s
' "stat after an append, mean" "$(ms 0 $((s2 / appends)))" "$(ms 0 $((s1 / appends)))" "$(ratio "$s2" "$s1")"
} >> "$work/stat.txt"
fi

# ---- scaling ----
if has scaling; then
printf '\nscaling: every node at once; aggregate rates, and their ratio to one node\n' >> "$work/scaling.txt"
printf '%-6s %14s %8s %14s %8s %14s %8s\n' nodes "shared MiB/s" "x1" "per-node MiB/s" "x1" "creates/s" "x1" >> "$work/scaling.txt"
base_shared="" base_own="" base_creates=""
for n in $counts; do
  up "$n"
  mb=$region
  touch "$cluster/mnt/node1/shared"
  say "$n node(s): one shared file, a ${mb} MiB region each"
  t0=$(now)
  for i in $(seq 1 "$n"); do
    fio --directory="$cluster/mnt/node$i" --name=s --filename=shared --rw=write --bs=1M \
      --size="${mb}M" --offset=$(((i - 1) * mb))M --end_fsync=1 >/dev/null 2>&1 &
  done
  wait
  shared=$(mibs $((n * mb * 1048576)) "$t0" "$(now)")
  say "$n node(s): a file each"
  t0=$(now)
  for i in $(seq 1 "$n"); do
    fio --directory="$cluster/mnt/node$i" --name=o --filename="own$i" --rw=write --bs=1M \
      --size="${mb}M" --end_fsync=1 >/dev/null 2>&1 &
  done
  wait
  own=$(mibs $((n * mb * 1048576)) "$t0" "$(now)")
  say "$n node(s): $files creates each in one directory"
  mkdir -p "$cluster/mnt/node1/dir"
  for i in $(seq 1 "$n"); do
    fio --directory="$cluster/mnt/node$i/dir" --name="c$i" --ioengine=filecreate \
      --nrfiles="$files" --filesize=4k --openfiles=1 --filename_format="n$i.\$filenum" \
      --output-format=json --output="$work/creates$i.json" >/dev/null 2>&1 &
  done
  wait
  # each node's own rate, summed: the runs overlap, and fio's start-up is not counted
  creates=$(cat "$work"/creates*.json | jq -s '[.[].jobs[0].read.iops] | add | floor')
  rm -f "$work"/creates*.json
  got=$(find "$cluster/mnt/node1/dir" -type f | wc -l)
  [[ $got -eq $((n * files)) ]] || { echo "bench: $got files, expected $((n * files))" >&2; exit 1; }
  base_shared=${base_shared:-$shared} base_own=${base_own:-$own} base_creates=${base_creates:-$creates}
  printf '%-6s %14s %8s %14s %8s %14s %8s\n' "$n" "$shared" "$(ratio "$shared" "$base_shared")" \
    "$own" "$(ratio "$own" "$base_own")" "$creates" "$(ratio "$creates" "$base_creates")" \
    >> "$work/scaling.txt"
  figure "$n node(s): one shared file, MiB/s" "$shared"
  figure "$n node(s): a file each, MiB/s" "$own"
  figure "$n node(s): creates in one directory, /s" "$creates"
done
fi
down

printf '\netcfs cluster benchmark, %s, %s, %s cores, %s\n' "$(date -u +%Y-%m-%d)" "$(uname -r)" \
  "$(nproc)" "$(free -g | awk '/Mem:/{print $2 " GiB"}')"
cat "$work/handoff.txt" "$work/stat.txt" "$work/scaling.txt"
